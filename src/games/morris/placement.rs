//! The placement phase: positions with stones still in hand, solved forward from
//! the moving-phase tables. Every placement lowers the stones in hand by one, so
//! there are no cycles: the layer with `h` stones in hand (both sides together) is
//! computed from the layer with `h - 1` (for `h = 1`, the moving-phase tables at
//! the transition), each position as the best of its children, one pass.
//!
//! Within a layer the side to move and both hands are fixed ([`hands_of`]); a
//! block is one table (m, o) of stones on the board, indexed by the same symmetry
//! classes as the moving phase ([`Table`]).

use super::geometry::bits;
use super::index::{Indexed, MIN_STONES, Table};
use super::spec::hands_of;
use super::value::{goodness_byte, parent_byte};
use super::variant::Rules;
use crate::sys::prefetch;
use crate::with_board;
use anyhow::{Result, anyhow, ensure};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Positions per parallel work item (and progress step).
const SLICE: u64 = 1 << 14;

/// The child tables of table (m, o) with `h` in hand: the table each placement
/// leads to, (o, m + 1), and each capture, (o - 1, m + 1), for the side then to
/// move. A child whose mover is left with fewer than 3 stones (board and hand) has
/// lost and is not looked up; at `h = 1` the children are moving-phase tables.
/// Empty when the side to move has lost already.
pub fn child_tables(h: u8, m: u8, o: u8) -> Vec<(u8, u8)> {
    let (hm, ho) = hands_of(h);
    if m + hm < MIN_STONES {
        return Vec::new();
    }
    let mut out = Vec::new();
    for child_mover in [Some(o), o.checked_sub(1)].into_iter().flatten() {
        if child_mover + ho >= MIN_STONES {
            out.push((child_mover, m + 1));
        }
    }
    out
}

/// Computes the values of table (m, o) with `h` stones in hand. `child(m', o')`
/// gives the value bytes of child table (m', o') (one of [`child_tables`]); `done`
/// counts finished positions.
pub fn solve_placement_table<'a>(
    rules: Rules,
    h: u8,
    m: u8,
    o: u8,
    child: impl Fn(u8, u8) -> &'a [u8] + Sync,
    done: &AtomicU64,
) -> Result<Vec<u8>> {
    ensure!(
        !rules.set().moving_in_placement,
        "the {} rules move stones during placement, which this tb does not solve yet",
        rules.name()
    );
    with_board!(rules.board(), B => solve_placement_on::<B>(h, m, o, child, done))
}

/// [`solve_placement_table`] on board `B`.
fn solve_placement_on<'a, B: Indexed>(
    h: u8,
    m: u8,
    o: u8,
    child: impl Fn(u8, u8) -> &'a [u8] + Sync,
    done: &AtomicU64,
) -> Result<Vec<u8>> {
    let table = Table::<B>::get(m, o)?;
    table.prepare_lookups();
    let (hm, ho) = hands_of(h);
    // Tables where the side to move has lost already are not stored.
    ensure!(
        m + hm >= MIN_STONES,
        "table {m}-{o} with {h} in hand: the side to move has lost"
    );
    // Huge pages: the next layer's tables read this one at random.
    let mut values = crate::sys::huge_filled(table.size() as usize, 0u8);
    // The child tables, looked up once: [no capture, capture] by the child mover's
    // stone count o or o - 1.
    let lookup = |child_mover: u8| -> Option<(&'static Table<B>, &'a [u8])> {
        (child_mover + ho >= MIN_STONES).then(|| {
            let t = Table::<B>::get(child_mover, m + 1).expect("child tables exist");
            t.prepare_lookups();
            (t, child(child_mover, m + 1))
        })
    };
    let plain = lookup(o);
    let captured = o.checked_sub(1).and_then(lookup);
    values
        .par_chunks_mut(SLICE as usize)
        .enumerate()
        .try_for_each(|(k, out)| -> Result<()> {
            let first = k as u64 * SLICE;
            let mut batch = Batch::<B>::default();
            let mut failure = None;
            table.for_each_in_range(first..first + out.len() as u64, |i, mover, opponent| {
                batch
                    .positions
                    .push(((i - first) as usize, mover, opponent));
                if batch.positions.len() == BATCH
                    && let Err(e) = batch.settle(plain, captured, out)
                {
                    failure = Some(e);
                }
            });
            batch.settle(plain, captured, out)?;
            done.fetch_add(out.len() as u64, Ordering::Relaxed);
            failure.map_or(Ok(()), Err)
        })?;
    Ok(values)
}

/// Positions settled together: every child index of the batch is computed and
/// prefetched before any child value is read, so that the cache misses (child
/// tables of up to a gigabyte, read at random) overlap.
const BATCH: usize = 64;

/// A child table: its index and values.
type ChildTable<'a, B> = Option<(&'static Table<B>, &'a [u8])>;

/// What a position's children are handed to: (next mover, its table, points
/// placed, capture?).
type ChildVisitor<'b, B> = dyn for<'a> FnMut(u32, ChildTable<'a, B>, u32, bool) + 'b;

struct Batch<B: Indexed> {
    /// (offset in the output, mover, opponent).
    positions: Vec<(usize, u32, u32)>,
    /// Per position: (placements that close a mill, stones they may capture).
    moves: Vec<(u32, u32)>,
    /// Per child table read, in order: its next mover's class and symmetry.
    located: Vec<(usize, usize)>,
    /// (position in the batch, capture table?, child index).
    lookups: Vec<(u8, bool, u64)>,
    board: std::marker::PhantomData<B>,
}

impl<B: Indexed> Default for Batch<B> {
    fn default() -> Self {
        Batch {
            positions: Vec::new(),
            moves: Vec::new(),
            located: Vec::new(),
            lookups: Vec::new(),
            board: std::marker::PhantomData,
        }
    }
}

impl<B: Indexed> Batch<B> {
    /// Values of the batch's positions into `out`; empties the batch.
    fn settle(
        &mut self,
        plain: ChildTable<B>,
        captured: ChildTable<B>,
        out: &mut [u8],
    ) -> Result<()> {
        const WIN1: u8 = 2; // Value::Win(1): no move is better
        // Per position: its placements that capture, and its own captures. The next
        // mover of each child table is looked up in three passes over the batch
        // (hint, locate, index), the cache misses of one pass overlapping.
        self.moves.clear();
        for &(_, mover, opponent) in &self.positions {
            let empty = B::FULL & !(mover | opponent);
            let caps = B::capturable(opponent);
            let closing = if caps == 0 {
                0
            } else {
                bits(empty)
                    .filter(|&p| B::in_mill(mover | 1 << p, p))
                    .fold(0, |acc, p| acc | 1 << p)
            };
            self.moves
                .push((closing, if closing == 0 { 0 } else { caps }));
        }
        // The child tables each position reads: (next mover, table, points placed).
        let children = |k: usize, f: &mut ChildVisitor<B>| {
            let (_, mover, opponent) = self.positions[k];
            let (closing, caps) = self.moves[k];
            let quiet = B::FULL & !(mover | opponent) & !closing;
            if quiet != 0 {
                f(opponent, plain, quiet, false);
            }
            for c in bits(caps) {
                f(opponent & !(1 << c), captured, closing, true);
            }
        };
        for k in 0..self.positions.len() {
            children(k, &mut |next, tables, _, _| {
                if let Some((t, _)) = tables {
                    t.prefetch_mover(next);
                }
            });
        }
        self.located.clear();
        for k in 0..self.positions.len() {
            children(k, &mut |next, tables, _, _| {
                if let Some((t, _)) = tables {
                    self.located.push(t.locate_mover(next));
                }
            });
        }
        self.lookups.clear();
        let mut located = self.located.iter();
        for k in 0..self.positions.len() {
            let (slot, mover, _) = self.positions[k];
            let mut wins_at_once = false;
            children(k, &mut |next, tables, points, capture| match tables {
                // The side to move next has fewer than 3 stones: it has lost.
                None => wins_at_once = true,
                Some((t, bytes)) => {
                    let at = *located.next().expect("located above");
                    t.for_each_added_from(at, next, mover, points, |_, index| {
                        prefetch(&bytes[index as usize]);
                        self.lookups.push((k as u8, capture, index));
                    });
                }
            });
            // With stones in hand there is always an empty point (more points than
            // stones on every board solved here), so every position has a move.
            out[slot] = if wins_at_once { WIN1 } else { 0 };
        }
        // Best of the children, for the positions without an immediate win.
        let mut best: [Option<u8>; BATCH] = [None; BATCH];
        for &(k, capture, index) in &self.lookups {
            let slot = self.positions[k as usize].0;
            if out[slot] == WIN1 {
                continue;
            }
            let bytes = if capture { captured } else { plain }.expect("looked up").1;
            let Some(v) = parent_byte(bytes[index as usize]) else {
                return Err(anyhow!("a value longer than a byte holds"));
            };
            let b = &mut best[k as usize];
            if b.is_none_or(|b| goodness_byte(v) > goodness_byte(b)) {
                *b = Some(v);
            }
        }
        for (k, &(slot, ..)) in self.positions.iter().enumerate() {
            if out[slot] != WIN1
                && let Some(v) = best[k]
            {
                out[slot] = v;
            }
        }
        self.positions.clear();
        Ok(())
    }
}
