//! The bounds of [`super::Reads`] on a real file changed underneath by a
//! writable connection (a file apart from `reads.rs`: the tests open a
//! [`Store`], and `reads` itself never names its parent).

use super::super::Store;
use super::*;
use rusqlite::ErrorCode;
use std::path::Path;
use std::time::Duration;

/// A tablebase file (schema only, one chunk row) and a writable connection
/// to it: what changes it underneath.
fn file(dir: &Path) -> (std::path::PathBuf, Connection) {
    let path = dir.join("t.tb");
    drop(Store::open_for_build(&path, 64).unwrap());
    let writer = Connection::open(&path).unwrap();
    writer
        .execute_batch(
            "PRAGMA journal_mode = DELETE; INSERT INTO chunks VALUES (1, '1', 0, 4, 0, x'00')",
        )
        .unwrap();
    (path, writer)
}

fn code(error: &rusqlite::Error) -> Option<ErrorCode> {
    error.sqlite_error_code()
}

#[test]
fn a_statement_running_past_the_deadline_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = file(dir.path());
    let store = Store::open_read(&path).unwrap();
    // Nine copies of a schema of six objects: 10 million rows, seconds of work.
    let endless = format!("SELECT count(*) FROM {}", ["sqlite_schema"; 9].join(", "));
    let _bounds = store.bound_reads(false, Some(Instant::now() + Duration::from_millis(50)));
    let stopped = store
        .conn
        .query_row(&endless, [], |r| r.get::<_, i64>(0))
        .unwrap_err();
    assert_eq!(code(&stopped), Some(ErrorCode::OperationInterrupted));
    let failure = classify(&store.reads, &store.conn, &stopped).unwrap();
    assert_eq!(failure.kind, StoreErrorKind::Sqlite, "{failure}");
}

#[test]
fn views_triggers_and_recursive_queries_are_refused_when_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let (path, writer) = file(dir.path());
    let store = Store::open_read(&path).unwrap();
    writer
        .execute_batch("CREATE VIEW v AS SELECT * FROM chunks")
        .unwrap();
    for sql in [
        "SELECT * FROM v",
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r",
    ] {
        let refused = store.conn.prepare(sql).map(|_| ()).unwrap_err();
        assert_eq!(
            code(&refused),
            Some(ErrorCode::AuthorizationForStatementDenied),
            "{sql}"
        );
    }
    assert!(store.conn.prepare("SELECT * FROM chunks").is_ok());
}

#[test]
fn a_schema_changed_underneath_is_checked_again_and_refused_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let (path, writer) = file(dir.path());
    let store = Store::open_read(&path).unwrap();
    assert!(store.stored_chunk(1, &[1], 0).is_ok());
    // A change that leaves a tablebase's schema (the cookie moves, as in a
    // VACUUM): still read.
    writer
        .execute_batch("CREATE TABLE extra(x); DROP TABLE extra")
        .unwrap();
    assert!(store.stored_chunk(1, &[1], 0).is_ok());
    // One that does not: refused, and still after it is undone.
    writer
        .execute_batch(
            "ALTER TABLE chunks RENAME TO old; \
             CREATE VIEW chunks AS SELECT * FROM old",
        )
        .unwrap();
    let refused = store.stored_chunk(1, &[1], 0).unwrap_err();
    let failure = StoreError::find(&refused).unwrap();
    assert_eq!(failure.kind, StoreErrorKind::Schema, "{refused:#}");
    writer
        .execute_batch("DROP VIEW chunks; ALTER TABLE old RENAME TO chunks")
        .unwrap();
    let still = StoreError::find(&store.block_chunks(1, &[1]).unwrap_err()).unwrap();
    assert_eq!(still.kind, StoreErrorKind::Schema);
}

#[test]
fn a_change_between_the_check_and_the_read_is_refused_by_the_authorizer() {
    let dir = tempfile::tempdir().unwrap();
    let (path, writer) = file(dir.path());
    let store = Store::open_read(&path).unwrap();
    assert!(store.stored_chunk(1, &[1], 0).is_ok());
    writer
        .execute_batch(
            "ALTER TABLE chunks RENAME TO old; \
             CREATE VIEW chunks AS WITH RECURSIVE r(x) AS \
             (SELECT 1 UNION ALL SELECT x + 1 FROM r) \
             SELECT -x AS n, '' AS counts, x AS chunk, 0 AS raw_len, 0 AS checksum, \
             x'' AS data FROM r",
        )
        .unwrap();
    // As if the file changed right after the cookie was checked: the
    // statement is prepared again against the view, which is refused.
    // (The deadline only keeps the test from hanging without the authorizer.)
    store
        .reads
        .cookie
        .set(Some(schema_cookie(&store.conn).unwrap()));
    let _bounds = store.bound_reads(false, Some(Instant::now() + Duration::from_secs(2)));
    let refused = store.stored_chunk(1, &[1], 0).unwrap_err();
    let failure = StoreError::find(&refused).unwrap();
    assert_eq!(failure.kind, StoreErrorKind::Schema, "{refused:#}");
    assert!(store.reads.refused.borrow().is_some());
}

#[test]
fn with_reads_off_nothing_is_read_until_the_bounds_are_lifted() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = file(dir.path());
    let store = Store::open_read(&path).unwrap();
    {
        let _off = store.bound_reads(true, None);
        assert!(NotCached::is(&store.stored_chunk(1, &[1], 0).unwrap_err()));
    }
    assert!(store.stored_chunk(1, &[1], 0).is_ok());
}
