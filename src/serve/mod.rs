//! `tb serve`: the loaded tables, read-only, over HTTP (axum on tokio). Paths and
//! shapes are fixed by DESIGN.md section 6:
//!
//! * `GET /`: the web board (`web`), with `/app.js` and `/style.css`;
//! * `GET /health`: `{"status":"ok","tables":N}`;
//! * `GET /api/tables`: a JSON array, per table its name, game and identity;
//! * `GET /api/probe?table=NAME&position=POS`: the probe object of `tb probe --json`;
//! * `POST /api/probe?table=NAME`: a JSON array of position strings answered by an
//!   array in the same order, or JSON lines (one position string per line)
//!   answered by JSON lines; a bad position gets an error object in its place.
//!
//! Errors are JSON objects with an HTTP status: 400 bad request or position, 404
//! unknown table or path, 413 body or batch too large, 500 a damaged or
//! unreadable table, 503 too many requests at once or a search stopped at the
//! request's time (its object holds the bounds proven). With one table,
//! `?table=` may be left out. Every request is bounded (body size, batch size,
//! concurrent requests, time); no request can name a file. SIGTERM or Ctrl-C ends
//! the server gracefully (requests under way are answered).

mod web;

use crate::games::read::{ProbeError, ReadOptions};
use crate::games::table::Table;
use anyhow::{Context, Result, bail};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

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
    /// Longest a request may take (a search stops then; a batch answers the rest
    /// with error objects).
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
            request_time: Duration::from_secs(10),
        }
    }
}

struct Shared {
    tables: BTreeMap<String, Arc<Table>>,
    permits: Semaphore,
    options: ServeOptions,
}

type AppState = Arc<Shared>;

/// Opens the tables, listens, calls `ready` with the bound address, and serves
/// until SIGTERM or Ctrl-C.
pub fn serve(options: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let mut tables = BTreeMap::new();
    for (name, path) in &options.tables {
        if tables.contains_key(name) {
            bail!("two tables are named `{name}`: rename one with NAME=FILE");
        }
        let bounds = ReadOptions {
            time_limit: Some(options.request_time),
            ..ReadOptions::default()
        };
        let readers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let table = Table::open(name, path, bounds, readers)
            .with_context(|| format!("cannot serve {}", path.display()))?;
        tables.insert(name.clone(), Arc::new(table));
    }
    let state = Arc::new(Shared {
        tables,
        permits: Semaphore::new(options.max_concurrent),
        options: options.clone(),
    });
    let app = Router::new()
        .route("/", get(web::index))
        .route("/app.js", get(web::script))
        .route("/style.css", get(web::style))
        .route("/health", get(health))
        .route("/api/tables", get(list_tables))
        .route("/api/probe", get(probe_one).post(probe_batch))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(options.max_body))
        .with_state(state);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        // The handlers are installed before anyone is told the server is up, so
        // a SIGTERM sent right after the first answer cannot kill the process
        // (a lazily installed handler would leave the default action in place).
        let shutdown = shutdown_signal()?;
        ready(listener.local_addr()?);
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .context("the server failed")
    })
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

/// A JSON error response.
fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
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

#[derive(Deserialize)]
struct ProbeQuery {
    table: Option<String>,
    position: Option<String>,
}

/// The table a query names (the only one when it names none), or the error
/// response's status and message.
fn table_of(state: &Shared, query: &ProbeQuery) -> Result<Arc<Table>, (StatusCode, String)> {
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

/// Runs `work` on the blocking pool under a concurrency permit (503 when none).
async fn bounded<F>(state: &AppState, work: F) -> Response
where
    F: FnOnce() -> Response + Send + 'static,
{
    let Ok(_permit) = state.permits.try_acquire() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests at once; retry shortly",
        );
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(response) => response,
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"),
    }
}

/// A rejected request (a bad query string, a body over the limit) as a JSON error.
fn rejected(rejection: impl IntoResponse) -> Response {
    let response = rejection.into_response();
    let status = response.status();
    let message = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large".to_string(),
        _ => format!("bad request ({})", status.canonical_reason().unwrap_or("")),
    };
    error(status, message)
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
    // A quick answer (an idle reader, no search) right here: handing every probe to
    // the blocking pool cost more in thread switches than the probe itself.
    if let Some(answer) = table.answer_now(&position) {
        return respond(&position, answer);
    }
    bounded(&state, move || respond(&position, table.answer(&position))).await
}

async fn probe_batch(
    State(state): State<AppState>,
    query: Result<Query<ProbeQuery>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (Query(query), body) = match (query, body) {
        (Ok(query), Ok(body)) => (query, body),
        (Err(rejection), _) => return rejected(rejection),
        (_, Err(rejection)) => return rejected(rejection),
    };
    let table = match table_of(&state, &query) {
        Ok(table) => table,
        Err((status, message)) => return error(status, message),
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "the body is not UTF-8 text");
    };
    let array = text.trim_start().starts_with('[');
    // Each entry: the position, or why the entry is not one.
    let entries: Vec<Result<String, String>> = if array {
        match serde_json::from_str::<Vec<Value>>(text) {
            Ok(values) => values.into_iter().map(position_of).collect(),
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("the body is not a JSON array: {e}"),
                );
            }
        }
    } else {
        // Lines: a JSON string each, or the position itself as `tb probe` reads
        // stdin (a line that is not a JSON string is taken as it stands).
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| match serde_json::from_str::<Value>(l) {
                Ok(Value::String(s)) => Ok(s),
                _ => Ok(l.trim().to_string()),
            })
            .collect()
    };
    let max_batch = state.options.max_batch;
    if entries.len() > max_batch {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{} positions; at most {max_batch} per request",
                entries.len()
            ),
        );
    }
    let deadline = Instant::now() + state.options.request_time;
    bounded(&state, move || {
        let answers: Vec<String> = entries
            .iter()
            .map(|entry| match entry {
                _ if Instant::now() > deadline => {
                    ProbeError::Position(anyhow::anyhow!("the request ran out of time"))
                        .json(&entry.clone().unwrap_or_else(|e| e))
                }
                Ok(position) => table.answer(position).unwrap_or_else(|e| e.json(position)),
                Err(input) => ProbeError::Position(anyhow::anyhow!(
                    "not a position string (a JSON string per entry)"
                ))
                .json(input),
            })
            .collect();
        let body = if array {
            format!("[{}]", answers.join(","))
        } else {
            answers.iter().map(|a| format!("{a}\n")).collect()
        };
        let kind = if array {
            "application/json"
        } else {
            "application/x-ndjson"
        };
        (StatusCode::OK, [(header::CONTENT_TYPE, kind)], body).into_response()
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

/// A batch entry as a position string, or its text for the error object.
fn position_of(value: Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(other.to_string()),
    }
}
