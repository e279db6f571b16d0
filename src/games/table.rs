//! An open tablebase of either game, shared by threads (`tb serve`, the Python
//! module): position text in, the probe answer of `tb probe` out, as a structure or
//! as its JSON object.
//!
//! A reader (a [`Tablebase`] or [`MorrisTablebase`]: an SQLite connection, a chunk
//! cache and, for Dots-and-Boxes, the search fallback's solver) serves one thread
//! at a time, so a table keeps a small pool of them, opened on demand up to a
//! bound (by default one per core), and lends one to each caller.

use crate::games::dots::board::Board;
use crate::games::dots::notation;
use crate::games::dots::output::JsonWriter;
use crate::games::dots::search::{Limits, Stopped};
use crate::games::dots::tablebase::{self, DEFAULT_SEARCH_LIMIT, Tablebase};
use crate::games::morris::rules::Position;
use crate::games::morris::solve;
use crate::games::morris::spec::pair_label;
use crate::games::morris::tablebase::{MorrisTablebase, probe_json};
use crate::games::{GameKind, OpenTablebase, open_tablebase};
use crate::store::readable_layers;
use crate::store::reader::ChunkError;
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// An open reader of either game.
enum Open {
    Dots(Box<Tablebase>, JsonWriter),
    Morris(Box<MorrisTablebase>),
}

/// The bounds of the Dots-and-Boxes probe fallback's search (`tb probe
/// --search-limit --max-nodes --time-limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeBounds {
    /// Positions with more open lines are not searched (0: never search).
    pub search_limit: u32,
    /// Node and time limits of each search.
    pub limits: Limits,
}

impl Default for ProbeBounds {
    /// `tb probe`'s defaults: up to [`DEFAULT_SEARCH_LIMIT`] open lines, no limits.
    fn default() -> ProbeBounds {
        ProbeBounds {
            search_limit: DEFAULT_SEARCH_LIMIT,
            limits: Limits::default(),
        }
    }
}

/// A probe answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Dots-and-Boxes (the board is the table's, [`Table::board`]).
    Dots(tablebase::Probe),
    /// Nine Men's Morris: the position and its answer.
    Morris(Position, solve::Probe),
}

/// What a probe answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The position's value and every legal move's (`tb probe`).
    Moves,
    /// The position's value only (the answer's moves left empty): one value read
    /// instead of one per move.
    Value,
}

/// What went wrong with a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not a position of this table, or the table cannot answer it
    /// (past its stored layers and the search fallback's reach, a table the file
    /// does not hold, a Wilson file with another penalty).
    Position,
    /// The file: it cannot be opened or read, or a chunk is damaged.
    Table,
    /// The search fallback reached its node or time limit (the error is a
    /// [`Stopped`] with the bounds proven).
    Stopped,
}

/// A probe's error and its kind.
#[derive(Debug)]
pub struct ProbeError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Why (the message of `tb probe`).
    pub error: anyhow::Error,
}

impl ProbeError {
    /// Classifies an error of a reader: a [`ChunkError`] is the file's, a
    /// [`Stopped`] search a stop, anything else the position's.
    fn of(error: anyhow::Error) -> ProbeError {
        let kind = if error.chain().any(|c| c.is::<ChunkError>()) {
            ErrorKind::Table
        } else if error.chain().any(|c| c.is::<Stopped>()) {
            ErrorKind::Stopped
        } else {
            ErrorKind::Position
        };
        ProbeError { kind, error }
    }

    fn table(error: anyhow::Error) -> ProbeError {
        ProbeError {
            kind: ErrorKind::Table,
            error,
        }
    }

    fn position(error: impl Into<anyhow::Error>) -> ProbeError {
        ProbeError {
            kind: ErrorKind::Position,
            error: error.into(),
        }
    }

    /// The bounds of a stopped search.
    pub fn stopped(&self) -> Option<&Stopped> {
        self.error.chain().find_map(|c| c.downcast_ref::<Stopped>())
    }
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for ProbeError {}

/// Readers not in use, and how many are open.
struct Pool {
    idle: Vec<Open>,
    open: usize,
}

/// One table.
pub struct Table {
    /// The name requests use (`?table=NAME`).
    pub name: String,
    /// What `GET /api/tables` says of it: name, game and identity.
    pub description: Value,
    game: GameKind,
    board: Option<Board>,
    path: PathBuf,
    bounds: ProbeBounds,
    max_readers: usize,
    pool: Mutex<Pool>,
    returned: Condvar,
}

/// A reader lent by [`Table::lease`], given back when dropped.
struct Lease<'a> {
    table: &'a Table,
    open: Option<Open>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        // A panic under a lease cannot leave a reader half-updated in a way that
        // matters (its cache only grows), so it goes back to the pool either way.
        if let Some(open) = self.open.take() {
            self.table.lock_pool().idle.push(open);
            self.table.returned.notify_one();
        }
    }
}

impl Lease<'_> {
    fn open(&mut self) -> &mut Open {
        self.open
            .as_mut()
            .expect("a lease holds its reader until dropped")
    }
}

impl Table {
    /// Opens `path` read-only for `tb serve` under `name`: a search of the
    /// Dots-and-Boxes probe fallback stops after `search_time`; one reader per core.
    pub fn open(name: &str, path: &Path, search_time: Duration) -> Result<Table> {
        let bounds = ProbeBounds {
            limits: Limits {
                max_nodes: None,
                time_limit: Some(search_time),
            },
            ..ProbeBounds::default()
        };
        Table::open_with(name, path, bounds, default_readers())
    }

    /// Opens `path` read-only (checked like any reader) under `name`, with the
    /// probe fallback's `bounds`, lending at most `max_readers` (at least 1)
    /// readers at once; further callers wait for one.
    pub fn open_with(
        name: &str,
        path: &Path,
        bounds: ProbeBounds,
        max_readers: usize,
    ) -> Result<Table> {
        let (game, open) = match open_tablebase(path)? {
            OpenTablebase::Dots(tb) => (GameKind::Dots, dots_reader(tb, bounds)),
            OpenTablebase::Morris(tb) => (GameKind::Morris, Open::Morris(tb)),
            OpenTablebase::Qubic(_) => bail!(
                "{} is a Qubic strategy: probe it with tb probe (tb serve and the Python module serve Dots-and-Boxes and Morris tables)",
                path.display()
            ),
        };
        let (game_name, identity, stored, board) = match &open {
            Open::Dots(tb, _) => (
                "dots-and-boxes",
                tb.spec().to_meta(),
                (
                    "layers",
                    json!(readable_layers(tb.layers()).collect::<Vec<_>>()),
                ),
                Some(tb.board()),
            ),
            Open::Morris(tb) => {
                let pairs: Vec<String> = readable_layers(tb.layers()).map(pair_label).collect();
                (
                    "morris",
                    tb.spec().to_meta(),
                    ("tables", json!(pairs)),
                    None,
                )
            }
        };
        let mut description = Map::new();
        description.insert("name".into(), name.into());
        description.insert("game".into(), game_name.into());
        for (key, value) in identity {
            description.insert(key.into(), value.into());
        }
        description.insert(stored.0.into(), stored.1);
        Ok(Table {
            name: name.to_string(),
            description: Value::Object(description),
            game,
            board,
            path: path.to_path_buf(),
            bounds,
            max_readers: max_readers.max(1),
            pool: Mutex::new(Pool {
                idle: vec![open],
                open: 1,
            }),
            returned: Condvar::new(),
        })
    }

    /// The game of the file.
    pub fn game(&self) -> GameKind {
        self.game
    }

    /// The board of a Dots-and-Boxes table.
    pub fn board(&self) -> Option<Board> {
        self.board
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle reader, if there is one (never waits, never opens one).
    fn try_lease(&self) -> Option<Lease<'_>> {
        let open = self.lock_pool().idle.pop()?;
        Some(Lease {
            table: self,
            open: Some(open),
        })
    }

    /// A reader: an idle one, a new one while fewer than the bound are open, or
    /// the next one given back.
    fn lease(&self) -> Result<Lease<'_>, ProbeError> {
        let mut pool = self.lock_pool();
        loop {
            if let Some(open) = pool.idle.pop() {
                return Ok(Lease {
                    table: self,
                    open: Some(open),
                });
            }
            if pool.open < self.max_readers {
                pool.open += 1;
                drop(pool);
                return match open_reader(self.game, &self.path, self.bounds) {
                    Ok(open) => Ok(Lease {
                        table: self,
                        open: Some(open),
                    }),
                    Err(e) => {
                        self.lock_pool().open -= 1;
                        self.returned.notify_one();
                        Err(ProbeError::table(e))
                    }
                };
            }
            pool = self.returned.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The answer for a position text (Dots-and-Boxes: `0`/`1` characters, a
    /// move list or the text of a Wilson file; Morris: 24 points and the side to
    /// move).
    pub fn probe(&self, position: &str, detail: Detail) -> Result<Answer, ProbeError> {
        let mut lease = self.lease()?;
        probe_with(lease.open(), position, detail)
    }

    /// [`Table::probe`] of each position, in order, with one reader.
    pub fn probe_all<S: AsRef<str>>(
        &self,
        positions: &[S],
        detail: Detail,
    ) -> Vec<Result<Answer, ProbeError>> {
        match self.lease() {
            Ok(mut lease) => positions
                .iter()
                .map(|p| probe_with(lease.open(), p.as_ref(), detail))
                .collect(),
            Err(e) => {
                let why = format!("{:#}", e.error);
                positions
                    .iter()
                    .map(|_| Err(ProbeError::table(anyhow::anyhow!("{why}"))))
                    .collect()
            }
        }
    }

    /// The probe JSON object of `tb probe --json` for a position text, or why it
    /// has none.
    pub fn answer(&self, position: &str) -> Result<String> {
        let mut lease = self.lease().map_err(|e| e.error)?;
        let text = answer_text(lease.open(), position, false)?;
        Ok(text.expect("an answer that may search always comes"))
    }

    /// [`Table::answer`] when it is quick: a reader is idle (no waiting) and the
    /// answer needs no search (Morris always; Dots-and-Boxes when the position and
    /// its children are in the book). What a server answers on its own thread;
    /// `None` when the answer should go to a thread that may wait or search.
    pub fn answer_now(&self, position: &str) -> Option<Result<String>> {
        let mut lease = self.try_lease()?;
        answer_text(lease.open(), position, true).transpose()
    }

    /// The JSON object of an answer (as [`Table::answer`]).
    pub fn json(&self, answer: &Answer) -> String {
        answer_json(answer, self.board.as_ref())
    }

    /// `tb info --json` of the file (one line).
    pub fn info_json(&self) -> Result<String, ProbeError> {
        let mut lease = self.lease()?;
        let text = match lease.open() {
            Open::Dots(tb, _) => crate::games::dots::info::info(tb)
                .and_then(|report| Ok(serde_json::to_string(&report)?)),
            Open::Morris(tb) => crate::games::morris::report::info(tb)
                .and_then(|report| Ok(serde_json::to_string(&report)?)),
        };
        text.map_err(ProbeError::table)
    }
}

/// One reader per core.
fn default_readers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Opens a reader of `path`.
fn open_reader(game: GameKind, path: &Path, bounds: ProbeBounds) -> Result<Open> {
    Ok(match game {
        GameKind::Dots => dots_reader(Box::new(Tablebase::open(path)?), bounds),
        GameKind::Morris => Open::Morris(Box::new(MorrisTablebase::open(path)?)),
        GameKind::Qubic => bail!("{}: Qubic strategies are not served", path.display()),
    })
}

/// A Dots-and-Boxes reader with the probe fallback's bounds.
fn dots_reader(mut tb: Box<Tablebase>, bounds: ProbeBounds) -> Open {
    tb.set_search_limit(bounds.search_limit);
    tb.set_search_bounds(bounds.limits);
    let writer = JsonWriter::new(&tb.board());
    Open::Dots(tb, writer)
}

/// A position text answered by a reader.
fn probe_with(open: &mut Open, position: &str, detail: Detail) -> Result<Answer, ProbeError> {
    if detail == Detail::Value {
        return probe_value_in(open, position);
    }
    let answer = probe_in(open, position, false)?;
    Ok(answer.expect("an answer that may search always comes"))
}

/// The value of a position text (the answer's moves empty) with one reader.
fn probe_value_in(open: &mut Open, position: &str) -> Result<Answer, ProbeError> {
    match open {
        Open::Dots(tb, _) => {
            let parsed =
                notation::parse_position(&tb.board(), position).map_err(ProbeError::position)?;
            let probe = tb.probe_value_parsed(&parsed).map_err(ProbeError::of)?;
            Ok(Answer::Dots(probe))
        }
        Open::Morris(tb) => {
            let position = tb.parse_position(position).map_err(ProbeError::position)?;
            let value = tb.value(&position).map_err(ProbeError::of)?;
            let probe = solve::Probe {
                value,
                moves: Vec::new(),
            };
            Ok(Answer::Morris(position, probe))
        }
    }
}

/// The answer for a position text with one reader; with `book_only`, `None` when
/// it would take a search (Morris never searches).
fn probe_in(
    open: &mut Open,
    position: &str,
    book_only: bool,
) -> Result<Option<Answer>, ProbeError> {
    match open {
        Open::Dots(tb, _) => {
            let parsed =
                notation::parse_position(&tb.board(), position).map_err(ProbeError::position)?;
            let probe = if book_only {
                tb.probe_parsed_from_book(&parsed)
            } else {
                tb.probe_parsed(&parsed).map(Some)
            };
            Ok(probe.map_err(ProbeError::of)?.map(Answer::Dots))
        }
        Open::Morris(tb) => {
            let position = tb.parse_position(position).map_err(ProbeError::position)?;
            let probe = tb.probe(&position).map_err(ProbeError::of)?;
            Ok(Some(Answer::Morris(position, probe)))
        }
    }
}

/// The probe JSON object for a position text with one reader, or why it has none;
/// with `book_only`, `None` when it would take a search.
fn answer_text(open: &mut Open, position: &str, book_only: bool) -> Result<Option<String>> {
    let Some(answer) = probe_in(open, position, book_only).map_err(|e| e.error)? else {
        return Ok(None);
    };
    Ok(Some(match (open, &answer) {
        (Open::Dots(_, writer), Answer::Dots(probe)) => writer.probe(probe),
        (_, answer) => answer_json(answer, None),
    }))
}

/// The JSON object of an answer; a Dots-and-Boxes answer needs the board.
fn answer_json(answer: &Answer, board: Option<&Board>) -> String {
    match answer {
        Answer::Dots(probe) => {
            JsonWriter::new(board.expect("a Dots-and-Boxes answer comes from a Dots table"))
                .probe(probe)
        }
        Answer::Morris(position, probe) => probe_json(position, probe),
    }
}

/// The name of a table file: its stem (`3x4.tb` -> `3x4`).
pub fn default_name(path: &Path) -> Result<String> {
    Ok(path
        .file_stem()
        .context("a table file needs a name")?
        .to_string_lossy()
        .into_owned())
}
