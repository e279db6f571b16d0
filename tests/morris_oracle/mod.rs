//! An independent brute-force oracle for Nine Men's Morris: the moving phase here,
//! the placement phase in [`placement`].
//!
//! This module deliberately shares no code with the `tb` crate: geometry, rules,
//! ranking, symmetry and solver are written from docs/FORMAT.md §4 alone, so that
//! the crate's tables can be checked against it.
//!
//! * Points `a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7`
//!   (index 0..23); a position is (mover mask, opponent mask) over 24 bits.
//! * Rules (Gasser, moving phase): move a stone to an adjacent empty point, or to any
//!   empty point with exactly 3 stones; closing a mill at the destination removes one
//!   opponent stone, outside the opponent's mills unless all its stones are in mills;
//!   fewer than 3 stones or no legal move loses; undecided is a draw.
//! * Values `W<p>` / `L<p>` / `D` for the side to move, p = plies to the end of the
//!   game across captures, the winner hurrying and the loser delaying.
//! * Table (m, o) holds every raw position with m stones to move and o opponent
//!   stones, ranked as `rank(mover) * C(24 - m, o) + rank(opponent among the free
//!   points)`, both colex ranks.
//! * Solving: tables by increasing total stones; inside a pair {(m,o), (o,m)} a
//!   retrograde pass with per-position counters of undecided non-capturing moves and
//!   a queue bucketed by p, captures being exits into finished smaller tables.
#![allow(dead_code, unused_imports)] // each test file uses part of the oracle

mod geometry;
pub mod placement;
pub mod sweep;
mod symmetry;

pub use geometry::{ALL, Geometry, NUM_POINTS, POINT_NAMES, bits, parse_point};
pub use symmetry::Symmetries;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A value for the side to move (or, for a move, for the side that plays it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    /// Wins; the game ends after this many plies.
    Win(u32),
    /// Loses after this many plies (`Loss(0)`: has lost now).
    Loss(u32),
    /// Draw.
    Draw,
}

impl Val {
    /// The value of a move for the side that plays it, given the value of the
    /// position it leads to (for the opponent).
    pub fn from_child(child: Val) -> Val {
        match child {
            Val::Loss(q) => Val::Win(q + 1),
            Val::Win(q) => Val::Loss(q + 1),
            Val::Draw => Val::Draw,
        }
    }

    /// Sort key, smallest = best: wins by fewest plies, draws, losses by most plies.
    pub fn sort_key(self) -> (u8, u32) {
        match self {
            Val::Win(p) => (0, p),
            Val::Draw => (1, 0),
            Val::Loss(p) => (2, u32::MAX - p),
        }
    }

    /// The best of some move values; `Loss(0)` when there is none (no legal move).
    pub fn best(values: impl IntoIterator<Item = Val>) -> Val {
        values
            .into_iter()
            .min_by_key(|v| v.sort_key())
            .unwrap_or(Val::Loss(0))
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Win(p) => write!(f, "W{p}"),
            Val::Loss(p) => write!(f, "L{p}"),
            Val::Draw => write!(f, "D"),
        }
    }
}

impl FromStr for Val {
    type Err = String;
    fn from_str(s: &str) -> Result<Val, String> {
        let bad = || format!("bad value {s:?}");
        match s.as_bytes().first() {
            Some(b'D') if s.len() == 1 => Ok(Val::Draw),
            Some(b'W') => s[1..].parse().map(Val::Win).map_err(|_| bad()),
            Some(b'L') => s[1..].parse().map(Val::Loss).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

/// Position text: 24 characters (`.`, `W`, `B`) in point order, a space, `w` or `b`.
pub fn position_text(mover: u32, opp: u32, mover_is_white: bool) -> String {
    assert_eq!(mover & opp, 0, "overlapping stones");
    let (white, black) = if mover_is_white {
        (mover, opp)
    } else {
        (opp, mover)
    };
    let mut s: String = (0..NUM_POINTS)
        .map(|p| {
            if white >> p & 1 == 1 {
                'W'
            } else if black >> p & 1 == 1 {
                'B'
            } else {
                '.'
            }
        })
        .collect();
    s.push_str(if mover_is_white { " w" } else { " b" });
    s
}

/// Parses position text (moving phase): `<24 chars> w|b`, optionally followed by the
/// empty hands `0 0`. Returns (mover, opponent, mover_is_white).
pub fn parse_position(text: &str) -> Result<(u32, u32, bool), String> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let hands_ok = parts.len() == 2 || (parts.len() == 4 && parts[2] == "0" && parts[3] == "0");
    if !hands_ok {
        return Err(format!("expected `<24 points> w|b [0 0]`, got {text:?}"));
    }
    let board = parts[0].as_bytes();
    if board.len() != NUM_POINTS {
        return Err(format!(
            "board must have 24 characters, got {}",
            board.len()
        ));
    }
    let (mut white, mut black) = (0u32, 0u32);
    for (p, &c) in board.iter().enumerate() {
        match c {
            b'W' => white |= 1 << p,
            b'B' => black |= 1 << p,
            b'.' => {}
            _ => return Err(format!("bad board character {:?}", c as char)),
        }
    }
    match parts[1] {
        "w" => Ok((white, black, true)),
        "b" => Ok((black, white, false)),
        other => Err(format!("side to move must be w or b, got {other:?}")),
    }
}

/// Move text: `a1-a4`, with a capture `a1-a4xd7`.
pub fn move_text(from: usize, to: usize, capture: Option<usize>) -> String {
    let mut s = format!("{}-{}", POINT_NAMES[from], POINT_NAMES[to]);
    if let Some(c) = capture {
        s.push('x');
        s.push_str(POINT_NAMES[c]);
    }
    s
}

// ---------------------------------------------------------------------------
// Ranking

/// Binomial coefficients C(n, k) for n, k <= 24.
const BINOM: [[u32; 25]; 25] = {
    let mut t = [[0u32; 25]; 25];
    let mut n = 0;
    while n < 25 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
};

/// C(n, k).
pub fn binom(n: u32, k: u32) -> u32 {
    BINOM[n as usize][k as usize]
}

/// Colex rank of a subset: sum of C(p_i, i + 1) over its points p_0 < p_1 < ...
fn rank_subset(mask: u32) -> u32 {
    bits(mask).enumerate().map(|(i, p)| BINOM[p][i + 1]).sum()
}

/// The k-subset with colex rank `r` (inverse of [`rank_subset`]).
fn unrank_subset(mut r: u32, k: u32) -> u32 {
    let mut mask = 0;
    let mut p = NUM_POINTS;
    for i in (1..=k as usize).rev() {
        // Largest p with C(p, i) <= r; positions decrease from bit to bit.
        p -= 1;
        while BINOM[p][i] > r {
            p -= 1;
        }
        mask |= 1 << p;
        r -= BINOM[p][i];
    }
    mask
}

/// The next subset of the same size in colex order (Gosper's hack): colex order is
/// increasing numeric order, so this walks ranks 0, 1, 2, ... The empty set is
/// the only one of its size: it has no next (0, not an overflow in debug builds).
fn next_subset(c: u32) -> u32 {
    if c == 0 {
        return 0;
    }
    let t = c | (c - 1);
    (t + 1) | (((!t & t.wrapping_add(1)) - 1) >> (c.trailing_zeros() + 1))
}

/// `opp` renumbered among the points not in `taken` (bits of `taken` squeezed out).
fn compress(opp: u32, taken: u32) -> u32 {
    bits(opp).fold(0, |acc, p| {
        acc | 1 << (p as u32 - (taken & ((1u32 << p) - 1)).count_ones())
    })
}

/// The points not in `taken`, in increasing order.
fn free_points(taken: u32) -> Vec<usize> {
    bits(ALL & !taken).collect()
}

/// Inverse of [`compress`], given the free points of `taken`.
fn expand(compressed: u32, free: &[usize]) -> u32 {
    bits(compressed).fold(0, |acc, j| acc | 1 << free[j])
}

/// Size and index arithmetic of table (m, o).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Stones of the side to move.
    pub m: u32,
    /// Stones of the opponent.
    pub o: u32,
    /// C(24 - m, o): opponent placements per mover placement.
    opp_ranks: u32,
}

impl Shape {
    /// The shape of table (m, o).
    pub fn new(m: u32, o: u32) -> Shape {
        assert!(m + o <= NUM_POINTS as u32, "too many stones");
        Shape {
            m,
            o,
            opp_ranks: binom(NUM_POINTS as u32 - m, o),
        }
    }

    /// Number of raw positions.
    pub fn len(&self) -> usize {
        binom(NUM_POINTS as u32, self.m) as usize * self.opp_ranks as usize
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Dense index of a position of this table.
    pub fn index(&self, mover: u32, opp: u32) -> usize {
        debug_assert_eq!((mover.count_ones(), opp.count_ones()), (self.m, self.o));
        debug_assert_eq!(mover & opp, 0);
        rank_subset(mover) as usize * self.opp_ranks as usize
            + rank_subset(compress(opp, mover)) as usize
    }

    /// The position with a dense index.
    pub fn position(&self, index: usize) -> (u32, u32) {
        let ranks = self.opp_ranks as usize;
        let mover = unrank_subset((index / ranks) as u32, self.m);
        let opp = expand(
            unrank_subset((index % ranks) as u32, self.o),
            &free_points(mover),
        );
        (mover, opp)
    }

    /// Calls `f(index, mover, opp)` for every position, in index order.
    pub fn for_each(&self, mut f: impl FnMut(usize, u32, u32)) {
        let mut mover = (1u32 << self.m) - 1;
        let mut index = 0;
        for _ in 0..binom(NUM_POINTS as u32, self.m) {
            let free = free_points(mover);
            let mut c = (1u32 << self.o) - 1;
            for _ in 0..self.opp_ranks {
                f(index, mover, expand(c, &free));
                index += 1;
                c = next_subset(c);
            }
            mover = next_subset(mover);
        }
    }
}

// ---------------------------------------------------------------------------
// Value encoding in the tables

/// Not (yet) decided; a draw once solving is over.
const UNKNOWN: u16 = 0;

fn enc_win(p: u32) -> u16 {
    u16::try_from(2 * p + 1).expect("ply count fits")
}

fn enc_loss(p: u32) -> u16 {
    u16::try_from(2 * p + 2).expect("ply count fits")
}

fn decode(v: u16) -> Val {
    match v {
        UNKNOWN => Val::Draw,
        v if v % 2 == 1 => Val::Win(u32::from(v - 1) / 2),
        v => Val::Loss(u32::from(v - 2) / 2),
    }
}

/// What the capturing moves ("exits" into finished smaller tables) of a position
/// are worth, and how many non-capturing moves it has.
#[derive(Default)]
struct MoveSummary {
    quiet: u32,
    best_exit_win: Option<u32>,
    exit_draw: bool,
    max_exit_loss: Option<u32>,
}

/// Solved tables of Nine Men's Morris, moving phase.
pub struct Oracle {
    geo: Geometry,
    tables: BTreeMap<(u32, u32), Vec<u16>>,
}

impl Oracle {
    /// Solves every table (m, o) with 3 <= m, o <= `max_stones`.
    ///
    /// Memoised on disk for the test binaries of one build (the 4-stone tables
    /// take about a minute of CPU and three test files want them): the tables are
    /// written under the target's temporary directory, in a file named by a hash
    /// of this oracle's source, and read back whole when present and of the right
    /// sizes; anything else solves again.
    pub fn solve(max_stones: u32) -> Oracle {
        let path = Oracle::memo_path(max_stones);
        if let Some(oracle) = Oracle::read_memo(&path, max_stones) {
            return oracle;
        }
        let oracle = Oracle::solve_tables(max_stones, 2 * max_stones);
        oracle.write_memo(&path);
        oracle
    }

    /// Where [`Oracle::solve`] keeps its tables: named by the stones and a hash of
    /// the sources the values come from, so that a changed oracle never reads a
    /// stale file.
    fn memo_path(max_stones: u32) -> std::path::PathBuf {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for source in [
            include_str!("mod.rs"),
            include_str!("geometry.rs"),
            include_str!("sweep.rs"),
            include_str!("symmetry.rs"),
        ] {
            source.hash(&mut hasher);
        }
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "morris-oracle-{max_stones}-{:016x}.bin",
            hasher.finish()
        ))
    }

    /// The tables of `path` (pairs (m, o), then the table's u16 values, little
    /// endian), if every table of `max_stones` is there with its size.
    fn read_memo(path: &std::path::Path, max_stones: u32) -> Option<Oracle> {
        let bytes = std::fs::read(path).ok()?;
        let mut tables = BTreeMap::new();
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let (m, o) = (*rest.first()? as u32, *rest.get(1)? as u32);
            let len = Shape::new(m, o).len();
            let values = rest.get(2..2 + 2 * len)?;
            let table = values
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            tables.insert((m, o), table);
            rest = &rest[2 + 2 * len..];
        }
        let expected: std::collections::BTreeSet<(u32, u32)> =
            Oracle::pair_order(max_stones, 2 * max_stones)
                .into_iter()
                .flat_map(|(m, o)| [(m, o), (o, m)])
                .collect();
        tables.keys().copied().eq(expected).then(|| Oracle {
            geo: Geometry::new(),
            tables,
        })
    }

    /// Writes the tables for [`Oracle::read_memo`] (to a temporary file renamed
    /// into place: a reader never sees half a file); failures only cost time.
    fn write_memo(&self, path: &std::path::Path) {
        let mut bytes = Vec::new();
        for (&(m, o), table) in &self.tables {
            bytes.extend([m as u8, o as u8]);
            bytes.extend(table.iter().flat_map(|v| v.to_le_bytes()));
        }
        let temp = path.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&temp, &bytes).is_ok() {
            let _ = std::fs::rename(&temp, path);
        }
    }

    /// Solves every table (m, o) with 3 <= m, o <= `max_stones` and m + o <=
    /// `max_total` (e.g. (4, 7): tables 3-3, 3-4 and 4-3).
    pub fn solve_tables(max_stones: u32, max_total: u32) -> Oracle {
        let mut oracle = Oracle {
            geo: Geometry::new(),
            tables: BTreeMap::new(),
        };
        for (m, o) in Oracle::pair_order(max_stones, max_total) {
            oracle.solve_pair(m, o);
        }
        oracle
    }

    /// The pairs {(m, o), (o, m)} (m <= o) [`Oracle::solve_tables`] solves, in its
    /// order. Captures lower the total by one, so totals in increasing order;
    /// within a total the pairs are independent.
    fn pair_order(max_stones: u32, max_total: u32) -> Vec<(u32, u32)> {
        (6..=max_total.min(2 * max_stones))
            .flat_map(|total| (3..=max_stones).map(move |m| (m, total - m)))
            .filter(|&(m, o)| o >= m && o <= max_stones)
            .collect()
    }

    /// The board geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The tables solved, as (m, o).
    pub fn tables(&self) -> Vec<(u32, u32)> {
        self.tables.keys().copied().collect()
    }

    /// Whether table (m, o) is solved.
    pub fn has_table(&self, m: u32, o: u32) -> bool {
        self.tables.contains_key(&(m, o))
    }

    /// Value for the side to move. A side to move with fewer than 3 stones has lost
    /// (`L0`). Panics if the table is not solved or the masks overlap.
    pub fn value(&self, mover: u32, opp: u32) -> Val {
        assert_eq!(mover & opp, 0, "overlapping stones");
        assert_eq!((mover | opp) & !ALL, 0, "stones off the board");
        let (m, o) = (mover.count_ones(), opp.count_ones());
        if m < 3 {
            return Val::Loss(0);
        }
        let table = self
            .tables
            .get(&(m, o))
            .unwrap_or_else(|| panic!("table {m}-{o} not solved"));
        decode(table[Shape::new(m, o).index(mover, opp)])
    }

    /// Value of one move (for the side that plays it): the negated child value; a
    /// capture leaving the opponent 2 stones is an immediate win (W1).
    pub fn move_value(
        &self,
        mover: u32,
        opp: u32,
        from: usize,
        to: usize,
        capture: Option<usize>,
    ) -> Val {
        let after = mover ^ (1 << from) ^ (1 << to);
        let child_mover = match capture {
            Some(c) => opp ^ (1 << c),
            None => opp,
        };
        Val::from_child(self.value(child_mover, after))
    }

    /// Every legal move in notation with its value for the mover, best first (ties
    /// by move text).
    pub fn moves(&self, mover: u32, opp: u32) -> Vec<(String, Val)> {
        let mut out = Vec::new();
        self.geo.for_each_move(mover, opp, |from, to, capture| {
            out.push((
                move_text(from, to, capture),
                self.move_value(mover, opp, from, to, capture),
            ));
        });
        out.sort_by(|a, b| a.1.sort_key().cmp(&b.1.sort_key()).then(a.0.cmp(&b.0)));
        out
    }

    /// One-ply minimax: the best move value (`L0` without legal moves). Equals
    /// [`Oracle::value`] everywhere iff the tables are consistent.
    pub fn best_move_value(&self, mover: u32, opp: u32) -> Val {
        let mut best = Val::Loss(0);
        let mut any = false;
        self.geo.for_each_move(mover, opp, |from, to, capture| {
            let v = self.move_value(mover, opp, from, to, capture);
            if !any || v.sort_key() < best.sort_key() {
                best = v;
                any = true;
            }
        });
        best
    }

    /// Counts the non-capturing moves of a position and evaluates its captures
    /// against the finished exit table (`None` when a capture ends the game).
    fn summarize(&self, mover: u32, opp: u32, exit: Option<(&Shape, &[u16])>) -> MoveSummary {
        let mut s = MoveSummary::default();
        self.geo.for_each_move(mover, opp, |from, to, capture| {
            let Some(c) = capture else {
                s.quiet += 1;
                return;
            };
            let child = match exit {
                None => Val::Loss(0), // the opponent is left with 2 stones
                Some((shape, vals)) => {
                    decode(vals[shape.index(opp ^ (1 << c), mover ^ (1 << from) ^ (1 << to))])
                }
            };
            match Val::from_child(child) {
                Val::Win(p) => s.best_exit_win = Some(s.best_exit_win.map_or(p, |b| b.min(p))),
                Val::Loss(p) => s.max_exit_loss = Some(s.max_exit_loss.map_or(p, |b| b.max(p))),
                Val::Draw => s.exit_draw = true,
            }
        });
        s
    }

    /// Solves the pair {(a, b), (b, a)} (one table when a == b); smaller totals must
    /// be solved already.
    fn solve_pair(&mut self, a: u32, b: u32) {
        let ids: Vec<(u32, u32)> = if a == b {
            vec![(a, b)]
        } else {
            vec![(a, b), (b, a)]
        };
        let shapes: Vec<Shape> = ids.iter().map(|&(m, o)| Shape::new(m, o)).collect();
        // Non-capturing moves of table t lead into table `partner(t)`.
        let partner = |t: usize| if ids.len() == 1 { 0 } else { 1 - t };
        // A capture from (m, o) leads into (o - 1, m), unless o - 1 < 3 (game over).
        let exit_shapes: Vec<Option<Shape>> = ids
            .iter()
            .map(|&(m, o)| (o > 3).then(|| Shape::new(o - 1, m)))
            .collect();
        let exit_of = |t: usize| -> Option<(&Shape, &[u16])> {
            exit_shapes[t].as_ref().map(|s| {
                let vals = self
                    .tables
                    .get(&(s.m, s.o))
                    .expect("exit table solved first");
                (s, vals.as_slice())
            })
        };

        let mut vals: Vec<Vec<u16>> = shapes.iter().map(|s| vec![UNKNOWN; s.len()]).collect();
        let mut counts: Vec<Vec<u8>> = shapes.iter().map(|s| vec![0u8; s.len()]).collect();
        // buckets[p]: positions whose value (W p or L p) is to be propagated at step
        // p; entry = table << 31 | index. Stale entries (value since improved) are
        // skipped.
        let mut buckets: Vec<Vec<u32>> = Vec::new();
        let push = |buckets: &mut Vec<Vec<u32>>, p: u32, t: usize, i: usize| {
            if buckets.len() <= p as usize {
                buckets.resize_with(p as usize + 1, Vec::new);
            }
            buckets[p as usize].push((t as u32) << 31 | i as u32);
        };
        // The value of a position all of whose non-capturing moves lose (the last of
        // them found at step `p`, or none: p = 0): a win or draw by capture if there
        // is one, else the longest loss. Returns None for "not a loss".
        let all_quiet_lose = |s: &MoveSummary, last_quiet: Option<u32>| -> Option<u32> {
            if s.best_exit_win.is_some() || s.exit_draw {
                return None;
            }
            match (last_quiet, s.max_exit_loss) {
                (None, None) => Some(0), // no legal move at all
                (q, e) => Some(q.unwrap_or(0).max(e.unwrap_or(0))),
            }
        };

        // Initialisation: counters, exit wins (tentative: a quiet win may be shorter),
        // and positions decided by their captures alone.
        for (t, shape) in shapes.iter().enumerate() {
            let exit = exit_of(t);
            let (vals_t, counts_t) = (&mut vals[t], &mut counts[t]);
            shape.for_each(|i, mover, opp| {
                let s = self.summarize(mover, opp, exit);
                counts_t[i] = u8::try_from(s.quiet).expect("fewer than 256 moves");
                if let Some(p) = s.best_exit_win {
                    vals_t[i] = enc_win(p);
                    push(&mut buckets, p, t, i);
                } else if s.quiet == 0
                    && let Some(p) = all_quiet_lose(&s, None)
                {
                    vals_t[i] = enc_loss(p);
                    push(&mut buckets, p, t, i);
                }
            });
        }

        // Propagation in increasing p: when a position is L p, its predecessors win
        // in p + 1 at the latest; when it is W p, its predecessors lose one more
        // non-capturing move, and once all lose, their longest loss is known (their
        // quiet children are decided in increasing p, so this one is the longest).
        let mut p = 0;
        while p < buckets.len() {
            let bucket = std::mem::take(&mut buckets[p]);
            let p32 = p as u32;
            for entry in bucket {
                let t = (entry >> 31) as usize;
                let i = (entry & 0x7fff_ffff) as usize;
                let v = vals[t][i];
                let is_loss = v == enc_loss(p32);
                if !is_loss && v != enc_win(p32) {
                    continue; // stale: improved to a shorter win after being queued
                }
                let (mover, opp) = shapes[t].position(i);
                let pt = partner(t);
                let pshape = shapes[pt];
                let pexit = exit_of(pt);
                self.geo.for_each_unmove(mover, opp, |pm, po| {
                    let j = pshape.index(pm, po);
                    let cur = vals[pt][j];
                    if is_loss {
                        let w = enc_win(p32 + 1);
                        debug_assert!(cur == UNKNOWN || cur % 2 == 1, "a loss with a winning move");
                        if cur == UNKNOWN || cur > w {
                            vals[pt][j] = w;
                            push(&mut buckets, p32 + 1, pt, j);
                        }
                    } else {
                        counts[pt][j] -= 1;
                        if counts[pt][j] == 0 && cur == UNKNOWN {
                            let s = self.summarize(pm, po, pexit);
                            if let Some(q) = all_quiet_lose(&s, Some(p32 + 1)) {
                                vals[pt][j] = enc_loss(q);
                                push(&mut buckets, q, pt, j);
                            }
                        }
                    }
                });
            }
            p += 1;
        }

        for (&(m, o), v) in ids.iter().zip(vals) {
            self.tables.insert((m, o), v);
        }
    }

    /// Value counts of table (m, o), one position per symmetry class.
    pub fn class_stats(&self, syms: &Symmetries, m: u32, o: u32) -> Stats {
        let table = &self.tables[&(m, o)];
        let mut stats = Stats::default();
        Shape::new(m, o).for_each(|i, mover, opp| {
            if syms.is_canonical(mover, opp) {
                stats.add(decode(table[i]));
            }
        });
        stats
    }

    /// Value counts of table (m, o) over all raw positions.
    pub fn raw_stats(&self, m: u32, o: u32) -> Stats {
        let mut stats = Stats::default();
        for &v in &self.tables[&(m, o)] {
            stats.add(decode(v));
        }
        stats
    }
}

/// Number of symmetry classes of (mover set, opponent set) in table (m, o).
pub fn count_classes(syms: &Symmetries, m: u32, o: u32) -> u64 {
    let mut n = 0;
    Shape::new(m, o).for_each(|_, mover, opp| {
        if syms.is_canonical(mover, opp) {
            n += 1;
        }
    });
    n
}

/// Value counts of a set of positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Positions won by the side to move.
    pub wins: u64,
    /// Positions lost by the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Longest win (plies).
    pub max_win: u32,
    /// Longest loss (plies).
    pub max_loss: u32,
}

impl Stats {
    fn add(&mut self, v: Val) {
        match v {
            Val::Win(p) => {
                self.wins += 1;
                self.max_win = self.max_win.max(p);
            }
            Val::Loss(p) => {
                self.losses += 1;
                self.max_loss = self.max_loss.max(p);
            }
            Val::Draw => self.draws += 1,
        }
    }
}

/// A small deterministic generator (xorshift64*), for sampling positions.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A random position with m mover and o opponent stones.
    pub fn position(&mut self, m: u32, o: u32) -> (u32, u32) {
        let shape = Shape::new(m, o);
        shape.position((self.next_u64() % shape.len() as u64) as usize)
    }
}
