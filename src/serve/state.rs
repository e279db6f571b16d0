//! What every handler of the server shares: its options, the tables and the
//! permits that bound the work under way, and the answers that refuse a
//! request (a leaf: the handlers' modules take it, it takes none of them).

use crate::games::table::Table;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a server loads and how it bounds requests.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Tables: (name, file).
    pub tables: Vec<(String, PathBuf)>,
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// Largest request body.
    pub max_body: usize,
    /// Most positions in one POST.
    pub max_batch: usize,
    /// Most requests answered at once; more get 503.
    pub max_concurrent: usize,
    /// Most POST batches answered at once (each holds its positions until its
    /// answer is sent); more get 503.
    pub max_batches: usize,
    /// Most connections open at once (past it, the one idle the longest is
    /// closed, or a new one refused when all are busy).
    pub max_connections: usize,
    /// Longest a client may send nothing of a request it started or no request
    /// on an open connection, or read nothing of an answer; its connection is
    /// then closed.
    pub idle_time: Duration,
    /// Longest a request may take (a search stops then, and so does a read of the
    /// file; a batch answers the rest with error objects).
    pub request_time: Duration,
}

impl ServeOptions {
    /// The default bounds for `tables` on `listen`.
    pub fn new(tables: Vec<(String, PathBuf)>, listen: SocketAddr) -> ServeOptions {
        ServeOptions {
            tables,
            listen,
            max_body: 4 << 20,
            max_batch: 100_000,
            max_concurrent: 256,
            max_batches: 16,
            max_connections: 1024,
            idle_time: Duration::from_secs(30),
            request_time: Duration::from_secs(10),
        }
    }
}

/// The state of a running server.
pub(super) struct Shared {
    pub(super) tables: BTreeMap<String, Arc<Table>>,
    /// One per request answered off the connections' threads.
    pub(super) permits: Arc<Semaphore>,
    /// One per POST batch, besides its request's permit.
    pub(super) batches: Arc<Semaphore>,
    pub(super) options: ServeOptions,
}

pub(super) type AppState = Arc<Shared>;

#[derive(Deserialize)]
pub(super) struct ProbeQuery {
    pub(super) table: Option<String>,
    pub(super) position: Option<String>,
}

/// The table a query names (the only one when it names none), or the error
/// response's status and message.
pub(super) fn table_of(
    state: &Shared,
    query: &ProbeQuery,
) -> Result<Arc<Table>, (StatusCode, String)> {
    let Some(name) = &query.table else {
        if state.tables.len() == 1 {
            return Ok(state.tables.values().next().cloned().expect("one table"));
        }
        return Err((
            StatusCode::BAD_REQUEST,
            "give the table: ?table=NAME (see /api/tables)".into(),
        ));
    };
    state.tables.get(name).cloned().ok_or_else(|| {
        (
            StatusCode::NOT_FOUND,
            format!("no table `{name}` (see /api/tables)"),
        )
    })
}

/// A request's permit to work off the connections' threads, unless all are
/// taken.
pub(super) fn permit(state: &Shared) -> Option<OwnedSemaphorePermit> {
    Arc::clone(&state.permits).try_acquire_owned().ok()
}

/// The status and message of a request refused for too many at once.
pub(super) fn busy() -> (StatusCode, String) {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "too many requests at once; retry shortly".into(),
    )
}

/// A JSON error response.
pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
}

/// A rejected request (a bad query string) as a JSON error.
pub(super) fn rejected(rejection: impl IntoResponse) -> Response {
    let response = rejection.into_response();
    let status = response.status();
    error(
        status,
        format!("bad request ({})", status.canonical_reason().unwrap_or("")),
    )
}
