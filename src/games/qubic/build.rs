//! `tb build qubic`: X's first move, then every O reply (one class per canonical
//! position) proven in turn by the df-pn prover, its strategy read off the proof
//! and stored as one block in its own transaction: a killed build resumes at the
//! first reply not stored. The proof table is shared by the replies of one run
//! (positions reached from several replies are proven once).

use super::checkpoint::{self, Checkpoint};
use super::known::Known;
use super::position::{Position, Side};
use super::prover::child_classes;
use super::prover::{Key, Prover};
use super::second::{self, JobQueue, Next, Proofs, SecondBudget};
use super::shrink::Shrinker;
use super::stored::{self, GAME, OPENING_BLOCK, Record};
use super::strategy::{Strategy, replies_after};
use super::threats::{ForcedSearch, PositionMap, forced_win};
use super::unify::{Unified, unify};
use crate::retro::build::BuildLock;
use crate::store::codec::FAMILY_KEY;
use crate::store::{LayerFinish, LayerStatus, Store};
use crate::units::counted;
use anyhow::{Context, Result, bail, ensure};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Memory for the provers' and the shrinkers' tables when `--memory` is not
/// given (capped by the machine's: [`crate::sys::default_memory`]), and the most
/// a build gives them: the tables' sizes, and so the strategy, are the same on
/// any budget at or above it (a smaller one makes them smaller, and the strategy
/// different, as sound). Measured on the corner opening: 4 GiB gave 2,674
/// strategic moves, 8 GiB 2,742 and 2 GiB 2,766; the count has no trend with the
/// tables' size.
pub const DEFAULT_MEMORY: u64 = 4 << 30;

/// Expansions in a slice of a reply's proof (a progress line after each; about
/// 15 s on one core of the project machine).
const SLICE_EXPANSIONS: u64 = 40_960;

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The file.
    pub path: PathBuf,
    /// Where the strategy starts: a position with O to move (X's first move on
    /// the empty board for the whole game).
    pub start: Position,
    /// Memory for the prover's tables.
    pub memory: u64,
    /// Stop after this many seconds (the replies stored so far stay).
    pub time_limit: Option<f64>,
    /// Each reply's strategy is shrunk: every position whose subtree has at most
    /// `shrink + 1` strategic moves is searched exhaustively for a cheaper move
    /// (0: the strategy as read off the proof).
    pub shrink: u32,
    /// Threads: chains of replies proven side by side (at most
    /// [`MAX_SIDE_BY_SIDE`]), and the unifying's searches (the strategy is the same
    /// on any number).
    pub threads: usize,
    /// Proofs of each reply (see [`Proofs`]).
    pub proofs: Proofs,
    /// Time between two checkpoints of a reply's proof (see [`checkpoint`]).
    pub checkpoint_every: Duration,
    /// Finished strategy files whose positions the proofs take as won (see
    /// [`super::known`]): the pieces of a proof split by hand.
    pub known: Vec<PathBuf>,
}

/// Nodes the shrinking search may spend on one position before it keeps the move
/// it has (measured on the corner opening: with a bound of 3 no position needs it).
const SHRINK_BUDGET: u64 = 1_000_000;

/// One O reply to the first move.
#[derive(Debug, Clone, Serialize)]
pub struct ReplyOutcome {
    /// O's cell, in the canonical position after X's first move.
    pub reply: u8,
    /// Proven (a winning strategy stored).
    pub proven: bool,
    /// Positions stored for it (strategic moves and forced blocks).
    pub strategic: u64,
    /// Strategic moves below it (X's moves other than forced blocks, as a tree).
    pub moves: u64,
    /// Seconds spent (in the run that proved it).
    pub seconds: f64,
    /// Stored by an earlier run.
    pub resumed: bool,
}

/// What a build did.
#[derive(Debug, Clone, Serialize)]
pub struct BuildSummary {
    /// The file.
    pub path: String,
    /// The start (O to move), 64 characters.
    pub start: String,
    /// Whether X's strategy is complete (every reply proven, twice with
    /// `--proofs 2`).
    pub complete: bool,
    /// Distinct positions stored for the whole strategy (the opening included).
    pub strategic: u64,
    /// Of which X's move is a strategic one (not a forced block).
    pub strategic_moves: u64,
    /// Per reply.
    pub replies: Vec<ReplyOutcome>,
    /// df-pn expansions in this run.
    pub expansions: u64,
    /// Seconds of this run.
    pub seconds: f64,
    /// Peak resident memory of the process.
    pub peak_rss_bytes: Option<u64>,
    /// Bytes of the file.
    pub file_bytes: u64,
    /// What the unifying did, when this run finished the file.
    pub unified: Option<Unified>,
}

/// The start a build asks for, and the file name it defaults to: `start` (a
/// position, 64 characters) or X's first move on cell `first` (default 0, the
/// corner) of the empty board.
pub fn start_of(first: Option<u8>, start: Option<&str>) -> Result<(Position, String)> {
    if let Some(text) = start {
        let name: String = text
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        return Ok((Position::parse(text)?, format!("qubic-from-{name}.tb")));
    }
    let first = first.unwrap_or(0);
    ensure!(first < 64, "--first {first}: cells are 0..=63");
    let name = if first == 0 {
        "qubic.tb".to_string()
    } else {
        format!("qubic-{first}.tb")
    };
    Ok((Position::EMPTY.play(first as usize)?, name))
}

/// Refuses a start a strategy cannot begin from: O must be to move, the game not
/// over.
fn check_start(start: Position) -> Result<()> {
    ensure!(
        start.to_move() == Side::O && !start.has_four(Side::X) && !start.has_four(Side::O),
        "a Qubic strategy starts after a move of X: {start} has {} to move{}",
        start.to_move().letter(),
        if start.has_four(Side::X) || start.has_four(Side::O) {
            " and the game is over"
        } else {
            ""
        }
    );
    Ok(())
}

/// A strategy file open for building: locked against other builders, its
/// metadata written (new) or checked to be the same build.
pub(super) struct OpenFile {
    /// The file.
    pub store: Store,
    /// Held while the file is open.
    _lock: BuildLock,
}

impl OpenFile {
    /// Opens (or creates) `path` for a strategy from `start`.
    pub(super) fn open(path: &Path, start: Position) -> Result<OpenFile> {
        check_start(start)?;
        let lock = BuildLock::acquire(path)?;
        let mut store = Store::open_for_build(path, 1 << 20)?;
        check_or_write_meta(&mut store, path, start)?;
        Ok(OpenFile { store, _lock: lock })
    }

    /// The outcome of reply `reply`, stored by an earlier run (`stats` its row).
    pub(super) fn resumed(
        &self,
        reply: u8,
        stats: &crate::store::BlockStats,
    ) -> Result<ReplyOutcome> {
        Ok(ReplyOutcome {
            reply,
            proven: true,
            strategic: stats.positions,
            moves: stored_moves(&self.store, reply, stats)?,
            seconds: stats.seconds,
            resumed: true,
        })
    }

    /// Whether the file is finished (its status `complete`).
    pub(super) fn is_finished(&self) -> Result<bool> {
        Ok(self.store.meta()?.get("status").map(String::as_str) == Some("complete"))
    }

    /// Ends a strategy whose every reply is stored: the replies' strategies made
    /// one ([`unify_replies`], their counts in `replies` updated), the opening's
    /// record (when the start is X's first move), the layer finished, the second
    /// proofs' blocks removed as the file is declared complete (one transaction:
    /// a build killed before it unifies again with them), the file out of WAL
    /// mode. The second proofs of the replies in `unused` are not among the
    /// unifying's choices (removed all the same). A file finished already is
    /// left as it is (rewriting its blocks would leave it unreadable if killed
    /// midway): `None`.
    pub(super) fn finish(
        &mut self,
        start: Position,
        replies: &mut [ReplyOutcome],
        unused: &[u8],
    ) -> Result<Option<Unified>> {
        if self.is_finished()? {
            // A finished file leaves WAL mode (opening it for the build set it).
            self.store.compact()?;
            return Ok(None);
        }
        let store = &mut self.store;
        let (unified, worst, second) = unify_replies(store, start, replies, unused)?;
        if let Some(first) = stored::first_move(start) {
            let mut records = vec![Record {
                // The empty board is its own canonical form: the move is stored as is.
                key: (0, 0),
                cell: first,
                subtree: 1 + replies.iter().map(|r| r.moves as u32).sum::<u32>(),
                // X's first move and O's reply before the longest reply's plies.
                plies: worst.saturating_add(2),
            }];
            stored::write_block(store, OPENING_BLOCK, &mut records, 0.0)?;
        }
        let stats = store.finished_blocks(0)?;
        let mut totals = crate::store::BlockStats::default();
        for (key, s) in &stats {
            if !second.iter().any(|&b| b.to_string() == *key) {
                totals.merge(s);
            }
        }
        store.finish_layer(
            0,
            &LayerFinish {
                status: LayerStatus::Complete,
                stats: totals,
                prune: Vec::new(),
            },
        )?;
        let second: Vec<Vec<u8>> = second.iter().map(|&b| vec![b]).collect();
        // The build's own counts and marks (see `second.rs`) go with them.
        let build_keys: Vec<String> = store
            .meta()?
            .into_keys()
            .filter(|key| second::is_build_key(key))
            .collect();
        store.remove_blocks_and_set_meta(
            0,
            &second,
            &build_keys,
            &[("status", "complete".to_string())],
        )?;
        // A finished file leaves WAL mode (readers then leave no files beside it).
        store.compact()?;
        Ok(Some(unified))
    }
}

/// The stored replies' strategies made one ([`unify`]): the blocks proven apart
/// choose differently where they meet, and the file counts distinct positions.
/// Each block whose records change is written again, in its own transaction:
/// every block stays a sound strategy on its own, so a build killed here is
/// finished by running it again (from the blocks as they are then). Returns
/// what the unifying did, the most plies any reply's strategy needs, and the
/// second proofs' blocks (the caller removes them; those of the replies in
/// `unused` are not read).
fn unify_replies(
    store: &mut Store,
    start: Position,
    replies: &mut [ReplyOutcome],
    unused: &[u8],
) -> Result<(Unified, u8, Vec<u8>)> {
    let done = store.finished_blocks(0)?;
    let mut blocks = Vec::new();
    // The second proofs' blocks (of a build with two): alternatives for the
    // unifying, after the first proofs' blocks.
    let (mut second, mut stored_second) = (Vec::new(), Vec::new());
    for (reply, root) in child_classes((start.x, start.o)) {
        let stats = done
            .get(&reply.to_string())
            .with_context(|| format!("reply {reply} is not stored"))?;
        let mut records = stored::read_block(store, reply, stats.positions as i64)?;
        records.sort_by_key(|r| r.key);
        blocks.push((reply, root, records, stats.seconds));
        let block = proof_block(reply, 1);
        if let Some(stats) = done.get(&block.to_string()) {
            stored_second.push(block);
            if !unused.contains(&reply) {
                let records = stored::read_block(store, block, stats.positions as i64)?;
                second.push((root, records));
            }
        }
    }
    let roots: Vec<(Key, &[Record])> = blocks
        .iter()
        .map(|(_, root, records, _)| (*root, records.as_slice()))
        .chain(
            second
                .iter()
                .map(|(root, records)| (*root, records.as_slice())),
        )
        .collect();
    let (strategies, unified) = unify(&roots);
    // One search for every block's plies: the blocks share most of their fringes
    // (a search per block, side by side, took longer).
    let mut forced = ForcedSearch::new();
    let mut worst = 0u8;
    for ((reply, _, old, seconds), strategy) in blocks.iter().zip(strategies) {
        let mut records = records_of(&strategy, &mut forced);
        records.sort_by_key(|r| r.key);
        worst = records.iter().map(|r| r.plies).fold(worst, u8::max);
        if records != *old {
            stored::write_block(store, *reply, &mut records, *seconds)?;
        }
        if let Some(outcome) = replies.iter_mut().find(|r| r.reply == *reply) {
            outcome.strategic = records.len() as u64;
            outcome.moves = root_moves(&records);
        }
    }
    Ok((unified, worst, stored_second))
}

/// How a reply's proof runs: in slices of expansions, between which it may stop
/// unproven or write a checkpoint.
pub(super) struct Slices<'a> {
    /// Expansions in a slice ([`SLICE_EXPANSIONS`]; fewer in tests).
    pub slice: u64,
    /// The proof stops unproven once this has passed, looked at between slices.
    pub deadline: Option<Instant>,
    /// The proof stops unproven when this answers yes, asked between slices
    /// with the prover's expansions.
    pub give_up: &'a dyn Fn(u64) -> bool,
    /// Between slices: the proof's checkpoint, and the prover's expansions when
    /// the proof began.
    pub checkpoint: Option<(&'a mut Checkpoint, u64)>,
}

impl Slices<'_> {
    /// Never stopped, never checkpointed: the reply is proven whatever it takes.
    pub const WHOLE: Slices<'static> = Slices {
        slice: SLICE_EXPANSIONS,
        deadline: None,
        give_up: &|_| false,
        checkpoint: None,
    };
}

/// A reply's strategy, proven and read off the proof.
pub(super) struct ProvedReply {
    /// Its records (unsorted).
    pub records: Vec<Record>,
    /// Strategic moves below the reply (after shrinking).
    pub moves: u64,
}

/// Proves that X wins after O's reply (`child`: the canonical position after it),
/// in `slices` with a progress line (and maybe a checkpoint) after each, until
/// proven or `slices` stops it; then reads the strategy off the proof and
/// shrinks it by `shrink` (see [`BuildOptions::shrink`]). `None`: not proven
/// before it stopped. An error when O holds (X does not win).
pub(super) fn prove_reply(
    prover: &mut Prover,
    shrinker: &mut Shrinker,
    child: Key,
    shrink: u32,
    mut slices: Slices,
    reply_name: &str,
    report: &mut dyn FnMut(&str),
) -> Result<Option<ProvedReply>> {
    let t = Instant::now();
    // The time limit is looked at between slices only, so that a proof stops
    // where a pause leaves it, and one resumed from that checkpoint is the
    // proof made without a stop (a slice takes seconds).
    prover.set_deadline(None);
    loop {
        // Each slice searches again from the reply with what the table holds.
        // Slices of time made the proof's course (and the strategy read off it)
        // depend on the machine's speed; slices of expansions do not.
        prover.set_pause(Some(slices.slice));
        if prover.prove_key(child) {
            break;
        }
        if !prover.aborted {
            bail!("X does not win after {reply_name}");
        }
        if passed(slices.deadline) {
            report(&format!(
                "{reply_name}: not proven within the time limit ({} expansions)",
                prover.expansions
            ));
            if let Some((checkpoint, began)) = slices.checkpoint.as_mut() {
                checkpoint.save(prover, *began, &mut |line| {
                    report(&format!("{reply_name}: {line}"))
                });
            }
            return Ok(None);
        }
        if (slices.give_up)(prover.expansions) {
            report(&format!(
                "{reply_name}: given up after {} expansions: the chain's two proofs would not take fewer expansions than the longest first proof",
                prover.expansions
            ));
            return Ok(None);
        }
        // The reply's numbers tell how far the proof is: the leaves still to
        // prove for X, and to disprove (O's way out).
        let numbers = prover.last_numbers;
        let dropped = match prover.dropped_at_bound {
            0 => String::new(),
            n => format!(", {n} positions dropped at the memory's bound"),
        };
        report(&format!(
            "{reply_name}: {:.0} s, {} expansions, {} positions in the table, proof number {} (disproof {}){dropped}",
            t.elapsed().as_secs_f64(),
            prover.expansions,
            prover.table_len(),
            numbers.pn,
            numbers.dn
        ));
        if let Some((checkpoint, began)) = slices.checkpoint.as_mut() {
            checkpoint.after_slice(prover, *began, &mut |line| {
                report(&format!("{reply_name}: {line}"))
            });
        }
    }
    // Reading the strategy off the proof may prove positions the table lost
    // again: never cut short (the prover has no deadline here, see above).
    prover.set_pause(None);
    let proven_in = t.elapsed().as_secs_f64();
    let mut strategy = Strategy::extract(prover, child)?;
    let mut moves = strategy.cost_below(child);
    if shrink > 0 {
        let (smaller, stats) = shrinker.shrink(
            &strategy,
            child,
            shrink,
            SHRINK_BUDGET,
            prover.forced_search(),
        );
        report(&format!(
            "{reply_name}: proven in {proven_in:.1} s; shrunk from {} to {} strategic moves in {:.1} s ({} replaced, {} over budget, {} nodes)",
            stats.cost_before,
            stats.cost_after,
            t.elapsed().as_secs_f64() - proven_in,
            counted(stats.replaced as usize, "move", "moves"),
            counted(stats.gave_up as usize, "search", "searches"),
            stats.nodes
        ));
        (strategy, moves) = (smaller, stats.cost_after);
    }
    Ok(Some(ProvedReply {
        records: records_of(&strategy, prover.forced_search()),
        moves,
    }))
}

/// The summary of a build of `path` from `start` that ran since `started`: the
/// strategy's counts read from the file when it is complete.
pub(super) fn summary(
    path: &Path,
    start: Position,
    complete: bool,
    replies: Vec<ReplyOutcome>,
    expansions: u64,
    started: Instant,
    unified: Option<Unified>,
) -> Result<BuildSummary> {
    let (strategic, strategic_moves) = if complete {
        let info = super::report::info(&stored::StrategyFile::open(path)?);
        (info.strategic as u64, info.strategic_moves as u64)
    } else {
        (0, 0)
    };
    Ok(BuildSummary {
        path: path.display().to_string(),
        start: start.to_string(),
        complete,
        strategic,
        strategic_moves,
        replies,
        expansions,
        seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        file_bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        unified,
    })
}

/// Most chains proven side by side: the memory is shared out between this many
/// chains at most (a chain's tables get the same share on any number of
/// threads, so its proof is the same).
pub const MAX_SIDE_BY_SIDE: usize = 2;

/// The replies' chains: `classes` (the start's replies, in order) grouped by
/// transposition, each chain in the replies' order, the chains in the order of
/// their first reply. Two replies are in one chain when an X move after each
/// reaches the same canonical position (the cheapest sign that their proofs
/// meet: a reply after its twin took seconds where alone it took minutes). One
/// prover proves a chain's replies in turn, its table shared by them; chains
/// share nothing, so they can be proven side by side and their strategies do
/// not depend on which chain runs when. The corner opening has two: replies 1,
/// 5, 6, 7, 23, 27, 31 and replies 3, 15, 21, 22, 63.
pub fn chains(classes: &[(u8, Key)]) -> Vec<Vec<usize>> {
    let mut chain_of: Vec<usize> = (0..classes.len()).collect();
    fn root(chain_of: &mut [usize], mut i: usize) -> usize {
        while chain_of[i] != i {
            chain_of[i] = chain_of[chain_of[i]];
            i = chain_of[i];
        }
        i
    }
    let mut first_seen: PositionMap<usize> = PositionMap::default();
    for (i, &(_, child)) in classes.iter().enumerate() {
        for (_, grandchild) in child_classes(child) {
            let j = *first_seen.entry(grandchild).or_insert(i);
            let (a, b) = (root(&mut chain_of, i), root(&mut chain_of, j));
            // The smaller index is the root: a chain is named by its first reply.
            chain_of[a.max(b)] = a.min(b);
        }
    }
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut index_of = vec![usize::MAX; classes.len()];
    for i in 0..classes.len() {
        let r = root(&mut chain_of, i);
        if index_of[r] == usize::MAX {
            index_of[r] = chains.len();
            chains.push(Vec::new());
        }
        chains[index_of[r]].push(i);
    }
    chains
}

/// What a chain's worker tells the thread that keeps the file.
enum Event {
    /// A progress line.
    Line(String),
    /// Reply `index` (of the start's classes) proven by proof `proof` (0: the
    /// first): its strategy, the seconds and the expansions it took, and the
    /// chain prover's expansions and table size after it.
    Proved {
        chain: usize,
        index: usize,
        proof: u32,
        proved: ProvedReply,
        seconds: f64,
        spent: u64,
        expansions: u64,
        table: usize,
    },
    /// Reply `index` not proven in time by proof `proof` (or, a second proof,
    /// given up, `given_up`: it could not be kept).
    Unproven {
        chain: usize,
        index: usize,
        proof: u32,
        seconds: f64,
        given_up: bool,
    },
    /// X does not win after a reply (the build fails).
    Failed(anyhow::Error),
    /// A chain's prover is done: its expansions in all.
    Expansions(u64),
}

/// Builds (or resumes) a strategy file. `report` receives progress lines.
pub fn build(options: &BuildOptions, report: &mut dyn FnMut(&str)) -> Result<BuildSummary> {
    let classes = child_classes((options.start.x, options.start.o));
    let chains = chains(&classes);
    build_chains(options, &chains, report)
}

/// The block that holds proof `proof` (0: the first) of reply `reply` while the
/// file is built (the first proof's is the reply's own).
fn proof_block(reply: u8, proof: u32) -> u8 {
    if proof == 0 {
        reply
    } else {
        stored::SECOND_PROOF_BLOCKS + reply
    }
}

/// Reads the `--known` files (each checked whole first, see [`Known::load`]).
fn load_known(
    paths: &[PathBuf],
    report: &mut dyn FnMut(&str),
) -> Result<Option<Arc<PositionMap<u8>>>> {
    if paths.is_empty() {
        return Ok(None);
    }
    let (known, files) = Known::load(paths)?;
    for file in &files {
        report(&format!(
            "known: {} (from {}): {} strategic positions, checked in {:.1} s",
            file.path.display(),
            file.start,
            file.positions,
            file.seconds
        ));
    }
    Ok(known.moves())
}

/// One proof of one chain: what a worker of [`build_chains`] takes.
struct ChainJob<'a> {
    /// The chain's place in the build's chains.
    number: usize,
    /// The chain's replies (indices of the start's reply classes).
    chain: &'a [usize],
    /// Which proof (0: the first).
    proof: u32,
}

/// What the file tells of the chains' proofs when a build starts.
struct StoredProofs {
    /// Per proof, per reply class: stored (by an earlier run).
    stored: Vec<Vec<bool>>,
    /// Per proof, per chain: the expansions its stored blocks took, `None` if a
    /// stored block has no count (stored by an older `tb` or by tasks).
    spent: Vec<Vec<Option<u64>>>,
    /// Per chain: its second proof given up by an earlier run.
    given_up: Vec<bool>,
}

impl StoredProofs {
    /// Reads what `store` holds of `chains`' proofs (`proofs` of each reply;
    /// `done` its finished blocks).
    fn read(
        store: &Store,
        done: &std::collections::BTreeMap<String, crate::store::BlockStats>,
        chains: &[Vec<usize>],
        classes: &[(u8, Key)],
        proofs: Proofs,
    ) -> Result<StoredProofs> {
        let meta = store.meta()?;
        let counts = second::block_expansions(&meta);
        let stored: Vec<Vec<bool>> = (0..proofs.max_per_reply())
            .map(|proof| {
                classes
                    .iter()
                    .map(|&(reply, _)| done.contains_key(&proof_block(reply, proof).to_string()))
                    .collect()
            })
            .collect();
        let spent = (0..proofs.max_per_reply())
            .map(|proof| {
                chains
                    .iter()
                    .map(|chain| {
                        chain
                            .iter()
                            .filter(|&&i| stored[proof as usize][i])
                            .map(|&i| counts.get(&proof_block(classes[i].0, proof)).copied())
                            .try_fold(0u64, |sum, count| Some(sum.saturating_add(count?)))
                    })
                    .collect()
            })
            .collect();
        let given_up = chains
            .iter()
            .map(|chain| meta.contains_key(&second::given_up_key(classes[chain[0]].0)))
            .collect();
        Ok(StoredProofs {
            stored,
            spent,
            given_up,
        })
    }
}

/// [`build`] with the replies grouped into `chains` (indices of the start's
/// reply classes, see [`chains`]): each chain proven in turn by a prover of its
/// own, up to `options.threads` chains side by side (at most
/// [`MAX_SIDE_BY_SIDE`]), and again by a prover that breaks ties the other way
/// for a second proof (`options.proofs`, see [`Proofs`]). Each reply is stored
/// as soon as it is proven (a killed build loses the replies being proven); the
/// strategy does not depend on the number of threads, unless a proof's table
/// reaches its bound (its share of the memory among the provers at once: see
/// [`Prover::set_table_bound`]).
pub(super) fn build_chains(
    options: &BuildOptions,
    chains: &[Vec<usize>],
    report: &mut dyn FnMut(&str),
) -> Result<BuildSummary> {
    let start = options.start;
    let started = Instant::now();
    let deadline = options
        .time_limit
        .map(|l| started + std::time::Duration::from_secs_f64(l.max(0.0)));
    let mut file = OpenFile::open(&options.path, start)?;
    let done = file.store.finished_blocks(0)?;
    // Replies are named by their cells in the start's own cells.
    let classes = child_classes((start.x, start.o));
    let total = classes.len();
    let mut replies: Vec<Option<ReplyOutcome>> = vec![None; total];
    for (index, &(reply, _)) in classes.iter().enumerate() {
        if let Some(stats) = done.get(&reply.to_string()) {
            report(&format!(
                "{}: resumed, {} positions stored",
                reply_name(reply, index, total),
                stats.positions
            ));
            replies[index] = Some(file.resumed(reply, stats)?);
        }
    }
    // A finished file is left as it is: its blocks are one strategy already, and
    // rewriting them would leave a finished file half rewritten if killed.
    if file.is_finished()? {
        report("the strategy is complete already: nothing to do");
        file.finish(start, &mut [], &[])?;
        remove_all_checkpoints(&options.path, &classes, report);
        drop(file);
        let replies = replies.into_iter().flatten().collect();
        return summary(&options.path, start, true, replies, 0, started, None);
    }
    let known = load_known(&options.known, report)?;
    let mut proofs = options.proofs;
    let before = StoredProofs::read(&file.store, &done, chains, &classes, proofs)?;
    // First proofs stored without their counts (by an older `tb`, or by tasks):
    // `auto` cannot weigh the second proofs, so the build makes none.
    if proofs == Proofs::Auto && before.spent[0].iter().any(Option::is_none) {
        report("the stored first proofs have no expansion counts: one proof of each reply");
        proofs = Proofs::One;
    }
    let stored = &before.stored;
    let mut first_spent: Vec<u64> = before.spent[0].iter().map(|s| s.unwrap_or(0)).collect();
    // A second proof stored without its count is never kept.
    let mut second_spent: Vec<Option<u64>> = match before.spent.get(1) {
        Some(spent) => spent.clone(),
        None => vec![Some(0); chains.len()],
    };
    let mut given_up = before.given_up.clone();
    let all_first_stored = stored[0].iter().all(|&s| s);
    let budget = SecondBudget::new(
        &first_spent
            .iter()
            .zip(&second_spent)
            .map(|(f, s)| f.saturating_add(s.unwrap_or(0)))
            .collect::<Vec<u64>>(),
        all_first_stored.then(|| second::longest(&first_spent)),
    );
    // The proofs still to make, first proofs first. With two proofs, the second
    // proofs in the chains' reverse order: a worker done with its first proof
    // takes the second proof of a chain still being proven, likely the longer
    // one (on the corner opening the chain of reply 21, which bounds the wall
    // time). With `auto`, in the chains' order, each once its first proof is
    // made (`second::JobQueue`): on as many workers as chains, a worker done
    // with its chain's first proof proves it again while the longest is still
    // proven. And the memory each chain's prover and shrinker
    // get: the same share whatever the threads and whatever the budget above the
    // default.
    let jobs = |proof: u32| {
        chains
            .iter()
            .enumerate()
            .map(move |(number, chain)| ChainJob {
                number,
                chain,
                proof,
            })
    };
    let mut todo: Vec<ChainJob> = match proofs {
        Proofs::One => jobs(0).collect(),
        Proofs::Two => jobs(0).chain(jobs(1).rev()).collect(),
        Proofs::Auto => jobs(0).chain(jobs(1)).collect(),
    };
    todo.retain(|job| {
        // (A second proof stored in part without its counts can never be kept.)
        let second_done = proofs == Proofs::Auto
            && job.proof == 1
            && (given_up[job.number]
                || budget.exceeded(job.number, 0)
                || second_spent[job.number].is_none());
        job.chain.iter().any(|&i| !stored[job.proof as usize][i]) && !second_done
    });
    let shares = chains.len().clamp(1, MAX_SIDE_BY_SIDE) as u64;
    let memory = options.memory.min(DEFAULT_MEMORY) / shares;
    // At most as many workers as memory shares: a chain proven twice runs its
    // proofs one after the other.
    let workers = options
        .threads
        .clamp(1, MAX_SIDE_BY_SIDE)
        .min(shares as usize)
        .min(todo.len().max(1));
    let queue = Mutex::new(JobQueue::new(
        todo.iter().map(|job| (job.number, job.proof)).collect(),
        chains
            .iter()
            .map(|chain| chain.iter().all(|&i| stored[0][i]))
            .collect(),
        proofs == Proofs::Auto,
    ));
    let stop = AtomicBool::new(false);
    // Provers at once: with `auto` a chain's second proof waits for its first,
    // so one per chain left at most.
    let at_once = if proofs == Proofs::Auto {
        let chains_left: std::collections::BTreeSet<usize> =
            todo.iter().map(|job| job.number).collect();
        workers.min(chains_left.len())
    } else {
        workers
    }
    .max(1) as u64;
    let work = ChainWork {
        options,
        classes: &classes,
        stored,
        stop: &stop,
        memory,
        table_bound: options.memory / at_once / 4 * 3,
        deadline,
        budget: (proofs == Proofs::Auto).then_some(&budget),
        known,
    };
    let (tx, rx) = std::sync::mpsc::channel::<Event>();
    let mut expansions = 0;
    let mut failure = None;
    // Proofs of replies not stored yet, first and second.
    let mut missing_first = stored[0].iter().filter(|&&s| !s).count();
    let mut missing_second = stored
        .get(1)
        .map_or(0, |s| s.iter().filter(|&&s| !s).count());
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (queue, todo, work) = (&queue, &todo, &work);
            scope.spawn(move || {
                loop {
                    let late = passed(work.deadline);
                    if work.stop.load(Ordering::Relaxed) || late {
                        break;
                    }
                    let next = queue.lock().expect("no worker panics").take();
                    let c = match next {
                        Next::Take(c) => c,
                        Next::Wait => {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            continue;
                        }
                        Next::Done => break,
                    };
                    // A first proof ends its chain's wait even if it panics (a
                    // worker waiting on it would hold the build open for ever):
                    // the build then stops.
                    let _made = (todo[c].proof == 0).then(|| FirstProofEnds {
                        queue,
                        chain: todo[c].number,
                        stop: work.stop,
                    });
                    work.prove_chain(&todo[c], &tx);
                }
            });
        }
        drop(tx);
        // This thread keeps the file: each reply stored in its own transaction
        // as it comes.
        for event in rx {
            match event {
                Event::Line(line) => report(&line),
                Event::Proved {
                    chain,
                    index,
                    proof,
                    proved: ProvedReply { mut records, moves },
                    seconds,
                    spent,
                    expansions,
                    table,
                } => {
                    let reply = classes[index].0;
                    let block = proof_block(reply, proof);
                    // The count first: a kill between leaves it for a block
                    // never stored (and counted again when it is).
                    file.store
                        .set_meta(&[(&second::expansions_key(block), spent.to_string())])?;
                    stored::write_block(&mut file.store, block, &mut records, seconds)?;
                    // The reply is stored: its proof's checkpoint is done with.
                    remove_checkpoints(&options.path, &[(reply, proof)], report);
                    budget.add(chain, spent);
                    if proof == 0 {
                        first_spent[chain] = first_spent[chain].saturating_add(spent);
                        missing_first -= 1;
                        if missing_first == 0 {
                            budget.set_longest_first(second::longest(&first_spent));
                        }
                    } else {
                        second_spent[chain] = second_spent[chain].map(|s| s.saturating_add(spent));
                        missing_second -= 1;
                    }
                    report(&format!(
                        "{}: stored in {seconds:.1} s: {} positions, {moves} strategic moves ({expansions} expansions so far in its chain, table {table})",
                        proof_name(reply, index, total, proof),
                        records.len(),
                    ));
                    if proof == 0 {
                        replies[index] = Some(ReplyOutcome {
                            reply,
                            proven: true,
                            strategic: records.len() as u64,
                            moves,
                            seconds,
                            resumed: false,
                        });
                    }
                }
                Event::Unproven {
                    chain,
                    index,
                    proof,
                    seconds,
                    given_up: gave_up,
                } => {
                    if gave_up {
                        // Kept in the file: a resumed build does not prove it again.
                        let first_reply = classes[chains[chain][0]].0;
                        file.store
                            .set_meta(&[(&second::given_up_key(first_reply), "1".to_string())])?;
                        given_up[chain] = true;
                    }
                    if proof == 0 {
                        replies[index] = Some(ReplyOutcome {
                            reply: classes[index].0,
                            proven: false,
                            strategic: 0,
                            moves: 0,
                            seconds,
                            resumed: false,
                        });
                    }
                }
                Event::Failed(e) => {
                    failure.get_or_insert(e);
                }
                Event::Expansions(e) => expansions += e,
            }
        }
        Ok(())
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    // Per chain, whether every reply's second proof is stored, and its count
    // then (`None` without one).
    let now_stored = file.store.finished_blocks(0)?;
    let whole: Vec<bool> = chains
        .iter()
        .map(|chain| {
            proofs != Proofs::One
                && chain
                    .iter()
                    .all(|&i| now_stored.contains_key(&proof_block(classes[i].0, 1).to_string()))
        })
        .collect();
    let second_whole: Vec<Option<u64>> = (0..chains.len())
        .map(|c| second_spent[c].filter(|_| whole[c]))
        .collect();
    let kept = match proofs {
        Proofs::One => vec![false; chains.len()],
        Proofs::Two => vec![true; chains.len()],
        Proofs::Auto => second::kept_second_proofs(&first_spent, &second_whole),
    };
    // Complete: every first proof, and every second proof the build keeps
    // (with `auto`, a second proof that cannot be kept is done with).
    let complete = missing_first == 0
        && match proofs {
            Proofs::One => true,
            Proofs::Two => missing_second == 0,
            Proofs::Auto => (0..chains.len()).all(|c| {
                whole[c] || given_up[c] || budget.exceeded(c, 0) || second_spent[c].is_none()
            }),
        };
    // The replies in the start's order; those never reached (after a reply not
    // proven in time) are left out.
    let mut replies: Vec<ReplyOutcome> = replies.into_iter().flatten().collect();
    let mut unified = None;
    if complete {
        if proofs == Proofs::Auto {
            report(&auto_decision(
                chains,
                &classes,
                &first_spent,
                &second_whole,
                &kept,
            ));
        }
        let unused: Vec<u8> = chains
            .iter()
            .zip(&kept)
            .filter(|&(_, &keep)| !keep)
            .flat_map(|(chain, _)| chain.iter().map(|&i| classes[i].0))
            .collect();
        let t = Instant::now();
        // The unifying's searches run on `--threads` threads too.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads.max(1))
            .build()?;
        let made = pool
            .install(|| file.finish(start, &mut replies, &unused))?
            .context("the file was finished by another build meanwhile")?;
        report(&format!(
            "the replies' strategies made one in {:.1} s: {} -> {} strategic positions ({} moves found that reach only positions held or forced wins)",
            t.elapsed().as_secs_f64(),
            made.before,
            made.after,
            made.free_moves
        ));
        unified = Some(made);
        remove_all_checkpoints(&options.path, &classes, report);
    }
    // Closing the file checkpoints its WAL: the size in the summary is the file's.
    drop(file);
    summary(
        &options.path,
        start,
        complete,
        replies,
        expansions,
        started,
        unified,
    )
}

/// Whether a time limit `deadline` (None: none) has passed.
fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Marks a chain's first proof made when its worker is done with it, however
/// it ends; and stops the build if it ends in a panic.
struct FirstProofEnds<'a> {
    queue: &'a Mutex<JobQueue>,
    chain: usize,
    stop: &'a AtomicBool,
}

impl Drop for FirstProofEnds<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
        }
        // (No worker panics while it holds the lock, so it is never poisoned.)
        if let Ok(mut queue) = self.queue.lock() {
            queue.first_made(self.chain);
        }
    }
}

/// Removes the checkpoints of `proofs` (reply, proof) of the build of `path`;
/// one that cannot be removed is said in `report` (a file left over does no
/// harm: a build reads only the checkpoint of a reply it proves).
fn remove_checkpoints(path: &Path, proofs: &[(u8, u32)], report: &mut dyn FnMut(&str)) {
    for &(reply, proof) in proofs {
        if let Err(e) = checkpoint::remove(&checkpoint::path(path, reply, proof)) {
            report(&format!("{e:#}"));
        }
    }
}

/// Removes every checkpoint of the build of `path` (whose replies are
/// `classes`), first and second proofs: the file is finished.
fn remove_all_checkpoints(path: &Path, classes: &[(u8, Key)], report: &mut dyn FnMut(&str)) {
    let proofs: Vec<(u8, u32)> = classes
        .iter()
        .flat_map(|&(reply, _)| [(reply, 0), (reply, 1)])
        .collect();
    remove_checkpoints(path, &proofs, report);
}

/// The progress line that says which chains' second proofs `auto` kept
/// (`kept`), with each chain's expansions (named by its first reply).
fn auto_decision(
    chains: &[Vec<usize>],
    classes: &[(u8, Key)],
    first: &[u64],
    second: &[Option<u64>],
    kept: &[bool],
) -> String {
    let named = |keep: bool| {
        let named: Vec<String> = (0..chains.len())
            .filter(|&c| kept[c] == keep)
            .map(|c| {
                let reply = classes[chains[c][0]].0;
                match second[c] {
                    Some(s) => format!("O {reply} ({} + {s} expansions)", first[c]),
                    None => format!("O {reply} ({} expansions, second proof given up)", first[c]),
                }
            })
            .collect();
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(", ")
        }
    };
    format!(
        "second proofs kept for the chains of {}; not for {} (a chain's two proofs must take fewer expansions than the longest first proof, {})",
        named(true),
        named(false),
        second::longest(first)
    )
}

/// What every worker of [`build_chains`] shares.
struct ChainWork<'a> {
    options: &'a BuildOptions,
    /// The start's reply classes.
    classes: &'a [(u8, Key)],
    /// Per proof, per class: stored already (by an earlier run).
    stored: &'a [Vec<bool>],
    /// Set when a reply is not proven (a failed build): no worker starts another.
    stop: &'a AtomicBool,
    /// Memory of each chain's prover and shrinker together (either proof's).
    memory: u64,
    /// The most memory a prover's table may take when its proof's own
    /// positions outgrow its share ([`Prover::set_table_bound`]): three
    /// quarters of `--memory`'s share among the provers at once.
    table_bound: u64,
    deadline: Option<Instant>,
    /// With [`Proofs::Auto`]: when a second proof is given up.
    budget: Option<&'a SecondBudget>,
    /// Positions taken as won ([`BuildOptions::known`]).
    known: Option<Arc<PositionMap<u8>>>,
}

impl ChainWork<'_> {
    /// Proves the replies of `job`'s chain not stored yet with a prover and a
    /// shrinker of its own (a second proof's breaks ties the other way), sending each
    /// result to `tx`; stops at the first reply not proven (and at a failure,
    /// after setting `stop`), then sends its prover's expansions.
    fn prove_chain(&self, job: &ChainJob, tx: &Sender<Event>) {
        let total = self.classes.len();
        let mut prover = if job.proof == 0 {
            Prover::new(self.memory / 4 * 3)
        } else {
            Prover::with_ties_to_last(self.memory / 4 * 3)
        };
        prover.set_table_bound(self.table_bound);
        prover.set_known(self.known.clone());
        let mut shrinker = Shrinker::new(self.memory / 4);
        for &index in job.chain {
            if self.stored[job.proof as usize][index] {
                continue;
            }
            // Past the time limit no reply is begun (a reply's proof looks at
            // it between its slices only).
            if self.stop.load(Ordering::Relaxed) || passed(self.deadline) {
                break;
            }
            let (reply, child) = self.classes[index];
            let name = proof_name(reply, index, total, job.proof);
            // A second proof with `auto` stops once it cannot be kept: before a
            // reply, and between the slices of its proof.
            let budget = self.budget.filter(|_| job.proof == 1);
            if budget.is_some_and(|b| b.exceeded(job.number, 0)) {
                let _ = tx.send(Event::Line(format!(
                    "{name}: given up before its proof: the chain's two proofs would not take fewer expansions than the longest first proof"
                )));
                let _ = tx.send(Event::Unproven {
                    chain: job.number,
                    index,
                    proof: job.proof,
                    seconds: 0.0,
                    given_up: true,
                });
                break;
            }
            let _ = tx.send(Event::Line(format!("{name}: proving ...")));
            // Where a checkpoint of this proof was left, the proof goes on from it.
            let mut checkpoint = Checkpoint::new(
                checkpoint::path(&self.options.path, reply, job.proof),
                child,
                job.proof,
                self.options.checkpoint_every,
            );
            let before = checkpoint
                .resume(&mut prover, &mut |line| {
                    let _ = tx.send(Event::Line(format!("{name}: {line}")));
                })
                .unwrap_or(prover.expansions);
            let give_up = |expansions: u64| {
                budget.is_some_and(|b| b.exceeded(job.number, expansions - before))
            };
            let t = Instant::now();
            let proved = prove_reply(
                &mut prover,
                &mut shrinker,
                child,
                self.options.shrink,
                Slices {
                    slice: SLICE_EXPANSIONS,
                    deadline: self.deadline,
                    give_up: &give_up,
                    checkpoint: Some((&mut checkpoint, before)),
                },
                &name,
                &mut |line| {
                    let _ = tx.send(Event::Line(line.to_string()));
                },
            );
            let seconds = t.elapsed().as_secs_f64();
            let event = match proved {
                Ok(Some(proved)) => Event::Proved {
                    chain: job.number,
                    index,
                    proof: job.proof,
                    proved,
                    seconds,
                    spent: prover.expansions - before,
                    expansions: prover.expansions,
                    table: prover.table_len(),
                },
                Ok(None) => Event::Unproven {
                    chain: job.number,
                    index,
                    proof: job.proof,
                    seconds,
                    given_up: give_up(prover.expansions),
                },
                Err(e) => {
                    self.stop.store(true, Ordering::Relaxed);
                    Event::Failed(e)
                }
            };
            let last = !matches!(event, Event::Proved { .. });
            let _ = tx.send(event);
            if last {
                break;
            }
        }
        let _ = tx.send(Event::Expansions(prover.expansions));
    }
}

/// How progress lines name proof `proof` of reply `reply` (see [`reply_name`]):
/// "O 5 (3 of 7)", "O 5 (3 of 7), second proof".
fn proof_name(reply: u8, index: usize, total: usize, proof: u32) -> String {
    let name = reply_name(reply, index, total);
    if proof == 0 {
        name
    } else {
        format!("{name}, second proof")
    }
}

/// How progress lines name reply `reply`, the `index`th of `total`: "O 5 (3 of 7)".
fn reply_name(reply: u8, index: usize, total: usize) -> String {
    format!("O {reply} ({} of {total})", index + 1)
}

/// Strategic moves below a stored reply: its root's subtree (the root is the
/// record of the canonical position after the reply).
fn stored_moves(store: &Store, reply: u8, stats: &crate::store::BlockStats) -> Result<u64> {
    Ok(root_moves(&stored::read_block(
        store,
        reply,
        stats.positions as i64,
    )?))
}

/// Strategic moves below a reply whose strategy is `records`: its root's subtree
/// (the root is the record with the fewest stones, the position after the reply).
pub(super) fn root_moves(records: &[Record]) -> u64 {
    records
        .iter()
        .min_by_key(|r| (r.key.0 | r.key.1).count_ones())
        .map_or(0, |r| u64::from(r.subtree))
}

/// The records of a strategy: subtree sizes and plies under the chosen moves,
/// the fringe's forced wins searched with `forced` (the prover's search, whose
/// caches know most of them: a search of their own allocated and filled a table
/// per reply).
fn records_of(strategy: &Strategy, forced: &mut ForcedSearch) -> Vec<Record> {
    let mut plies = PositionMap::default();
    strategy
        .choices
        .iter()
        .map(|(&key, choice)| Record {
            key,
            cell: choice.cell,
            subtree: choice.subtree.min(u32::MAX as u64) as u32,
            plies: plies_of(strategy, key, forced, &mut plies),
        })
        .collect()
}

/// Plies to X's four from a position of the strategy (X to move) against the
/// longest defence: a forced win's length, or X's move, O's reply and the rest.
fn plies_of(
    strategy: &Strategy,
    key: Key,
    forced: &mut ForcedSearch,
    memo: &mut PositionMap<u8>,
) -> u8 {
    if let Some(&p) = memo.get(&key) {
        return p;
    }
    let p = match strategy.choices.get(&key) {
        None => forced_win(forced, key.0, key.1).map_or(0, |(_, p)| p as u8),
        Some(choice) => {
            let mut worst = 0u8;
            for child in replies_after(key, choice.cell) {
                worst = worst.max(1 + plies_of(strategy, child, forced, memo));
            }
            1 + worst
        }
    };
    memo.insert(key, p);
    p
}

/// A new file gets the game's metadata; an existing one must be the same build.
fn check_or_write_meta(store: &mut Store, path: &Path, start: Position) -> Result<()> {
    let meta = store.meta()?;
    match meta.get("game") {
        None => store.set_meta(&[
            ("game", GAME.to_string()),
            ("start", start.to_string()),
            ("format_version", stored::FORMAT_VERSION.to_string()),
            (FAMILY_KEY, stored::CODINGS.name().to_string()),
            ("status", "building".to_string()),
            ("rules", stored::RULES.to_string()),
        ]),
        Some(g) if g == GAME => {
            let stored_start = meta.get("start").cloned().unwrap_or_default();
            ensure!(
                stored_start == start.to_string(),
                "{} holds a strategy from {stored_start}, not from {start}",
                path.display()
            );
            Ok(())
        }
        Some(other) => bail!("{} holds the game `{other}`, not qubic", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block of a finished file, its records sorted: the strategy as
    /// stored.
    fn stored_strategy(path: &Path) -> Vec<(u8, Vec<Record>)> {
        let file = stored::StrategyFile::open(path).unwrap();
        let mut blocks: Vec<(u8, Vec<Record>)> = file
            .blocks
            .iter()
            .map(|b| {
                let mut records: Vec<Record> = b.records.values().copied().collect();
                records.sort_by_key(|r| r.key);
                (b.key, records)
            })
            .collect();
        blocks.sort_by_key(|b| b.0);
        blocks
    }

    /// A test build of `start` into `path`: 512 MiB, shrunk with bound 3.
    fn test_options(
        path: PathBuf,
        start: Position,
        threads: usize,
        proofs: Proofs,
    ) -> BuildOptions {
        BuildOptions {
            path,
            start,
            memory: 512 << 20,
            time_limit: None,
            shrink: 3,
            threads,
            proofs,
            checkpoint_every: checkpoint::DEFAULT_EVERY,
            known: Vec::new(),
        }
    }

    /// A chain whose time is up begins no further reply: its prover stops
    /// before the first (a reply's proof looks at the clock between its
    /// slices only, and this start's replies are proven within one, so a
    /// chain let on would prove them all).
    #[test]
    fn a_chain_past_its_time_limit_begins_no_reply() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = test_options(dir.path().join("late.tb"), start, 1, Proofs::One);
        let classes = child_classes((start.x, start.o));
        let chain: Vec<usize> = (0..classes.len()).collect();
        let stored = vec![vec![false; classes.len()]];
        let stop = AtomicBool::new(false);
        let proven = |deadline: Option<Instant>| {
            let work = ChainWork {
                options: &options,
                classes: &classes,
                stored: &stored,
                stop: &stop,
                memory: 512 << 20,
                table_bound: 512 << 20,
                deadline,
                budget: None,
                known: None,
            };
            let (tx, rx) = std::sync::mpsc::channel();
            let job = ChainJob {
                number: 0,
                chain: &chain,
                proof: 0,
            };
            work.prove_chain(&job, &tx);
            drop(tx);
            rx.iter()
                .filter(|e| matches!(e, Event::Proved { .. }))
                .count()
        };
        assert_eq!(proven(Some(Instant::now())), 0);
        assert_eq!(proven(None), classes.len());
    }

    /// Chains of replies proven side by side store the strategy one thread
    /// stores, reply for reply, with the same expansions: a chain's proof
    /// depends on its replies alone.
    #[test]
    fn chains_side_by_side_prove_what_one_thread_proves() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let chained = chains(&child_classes((start.x, start.o)));
        assert!(chained.len() >= 2, "one chain: the test tests nothing");
        let dir = tempfile::tempdir().unwrap();
        let run = |threads: usize| {
            let options = test_options(
                dir.path().join(format!("{threads}.tb")),
                start,
                threads,
                Proofs::One,
            );
            let summary = build(&options, &mut |_| {}).unwrap();
            assert!(summary.complete);
            (stored_strategy(&options.path), summary.expansions)
        };
        let (one, one_expansions) = run(1);
        let (two, two_expansions) = run(2);
        assert_eq!(two_expansions, one_expansions);
        assert_eq!(two, one);
    }

    /// A reply's proof stopped between two slices (as a kill leaves it: the
    /// checkpoint of a slice before) and carried on from its checkpoint by a new
    /// prover is the proof made without a stop: the same expansions, the same
    /// strategy. A checkpoint of another budget, or damaged, is not used.
    #[test]
    fn a_proof_resumed_from_its_checkpoint_is_the_proof_made_without_a_stop() {
        let start = Position::parse("0-63-21").unwrap();
        // O 1: about 12,000 expansions, a dozen slices of 1,024.
        let (_, child) = child_classes((start.x, start.o))[0];
        let slice = 1024;
        let prove = |prover: &mut Prover,
                     give_up: &dyn Fn(u64) -> bool,
                     checkpoint: Option<(&mut Checkpoint, u64)>| {
            let mut shrinker = Shrinker::new(16 << 20);
            let slices = Slices {
                slice,
                deadline: None,
                give_up,
                checkpoint,
            };
            prove_reply(prover, &mut shrinker, child, 3, slices, "O 1", &mut |_| {}).unwrap()
        };
        let mut whole = Prover::new(64 << 20);
        let proved = prove(&mut whole, &|_| false, None).unwrap();
        assert!(
            whole.expansions > 8 * slice,
            "{} expansions",
            whole.expansions
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o1.proof");
        {
            let mut stopped = Prover::new(64 << 20);
            let mut checkpoint = Checkpoint::new(path.clone(), child, 0, Duration::ZERO);
            let stop_at = |expansions: u64| expansions >= 5 * slice;
            assert!(prove(&mut stopped, &stop_at, Some((&mut checkpoint, 0))).is_none());
        }
        let mut resumed = Prover::new(64 << 20);
        let mut checkpoint = Checkpoint::new(path.clone(), child, 0, Duration::from_secs(3600));
        assert_eq!(checkpoint.resume(&mut resumed, &mut |_| {}), Some(0));
        assert_eq!(resumed.expansions, 4 * slice);
        let again = prove(&mut resumed, &|_| false, Some((&mut checkpoint, 0))).unwrap();
        assert_eq!(resumed.expansions, whole.expansions);
        assert_eq!(again.records, proved.records);

        // Another reply's checkpoint leaves a prover as it was, table and all.
        let (_, other_child) = child_classes((start.x, start.o))[1];
        let held = (whole.table_len(), whole.expansions);
        let mut checkpoint = Checkpoint::new(path.clone(), other_child, 0, Duration::ZERO);
        assert_eq!(checkpoint.resume(&mut whole, &mut |_| {}), None);
        assert_eq!((whole.table_len(), whole.expansions), held);
        // Another budget's table would be thinned at other times.
        let mut other = Prover::new(128 << 20);
        let mut lines = Vec::new();
        let mut checkpoint = Checkpoint::new(path.clone(), child, 0, Duration::ZERO);
        assert_eq!(
            checkpoint.resume(&mut other, &mut |l| lines.push(l.to_string())),
            None
        );
        assert!(lines[0].contains("another --memory"), "{lines:?}");
        // A byte changed anywhere, here in an entry, is caught by the checksum;
        // the prover is left empty.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x10;
        std::fs::write(&path, bytes).unwrap();
        let mut damaged = Prover::new(64 << 20);
        let mut checkpoint = Checkpoint::new(path, child, 0, Duration::ZERO);
        assert_eq!(checkpoint.resume(&mut damaged, &mut |_| {}), None);
        assert_eq!((damaged.table_len(), damaged.expansions), (0, 0));
    }

    /// A proof stopped by the time limit leaves a checkpoint of where it
    /// stopped (none was due: they come every hour here), at the end of a
    /// slice, and a new prover goes on from it to the proof made without a
    /// stop: the same expansions, the same strategy.
    #[test]
    fn a_proof_stopped_by_the_time_limit_leaves_its_checkpoint() {
        let start = Position::parse("0-63-21").unwrap();
        let (_, child) = child_classes((start.x, start.o))[0];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o1.proof");
        let hour = Duration::from_secs(3600);
        let prove = |prover: &mut Prover, deadline, checkpoint: &mut Checkpoint| {
            let mut shrinker = Shrinker::new(16 << 20);
            let slices = Slices {
                slice: 1000,
                deadline,
                give_up: &|_| false,
                checkpoint: Some((checkpoint, 0)),
            };
            prove_reply(prover, &mut shrinker, child, 3, slices, "O 1", &mut |_| {}).unwrap()
        };
        let mut whole = Prover::new(64 << 20);
        let mut no_checkpoint = Checkpoint::new(dir.path().join("whole.proof"), child, 0, hour);
        let proved = prove(&mut whole, None, &mut no_checkpoint).unwrap();
        let mut stopped = Prover::new(64 << 20);
        let mut checkpoint = Checkpoint::new(path.clone(), child, 0, hour);
        // The time is up already: the proof stops at the end of its first slice.
        assert!(!path.exists());
        assert!(prove(&mut stopped, Some(Instant::now()), &mut checkpoint).is_none());
        assert_eq!(stopped.expansions, 1000);
        let mut resumed = Prover::new(64 << 20);
        let mut checkpoint = Checkpoint::new(path, child, 0, hour);
        assert_eq!(checkpoint.resume(&mut resumed, &mut |_| {}), Some(0));
        assert_eq!(resumed.expansions, 1000);
        assert_eq!(resumed.table_len(), stopped.table_len());
        let again = prove(&mut resumed, None, &mut checkpoint).unwrap();
        assert_eq!(resumed.expansions, whole.expansions);
        assert_eq!(again.records, proved.records);
    }

    /// Replies proven apart (a prover each, not shrunk: the blocks share no
    /// choices) are made one strategy that reaches fewer strategic positions, is
    /// counted so by the file, and is accepted by the independent checker.
    #[test]
    fn replies_proven_apart_are_made_one_smaller_strategy_that_verifies() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("apart.tb");
        let mut file = OpenFile::open(&path, start).unwrap();
        let mut replies = Vec::new();
        for (reply, child) in child_classes((start.x, start.o)) {
            let mut prover = Prover::new(64 << 20);
            let mut shrinker = Shrinker::new(16 << 20);
            let name = reply.to_string();
            let proved = prove_reply(
                &mut prover,
                &mut shrinker,
                child,
                0,
                Slices::WHOLE,
                &name,
                &mut |_| {},
            )
            .unwrap()
            .unwrap();
            let mut records = proved.records;
            stored::write_block(&mut file.store, reply, &mut records, 0.0).unwrap();
            replies.push(ReplyOutcome {
                reply,
                proven: true,
                strategic: records.len() as u64,
                moves: proved.moves,
                seconds: 0.0,
                resumed: false,
            });
        }
        let unified = file.finish(start, &mut replies, &[]).unwrap().unwrap();
        drop(file);
        assert!(
            unified.free_moves > 0 && unified.after < unified.before,
            "{unified:?}"
        );
        let stored = stored::StrategyFile::open(&path).unwrap();
        assert!(super::super::report::verify(&stored).ok());
        assert_eq!(
            super::super::report::info(&stored).strategic_moves,
            unified.after
        );
    }

    /// A build with two proofs of each reply: its first proofs are a one-proof
    /// build's (the same count before the unifying; the second proofs differ:
    /// see the strategy's tests), the strategy it stores
    /// reaches no more strategic positions than they do, the independent checker
    /// accepts it, and the finished file holds no second-proof block (the reader
    /// refuses any block but the replies' and the opening's).
    #[test]
    fn a_second_proof_keeps_the_first_and_leaves_no_block() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let run = |proofs: Proofs| {
            let options = test_options(dir.path().join(format!("{proofs:?}.tb")), start, 2, proofs);
            let summary = build(&options, &mut |_| {}).unwrap();
            assert!(summary.complete);
            let stored = stored::StrategyFile::open(&options.path).unwrap();
            assert!(super::super::report::verify(&stored).ok());
            let unified = summary.unified.unwrap();
            assert_eq!(summary.strategic_moves, unified.after as u64);
            unified
        };
        let one = run(Proofs::One);
        let two = run(Proofs::Two);
        assert_eq!(two.before, one.before);
        assert!(two.after <= two.before, "{two:?}");
    }

    /// An `auto` build decides by expansions, not by time: on one thread and on
    /// two it stores the same strategy, which the checker accepts, no larger
    /// than the first proofs' and no smaller than with every second proof; the
    /// file keeps each proof's expansions and marks the longest chain's second
    /// proof given up, and the chains whose second proofs were kept are those
    /// [`second::kept_second_proofs`] names from the counts.
    #[test]
    fn an_auto_build_is_the_same_on_any_threads_and_keeps_what_fits() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let build_with = |threads: usize, proofs: Proofs| {
            let options = test_options(
                dir.path().join(format!("{threads}-{proofs:?}.tb")),
                start,
                threads,
                proofs,
            );
            let mut lines = Vec::new();
            let summary = build(&options, &mut |line| lines.push(line.to_string())).unwrap();
            assert!(summary.complete, "{lines:?}");
            let stored = stored::StrategyFile::open(&options.path).unwrap();
            assert!(super::super::report::verify(&stored).ok());
            (stored_strategy(&options.path), summary, lines)
        };
        let (one_thread, auto, lines) = build_with(1, Proofs::Auto);
        let (two_threads, _, _) = build_with(2, Proofs::Auto);
        assert_eq!(one_thread, two_threads);
        let (_, one, _) = build_with(2, Proofs::One);
        let (_, two, _) = build_with(2, Proofs::Two);
        let after = |s: &BuildSummary| s.unified.as_ref().unwrap().after;
        assert!(after(&two) <= after(&auto) && after(&auto) <= after(&one));
        // The finished file keeps none of the build's counts and marks.
        let store = Store::open_read(&dir.path().join("1-Auto.tb")).unwrap();
        let meta = store.meta().unwrap();
        assert!(!meta.keys().any(|k| second::is_build_key(k)), "{meta:?}");
        // The decision, again from the counts the build reported: per chain
        // "O <reply> (<first> + <second> expansions)", or "(<first> expansions,
        // second proof given up)", the kept chains before "; not for".
        let said = lines
            .iter()
            .find(|l| l.starts_with("second proofs kept"))
            .unwrap();
        let (kept_part, rest) = said.split_once("; not for").unwrap();
        let mut chains_said: Vec<(bool, u64, Option<u64>)> = Vec::new();
        for (part, kept) in [(kept_part, true), (rest, false)] {
            for entry in part.split("O ").skip(1) {
                let Some((_, counts)) = entry.split_once(" (") else {
                    continue;
                };
                let counts = counts.split(" expansions").next().unwrap();
                let (first, second) = match counts.split_once(" + ") {
                    Some((f, s)) => (f.parse().unwrap(), Some(s.parse().unwrap())),
                    None => (counts.parse().unwrap(), None),
                };
                chains_said.push((kept, first, second));
            }
        }
        let classes = child_classes((start.x, start.o));
        assert_eq!(chains_said.len(), chains(&classes).len(), "{said}");
        let first: Vec<u64> = chains_said.iter().map(|c| c.1).collect();
        let second: Vec<Option<u64>> = chains_said.iter().map(|c| c.2).collect();
        let kept: Vec<bool> = chains_said.iter().map(|c| c.0).collect();
        assert_eq!(second::kept_second_proofs(&first, &second), kept, "{said}");
        let longest = (0..first.len()).max_by_key(|&c| first[c]).unwrap();
        assert!(
            second[longest].is_none(),
            "the longest chain's own second proof is given up: {said}"
        );
        assert!(kept.iter().any(|&k| k), "{said}");
    }

    /// Replies meet in chains by transposition: the corner opening's two
    /// (named by their replies' cells).
    #[test]
    fn the_corner_openings_replies_form_two_chains() {
        let classes = child_classes((1, 0));
        let named: Vec<Vec<u8>> = chains(&classes)
            .iter()
            .map(|chain| chain.iter().map(|&i| classes[i].0).collect())
            .collect();
        assert_eq!(
            named,
            [vec![1, 5, 6, 7, 23, 27, 31], vec![3, 15, 21, 22, 63]]
        );
    }
}
