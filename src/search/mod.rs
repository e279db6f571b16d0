//! The search solver: exact values of Dots-and-Boxes positions without a database.
//!
//! # Values
//!
//! A position is the `u64` mask of drawn lines (see [`crate::board`]). Its value
//! `V(p)` is the number of boxes the player to move will still make minus the number
//! the opponent will still make, with best play by both; the full board is worth the
//! penalty. A move that completes `k >= 1` boxes is worth `k + V(p|m)` (the same
//! player moves again), any other move `-V(p|m)`, and `V(p)` is the best move.
//!
//! # Engine
//!
//! * Negamax with fail-soft alpha-beta. The two kinds of child are framed
//!   differently: a capture of `k` boxes keeps the turn, so its child is searched
//!   with the window `(alpha - k, beta - k)` and `k` is added to its result; any other
//!   move hands over the turn, so its child gets `(-beta, -alpha)` and is negated.
//! * The root value comes from MTD(f): a series of null-window searches that
//!   converge on the value, every result kept in the transposition table. Values of
//!   a position all have the parity of (unfinished boxes + penalty), so every test
//!   moves a bound by at least two.
//! * A bounded transposition table ([`SearchOptions::tt_bytes`]), keyed by the
//!   canonical position under all board symmetries (8 on square boards, 4 otherwise;
//!   see [`symmetry`]), storing lower and upper bounds so that every answer is exact,
//!   plus the best move for ordering. Two-way buckets, replace by depth.
//! * Move ordering: the table's best move, then captures, then safe moves (which give
//!   no box a third side), then sacrifices. At a symmetric position only one move of
//!   each orbit of the position's stabiliser is searched.
//! * Static bounds: `|V| <= unfinished boxes + |penalty|`.
//! * Forced captures (proved below): a capture that gives no other box its third
//!   side is played at once, without considering the alternatives.
//!
//! # The forced-capture rule
//!
//! **Claim.** Let line `m` complete `k >= 1` boxes of `p`, and let every box of `m`
//! that `m` does not complete have at most one side drawn in `p`. Then
//! `V(p) = k + V(p|m)`.
//!
//! *Proof*, by induction on the number of open lines; write `q = p|m`. Clearly
//! `V(p) >= k + V(q)`; we bound every other move `x` of `p` by `k + V(q)`. Let `b'`
//! be the box of `m` that `m` does not complete, if there is one (it has at most one
//! side; then `k = 1`).
//!
//! * `x` completes nothing in `p`. Then `x` completes nothing in `q` either (`b'` has
//!   at most two sides in `q`, the boxes completed by `m` have no other open line),
//!   so `-V(q|x) <= V(q)`. In `p|x` the opponent may take `m`, which still completes
//!   the same `k` boxes (`b'` has at most two sides), so `V(p|x) >= k + V(q|x)` and
//!   the move is worth `-V(p|x) <= -k - V(q|x) <= V(q) - k`.
//! * `x` completes `j` boxes and leaves `b'` with at most one side (it does not
//!   border `b'`, or `b'` had none). It completes the same `j` boxes in `q`, and the
//!   claim holds in `p|x` by induction, so the move is worth
//!   `j + V(p|x) = j + k + V(q|x) <= k + V(q)`.
//! * `x` completes `j` boxes and gives `b'` its second side. Then `x` borders `b'`,
//!   which had exactly one side, and completes exactly one box `b''` behind it, so
//!   `j = k = 1`. Swapping the roles of `m, b` and `x, b''` maps `p|m` onto `p|x`:
//!   both have the same open lines except that one has `x` where the other has `m`,
//!   each of these the only open side of a finished-but-for-it box and a side of `b'`,
//!   which has the same two sides drawn in both. So `V(p|x) = V(q)` and the move is
//!   worth `1 + V(q)`.
//!
//! Hence `V(p) = k + V(q)`. (When `m` completes every box it borders this is the
//! plain fact that such a line changes nothing else on the board.) The rule is
//! checked against a plain brute force on thousands of positions in
//! `tests/search_oracle.rs`.

pub mod symmetry;
mod tt;

use crate::board::{Board, Lines};
use symmetry::Symmetries;
use tt::{NO_MOVE, Table};

/// Largest accepted `|penalty|` (values are stored in 16 bits).
pub const MAX_PENALTY: i32 = 1000;

/// Larger than any value.
const INF: i32 = 30_000;

/// Options of a [`Solver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Value of the full board for the player to move there (who drew the last line):
    /// 0 normally, -1 for Wilson's "last move penalty".
    pub penalty: i32,
    /// Size of the transposition table in bytes (rounded down to a power of two
    /// buckets of 32 bytes, at least one bucket).
    pub tt_bytes: usize,
}

impl Default for SearchOptions {
    /// Penalty 0 and a 64 MiB table.
    fn default() -> SearchOptions {
        SearchOptions {
            penalty: 0,
            tt_bytes: 64 << 20,
        }
    }
}

/// The exact value of one legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The line drawn (index in the fixed line order).
    pub line: usize,
    /// Its value for the player who draws it: `boxes + V(child)` if it completes
    /// boxes, `-V(child)` otherwise.
    pub value: i32,
    /// Number of boxes the line completes (0, 1 or 2).
    pub boxes: u32,
}

/// The full answer for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolveResult {
    /// Exact value of the position for the player to move.
    pub value: i32,
    /// Every legal move with its exact value, best first, ties by lower line.
    pub moves: Vec<MoveValue>,
    /// Search nodes spent on this call.
    pub nodes: u64,
    /// A principal variation to the end of the game: at each step the lowest line
    /// among the best moves.
    pub pv: Vec<usize>,
}

/// Unfinished boxes and the lines that matter for move generation.
#[derive(Clone, Copy, Debug)]
struct Scan {
    /// Open lines that complete at least one box.
    captures: Lines,
    /// Open lines of boxes with exactly two sides (drawing one gives a third side).
    thirds: Lines,
    /// Boxes not yet finished.
    unfinished: i32,
}

/// The search solver for one board and penalty. It owns the transposition table,
/// which stays valid across calls, so it pays to reuse one solver for many
/// positions of the same board.
#[derive(Debug)]
pub struct Solver {
    board: Board,
    penalty: i32,
    all: Lines,
    /// Four-line mask of every box.
    boxes: Vec<Lines>,
    /// Per line, the other three lines of each box it borders (`u64::MAX` if none).
    completion: Vec<[Lines; 2]>,
    syms: Symmetries,
    table: Table,
    nodes: u64,
}

impl Solver {
    /// A solver for `board` with the given options; allocates the table.
    ///
    /// # Panics
    ///
    /// If `|options.penalty| > MAX_PENALTY`.
    pub fn new(board: Board, options: SearchOptions) -> Solver {
        assert!(
            options.penalty.abs() <= MAX_PENALTY,
            "penalty {} out of range (at most {MAX_PENALTY} in absolute value)",
            options.penalty
        );
        let boxes = (0..board.rows())
            .flat_map(|r| (0..board.cols()).map(move |c| (r, c)))
            .map(|(r, c)| board.box_mask(r, c))
            .collect();
        Solver {
            board,
            penalty: options.penalty,
            all: board.all_lines(),
            boxes,
            completion: board.completion_masks(),
            syms: Symmetries::new(board),
            table: Table::new(options.tt_bytes),
            nodes: 0,
        }
    }

    /// The board this solver works on.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The penalty (value of the full board).
    pub fn penalty(&self) -> i32 {
        self.penalty
    }

    /// The board's symmetries, as used for the table keys.
    pub fn symmetries(&self) -> &Symmetries {
        &self.syms
    }

    /// Total search nodes since the solver was made.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Forgets everything in the transposition table.
    pub fn clear(&mut self) {
        self.table.clear();
    }

    /// The exact value of `position` for the player to move. Bits above the board's
    /// last line are ignored.
    pub fn value(&mut self, position: Lines) -> i32 {
        self.mtdf(position & self.all)
    }

    /// The exact value of `position`, of each of its legal moves, and a principal
    /// variation. Bits above the board's last line are ignored.
    pub fn solve(&mut self, position: Lines) -> SolveResult {
        let start = self.nodes;
        let position = position & self.all;
        let value = self.value(position);
        let mut moves: Vec<MoveValue> = lines_of(self.all & !position)
            .map(|line| {
                let k = self.completes(position, line);
                let child = position | 1 << line;
                let value = if k > 0 {
                    k + self.mtdf(child)
                } else {
                    -self.mtdf(child)
                };
                MoveValue {
                    line,
                    value,
                    boxes: k as u32,
                }
            })
            .collect();
        moves.sort_by(|a, b| b.value.cmp(&a.value).then(a.line.cmp(&b.line)));
        debug_assert!(moves.first().is_none_or(|m| m.value == value));
        let pv = self.principal_variation(position, value);
        SolveResult {
            value,
            moves,
            nodes: self.nodes - start,
            pv,
        }
    }

    /// Follows the lowest best move from `position` (worth `value`) to the full board.
    fn principal_variation(&mut self, mut position: Lines, mut value: i32) -> Vec<usize> {
        let mut pv = Vec::new();
        while position != self.all {
            let (line, child_value) = lines_of(self.all & !position)
                .find_map(|line| {
                    let k = self.completes(position, line);
                    let child = position | 1 << line;
                    if k > 0 {
                        let target = value - k;
                        (self.search(child, target - 1, target) >= target).then_some((line, target))
                    } else {
                        (self.search(child, -value, -value + 1) <= -value).then_some((line, -value))
                    }
                })
                .expect("some move achieves the value of the position");
            pv.push(line);
            position |= 1 << line;
            value = child_value;
        }
        pv
    }

    /// MTD(f): null-window searches until the bounds meet.
    fn mtdf(&mut self, position: Lines) -> i32 {
        let (mut lower, mut upper) = (-INF, INF);
        let mut guess = 0;
        if let Some(e) = self.table.probe(self.syms.canonical(position)) {
            if e.lower == e.upper {
                return e.lower.into();
            }
            guess = i32::from(e.lower).max(guess.min(e.upper.into()));
        }
        while lower < upper {
            let beta = if guess == lower { guess + 1 } else { guess };
            guess = self.search(position, beta - 1, beta);
            if guess < beta {
                upper = guess;
            } else {
                lower = guess;
            }
        }
        guess
    }

    /// Number of boxes that drawing `line` completes in `position`.
    #[inline]
    fn completes(&self, position: Lines, line: usize) -> i32 {
        let [a, b] = self.completion[line];
        i32::from(position & a == a) + i32::from(position & b == b)
    }

    #[inline]
    fn scan(&self, position: Lines) -> Scan {
        let mut scan = Scan {
            captures: 0,
            thirds: 0,
            unfinished: 0,
        };
        for &b in &self.boxes {
            let open = b & !position;
            match open.count_ones() {
                0 => continue,
                1 => scan.captures |= open,
                2 => scan.thirds |= open,
                _ => {}
            }
            scan.unfinished += 1;
        }
        scan
    }

    /// Fail-soft alpha-beta: returns `v` with `v <= alpha` meaning `V <= v`,
    /// `v >= beta` meaning `V >= v`, and `V = v` in between.
    fn search(&mut self, position: Lines, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        let open = self.all & !position;
        if open == 0 {
            return self.penalty;
        }
        let scan = self.scan(position);
        let forced = scan.captures & !scan.thirds;
        if forced != 0 {
            let line = forced.trailing_zeros() as usize;
            let k = self.completes(position, line);
            return k + self.search(position | 1 << line, alpha - k, beta - k);
        }
        let bound = scan.unfinished + self.penalty.abs();
        if bound <= alpha {
            return bound;
        }
        if -bound >= beta {
            return -bound;
        }

        let (key, sym, stabilizer) = self.syms.canonicalize(position);
        let (mut lower, mut upper) = (-bound, bound);
        let mut hint = None;
        if let Some(e) = self.table.probe(key) {
            lower = lower.max(e.lower.into());
            upper = upper.min(e.upper.into());
            if e.best != NO_MOVE {
                hint = Some(self.syms.unmap_line(sym, e.best.into()));
            }
            if lower >= beta {
                return lower;
            }
            if upper <= alpha {
                return upper;
            }
            if lower == upper {
                return lower;
            }
            alpha = alpha.max(lower);
            beta = beta.min(upper);
        }

        // Move list: hint, captures, safe moves, sacrifices.
        let mut moves = [0u8; 64];
        let mut count = 0;
        if let Some(h) = hint {
            moves[0] = h as u8;
            count = 1;
        }
        let hint_mask = hint.map_or(0, |h| 1u64 << h);
        let captures = scan.captures;
        let safe = open & !scan.captures & !scan.thirds;
        let sacrifices = open & scan.thirds & !scan.captures;
        for group in [captures, safe, sacrifices] {
            for line in lines_of(group & !hint_mask) {
                moves[count] = line as u8;
                count += 1;
            }
        }

        let mut best = -INF;
        let mut best_move = NO_MOVE;
        let mut a = alpha;
        for &line in &moves[..count] {
            let line = line as usize;
            if stabilizer != 1 && self.has_smaller_image(stabilizer, line) {
                continue;
            }
            let k = self.completes(position, line);
            let child = position | 1 << line;
            let v = if k > 0 {
                k + self.search(child, a - k, beta - k)
            } else {
                -self.search(child, -beta, -a)
            };
            if v > best {
                best = v;
                best_move = line as u8;
                if v > a {
                    a = v;
                    if a >= beta {
                        break;
                    }
                }
            }
        }

        let (lo, hi) = if best <= alpha {
            (lower, best)
        } else if best >= beta {
            (best, upper)
        } else {
            (best, best)
        };
        debug_assert!(lo <= hi, "inconsistent bounds {lo} > {hi}");
        let canonical_move = self.syms.map_line(sym, best_move.into()) as u8;
        self.table.store(
            key,
            open.count_ones() as u8 + 1,
            lo as i16,
            hi as i16,
            canonical_move,
        );
        best
    }

    /// Whether a symmetry fixing the position maps `line` to a smaller line (so the
    /// move is equivalent to one searched already or later in line order).
    #[inline]
    fn has_smaller_image(&self, stabilizer: u8, line: usize) -> bool {
        (1..self.syms.len())
            .filter(|s| stabilizer >> s & 1 == 1)
            .any(|s| self.syms.map_line(s, line) < line)
    }
}

/// The set lines of a mask, lowest first.
fn lines_of(mut mask: Lines) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let line = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            line
        })
    })
}
