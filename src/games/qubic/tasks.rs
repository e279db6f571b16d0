//! Qubic builds beyond one process (docs/FORMAT.md §9.12): each O reply to the
//! start is a task ([`run_reply`]) that any process sharing a directory can run:
//! it proves the reply with a prover of its own, reads the strategy off the proof,
//! shrinks it and writes the reply's block as a shard. The [`Coordinator`] keeps
//! the `.tb` file (locked, as `tb build qubic` locks it): it lists the replies not
//! stored yet, stores each finished reply's block from its shard in a transaction
//! (its records checked as a reader checks them) and finishes the file as the
//! local build does. Tasks are idempotent (a whole shard is reused, a damaged one
//! proven again); a coordinator killed at any instant resumes from the file and
//! the shards written meanwhile.
//!
//! The replies do not share a proof table as they do in one process, so a
//! distributed strategy can differ from a local one in its moves and counts; both
//! are checked by the same independent walk (`tb verify`).

use super::build::{
    self, BuildSummary, OpenFile, ProvedReply, ReplyOutcome, Slices, prove_reply, root_moves,
};
use super::position::Position;
use super::prover::{Key, Prover, child_classes};
use super::shrink::Shrinker;
use super::stored::{self, GAME, RULES, Record};
use crate::retro::BlockId;
use crate::retro::distributed::TaskOutcome;
use crate::retro::shard::{ShardDir, ShardError, ShardErrorKind, header_for};
use crate::store::{BlockStats, EncodedChunk, StoredChunk};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The identity rows of a strategy build from `start`: what its shards are keyed
/// by (the file's own metadata rows).
pub fn identity(start: Position) -> Vec<(&'static str, String)> {
    vec![
        ("game", GAME.to_string()),
        ("start", start.to_string()),
        ("format_version", stored::FORMAT_VERSION.to_string()),
        ("rules", RULES.to_string()),
    ]
}

/// Where the shards of the build from `start` live under the shared directory.
pub fn shard_dir(shared: &Path, start: Position) -> ShardDir {
    ShardDir::for_identity(shared, &identity(start))
}

/// The block (layer 0, key: the reply's cell) that holds reply `reply`.
fn block_of(reply: u8) -> BlockId {
    BlockId {
        layer: 0,
        key: vec![reply],
    }
}

/// The position after O's reply `reply` to `start` (canonical), or an error when
/// `reply` is not one of the start's reply classes.
fn reply_child(start: Position, reply: u8) -> Result<Key> {
    match child_classes((start.x, start.o))
        .into_iter()
        .find(|&(cell, _)| cell == reply)
    {
        Some((_, child)) => Ok(child),
        None => bail!("{reply} is not one of O's replies to {start} (one cell per class)"),
    }
}

/// What one reply task did.
#[derive(Debug, Clone, Serialize)]
pub struct ReplyTaskReport {
    /// O's reply (a cell of the start).
    pub reply: u8,
    /// Computed, reused (its shard was whole) or recomputed (it was damaged).
    pub outcome: TaskOutcome,
    /// Positions of its strategy (records).
    pub positions: u64,
    /// Strategic moves below the reply (0 when reused: the coordinator reads them).
    pub moves: u64,
    /// df-pn expansions.
    pub expansions: u64,
    /// Bytes of its shard.
    pub shard_bytes: u64,
    /// Seconds of the task.
    pub seconds: f64,
    /// Peak resident memory of the task's process.
    pub peak_rss_bytes: Option<u64>,
}

/// A reply's shard read whole, its coded bytes checked, and its chunk decoded to
/// records checked as a reader checks them: the chunk, its row's statistics and
/// the records.
fn read_reply(
    dir: &ShardDir,
    reply: u8,
) -> Result<(EncodedChunk, BlockStats, Vec<Record>), ShardError> {
    let id = block_of(reply);
    let shard = dir.read_opaque(&id)?;
    let damaged = |why: String| ShardError {
        kind: ShardErrorKind::Damaged,
        block: id.clone(),
        path: dir.path(&id),
        why,
    };
    let header = &shard.header;
    let mut chunks = shard.chunks();
    if chunks.len() != 1 {
        return Err(damaged(format!("{} chunks, a reply has one", chunks.len())));
    }
    let chunk = chunks.pop().expect("one chunk");
    // The length `positions` gives is what the chunk must decode to: as many
    // records as the header says, or an error.
    let records = stored::block_bytes(header.positions)
        .and_then(|len| {
            let stored = StoredChunk::from_shard(
                0,
                &reply.to_string(),
                0,
                (chunk.raw_len as i64, chunk.checksum, chunk.data.clone()),
                i8::MIN..=i8::MAX,
            );
            let raw = stored.decode(len, |_| crate::store::codec::Contexts::default())?;
            let bytes: Vec<u8> = raw.iter().map(|&v| v as u8).collect();
            stored::decode_records(&bytes)
        })
        .map_err(|e| damaged(format!("{e:#}")))?;
    if chunk.checksum != header.digest {
        return Err(damaged("its digest is not its chunk's checksum".into()));
    }
    Ok((chunk, header.stats(), records))
}

/// Runs the task of O's reply `reply` to `start` with `memory` bytes for the
/// prover's tables (three quarters) and the shrinking search (the rest): nothing
/// when the reply's shard under `dir` is whole, else proves it, reads and shrinks
/// (by `shrink`) the strategy and writes the shard. `report` receives progress
/// lines.
pub fn run_reply(
    start: Position,
    reply: u8,
    memory: u64,
    shrink: u32,
    dir: &ShardDir,
    report: &mut dyn FnMut(&str),
) -> Result<ReplyTaskReport> {
    let started = Instant::now();
    let child = reply_child(start, reply)?;
    let mut outcome = TaskOutcome::Computed;
    match read_reply(dir, reply) {
        Ok((_, stats, _)) => {
            return Ok(ReplyTaskReport {
                reply,
                outcome: TaskOutcome::Reused,
                positions: stats.positions,
                moves: 0,
                expansions: 0,
                shard_bytes: std::fs::metadata(dir.path(&block_of(reply))).map_or(0, |m| m.len()),
                seconds: started.elapsed().as_secs_f64(),
                peak_rss_bytes: crate::sys::peak_rss_bytes(),
            });
        }
        Err(e) if e.kind == ShardErrorKind::Damaged => outcome = TaskOutcome::Recomputed,
        Err(_) => {}
    }
    let mut prover = Prover::new(memory / 4 * 3);
    let mut shrinker = Shrinker::new(memory / 4);
    let name = format!("O {reply}");
    let proved = prove_reply(
        &mut prover,
        &mut shrinker,
        child,
        shrink,
        Slices::WHOLE,
        &name,
        report,
    )?;
    let ProvedReply { mut records, moves } =
        proved.context("a reply task has no time limit, yet it stopped")?;
    let (chunk, stats) = stored::encode_block(&mut records, started.elapsed().as_secs_f64())?;
    let id = block_of(reply);
    let header = header_for(
        dir,
        chunk.raw_len as u64,
        &id,
        std::slice::from_ref(&chunk),
        &stats,
    );
    let shard_bytes = dir.write(&header, &[chunk])?;
    Ok(ReplyTaskReport {
        reply,
        outcome,
        positions: stats.positions,
        moves,
        expansions: prover.expansions,
        shard_bytes,
        seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
    })
}

/// A reply task the coordinator hands out.
#[derive(Debug, Clone, Serialize)]
pub struct ReplyTask {
    /// O's reply (a cell of the start).
    pub reply: u8,
    /// Its place among the start's replies (0-based), and their number.
    pub index: usize,
    /// The start's replies.
    pub total: usize,
}

/// The coordinator of a distributed strategy build over its `.tb` file.
pub struct Coordinator {
    file: OpenFile,
    path: PathBuf,
    start: Position,
    dir: ShardDir,
    started: Instant,
    /// Every reply class of the start, in order.
    replies: Vec<u8>,
    /// Outcomes of the replies stored (by earlier runs or this one).
    stored: Vec<ReplyOutcome>,
    resumed: usize,
}

impl Coordinator {
    /// Opens (or creates) `db` for a strategy from `start` (locked while the
    /// coordinator lives), its shards under `shared`.
    pub fn open(db: &Path, start: Position, shared: &Path) -> Result<Coordinator> {
        let file = OpenFile::open(db, start)?;
        let done = file.store.finished_blocks(0)?;
        let replies: Vec<u8> = child_classes((start.x, start.o))
            .into_iter()
            .map(|(cell, _)| cell)
            .collect();
        let mut stored = Vec::new();
        for &reply in &replies {
            if let Some(stats) = done.get(&reply.to_string()) {
                stored.push(file.resumed(reply, stats)?);
            }
        }
        Ok(Coordinator {
            resumed: stored.len(),
            file,
            path: db.to_path_buf(),
            start,
            dir: shard_dir(shared, start),
            started: Instant::now(),
            replies,
            stored,
        })
    }

    /// The replies not stored yet, in the start's order.
    pub fn tasks(&self) -> Vec<ReplyTask> {
        let total = self.replies.len();
        self.replies
            .iter()
            .enumerate()
            .filter(|&(_, &reply)| !self.stored.iter().any(|s| s.reply == reply))
            .map(|(index, &reply)| ReplyTask {
                reply,
                index,
                total,
            })
            .collect()
    }

    /// Stores reply `reply` from the shard its task wrote (checked whole, its
    /// records as a reader checks them) and deletes the shard. A damaged or
    /// missing shard is an error ([`ShardError`] in the chain), the file unchanged.
    pub fn record(&mut self, reply: u8) -> Result<ReplyOutcome> {
        if let Some(done) = self.stored.iter().find(|s| s.reply == reply) {
            return Ok(done.clone());
        }
        reply_child(self.start, reply)?;
        let (chunk, stats, records) = read_reply(&self.dir, reply)?;
        // A count a killed local build left for this block is not this proof's
        // (tasks keep none: a local build then finishes with one proof).
        self.file
            .store
            .delete_meta(&[super::second::expansions_key(reply)])?;
        stored::store_block(&mut self.file.store, reply, chunk, &stats)?;
        let outcome = ReplyOutcome {
            reply,
            proven: true,
            strategic: stats.positions,
            moves: root_moves(&records),
            seconds: stats.seconds,
            resumed: false,
        };
        self.dir.remove(&block_of(reply))?;
        self.stored.push(outcome.clone());
        Ok(outcome)
    }

    /// Whether every reply is stored.
    pub fn is_done(&self) -> bool {
        self.stored.len() == self.replies.len()
    }

    /// Replies stored when the file was opened.
    pub fn resumed_replies(&self) -> usize {
        self.resumed
    }

    /// The build's shard directory.
    pub fn shard_dir(&self) -> &ShardDir {
        &self.dir
    }

    /// Ends the build whose every reply is stored (the file finished as the local
    /// build finishes it, the shard directory deleted) and releases the file.
    pub fn finish(mut self) -> Result<BuildSummary> {
        if !self.is_done() {
            bail!("the build is not finished: replies are left to store");
        }
        // The start's order, as the local build lists them.
        let order = |r: &ReplyOutcome| self.replies.iter().position(|&c| c == r.reply);
        self.stored.sort_by_key(order);
        // (None: the file was finished already, and is left as it is.) Tasks
        // make one proof of each reply: second proofs a killed local build left
        // are not used.
        let unified = self
            .file
            .finish(self.start, &mut self.stored, &self.replies)?;
        drop(self.file);
        self.dir.remove_all()?;
        build::summary(
            &self.path,
            self.start,
            true,
            self.stored,
            0,
            self.started,
            unified,
        )
    }
}
