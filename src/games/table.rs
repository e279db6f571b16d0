//! An open table of any game, shared by threads (`tb serve`, the Python module):
//! position text in, the probe answer of `tb probe` out, as an answer object or as
//! its JSON text.
//!
//! A reader ([`Reader`]: an SQLite connection, a chunk cache and, for a game that
//! searches, its solver) serves one thread at a time, so a table keeps a small
//! pool of them, opened on demand up to a bound (by default one per core), and
//! lends one to each caller.

use super::read::{Answer, Ask, Detail, Form, ProbeError, ReadOptions, Reader, Report};
use crate::store::{StoreError, StoreErrorKind};
use anyhow::{Context, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Readers not in use, and how many are open.
struct Pool {
    idle: Vec<Box<dyn Reader>>,
    open: usize,
    /// [`Table::close`] was called: no reader is lent any more.
    closed: bool,
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
            if pool.closed {
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
        reader: Box<dyn Reader>,
        options: ReadOptions,
        max_readers: usize,
    ) -> Table {
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
            }),
            returned: Condvar::new(),
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

    /// An idle reader, if there is one (never waits, never opens one).
    fn try_lease(&self) -> Option<Lease<'_>> {
        let reader = self.lock_pool().idle.pop()?;
        Some(Lease {
            table: self,
            reader: Some(reader),
        })
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
                    Ok(reader) => Ok(Lease {
                        table: self,
                        reader: Some(reader),
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
        probe_with(lease.reader(), position, detail)
    }

    /// [`Table::probe`] of each position, in order, with one reader.
    pub fn probe_all<S: AsRef<str>>(
        &self,
        positions: &[S],
        detail: Detail,
    ) -> Vec<Result<Box<dyn Answer>, ProbeError>> {
        match self.lease() {
            Ok(mut lease) => positions
                .iter()
                .map(|p| probe_with(lease.reader(), p.as_ref(), detail))
                .collect(),
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
    /// has none.
    pub fn answer(&self, position: &str) -> Result<String, ProbeError> {
        let mut lease = self.lease()?;
        let mut out = String::new();
        lease
            .reader()
            .answer_into(position, Ask::MOVES, Form::Json, &mut out)?;
        Ok(out)
    }

    /// [`Table::answer`] when it is quick: a reader is idle (no waiting) and the
    /// answer needs no search. What a server answers on its own thread; `None`
    /// when the answer should go to a thread that may wait or search.
    pub fn answer_now(&self, position: &str) -> Option<Result<String, ProbeError>> {
        let mut lease = self.try_lease()?;
        let mut out = String::new();
        let ask = Ask {
            book_only: true,
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
