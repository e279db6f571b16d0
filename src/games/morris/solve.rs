//! Retrograde analysis of the moving-phase tables, and probing.
//!
//! Tables (m, o) and (o, m) form a pair: non-capturing moves go back and forth between
//! them (cycles), captures leave the pair for a table with fewer stones, which must be
//! solved first. Within a pair, values are found in increasing ply order with a bucket
//! queue: a position is a win in d+1 plies as soon as one child is lost in d, and a
//! loss once every in-pair move leads to a win (the last one found decides the ply),
//! unless an exit (capture) gives it something better. The first pass generates every
//! position's moves (exit values from the lower tables, a count of in-pair moves);
//! later passes only generate un-moves of the positions settled at each ply. Both run
//! on rayon; per-position state is atomic (a 16-bit value-and-counter cell and an
//! exit byte). The big pairs are bound by memory latency: both passes generate a
//! batch of indices, prefetching them, before touching any, on huge pages.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;

use super::geometry::bits;
use super::index::{Indexed, MIN_STONES, MoverIndex, Table, table_index, table_position};
use super::rules::{Move, Outcome, Position};
use super::sector::{Exit, Sector};
use super::spec::hands_of;
use super::value::{MAX_PLIES, Value, goodness_byte, parent_byte};
use super::variant::Rules;
use crate::sys::prefetch;
use crate::with_board;

/// Bucket entry flags: bit 31 = second table of the pair, bit 30 = tentative (an exit
/// win that a shorter in-pair win may still beat).
const SECOND: u32 = 1 << 31;
const PENDING: u32 = 1 << 30;
const INDEX: u32 = PENDING - 1;

/// Byte of `L0` (also the "no exit" marker: the worst value a position can get).
const LOST: u8 = 1;
/// Byte of `W1`.
const WIN1: u8 = 2;

/// Most moves (or un-moves) of one position: 3 flying stones x 21 empty points.
const MAX_MOVES: usize = 64;

/// A solved table moves leave the pair for, and its values; `None` when such a
/// move wins at once.
type ExitTable<'a, B> = Option<(&'static Table<B>, &'a [u8])>;

/// Exit lookups carry their kind in their top two bits (table indices are below
/// 2^30): a capture after a slide, a placement, a placement that captures.
const SLIDE_CAPTURE: u32 = 0;
const PLACEMENT: u32 = 1 << 30;
const PLACEMENT_CAPTURE: u32 = 2 << 30;
const EXIT_KIND: u32 = 3 << 30;

/// One table (sector) of the pair being solved, with its working arrays.
struct Side<'a, B: Indexed> {
    table: &'static Table<B>,
    /// The side to move flies (the rules let a side with 3 stones fly, and it has 3).
    flies: bool,
    /// The side that moved into this table's positions flew (their opponent has 3
    /// stones and the rules let it fly).
    opponent_flew: bool,
    /// The opponent has no stone on the board: a mill closed captures nothing.
    nothing_to_capture: bool,
    /// Value and move counter of every position.
    cells: Vec<Cell>,
    /// Best exit (capture or placement) move value, [`LOST`] if none.
    exit: Vec<AtomicU8>,
    /// Where a slide that captures leads.
    lower: ExitTable<'a, B>,
    /// With stones in hand: where a placement leads, and a placement that captures.
    placement: Option<(ExitTable<'a, B>, ExitTable<'a, B>)>,
}

impl<'a, B: Indexed> Side<'a, B> {
    /// The values of the exit table a tagged lookup reads.
    #[inline(always)]
    fn exit_values(&self, tagged: u32) -> &'a [u8] {
        let table = match tagged & EXIT_KIND {
            SLIDE_CAPTURE => self.lower,
            PLACEMENT => self.placement.and_then(|p| p.0),
            _ => self.placement.and_then(|p| p.1),
        };
        table.expect("a lookup only into an exit table").1
    }
}

fn atomic_vec(n: u64, v: u8) -> Vec<AtomicU8> {
    crate::sys::huge_atomic_bytes(n as usize, v)
}

/// The value byte (low byte; 0 = undecided, or a draw in the end) and the move counter
/// (high byte: non-capturing moves not yet known to lead to a win for the opponent) of
/// one position, in one word so that an update touches one cache line.
#[repr(transparent)]
struct Cell(AtomicU16);

impl Cell {
    /// `n` cells with value 0 and counter 0, on huge pages where the kernel has them.
    fn new_vec(n: u64) -> Vec<Cell> {
        let words = crate::sys::huge_atomic_u16(n as usize, 0);
        // SAFETY: Cell is a transparent wrapper of AtomicU16.
        unsafe { crate::sys::reinterpret(words) }
    }

    #[inline(always)]
    fn value(&self) -> u8 {
        self.0.load(Relaxed) as u8
    }

    /// Sets value and counter (first pass: each position is written by one thread).
    #[inline(always)]
    fn init(&self, value: u8, counter: u8) {
        self.0
            .store(u16::from(counter) << 8 | u16::from(value), Relaxed);
    }

    /// Sets the value if it is still 0; false if another value was there.
    #[inline(always)]
    fn try_set_value(&self, value: u8) -> bool {
        let mut cur = self.0.load(Relaxed);
        loop {
            if cur & 0xff != 0 {
                return false;
            }
            match self
                .0
                .compare_exchange_weak(cur, cur | u16::from(value), Relaxed, Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Takes `count` moves off the counter; returns (value, counter) from before.
    #[inline(always)]
    fn lose_moves(&self, count: u8) -> (u8, u8) {
        let before = self.0.fetch_sub(u16::from(count) << 8, Relaxed);
        (before as u8, (before >> 8) as u8)
    }

    #[inline(always)]
    fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr() as *const u8
    }
}

/// Pushes produced by one parallel step: (ply, bucket entry).
type Pushes = Vec<(u8, u32)>;

/// Solves tables (m, o) and (o, m) given every table with fewer stones through
/// `lower(a, b)` (the value bytes of table (a, b), in index order). Returns the values
/// of (m, o) and of (o, m); for `m == o` the second vector is empty.
pub fn solve_pair<'a>(
    rules: Rules,
    m: u8,
    o: u8,
    lower: impl Fn(u8, u8) -> &'a [u8],
) -> Result<(Vec<u8>, Vec<u8>)> {
    solve_pair_counting(rules, m, o, lower, &AtomicU64::new(0))
}

/// [`solve_pair`], counting progress in `done`: half a position for each position
/// the first pass has examined, half for each position decided later (draws are
/// never decided, so the count stays below the pair's size).
pub fn solve_pair_counting<'a>(
    rules: Rules,
    m: u8,
    o: u8,
    lower: impl Fn(u8, u8) -> &'a [u8],
    done: &AtomicU64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let max = rules.stones();
    ensure!(
        (MIN_STONES..=max).contains(&m) && (MIN_STONES..=max).contains(&o),
        "table {m}-{o}: stones per side must be {MIN_STONES}..={max} ({} rules)",
        rules.name()
    );
    let sector = Sector::new(m, o, 0, 0);
    with_board!(rules.board(), B => solve_sectors_on::<B>(rules, sector, |s| lower(s.m, s.o), done))
}

/// Solves the sector pair of `sector` (it and its [`Sector::swapped`]) given the
/// sectors its moves leave it for through `exits` (the value bytes of a sector, in
/// index order), counting progress in `done` as [`solve_pair_counting`] does.
/// Returns the values of the pair's sectors in [`Sector::pair`] order (the second
/// empty when the pair is one sector). With both hands empty this is
/// [`solve_pair_counting`]; with stones in hand (Lasker Morris) placements are
/// exits too.
pub fn solve_sector_pair<'a>(
    rules: Rules,
    sector: Sector,
    exits: impl Fn(Sector) -> &'a [u8],
    done: &AtomicU64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let max = rules.stones();
    ensure!(
        sector.exists(max),
        "sector {}: stones per side (board and hand) must be {MIN_STONES}..={max} ({} rules)",
        sector.label(),
        rules.name()
    );
    ensure!(
        rules.moving_in_placement() || (sector.hm == 0 && sector.ho == 0),
        "the {} rules solve positions with stones in hand by placement layers, not sectors",
        rules.name()
    );
    with_board!(rules.board(), B => solve_sectors_on::<B>(rules, sector.canonical(), exits, done))
}

/// The table of an exit and its values, checked to fit each other and the tagged
/// lookups.
fn exit_table<'a, B: Indexed>(
    exit: Exit,
    values: &impl Fn(Sector) -> &'a [u8],
) -> Result<ExitTable<'a, B>> {
    let Exit::To(s) = exit else {
        return Ok(None);
    };
    let table = Table::<B>::get(s.m, s.o)?;
    table.prepare_lookups();
    let v = values(s);
    ensure!(
        v.len() as u64 == table.size(),
        "exit sector {} has {} values, expected {}",
        s.label(),
        v.len(),
        table.size()
    );
    ensure!(
        table.size() <= u64::from(!EXIT_KIND) + 1,
        "exit sector {} too big for the tagged lookups",
        s.label()
    );
    Ok(Some((table, v)))
}

/// [`solve_sector_pair`] on board `B`, `sector` canonical.
fn solve_sectors_on<'a, B: Indexed>(
    rules: Rules,
    sector: Sector,
    exits: impl Fn(Sector) -> &'a [u8],
    done: &AtomicU64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let set = rules.set();
    if set.full_board_draw
        && sector.hm == 0
        && sector.ho == 0
        && usize::from(sector.m + sector.o) == B::POINTS
    {
        // The placements filled the board: nobody can move, and the rules call it a
        // draw (Morabaraba; as Malom, the whole sector is drawn).
        let table = Table::<B>::get(sector.m, sector.o)?;
        done.fetch_add(table.size(), Relaxed);
        let drawn = vec![0u8; table.size() as usize];
        let second = if sector.pair().len() == 2 {
            drawn.clone()
        } else {
            Vec::new()
        };
        return Ok((drawn, second));
    }
    let mut sides = Vec::new();
    for s in sector.pair() {
        let table = Table::<B>::get(s.m, s.o)?;
        table.prepare_lookups();
        let lower = match s.slide_capture() {
            Some(exit) => exit_table(exit, &exits)?,
            None => None,
        };
        let placement = match (s.placement(), s.placement_capture()) {
            (Some(quiet), capture) => Some((
                exit_table(Exit::To(quiet), &exits)?,
                match capture {
                    Some(exit) => exit_table(exit, &exits)?,
                    None => None,
                },
            )),
            (None, _) => None,
        };
        let n = table.size();
        ensure!(
            n <= INDEX as u64 + 1,
            "table {}-{} too big for the bucket entries",
            s.m,
            s.o
        );
        sides.push(Side {
            table,
            flies: set.flies(u32::from(s.m), s.hm),
            opponent_flew: set.flies(u32::from(s.o), s.ho),
            nothing_to_capture: s.o == 0,
            cells: Cell::new_vec(n),
            exit: atomic_vec(n, LOST),
            lower,
            placement,
        });
    }
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); MAX_PLIES as usize + 1];
    for t in 0..sides.len() {
        for (ply, e) in init_side(&sides, t, done)? {
            buckets[ply as usize].push(e);
        }
    }
    for d in 0..=MAX_PLIES as usize {
        let list = std::mem::take(&mut buckets[d]);
        if list.is_empty() {
            continue;
        }
        done.fetch_add(list.len() as u64 / 2, Relaxed);
        let pushes = list
            .par_chunks(1024)
            .try_fold(Vec::new, |mut acc: Pushes, chunk| {
                for group in chunk.chunks(ENTRY_BATCH) {
                    process(&sides, d as u32, group, &mut acc)?;
                }
                Ok::<_, anyhow::Error>(acc)
            })
            .try_reduce(Vec::new, |mut a, b| {
                a.extend(b);
                Ok(a)
            })?;
        for (ply, e) in pushes {
            debug_assert!(ply as usize > d);
            buckets[ply as usize].push(e);
        }
    }
    let mut out = sides.into_iter().map(|s| {
        s.cells
            .into_iter()
            .map(|c| c.0.into_inner() as u8)
            .collect::<Vec<u8>>()
    });
    let first = out.next().unwrap();
    Ok((first, out.next().unwrap_or_default()))
}

/// Index of the other table of the pair.
#[inline]
fn other<B: Indexed>(sides: &[Side<B>], t: usize) -> usize {
    if sides.len() == 1 { 0 } else { 1 - t }
}

#[inline]
fn entry(t: usize, index: u64) -> u32 {
    index as u32 | if t == 1 { SECOND } else { 0 }
}

/// Positions whose moves are generated before any of their capture lookups is read: the
/// lookups go to random places of a lower table of up to a gigabyte, and issuing a
/// batch's prefetches together overlaps their cache misses (one at a time, they were
/// most of the first pass).
const BATCH: usize = 32;

/// One position of a batch of the first pass.
#[derive(Clone, Copy, Default)]
struct Examined {
    index: u32,
    /// Non-capturing moves.
    moves: u8,
    /// A move closes a mill and the capture wins at once.
    wins_now: bool,
    /// End of its capture lookups in the batch's lookup list.
    lookups_end: u32,
}

/// Generates the moves of every position of side `t`: exit values, in-pair child
/// counts, and the values known at once (no in-pair move, immediate wins).
fn init_side<B: Indexed>(sides: &[Side<B>], t: usize, done: &AtomicU64) -> Result<Pushes> {
    let side = &sides[t];
    (0..side.table.blocks())
        .into_par_iter()
        .with_min_len(16)
        .try_fold(Vec::new, |mut acc: Pushes, cid| {
            let mut batch = [Examined::default(); BATCH];
            let mut len = 0;
            let mut lookups = Vec::with_capacity(BATCH * MAX_MOVES);
            let mut result = Ok(());
            side.table.for_each_in_blocks(cid..cid + 1, |i, w, b| {
                if result.is_err() {
                    return;
                }
                batch[len] = examine(side, i, w, b, &mut lookups);
                len += 1;
                if len == BATCH {
                    result = settle_batch(side, t, &batch[..len], &lookups, &mut acc);
                    len = 0;
                    lookups.clear();
                }
            });
            result?;
            settle_batch(side, t, &batch[..len], &lookups, &mut acc)?;
            let range = side.table.block_range(cid);
            done.fetch_add((range.end - range.start) / 2, Relaxed);
            Ok::<_, anyhow::Error>(acc)
        })
        .try_reduce(Vec::new, |mut a, b| {
            a.extend(b);
            Ok(a)
        })
}

/// Generates the moves of position `i` = (w to move, b): counts the non-capturing ones
/// and appends the lower-table index of every capture to `lookups` (prefetched).
#[inline]
fn examine<B: Indexed>(side: &Side<B>, i: u64, w: u32, b: u32, lookups: &mut Vec<u32>) -> Examined {
    let flying = side.flies;
    let empty = B::FULL & !(w | b);
    let mut moves = 0u8;
    let mut wins_now = false;
    'moves: for p in bits(w) {
        let targets = if flying {
            empty
        } else {
            B::ADJACENT[p] & empty
        };
        for q in bits(targets) {
            let nw = w ^ (1 << p) ^ (1 << q);
            if !B::in_mill(nw, q) || side.nothing_to_capture {
                moves += 1;
                continue;
            }
            let Some((lt, lv)) = side.lower else {
                wins_now = true;
                break 'moves;
            };
            for c in bits(B::capturable(b)) {
                let x = lt.index(b ^ (1 << c), nw);
                prefetch(&lv[x as usize]);
                lookups.push(x as u32 | SLIDE_CAPTURE);
            }
        }
    }
    if let Some((quiet, capture)) = side.placement
        && !wins_now
    {
        wins_now = examine_placements(side, quiet, capture, w, b, lookups);
    }
    Examined {
        index: i as u32,
        moves,
        wins_now,
        lookups_end: lookups.len() as u32,
    }
}

/// Appends the exit lookups of every placement of position (w to move, b) to
/// `lookups` (prefetched); true if a placement wins at once.
#[inline]
fn examine_placements<B: Indexed>(
    side: &Side<B>,
    quiet: ExitTable<B>,
    capture: ExitTable<B>,
    w: u32,
    b: u32,
    lookups: &mut Vec<u32>,
) -> bool {
    let empty = B::FULL & !(w | b);
    for q in bits(empty) {
        let nw = w | 1 << q;
        if !B::in_mill(nw, q) || side.nothing_to_capture {
            let (t, v) = quiet.expect("a placement leads to a sector");
            let x = t.index(b, nw);
            prefetch(&v[x as usize]);
            lookups.push(x as u32 | PLACEMENT);
            continue;
        }
        let Some((t, v)) = capture else {
            return true;
        };
        for c in bits(B::capturable(b)) {
            let x = t.index(b ^ (1 << c), nw);
            prefetch(&v[x as usize]);
            lookups.push(x as u32 | PLACEMENT_CAPTURE);
        }
    }
    false
}

/// Reads the capture values of a batch and records each position's exit value, move
/// counter and, when already known, its value (pushed to `acc`).
fn settle_batch<B: Indexed>(
    side: &Side<B>,
    t: usize,
    batch: &[Examined],
    lookups: &[u32],
    acc: &mut Pushes,
) -> Result<()> {
    let mut start = 0;
    for ex in batch {
        let mut best = if ex.wins_now { WIN1 } else { LOST };
        for &x in &lookups[start..ex.lookups_end as usize] {
            let values = side.exit_values(x);
            let mv = parent_byte(values[(x & !EXIT_KIND) as usize])
                .with_context(|| format!("value longer than {MAX_PLIES} plies"))?;
            if goodness_byte(mv) > goodness_byte(best) {
                best = mv;
            }
        }
        start = ex.lookups_end as usize;
        let i = ex.index as usize;
        side.exit[i].store(best, Relaxed);
        if best == WIN1 {
            side.cells[i].init(WIN1, 0);
            acc.push((1, entry(t, i as u64)));
            continue;
        }
        side.cells[i].init(0, ex.moves);
        if ex.moves == 0 {
            // Only exits (or no move at all: L0).
            if best != 0 {
                side.cells[i].init(best, 0);
                acc.push((best - 1, entry(t, i as u64)));
            }
        } else if best != 0 && best.is_multiple_of(2) {
            acc.push((best - 1, entry(t, i as u64) | PENDING));
        }
    }
    Ok(())
}

/// Removes adjacent duplicates of a sorted slice in place; returns the new length.
#[inline]
fn dedup(v: &mut [u32]) -> usize {
    if v.is_empty() {
        return 0;
    }
    let mut n = 1;
    for i in 1..v.len() {
        if v[i] != v[n - 1] {
            v[n] = v[i];
            n += 1;
        }
    }
    n
}

/// Number of non-capturing moves from the representative of class `x` of `x_table`
/// into class `y` of `y_table` (`flying`: the side to move in `x` flies).
fn moves_into<B: Indexed>(
    x_table: &Table<B>,
    x: u64,
    flying: bool,
    y_table: &Table<B>,
    y: u64,
) -> u8 {
    let (xm, xo) = x_table.position(x);
    let empty = B::FULL & !(xm | xo);
    let mut n = 0;
    for p in bits(xm) {
        let targets = if flying {
            empty
        } else {
            B::ADJACENT[p] & empty
        };
        for q in bits(targets) {
            let nm = xm ^ (1 << p) ^ (1 << q);
            if (!B::in_mill(nm, q) || xo == 0) && y_table.index(xo, nm) == y {
                n += 1;
            }
        }
    }
    n
}

/// Bucket entries whose predecessors are all found (and their bytes prefetched) before
/// any is updated: the updates are random accesses into big arrays, and a batch's
/// cache misses overlap.
const ENTRY_BATCH: usize = 8;

/// A settled position of a batch, between finding its predecessors and updating them.
#[derive(Clone, Copy, Default)]
struct Settled {
    /// The table of the predecessors.
    u: usize,
    /// Index of the settled position.
    y: u32,
    /// Whether the settled position is a symmetric win (see [`process`]).
    y_symmetric_win: bool,
    /// End of its predecessors in the batch's list.
    preds_end: usize,
}

/// Settles the bucket entries of ply `d` in `group` (at most [`ENTRY_BATCH`]) and
/// updates their predecessors.
///
/// Move counters count moves, not child classes, so that the first pass needs no
/// index of in-pair children. Un-moves from the representative y reach class X
/// `B` times, while X's representative has `A = B |Stab(x)| / |Stab(y)|` moves into
/// Y's class: the same when neither position is symmetric (decrement once per
/// un-move); otherwise A is counted directly (rare).
#[inline]
fn process<B: Indexed>(sides: &[Side<B>], d: u32, group: &[u32], acc: &mut Pushes) -> Result<()> {
    debug_assert!(group.len() <= ENTRY_BATCH);
    let lost = d.is_multiple_of(2);
    let mut settled = [Settled::default(); ENTRY_BATCH];
    let mut n_settled = 0;
    let mut preds = [(0u32, false); ENTRY_BATCH * MAX_MOVES];
    let mut n_preds = 0;
    for &e in group {
        let t = (e >> 31) as usize;
        let i = (e & INDEX) as u64;
        let side = &sides[t];
        if e & PENDING != 0 && !side.cells[i as usize].try_set_value(d as u8 + 1) {
            continue; // Already a shorter in-pair win.
        }
        let u = other(sides, t);
        let pred = &sides[u];
        let (ym, yo) = side.table.position(i);
        let empty = B::FULL & !(ym | yo);
        // The side that moved into y is y's opponent; its stone went p -> q, un-move it.
        let flying = side.opponent_flew;
        for q in bits(yo) {
            // A move onto q that closed a mill would have captured and left the pair
            // (unless the side to move in y had no stone on the board to capture).
            if B::in_mill(yo, q) && ym != 0 {
                continue;
            }
            let targets = if flying {
                empty
            } else {
                B::ADJACENT[q] & empty
            };
            for p in bits(targets) {
                let (x, x_symmetric) = pred.table.index_and_symmetric(yo ^ (1 << q) ^ (1 << p), ym);
                prefetch(pred.cells[x as usize].as_ptr());
                preds[n_preds] = (x as u32, x_symmetric);
                n_preds += 1;
            }
        }
        settled[n_settled] = Settled {
            u,
            y: i as u32,
            y_symmetric_win: !lost && side.table.stabilizer_size(ym, yo) > 1,
            preds_end: n_preds,
        };
        n_settled += 1;
    }
    let mut start = 0;
    for s in &settled[..n_settled] {
        let pred = &sides[s.u];
        let xs = &preds[start..s.preds_end];
        start = s.preds_end;
        if lost {
            // y is lost: every predecessor wins in d + 1.
            for &(x, _) in xs {
                let cell = &pred.cells[x as usize];
                if cell.value() == 0 && cell.try_set_value(d as u8 + 2) {
                    if d + 1 > MAX_PLIES {
                        bail!("value longer than {MAX_PLIES} plies");
                    }
                    acc.push((d as u8 + 1, entry(s.u, x as u64)));
                }
            }
            continue;
        }
        let mut slow = [0u32; MAX_MOVES];
        let mut ns = 0;
        for &(x, x_symmetric) in xs {
            if s.y_symmetric_win || x_symmetric {
                slow[ns] = x;
                ns += 1;
            } else {
                lose_move(pred, s.u, x as u64, 1, d, acc)?;
            }
        }
        if ns > 0 {
            let slow = &mut slow[..ns];
            slow.sort_unstable();
            let n = dedup(slow);
            let y_table = sides[other(sides, s.u)].table;
            for &x in &slow[..n] {
                let a = moves_into(pred.table, x as u64, pred.flies, y_table, s.y as u64);
                lose_move(pred, s.u, x as u64, a, d, acc)?;
            }
        }
    }
    Ok(())
}

/// `count` moves of position `x` (side `u`) turned out to lead to a win of ply `d` for
/// the opponent; when none is left, `x` is lost unless an exit saves it.
#[inline]
fn lose_move<B: Indexed>(
    pred: &Side<B>,
    u: usize,
    x: u64,
    count: u8,
    d: u32,
    acc: &mut Pushes,
) -> Result<()> {
    let xi = x as usize;
    let cell = &pred.cells[xi];
    if cell.value() != 0 {
        return Ok(());
    }
    let (value, before) = cell.lose_moves(count);
    debug_assert!(before >= count, "move counter underflow");
    if value != 0 || before != count {
        return Ok(());
    }
    // Every in-pair move loses; the loser delays: the longest of the last child's win
    // and an exit loss. A drawn or won exit is better (a won one is already queued).
    let ex = pred.exit[xi].load(Relaxed);
    if ex == 0 || ex.is_multiple_of(2) {
        return Ok(());
    }
    let ply = (d + 1).max(ex as u32 - 1);
    if ply > MAX_PLIES {
        bail!("value longer than {MAX_PLIES} plies");
    }
    // The counter just reached 0 here, so no other thread sets this value now.
    let set = cell.try_set_value(ply as u8 + 1);
    debug_assert!(set, "value of a position settled twice");
    acc.push((ply as u8, entry(u, x)));
    Ok(())
}

/// Every table with 3..=`max` stones per side, keyed by (m, o).
pub type Tables = BTreeMap<(u8, u8), Vec<u8>>;

/// Solves all tables with `3..=max` stones per side in order of total stones, calling
/// `report(m, o, positions, seconds)` after each pair.
pub fn solve_all(
    rules: Rules,
    max: u8,
    mut report: impl FnMut(u8, u8, u64, f64),
) -> Result<Tables> {
    ensure!(
        (MIN_STONES..=rules.stones()).contains(&max),
        "stones must be 3..={}",
        rules.stones()
    );
    let mut tables = Tables::new();
    for total in 2 * MIN_STONES..=2 * max {
        for m in MIN_STONES..=max {
            let Some(o) = total.checked_sub(m) else {
                continue;
            };
            if o < m || o > max {
                continue;
            }
            let start = Instant::now();
            let (a, b) = solve_pair(rules, m, o, |x, y| tables[&(x, y)].as_slice())
                .with_context(|| format!("solving {m}-{o}"))?;
            let n = (a.len() + b.len()) as u64;
            report(m, o, n, start.elapsed().as_secs_f64());
            tables.insert((m, o), a);
            if m != o {
                tables.insert((o, m), b);
            }
        }
    }
    Ok(tables)
}

/// Counts of a value table, for the side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Classes won.
    pub wins: u64,
    /// Classes lost.
    pub losses: u64,
    /// Classes drawn.
    pub draws: u64,
    /// Longest win in plies (0 if none).
    pub longest_win: u8,
    /// Longest loss in plies.
    pub longest_loss: u8,
}

impl Stats {
    /// Counts the value bytes of one table.
    pub fn of(values: &[u8]) -> Stats {
        let mut s = Stats::default();
        for &b in values {
            match Value::from_byte(b) {
                Value::Win(p) => {
                    s.wins += 1;
                    s.longest_win = s.longest_win.max(p);
                }
                Value::Loss(p) => {
                    s.losses += 1;
                    s.longest_loss = s.longest_loss.max(p);
                }
                Value::Draw => s.draws += 1,
            }
        }
        s
    }
}

/// A probe answer: the value of a position and of each legal move, best first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Value for the side to move.
    pub value: Value,
    /// Every legal move with its value for the side playing it, best first (among
    /// equal values, by [`Chances`] where known, most first).
    pub moves: Vec<(Move, Value)>,
    /// The tie-break of each move of `moves` (same order): known for the moves of
    /// the position's own value when that value is a draw or a loss, `None`
    /// elsewhere; empty when `moves` is.
    pub chances: Vec<Option<Chances>>,
}

/// The opponent's chances to go wrong after a move (docs/FORMAT.md §4.3): of the
/// opponent's `replies` legal replies, `errors` are worse for the opponent than
/// the move's value says. After a drawn move an error is a reply that loses for
/// the opponent; after a losing move (the opponent wins), a reply that does not win
/// for the opponent (a draw or a loss). Between two moves of equal value the one
/// with the larger share `errors / replies` is better against a fallible opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chances {
    /// Replies that are errors.
    pub errors: u32,
    /// Legal replies of the opponent (at least 1: a move that leaves the opponent
    /// no reply wins, and wins get no tie-break).
    pub replies: u32,
}

impl Chances {
    /// Orders by share `errors / replies` (exactly, by cross products), then by
    /// more replies.
    pub fn cmp_share(&self, other: &Chances) -> std::cmp::Ordering {
        let mine = u64::from(self.errors) * u64::from(other.replies);
        let theirs = u64::from(other.errors) * u64::from(self.replies);
        mine.cmp(&theirs).then(self.replies.cmp(&other.replies))
    }

    /// `errors / replies` as a number (0 when there is no reply).
    pub fn share(&self) -> f64 {
        if self.replies == 0 {
            0.0
        } else {
            f64::from(self.errors) / f64::from(self.replies)
        }
    }
}

/// Value of a position from table bytes: `lookup(sector, index)` returns the stored
/// byte of class `index` of table (m, o) with the sector's stones in hand (none: the
/// moving phase). A position's colours do not matter, only whose turn it is: the side to
/// move has as many stones in hand as its opponent or one more (White places first),
/// unless the rules let a side move during placement (Lasker: any hands).
pub fn position_value(
    pos: &Position,
    lookup: &impl Fn(Sector, u64) -> Result<u8>,
) -> Result<Value> {
    class_value(stored_class(pos)?, lookup)
}

/// The value stored for a class ([`stored_class`]; `None`: lost already).
fn class_value(class: Option<Class>, lookup: &impl Fn(Sector, u64) -> Result<u8>) -> Result<Value> {
    Ok(match class {
        None => Value::Loss(0),
        Some((sector, index)) => Value::from_byte(lookup(sector, index)?),
    })
}

/// Where the value of a position is stored: `(sector, index)` as [`position_value`]
/// looks it up, or `None` when the side to move has lost already (fewer than 3
/// stones on the board and in hand).
pub fn stored_class(pos: &Position) -> Result<Option<Class>> {
    let (m, o) = pos.stones();
    let [hm, ho] = pos.hands;
    let h = hm + ho;
    ensure!(
        pos.rules.moving_in_placement() || hands_of(h) == (hm, ho),
        "not a position of the game: the side to move has {hm} stones in hand and the other side {ho}, \
         but the side to move has as many as the other or one more (White places first): {pos}"
    );
    ensure!(
        o + ho >= MIN_STONES,
        "the game is over: the side not to move has {o} stones{}: {pos}",
        if ho > 0 {
            format!(" and {ho} in hand")
        } else {
            String::new()
        }
    );
    if m + hm < MIN_STONES {
        return Ok(None);
    }
    let index = table_index(pos.rules.board(), m, o, pos.mover, pos.opponent)?;
    Ok(Some((Sector::new(m, o, hm, ho), index)))
}

/// Probes `pos`: its value and every legal move's value, best first (stable order
/// among equal values), without the tie-break ([`break_ties`] adds it).
pub fn probe(pos: &Position, lookup: impl Fn(Sector, u64) -> Result<u8>) -> Result<Probe> {
    probe_hinted(pos, |_| {}, lookup)
}

/// A stored class: `(sector, index)` as [`stored_class`] gives it.
pub type Class = (Sector, u64);

/// [`probe`], first telling `hint` every stored class it is about to read (the
/// position's and its children's), so that a reader can fetch them together.
pub fn probe_hinted(
    pos: &Position,
    hint: impl FnOnce(&[Class]),
    lookup: impl Fn(Sector, u64) -> Result<u8>,
) -> Result<Probe> {
    let own = stored_class(pos)?;
    let moves = stored_moves(pos);
    let classes: Vec<Class> = own
        .into_iter()
        .chain(
            moves
                .iter()
                .filter_map(|(_, c)| *c.as_ref()?.as_ref().ok()?),
        )
        .collect();
    hint(&classes);
    let value = class_value(own, &lookup)?;
    let moves = move_values(moves, &lookup)?;
    Ok(Probe {
        value,
        chances: vec![None; moves.len()],
        moves,
    })
}

/// Every move's value, best first, from `moves` (per legal move: `None` for a
/// win at once, else where its child is stored) read with `lookup`. None once the
/// side to move has lost (fewer than 3 stones, or blocked).
fn move_values(
    moves: Vec<(Move, Option<Result<Option<Class>>>)>,
    lookup: &impl Fn(Sector, u64) -> Result<u8>,
) -> Result<Vec<(Move, Value)>> {
    let mut out = Vec::with_capacity(moves.len());
    for (mv, child) in moves {
        let v = match child {
            None => Value::Win(1),
            Some(class) => class_value(class?, lookup)?.parent()?,
        };
        out.push((mv, v));
    }
    out.sort_by_key(|m| std::cmp::Reverse(m.1));
    Ok(out)
}

/// The legal moves of `pos`, each with `None` for a win at once, else where its
/// child is stored.
fn stored_moves(pos: &Position) -> Vec<(Move, Option<Result<Option<Class>>>)> {
    pos.legal_moves()
        .into_iter()
        .map(|(mv, outcome)| match outcome {
            Outcome::Win => (mv, None),
            Outcome::Child(c) => (mv, Some(stored_class(&c))),
        })
        .collect()
}

/// The tie-break among the moves of `probe` (a probe of `pos`) of the position's
/// own value, when it is a draw or a loss ([`Chances`], docs/FORMAT.md §4.3): reads
/// the opponent's replies after each such move (telling `hint` their classes first,
/// as [`probe_hinted`] does), fills `probe.chances` and orders the moves of equal
/// value by their share of errors, largest first (then more replies, then as
/// before: the move generator's order). Reads values two plies from `pos`, so its
/// lookup must reach the tables that far (a table with two fewer stones after two
/// captures): `verify`, which reads one ply deep, probes without it.
pub fn break_ties(
    pos: &Position,
    probe: Probe,
    hint: impl FnOnce(&[Class]),
    lookup: impl Fn(Sector, u64) -> Result<u8>,
) -> Result<Probe> {
    let Probe { value, moves, .. } = probe;
    let mut chances = vec![None; moves.len()];
    if !matches!(value, Value::Win(_)) {
        // The position after each tied move and where each opponent reply's value
        // is stored (`None`: the reply wins at once), each reply classified once.
        let mut tied: Vec<(usize, Position, Vec<ReplyClass>)> = Vec::new();
        for (i, &(mv, v)) in moves.iter().enumerate() {
            if v != value {
                continue;
            }
            if let Outcome::Child(child) = pos.play(mv)? {
                let replies = child
                    .legal_moves()
                    .into_iter()
                    .map(|(_, outcome)| match outcome {
                        Outcome::Win => Ok(None),
                        Outcome::Child(g) => stored_class(&g).map(Some),
                    })
                    .collect::<Result<_>>()?;
                tied.push((i, child, replies));
            }
        }
        let classes: Vec<Class> = tied
            .iter()
            .flat_map(|(_, _, replies)| replies.iter().copied().flatten().flatten())
            .collect();
        hint(&classes);
        for (i, child, replies) in &tied {
            let mut errors = 0;
            for &reply in replies {
                // The reply's value for the opponent, who plays it.
                let reply = match reply {
                    None => Value::Win(1),
                    Some(class) => class_value(class, &lookup)
                        .and_then(|v| Ok(v.parent()?))
                        .with_context(|| {
                            format!(
                                "the tie-break of {} reads the replies of {child}",
                                moves[*i].0.text(pos.rules)
                            )
                        })?,
                };
                errors += u32::from(is_error(value, reply));
            }
            chances[*i] = Some(Chances {
                errors,
                replies: replies.len() as u32,
            });
        }
    }
    // Best value first; among equal values the larger share of errors, moves
    // without a tie-break last; then as the probe listed them (a stable sort).
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by(|&a, &b| {
        moves[b]
            .1
            .cmp(&moves[a].1)
            .then_with(|| match (chances[a], chances[b]) {
                (Some(x), Some(y)) => y.cmp_share(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            })
    });
    Ok(Probe {
        value,
        moves: order.iter().map(|&i| moves[i]).collect(),
        chances: order.iter().map(|&i| chances[i]).collect(),
    })
}

/// Where the value of an opponent's reply is stored: `None` when the reply wins at
/// once, else its position's [`stored_class`].
type ReplyClass = Option<Option<Class>>;

/// Whether a reply of value `reply` (for the opponent, who plays it) is an error
/// after a move of value `played` (for the side that played it): worse for the
/// opponent than `played` lets it hope for. After a draw, a reply that loses;
/// after a loss (the opponent wins), a reply that does not win. Nothing is an
/// error after a win.
pub fn is_error(played: Value, reply: Value) -> bool {
    match played {
        Value::Draw => matches!(reply, Value::Loss(_)),
        Value::Loss(_) => !matches!(reply, Value::Win(_)),
        Value::Win(_) => false,
    }
}

/// The value of a won position of a file that marks wins (`MorrisSpec::marks_wins`):
/// its best move's, read with `lookup` (the stored bytes). Its distance is one
/// more than its shortest losing child's, stored with its distance (`W1` for a
/// move that wins at once); a won child (a losing move, stored as `W1`) never
/// comes first. A position stored as won without a winning move is an error.
pub fn won_value(pos: &Position, lookup: impl Fn(Sector, u64) -> Result<u8>) -> Result<Value> {
    let p = probe(pos, lookup)?;
    match p.moves.first() {
        Some(&(_, win @ Value::Win(_))) => Ok(win),
        best => bail!(
            "{pos} is stored as won, but its best move gives {}",
            best.map_or_else(
                || "nothing (it has no move)".to_string(),
                |m| m.1.to_string()
            )
        ),
    }
}

/// Class `index` of `sector`'s table as a position of `rules`, with the sector's
/// hands: White to move when they are equal (White places first), else Black.
pub fn sector_position(rules: Rules, sector: Sector, index: u64) -> Result<Position> {
    let stones = table_position(rules.board(), sector.m, sector.o, index)?;
    Ok(in_sector(rules, sector, stones))
}

/// The position of `(mover, opponent)`'s stones with `sector`'s hands: White to
/// move when they are equal (White places first), else Black.
fn in_sector(rules: Rules, sector: Sector, (mover, opponent): (u32, u32)) -> Position {
    let Sector { hm, ho, .. } = sector;
    Position::with_mover(mover, opponent, hm == ho, [hm, ho]).on(rules)
}

/// The value byte of class `index` of `sector`, stored as a win without its
/// distance ([`super::value::WIN_MARK`]), with its distance: [`won_value`] of the
/// position, its moves read with `lookup` (the stored bytes).
pub fn won_byte(
    rules: Rules,
    sector: Sector,
    index: u64,
    lookup: impl Fn(Sector, u64) -> Result<u8>,
) -> Result<u8> {
    let position = sector_position(rules, sector, index)?;
    let won = won_value(&position, lookup)
        .with_context(|| format!("the file's win mark at {position}"))?;
    Ok(won.to_byte())
}

/// `stored`, the look-up of a file that marks wins, with every marked win's byte
/// given its distance again ([`won_byte`], one ply further): what a check of a few
/// positions of such a file reads, instead of restoring every win first.
fn with_win_distance(
    rules: Rules,
    stored: impl Fn(Sector, u64) -> Result<u8> + Sync,
) -> impl Fn(Sector, u64) -> Result<u8> + Sync {
    move |sector, index| match stored(sector, index)? {
        super::value::WIN_MARK => won_byte(rules, sector, index, &stored),
        byte => Ok(byte),
    }
}

/// The wins of table `sector` whose distance a file that marks wins left out:
/// `(class, value byte)` for every class whose byte in `values` (the table's, by
/// class) is [`super::value::WIN_MARK`], the distance recomputed with `lookup`
/// ([`won_value`]), on all cores.
pub fn marked_wins(
    rules: Rules,
    sector: Sector,
    values: &[i8],
    lookup: impl Fn(Sector, u64) -> Result<u8> + Sync,
) -> Result<Vec<(u64, u8)>> {
    with_board!(rules.board(), B => marked_wins_on::<B>(rules, sector, values, lookup))
}

/// [`marked_wins`] on board `B` (the board of `rules`).
fn marked_wins_on<B: Indexed>(
    rules: Rules,
    sector: Sector,
    values: &[i8],
    lookup: impl Fn(Sector, u64) -> Result<u8> + Sync,
) -> Result<Vec<(u64, u8)>> {
    let table = table_to_probe::<B>(sector.m, sector.o)?;
    let marked: Vec<u64> = (0..values.len() as u64)
        .filter(|&i| values[i as usize] as u8 == super::value::WIN_MARK)
        .collect();
    marked
        .into_par_iter()
        .map(|i| {
            let pos = class_position(rules, table, sector, i);
            Ok((i, won_value(&pos, &lookup)?.to_byte()))
        })
        .collect()
}

/// Table (m, o), ready for probing its classes on all cores: its look-ups and the
/// mover indices of its children (every child's mover set has o or o - 1 stones)
/// built first.
fn table_to_probe<B: Indexed>(m: u8, o: u8) -> Result<&'static Table<B>> {
    let table = Table::<B>::get(m, o)?;
    table.prepare_lookups();
    for k in [o.saturating_sub(1), o] {
        MoverIndex::<B>::get(k).direct();
    }
    Ok(table)
}

/// [`sector_position`] with the table at hand.
fn class_position<B: Indexed>(
    rules: Rules,
    table: &Table<B>,
    sector: Sector,
    index: u64,
) -> Position {
    in_sector(rules, sector, table.position(index))
}

/// Checks every `step`-th class of table (m, o) against its moves, with the move
/// generator of [`Position::legal_moves`] (independent of the solver's loops): the
/// stored value must equal the best move value (`L0` without moves). Checked for every
/// class, this proves the tables right: a wrong value would need a wrong child with a
/// shorter distance to the end, down to a contradiction at the game's end.
/// Returns the number of classes checked.
pub fn verify_table(
    rules: Rules,
    sector: Sector,
    step: u64,
    lookup: impl Fn(Sector, u64) -> Result<u8> + Sync,
) -> Result<u64> {
    with_board!(rules.board(), B => verify_table_on::<B>(rules, sector, step, &lookup, &lookup, |v| v))
}

/// [`verify_table`] for a file that marks wins, `stored` reading its bytes as
/// stored: each checked class's own byte as it is (a win is the mark, whose
/// distance is by definition what its moves give), its children's with every win's
/// distance (`with_win_distance`); the class must hold a win exactly when its
/// best move wins, else the best move's value.
pub fn verify_marked_table(
    rules: Rules,
    sector: Sector,
    step: u64,
    stored: impl Fn(Sector, u64) -> Result<u8> + Sync,
) -> Result<u64> {
    let children = with_win_distance(rules, &stored);
    let fold = |v: Value| match v {
        Value::Win(_) => Value::Win(1),
        v => v,
    };
    with_board!(rules.board(), B => verify_table_on::<B>(rules, sector, step, &stored, &children, fold))
}

/// [`verify_table`] on board `B` (the board of `rules`): the class's own value
/// read with `own`, its moves' with `children`, both through `fold` compared.
fn verify_table_on<B: Indexed>(
    rules: Rules,
    sector: Sector,
    step: u64,
    own: &(impl Fn(Sector, u64) -> Result<u8> + Sync),
    children: &(impl Fn(Sector, u64) -> Result<u8> + Sync),
    fold: impl Fn(Value) -> Value + Sync,
) -> Result<u64> {
    let Sector { m, o, hm, ho } = sector;
    let table = table_to_probe::<B>(m, o)?;
    let step = step.max(1);
    let n = table.size().div_ceil(step);
    let in_hand = match (hm + ho, rules.moving_in_placement()) {
        (0, _) => String::new(),
        (_, true) => format!(" with {hm}-{ho} in hand"),
        (h, false) => format!(" with {h} in hand"),
    };
    (0..n).into_par_iter().try_for_each(|k| {
        let i = k * step;
        let pos = class_position(rules, table, sector, i);
        let value = class_value(stored_class(&pos)?, own)?;
        let moves = move_values(stored_moves(&pos), children)?;
        let best = match moves.first() {
            Some(mv) => mv.1,
            None if pos.is_full_board_draw() => Value::Draw,
            None => Value::Loss(0),
        };
        ensure!(
            fold(value) == fold(best),
            "table {m}-{o}{in_hand} index {i} ({pos}) holds {value} but its best move gives {best}",
        );
        Ok(())
    })?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::super::geometry::{Board, Nine, SYMMETRIES};
    use super::*;

    fn lookup(tables: &Tables) -> impl Fn(Sector, u64) -> Result<u8> + Sync + '_ {
        |s, i| {
            tables
                .get(&(s.m, s.o))
                .and_then(|t| t.get(i as usize).copied())
                .context("no such table entry")
        }
    }

    fn check_consistent(tables: &Tables, m: u8, o: u8, step: u64) {
        verify_table(Rules::Nine, Sector::new(m, o, 0, 0), step, lookup(tables)).unwrap();
    }

    #[test]
    fn table_3_3_matches_gasser() {
        let (v, rest) = solve_pair(Rules::Nine, 3, 3, |_, _| unreachable!()).unwrap();
        assert!(rest.is_empty());
        let st = Stats::of(&v);
        assert_eq!(
            (st.wins, st.losses, st.draws, st.longest_loss),
            (140_621, 28_736, 269, 26)
        );
        let tables = Tables::from([((3, 3), v)]);
        check_consistent(&tables, 3, 3, 1);
    }

    #[test]
    fn marked_wins_get_their_distances_back_one_ply_further() {
        // Table 3-3 solved, then every win stored as the mark: each one's
        // distance recomputed from the marked table equals the solver's.
        let (v, _) = solve_pair(Rules::Nine, 3, 3, |_, _| unreachable!()).unwrap();
        let marked: Vec<u8> = v
            .iter()
            .map(|&b| super::super::value::mark_win(b))
            .collect();
        let signed = |bytes: &[u8]| bytes.iter().map(|&b| b as i8).collect::<Vec<i8>>();
        let wins = marked
            .iter()
            .filter(|&&b| b == super::super::value::WIN_MARK);
        let tables = Tables::from([((3, 3), marked.clone())]);
        let sector = Sector::new(3, 3, 0, 0);
        let found = marked_wins(Rules::Nine, sector, &signed(&marked), lookup(&tables)).unwrap();
        assert_eq!(found.len(), wins.count());
        // Long wins as well as wins in one (the test is not about W1 alone).
        assert!(found.iter().any(|&(_, b)| b > 10));
        for (i, byte) in found {
            assert_eq!(byte, v[i as usize], "class {i}");
        }
        // A position marked won whose moves give no win is refused.
        let lost = (0..v.len()).find(|&i| v[i] % 2 == 1).unwrap();
        let mut forged = marked;
        forged[lost] = super::super::value::WIN_MARK;
        let tables = Tables::from([((3, 3), forged.clone())]);
        let err = marked_wins(Rules::Nine, sector, &signed(&forged), lookup(&tables));
        assert!(format!("{:#}", err.unwrap_err()).contains("stored as won"));
    }

    #[test]
    fn a_marked_table_verifies_and_its_forgeries_do_not() {
        // Table 3-3 with every win stored as the mark: every STEP-th class
        // checked with its own byte as stored and its children's wins given
        // their distance (flying stones: thousands of look-ups a class).
        const STEP: u64 = 20;
        let (v, _) = solve_pair(Rules::Nine, 3, 3, |_, _| unreachable!()).unwrap();
        let marked: Vec<u8> = v
            .iter()
            .map(|&b| super::super::value::mark_win(b))
            .collect();
        let sector = Sector::new(3, 3, 0, 0);
        let check = |bytes: &[u8]| {
            let tables = Tables::from([((3, 3), bytes.to_vec())]);
            verify_marked_table(Rules::Nine, sector, STEP, lookup(&tables))
        };
        assert_eq!(check(&marked).unwrap(), (v.len() as u64).div_ceil(STEP));
        // A loss stored as a win, a win as a loss, a loss with another distance:
        // each refused.
        let checked = |i: &usize| (*i as u64).is_multiple_of(STEP);
        let lost: Vec<usize> = (0..v.len())
            .filter(checked)
            .filter(|&i| v[i] % 2 == 1 && v[i] > 1)
            .collect();
        let (first_lost, last_lost) = (lost[0], lost[lost.len() - 1]);
        let won = (0..v.len())
            .filter(checked)
            .find(|&i| v[i] % 2 == 0 && v[i] > 0)
            .unwrap();
        for (class, byte) in [
            (first_lost, super::super::value::WIN_MARK),
            (won, 3),
            (last_lost, v[last_lost] + 2),
        ] {
            let mut forged = marked.clone();
            forged[class] = byte;
            assert!(check(&forged).is_err(), "class {class} as {byte}");
        }
    }

    #[test]
    fn a_full_morabaraba_board_is_a_draw() {
        // Table 12-12 of Morabaraba: the board filled by the placements, nobody can
        // move; the rules make every such position a draw, not a loss for the side
        // to move.
        let (v, rest) = solve_pair(Rules::Morabaraba, 12, 12, |_, _| unreachable!()).unwrap();
        assert!(rest.is_empty());
        assert!(!v.is_empty());
        assert!(v.iter().all(|&b| Value::from_byte(b) == Value::Draw));
        let tables = Tables::from([((12, 12), v)]);
        verify_table(
            Rules::Morabaraba,
            Sector::new(12, 12, 0, 0),
            101,
            lookup(&tables),
        )
        .unwrap();
        // Probed: a draw without moves; the same board as a Nine Men's Morris
        // position would be a loss.
        let full = Position::parse_in(Rules::Morabaraba, "WBWBWBWBWBWBBWBWBWBWBWBW w").unwrap();
        assert!(full.is_full_board_draw() && !full.is_lost());
        let p = probe(&full, lookup(&tables)).unwrap();
        assert_eq!((p.value, p.moves.len()), (Value::Draw, 0));
        // One stone fewer: the game goes on (someone can move or is blocked).
        let short = Position::parse_in(Rules::Morabaraba, "WBWBWBWBWBWB.WBWBWBWBWBW b").unwrap();
        assert!(!short.is_full_board_draw());
    }

    #[test]
    fn tables_3_4_are_consistent() {
        let tables = solve_all(Rules::Nine, 4, |_, _, _, _| {}).unwrap();
        check_consistent(&tables, 3, 4, 97);
        check_consistent(&tables, 4, 3, 97);
        check_consistent(&tables, 4, 4, 997);
        // Blocked: White's corners are shut in, White to move has lost.
        let pos = Position::parse("WBW......B....B......WBW w").unwrap();
        let p = probe(&pos, lookup(&tables)).unwrap();
        assert_eq!((p.value, p.moves.len()), (Value::Loss(0), 0));
        // With Black to move, each blocker has one step inward (d1-d2, a4-b4, g4-f4,
        // d7-d6), each freeing White.
        let black = Position::parse("WBW......B....B......WBW b").unwrap();
        let p = probe(&black, lookup(&tables)).unwrap();
        assert_eq!(p.moves.len(), 4);
        assert_eq!(p.value, p.moves[0].1);
        // Colours swapped and board transformed: same values.
        for i in (0..Table::<Nine>::get(3, 4).unwrap().size()).step_by(10007) {
            let (w, b) = Table::<Nine>::get(3, 4).unwrap().position(i);
            let a = probe(&Position::new(w, b, true), lookup(&tables)).unwrap();
            for s in 0..SYMMETRIES {
                let (tw, tb) = (Nine::transform(s, w), Nine::transform(s, b));
                let c = probe(&Position::new(tb, tw, false), lookup(&tables)).unwrap();
                assert_eq!(a.value, c.value);
                assert_eq!(a.moves.len(), c.moves.len());
                assert_eq!(a.moves.first().map(|m| m.1), c.moves.first().map(|m| m.1));
            }
        }
    }

    #[test]
    fn probe_sorts_best_first() {
        let (v, _) = solve_pair(Rules::Nine, 3, 3, |_, _| unreachable!()).unwrap();
        let tables = Tables::from([((3, 3), v)]);
        let pos = Position::parse("WW......BB.....W.B...... w").unwrap();
        let p = probe(&pos, lookup(&tables)).unwrap();
        assert_eq!(p.moves[0].1, Value::Win(1));
        assert_eq!(p.value, Value::Win(1));
        assert!(p.moves.windows(2).all(|w| w[0].1 >= w[1].1));
        assert!(
            probe(
                &Position::parse("WW......BB.....W.B...... w 1 0").unwrap(),
                lookup(&tables)
            )
            .is_err()
        );
    }

    /// Full check of every table up to 5 stones per side (about a minute), or up to
    /// `MORRIS_VERIFY_STONES` (then only the tables with that many stones on a side):
    /// `cargo test --release --lib games::morris::solve::tests::verify_all -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn verify_all() {
        let env = std::env::var("MORRIS_VERIFY_STONES").ok();
        let max = env.as_deref().map_or(5, |x| x.parse().unwrap());
        let tables = solve_all(Rules::Nine, max, |_, _, _, _| {}).unwrap();
        for &(m, o) in tables.keys() {
            if env.is_some() && m != max && o != max {
                continue;
            }
            let start = Instant::now();
            let n = verify_table(Rules::Nine, Sector::new(m, o, 0, 0), 1, lookup(&tables)).unwrap();
            eprintln!(
                "{m}-{o}: {n} classes verified in {:.1} s",
                start.elapsed().as_secs_f64()
            );
        }
    }

    /// Speed of building every table up to 4 and 5 stones per side (or the list in
    /// `MORRIS_BENCH_STONES`, e.g. `6`):
    /// `cargo test --release --lib games::morris::solve::tests::bench -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn bench() {
        let list = std::env::var("MORRIS_BENCH_STONES").unwrap_or_else(|_| "4,5".into());
        for max in list.split(',').map(|x| x.trim().parse::<u8>().unwrap()) {
            let start = Instant::now();
            let mut total = 0;
            let tables = solve_all(Rules::Nine, max, |m, o, n, s| {
                total += n;
                eprintln!(
                    "  {m}-{o}: {n} positions in {s:.2} s ({:.2} M/s)",
                    n as f64 / s / 1e6
                );
            })
            .unwrap();
            let s = start.elapsed().as_secs_f64();
            for ((m, o), v) in &tables {
                eprintln!("  {m}-{o}: {:?}", Stats::of(v));
            }
            eprintln!(
                "stones {max}: {} tables, {total} positions, {s:.2} s, {:.2} M positions/s",
                tables.len(),
                total as f64 / s / 1e6
            );
        }
    }
}
