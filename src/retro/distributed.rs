//! Builds beyond one process (docs/FORMAT.md §9.12): a block is a task that any
//! process sharing a directory can run ([`run_block`]: read the blocks it reads
//! from their shards, compute with the game's [`Kernel`], write its own shard),
//! and one coordinator ([`Coordinator`]) keeps the `.tb` file as the catalog: it
//! says which blocks may run (those whose inputs are recorded), records each
//! finished block in a transaction, merges the chunks of the kept layers into the
//! file, deletes a shard once no remaining block reads it, and publishes the
//! layers in build order. The order, the reads and the pruning rule are the local
//! scheduler's ([`super::build`]); only the blocks run elsewhere. A finished
//! distributed build is the same file as a local one: the same blocks, chunks,
//! layer rows and digests.
//!
//! Faults: a task whose shard exists and is whole does nothing (tasks are
//! idempotent; a damaged shard is computed again, never recorded); a coordinator
//! killed at any instant resumes from the file (recorded blocks) and the shards
//! written meanwhile (found whole by their tasks); a recorded shard found damaged
//! when the coordinator opens the file is forgotten and computed again if the
//! blocks it reads still have their shards.

use super::build::{Builder, Schedule, adopt_or_check_identity};
use super::chunks::encode_block;
use super::format::{BlockId, Format};
use super::input_cache::{InputCache, WORKER_INPUTS};
use super::kernel::Kernel;
use super::shard::{ShardDir, ShardError, ShardErrorKind, header_for};
use crate::store::{BlockRecord, BlockStats, LayerFinish, LayerStatus, counts_key};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

/// What a block task did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    /// Computed and written.
    Computed,
    /// Its shard was there and whole: nothing done.
    Reused,
    /// Its shard was there but damaged: computed and written again.
    Recomputed,
}

/// What a block task reports (small: this travels back to the coordinator).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TaskReport {
    /// The block's layer.
    pub layer: usize,
    /// The block's key.
    pub key: Vec<u8>,
    /// What was done.
    pub outcome: TaskOutcome,
    /// Positions in the block.
    pub positions: u64,
    /// Size of its shard file.
    pub shard_bytes: u64,
    /// Bytes of input shards read.
    pub read_bytes: u64,
    /// Inputs taken decoded from this process's [`WORKER_INPUTS`] instead.
    pub cached_inputs: u64,
    /// Wall time of the task.
    pub seconds: f64,
    /// Reading and decoding the input shards.
    pub load_seconds: f64,
    /// The kernel.
    pub kernel_seconds: f64,
    /// Coding chunks and writing the shard.
    pub write_seconds: f64,
}

/// This process's cache of decoded inputs and of the blocks it computed (a task
/// that panicked while holding it left it whole: its operations do not panic
/// halfway).
fn lock_inputs() -> MutexGuard<'static, InputCache> {
    WORKER_INPUTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets how many bytes of decoded input blocks this process keeps between its
/// block tasks (0: none; see [`super::input_cache`]).
pub fn set_input_cache_bytes(bytes: u64) {
    lock_inputs().set_budget(bytes);
}

/// Runs one block task: does nothing if the block's shard is there and whole, else
/// reads the blocks it reads (decoded from this process's cache, or from their
/// shards), computes it and writes its shard. An
/// input shard that is missing or damaged is an error naming it (a [`ShardError`]
/// in the chain).
pub fn run_block(kernel: &dyn Kernel, dir: &ShardDir, id: &BlockId) -> Result<TaskReport> {
    let started = Instant::now();
    let format = kernel.format();
    let size = format.block_size(id.layer, &id.key);
    let mut report = TaskReport {
        layer: id.layer,
        key: id.key.clone(),
        outcome: TaskOutcome::Computed,
        positions: size,
        shard_bytes: 0,
        read_bytes: 0,
        cached_inputs: 0,
        seconds: 0.0,
        load_seconds: 0.0,
        kernel_seconds: 0.0,
        write_seconds: 0.0,
    };
    match dir.read(format, id) {
        Ok(shard) => {
            // Whole as far as its header and coded bytes tell; the values'
            // checksums are checked by every reader.
            report.outcome = TaskOutcome::Reused;
            report.shard_bytes = std::fs::metadata(dir.path(id)).map_or(0, |m| m.len());
            drop(shard);
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
        Err(e) if e.kind == ShardErrorKind::Damaged => report.outcome = TaskOutcome::Recomputed,
        Err(_) => {}
    }
    let reads = kernel.reads(id.layer, &id.key);
    let mut inputs = Vec::with_capacity(reads.len());
    for input in &reads {
        let cached = lock_inputs().get(dir.root(), input);
        if let Some(values) = cached {
            report.cached_inputs += 1;
            inputs.push(values);
            continue;
        }
        let shard = dir.read(format, input).map_err(anyhow::Error::new)?;
        report.read_bytes += std::fs::metadata(dir.path(input)).map_or(0, |m| m.len());
        let values = shard.values(format).map_err(|e| {
            e.context(ShardError {
                kind: ShardErrorKind::Damaged,
                block: input.clone(),
                path: dir.path(input),
                why: "its values do not match their checksums".into(),
            })
        })?;
        let values = Arc::new(values);
        lock_inputs().put(dir.root(), input, values.clone());
        inputs.push(values);
    }
    let refs: Vec<&[i8]> = inputs.iter().map(|v| v.as_slice()).collect();
    let loaded = Instant::now();
    report.load_seconds = (loaded - started).as_secs_f64();
    let values = kernel.compute(id.layer, &id.key, &refs, &AtomicU64::new(0))?;
    drop(inputs);
    let computed = Instant::now();
    report.kernel_seconds = (computed - loaded).as_secs_f64();
    if values.len() as u64 != size {
        bail!(
            "the kernel gave {} values for block {} of layer {}, expected {size}",
            values.len(),
            counts_key(&id.key),
            id.layer
        );
    }
    let (chunks, mut stats) = encode_block(format, id, 0, &values)?;
    stats.seconds = (computed - started).as_secs_f64();
    let header = header_for(dir, format.chunk_positions(), id, &chunks, &stats);
    report.shard_bytes = dir.write(&header, &chunks)?;
    // The blocks of the next layer that read this one may run in this process.
    lock_inputs().put(dir.root(), id, Arc::new(values));
    report.write_seconds = computed.elapsed().as_secs_f64();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// A block as the coordinator hands it out.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TaskSpec {
    /// The block.
    pub layer: usize,
    /// Its key.
    pub key: Vec<u8>,
    /// Its key as text (`4.3.3`).
    pub key_text: String,
    /// Positions.
    pub positions: u64,
    /// The blocks it reads, as (layer, key): those not recorded yet are tasks too.
    pub reads: Vec<(usize, Vec<u8>)>,
    /// Bytes of its inputs' values (what a task holds besides its own block).
    pub input_bytes: u64,
    /// Its position in build order.
    pub order: usize,
}

/// What recording a block did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Recorded {
    /// Shards deleted (no remaining block reads them).
    pub deleted_shards: usize,
    /// Layers published, in build order (their labels).
    pub published: Vec<String>,
    /// Bytes of the shard recorded.
    pub shard_bytes: u64,
}

/// Prefix of the metadata rows that record a live shard: `shard <layer> <key>`.
const SHARD_META: &str = "shard ";

/// Metadata key of the directory the shards of a build live in.
pub const SHARD_ROOT_META: &str = "shard_root";

/// The coordinator of a distributed build: the one process that opens the `.tb`
/// file (locked, as a local build).
pub struct Coordinator<'k> {
    builder: Builder,
    kernel: &'k dyn Kernel,
    format: &'k dyn Format,
    schedule: Schedule<'k>,
    dir: ShardDir,
    /// Blocks recorded in the file.
    recorded: HashSet<BlockId>,
    /// How many of each layer's blocks are recorded.
    recorded_in_layer: HashMap<usize, usize>,
    /// A batch of records failed after some of it had changed what this
    /// coordinator holds in memory (the file rolled it back): it records no more.
    broken: bool,
    /// For each block some block reads: how many of its readers are not recorded.
    readers_left: HashMap<BlockId, usize>,
    /// Layers published (complete, book or pruned), by layer.
    published: HashSet<usize>,
    /// Each layer's blocks recorded so far, totalled.
    totals: HashMap<usize, BlockStats>,
    /// Where each block is in build order.
    order: HashMap<BlockId, usize>,
    /// Blocks recorded when the coordinator opened the file.
    resumed_blocks: usize,
    /// Recorded shards found damaged when opening, forgotten to be computed again.
    forgotten: Vec<BlockId>,
}

impl<'k> Coordinator<'k> {
    /// Opens (or creates) the file `db` for a distributed build of `kernel`'s game
    /// whose shards live under `shared`: takes the build lock, writes or checks the
    /// identity, and reads back what earlier runs recorded. Every recorded shard a
    /// remaining block reads is checked whole; a damaged or missing one is
    /// forgotten (its block computed again) when the blocks it reads still have
    /// their shards, else it is an error.
    pub fn open(db: &Path, kernel: &'k dyn Kernel, shared: &Path) -> Result<Coordinator<'k>> {
        let format = kernel.format();
        let mut builder = Builder::open(db, format.chunk_positions())?;
        let dir = ShardDir::new(shared, format);
        adopt_or_check_identity(builder.store_mut(), db, format)?;
        std::fs::create_dir_all(dir.root()).with_context(|| {
            format!("cannot create the shard directory {}", dir.root().display())
        })?;
        let root = std::fs::canonicalize(dir.root())?;
        builder.store_mut().set_meta(&[
            ("tool_version", env!("CARGO_PKG_VERSION").to_string()),
            (SHARD_ROOT_META, root.display().to_string()),
        ])?;
        let schedule = Schedule::new(kernel);
        let mut coordinator = Coordinator {
            builder,
            kernel,
            format,
            dir,
            recorded: HashSet::new(),
            recorded_in_layer: HashMap::new(),
            broken: false,
            readers_left: HashMap::new(),
            published: HashSet::new(),
            totals: HashMap::new(),
            order: HashMap::new(),
            resumed_blocks: 0,
            forgotten: Vec::new(),
            schedule,
        };
        coordinator.read_back()?;
        Ok(coordinator)
    }

    /// Reads what the file records (blocks, published layers), counts the readers
    /// left of every block, and checks the shards those readers need.
    fn read_back(&mut self) -> Result<()> {
        let store = self.builder.store_mut();
        let rows = store.layers()?;
        for (position, id) in self.schedule.layers.iter().flat_map(|(_, b)| b).enumerate() {
            self.order.insert(id.clone(), position);
        }
        for (layer, blocks) in &self.schedule.layers {
            let positions = self.schedule.layer_size(blocks);
            if !blocks.is_empty() {
                store.begin_layer(*layer, positions)?;
            }
            if rows
                .get(layer)
                .is_some_and(|r| r.status != LayerStatus::Building)
            {
                self.published.insert(*layer);
                for id in blocks {
                    Self::mark(&mut self.recorded, &mut self.recorded_in_layer, id);
                }
                continue;
            }
            let finished = store.finished_blocks(*layer)?;
            let mut totals = BlockStats::default();
            for id in blocks {
                if let Some(stats) = finished.get(&counts_key(&id.key)) {
                    totals.merge(stats);
                    Self::mark(&mut self.recorded, &mut self.recorded_in_layer, id);
                }
            }
            self.totals.insert(*layer, totals);
        }
        for id in self.schedule.layers.iter().flat_map(|(_, b)| b) {
            if !self.recorded.contains(id) {
                for input in self.kernel.reads(id.layer, &id.key) {
                    *self.readers_left.entry(input).or_default() += 1;
                }
            }
        }
        // The shards remaining blocks read must be whole: a damaged one is computed
        // again (never read), which its own inputs' shards must allow.
        let mut needed: Vec<BlockId> = self
            .readers_left
            .keys()
            .filter(|id| self.recorded.contains(*id))
            .cloned()
            .collect();
        needed.sort_by_key(|id| self.order[id]);
        for id in needed {
            if let Err(e) = self.dir.read(self.format, &id) {
                self.forget(&id, &e)?;
            }
        }
        // What this run takes over: the blocks recorded but those just forgotten.
        self.resumed_blocks = self.recorded.len();
        self.publish_ready()?;
        Ok(())
    }

    /// Forgets the recorded block `id` whose shard is unusable (`why`), so that it
    /// is computed again; an error when a block it reads has lost its shard.
    fn forget(&mut self, id: &BlockId, why: &ShardError) -> Result<()> {
        for input in self.kernel.reads(id.layer, &id.key) {
            if let Err(e) = self.dir.read_header(self.format, &input) {
                bail!(
                    "{why}; it cannot be computed again because a block it reads is gone ({e}): build again into a new file"
                );
            }
        }
        let store = self.builder.store_mut();
        store.forget_block(id.layer, &id.key, &[shard_meta(id)])?;
        if self.recorded.remove(id) {
            *self.recorded_in_layer.entry(id.layer).or_default() -= 1;
        }
        self.published.remove(&id.layer);
        let stats = store.finished_blocks(id.layer)?;
        let mut totals = BlockStats::default();
        for s in stats.values() {
            totals.merge(s);
        }
        self.totals.insert(id.layer, totals);
        for input in self.kernel.reads(id.layer, &id.key) {
            *self.readers_left.entry(input).or_default() += 1;
        }
        self.forgotten.push(id.clone());
        Ok(())
    }

    /// The blocks not recorded yet, in build order: each may run once the blocks it
    /// reads are recorded (those among them are tasks of this list too).
    pub fn tasks(&self) -> Vec<TaskSpec> {
        let format = self.format;
        (self.schedule.layers.iter().flat_map(|(_, b)| b))
            .filter(|id| !self.recorded.contains(*id))
            .map(|id| {
                let reads = self.kernel.reads(id.layer, &id.key);
                TaskSpec {
                    layer: id.layer,
                    key: id.key.clone(),
                    key_text: counts_key(&id.key),
                    positions: format.block_size(id.layer, &id.key),
                    input_bytes: reads
                        .iter()
                        .map(|r| format.block_size(r.layer, &r.key))
                        .sum(),
                    reads: reads.into_iter().map(|r| (r.layer, r.key)).collect(),
                    order: self.order[id],
                }
            })
            .collect()
    }

    /// Marks `id` recorded in `recorded` and counts it in its layer's count.
    fn mark(recorded: &mut HashSet<BlockId>, counts: &mut HashMap<usize, usize>, id: &BlockId) {
        if recorded.insert(id.clone()) {
            *counts.entry(id.layer).or_default() += 1;
        }
    }

    /// Records a finished block whose task wrote its shard: checks the shard's
    /// header, writes the block's row (with its chunks when its layer is kept or no
    /// block reads it, as a local build leaves them), deletes the shards no
    /// remaining block reads (and their chunks from the file unless kept) in the
    /// same transaction, and publishes the layers now complete, in build order.
    /// Recording a recorded block does nothing.
    pub fn record(&mut self, id: &BlockId) -> Result<Recorded> {
        let mut recorded = self.record_many(std::slice::from_ref(id))?;
        Ok(recorded.pop().expect("one record a block"))
    }

    /// [`Coordinator::record`] for several finished blocks (in build order, which
    /// puts a block after those it reads), in one transaction of the file: a
    /// coordinator of many small blocks (4x5 plans some 200 M) then commits once a
    /// batch, not once a block. The shards no remaining block reads are deleted
    /// once the batch is committed. Returns what recording each block did, in the
    /// order of `ids`. When a record fails, nothing of the batch is in the file;
    /// if blocks before it in the batch were recorded, the coordinator records no
    /// more (open the file again: it resumes from what the file holds).
    pub fn record_many(&mut self, ids: &[BlockId]) -> Result<Vec<Recorded>> {
        if self.broken {
            bail!("a batch of records failed halfway: open the file again to go on");
        }
        let mut in_order: Vec<usize> = (0..ids.len()).collect();
        in_order.sort_by_key(|&i| self.order.get(&ids[i]).copied().unwrap_or(usize::MAX));
        let mut results = vec![Recorded::default(); ids.len()];
        let mut unread = Vec::new();
        let mut changed = false;
        self.builder.store_mut().begin_batch()?;
        let mut batch = || -> Result<()> {
            for &i in &in_order {
                results[i] = self.record_one(&ids[i], &mut unread)?;
                changed = true;
                results[i].published = self.publish_ready()?;
            }
            self.builder.store_mut().commit_batch()
        };
        if let Err(e) = batch() {
            self.builder.store_mut().rollback_batch();
            self.broken = changed;
            return Err(e);
        }
        // Deleted once the file no longer names them: a crash in between leaves a
        // file nobody reads, swept at the end.
        for id in &unread {
            self.dir.remove(id)?;
        }
        Ok(results)
    }

    /// Records `id` inside the open batch (without publishing); the shards to
    /// delete once it is committed are added to `unread`. Changes nothing in
    /// memory when it fails.
    fn record_one(&mut self, id: &BlockId, unread: &mut Vec<BlockId>) -> Result<Recorded> {
        if !self.order.contains_key(id) {
            bail!(
                "block {} of layer {} is not a block of this build",
                counts_key(&id.key),
                id.layer
            );
        }
        if self.recorded.contains(id) {
            return Ok(Recorded::default());
        }
        let reads = self.kernel.reads(id.layer, &id.key);
        if let Some(missing) = reads.iter().find(|r| !self.recorded.contains(*r)) {
            bail!(
                "block {} of layer {} is recorded before block {} of layer {}, which it reads",
                counts_key(&id.key),
                id.layer,
                counts_key(&missing.key),
                missing.layer
            );
        }
        let read_by_some = self.schedule.last_reader(id).is_some();
        let merge = self.format.keeps(id.layer) || !read_by_some;
        let (header, shard_bytes, chunks) = if merge {
            let shard = self.dir.read(self.format, id)?;
            // The values' checksums too: what goes into the file is checked whole.
            shard.values(self.format)?;
            let bytes = std::fs::metadata(self.dir.path(id)).map_or(0, |m| m.len());
            let chunks = shard.chunks();
            (shard.header, bytes, chunks)
        } else {
            let (header, bytes) = self.dir.read_header(self.format, id)?;
            (header, bytes, Vec::new())
        };
        // The blocks this one was the last reader of.
        let gone: Vec<BlockId> = reads
            .iter()
            .filter(|input| self.readers_left.get(*input) == Some(&1))
            .cloned()
            .collect();
        let keeps_shard = read_by_some && self.readers_left.get(id).is_some_and(|&n| n > 0);
        // Their chunks are in no file (only kept blocks are merged): a drop marks
        // a published layer pruned, as the local build's drop does; a layer still
        // building is pruned when the layer of its last reader is published.
        let drops: Vec<(usize, String)> = gone
            .iter()
            .filter(|g| !self.format.keeps(g.layer) && self.published.contains(&g.layer))
            .map(|g| (g.layer, counts_key(&g.key)))
            .collect();
        let meta_put: Vec<(String, String)> = if keeps_shard {
            vec![(
                shard_meta(id),
                serde_json::json!({
                    "path": self.dir.path(id),
                    "bytes": shard_bytes,
                    "digest": crate::store::checksum::digest_hex(header.digest),
                })
                .to_string(),
            )]
        } else {
            Vec::new()
        };
        let meta_delete: Vec<String> = gone.iter().map(shard_meta).collect();
        let stats = header.stats();
        self.builder.store_mut().record_block(
            id.layer,
            &id.key,
            &chunks,
            &stats,
            &BlockRecord {
                chunk_count: header.chunks.len() as u64,
                drops: &drops,
                finish: None,
                meta_put: &meta_put,
                meta_delete: &meta_delete,
            },
        )?;
        for input in &reads {
            *self
                .readers_left
                .get_mut(input)
                .expect("a block read has readers") -= 1;
        }
        Self::mark(&mut self.recorded, &mut self.recorded_in_layer, id);
        self.totals.entry(id.layer).or_default().merge(&stats);
        let deleted = gone.len() + usize::from(!keeps_shard);
        unread.extend(gone);
        if !keeps_shard {
            unread.push(id.clone());
        }
        Ok(Recorded {
            shard_bytes,
            deleted_shards: deleted,
            published: Vec::new(),
        })
    }

    /// Publishes, in build order, every layer whose blocks are all recorded (and
    /// every layer before it published): its row complete or book, and the layers
    /// no remaining block reads pruned, as the local build does.
    fn publish_ready(&mut self) -> Result<Vec<String>> {
        let mut published = Vec::new();
        let mut position = 0usize;
        for (layer, blocks) in &self.schedule.layers {
            position += blocks.len();
            if blocks.is_empty() || self.published.contains(layer) {
                continue;
            }
            // Counted, not looked up block by block: a coordinator of millions of
            // blocks asks this after each.
            if self.recorded_in_layer.get(layer).copied().unwrap_or(0) < blocks.len() {
                break;
            }
            let finish = LayerFinish {
                status: if self.format.keeps(*layer) {
                    LayerStatus::Book
                } else {
                    LayerStatus::Complete
                },
                stats: self.totals.get(layer).cloned().unwrap_or_default(),
                prune: self.schedule.prunable_layers(position - 1),
            };
            self.builder.store_mut().finish_layer(*layer, &finish)?;
            self.published.insert(*layer);
            published.push(self.format.layer_label(*layer));
        }
        Ok(published)
    }

    /// Whether every block is recorded and every layer published.
    pub fn is_done(&self) -> bool {
        self.schedule
            .layers
            .iter()
            .all(|(layer, blocks)| blocks.is_empty() || self.published.contains(layer))
    }

    /// Blocks recorded when the file was opened (but those forgotten then).
    pub fn resumed_blocks(&self) -> usize {
        self.resumed_blocks
    }

    /// Recorded blocks whose shards were found damaged or missing when the file was
    /// opened, to be computed again.
    pub fn forgotten(&self) -> &[BlockId] {
        &self.forgotten
    }

    /// The build's shard directory.
    pub fn shard_dir(&self) -> &ShardDir {
        &self.dir
    }

    /// Ends a finished build: the shard directory goes (with the temporary files of
    /// killed tasks), the catalog rows with it, and the file is compacted as a
    /// local build's is. An error while blocks are left.
    pub fn finish(mut self) -> Result<FinishSummary> {
        if !self.is_done() {
            bail!(
                "{} blocks are not recorded yet",
                self.schedule
                    .layers
                    .iter()
                    .map(|(_, b)| b.len())
                    .sum::<usize>()
                    - self.recorded.len()
            );
        }
        let store = self.builder.store_mut();
        let stale: Vec<String> = store
            .meta()?
            .into_keys()
            .filter(|k| k.starts_with(SHARD_META) || k == SHARD_ROOT_META)
            .collect();
        store.delete_meta(&stale)?;
        self.dir.remove_all()?;
        let started = Instant::now();
        let store = self.builder.store_mut();
        store.compact()?;
        let layers = store.layers()?;
        Ok(FinishSummary {
            db: self.builder.db().to_path_buf(),
            total_positions: layers.values().map(|r| r.positions).sum(),
            stored_bytes: layers.values().map(|r| r.bytes).sum(),
            build_seconds: layers.values().map(|r| r.seconds).sum(),
            file_bytes: self.builder.store().file_bytes()?,
            compact_seconds: started.elapsed().as_secs_f64(),
            layer_digests: layers
                .values()
                .map(|r| (r.n, r.digest.clone().unwrap_or_default()))
                .collect(),
        })
    }
}

/// What a finished distributed build reports from the file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FinishSummary {
    /// The file.
    pub db: PathBuf,
    /// Positions over all layers.
    pub total_positions: u64,
    /// Coded bytes over all layers (before pruning).
    pub stored_bytes: u64,
    /// Seconds the blocks took, summed (over every run and worker).
    pub build_seconds: f64,
    /// Size of the file.
    pub file_bytes: u64,
    /// Seconds compacting the file took.
    pub compact_seconds: f64,
    /// Each layer's digest.
    pub layer_digests: BTreeMap<usize, String>,
}

/// The metadata key recording a live shard.
fn shard_meta(id: &BlockId) -> String {
    format!("{SHARD_META}{} {}", id.layer, counts_key(&id.key))
}
