//! Bounds on a store's reads, for a reader that must never hang on a file it
//! does not control (`tb serve`): a cache-only mode (no read at all), a deadline
//! past which a running statement is interrupted, views and triggers refused
//! whenever a statement is prepared, and the file's schema re-validated when it
//! changes while open.
//!
//! A file validated at open can still change underneath: overwritten in place,
//! SQLite sees the new schema on its live connection and prepares its queries
//! again against it (a `chunks` that became an endless recursive view runs
//! forever). So a read-only store checks the schema cookie before each data
//! read, and a changed schema is validated again or refused from then on; the
//! authorizer and the deadline cover what slips between the check and the read.

use super::StoreError;
use super::error::StoreErrorKind;
use anyhow::Result;
use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A read refused because reads are off ([`super::Store::bound_reads`] with
/// `cached_only`): the caller asks again where it may read. Not a failure of the
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCached;

impl fmt::Display for NotCached {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the answer needs a read of the file, and reads are off")
    }
}

impl std::error::Error for NotCached {}

impl NotCached {
    /// Whether `error` is (or wraps) one.
    pub fn is(error: &anyhow::Error) -> bool {
        super::error::find_in::<NotCached>(error).is_some()
    }
}

/// VM steps between two looks at the deadline (a chunk's lookup takes fewer).
const STEPS_PER_CHECK: i32 = 2000;

/// No deadline, in [`Reads::deadline`].
const NONE: u64 = u64::MAX;

/// Nanoseconds since the first call in this process: a deadline as a number the
/// progress handler can read from another place than where it was set.
fn nanos(at: Instant) -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    at.saturating_duration_since(epoch)
        .as_nanos()
        .min(NONE as u128 - 1) as u64
}

/// The state of a store's bounds.
pub(super) struct Reads {
    /// Reads fail with [`NotCached`].
    cached_only: Cell<bool>,
    /// When a running statement is interrupted ([`nanos`], [`NONE`]); shared
    /// with the connection's progress handler.
    deadline: Arc<AtomicU64>,
    /// The schema cookie last validated; `None`: not watched (a store open for
    /// a build, whose own migrations change the schema).
    cookie: Cell<Option<i64>>,
    /// Why the file is refused: its schema changed into one that is not a
    /// tablebase's. Kept: a file that changed once is not trusted again.
    refused: RefCell<Option<StoreError>>,
}

impl Reads {
    /// Bounds for a store open for a build: cache-only mode only.
    pub(super) fn unwatched() -> Reads {
        Reads {
            cached_only: Cell::new(false),
            deadline: Arc::new(AtomicU64::new(NONE)),
            cookie: Cell::new(None),
            refused: RefCell::new(None),
        }
    }

    /// Bounds for a read-only connection: installs the deadline's progress
    /// handler and the authorizer that refuses views, triggers and recursive
    /// queries (no query of ours uses one, and a validated schema has none).
    /// The schema is watched from [`Reads::watch_schema_from_now`] on.
    pub(super) fn watch(conn: &mut Connection) -> Result<Reads> {
        let reads = Reads::unwatched();
        let deadline = Arc::clone(&reads.deadline);
        conn.progress_handler(
            STEPS_PER_CHECK,
            Some(move || {
                let at = deadline.load(Ordering::Relaxed);
                at != NONE && nanos(Instant::now()) > at
            }),
        )?;
        conn.authorizer(Some(|context: AuthContext<'_>| {
            if context.accessor.is_some() || matches!(context.action, AuthAction::Recursive) {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }))?;
        Ok(reads)
    }

    /// Watches the schema from its cookie now: called before the schema is
    /// validated, so that a change in between is seen at the first read.
    pub(super) fn watch_schema_from_now(&self, conn: &Connection) -> Result<()> {
        self.cookie.set(Some(schema_cookie(conn)?));
        Ok(())
    }

    /// Sets the bounds; returns the ones they replace.
    pub(super) fn set(&self, cached_only: bool, deadline: Option<Instant>) -> (bool, u64) {
        let at = deadline.map_or(NONE, nanos);
        let old = (
            self.cached_only.replace(cached_only),
            self.deadline.load(Ordering::Relaxed),
        );
        if old.1 != at {
            self.deadline.store(at, Ordering::Relaxed);
        }
        old
    }

    /// Puts back bounds [`Reads::set`] returned.
    pub(super) fn restore(&self, (cached_only, at): (bool, u64)) {
        self.cached_only.set(cached_only);
        if self.deadline.load(Ordering::Relaxed) != at {
            self.deadline.store(at, Ordering::Relaxed);
        }
    }

    /// Whether reads are off.
    pub(super) fn cached_only(&self) -> bool {
        self.cached_only.get()
    }

    /// Before a read of data: an error if reads are off, if the file is refused,
    /// or if its schema changed into one that is not a tablebase's (checked
    /// again with `validate` whenever the cookie moved).
    pub(super) fn before_read(
        &self,
        conn: &Connection,
        validate: impl FnOnce(&Connection) -> Result<()>,
    ) -> Result<()> {
        if self.cached_only.get() {
            return Err(NotCached.into());
        }
        if let Some(refused) = &*self.refused.borrow() {
            return Err(refused.clone().into());
        }
        let Some(validated) = self.cookie.get() else {
            return Ok(());
        };
        let cookie = schema_cookie(conn)?;
        if cookie == validated {
            return Ok(());
        }
        match validate(conn) {
            Ok(()) => {
                // Changed the way a tablebase's schema may (a VACUUM counts the
                // cookie up): still a tablebase.
                self.cookie.set(Some(cookie));
                Ok(())
            }
            Err(e) => Err(self.refuse(conn, &format!("{e:#}")).into()),
        }
    }

    /// Refuses the file from now on, saying `why`; the error.
    pub(super) fn refuse(&self, conn: &Connection, why: &str) -> StoreError {
        let error = StoreError::new(
            StoreErrorKind::Schema,
            format!(
                "{}: the file changed while open and is no longer a tablebase of this tb ({why}); it is refused until opened again",
                conn.path().unwrap_or("the file")
            ),
        );
        *self.refused.borrow_mut() = Some(error.clone());
        error
    }
}

/// The file's schema cookie (counted up by SQLite at every schema change).
fn schema_cookie(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("PRAGMA schema_version")?
        .query_row([], |r| r.get(0))?)
}

/// What a failed read says of the file, as a store error: an interrupted
/// statement (its deadline passed) is [`StoreErrorKind::Sqlite`], a statement
/// the authorizer refused (a view or trigger appeared) refuses the file; `None`
/// for any other failure.
pub(super) fn classify(
    reads: &Reads,
    conn: &Connection,
    error: &rusqlite::Error,
) -> Option<StoreError> {
    use rusqlite::ErrorCode;
    match error.sqlite_error_code()? {
        ErrorCode::OperationInterrupted => Some(StoreError::new(
            StoreErrorKind::Sqlite,
            format!(
                "{}: a read took longer than the time allowed and was stopped",
                conn.path().unwrap_or("the file")
            ),
        )),
        ErrorCode::AuthorizationForStatementDenied => {
            Some(reads.refuse(conn, "a query of it went through a view or trigger"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
