//! An open table of any game, shared by threads (`tb serve`, the Python module):
//! position text in, the probe answer of `tb probe` out, as an answer object or as
//! its JSON text.
//!
//! A reader ([`Reader`]: an SQLite connection, a chunk cache and, for a game that
//! searches, its solver) serves one thread at a time, so a table keeps a small
//! pool of them, opened on demand up to a bound (by default one per core), and
//! lends one to each caller.

use super::read::{Answer, Ask, Detail, Form, ProbeError, ReadOptions, Reader, Report};
use crate::store::reader::SharedChunks;
use crate::store::{StoreError, StoreErrorKind};
use anyhow::{Context, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Readers not in use, and how many are open.
struct Pool {
    idle: Vec<Box<dyn Reader>>,
    open: usize,
    /// [`Table::close`] was called: no reader is lent any more.
    closed: bool,
    /// Why the file is refused (its schema changed into one that is not a
    /// tablebase's while open): every probe from then on fails with this.
    refused: Option<StoreError>,
}

/// One table file.
pub struct Table {
    /// The name requests use (`?table=NAME`).
    pub name: String,
    /// What `GET /api/tables` says of it: name, game, identity and what it stores.
    pub description: Value,
    game: &'static str,
    path: PathBuf,
    options: ReadOptions,
    max_readers: usize,
    pool: Mutex<Pool>,
    returned: Condvar,
    /// The chunks the readers decoded, shared among them.
    shared: SharedChunks,
}

/// A reader lent by [`Table::lease`], given back when dropped.
struct Lease<'a> {
    table: &'a Table,
    reader: Option<Box<dyn Reader>>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        // A panic under a lease cannot leave a reader half-updated in a way that
        // matters (its cache only grows), so it goes back to the pool either way.
        if let Some(reader) = self.reader.take() {
            let mut pool = self.table.lock_pool();
            if pool.closed || pool.refused.is_some() {
                pool.open -= 1;
            } else {
                pool.idle.push(reader);
            }
            drop(pool);
            self.table.returned.notify_one();
        }
    }
}

impl Lease<'_> {
    fn reader(&mut self) -> &mut dyn Reader {
        self.reader
            .as_deref_mut()
            .expect("a lease holds its reader until dropped")
    }
}

impl Table {
    /// Opens `path` read-only (checked like any reader) under `name`. `options`
    /// bound the search fallback of a game that has one (for a game without one
    /// they are dropped, so that a server can give every table the same); at most
    /// `max_readers` (at least 1) readers are lent at once, further callers wait
    /// for one.
    pub fn open(
        name: &str,
        path: &Path,
        options: ReadOptions,
        max_readers: usize,
    ) -> Result<Table> {
        let mut reader = super::open(path, &ReadOptions::default())?;
        let options = if reader.searches() {
            if options != ReadOptions::default() {
                reader = super::open(path, &options)?;
            }
            options
        } else {
            ReadOptions::default()
        };
        Ok(Table::with_reader(name, path, reader, options, max_readers))
    }

    /// [`Table::open`] with the search `options` refused by a game that does not
    /// search (the Python module: an argument that cannot apply is an error).
    pub fn open_strict(
        name: &str,
        path: &Path,
        options: ReadOptions,
        max_readers: usize,
    ) -> Result<Table> {
        let reader = super::open(path, &options)?;
        Ok(Table::with_reader(name, path, reader, options, max_readers))
    }

    fn with_reader(
        name: &str,
        path: &Path,
        mut reader: Box<dyn Reader>,
        options: ReadOptions,
        max_readers: usize,
    ) -> Table {
        let shared = SharedChunks::new();
        reader.share_chunks(&shared);
        let mut description = Map::new();
        description.insert("name".into(), name.into());
        description.insert("game".into(), reader.game().into());
        description.extend(reader.describe());
        Table {
            name: name.to_string(),
            description: Value::Object(description),
            game: reader.game(),
            path: path.to_path_buf(),
            options,
            max_readers: max_readers.max(1),
            pool: Mutex::new(Pool {
                idle: vec![reader],
                open: 1,
                closed: false,
                refused: None,
            }),
            returned: Condvar::new(),
            shared,
        }
    }

    /// The game of the file (its `game` metadata).
    pub fn game(&self) -> &'static str {
        self.game
    }

    /// A field of the table's description (`board` of a Dots-and-Boxes table).
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.description.get(key)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes the file: idle readers now, readers in use when they are given
    /// back; probes from now on fail with a table error.
    pub fn close(&self) {
        let mut pool = self.lock_pool();
        pool.closed = true;
        pool.open -= pool.idle.len();
        pool.idle.clear();
        drop(pool);
        self.returned.notify_all();
    }

    /// Whether [`Table::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.lock_pool().closed
    }

    /// An idle reader, if there is one (never waits, never opens one), or why
    /// the file is refused.
    fn try_lease(&self) -> Option<Result<Lease<'_>, ProbeError>> {
        let mut pool = self.lock_pool();
        if let Some(refused) = &pool.refused {
            return Some(Err(ProbeError::Table(refused.clone())));
        }
        let reader = pool.idle.pop()?;
        Some(Ok(Lease {
            table: self,
            reader: Some(reader),
        }))
    }

    /// Refuses the file from now on if `error` says its schema changed (a
    /// reader saw it at a read): the readers' caches hold what the file was,
    /// and no probe is answered from them any more.
    fn refuse_if_changed(&self, error: &ProbeError) {
        if let Some(store) = changed(error) {
            let mut pool = self.lock_pool();
            if pool.refused.is_none() {
                pool.refused = Some(store.clone());
                pool.open -= pool.idle.len();
                pool.idle.clear();
            }
        }
    }

    /// A reader: an idle one, a new one while fewer than the bound are open, or
    /// the next one given back.
    fn lease(&self) -> Result<Lease<'_>, ProbeError> {
        let mut pool = self.lock_pool();
        loop {
            if pool.closed {
                return Err(ProbeError::Table(StoreError::new(
                    StoreErrorKind::Sqlite,
                    format!("{} is closed", self.path.display()),
                )));
            }
            if let Some(refused) = &pool.refused {
                return Err(ProbeError::Table(refused.clone()));
            }
            if let Some(reader) = pool.idle.pop() {
                return Ok(Lease {
                    table: self,
                    reader: Some(reader),
                });
            }
            if pool.open < self.max_readers {
                pool.open += 1;
                drop(pool);
                return match super::open(&self.path, &self.options) {
                    Ok(mut reader) => Ok(Lease {
                        table: self,
                        reader: Some({
                            reader.share_chunks(&self.shared);
                            reader
                        }),
                    }),
                    Err(e) => {
                        self.lock_pool().open -= 1;
                        self.returned.notify_one();
                        Err(ProbeError::of(e))
                    }
                };
            }
            pool = self.returned.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The answer for a position text (the game's notation, or `start`).
    pub fn probe(&self, position: &str, detail: Detail) -> Result<Box<dyn Answer>, ProbeError> {
        let mut lease = self.lease()?;
        let answer = probe_with(lease.reader(), position, detail);
        drop(lease);
        if let Err(e) = &answer {
            self.refuse_if_changed(e);
        }
        answer
    }

    /// [`Table::probe`] of each position, in order, with one reader.
    pub fn probe_all<S: AsRef<str>>(
        &self,
        positions: &[S],
        detail: Detail,
    ) -> Vec<Result<Box<dyn Answer>, ProbeError>> {
        match self.lease() {
            Ok(mut lease) => {
                // Once the file is refused, the rest are too (not answered
                // from the cache of what the file was).
                let mut refused: Option<StoreError> = None;
                let answers = positions
                    .iter()
                    .map(|p| {
                        if let Some(store) = &refused {
                            return Err(ProbeError::Table(store.clone()));
                        }
                        let answer = probe_with(lease.reader(), p.as_ref(), detail);
                        if let Err(e) = &answer {
                            refused = changed(e).cloned();
                        }
                        answer
                    })
                    .collect();
                drop(lease);
                if let Some(store) = refused {
                    self.refuse_if_changed(&ProbeError::Table(store));
                }
                answers
            }
            Err(e) => {
                let failure = e.store_kind().map(|kind| (kind, e.to_string()));
                positions
                    .iter()
                    .map(|_| {
                        Err(match &failure {
                            Some((kind, message)) => {
                                ProbeError::Table(StoreError::new(*kind, message.clone()))
                            }
                            None => ProbeError::Position(anyhow::anyhow!("{e}")),
                        })
                    })
                    .collect()
            }
        }
    }

    /// The probe JSON object of `tb probe --json` for a position text, or why it
    /// has none. A read of the file still running at `deadline` is stopped (a
    /// table error).
    pub fn answer(&self, position: &str, deadline: Option<Instant>) -> Result<String, ProbeError> {
        let mut lease = self.lease()?;
        let mut out = String::new();
        let ask = Ask {
            deadline,
            ..Ask::MOVES
        };
        let answered = lease
            .reader()
            .answer_into(position, ask, Form::Json, &mut out);
        drop(lease);
        match answered {
            Ok(_) => Ok(out),
            Err(e) => {
                self.refuse_if_changed(&e);
                Err(e)
            }
        }
    }

    /// [`Table::answer`] when it is quick: a reader is idle (no waiting) and the
    /// answer is in its memory (no search, no read of the file: nothing that
    /// could block). What a server answers on the threads that serve its
    /// connections; `None` when the answer should go to a thread that may wait.
    pub fn answer_now(&self, position: &str) -> Option<Result<String, ProbeError>> {
        let mut lease = match self.try_lease()? {
            Ok(lease) => lease,
            Err(refused) => return Some(Err(refused)),
        };
        let mut out = String::new();
        let ask = Ask {
            cached_only: true,
            ..Ask::MOVES
        };
        match lease
            .reader()
            .answer_into(position, ask, Form::Json, &mut out)
        {
            Ok(true) => Some(Ok(out)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// `tb info` of the file.
    pub fn info(&self) -> Result<Report, ProbeError> {
        let mut lease = self.lease()?;
        lease.reader().info().map_err(ProbeError::of)
    }
}

/// The store's failure in `error` if it says the file's schema changed while
/// open (see [`crate::store::reads`]).
fn changed(error: &ProbeError) -> Option<&StoreError> {
    match error {
        ProbeError::Table(store) if store.kind == StoreErrorKind::Schema => Some(store),
        _ => None,
    }
}

/// A position text answered by a reader.
fn probe_with(
    reader: &mut dyn Reader,
    position: &str,
    detail: Detail,
) -> Result<Box<dyn Answer>, ProbeError> {
    let answer = reader.probe(position, Ask::detail(detail))?;
    Ok(answer.expect("an answer that may search always comes"))
}

/// The name of a table file: its stem (`3x4.tb` -> `3x4`).
pub fn default_name(path: &Path) -> Result<String> {
    Ok(path
        .file_stem()
        .context("a table file needs a name")?
        .to_string_lossy()
        .into_owned())
}
