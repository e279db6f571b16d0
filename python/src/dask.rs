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
#[pyo3(signature = (game, db, *, memory, start = None, penalty = None, book_lines = None, groups = None, chunk = None, symmetry = None, corners = None, loony = false, stones = None, phase = None))]
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
) -> PyResult<String> {
    let rows = py.detach(|| -> anyhow::Result<Vec<(&'static str, String)>> {
        if game == "morris" {
            let phase = match phase.as_deref() {
                None | Some("moving") => Phase::Moving,
                Some("all") => Phase::All,
                Some(other) => anyhow::bail!("--phase must be moving or all, not {other}"),
            };
            let chunk = chunk.unwrap_or_else(|| tb::games::morris::build::chunk_for(&db));
            let spec = MorrisSpec::new(stones.unwrap_or(9), chunk, phase)?;
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
#[pyfunction]
#[pyo3(signature = (identity, shared, layer, key, threads = 1))]
fn run_block(
    py: Python<'_>,
    identity: &str,
    shared: PathBuf,
    layer: usize,
    key: Vec<u8>,
    threads: usize,
) -> PyResult<String> {
    let identity = parse_identity(identity)?;
    let pool = pool(threads)?;
    let report = py.detach(|| -> anyhow::Result<String> {
        let kernel = tb::games::kernel_of_identity(&identity)?;
        let dir = ShardDir::new(&shared, kernel.format());
        let id = BlockId { layer, key };
        let report = pool.install(|| distributed::run_block(kernel, &dir, &id))?;
        Ok(serde_json::to_string(&report)?)
    });
    report.map_err(|e| build_error(py, &e))
}

/// The coordinator of a distributed build over its `.tb` file (locked while open):
/// `tasks()`, `record(layer, key)`, `finish()`; `close()` releases the file.
#[pyclass(frozen, name = "Coordinator", module = "tb.dask")]
struct Coordinator {
    inner: Mutex<Option<CoreCoordinator<'static>>>,
}

impl Coordinator {
    /// Runs `f` on the open coordinator, without the GIL.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut CoreCoordinator<'static>) -> anyhow::Result<T> + Send,
    ) -> PyResult<T> {
        let result = py.detach(|| {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match inner.as_mut() {
                Some(coordinator) => f(coordinator),
                None => Err(anyhow::anyhow!("the coordinator is closed")),
            }
        });
        result.map_err(|e| build_error(py, &e))
    }
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
            inner: Mutex::new(Some(coordinator)),
        })
    }

    /// The blocks not recorded yet, in build order (JSON array text of objects:
    /// layer, key, key_text, positions, reads, input_bytes, order).
    fn tasks(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |c| Ok(serde_json::to_string(&c.tasks())?))
    }

    /// Records a block whose shard its task wrote (JSON object text: deleted
    /// shards, layers published, shard bytes).
    fn record(&self, py: Python<'_>, layer: usize, key: Vec<u8>) -> PyResult<String> {
        self.with(py, |c| {
            Ok(serde_json::to_string(&c.record(&BlockId { layer, key })?)?)
        })
    }

    /// Whether every block is recorded.
    fn is_done(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |c| Ok(c.is_done()))
    }

    /// Blocks recorded when the file was opened (but those forgotten then).
    fn resumed_blocks(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |c| Ok(c.resumed_blocks()))
    }

    /// Recorded blocks whose shards were damaged or missing when the file was
    /// opened, to be computed again: a list of (layer, key).
    fn forgotten<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let forgotten = self.with(py, |c| Ok(c.forgotten().to_vec()))?;
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
        self.with(py, |c| Ok(c.shard_dir().root().to_path_buf()))
    }

    /// Ends the finished build (shards deleted, file compacted) and releases the
    /// file: JSON object text with positions, bytes and layer digests.
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        let result = py.detach(|| -> anyhow::Result<String> {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let coordinator = inner
                .take()
                .ok_or_else(|| anyhow::anyhow!("the coordinator is closed"))?;
            if !coordinator.is_done() {
                *inner = Some(coordinator);
                anyhow::bail!("the build is not finished: blocks are left to record");
            }
            Ok(serde_json::to_string(&coordinator.finish()?)?)
        });
        result.map_err(|e| build_error(py, &e))
    }

    /// Releases the file (and its build lock) without finishing.
    fn close(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// The submodule `tb.tb._dask` (its Python face is `tb.dask`).
#[pymodule(name = "_dask")]
pub mod dask_module {
    #[pymodule_export]
    use super::{BuildError, Coordinator, ShardError, build_identity, run_block};
}
