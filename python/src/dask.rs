//! The Rust side of distributed builds (`python -m tb.dask`, docs/FORMAT.md §9.12),
//! as the extension's submodule `_dask`: what the driver (python/pysrc/tb/dask.py)
//! calls on the coordinator (the build's identity, the [`Coordinator`] over the
//! `.tb` file) and what each Dask task calls on a worker ([`run_block`]). Only
//! small things cross: identity rows, block keys, paths, and JSON reports.
//!
//! The GIL is released while a block is computed and while the coordinator reads
//! or writes the file.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tb::games::dots::board::Board;
use tb::games::dots::build::BuildRequest;
use tb::games::morris::build::{MorrisSpec, Phase};
use tb::games::morris::variant::Rules;
use tb::games::qubic::position::Position as QubicPosition;
use tb::games::qubic::tasks as qubic_tasks;
use tb::retro::BlockId;
use tb::retro::distributed::{self, Coordinator as CoreCoordinator};
use tb::retro::shard::{ShardDir, ShardError as CoreShardError};

create_exception!(
    tb,
    BuildError,
    super::Error,
    "A distributed build that cannot go on: a bad option, a file built with other parameters, another builder on the file, a block that cannot be computed."
);
create_exception!(
    tb,
    ShardError,
    BuildError,
    "A shard a block task reads is missing or damaged. Attributes: layer, key (the block it holds), kind (`missing` or `damaged`), path."
);

/// A build error as a Python exception: [`ShardError`] when a shard is the cause.
fn build_error(py: Python<'_>, error: &anyhow::Error) -> PyErr {
    let message = format!("{error:#}");
    let Some(shard) = error
        .chain()
        .find_map(|e| e.downcast_ref::<CoreShardError>())
    else {
        return BuildError::new_err(message);
    };
    let exception = ShardError::new_err(message);
    let value = exception.value(py);
    let kind = match shard.kind {
        tb::retro::shard::ShardErrorKind::Missing => "missing",
        tb::retro::shard::ShardErrorKind::Damaged => "damaged",
    };
    let set = value
        .setattr("layer", shard.block.layer)
        .and_then(|()| value.setattr("key", shard.block.key.clone()))
        .and_then(|()| value.setattr("kind", kind))
        .and_then(|()| value.setattr("path", shard.path.clone()));
    match set {
        Ok(()) => exception,
        Err(e) => e,
    }
}

/// Identity rows from their JSON object text.
fn parse_identity(identity: &str) -> PyResult<BTreeMap<String, String>> {
    serde_json::from_str(identity).map_err(|e| {
        PyValueError::new_err(format!("identity is not a JSON object of strings: {e}"))
    })
}

/// The identity rows (a JSON object) of the build the options ask for, as `tb
/// build GAME OPTIONS --db DB` would build it: `game` is `RxC` (Dots-and-Boxes)
/// or `morris`; `memory` is the budget in bytes the groups are chosen for.
#[pyfunction]
#[pyo3(signature = (game, db, *, memory, start = None, penalty = None, book_lines = None, groups = None, chunk = None, symmetry = None, corners = None, loony = false, stones = None, phase = None, rules = None))]
#[allow(clippy::too_many_arguments)]
fn build_identity(
    py: Python<'_>,
    game: &str,
    db: PathBuf,
    memory: u64,
    start: Option<String>,
    penalty: Option<i32>,
    book_lines: Option<usize>,
    groups: Option<String>,
    chunk: Option<u64>,
    symmetry: Option<bool>,
    corners: Option<bool>,
    loony: bool,
    stones: Option<u8>,
    phase: Option<String>,
    rules: Option<String>,
) -> PyResult<String> {
    let rows = py.detach(|| -> anyhow::Result<Vec<(&'static str, String)>> {
        if game == "morris" {
            let phase = match phase.as_deref() {
                None | Some("moving") => Phase::Moving,
                Some("all") => Phase::All,
                Some(other) => anyhow::bail!("--phase must be moving or all, not {other}"),
            };
            let chunk = chunk.unwrap_or_else(|| tb::games::morris::build::chunk_for(&db));
            let rules: Rules = rules.as_deref().map(str::parse).transpose()?.unwrap_or_default();
            let spec = MorrisSpec::with_rules(rules, stones.unwrap_or(rules.stones()), chunk, phase)?;
            let (_, peak) = tb::games::morris::build::memory_needs(&spec);
            if peak > memory {
                anyhow::bail!(
                    "the largest table pair needs about {} but --memory is {}; raise --memory or lower --stones",
                    tb::units::human_bytes(peak),
                    tb::units::human_bytes(memory)
                );
            }
            return Ok(spec.to_meta());
        }
        let board: Board = game.parse().map_err(|e| {
            anyhow::anyhow!("{e}: the game is a board RxC (Dots-and-Boxes) or morris")
        })?;
        let request = BuildRequest {
            board,
            start: start.unwrap_or_else(|| "empty".to_string()),
            penalty,
            book_lines,
            memory,
            groups,
            chunk: chunk.unwrap_or(tb::games::dots::spec::DEFAULT_CHUNK_POSITIONS),
            symmetry,
            corners,
            loony,
            chain_rule: Default::default(),
        };
        Ok(request.spec_to_build(&db)?.to_meta())
    });
    let rows = rows.map_err(|e| build_error(py, &e))?;
    let map: BTreeMap<&str, String> = rows.into_iter().collect();
    Ok(serde_json::to_string(&map).expect("strings serialise"))
}

/// A rayon pool of `threads` threads, made once per size and process.
fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = pools.get(&threads) {
        return Ok(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| BuildError::new_err(format!("cannot start worker threads: {e}")))?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Ok(pool)
}

/// Runs one block task on `threads` threads: nothing when the block's shard under
/// `shared` is whole, else reads its inputs' shards, computes it and writes its
/// shard. Returns the task's report (JSON object text: outcome `computed`,
/// `reused` or `recomputed`, positions, bytes, seconds by phase).
///
/// `input_cache`: bytes of decoded input blocks this worker process keeps for its
/// next tasks (0: none).
#[pyfunction]
#[pyo3(signature = (identity, shared, layer, key, threads = 1, input_cache = 0))]
fn run_block(
    py: Python<'_>,
    identity: &str,
    shared: PathBuf,
    layer: usize,
    key: Vec<u8>,
    threads: usize,
    input_cache: u64,
) -> PyResult<String> {
    let identity = parse_identity(identity)?;
    let pool = pool(threads)?;
    let report = py.detach(|| -> anyhow::Result<String> {
        distributed::set_input_cache_bytes(input_cache);
        let kernel = tb::games::kernel_of_identity(&identity)?;
        let dir = ShardDir::new(&shared, kernel.format());
        let id = BlockId { layer, key };
        let report = pool.install(|| distributed::run_block(kernel, &dir, &id))?;
        Ok(serde_json::to_string(&report)?)
    });
    report.map_err(|e| build_error(py, &e))
}

/// A coordinator held by a Python object: open until finished or closed.
struct Held<T>(Mutex<Option<T>>);

impl<T: Send> Held<T> {
    fn new(value: T) -> Held<T> {
        Held(Mutex::new(Some(value)))
    }

    /// Runs `f` on the open coordinator, without the GIL.
    fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut T) -> anyhow::Result<R> + Send,
    ) -> PyResult<R> {
        let result = py.detach(|| {
            let mut inner = self.0.lock().unwrap_or_else(|e| e.into_inner());
            match inner.as_mut() {
                Some(coordinator) => f(coordinator),
                None => Err(anyhow::anyhow!("the coordinator is closed")),
            }
        });
        result.map_err(|e| build_error(py, &e))
    }

    /// Takes the coordinator out to finish it (`done`: whether it may finish),
    /// without the GIL; a coordinator not done stays open.
    fn finish<R: Send>(
        &self,
        py: Python<'_>,
        done: impl FnOnce(&T) -> bool + Send,
        finish: impl FnOnce(T) -> anyhow::Result<R> + Send,
    ) -> PyResult<R> {
        let result = py.detach(|| -> anyhow::Result<R> {
            let mut inner = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let coordinator = inner
                .take()
                .ok_or_else(|| anyhow::anyhow!("the coordinator is closed"))?;
            if !done(&coordinator) {
                *inner = Some(coordinator);
                anyhow::bail!("the build is not finished: some of its work is not recorded yet");
            }
            finish(coordinator)
        });
        result.map_err(|e| build_error(py, &e))
    }

    /// Releases the file (and its build lock).
    fn close(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// The coordinator of a distributed build over its `.tb` file (locked while open):
/// `tasks()`, `record(layer, key)`, `finish()`; `close()` releases the file.
#[pyclass(frozen, name = "Coordinator", module = "tb.dask")]
struct Coordinator {
    inner: Held<CoreCoordinator<'static>>,
}

#[pymethods]
impl Coordinator {
    /// Opens (or creates) `db` for the build `identity` names (JSON object text),
    /// its shards under `shared`; resumes what earlier runs recorded.
    #[new]
    fn new(py: Python<'_>, db: PathBuf, identity: &str, shared: PathBuf) -> PyResult<Coordinator> {
        let identity = parse_identity(identity)?;
        let opened = py.detach(|| -> anyhow::Result<CoreCoordinator<'static>> {
            let kernel = tb::games::kernel_of_identity(&identity)?;
            CoreCoordinator::open(&db, kernel, &shared)
        });
        let coordinator = opened.map_err(|e| build_error(py, &e))?;
        Ok(Coordinator {
            inner: Held::new(coordinator),
        })
    }

    /// The blocks not recorded yet, in build order (JSON array text of objects:
    /// layer, key, key_text, positions, reads, input_bytes, order).
    fn tasks(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .with(py, |c| Ok(serde_json::to_string(&c.tasks())?))
    }

    /// Records several blocks whose tasks wrote their shards, in one transaction
    /// of the file (a list of (layer, key)); returns a JSON array with what
    /// recording each did (deleted shards, layers published, shard bytes), in the
    /// order given.
    fn record_many(&self, py: Python<'_>, blocks: Vec<(usize, Vec<u8>)>) -> PyResult<String> {
        let ids: Vec<BlockId> = blocks
            .into_iter()
            .map(|(layer, key)| BlockId { layer, key })
            .collect();
        self.inner
            .with(py, |c| Ok(serde_json::to_string(&c.record_many(&ids)?)?))
    }

    /// Whether every block is recorded.
    fn is_done(&self, py: Python<'_>) -> PyResult<bool> {
        self.inner.with(py, |c| Ok(c.is_done()))
    }

    /// Blocks recorded when the file was opened (but those forgotten then).
    fn resumed_blocks(&self, py: Python<'_>) -> PyResult<usize> {
        self.inner.with(py, |c| Ok(c.resumed_blocks()))
    }

    /// Recorded blocks whose shards were damaged or missing when the file was
    /// opened, to be computed again: a list of (layer, key).
    fn forgotten<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let forgotten = self.inner.with(py, |c| Ok(c.forgotten().to_vec()))?;
        let items: Vec<Bound<'py, PyTuple>> = forgotten
            .into_iter()
            .map(|b| {
                PyTuple::new(
                    py,
                    [
                        b.layer.into_pyobject(py)?.into_any(),
                        b.key.into_pyobject(py)?,
                    ],
                )
            })
            .collect::<PyResult<_>>()?;
        Ok(pyo3::types::PyList::new(py, items)?.into_any())
    }

    /// The build's shard directory (under the shared directory).
    fn shard_root(&self, py: Python<'_>) -> PyResult<PathBuf> {
        self.inner
            .with(py, |c| Ok(c.shard_dir().root().to_path_buf()))
    }

    /// Ends the finished build (shards deleted, file compacted) and releases the
    /// file: JSON object text with positions, bytes and layer digests.
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        self.inner.finish(py, CoreCoordinator::is_done, |c| {
            Ok(serde_json::to_string(&c.finish()?)?)
        })
    }

    /// Releases the file (and its build lock) without finishing.
    fn close(&self) {
        self.inner.close();
    }
}

/// The start (64 characters ./X/O) of the Qubic strategy build `tb build qubic
/// [--first CELL | --start POSITION]` would build, and its default file name.
#[pyfunction]
#[pyo3(signature = (first = None, start = None))]
fn qubic_start(first: Option<u8>, start: Option<String>) -> PyResult<(String, String)> {
    let (position, name) = tb::games::qubic::build::start_of(first, start.as_deref())
        .map_err(|e| BuildError::new_err(format!("{e:#}")))?;
    Ok((position.to_string(), name))
}

/// Parses a Qubic start given as 64 characters.
fn qubic_position(start: &str) -> PyResult<QubicPosition> {
    QubicPosition::parse(start).map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// Runs the Qubic task of O's reply `reply` to `start`: nothing when its shard under
/// `shared` is whole, else proves it with `memory` bytes of tables, shrinks the
/// strategy (`shrink`) and writes the shard. Returns the task's report (JSON object
/// text: reply, outcome, positions, moves, expansions, shard_bytes, seconds).
#[pyfunction]
#[pyo3(signature = (start, shared, reply, memory, shrink = 3))]
fn run_qubic_reply(
    py: Python<'_>,
    start: &str,
    shared: PathBuf,
    reply: u8,
    memory: u64,
    shrink: u32,
) -> PyResult<String> {
    let start = qubic_position(start)?;
    let report = py.detach(|| -> anyhow::Result<String> {
        let dir = qubic_tasks::shard_dir(&shared, start);
        let report = qubic_tasks::run_reply(start, reply, memory, shrink, &dir, &mut |_| {})?;
        Ok(serde_json::to_string(&report)?)
    });
    report.map_err(|e| build_error(py, &e))
}

/// The coordinator of a distributed Qubic strategy build over its `.tb` file
/// (locked while open): `tasks()`, `record(reply)`, `finish()`; `close()`
/// releases the file.
#[pyclass(frozen, name = "QubicCoordinator", module = "tb.dask")]
struct QubicCoordinator {
    inner: Held<qubic_tasks::Coordinator>,
}

#[pymethods]
impl QubicCoordinator {
    /// Opens (or creates) `db` for a strategy from `start` (64 characters), its
    /// shards under `shared`; resumes the replies earlier runs stored.
    #[new]
    fn new(
        py: Python<'_>,
        db: PathBuf,
        start: &str,
        shared: PathBuf,
    ) -> PyResult<QubicCoordinator> {
        let start = qubic_position(start)?;
        let opened = py.detach(|| qubic_tasks::Coordinator::open(&db, start, &shared));
        let coordinator = opened.map_err(|e| build_error(py, &e))?;
        Ok(QubicCoordinator {
            inner: Held::new(coordinator),
        })
    }

    /// The replies not stored yet (JSON array text of objects: reply, index, total).
    fn tasks(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .with(py, |c| Ok(serde_json::to_string(&c.tasks())?))
    }

    /// Stores a reply whose task wrote its shard (JSON object text: the reply's
    /// outcome, with its positions and strategic moves).
    fn record(&self, py: Python<'_>, reply: u8) -> PyResult<String> {
        self.inner
            .with(py, |c| Ok(serde_json::to_string(&c.record(reply)?)?))
    }

    /// Replies stored when the file was opened.
    fn resumed_replies(&self, py: Python<'_>) -> PyResult<usize> {
        self.inner.with(py, |c| Ok(c.resumed_replies()))
    }

    /// The build's shard directory (under the shared directory).
    fn shard_root(&self, py: Python<'_>) -> PyResult<PathBuf> {
        self.inner
            .with(py, |c| Ok(c.shard_dir().root().to_path_buf()))
    }

    /// Ends the build whose every reply is stored and releases the file: the
    /// build summary as `tb build qubic --json` prints it (JSON object text).
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .finish(py, qubic_tasks::Coordinator::is_done, |c| {
                Ok(serde_json::to_string(&c.finish()?)?)
            })
    }

    /// Releases the file (and its build lock) without finishing.
    fn close(&self) {
        self.inner.close();
    }
}

/// The names of the Morris rule sets (`--rules`), the default first.
#[pyfunction]
fn morris_rules() -> Vec<&'static str> {
    Rules::ALL.map(Rules::name).to_vec()
}

/// The memory budget `tb build` takes for `game` (`dots`, `morris` or `qubic`)
/// without `--memory`: the game's default, at most 3/4 of this machine's memory.
#[pyfunction]
fn default_memory(game: &str) -> PyResult<u64> {
    let preferred = match game {
        "dots" => tb::games::dots::build::DEFAULT_MEMORY,
        "morris" => tb::games::morris::build::DEFAULT_MEMORY,
        "qubic" => tb::games::qubic::build::DEFAULT_MEMORY,
        other => return Err(PyValueError::new_err(format!("no game {other:?}"))),
    };
    Ok(tb::sys::default_memory(preferred))
}

/// The submodule `tb.tb._dask` (its Python face is `tb.dask`).
#[pymodule(name = "_dask")]
pub mod dask_module {
    #[pymodule_export]
    use super::{
        BuildError, Coordinator, QubicCoordinator, ShardError, build_identity, default_memory,
        morris_rules, qubic_start, run_block, run_qubic_reply,
    };
}
