//! The scheduler: builds a [`Kernel`]'s layers in order, block by block, each block
//! stored (with the blocks no remaining block reads deleted, and its layer published
//! when it is the last) in one transaction, so a killed build resumes where it
//! stopped and produces the same values.

use super::cache::BlockCache;
use super::chunks::{encode_block, load_block};
use super::format::{BlockId, Format};
use super::kernel::Kernel;
use super::progress::Progress;
use super::writer::{BlockWrite, BlockWriter};
use crate::store::{BlockStats, LayerFinish, LayerRow, LayerStatus, Store, counts_key};
use crate::units::human_bytes;
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a finished run of the scheduler reports (the game adds its own fields).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    /// The database file.
    pub db: PathBuf,
    /// Positions computed in this run.
    pub computed_positions: u64,
    /// Positions stored for the whole tablebase (every layer).
    pub total_positions: u64,
    /// Blocks skipped because an earlier run stored them.
    pub resumed_blocks: usize,
    /// Wall time of this run.
    pub seconds: f64,
    /// Seconds spent on the layers over every run (resumed builds included).
    pub build_seconds: f64,
    /// Largest size the file reached during the build (disk needed).
    pub peak_file_bytes: u64,
    /// Size of the file at the end.
    pub file_bytes: u64,
    /// Compressed bytes written over all layers (before pruning).
    pub stored_bytes: u64,
    /// Peak resident memory of the process, where the OS reports it.
    pub peak_rss_bytes: Option<u64>,
    /// Where this run's time went.
    pub phases: PhaseSeconds,
}

/// Seconds of a run by phase: on the scheduler's thread (loading blocks that were
/// not in memory, the kernel, encoding chunks, waiting for the writer), and on the
/// writer thread (SQLite writes, overlapping the next block's work).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PhaseSeconds {
    /// Reading and decoding input blocks from the file.
    pub load: f64,
    /// Computing blocks.
    pub kernel: f64,
    /// Checksums, histograms, digests and chunk compression.
    pub encode: f64,
    /// Block writes (on the writer thread).
    pub write: f64,
    /// The scheduler waiting for a write to finish.
    pub write_wait: f64,
}

impl RunSummary {
    /// Positions computed per second of wall time in this run.
    pub fn positions_per_second(&self) -> f64 {
        self.computed_positions as f64 / self.seconds.max(1e-9)
    }

    /// Stored bits per position over all layers.
    pub fn bits_per_position(&self) -> f64 {
        self.stored_bytes as f64 * 8.0 / self.total_positions.max(1) as f64
    }

    /// The run in words, for the end of a build's summary line (`blocks` names what
    /// the game's blocks are).
    pub fn text(&self, blocks: &str) -> String {
        format!(
            "{} positions ({} computed now, {} {blocks} resumed) in {:.2} s, {:.1} M positions/s; stored {:.3} bits/position over all layers; file {}; peak RSS {}",
            self.total_positions,
            self.computed_positions,
            self.resumed_blocks,
            self.seconds,
            self.positions_per_second() / 1e6,
            self.bits_per_position(),
            human_bytes(self.file_bytes),
            self.peak_rss_bytes
                .map_or("unknown".to_string(), human_bytes)
        )
    }
}

/// Holds an exclusive lock on `<db>.lock` for the lifetime of a build; the lock
/// file is removed when the build ends (a killed build leaves it, harmlessly:
/// the next build takes it over).
pub struct BuildLock {
    file: File,
    path: PathBuf,
}

impl BuildLock {
    /// Takes the lock or fails at once if another builder holds it.
    pub fn acquire(db: &Path) -> Result<BuildLock> {
        let path = lock_path(db);
        loop {
            let file = File::create(&path)
                .with_context(|| format!("cannot create lock file {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    bail!(
                        "another `tb build` is already writing {} (lock {} is held)",
                        db.display(),
                        path.display()
                    )
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).context(format!("cannot lock {}", path.display()));
                }
            }
            // A builder that was ending may have removed the file between our
            // create and lock: then we hold a lock nobody else can see, so take
            // the lock of the file now at the path instead.
            if same_inode(&file, &path) {
                return Ok(BuildLock { file, path });
            }
        }
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        // Removed while still locked, so that no other builder can have locked
        // this file meanwhile (see `acquire`); the lock goes with the handle.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether the open `file` is the file at `path`.
fn same_inode(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The lock file of a database: `<db>.lock`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// A tablebase file opened for building: locked, schema up to date.
pub struct Builder {
    _lock: BuildLock,
    store: Store,
    db: PathBuf,
}

/// How the scheduler runs.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Worker threads.
    pub threads: usize,
    /// Bytes of finished blocks kept in memory for the blocks that read them (the
    /// game's build policy decides how much of its budget that is).
    pub cache_bytes: u64,
}

impl Builder {
    /// Takes the build lock and opens (or creates) the file for a game whose chunks
    /// hold `chunk_positions` values.
    pub fn open(db: &Path, chunk_positions: u64) -> Result<Builder> {
        crate::store::check_file_path(db)?;
        let lock = BuildLock::acquire(db)?;
        let store = Store::open_for_build(db, chunk_positions)?;
        Ok(Builder {
            _lock: lock,
            store,
            db: db.to_path_buf(),
        })
    }

    /// The file's metadata (empty for a new file).
    pub fn meta(&self) -> Result<BTreeMap<String, String>> {
        self.store.meta()
    }

    /// Writes metadata rows (a game normalising an older file's identity before
    /// [`Builder::run`] compares it).
    pub fn set_meta(&mut self, entries: &[(&str, String)]) -> Result<()> {
        self.store.set_meta(entries)
    }

    /// The store (to read results after [`Builder::run`]).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, to write (the distributed coordinator records blocks itself).
    pub(crate) fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The database file.
    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Builds (or resumes) every layer of `kernel`'s format, then compacts the file.
    pub fn run(
        &mut self,
        kernel: &dyn Kernel,
        opts: RunOptions,
        progress: &mut dyn Progress,
    ) -> Result<RunSummary> {
        let started = Instant::now();
        adopt_or_check_identity(&mut self.store, &self.db, kernel.format())?;
        self.store.set_meta(&[
            ("tool_version", env!("CARGO_PKG_VERSION").to_string()),
            ("build_threads", opts.threads.to_string()),
            ("build_cache_bytes", opts.cache_bytes.to_string()),
        ])?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .context("cannot start worker threads")?;
        let mut phases = PhaseSeconds::default();
        let (computed_positions, total_positions, resumed_blocks, peak_file_bytes) =
            pool.install(|| {
                Schedule::new(kernel).run(&mut self.store, opts.cache_bytes, progress, &mut phases)
            })?;
        self.store.compact()?;
        let layer_rows = self.store.layers()?;
        Ok(RunSummary {
            db: self.db.clone(),
            computed_positions,
            total_positions,
            resumed_blocks,
            seconds: started.elapsed().as_secs_f64(),
            build_seconds: layer_rows.values().map(|r| r.seconds).sum(),
            peak_file_bytes,
            file_bytes: self.store.file_bytes()?,
            stored_bytes: layer_rows.values().map(|r| r.bytes).sum(),
            peak_rss_bytes: crate::sys::peak_rss_bytes(),
            phases,
        })
    }
}

/// The blocks of `format` already built in `store`, those a resumed build skips (the
/// rule a build's run follows): every block of a layer past building, and the
/// finished blocks of a layer being built.
pub fn built_blocks(store: &Store, format: &dyn Format) -> Result<HashSet<BlockId>> {
    let rows = store.layers()?;
    let mut built = HashSet::new();
    for layer in format.layers() {
        let Some(row) = rows.get(&layer) else {
            continue;
        };
        let finished = match row.status {
            LayerStatus::Building => store.finished_blocks(layer)?,
            _ => BTreeMap::new(),
        };
        for key in format.blocks(layer) {
            if row.status != LayerStatus::Building || finished.contains_key(&counts_key(&key)) {
                built.insert(BlockId { layer, key });
            }
        }
    }
    Ok(built)
}

/// Writes the identity into a new file, or checks that an existing file was built
/// with the same identity.
pub(crate) fn adopt_or_check_identity(
    store: &mut Store,
    db: &Path,
    format: &dyn Format,
) -> Result<()> {
    let meta = store.meta()?;
    let identity = format.identity();
    if !meta.contains_key("game") {
        return store.set_meta(&identity);
    }
    let mut diffs = Vec::new();
    for (key, new) in &identity {
        let old = meta.get(*key).map_or("(none)", String::as_str);
        if old != new {
            // Long values (line groups, positions) are named, not printed.
            diffs.push(if old.len().max(new.len()) > 24 {
                format!("{} differs", key.replace('_', " "))
            } else {
                format!("{} {old} vs {new}", key.replace('_', " "))
            });
        }
    }
    if !diffs.is_empty() {
        bail!(
            "{} was built with other parameters ({}); rerun with the same arguments to resume, or use another --db",
            db.display(),
            diffs.join("; ")
        );
    }
    Ok(())
}

/// Every block in build order, with who reads what (the local build runs it;
/// [`super::distributed`] hands its blocks out as tasks by the same rules).
pub(crate) struct Schedule<'g> {
    kernel: &'g dyn Kernel,
    /// The kernel's format.
    format: &'g dyn Format,
    /// Layers in build order with their blocks in build order.
    pub(crate) layers: Vec<(usize, Vec<BlockId>)>,
    /// For each block read by some block: the positions (in build order) of the
    /// blocks reading it, in order.
    readers: HashMap<BlockId, Vec<usize>>,
    /// For each layer read by some block: the position of the last block reading it.
    layer_last_reader: HashMap<usize, usize>,
}

impl<'g> Schedule<'g> {
    pub(crate) fn new(kernel: &'g dyn Kernel) -> Schedule<'g> {
        let format = kernel.format();
        let layers: Vec<(usize, Vec<BlockId>)> = format
            .layers()
            .into_iter()
            .map(|layer| {
                let blocks = format
                    .blocks(layer)
                    .into_iter()
                    .map(|key| BlockId { layer, key })
                    .collect();
                (layer, blocks)
            })
            .collect();
        let mut layer_last_reader = HashMap::new();
        let mut readers: HashMap<BlockId, Vec<usize>> = HashMap::new();
        for (position, block) in layers.iter().flat_map(|(_, b)| b).enumerate() {
            for input in kernel.reads(block.layer, &block.key) {
                layer_last_reader.insert(input.layer, position);
                readers.entry(input).or_default().push(position);
            }
        }
        Schedule {
            kernel,
            format,
            layers,
            readers,
            layer_last_reader,
        }
    }

    /// The position (in build order) of the last block that reads `id`, if any.
    pub(crate) fn last_reader(&self, id: &BlockId) -> Option<usize> {
        self.readers
            .get(id)
            .and_then(|positions| positions.last().copied())
    }

    /// The first position after `at` (in build order) of a block that reads `id`
    /// (`usize::MAX`: none), for the cache to keep what is needed soonest.
    fn next_reader(&self, id: &BlockId, at: usize) -> usize {
        let Some(positions) = self.readers.get(id) else {
            return usize::MAX;
        };
        let later = positions.partition_point(|&p| p <= at);
        positions.get(later).copied().unwrap_or(usize::MAX)
    }

    /// Runs every block not stored yet. Returns (positions computed, positions in
    /// all layers, blocks resumed, peak file bytes).
    fn run(
        &self,
        store: &mut Store,
        cache_bytes: u64,
        progress: &mut dyn Progress,
        phases: &mut PhaseSeconds,
    ) -> Result<(u64, u64, usize, u64)> {
        let total_positions: u64 = self.layers.iter().map(|(_, b)| self.layer_size(b)).sum();
        let rows = store.layers()?;
        // Stored already: the blocks a resumed build skips (those of a layer being
        // built counted too, or a resumed build's total fell back by them).
        let done_positions: u64 = built_blocks(store, self.format)?
            .iter()
            .map(|id| self.format.block_size(id.layer, &id.key))
            .sum();
        progress.start(total_positions, done_positions);
        let peak_file_bytes = store
            .meta()?
            .get("peak_file_bytes")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0u64);
        let store = Mutex::new(store);
        std::thread::scope(|scope| {
            let mut writer = BlockWriter::start(scope, &store, peak_file_bytes);
            let (computed_positions, resumed_blocks) =
                self.run_layers(&mut writer, &rows, cache_bytes, progress, phases)?;
            (phases.write, phases.write_wait) = writer.seconds()?;
            Ok((
                computed_positions,
                total_positions,
                resumed_blocks,
                writer.peak_disk_bytes()?,
            ))
        })
    }

    /// The layers not published yet (`rows` as the file had them at the start),
    /// each block written while the next one computes. Returns (positions
    /// computed, blocks resumed).
    fn run_layers(
        &self,
        writer: &mut BlockWriter,
        rows: &BTreeMap<usize, LayerRow>,
        cache_bytes: u64,
        progress: &mut dyn Progress,
        phases: &mut PhaseSeconds,
    ) -> Result<(u64, usize)> {
        let (kernel, format) = (self.kernel, self.format);
        let mut cache = BlockCache::new(cache_bytes);
        let mut computed_positions = 0u64;
        let mut resumed_blocks = 0usize;
        let mut position = 0usize;
        for (layer, blocks) in &self.layers {
            let layer = *layer;
            let first_position = position;
            position += blocks.len();
            if blocks.is_empty() {
                continue; // nothing to build, nothing to publish
            }
            if rows
                .get(&layer)
                .is_some_and(|r| r.status != LayerStatus::Building)
            {
                continue;
            }
            let label = format.layer_label(layer);
            let layer_positions = self.layer_size(blocks);
            let finished = {
                let mut store = writer.store()?;
                store.begin_layer(layer, layer_positions)?;
                store.finished_blocks(layer)?
            };
            let mut totals = BlockStats::default();
            for stats in finished.values() {
                totals.merge(stats);
            }
            resumed_blocks += finished.len();
            progress.start_layer(&label, layer_positions, totals.positions);
            let todo: Vec<(usize, &BlockId)> = blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (first_position + i, b))
                .filter(|(_, b)| !finished.contains_key(&counts_key(&b.key)))
                .collect();
            let last_position = position - 1;
            let finish_for = |totals: &BlockStats| LayerFinish {
                status: if format.keeps(layer) {
                    LayerStatus::Book
                } else {
                    LayerStatus::Complete
                },
                stats: totals.clone(),
                prune: self.prunable_layers(last_position),
            };
            if todo.is_empty() {
                writer.store()?.finish_layer(layer, &finish_for(&totals))?;
            }
            for (i, &(at, block)) in todo.iter().enumerate() {
                let t0 = Instant::now();
                let reads = kernel.reads(layer, &block.key);
                let mut inputs = Vec::with_capacity(reads.len());
                for id in &reads {
                    inputs.push(cache.get_or_load_needed_at(
                        id,
                        self.next_reader(id, at),
                        || load_block(&**writer.store()?, format, id),
                    )?);
                }
                let input_refs: Vec<&[i8]> = inputs.iter().map(|b| b.as_slice()).collect();
                let loaded = Instant::now();
                phases.load += (loaded - t0).as_secs_f64();
                let values = compute_with_progress(kernel, block, &input_refs, progress)?;
                // Inputs the cache dropped meanwhile are freed before the block is kept.
                drop(input_refs);
                drop(inputs);
                let computed = Instant::now();
                phases.kernel += (computed - loaded).as_secs_f64();
                let size = format.block_size(layer, &block.key);
                if values.len() as u64 != size {
                    bail!(
                        "the kernel gave {} values for block {} of layer {layer}, expected {size}",
                        values.len(),
                        counts_key(&block.key)
                    );
                }
                let (chunks, mut stats) = encode_block(format, block, 0, &values)?;
                phases.encode += computed.elapsed().as_secs_f64();
                stats.seconds = t0.elapsed().as_secs_f64();
                totals.merge(&stats);
                // Blocks no later block reads: deleted with this one's transaction.
                let done_with: Vec<&BlockId> = reads
                    .iter()
                    .filter(|id| self.last_reader(id) == Some(at))
                    .collect();
                let drops: Vec<(usize, String)> = done_with
                    .iter()
                    .filter(|id| !format.keeps(id.layer))
                    .map(|id| (id.layer, counts_key(&id.key)))
                    .collect();
                computed_positions += stats.positions;
                writer.write(BlockWrite {
                    layer,
                    key: block.key.to_vec(),
                    chunks,
                    stats,
                    drops,
                    finish: (i + 1 == todo.len()).then(|| finish_for(&totals)),
                })?;
                for id in done_with {
                    cache.evict(id);
                }
                let next_use = self.next_reader(block, at);
                if next_use != usize::MAX {
                    cache.insert(block.clone(), Arc::new(values), next_use);
                }
            }
            progress.finish_layer(&label, &totals);
            let peak = writer.peak_disk_bytes()?;
            writer
                .store()?
                .set_meta(&[("peak_file_bytes", peak.to_string())])?;
        }
        Ok((computed_positions, resumed_blocks))
    }

    /// Positions in `blocks`.
    pub(crate) fn layer_size(&self, blocks: &[BlockId]) -> u64 {
        blocks
            .iter()
            .map(|b| self.format.block_size(b.layer, &b.key))
            .sum()
    }

    /// Layers not kept whose last reader is at or before `position` in build order:
    /// deleted when the layer ending there is published.
    pub(crate) fn prunable_layers(&self, position: usize) -> Vec<usize> {
        let mut layers: Vec<usize> = self
            .layer_last_reader
            .iter()
            .filter(|&(&layer, &last)| last <= position && !self.format.keeps(layer))
            .map(|(&layer, _)| layer)
            .collect();
        layers.sort_unstable();
        layers
    }
}

/// Blocks smaller than this are computed without a progress reporter thread.
const REPORTED_BLOCK: u64 = 1 << 24;

/// Runs the game's kernel on one block; for a big block a second thread reports the
/// positions the kernel says it has finished (every half second), then the rest.
fn compute_with_progress(
    kernel: &dyn Kernel,
    block: &BlockId,
    inputs: &[&[i8]],
    progress: &mut dyn Progress,
) -> Result<Vec<i8>> {
    let done = AtomicU64::new(0);
    let size = kernel.format().block_size(block.layer, &block.key);
    if size < REPORTED_BLOCK {
        let values = kernel.compute(block.layer, &block.key, inputs, &done)?;
        progress.advance(size);
        return Ok(values);
    }
    let finished = AtomicBool::new(false);
    let (values, reported) = std::thread::scope(|scope| {
        let reporter = scope.spawn(|| {
            let mut reported = 0u64;
            while !finished.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(500));
                let now = done.load(Ordering::Relaxed).min(size);
                if now > reported {
                    progress.advance(now - reported);
                    reported = now;
                }
            }
            (reported, progress)
        });
        // Stops the reporter however the kernel ends: a panic must not leave the
        // scope waiting for it forever.
        struct Stop<'a>(&'a AtomicBool, std::thread::Thread);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
                self.1.unpark();
            }
        }
        let stop = Stop(&finished, reporter.thread().clone());
        let values = kernel.compute(block.layer, &block.key, inputs, &done);
        drop(stop);
        let (reported, progress) = reporter.join().expect("progress thread");
        (values.map(|v| (v, progress)), reported)
    });
    let (values, progress) = values?;
    progress.advance(size.saturating_sub(reported));
    Ok(values)
}
