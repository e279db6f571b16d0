//! `tb build qubic`: X's first move, then every O reply (one class per canonical
//! position) proven in turn by the df-pn prover, its strategy read off the proof
//! and stored as one block in its own transaction: a killed build resumes at the
//! first reply not stored. The proof table is shared by the replies of one run
//! (positions reached from several replies are proven once).

use super::position::{Position, Side};
use super::prover::child_classes;
use super::prover::{Key, Prover};
use super::shrink::Shrinker;
use super::stored::{self, GAME, OPENING_BLOCK, Record};
use super::strategy::{Strategy, replies_after};
use super::threats::{ForcedSearch, PositionMap, forced_win};
use crate::store::codec::FAMILY_KEY;
use crate::store::{LayerFinish, LayerStatus, Store};
use anyhow::{Result, bail, ensure};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Seconds between progress lines while a reply is proven.
const PROGRESS_SECONDS: f64 = 15.0;

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
    /// Whether X's strategy is complete (every reply proven).
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
}

/// Builds (or resumes) a strategy file. `report` receives progress lines.
pub fn build(options: &BuildOptions, report: &mut dyn FnMut(&str)) -> Result<BuildSummary> {
    let start = options.start;
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
    let started = Instant::now();
    let mut store = Store::open_for_build(&options.path, 1 << 20)?;
    check_or_write_meta(&mut store, &options.path, start)?;
    let done = store.finished_blocks(0)?;
    // Replies are named by their cells in the start's own cells.
    let after_first = (start.x, start.o);
    // The prover's tables take three quarters of the memory, the shrinking search's
    // forced-win cache the rest.
    let mut prover = Prover::new(options.memory / 4 * 3);
    let mut shrinker = Shrinker::new(options.memory / 4);
    let mut replies = Vec::new();
    let mut complete = true;
    for (reply, child) in child_classes(after_first) {
        if let Some(stats) = done.get(&reply.to_string()) {
            replies.push(ReplyOutcome {
                reply,
                proven: true,
                strategic: stats.positions,
                moves: stored_moves(&store, reply, stats)?,
                seconds: stats.seconds,
                resumed: true,
            });
            continue;
        }
        report(&format!("O {reply}: proving ..."));
        let t = Instant::now();
        // Proven in slices of PROGRESS_SECONDS: a slice that runs out keeps what it
        // proved in the table, and the next one goes on from there.
        let proven = loop {
            let left = options
                .time_limit
                .map_or(f64::INFINITY, |l| l - started.elapsed().as_secs_f64());
            prover.set_deadline(left.clamp(0.0, PROGRESS_SECONDS));
            if prover.prove_key(child) {
                break true;
            }
            if !prover.aborted || left <= PROGRESS_SECONDS {
                break false;
            }
            report(&format!(
                "O {reply}: {:.0} s, {} expansions, {} positions in the table",
                t.elapsed().as_secs_f64(),
                prover.expansions,
                prover.table_len()
            ));
        };
        if !proven {
            complete = false;
            if prover.aborted {
                report(&format!(
                    "O {reply}: not proven within the time limit ({} expansions)",
                    prover.expansions
                ));
                replies.push(ReplyOutcome {
                    reply,
                    proven: false,
                    strategic: 0,
                    moves: 0,
                    seconds: t.elapsed().as_secs_f64(),
                    resumed: false,
                });
                break;
            }
            bail!("X does not win from {start} against O {reply}");
        }
        let proven_in = t.elapsed().as_secs_f64();
        let mut strategy = Strategy::extract(&mut prover, child)?;
        let mut moves = strategy.cost_below(child);
        if options.shrink > 0 {
            let (smaller, stats) = shrinker.shrink(&strategy, child, options.shrink, SHRINK_BUDGET);
            report(&format!(
                "O {reply}: proven in {proven_in:.1} s; shrunk from {} to {} strategic moves in {:.1} s ({} moves replaced, {} searches over budget, {} nodes)",
                stats.cost_before,
                stats.cost_after,
                t.elapsed().as_secs_f64() - proven_in,
                stats.replaced,
                stats.gave_up,
                stats.nodes
            ));
            (strategy, moves) = (smaller, stats.cost_after);
        }
        let mut records = records_of(&strategy);
        let seconds = t.elapsed().as_secs_f64();
        stored::write_block(&mut store, reply, &mut records, seconds)?;
        report(&format!(
            "O {reply}: stored in {seconds:.1} s: {} positions, {moves} strategic moves ({} expansions so far, table {})",
            records.len(),
            prover.expansions,
            prover.table_len()
        ));
        replies.push(ReplyOutcome {
            reply,
            proven: true,
            strategic: records.len() as u64,
            moves,
            seconds,
            resumed: false,
        });
    }
    if complete {
        if let Some(first) = stored::first_move(start) {
            let worst = replies_plies(&store)?;
            let mut records = vec![Record {
                // The empty board is its own canonical form: the move is stored as is.
                key: (0, 0),
                cell: first,
                subtree: 1 + replies.iter().map(|r| r.moves as u32).sum::<u32>(),
                plies: worst,
            }];
            stored::write_block(&mut store, OPENING_BLOCK, &mut records, 0.0)?;
        }
        let stats = store.finished_blocks(0)?;
        let mut totals = crate::store::BlockStats::default();
        for s in stats.values() {
            totals.merge(s);
        }
        store.finish_layer(
            0,
            &LayerFinish {
                status: LayerStatus::Complete,
                stats: totals,
                prune: Vec::new(),
            },
        )?;
        store.set_meta(&[("status", "complete".to_string())])?;
        // A finished file leaves WAL mode (readers then leave no files beside it).
        store.compact()?;
    }
    // Closing the file checkpoints its WAL: the size below is the file's.
    drop(store);
    let (strategic, strategic_moves) = if complete {
        let info = super::report::info(&stored::StrategyFile::open(&options.path)?);
        (info.strategic as u64, info.strategic_moves as u64)
    } else {
        (0, 0)
    };
    Ok(BuildSummary {
        path: options.path.display().to_string(),
        start: start.to_string(),
        complete,
        strategic,
        strategic_moves,
        replies,
        expansions: prover.expansions,
        seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        file_bytes: std::fs::metadata(&options.path).map_or(0, |m| m.len()),
    })
}

/// Strategic moves below a stored reply: its root's subtree (the root is the
/// record of the canonical position after the reply).
fn stored_moves(store: &Store, reply: u8, stats: &crate::store::BlockStats) -> Result<u64> {
    let records = stored::read_block(store, reply, stats.positions as i64)?;
    // The root is the record with the fewest stones.
    Ok(records
        .iter()
        .min_by_key(|r| (r.key.0 | r.key.1).count_ones())
        .map_or(0, |r| u64::from(r.subtree)))
}

/// The most plies any stored reply's strategy needs, plus X's first move and O's
/// reply.
fn replies_plies(store: &Store) -> Result<u8> {
    let mut worst = 0u8;
    // The replies' plies are in their records: the largest is a bound for all.
    for ((_, key), row) in store.block_rows()? {
        let reply: u8 = key.parse()?;
        if reply != OPENING_BLOCK {
            for r in stored::read_block(store, reply, row.positions)? {
                worst = worst.max(r.plies);
            }
        }
    }
    Ok(worst.saturating_add(2))
}

/// The records of a strategy: subtree sizes and plies under the chosen moves.
fn records_of(strategy: &Strategy) -> Vec<Record> {
    let mut plies = PositionMap::default();
    // One forced-win search for all the fringe positions: its cache is shared.
    let mut forced = ForcedSearch::new();
    strategy
        .choices
        .iter()
        .map(|(&key, choice)| Record {
            key,
            cell: choice.cell,
            subtree: choice.subtree.min(u32::MAX as u64) as u32,
            plies: plies_of(strategy, key, &mut forced, &mut plies),
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
