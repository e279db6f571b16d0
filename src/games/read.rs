//! One read interface for every game: what an open table file does for the CLI,
//! `tb serve` and the Python module (describe itself, probe a position given as
//! text, info, verify, export), and the typed errors that cross the library
//! boundary. Each game implements [`Reader`] in its own folder; the registry
//! ([`crate::games::open`]) is the one place that picks the game of a file.
//!
//! A reader is one SQLite connection with its chunk cache (and, for games with a
//! search fallback, its solver): it serves one thread at a time
//! ([`crate::games::table::Table`] keeps a pool of them for several threads).

use crate::store::reader::SharedChunks;
use crate::store::reads::NotCached;
use crate::store::{StoreError, StoreErrorKind};
use serde_json::{Map, Value};
use std::any::Any;
use std::fmt;
use std::io::Write;
use std::time::{Duration, Instant};

/// The name of a table's start position, wherever a table reads a position
/// (Dots-and-Boxes: the start it was built from; Morris: the empty board with
/// every stone in hand; Qubic: the strategy's start).
pub const START: &str = "start";

/// A table file of one game, open for reading.
pub trait Reader: Send {
    /// The game, as files name it in their `game` metadata (`dots-and-boxes`,
    /// `morris`, `qubic`).
    fn game(&self) -> &'static str;

    /// What identifies the table and what it stores, as typed JSON fields (numbers
    /// as numbers, lists as lists): what `GET /api/tables` lists (with the name the
    /// server gives it first).
    fn describe(&self) -> Map<String, Value>;

    /// Whether positions past the stored ones are searched, so that
    /// [`ReadOptions`]' search bounds apply.
    fn searches(&self) -> bool {
        false
    }

    /// The answer for a position given as text (the game's position notation, or
    /// `start` for the table's start); `None` only with [`Ask::cached_only`], when
    /// the answer would take more than memory (a reader may decline more: the
    /// caller then asks without it).
    fn probe(&mut self, position: &str, ask: Ask) -> Result<Option<Box<dyn Answer>>, ProbeError>;

    /// [`Reader::probe`] appended to `out` as the probe JSON object (no newline)
    /// or as text (ending in a newline); `false` (nothing appended) where
    /// [`Reader::probe`] answers `None`. A reader may answer
    /// this faster than through [`Reader::probe`] (no answer object is made).
    fn answer_into(
        &mut self,
        position: &str,
        ask: Ask,
        form: Form,
        out: &mut String,
    ) -> Result<bool, ProbeError> {
        let Some(answer) = self.probe(position, ask)? else {
            return Ok(false);
        };
        match form {
            Form::Json => answer.write_json(out),
            Form::Text => out.push_str(&answer.text()),
        }
        Ok(true)
    }

    /// `tb info`: metadata and per-layer (or per-table) statistics.
    fn info(&self) -> anyhow::Result<Report>;

    /// Shares the chunks this reader decodes with the other readers of the same
    /// file given the same `shared` (see [`SharedChunks`]): what opens several
    /// readers of one file for its threads calls this on each. A game whose
    /// reader keeps no chunk cache ignores it.
    fn share_chunks(&mut self, shared: &SharedChunks) {
        let _ = shared;
    }

    /// `tb verify`: every stored chunk re-hashed and stored values recomputed (or
    /// the whole strategy checked), as `options` ask; options that do not apply to
    /// the game are refused.
    fn verify(&self, options: &VerifyOptions) -> anyhow::Result<Report>;

    /// `tb export`: the stored positions as rows into `sink`; returns the number
    /// of rows. Options that do not apply to the game are refused.
    fn export(&self, options: &ExportOptions, sink: &mut dyn Write) -> anyhow::Result<u64>;
}

/// A probe's answer, rendered as the probe JSON object or as text. Each game has
/// its own type behind it; a caller that knows one (the Python module's quick
/// dictionaries) may look at it with [`Answer::as_any`].
pub trait Answer: Any + Send + fmt::Debug {
    /// The probe JSON object (one line, no newline).
    fn json(&self) -> String;
    /// [`Answer::json`] appended to `out`: a game that writes its JSON by hand
    /// writes it straight into a batch's buffer.
    fn write_json(&self, out: &mut String) {
        out.push_str(&self.json());
    }
    /// The answer as `tb probe` prints it (ending in a newline).
    fn text(&self) -> String;
    /// The game's own answer, for a downcast.
    fn as_any(&self) -> &dyn Any;
}

/// How a probe answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// What the answer holds.
    pub detail: Detail,
    /// Answer only from what the reader holds in memory: no search, no read of
    /// the file (a chunk not cached yet), no work spread over other threads; see
    /// [`Reader::probe`]. What a server answers on the threads that serve its
    /// connections, where nothing may block.
    pub cached_only: bool,
    /// The text may name a file holding the position (Dots-and-Boxes: a file in
    /// Wilson's format). Only for positions a user typed as arguments: a server or
    /// a library caller never lets a request name a file.
    pub files: bool,
    /// A read of the file still running at this instant is stopped (the answer is
    /// then a table error): a file that changed underneath cannot hold a
    /// request forever.
    pub deadline: Option<Instant>,
}

impl Ask {
    /// Every move's value, searching where needed, no files, no deadline: what a
    /// server asks.
    pub const MOVES: Ask = Ask {
        detail: Detail::Moves,
        cached_only: false,
        files: false,
        deadline: None,
    };

    /// [`Ask::MOVES`] with another detail.
    pub fn detail(detail: Detail) -> Ask {
        Ask {
            detail,
            ..Ask::MOVES
        }
    }

    /// Whether `error`, from a probe asked with [`Ask::cached_only`], only says
    /// that the answer needs more than memory (the probe's answer is then
    /// `None`).
    pub fn needs_more(&self, error: &anyhow::Error) -> bool {
        self.cached_only && NotCached::is(error)
    }
}

/// What a probe answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The position's value and every legal move's (`tb probe`), with the game's
    /// tie-break among moves of equal value where it has one (Morris: the
    /// opponent's replies that go wrong, docs/FORMAT.md §4.3).
    Moves,
    /// [`Detail::Moves`] without the tie-break (`tb probe --no-tie-break`): one
    /// value read a move instead of one an opponent's reply. The same as
    /// [`Detail::Moves`] for games without a tie-break.
    MovesUntied,
    /// The position's value only (no moves): one value read instead of one per
    /// move.
    Value,
}

/// The two renderings of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The probe JSON object.
    Json,
    /// `tb probe`'s text.
    Text,
}

/// How a table is opened for reading: bounds of the search fallback, for games
/// that have one ([`Reader::searches`]); a table without one refuses bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Positions with more open moves than this are not searched (0: never)
    /// [default: the game's].
    pub search_limit: Option<u32>,
    /// Each search stops after this many nodes.
    pub max_nodes: Option<u64>,
    /// Each search stops after this long.
    pub time_limit: Option<Duration>,
}

impl ReadOptions {
    /// Whether any search bound is set.
    pub fn searching(&self) -> bool {
        self.search_limit.is_some() || self.max_nodes.is_some() || self.time_limit.is_some()
    }

    /// An error ([`NotApplicable`]) unless these options suit a table of `game`
    /// that has no search fallback (no bound set).
    pub fn refuse_search(&self, game: &str) -> anyhow::Result<()> {
        if self.searching() {
            return Err(NotApplicable(format!(
                "a {game} table has no search fallback: search bounds (search limit, max nodes, time limit) do not apply"
            ))
            .into());
        }
        Ok(())
    }
}

/// An option given for a table it does not apply to (search bounds for a game
/// without a search): the caller's mistake, not the table's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplicable(pub String);

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotApplicable {}

impl NotApplicable {
    /// Whether `error` is one.
    pub fn is(error: &anyhow::Error) -> bool {
        crate::store::error::find_in::<NotApplicable>(error).is_some()
    }
}

/// `tb verify`'s options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Recompute only this many positions per layer or table [default: all].
    pub sample: Option<u64>,
    /// Also compare this many random stored positions with the search solver.
    pub search: Option<u64>,
}

/// `tb export`'s row formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// Qubic: the strategic moves in the style of Patashnik's dictionary.
    Patashnik,
}

/// `tb export`'s options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportOptions {
    /// The row format.
    pub format: ExportFormat,
    /// Only positions with at most this many lines (Dots-and-Boxes).
    pub max_lines: Option<usize>,
    /// One row per position of each stored class instead of one per stored
    /// representative (Dots-and-Boxes).
    pub expand: bool,
}

impl ExportOptions {
    /// An error if `format` is not one of `allowed` or the Dots-and-Boxes options
    /// are set where `what` (the game's rows) does not take them.
    pub fn refuse(&self, allowed: &[ExportFormat], what: &str) -> anyhow::Result<()> {
        if !allowed.contains(&self.format) {
            anyhow::bail!("this export format is not for {what}");
        }
        if self.max_lines.is_some() || self.expand {
            anyhow::bail!("--max-lines and --expand are Dots-and-Boxes options; {what}");
        }
        Ok(())
    }
}

/// A report of `tb info` or `tb verify`: its JSON object and its text.
#[derive(Debug, Clone)]
pub struct Report {
    /// The JSON object.
    pub json: Value,
    /// The text (ending in a newline).
    pub text: String,
    /// Whether a check found nothing wrong (always true for info).
    pub ok: bool,
}

impl Report {
    /// The report of a serialisable `report` with its `text`.
    pub fn new(report: &impl serde::Serialize, text: String, ok: bool) -> anyhow::Result<Report> {
        Ok(Report {
            json: serde_json::to_value(report)?,
            text,
            ok,
        })
    }
}

/// How far a search stopped by its bounds got: the value lies in
/// `lower..=upper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The value is at least this.
    pub lower: i32,
    /// The value is at most this.
    pub upper: i32,
    /// Search nodes spent.
    pub nodes: u64,
    /// Which bound stopped it (`node limit`, `time limit`).
    pub reason: &'static str,
}

/// Why a probe has no answer.
#[derive(Debug)]
pub enum ProbeError {
    /// The text is not a position of this table, or the table cannot answer it
    /// (past its stored layers and the search fallback's reach, a table the file
    /// does not hold, a Wilson file with another penalty).
    Position(anyhow::Error),
    /// The file: it cannot be read, or stored data is damaged.
    Table(StoreError),
    /// A search reached its bounds; what it proved.
    Stopped {
        /// The bounds proven.
        bounds: Bounds,
        /// Why, in words.
        message: String,
    },
}

impl ProbeError {
    /// An error of a reader classified: a store failure in its chain makes it a
    /// [`ProbeError::Table`], anything else a [`ProbeError::Position`] (a reader
    /// that searches recognises its stopped searches before this).
    pub fn of(error: anyhow::Error) -> ProbeError {
        match StoreError::find(&error) {
            Some(store) => ProbeError::Table(store),
            None => ProbeError::Position(error),
        }
    }

    /// The kind's name in JSON error objects: `position`, `table` or `stopped`.
    pub fn kind(&self) -> &'static str {
        match self {
            ProbeError::Position(_) => "position",
            ProbeError::Table(_) => "table",
            ProbeError::Stopped { .. } => "stopped",
        }
    }

    /// The JSON error object for `input` (`tb probe --json`, `tb serve`):
    /// `{"input":...,"error":...,"kind":...}`, plus the store's failure
    /// (`"table_error":"damaged"`...) or the bounds of a stopped search
    /// (`"lower"`, `"upper"`, `"nodes"`, `"stopped"`).
    pub fn json(&self, input: &str) -> String {
        // Written in this order (a map would sort the keys).
        let text = |s: &str| Value::from(s).to_string();
        let mut object = format!(
            r#"{{"input":{},"error":{},"kind":"{}""#,
            text(input),
            text(&self.to_string()),
            self.kind()
        );
        match self {
            ProbeError::Position(_) => {}
            ProbeError::Table(store) => {
                object += &format!(r#","table_error":"{}""#, store.kind.as_str());
            }
            ProbeError::Stopped { bounds, .. } => {
                object += &format!(
                    r#","stopped":{},"lower":{},"upper":{},"nodes":{}"#,
                    text(bounds.reason),
                    bounds.lower,
                    bounds.upper,
                    bounds.nodes
                );
            }
        }
        object + "}"
    }

    /// The store's failure kind, for a [`ProbeError::Table`].
    pub fn store_kind(&self) -> Option<StoreErrorKind> {
        match self {
            ProbeError::Table(store) => Some(store.kind),
            _ => None,
        }
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ProbeError::Position(error) => write!(f, "{error:#}"),
            ProbeError::Table(store) => write!(f, "{store}"),
            ProbeError::Stopped { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for ProbeError {}

/// The JSON error object for an input that has no answer for a reason other
/// than a probe's (a line that cannot be read): `{"input":...,"error":...}`.
pub fn error_json(input: &str, error: &anyhow::Error) -> String {
    ProbeError::Position(anyhow::anyhow!("{error:#}")).json(input)
}

/// Metadata rows as typed JSON fields: the keys in `numbers` as numbers, in
/// `flags` as booleans and in `lists` as the JSON they hold; the others as
/// strings. A value that does not parse as its type stays a string (a reader has
/// checked the metadata it relies on already).
pub fn typed_fields(
    rows: Vec<(&'static str, String)>,
    numbers: &[&str],
    flags: &[&str],
    lists: &[&str],
) -> Map<String, Value> {
    rows.into_iter()
        .map(|(key, text)| {
            let typed = if numbers.contains(&key) {
                text.parse::<i64>().ok().map(Value::from)
            } else if flags.contains(&key) {
                text.parse::<bool>().ok().map(Value::from)
            } else if lists.contains(&key) {
                serde_json::from_str(&text).ok()
            } else {
                None
            };
            (key.to_string(), typed.unwrap_or(Value::String(text)))
        })
        .collect()
}
