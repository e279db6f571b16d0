//! `POST /api/probe`: a batch of positions, read and answered within bounds.
//!
//! A batch takes its permits (a request's and a batch's) before its body is
//! read, so that the bodies held at once are bounded; a body over `--max-body`
//! is refused from its declared length before it is asked for (no
//! `100 Continue`), and one that has not arrived whole within the idle time
//! (stopped, or sent a byte at a time) gets 408.
//! The answers stream out in pieces computed on the blocking pool as the
//! connection takes them (one computed ahead): a client that does not read
//! holds a piece or two, never the whole answer, until its connection times
//! out. The request's time bounds the work (the time spent computing,
//! not the time the client takes to read); entries past it get error objects.

use super::state::{AppState, ProbeQuery, busy, error, permit, rejected, table_of};
use crate::games::read::ProbeError;
use crate::games::table::Table;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use serde::de::{DeserializeSeed, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

/// A piece of an answer ends after this many bytes of text (a few hundred
/// answers).
const PIECE_BYTES: usize = 256 << 10;

/// Each entry of a batch: the position, or the text of an entry that is not a
/// position string (answered with an error object).
type Entry = Result<String, String>;

/// `POST /api/probe?table=NAME`: the answers of a batch, in order.
pub(super) async fn probe_batch(
    State(state): State<AppState>,
    query: Result<Query<ProbeQuery>, QueryRejection>,
    request: Request,
) -> Response {
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => return rejected(rejection),
    };
    let (parts, body) = request.into_parts();
    let (max_body, idle) = (state.options.max_body, state.options.idle_time);
    let (table, permits) = match admit(&state, &query, &parts.headers) {
        Ok(admitted) => admitted,
        Err((status, message)) => {
            // A client that waits for `100 Continue` has sent nothing yet: it
            // is answered at once. One that sends its body straight away gets
            // its answer once the body (up to the limit) is read and dropped:
            // closing on a body still arriving would reset the connection
            // before the client reads the answer.
            if !expects_continue(&parts.headers) {
                let _ = read_body(body, max_body, idle, false).await;
            }
            return error(status, message);
        }
    };
    let body = match read_body(body, max_body, idle, true).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "the body is not UTF-8 text");
    };
    let array = text.trim_start().starts_with('[');
    let max_batch = state.options.max_batch;
    let (entries, count) = if array {
        match parse_array(text, max_batch) {
            Ok(parsed) => parsed,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("the body is not a JSON array: {e}"),
                );
            }
        }
    } else {
        parse_lines(text, max_batch)
    };
    if count > max_batch {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{count} positions; at most {max_batch} per request"),
        );
    }
    drop(body);
    let (pieces, answers) = mpsc::channel(1);
    let work = Work {
        table,
        entries: Arc::new(entries),
        array,
        budget: state.options.request_time,
        _permits: permits,
    };
    tokio::spawn(work.answer(pieces));
    let kind = if array {
        "application/json"
    } else {
        "application/x-ndjson"
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, kind)],
        Body::new(Answers(answers)),
    )
        .into_response()
}

/// A batch's permits: its request's and a batch's.
type Permits = (OwnedSemaphorePermit, OwnedSemaphorePermit);

/// The table and permits of a batch, or the status and message refusing it
/// before its body is read: a body declared over the limit (413), a table not
/// given or unknown (400, 404), too many requests or batches at once (503).
fn admit(
    state: &AppState,
    query: &ProbeQuery,
    headers: &HeaderMap,
) -> Result<(Arc<Table>, Permits), (StatusCode, String)> {
    if declared_length(headers).is_some_and(|length| length > state.options.max_body as u64) {
        return Err(too_large());
    }
    let table = table_of(state, query)?;
    let batch = Arc::clone(&state.batches)
        .try_acquire_owned()
        .map_err(|_| busy())?;
    Ok((table, (batch, permit(state).ok_or_else(busy)?)))
}

/// The status and message of a body over the limit.
fn too_large() -> (StatusCode, String) {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        "the request body is too large".into(),
    )
}

/// The body length a request declares, if it declares one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a request waits for `100 Continue` before it sends its body.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"))
}

/// The request body (kept only if `keep`), at most `max` bytes; the error
/// answer when it is larger, cannot be read, or has not all arrived within
/// `idle` (a client that sends a byte now and then holds the batch's permits
/// no longer than one that sends nothing).
async fn read_body(
    mut body: Body,
    max: usize,
    idle: Duration,
    keep: bool,
) -> Result<Vec<u8>, Response> {
    let (mut bytes, mut read) = (Vec::new(), 0);
    let deadline = tokio::time::Instant::now() + idle;
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        let frame = match tokio::time::timeout_at(deadline, next).await {
            Err(_) => {
                return Err(error(
                    StatusCode::REQUEST_TIMEOUT,
                    "the request body did not arrive within the idle time",
                ));
            }
            Ok(None) => return Ok(bytes),
            Ok(Some(Err(_))) => {
                return Err(error(
                    StatusCode::BAD_REQUEST,
                    "bad request (the body could not be read)",
                ));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            read += data.len();
            if read > max {
                let (status, message) = too_large();
                return Err(error(status, message));
            }
            if keep {
                bytes.extend_from_slice(&data);
            }
        }
    }
}

/// The entries of a JSON array, at most `max` of them kept, and how many it
/// holds (counted without keeping the rest).
fn parse_array(text: &str, max: usize) -> serde_json::Result<(Vec<Entry>, usize)> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let parsed = Entries { max }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(parsed)
}

/// The entries of JSON lines, at most `max` of them kept, and how many there
/// are: a JSON string each, or the position itself as `tb probe` reads stdin (a
/// line that is not a JSON string is taken as it stands).
fn parse_lines(text: &str, max: usize) -> (Vec<Entry>, usize) {
    let lines = || text.lines().filter(|l| !l.trim().is_empty());
    let count = lines().count();
    let entries = lines()
        .take(max)
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(Value::String(s)) => Ok(s),
            _ => Ok(l.trim().to_string()),
        })
        .collect();
    (entries, count)
}

/// Reads a JSON array's entries, keeping at most `max`.
struct Entries {
    max: usize,
}

impl<'de> DeserializeSeed<'de> for Entries {
    type Value = (Vec<Entry>, usize);

    fn deserialize<D: serde::Deserializer<'de>>(self, reader: D) -> Result<Self::Value, D::Error> {
        reader.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries {
    type Value = (Vec<Entry>, usize);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of position strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while entries.len() < self.max {
            match seq.next_element::<Value>()? {
                Some(Value::String(position)) => entries.push(Ok(position)),
                Some(other) => entries.push(Err(other.to_string())),
                None => {
                    let count = entries.len();
                    return Ok((entries, count));
                }
            }
        }
        let mut count = entries.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count += 1;
        }
        Ok((entries, count))
    }
}

/// A batch being answered: what it answers and the permits it holds until its
/// answer is sent or its client has gone.
struct Work {
    table: Arc<Table>,
    entries: Arc<Vec<Entry>>,
    array: bool,
    /// The time its work may take.
    budget: Duration,
    _permits: Permits,
}

impl Work {
    /// Answers every entry into `pieces`, a piece at a time on the blocking
    /// pool; stops when the client has gone (the receiver is dropped).
    async fn answer(self, pieces: mpsc::Sender<Bytes>) {
        let (mut next, mut spent) = (0, Duration::ZERO);
        let mut text = String::new();
        if self.array {
            text.push('[');
        }
        while next < self.entries.len() {
            let (table, entries, array) = (
                Arc::clone(&self.table),
                Arc::clone(&self.entries),
                self.array,
            );
            let left = self.budget.saturating_sub(spent);
            let piece = tokio::task::spawn_blocking(move || {
                let start = Instant::now();
                let end = answer_piece(&table, &entries, next, start + left, array, &mut text);
                (text, end, start.elapsed())
            });
            let Ok((piece, end, took)) = piece.await else {
                return; // a panic: the answer ends short, the client sees it cut
            };
            (next, spent) = (end, spent + took);
            if pieces.send(Bytes::from(piece)).await.is_err() {
                return;
            }
            text = String::new();
        }
        if self.array {
            text.push(']');
        }
        if !text.is_empty() {
            let _ = pieces.send(Bytes::from(text)).await;
        }
    }
}

/// Appends to `text` the answers of `entries` from `first` on, until the piece
/// is full; returns the entry after the last one answered. An entry reached
/// after `deadline` gets an error object; a read of the file still running
/// then is stopped.
fn answer_piece(
    table: &Table,
    entries: &[Entry],
    first: usize,
    deadline: Instant,
    array: bool,
    text: &mut String,
) -> usize {
    let mut k = first;
    while k < entries.len() && text.len() < PIECE_BYTES {
        if array && k > 0 {
            text.push(',');
        }
        let answer = match &entries[k] {
            _ if Instant::now() > deadline => {
                let input = entries[k].as_ref().unwrap_or_else(|e| e);
                ProbeError::Position(anyhow::anyhow!("the request ran out of time")).json(input)
            }
            Ok(position) => table
                .answer(position, Some(deadline))
                .unwrap_or_else(|e| e.json(position)),
            Err(input) => ProbeError::Position(anyhow::anyhow!(
                "not a position string (a JSON string per entry)"
            ))
            .json(input),
        };
        text.push_str(&answer);
        if !array {
            text.push('\n');
        }
        k += 1;
    }
    k
}

/// The body of a batch's answer: its pieces as they come.
struct Answers(mpsc::Receiver<Bytes>);

impl HttpBody for Answers {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.get_mut()
            .0
            .poll_recv(cx)
            .map(|piece| piece.map(|bytes| Ok(Frame::data(bytes))))
    }
}
