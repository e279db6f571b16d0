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
    /// Not a table this tb reads: not an SQLite file at all, a game it does not
    /// know, an unfinished strategy.
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
        if let Some(found) = find_in::<StoreError>(error) {
            return Some(StoreError {
                message: whole,
                ..found.clone()
            });
        }
        let sqlite = find_in::<rusqlite::Error>(error)?;
        // A file that is not an SQLite database at all is not a table; any other
        // SQLite failure is SQLite's (I/O, locks, a damaged page).
        let kind = match sqlite.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => StoreErrorKind::NotATable,
            _ => StoreErrorKind::Sqlite,
        };
        Some(StoreError::new(kind, whole))
    }

    /// `error` as a store failure: the one it holds ([`StoreError::find`]), or
    /// else damage of `place` (what a reader concludes when a read it made fails
    /// for a reason the store did not name).
    pub fn or_damaged(error: &anyhow::Error, place: Place) -> StoreError {
        StoreError::find(error).unwrap_or_else(|| StoreError::damaged(place, format!("{error:#}")))
    }
}

/// The first `T` in `error`: one added as context (which `anyhow`'s own downcast
/// finds, its cause chain does not show it as a `T`) or one in its chain of causes.
pub fn find_in<T: std::error::Error + Send + Sync + 'static>(error: &anyhow::Error) -> Option<&T> {
    error
        .downcast_ref::<T>()
        .or_else(|| error.chain().find_map(|c| c.downcast_ref::<T>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_store_error_is_found_as_cause_or_as_context() {
        let place = Place::Chunk {
            layer: 3,
            key: "1,2".into(),
            chunk: 0,
        };
        let raised: anyhow::Error = StoreError::damaged(place.clone(), "checksum mismatch").into();
        let as_context = anyhow::anyhow!("bad frame").context(StoreError::corrupt(place.clone()));
        for error in [raised, as_context] {
            let wrapped = Err::<(), _>(error).context("3x4.tb").unwrap_err();
            let found = StoreError::find(&wrapped).expect("found");
            assert_eq!(
                (found.kind, found.place),
                (StoreErrorKind::Damaged, Some(place.clone()))
            );
            assert!(
                found
                    .message
                    .starts_with("3x4.tb: chunk 0 of block 1,2 in layer 3 is corrupt")
            );
        }
        assert!(StoreError::find(&anyhow::anyhow!("not a position")).is_none());
    }
}
