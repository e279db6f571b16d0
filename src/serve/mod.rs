//! `tb serve`: the loaded tables, read-only, over HTTP (axum's routes on hyper
//! and tokio). Paths and shapes are fixed by docs/FORMAT.md section 7:
//!
//! * `GET /`: the web board (`web`), with `/app.js` and `/style.css`;
//! * `GET /health`: `{"status":"ok","tables":N}`;
//! * `GET /api/tables`: a JSON array, per table its name, game and identity;
//! * `GET /api/probe?table=NAME&position=POS`: the probe object of `tb probe --json`;
//! * `POST /api/probe?table=NAME`: a JSON array of position strings answered by an
//!   array in the same order, or JSON lines (one position string per line)
//!   answered by JSON lines; a bad position gets an error object in its place
//!   (`batch`).
//!
//! Errors are JSON objects with an HTTP status: 400 bad request or position, 404
//! unknown table or path, 408 a request body not all sent within the idle time,
//! 413 body or batch too large, 500 a damaged or unreadable table, 503 too many
//! requests or connections at once, or a search stopped at the request's time (its object
//! holds the bounds proven). With one table, `?table=` may be left out. No
//! request can name a file.
//!
//! Whatever clients and files do, the server stays up and bounded: requests
//! and batches at once, body and batch sizes, connections and their idle time
//! (`conn`), answers streamed (`batch`), each request's work and reads of the
//! file within its time (a read stuck on a file that changed underneath is
//! interrupted, and a file whose schema changed is refused: see
//! [`crate::store::reads`]). The threads that serve connections never touch a
//! file: what is not in a reader's memory goes to the blocking pool. SIGTERM or
//! Ctrl-C ends the server within a few seconds (requests under way get
//! [`SHUTDOWN_GRACE`] to finish).

mod batch;
mod conn;
mod state;
mod web;

pub use state::ServeOptions;

use crate::games::read::{ProbeError, ReadOptions};
use crate::games::table::Table;
use anyhow::{Context, Result, bail};
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use state::{AppState, ProbeQuery, Shared, busy, error, permit, rejected, table_of};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// How long requests under way may still take once SIGTERM or Ctrl-C came.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Descriptors kept for the tables' files and the process itself, apart from
/// connections.
fn reserved_descriptors(tables: usize, readers: usize) -> u64 {
    // A reader holds its file, and in WAL mode its -wal and -shm files.
    64 + 3 * (tables * readers) as u64
}

/// Opens the tables, listens, calls `ready` with the bound address, and serves
/// until SIGTERM or Ctrl-C.
pub fn serve(options: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let descriptors = conn::raise_descriptor_limit();
    let readers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut tables = BTreeMap::new();
    for (name, path) in &options.tables {
        if tables.contains_key(name) {
            bail!("two tables are named `{name}`: rename one with NAME=FILE");
        }
        let bounds = ReadOptions {
            time_limit: Some(options.request_time),
            ..ReadOptions::default()
        };
        let table = Table::open(name, path, bounds, readers)
            .with_context(|| format!("cannot serve {}", path.display()))?;
        tables.insert(name.clone(), Arc::new(table));
    }
    let reserved = reserved_descriptors(tables.len(), readers);
    let limits = conn::Limits {
        max_connections: options
            .max_connections
            .min(descriptors.saturating_sub(reserved).max(1) as usize),
        idle: options.idle_time,
        grace: SHUTDOWN_GRACE,
    };
    let state = Arc::new(Shared {
        tables,
        permits: Arc::new(Semaphore::new(options.max_concurrent)),
        batches: Arc::new(Semaphore::new(options.max_batches)),
        options: options.clone(),
    });
    let app = Router::new()
        .route("/", get(web::index))
        .route("/app.js", get(web::script))
        .route("/style.css", get(web::style))
        .route("/health", get(health))
        .route("/api/tables", get(list_tables))
        .route("/api/probe", get(probe_one).post(batch::probe_batch))
        .fallback(not_found)
        .with_state(state);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server runtime")?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        // The handlers are installed before anyone is told the server is up, so
        // a SIGTERM sent right after the first answer cannot kill the process
        // (a lazily installed handler would leave the default action in place).
        let shutdown = shutdown_signal()?;
        ready(listener.local_addr()?);
        conn::serve(listener, app, limits, shutdown).await;
        anyhow::Ok(())
    });
    // What still runs after the grace (a search, a read until its deadline) is
    // not waited for: the process ends with it.
    runtime.shutdown_timeout(Duration::from_millis(200));
    served
}

/// Installs the SIGTERM and Ctrl-C handlers now and returns a future that
/// resolves when either signal arrives.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle Ctrl-C")?;
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}

/// A JSON body that is already text.
fn json_text(status: StatusCode, text: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

async fn health(State(state): State<AppState>) -> Response {
    axum::Json(json!({ "status": "ok", "tables": state.tables.len() })).into_response()
}

async fn list_tables(State(state): State<AppState>) -> Response {
    let list: Vec<&Value> = state.tables.values().map(|t| &t.description).collect();
    axum::Json(list).into_response()
}

async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no such path (see /, /api/tables, /api/probe, /health)",
    )
}

/// Runs `work` on the blocking pool under a concurrency permit (503 when none),
/// held until the work ends (even when the client has gone).
async fn bounded<F>(state: &AppState, work: F) -> Response
where
    F: FnOnce() -> Response + Send + 'static,
{
    let Some(permit) = permit(state) else {
        let (status, message) = busy();
        return error(status, message);
    };
    let work = move || {
        let answer = work();
        drop(permit);
        answer
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(response) => response,
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"),
    }
}

async fn probe_one(
    State(state): State<AppState>,
    query: Result<Query<ProbeQuery>, QueryRejection>,
) -> Response {
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => return rejected(rejection),
    };
    let table = match table_of(&state, &query) {
        Ok(table) => table,
        Err((status, message)) => return error(status, message),
    };
    let Some(position) = query.position else {
        return error(StatusCode::BAD_REQUEST, "give the position: &position=POS");
    };
    let respond = |position: &str, answer: Result<String, ProbeError>| match answer {
        Ok(text) => json_text(StatusCode::OK, text),
        Err(e) => json_text(status_of(&e), e.json(position)),
    };
    // A quick answer (an idle reader that holds it in memory) right here: handing
    // every probe to the blocking pool cost more in thread switches than the
    // probe itself. Anything else (a read of the file, a search) goes there.
    if let Some(answer) = table.answer_now(&position) {
        return respond(&position, answer);
    }
    let deadline = Instant::now() + state.options.request_time;
    bounded(&state, move || {
        respond(&position, table.answer(&position, Some(deadline)))
    })
    .await
}

/// The HTTP status of a probe's error: 400 a bad position, 500 a damaged or
/// unreadable table, 503 a search stopped at the request's time.
fn status_of(error: &ProbeError) -> StatusCode {
    match error {
        ProbeError::Position(_) => StatusCode::BAD_REQUEST,
        ProbeError::Table(_) => StatusCode::INTERNAL_SERVER_ERROR,
        ProbeError::Stopped { .. } => StatusCode::SERVICE_UNAVAILABLE,
    }
}
