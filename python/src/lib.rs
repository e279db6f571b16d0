//! The Python module `tb` (docs/FORMAT.md section 7): `tb.open(path)` gives a table
//! whose `probe`, `probe_many` and `info` answer with the fields of `tb probe
//! --json` and `tb info --json`; `tb.solve(board, position)` answers as `tb solve
//! --json`. A thin layer over the `tb` crate: the table is
//! [`tb::games::table::Table`] over the registry of readers (as in `tb serve`),
//! the search is [`tb::games::dots::solve::SolveRequest`] (as in `tb solve`).
//!
//! The GIL is released while probing and searching; a table serves several
//! Python threads at once; batches are probed on worker threads while the caller's
//! thread makes the dicts. Every answer goes through the crate's JSON writers and
//! `json.loads`, so its fields cannot drift from the CLI's, except one quick
//! path: Dots-and-Boxes answers without loony flags become dicts directly
//! (copies of template dicts with interned keys), checked field for field
//! against the CLI's in the tests.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyIterator, PyList, PyString};
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tb::games::dots::board::{Board, BoardError};
use tb::games::dots::notation::{self, NotationError};
use tb::games::dots::output;
use tb::games::dots::probe::{MoveValue, Probe, Source};
use tb::games::dots::reader::DotsAnswer;
use tb::games::dots::solve::SolveRequest;
use tb::games::read::{Answer, Detail, ProbeError, ReadOptions};
use tb::games::table::{Table as CoreTable, default_name};

mod dask;

create_exception!(tb, Error, PyException, "Base class of the errors of tb.");
create_exception!(
    tb,
    PositionError,
    Error,
    "A position that does not parse or that the table (or search) cannot answer: not in it, past its stored layers and the search fallback's reach, a Wilson file with another penalty. Attributes: input, error."
);
create_exception!(
    tb,
    TableError,
    Error,
    "A file that cannot be opened (missing files included), is not a tablebase, or is damaged (also found while probing), or a closed table. Attributes: kind (`missing`, `sqlite`, `schema`, `version`, `not_a_table`, `damaged`), and from a probe input, error."
);
create_exception!(
    tb,
    SearchLimitError,
    Error,
    "A search stopped by max_nodes or time_limit. Attributes: lower, upper (the value lies in lower..=upper), nodes, reason; from tb.solve also info (the object `tb solve --json` prints)."
);

/// Positions probed by one worker thread at a time in `probe_many` and
/// `probe_iter`: the first chunks are smaller (from [`FIRST_CHUNK`], doubling) so
/// that making dicts starts early.
const CHUNK: usize = 1024;

/// The first chunk; a batch of fewer positions is probed on the calling thread.
const FIRST_CHUNK: usize = 64;

/// Interned dict keys and fixed strings of the answers.
struct Keys {
    board: Py<PyString>,
    position: Py<PyString>,
    lines: Py<PyString>,
    value: Py<PyString>,
    source: Py<PyString>,
    moves: Py<PyString>,
    line: Py<PyString>,
    name: Py<PyString>,
    boxes: Py<PyString>,
    book: Py<PyString>,
    search: Py<PyString>,
}

static KEYS: PyOnceLock<Keys> = PyOnceLock::new();

fn keys(py: Python<'_>) -> &Keys {
    KEYS.get_or_init(py, || {
        let s = |text: &str| PyString::intern(py, text).unbind();
        Keys {
            board: s("board"),
            position: s("position"),
            lines: s("lines"),
            value: s("value"),
            source: s("source"),
            moves: s("moves"),
            line: s("line"),
            name: s("name"),
            boxes: s("boxes"),
            book: s(Source::Book.as_str()),
            search: s(Source::Search.as_str()),
        }
    })
}

/// `json.loads` of a JSON text of the crate's writers.
fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.get_or_try_init(py, || -> PyResult<_> {
        Ok(py.import("json")?.getattr("loads")?.unbind())
    })?;
    loads.bind(py).call1((text,))
}

/// The exception for a probe's error; `input` and `error` (the message `tb probe`
/// gives) as attributes, the store's failure kind of a table error, and the
/// bounds of a stopped search.
fn probe_exception(py: Python<'_>, e: &ProbeError, input: &str, index: Option<usize>) -> PyErr {
    let error = e.to_string();
    let message = match index {
        Some(i) => format!("positions[{i}] `{input}`: {error}"),
        None => format!("`{input}`: {error}"),
    };
    let exception = match e {
        ProbeError::Position(_) => PositionError::new_err(message),
        ProbeError::Table(_) => TableError::new_err(message),
        ProbeError::Stopped { .. } => SearchLimitError::new_err(message),
    };
    let set = || -> PyResult<()> {
        let value = exception.value(py);
        value.setattr("input", input)?;
        value.setattr("error", &error)?;
        if let Some(i) = index {
            value.setattr("index", i)?;
        }
        match e {
            ProbeError::Table(store) => value.setattr("kind", store.kind.as_str())?,
            ProbeError::Stopped { bounds, .. } => {
                value.setattr("lower", bounds.lower)?;
                value.setattr("upper", bounds.upper)?;
                value.setattr("nodes", bounds.nodes)?;
                value.setattr("reason", bounds.reason)?;
            }
            ProbeError::Position(_) => {}
        }
        Ok(())
    };
    match set() {
        Ok(()) => exception,
        Err(e) => e,
    }
}

/// A TableError for a failure to open or read a whole table (`tb.open`,
/// `Table.info`), with its kind when the store named one; a ValueError for an
/// argument that does not apply to the table.
fn table_exception(py: Python<'_>, error: &anyhow::Error) -> PyErr {
    if tb::games::read::NotApplicable::is(error) {
        return PyValueError::new_err(format!("{error:#}"));
    }
    let exception = TableError::new_err(format!("{error:#}"));
    if let Some(store) = tb::store::StoreError::find(error)
        && let Err(e) = exception.value(py).setattr("kind", store.kind.as_str())
    {
        return e;
    }
    exception
}

/// A new reference from the C API, or the Python error it raised.
fn owned<'py>(py: Python<'py>, ptr: *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `ptr` is a new reference (or null with an exception set), made with
    // the GIL held.
    unsafe { Bound::from_owned_ptr_or_err(py, ptr) }
}

/// What a Dots-and-Boxes answer's dict is made of. A move's dict is a copy of a
/// template with the same line, value and boxes (`{"line": 5, "name": "h1.1",
/// "value": -2, "boxes": 0}`, made on first use, never handed out): a copy of a
/// small dict costs less than building one. The answer's dict is a copy of a
/// template with the board, filled in (one without `moves` for `moves=False`).
struct DotsObjects {
    lines: usize,
    /// The lines' names.
    names: Vec<Py<PyString>>,
    /// Values in `-most..=most` have templates.
    most: i32,
    /// Per line, value (None, then `-most..=most`) and boxes (0..=2).
    moves: Vec<PyOnceLock<Py<PyDict>>>,
    answer: Py<PyDict>,
    value_answer: Py<PyDict>,
}

/// Boxes a move can complete.
const BOXES: usize = 3;

impl DotsObjects {
    fn new(py: Python<'_>, board: &Board) -> PyResult<DotsObjects> {
        let k = keys(py);
        let value_answer = PyDict::new(py);
        value_answer.set_item(k.board.bind(py), board.to_string())?;
        for key in [&k.position, &k.lines, &k.value, &k.source] {
            value_answer.set_item(key.bind(py), py.None())?;
        }
        let answer = value_answer.copy()?;
        answer.set_item(k.moves.bind(py), py.None())?;
        // Values are net boxes, at most every box plus the penalty.
        let most = (board.rows() * board.cols()) as i32 + tb::games::dots::spec::MAX_PENALTY;
        let slots = board.num_lines() * (2 * most as usize + 2) * BOXES;
        Ok(DotsObjects {
            lines: board.num_lines(),
            names: (0..board.num_lines())
                .map(|l| PyString::new(py, &board.line_name(l)).unbind())
                .collect(),
            most,
            moves: (0..slots).map(|_| PyOnceLock::new()).collect(),
            answer: answer.unbind(),
            value_answer: value_answer.unbind(),
        })
    }

    /// A new dict for a move (a copy of its template).
    fn move_dict<'py>(
        &self,
        py: Python<'py>,
        keys: &Keys,
        m: &MoveValue,
    ) -> PyResult<Bound<'py, PyAny>> {
        let make = || -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            d.set_item(keys.line.bind(py), m.line)?;
            d.set_item(keys.name.bind(py), self.names[m.line].bind(py))?;
            d.set_item(keys.value.bind(py), m.value)?;
            d.set_item(keys.boxes.bind(py), m.boxes)?;
            Ok(d)
        };
        let value = match m.value {
            None => Some(0),
            Some(v) if v.abs() <= self.most => Some((v + self.most) as usize + 1),
            Some(_) => None,
        };
        let (Some(value), true) = (value, (m.boxes as usize) < BOXES) else {
            // Never for answers of a valid table; still right.
            return Ok(make()?.into_any());
        };
        let slot = (m.line * (2 * self.most as usize + 2) + value) * BOXES + m.boxes as usize;
        let template = self.moves[slot].get_or_try_init(py, || Ok::<_, PyErr>(make()?.unbind()))?;
        // SAFETY: the GIL is held and the template is alive.
        owned(py, unsafe { ffi::PyDict_Copy(template.as_ptr()) })
    }

    /// The dict of `tb probe --json` for a Dots-and-Boxes answer (same fields, same
    /// order; the tests compare them with the CLI's); without `moves` for
    /// [`Detail::Value`].
    fn dict<'py>(
        &self,
        py: Python<'py>,
        keys: &Keys,
        probe: &Probe,
        detail: Detail,
    ) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY (every ffi call): the GIL is held; every pointer passed is a live
        // object (held by a Bound or a Py); PyList_SetItem steals the new
        // reference it gets, into a slot of a list of that length.
        let moves = match detail {
            Detail::Value => None,
            Detail::Moves | Detail::MovesUntied => {
                let moves = owned(py, unsafe {
                    ffi::PyList_New(probe.moves.len() as ffi::Py_ssize_t)
                })?;
                for (i, m) in probe.moves.iter().enumerate() {
                    let object = self.move_dict(py, keys, m)?;
                    unsafe {
                        ffi::PyList_SetItem(moves.as_ptr(), i as ffi::Py_ssize_t, object.into_ptr())
                    };
                }
                Some(moves)
            }
        };
        let mut bits = [b'0'; 64];
        for (i, b) in bits[..self.lines].iter_mut().enumerate() {
            if probe.position >> i & 1 == 1 {
                *b = b'1';
            }
        }
        let position = owned(py, unsafe {
            ffi::PyUnicode_FromStringAndSize(bits.as_ptr().cast(), self.lines as ffi::Py_ssize_t)
        })?;
        let lines = owned(py, unsafe {
            ffi::PyLong_FromLong(probe.position.count_ones() as _)
        })?;
        let value = owned(py, unsafe { ffi::PyLong_FromLong(probe.value as _) })?;
        let source = match probe.source {
            Source::Book => &keys.book,
            Source::Search => &keys.search,
        };
        let template = match moves {
            Some(_) => &self.answer,
            None => &self.value_answer,
        };
        let dict = owned(py, unsafe { ffi::PyDict_Copy(template.as_ptr()) })?;
        let fields = [
            (&keys.position, position.as_ptr()),
            (&keys.lines, lines.as_ptr()),
            (&keys.value, value.as_ptr()),
            (&keys.source, source.as_ptr()),
        ];
        let moves = moves.as_ref().map(|m| (&keys.moves, m.as_ptr()));
        for (key, item) in fields.into_iter().chain(moves) {
            if unsafe { ffi::PyDict_SetItem(dict.as_ptr(), key.as_ptr(), item) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(dict)
    }
}

/// Python's cyclic garbage collector paused while a batch's answers are made:
/// millions of new dicts would otherwise start collection after collection over
/// the growing result (3.11: 60% of the time). Collection resumes when dropped
/// (if it was on).
struct GcPause<'py> {
    _py: Python<'py>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>) -> GcPause<'py> {
        // SAFETY: called with the GIL held (the token proves it).
        let was_enabled = unsafe { pyo3::ffi::PyGC_Disable() } == 1;
        GcPause {
            _py: py,
            was_enabled,
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: the GIL is held while the pause (bound to its token) lives.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// Positions probed ahead on worker threads, chunk by chunk, and answered in
/// order: the thread holding the GIL turns answers into Python objects while the
/// workers probe the next chunks. The workers (one fewer than the cores, so that
/// the converting thread keeps a core: it is the slower side) live as long as
/// the batch or stream: no pool outlives them, so a process that forks finds no
/// half-copied pool in the child.
struct Ahead {
    table: Arc<CoreTable>,
    /// What each answer holds.
    detail: Detail,
    /// Most worker threads.
    workers: usize,
    /// Worker threads started.
    started: usize,
    /// Jobs for the workers (positions, where to send their answers).
    jobs: Sender<Job>,
    queue: Arc<Mutex<Receiver<Job>>>,
    /// Chunks in flight, oldest first: each comes back with its positions.
    in_flight: VecDeque<Receiver<Chunk>>,
    /// Positions read from the source so far.
    taken: usize,
    /// The size of the next chunk.
    next_chunk: usize,
    /// Whether the source is exhausted.
    exhausted: bool,
}

/// A position's answer, or why it has none.
type Probed = Result<Box<dyn Answer>, ProbeError>;

/// Positions and their answers.
type Answered = (Vec<String>, Vec<Probed>);

/// A chunk's positions and answers, or the panic of its job.
type Chunk = std::thread::Result<Answered>;

/// A chunk to probe and where its answers go.
type Job = (Vec<String>, SyncSender<Chunk>);

impl Ahead {
    /// Chunks of `table`'s positions, probed by at most `workers` threads.
    fn new(table: Arc<CoreTable>, workers: usize, detail: Detail) -> Ahead {
        let (jobs, queue) = channel();
        Ahead {
            table,
            detail,
            workers: workers.max(1),
            started: 0,
            jobs,
            queue: Arc::new(Mutex::new(queue)),
            in_flight: VecDeque::new(),
            taken: 0,
            // Doubled before each chunk is read.
            next_chunk: FIRST_CHUNK / 2,
            exhausted: false,
        }
    }

    /// Chunks in flight ahead of the conversion: enough that no worker waits.
    fn depth(&self) -> usize {
        2 * self.workers + 2
    }

    /// Starts the first chunk, read by the caller (a full one).
    fn start(&mut self, first: Vec<String>) -> PyResult<()> {
        self.taken = first.len();
        self.next_chunk = first.len();
        self.submit(first)
    }

    /// Reads chunks from `source` and starts them until enough are in flight or
    /// the source is exhausted.
    fn fill(&mut self, source: &Bound<'_, PyIterator>) -> PyResult<()> {
        while !self.exhausted && self.in_flight.len() < self.depth() {
            self.next_chunk = (self.next_chunk * 2).min(CHUNK);
            let chunk = take_strings(source, self.taken, self.next_chunk)?;
            self.exhausted = chunk.len() < self.next_chunk;
            self.taken += chunk.len();
            if !chunk.is_empty() {
                self.submit(chunk)?;
            }
        }
        Ok(())
    }

    /// Queues `inputs` for the workers, starting one if fewer than the most run.
    fn submit(&mut self, inputs: Vec<String>) -> PyResult<()> {
        if self.started < self.workers {
            let table = self.table.clone();
            let queue = self.queue.clone();
            let detail = self.detail;
            std::thread::Builder::new()
                .name("tb-probe".into())
                .spawn(move || work(&table, &queue, detail))
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
            self.started += 1;
        }
        let (send, receive) = sync_channel(1);
        self.jobs
            .send((inputs, send))
            .map_err(|_| PyException::new_err("the tb worker threads are gone"))?;
        self.in_flight.push_back(receive);
        Ok(())
    }

    /// The oldest chunk's positions and answers, waited for without the GIL;
    /// None when nothing is in flight.
    fn next(&mut self, py: Python<'_>) -> PyResult<Option<Answered>> {
        let Some(receive) = self.in_flight.pop_front() else {
            return Ok(None);
        };
        match py.detach(move || receive.recv()) {
            Ok(Ok(chunk)) => Ok(Some(chunk)),
            _ => Err(PyException::new_err("a tb worker thread failed")),
        }
    }
}

/// A worker: probes the queued chunks until the queue's sender is dropped.
fn work(table: &CoreTable, queue: &Mutex<Receiver<Job>>, detail: Detail) {
    loop {
        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((inputs, send)) = job else {
            return;
        };
        let answers =
            std::panic::catch_unwind(AssertUnwindSafe(|| table.probe_all(&inputs, detail)));
        // The receiver is gone when the caller stopped early.
        let _ = send.send(answers.map(|a| (inputs, a)));
    }
}

/// Up to `n` position strings from a Python iterator, copied.
fn take_strings(iterator: &Bound<'_, PyIterator>, first: usize, n: usize) -> PyResult<Vec<String>> {
    let mut out = Vec::with_capacity(n);
    for item in iterator.clone().take(n) {
        let item = item?;
        let text = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "positions[{}] is a {}, not a str",
                first + out.len(),
                item.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
        out.push(text.to_str()?.to_owned());
    }
    Ok(out)
}

/// What a batch's answers are: the keywords `errors`, `moves` and `tie_break` of
/// `probe_many` and `probe_iter`.
#[derive(Clone, Copy)]
struct Style {
    /// errors="return": error objects in place of positions without an answer
    /// (errors="raise", the default: the first one raises).
    keep_errors: bool,
    /// moves=True (default): every move's value too; tie_break=False: without
    /// Morris's tie-break.
    detail: Detail,
}

impl Style {
    fn new(errors: &str, moves: bool, tie_break: bool) -> PyResult<Style> {
        let keep_errors = match errors {
            "raise" => false,
            "return" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "errors must be \"raise\" or \"return\", not {other:?}"
                )));
            }
        };
        Ok(Style {
            keep_errors,
            detail: detail(moves, tie_break),
        })
    }
}

/// What an answer holds: `moves=True` (default) every move's value too, with
/// Morris's tie-break among moves of equal value unless `tie_break=False`.
fn detail(moves: bool, tie_break: bool) -> Detail {
    match (moves, tie_break) {
        (false, _) => Detail::Value,
        (true, true) => Detail::Moves,
        (true, false) => Detail::MovesUntied,
    }
}

/// An open tablebase (`tb.open`). Thread-safe: several Python threads may probe
/// at once (each probe borrows one of the table's readers, at most one per core).
/// A context manager: `with tb.open(path) as t:` closes the file at the end.
#[pyclass(frozen, name = "Table", module = "tb")]
struct Table {
    table: Arc<CoreTable>,
    /// What the quick dicts of Dots-and-Boxes answers are made of (made with the
    /// first such answer, from its board).
    dots: PyOnceLock<DotsObjects>,
    max_readers: usize,
}

impl Table {
    /// The Python object of an answer (without `moves` for [`Detail::Value`]).
    fn object<'py>(
        &self,
        py: Python<'py>,
        keys: &Keys,
        answer: &dyn Answer,
        detail: Detail,
    ) -> PyResult<Bound<'py, PyAny>> {
        // The quick path: a Dots-and-Boxes answer without loony flags (the quick
        // dicts have no `loony` fields).
        if let Some(dots) = answer.as_any().downcast_ref::<DotsAnswer>() {
            let probe = &dots.probe;
            if probe.loony.is_none() && probe.moves.iter().all(|m| m.loony.is_none()) {
                let objects = self
                    .dots
                    .get_or_try_init(py, || DotsObjects::new(py, &dots.board))?;
                return objects.dict(py, keys, probe, detail);
            }
        }
        let object = json_loads(py, &answer.json())?;
        if detail == Detail::Value && object.get_item(keys.moves.bind(py)).is_ok() {
            object.del_item(keys.moves.bind(py))?;
        }
        Ok(object)
    }

    /// The Python object of the answer to `input` (position `index` of a batch):
    /// an error raises, or becomes the error object of `tb probe --json` with
    /// errors="return"; without moves for moves=False.
    fn answer_object<'py>(
        &self,
        py: Python<'py>,
        keys: &Keys,
        (input, index): (&str, usize),
        answer: Probed,
        style: Style,
    ) -> PyResult<Bound<'py, PyAny>> {
        match answer {
            Ok(answer) => self.object(py, keys, answer.as_ref(), style.detail),
            Err(e) if style.keep_errors => json_loads(py, &e.json(input)),
            Err(e) => Err(probe_exception(py, &e, input, Some(index))),
        }
    }

    /// Worker threads of a batch: one fewer than the cores (the calling thread
    /// makes the dicts), at least one, at most one per reader.
    fn workers(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores - 1).clamp(1, self.max_readers)
    }
}

#[pymethods]
impl Table {
    /// The value of a position and of every legal move: a dict with the fields of
    /// `tb probe --json` (Dots-and-Boxes: board, position, lines, value, source,
    /// moves[line, name, value, boxes]; Morris: game, position, value, result,
    /// plies, source, moves[move, value, result, plies, opponent_errors,
    /// opponent_replies], the last two the tie-break among the best moves of a
    /// drawn or lost position, null on other moves). moves=False: the same dict without
    /// `moves`, the position's value only (one value read instead of one per
    /// move). tie_break=False (Morris): moves of equal value in the move
    /// generator's order and the two counts null, reading no opponent replies.
    /// Raises PositionError, TableError, or SearchLimitError (the search fallback
    /// stopped by its limits).
    #[pyo3(signature = (position, *, moves = true, tie_break = true))]
    fn probe<'py>(
        &self,
        py: Python<'py>,
        position: &str,
        moves: bool,
        tie_break: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let detail = detail(moves, tie_break);
        match py.detach(|| self.table.probe(position, detail)) {
            Ok(answer) => self.object(py, keys(py), answer.as_ref(), detail),
            Err(e) => Err(probe_exception(py, &e, position, None)),
        }
    }

    /// `probe` of each position of an iterable of strings, in order, as a list.
    /// errors="raise" (default): the first position (in order) without an answer
    /// raises as `probe` does, with its index as the attribute `index`;
    /// errors="return": it gets the error object of `tb probe --json` in its place,
    /// `{"input": ..., "error": ...}`. moves=False: values only, and
    /// tie_break=False, as in `probe`.
    /// The positions are probed in chunks on worker threads without the GIL while
    /// this thread makes the dicts (Python's cyclic garbage collector paused
    /// meanwhile).
    #[pyo3(signature = (positions, *, errors = "raise", moves = true, tie_break = true))]
    fn probe_many<'py>(
        &self,
        py: Python<'py>,
        positions: &Bound<'py, PyAny>,
        errors: &str,
        moves: bool,
        tie_break: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let style = Style::new(errors, moves, tie_break)?;
        let source = positions.try_iter()?;
        let keys = keys(py);
        let _pause = GcPause::new(py);
        let mut out = Vec::new();
        let first = take_strings(&source, 0, FIRST_CHUNK)?;
        if first.len() < FIRST_CHUNK {
            // A small batch: probed here, no hand-over.
            let answers = py.detach(|| self.table.probe_all(&first, style.detail));
            for (i, (input, answer)) in first.iter().zip(answers).enumerate() {
                out.push(self.answer_object(py, keys, (input, i), answer, style)?);
            }
            return PyList::new(py, out);
        }
        let mut ahead = Ahead::new(self.table.clone(), self.workers(), style.detail);
        ahead.start(first)?;
        loop {
            ahead.fill(&source)?;
            let Some((inputs, answers)) = ahead.next(py)? else {
                break;
            };
            for (input, answer) in inputs.iter().zip(answers) {
                let index = out.len();
                out.push(self.answer_object(py, keys, (input, index), answer, style)?);
            }
            py.check_signals()?;
        }
        PyList::new(py, out)
    }

    /// `probe_many` as an iterator: the answers one at a time, in order, while the
    /// worker threads probe the next chunks of positions (read from `positions`
    /// as needed, so it may be a generator or endless). Nothing is kept: a stream
    /// of answers used and dropped stays in the processor's caches, which a list
    /// of millions of dicts cannot.
    #[pyo3(signature = (positions, *, errors = "raise", moves = true, tie_break = true))]
    fn probe_iter(
        slf: &Bound<'_, Table>,
        positions: &Bound<'_, PyAny>,
        errors: &str,
        moves: bool,
        tie_break: bool,
    ) -> PyResult<Answers> {
        let style = Style::new(errors, moves, tie_break)?;
        let table = slf.get();
        Ok(Answers {
            table: slf.clone().unbind(),
            source: positions.try_iter()?.unbind(),
            style,
            state: Mutex::new(Stream {
                ahead: Ahead::new(table.table.clone(), table.workers(), style.detail),
                current: VecDeque::new(),
                index: 0,
            }),
        })
    }

    /// The dict of `tb info --json`.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match py.detach(|| self.table.info()) {
            Ok(report) => json_loads(py, &report.json.to_string()),
            Err(e) => Err(probe_exception(py, &e, "", None)),
        }
    }

    /// The game, as the file names it: `"dots-and-boxes"`, `"morris"` or
    /// `"qubic"`.
    #[getter]
    fn game(&self) -> &'static str {
        self.table.game()
    }

    /// The board (`"3x4"`) of a Dots-and-Boxes table, else None.
    #[getter]
    fn board(&self) -> Option<String> {
        self.table
            .field("board")
            .and_then(|b| b.as_str())
            .map(String::from)
    }

    /// The file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.table.path().to_path_buf()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.table.is_closed()
    }

    /// Closes the file (its SQLite connections and caches); probes after it raise
    /// TableError. Closing twice is harmless.
    fn close(&self) {
        self.table.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.table.close();
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.table.is_closed() {
            " closed"
        } else {
            ""
        };
        format!(
            "<tb.Table {} {}{state}>",
            self.game(),
            self.table.path().display()
        )
    }
}

/// The state of a `probe_iter` stream.
struct Stream {
    ahead: Ahead,
    /// The current chunk's inputs and answers not handed out yet.
    current: VecDeque<(String, Probed)>,
    /// Index of the next answer.
    index: usize,
}

/// The iterator of `Table.probe_iter`.
#[pyclass(frozen, name = "Answers", module = "tb")]
struct Answers {
    table: Py<Table>,
    /// The positions.
    source: Py<PyIterator>,
    style: Style,
    state: Mutex<Stream>,
}

#[pymethods]
impl Answers {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Never wait for the lock with the GIL held: another thread may be
        // waiting for the workers (without the GIL) under it.
        let Ok(mut state) = self.state.try_lock() else {
            return Err(PyRuntimeError::new_err(
                "this tb.Answers iterator is in use by another thread",
            ));
        };
        let state = &mut *state;
        if state.current.is_empty() {
            state.ahead.fill(self.source.bind(py))?;
            match state.ahead.next(py)? {
                Some((inputs, answers)) => state.current.extend(inputs.into_iter().zip(answers)),
                None => return Ok(None),
            }
        }
        let Some((input, answer)) = state.current.pop_front() else {
            return Ok(None);
        };
        let index = state.index;
        state.index += 1;
        let table = self.table.get();
        table
            .answer_object(py, keys(py), (&input, index), answer, self.style)
            .map(Some)
    }
}

/// Opens a table file of any game (Dots-and-Boxes, Morris, Qubic) read-only
/// (checked like any reader). Dots-and-Boxes positions past the stored layers are
/// searched if they have at most search_limit open lines (default 26 as in `tb
/// probe`; 0: never), each search bounded by max_nodes and time_limit (seconds;
/// default: none); these raise ValueError for a game without a search. readers
/// bounds how many probes run at once (default: one per core; each reader keeps
/// its own chunk cache). Raises TableError (with its `kind`) if the file cannot be
/// opened (a missing file too), is not a tablebase or is damaged. The table is a
/// context manager (`with tb.open(path) as t:`) and has `close()`.
#[pyfunction]
#[pyo3(signature = (path, *, search_limit = None, max_nodes = None, time_limit = None, readers = None))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    search_limit: Option<u32>,
    max_nodes: Option<u64>,
    time_limit: Option<f64>,
    readers: Option<usize>,
) -> PyResult<Table> {
    let options = ReadOptions {
        search_limit,
        max_nodes,
        time_limit: seconds("time_limit", time_limit)?,
    };
    let max_readers = match readers {
        Some(0) => return Err(PyValueError::new_err("readers must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let table = py
        .detach(|| {
            let name = default_name(&path)?;
            CoreTable::open_strict(&name, &path, options, max_readers)
        })
        .map_err(|e| table_exception(py, &e))?;
    Ok(Table {
        table: Arc::new(table),
        dots: PyOnceLock::new(),
        max_readers,
    })
}

/// A duration argument in seconds (`name` for the message).
fn seconds(name: &str, value: Option<f64>) -> PyResult<Option<Duration>> {
    value
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                PyValueError::new_err(format!("{name} must be a number of seconds >= 0, not {s}"))
            })
        })
        .transpose()
}

/// A transposition table size: bytes, or text such as "256MiB".
#[derive(FromPyObject)]
enum Size {
    Bytes(u64),
    Text(String),
}

/// The value of a Dots-and-Boxes position and of every move by search, no
/// database needed: the dict of `tb solve --json` (the probe fields plus nodes,
/// seconds, peak_rss_bytes, and pv with pv=True). position: 0/1 characters, a
/// move list or the text of a Wilson file (default: the start, `empty`,
/// `swedish`, `icelandic` or a position); penalty: the full board's value
/// (default: the Wilson file's, else 0); tt: the transposition table (bytes or
/// "256MiB"; default 64 MiB up to 24 open lines, 256 MiB up to 28, else 1 GiB).
/// max_nodes and time_limit (seconds) stop the search with SearchLimitError.
/// threads: search threads (default 1, the calling thread; more run lazy SMP as
/// `tb solve --threads N` does, and the node count then varies from run to run).
/// best: the value and one best move only, as `tb solve --best` (`moves` holds
/// that move; the other moves' values are not searched). losing_bounds: every
/// move, but one worse than the value gets an upper bound only, as `tb solve
/// --losing-bounds` (the dict's `upper_bounds` lists those moves). Chains a Wilson file
/// marks are analysed exactly (the plain game's values); wilson_chains=True plays
/// each as one pseudo-line, Wilson's approximation (the dict then says
/// `chain_rule: "wilson"` and `approximate: True`). store: a file of proven
/// positions to start from and add to, as `tb solve --store` (store_depth: how
/// many lines below the position it keeps, default 10); the dict's `store` says
/// what it gave and took.
/// The GIL is released while searching. Raises PositionError for a bad position
/// or start, ValueError for other bad arguments.
#[pyfunction]
#[pyo3(signature = (board, position = None, *, start = "empty", penalty = None, tt = None, max_nodes = None, time_limit = None, pv = false, best = false, losing_bounds = false, threads = 1, wilson_chains = false, store = None, store_depth = None))]
#[allow(clippy::too_many_arguments)]
fn solve<'py>(
    py: Python<'py>,
    board: &str,
    position: Option<&str>,
    start: &str,
    penalty: Option<i32>,
    tt: Option<Size>,
    max_nodes: Option<u64>,
    time_limit: Option<f64>,
    pv: bool,
    best: bool,
    losing_bounds: bool,
    threads: usize,
    wilson_chains: bool,
    store: Option<std::path::PathBuf>,
    store_depth: Option<u32>,
) -> PyResult<Bound<'py, PyAny>> {
    let board: Board = board.parse().map_err(|e: BoardError| {
        PyValueError::new_err(format!(
            "{e} (tb.solve searches Dots-and-Boxes boards; other games are probed from their tables)"
        ))
    })?;
    let limits = tb::games::dots::search::Limits {
        max_nodes,
        time_limit: seconds("time_limit", time_limit)?,
    };
    let mut request = SolveRequest::new(&board, position, notation::parse_position, start, penalty)
        .map_err(|e| {
            let message = format!("{e:#}");
            if e.chain().any(|c| c.is::<NotationError>()) {
                PositionError::new_err(message)
            } else {
                PyValueError::new_err(message)
            }
        })?;
    request.pv = pv;
    request.best_only = best;
    request.losing_bounds = losing_bounds;
    request.chain_rule = tb::games::dots::chains::ChainRule::asked(wilson_chains);
    request.threads = tb::sys::check_threads("threads", threads)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    match tt {
        Some(Size::Bytes(bytes)) => request.tt_bytes = bytes,
        Some(Size::Text(text)) => {
            request.tt_bytes = tb::units::parse_memory("tt", &text)
                .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        }
        None => {}
    }
    if let Some(path) = store {
        request.store = Some(path);
    }
    if let Some(depth) = store_depth {
        request.store_depth = depth;
    }
    let run = py
        .detach(|| request.run(board, limits, None))
        .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    let seconds = run.seconds;
    match run.outcome {
        Ok(result) => {
            let answer = Probe::from_search(request.lines, &result);
            json_loads(
                py,
                &output::solve_json(&board, &answer, &result, seconds, &request, run.store),
            )
        }
        Err(stopped) => {
            let info = json_loads(
                py,
                &output::stopped_json(&board, request.lines, &stopped, seconds, run.store),
            )?;
            let exception = SearchLimitError::new_err(stopped.to_string());
            let value = exception.value(py);
            value.setattr("lower", stopped.lower)?;
            value.setattr("upper", stopped.upper)?;
            value.setattr("nodes", stopped.nodes)?;
            value.setattr("reason", stopped.reason)?;
            value.setattr("info", info)?;
            Err(exception)
        }
    }
}

/// Probe tb tables (Dots-and-Boxes, Nine Men's Morris, Qubic) and run the
/// Dots-and-Boxes search solver: `tb.open(path).probe(position)`,
/// `.probe_many(positions)`, `.info()`, `tb.solve(board, position)`. Answers are
/// dicts with the fields of the CLI's JSON.
#[pymodule(name = "tb")]
mod tb_module {
    use pyo3::prelude::*;

    #[pymodule_export]
    use super::dask::dask_module;
    #[pymodule_export]
    use super::{Answers, Error, PositionError, SearchLimitError, Table, TableError, open, solve};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
