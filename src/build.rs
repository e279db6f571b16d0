//! The builder: layer by layer from the full board back to the start, block by
//! block, each block stored (and the superseded layer pruned) transactionally, so a
//! killed build resumes where it stopped.

use crate::checksum::digest_element;
use crate::kernel::Kernel;
use crate::layout::{Counts, Layout};
use crate::progress::Progress;
use crate::spec::Spec;
use crate::store::{BlockStats, EncodedChunk, LayerFinish, LayerStatus, Store, counts_key};
use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// zstd level for stored chunks.
pub const ZSTD_LEVEL: i32 = 3;

/// How to run a build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// What to build.
    pub spec: Spec,
    /// Whether the groups were given explicitly (otherwise a resumed build keeps the
    /// file's groups).
    pub groups_explicit: bool,
    /// The SQLite file.
    pub db: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// Memory budget in bytes.
    pub memory: u64,
}

/// What a finished build reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    /// The spec that was built (groups as stored).
    #[serde(skip)]
    pub spec: Spec,
    /// Board, `RxC`.
    pub board: String,
    /// Start name.
    pub start: String,
    /// The database file.
    pub db: PathBuf,
    /// Positions computed in this run.
    pub computed_positions: u64,
    /// Positions stored for the whole tablebase (every layer; one per class with a
    /// reduction).
    pub total_positions: u64,
    /// Positions of the whole tablebase without a reduction.
    pub raw_positions: u64,
    /// `none` or `wilson`.
    pub symmetry: String,
    /// Board symmetries in use (1 without symmetry).
    pub symmetries: usize,
    /// Whether corner pairs are reduced.
    pub corners: bool,
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
    /// Value of the start position.
    pub start_value: i8,
}

impl BuildSummary {
    /// Positions computed per second of wall time in this run.
    pub fn positions_per_second(&self) -> f64 {
        self.computed_positions as f64 / self.seconds.max(1e-9)
    }

    /// Stored bits per position over all layers.
    pub fn bits_per_position(&self) -> f64 {
        self.stored_bytes as f64 * 8.0 / self.total_positions.max(1) as f64
    }
}

/// Holds an exclusive lock on `<db>.lock` for the lifetime of a build.
pub struct BuildLock {
    _file: File,
}

impl BuildLock {
    /// Takes the lock or fails at once if another builder holds it.
    pub fn acquire(db: &Path) -> Result<BuildLock> {
        let path = lock_path(db);
        let file = File::create(&path)
            .with_context(|| format!("cannot create lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(BuildLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                bail!(
                    "another `tb build` is already writing {} (lock {} is held)",
                    db.display(),
                    path.display()
                )
            }
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).context(format!("cannot lock {}", path.display()))
            }
        }
    }
}

/// The lock file of a database: `<db>.lock`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Runs (or resumes) a build.
pub fn build(mut opts: BuildOptions, progress: &mut dyn Progress) -> Result<BuildSummary> {
    let started = Instant::now();
    let _lock = BuildLock::acquire(&opts.db)?;
    let mut store = Store::open_for_build(&opts.db)?;
    adopt_or_check_identity(&mut store, &mut opts)?;
    store.set_meta(&[
        ("tool_version", env!("CARGO_PKG_VERSION").to_string()),
        ("build_threads", opts.threads.to_string()),
        ("build_memory", opts.memory.to_string()),
    ])?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .context("cannot start worker threads")?;
    pool.install(|| run_layers(&mut store, &opts, progress, started))
}

/// Writes the identity into a new file, or checks that an existing file was built
/// with the same parameters (adopting its groups when none were given).
fn adopt_or_check_identity(store: &mut Store, opts: &mut BuildOptions) -> Result<()> {
    let meta = store.meta()?;
    if !meta.contains_key("board") {
        return store.set_meta(&opts.spec.to_meta());
    }
    let existing = Spec::from_meta(&meta).context("the existing file's metadata is unreadable")?;
    if !opts.groups_explicit {
        opts.spec.groups = existing.groups.clone();
    }
    let want = &opts.spec;
    let mut diffs = Vec::new();
    if existing.start != want.start {
        diffs.push(format!(
            "start {} vs {}",
            existing.start_name, want.start_name
        ));
    }
    if existing.groups != want.groups {
        diffs.push("line groups differ".to_string());
    }
    let mut compare = |what: &str, old: String, new: String| {
        if old != new {
            diffs.push(format!("{what} {old} vs {new}"));
        }
    };
    compare("board", existing.board.to_string(), want.board.to_string());
    compare(
        "penalty",
        existing.penalty.to_string(),
        want.penalty.to_string(),
    );
    compare(
        "symmetry",
        existing.symmetry_name().into(),
        want.symmetry_name().into(),
    );
    compare(
        "corners",
        existing.corners.to_string(),
        want.corners.to_string(),
    );
    compare(
        "book lines",
        existing.book_lines.to_string(),
        want.book_lines.to_string(),
    );
    compare(
        "chunk size",
        existing.chunk_positions.to_string(),
        want.chunk_positions.to_string(),
    );
    if !diffs.is_empty() {
        bail!(
            "{} was built with other parameters ({}); rerun with the same arguments to resume, or use another --db",
            opts.db.display(),
            diffs.join("; ")
        );
    }
    Ok(())
}

fn run_layers(
    store: &mut Store,
    opts: &BuildOptions,
    progress: &mut dyn Progress,
    started: Instant,
) -> Result<BuildSummary> {
    let spec = &opts.spec;
    let layout = spec.layout();
    let completion = spec.board.completion_masks();
    let kernel = Kernel::new(&layout, &completion, spec.penalty);
    let first = layout.start_lines();
    let full = layout.full_layer();
    let total_positions: u64 = (first..=full).map(|n| layout.layer_size(n)).sum();
    let layers = store.layers()?;
    let done_positions: u64 = layers
        .values()
        .filter(|r| r.status != LayerStatus::Building)
        .map(|r| r.positions)
        .sum();
    progress.start(total_positions, done_positions);

    // Memory: a quarter of the budget for the blocks of layer n+1 kept from the
    // previous step (or reloaded), a quarter for the blocks of layer n produced now
    // (the next step's children), and half for the block being computed and the
    // child blocks it needs (the group planner sizes blocks for that).
    let mut children = BlockCache::new(opts.memory / 4);
    let mut computed_positions = 0u64;
    let mut resumed_blocks = 0usize;
    let mut peak_file_bytes = store
        .meta()?
        .get("peak_file_bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0u64);
    for n in (first..=full).rev() {
        if layers
            .get(&n)
            .is_some_and(|r| r.status != LayerStatus::Building)
        {
            children = BlockCache::new(opts.memory / 4);
            continue;
        }
        let blocks = layout.blocks_of_layer(n);
        let layer_positions = layout.layer_size(n);
        store.begin_layer(n, layer_positions)?;
        let finished = store.finished_blocks(n)?;
        let mut totals = BlockStats::default();
        for stats in finished.values() {
            merge_stats(&mut totals, stats);
        }
        resumed_blocks += finished.len();
        progress.start_layer(n, layer_positions, totals.positions);
        let todo: Vec<&Counts> = blocks
            .iter()
            .filter(|c| !finished.contains_key(&counts_key(c)))
            .collect();
        let mut produced = BlockCache::new(opts.memory / 4);
        // Layer n+1 goes once layer n is complete, unless it is in the book.
        let prune_above = n < full && n + 1 > spec.book_lines;
        let blocks_above = if prune_above {
            layout.blocks_of_layer(n + 1)
        } else {
            Vec::new()
        };
        let finish_for = |totals: &BlockStats| LayerFinish {
            status: if n <= spec.book_lines {
                LayerStatus::Book
            } else {
                LayerStatus::Complete
            },
            stats: totals.clone(),
            prune_above,
        };
        if todo.is_empty() {
            store.finish_layer(n, &finish_for(&totals))?;
        }
        // Blocks of layer n+1 with a group-1 count below this are deleted already.
        let mut dropped_below = 0u8;
        for (i, counts) in todo.iter().enumerate() {
            let t0 = Instant::now();
            children.evict_before(counts[0]);
            if prune_above && counts[0] > dropped_below {
                let keys: Vec<String> = blocks_above
                    .iter()
                    .filter(|c| c[0] >= dropped_below && c[0] < counts[0])
                    .map(|c| counts_key(c))
                    .collect();
                store.drop_blocks(n + 1, &keys)?;
                dropped_below = counts[0];
            }
            let mut child_blocks: Vec<Option<Arc<Vec<i8>>>> = Vec::with_capacity(counts.len());
            for g in 0..counts.len() {
                child_blocks.push(if (counts[g] as usize) < layout.groups[g].len() {
                    let mut c = (*counts).clone();
                    c[g] += 1;
                    Some(children.get_or_load(&c, || load_block(store, &layout, spec, n + 1, &c))?)
                } else {
                    None
                });
            }
            let child_refs: Vec<Option<&[i8]>> = child_blocks
                .iter()
                .map(|c| c.as_deref().map(Vec::as_slice))
                .collect();
            let values = kernel.compute_block(counts, &child_refs);
            let (chunks, mut stats) = encode_block(&layout, counts, &values, spec.chunk_positions)?;
            stats.seconds = t0.elapsed().as_secs_f64();
            merge_stats(&mut totals, &stats);
            let last = i + 1 == todo.len();
            let finish = last.then(|| finish_for(&totals));
            store.write_block(n, counts, &chunks, &stats, finish.as_ref())?;
            peak_file_bytes = peak_file_bytes.max(store.disk_bytes()?);
            computed_positions += stats.positions;
            progress.advance(stats.positions);
            produced.insert((*counts).clone(), Arc::new(values));
        }
        progress.finish_layer(n, &totals);
        store.set_meta(&[("peak_file_bytes", peak_file_bytes.to_string())])?;
        children = produced;
    }
    let start_value = {
        let (counts, index) = layout.locate(spec.start);
        let chunk = index / spec.chunk_positions;
        let values = store.read_chunk(first, &counts, chunk)?;
        values[(index % spec.chunk_positions) as usize]
    };
    store.compact()?;
    let layer_rows = store.layers()?;
    let stored_bytes = layer_rows.values().map(|r| r.bytes).sum();
    let summary = BuildSummary {
        spec: spec.clone(),
        board: spec.board.to_string(),
        start: spec.start_name.clone(),
        db: opts.db.clone(),
        stored_bytes,
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        computed_positions,
        total_positions,
        raw_positions: layout.raw_positions(),
        symmetry: spec.symmetry_name().to_string(),
        symmetries: layout.symmetries(),
        corners: layout.has_corners(),
        resumed_blocks,
        seconds: started.elapsed().as_secs_f64(),
        build_seconds: layer_rows.values().map(|r| r.seconds).sum(),
        peak_file_bytes,
        file_bytes: store.file_bytes()?,
        start_value,
    };
    progress.finish(&summary);
    Ok(summary)
}

/// Reads a whole block back from the store.
pub fn load_block(
    store: &Store,
    layout: &Layout,
    spec: &Spec,
    n: usize,
    counts: &[u8],
) -> Result<Vec<i8>> {
    let size = layout.block_size(counts);
    let chunks = size.div_ceil(spec.chunk_positions);
    let mut values = Vec::with_capacity(size as usize);
    for chunk in 0..chunks {
        values.extend(store.read_chunk(n, counts, chunk)?);
    }
    if values.len() as u64 != size {
        bail!(
            "block {} of layer {n} has {} values, expected {size}",
            counts_key(counts),
            values.len()
        );
    }
    Ok(values)
}

/// Compresses a block's chunks in parallel and gathers its histogram and digest.
fn encode_block(
    layout: &Layout,
    counts: &[u8],
    values: &[i8],
    chunk_positions: u64,
) -> Result<(Vec<EncodedChunk>, BlockStats)> {
    let parts: Vec<(EncodedChunk, [u64; 256], u64)> = values
        .par_chunks(chunk_positions as usize)
        .enumerate()
        .map(|(i, raw)| {
            let mut histogram = [0u64; 256];
            let mut digest = 0u64;
            let mut values = raw.iter();
            layout.visit(counts, i as u64 * chunk_positions, raw.len(), |position| {
                let v = *values.next().expect("one value per position");
                histogram[(v as i16 + 128) as usize] += 1;
                digest = digest.wrapping_add(digest_element(position, v));
            });
            Ok((EncodedChunk::encode(raw, ZSTD_LEVEL)?, histogram, digest))
        })
        .collect::<Result<_>>()?;
    let mut stats = BlockStats {
        positions: values.len() as u64,
        ..BlockStats::default()
    };
    let mut chunks = Vec::with_capacity(parts.len());
    for (chunk, histogram, digest) in parts {
        stats.bytes += chunk.data.len() as u64;
        stats.digest = stats.digest.wrapping_add(digest);
        for (i, &c) in histogram.iter().enumerate() {
            if c > 0 {
                *stats.histogram.entry((i as i16 - 128) as i8).or_default() += c;
            }
        }
        chunks.push(chunk);
    }
    Ok((chunks, stats))
}

fn merge_stats(into: &mut BlockStats, add: &BlockStats) {
    into.positions += add.positions;
    into.bytes += add.bytes;
    into.seconds += add.seconds;
    into.digest = into.digest.wrapping_add(add.digest);
    for (&v, &c) in &add.histogram {
        *into.histogram.entry(v).or_default() += c;
    }
}

/// Decompressed blocks of one layer, bounded in bytes.
struct BlockCache {
    blocks: HashMap<Counts, Arc<Vec<i8>>>,
    bytes: u64,
    limit: u64,
}

impl BlockCache {
    fn new(limit: u64) -> BlockCache {
        BlockCache {
            blocks: HashMap::new(),
            bytes: 0,
            limit,
        }
    }

    /// Keeps a block if it fits the budget.
    fn insert(&mut self, counts: Counts, values: Arc<Vec<i8>>) {
        let len = values.len() as u64;
        if self.bytes + len <= self.limit {
            self.bytes += len;
            self.blocks.insert(counts, values);
        }
    }

    fn get_or_load(
        &mut self,
        counts: &Counts,
        load: impl FnOnce() -> Result<Vec<i8>>,
    ) -> Result<Arc<Vec<i8>>> {
        if let Some(b) = self.blocks.get(counts) {
            return Ok(b.clone());
        }
        let values = Arc::new(load()?);
        self.insert(counts.clone(), values.clone());
        Ok(values)
    }

    /// Drops blocks whose group-1 count is below `c1`: parents are visited in
    /// ascending group-1 count, so no later parent needs them (Wilson's rule).
    fn evict_before(&mut self, c1: u8) {
        let mut freed = 0;
        self.blocks.retain(|counts, values| {
            let keep = counts[0] >= c1;
            if !keep {
                freed += values.len() as u64;
            }
            keep
        });
        self.bytes -= freed;
    }
}
