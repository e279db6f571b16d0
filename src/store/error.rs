//! What can go wrong with a tablebase file, by kind: the store's typed errors.
//!
//! The store (and a game's reader, for what only it can check) raise a
//! [`StoreError`] where a failure is found; it travels inside `anyhow::Error`
//! with whatever context callers add, and the library boundary
//! ([`crate::games::read`]) finds it again with [`StoreError::find`]. No caller
//! ever matches an error's text.

use std::fmt;
use std::path::Path;

/// Where in a file a damage was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The file as a whole (its header, an unexpected row).
    File,
    /// A metadata key.
    Meta(String),
    /// A layer (its row, its size).
    Layer(usize),
    /// A block of a layer (its key, e.g. `2,4`).
    Block {
        /// The layer.
        layer: usize,
        /// The block's key.
        key: String,
    },
    /// A chunk of a block.
    Chunk {
        /// The layer.
        layer: usize,
        /// The block's key.
        key: String,
        /// The chunk's number in its block.
        chunk: u64,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Place::File => write!(f, "the file"),
            Place::Meta(key) => write!(f, "metadata `{key}`"),
            Place::Layer(n) => write!(f, "layer {n}"),
            Place::Block { layer, key } => write!(f, "block {key} of layer {layer}"),
            Place::Chunk { layer, key, chunk } => {
                write!(f, "chunk {chunk} of block {key} in layer {layer}")
            }
        }
    }
}

/// The kinds of [`StoreError`], for callers that map them (HTTP statuses, Python
/// exceptions, JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// No file at the path.
    Missing,
    /// SQLite failed (I/O, locking, a file that is not a database).
    Sqlite,
    /// The file's schema is not a tablebase's (another SQLite file, a tampered one).
    Schema,
    /// A schema or format version this tb does not read.
    Version,
    /// A tablebase of another kind, or an unfinished one: not something to read.
    NotATable,
    /// Stored data that fails its checks (checksum, length, value range, size).
    Damaged,
}

impl StoreErrorKind {
    /// The kind's name in JSON and Python (`missing`, `sqlite`, `schema`,
    /// `version`, `not_a_table`, `damaged`).
    pub fn as_str(self) -> &'static str {
        match self {
            StoreErrorKind::Missing => "missing",
            StoreErrorKind::Sqlite => "sqlite",
            StoreErrorKind::Schema => "schema",
            StoreErrorKind::Version => "version",
            StoreErrorKind::NotATable => "not_a_table",
            StoreErrorKind::Damaged => "damaged",
        }
    }
}

/// A failure of a tablebase file: its kind, and for damage, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What kind of failure.
    pub kind: StoreErrorKind,
    /// Where, for [`StoreErrorKind::Damaged`].
    pub place: Option<Place>,
    /// The whole message (with the file's path where known).
    pub message: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            place: None,
            message: message.into(),
        }
    }

    /// Damage at `place`: "`place` is corrupt: `why`".
    pub fn damaged(place: Place, why: impl fmt::Display) -> StoreError {
        StoreError {
            message: format!("{place} is corrupt: {why}"),
            kind: StoreErrorKind::Damaged,
            place: Some(place),
        }
    }

    /// Damage at `place` whose reason is the error it becomes the context of:
    /// "`place` is corrupt".
    pub fn corrupt(place: Place) -> StoreError {
        StoreError {
            message: format!("{place} is corrupt"),
            kind: StoreErrorKind::Damaged,
            place: Some(place),
        }
    }

    /// No file at `path`.
    pub fn missing(path: &Path) -> StoreError {
        StoreError::new(
            StoreErrorKind::Missing,
            format!("no tablebase file at {}", path.display()),
        )
    }

    /// The store's failure inside `error`, if it has one: a [`StoreError`] in its
    /// chain (its message becomes the whole chain's, so it keeps the context
    /// callers added), or an SQLite error. `None` for anything else (a position
    /// that is not one, a stopped search).
    pub fn find(error: &anyhow::Error) -> Option<StoreError> {
        let whole = format!("{error:#}");
        if let Some(found) = error.chain().find_map(|c| c.downcast_ref::<StoreError>()) {
            return Some(StoreError {
                message: whole,
                ..found.clone()
            });
        }
        error
            .chain()
            .any(|c| c.is::<rusqlite::Error>())
            .then(|| StoreError::new(StoreErrorKind::Sqlite, whole))
    }

    /// `error` as a store failure: the one it holds ([`StoreError::find`]), or
    /// else damage of `place` (what a reader concludes when a read it made fails
    /// for a reason the store did not name).
    pub fn or_damaged(error: &anyhow::Error, place: Place) -> StoreError {
        StoreError::find(error).unwrap_or_else(|| StoreError::damaged(place, format!("{error:#}")))
    }
}
