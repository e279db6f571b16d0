//! The search solver: exact values of Dots-and-Boxes positions without a database.
//!
//! # Values
//!
//! A position is the `u64` mask of drawn lines (see [`crate::games::dots::board`]). Its value
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
//!   a position all have the parity of (unfinished boxes + penalty): every bound a
//!   node returns or stores is rounded to it, and every test moves a bound by at
//!   least two.
//! * A bounded transposition table ([`SearchOptions::tt_bytes`]), keyed by the
//!   canonical position under all board symmetries (8 on square boards, 4 otherwise;
//!   see [`super::symmetry`]), storing lower and upper bounds so that every answer is exact,
//!   plus the best move for ordering. Eight-way buckets (one cache line) of one word
//!   an entry, no locks (`tt.rs`): four slots replace by depth, four hold the latest
//!   others.
//! * Twin lines (Fraser's corner observation, used by Barker and Korf): the
//!   perimeter sides of one box border nothing else, so swapping them maps the game
//!   onto itself. Table keys put the drawn ones of each such group first, and only
//!   the first open one is searched (the others are worth the same).
//! * Move ordering: the table's best move, then captures, then safe moves (which give
//!   no box a third side), then sacrifices; safe moves and sacrifices nearest the
//!   centre of the board first. At a symmetric position only one move of
//!   each orbit of the position's stabiliser is searched.
//! * Enhanced transposition cutoffs: once the first move of a big node has failed
//!   to cut, the table is asked whether another child's bound already refutes the
//!   window, and a move the table bounds no better than one searched already is
//!   passed over unsearched (its bound is a true upper bound of its worth, as a
//!   fail-low search's result would be).
//! * Static bounds: `|V| <= unfinished boxes + |penalty|`.
//! * Simple loony endgames (every unfinished box has two open sides: independent
//!   chains and loops) are valued by formula, without search (`endgame.rs`).
//! * Loony handouts: a move that hands the opponent `T` boxes ending in a domino
//!   (which the opponent may take or decline) is worth at most `2 - T`; it is not
//!   searched once a move searched already is worth that much (`handouts.rs`).
//! * String openings: with no box capturable, the sacrifices that open one string
//!   of two-sided boxes are searched as one line: either line of a single box, the
//!   middle line of two boxes, an end line of three or more, any line of a loop,
//!   each worth at least as much as the string's other lines (`strings.rs`, proved
//!   there).
//! * Capture rules (proved below): a capture that gives no other box its third side
//!   is played at once; while any capture is available, the only non-capturing move
//!   searched is the double-dealing move at the end of a chain (and not even that
//!   one when the chain goes on). A node plays its forced captures in a loop
//!   before anything else: a position whose only move is forced is no node of its
//!   own (no key, no table fetch, not counted in the nodes).
//!
//! # Capture rules
//!
//! Let line `m` complete box `b` of position `p`; write `q = p|m`. If `m` borders a
//! second box that it does not complete, call it `b'`.
//!
//! **Rule 1 (forced capture).** If `b'` does not exist, or has at most one side
//! drawn, or `m` completes it too, then `V(p) = k + V(q)` where `k` is the number of
//! boxes `m` completes. The search plays `m` and nothing else.
//!
//! *Proof*, by induction on the number of open lines. Clearly `V(p) >= k + V(q)`;
//! we bound every other move `x` of `p` by `k + V(q)`.
//!
//! * `x` completes nothing in `p`. Then `x` completes nothing in `q` either (`b'`,
//!   if any and not completed by `m`, has at most two sides in `q`; the boxes `m`
//!   completes have no other open line), so `-V(q|x) <= V(q)`. In `p|x` the opponent
//!   may take `m`, which still completes the same `k` boxes (`b'` has at most two
//!   sides), so `V(p|x) >= k + V(q|x)` and `x` is worth
//!   `-V(p|x) <= -k - V(q|x) <= V(q) - k`.
//! * `x` completes `j` boxes and leaves every box of `m` as it was, or gives `b'`
//!   its first side. It completes the same `j` boxes in `q`, and the rule applies in
//!   `p|x` by induction, so `x` is worth `j + V(p|x) = j + k + V(q|x) <= k + V(q)`.
//! * `x` completes `j` boxes and gives `b'` its second side. Then `x` borders `b'`,
//!   which had exactly one side, and completes exactly one box `b''` behind it, so
//!   `j = k = 1`. Swapping `m, b` with `x, b''` maps `p|m` onto `p|x`: the two have
//!   the same open lines but for `x` in one and `m` in the other, each the last open
//!   side of a box and a side of `b'`, which has the same two sides in both. So
//!   `V(p|x) = V(q)` and `x` is worth `1 + V(q)`.
//!
//! **Rule 2 (chain captures).** Otherwise `m` completes only `b`, and `b'` has
//! exactly two sides; let `y` be the other open side of `b'`. Then every move that
//! completes nothing, except `y`, is worth less than `m`. If moreover `y` borders a
//! box `c` with exactly two sides, whose other open side `z` does not complete a box
//! (`z` is on the edge or its other box has at most two sides), then `y` is worth
//! less than `m` as well. The search tries all captures and only the non-capturing
//! moves no capture rules out.
//!
//! *Proof.* Let `x` complete nothing in `p`, `x` not `y` (nor `m`). It borders
//! neither `b` nor `b'` (their open sides are `m` and `y`), so it completes nothing
//! in `q` and `-V(q|x) <= V(q)`; and in `p|x` the opponent may take `m`, completing
//! only `b`, so `V(p|x) >= 1 + V(q|x)`. Hence `x` is worth `-V(p|x) <= V(q) - 1`,
//! less than `m`, which is worth `1 + V(q)`.
//! Now `y` under the extra condition. In `p|y` both boxes of `m` have three sides,
//! so by rule 1 the opponent takes both: writing `r = q|y`, `y` is worth
//! `-2 - V(r)`. In `r`, `z` completes `c` and nothing else (`z`'s other box, if any,
//! is neither `b`, `b'` nor `c`, and has at most two sides), so `V(r) >= 1 + V(r|z)`.
//! In `q`, `z` completes nothing (`c` has two sides) and gives `b'` and `c`, whose
//! last open side is `y`, to the opponent by rule 1, so `z` is worth
//! `-2 - V(r|z) <= V(q)`. Together: `y` is worth `-2 - V(r) <= -3 - V(r|z) <= V(q) - 1`,
//! less than `m`.
//!
//! Both rules are checked against a plain brute force (which uses neither) on
//! thousands of positions in `tests/search_oracle.rs`.

#[cfg(test)]
mod brute;
mod endgame;
mod handouts;
mod scan;
mod strings;
mod tt;

use super::board::{Board, Lines, boxes_completed_with};
use super::chains::Chains;
use super::symmetry::Symmetries;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tt::{NO_MOVE, Table};

/// Unfinished boxes and the lines that matter for move generation ([`Rules::scan`],
/// in `scan.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scan {
    /// Open lines that complete at least one box.
    pub captures: Lines,
    /// Open lines of boxes with exactly two sides (drawing one gives a third side).
    pub thirds: Lines,
    /// Boxes not yet finished.
    pub unfinished: i32,
    /// Boxes with exactly two open sides, in the spaced layout ([`Rules::scan`]; see
    /// [`Rules::compact_boxes`] for bit `b` for box `b`).
    pub two_sided_spaced: u64,
    /// Whether every unfinished box has exactly two open sides.
    pub all_two_sided: bool,
}

/// Largest accepted `|penalty|` (values are stored in 16 bits).
pub const MAX_PENALTY: i32 = 1000;

/// "No box" in [`Solver::adjacent`].
const NO_BOX: usize = usize::MAX;

/// Enhanced transposition cutoffs are tried at nodes with at least `ETC_MIN_OPEN`
/// open lines, once their first move has failed to cut: they cost a table probe per
/// child, which pays only where subtrees are big enough.
///
/// Tried before the first move at 32 open lines or more (which
/// left none on empty 3x4), they cost more CPU than they saved below that (a floor
/// of 16 and a depth of 20 saved 17% of the nodes of the 20 middle games of
/// data/search-middlegames.txt and cost 10-30% more CPU). Tried only once the first
/// move has failed to cut, and passing over the moves the table bounds low, depth
/// 20 and floor 16 against 9 and 32 (one thread, 2026-11-29): empty 3x4 16,614,459
/// -> 12,930,111 nodes, the middle games 30,601,202 -> 26,529,572, CPU the same
/// within the noise of a machine at load 10-13 (15.4 and 16.2 s against 15.7 and
/// 14.2 s user). Those runs also kept them within 20 plies of the root; on empty
/// 4x4 (40 open lines) that left out the nodes of 16-19 open lines, and trying them
/// there too (2026-12-01, one thread, value only, --tt 1GiB) took 161,217,726 ->
/// 138,834,045 nodes and 93 -> 77 s of CPU; problem 12.18 plain, 27.8 -> 24.4 M
/// nodes, CPU the same. A floor of 12, 14 or 18 instead of 16 was slower on 4x4.
const ETC_MIN_OPEN: u32 = 16;

/// Larger than any value.
const INF: i32 = 30_000;

/// The form of the table's keys (the canonical position under the board's
/// symmetries, twin lines normalised): bounds kept outside the process
/// ([`Solver::proven`], `tb solve --store`) are valid only under the same form.
/// Bump it whenever [`Solver`] canonicalises positions differently.
pub const KEY_FORM: u32 = 1;

/// Bounds a search proved on a position's value, in the table's terms: what
/// [`Solver::proven`] gives and [`Solver::seed`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proven {
    /// The canonical position (the table's key, see [`KEY_FORM`]).
    pub key: Lines,
    /// Its open lines.
    pub open: u8,
    /// Lower bound on its value for the player to move.
    pub lower: i16,
    /// Upper bound.
    pub upper: i16,
    /// Best move found, in canonical coordinates (`u8::MAX`: none).
    pub best: u8,
}

/// Options of a [`Solver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Value of the full board for the player to move there (who drew the last line):
    /// 0 normally, -1 for Wilson's "last move penalty".
    pub penalty: i32,
    /// Size of the transposition table in bytes (rounded down to a power of two
    /// buckets of 64 bytes, at least one bucket).
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
    /// Every legal move with its exact value, best first, ties by lower line; with
    /// [`Solver::set_best_move_only`], one best move.
    pub moves: Vec<MoveValue>,
    /// Search nodes spent on this call.
    pub nodes: u64,
    /// A principal variation to the end of the game: at each step the lowest line
    /// among the best moves (with one best move, that move first; empty when
    /// [`Solver::set_principal_variation`] is off).
    pub pv: Vec<usize>,
    /// Whether `moves` is one best move only ([`Solver::set_best_move_only`]).
    pub best_only: bool,
    /// The moves (bit per line) whose `value` is only an upper bound on their worth,
    /// below the position's value ([`Solver::set_losing_bounds`]); 0 otherwise.
    pub bounded: Lines,
}

/// Limits of one bounded search ([`Solver::solve_within`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many search nodes.
    pub max_nodes: Option<u64>,
    /// Stop after this much time.
    pub time_limit: Option<Duration>,
}

/// How far a search stopped by its [`Limits`] got: the root value lies within
/// `lower..=upper`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// The value is at least this.
    pub lower: i32,
    /// The value is at most this.
    pub upper: i32,
    /// Search nodes spent.
    pub nodes: u64,
    /// Which limit stopped it.
    pub reason: &'static str,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.lower == self.upper {
            write!(
                f,
                "the search reached its {} after {} nodes; the value is {} but not every move's is known",
                self.reason, self.nodes, self.lower
            )
        } else {
            write!(
                f,
                "the search reached its {} after {} nodes; the value lies in {}..={}",
                self.reason, self.nodes, self.lower, self.upper
            )
        }
    }
}

impl std::error::Error for Stopped {}

/// A long search's state, given to the progress callback about once a second.
#[derive(Clone, Copy, Debug)]
pub struct SearchStatus {
    /// Nodes so far.
    pub nodes: u64,
    /// Seconds so far.
    pub seconds: f64,
    /// The root value is known to be at least this.
    pub lower: i32,
    /// And at most this.
    pub upper: i32,
}

/// Called with the state of a long search about once a second.
pub type ProgressFn = Box<dyn FnMut(&SearchStatus) + Send>;

/// Nodes between two looks at the clock (and the progress callback).
const CLOCK_NODES: u64 = 1 << 16;
/// Nodes between two looks of a helper thread at its halt flag (and of any thread
/// of a parallel solve at the table entry of the position it tests).
const HALT_NODES: u64 = 1 << 12;

/// Why an MTD(f) test stops when another thread has answered it (not a limit: the
/// test's answer is in the table).
const STALE: &str = "answered by another thread";

/// Which MTD(f) a call of [`Solver::mtdf_from`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// Of a position below the root, on one thread: nothing else to tell.
    Inner,
    /// Of the root, on the main thread: its bounds are kept in the guard.
    Root,
    /// Of the root or of a move's position, where other threads may search the
    /// same position: a test one of them answers first is left.
    Shared,
}

/// What stops a search and who hears of its progress.
#[derive(Default)]
struct Guard {
    /// The next node count at which [`Solver::limit_reached`] looks (`u64::MAX`:
    /// never, the unbounded default).
    check_at: u64,
    /// Stop at this node count.
    max_nodes: Option<u64>,
    deadline: Option<Instant>,
    started: Option<Instant>,
    last_report: Option<Instant>,
    /// Set once a limit is reached: every search returns at once, nothing is stored.
    stopped: Option<&'static str>,
    /// The node count when it stopped (unwinding visits a few more).
    stopped_at: u64,
    /// Bounds of the root value known so far.
    bounds: (i32, i32),
    progress: Option<ProgressFn>,
    /// A helper thread's: set by the main thread when it has its answer.
    halt: Option<Arc<AtomicBool>>,
    /// With several threads, the MTD(f) test in progress on a position other threads
    /// may test too (the root, or a move being valued): its table key and the `beta`
    /// of the null-window search. A thread whose test another one has answered
    /// meanwhile (the position's table entry decides it) stops it as [`STALE`].
    shared_test: Option<(Lines, i32)>,
}

impl Guard {
    /// A guard with no limits and the given progress callback.
    fn idle(progress: Option<ProgressFn>) -> Guard {
        Guard {
            check_at: u64::MAX,
            progress,
            ..Guard::default()
        }
    }

    /// Whether the main thread has told this helper to stop.
    fn halted(&self) -> bool {
        self.halt
            .as_ref()
            .is_some_and(|h| h.load(Ordering::Relaxed))
    }

    /// Sets the next node count to look at the limits: the node limit, or a clock
    /// check [`CLOCK_NODES`] on when a deadline or progress needs the clock.
    /// A deadline already past (a time limit of zero) is looked at on the next node:
    /// a search smaller than the clock's interval would finish otherwise.
    fn rearm(&mut self, nodes: u64) {
        let clock = if self.deadline.is_some_and(|d| d <= Instant::now()) {
            nodes
        } else if self.halt.is_some() || self.shared_test.is_some() {
            nodes.saturating_add(HALT_NODES)
        } else if self.deadline.is_some() || self.progress.is_some() {
            nodes.saturating_add(CLOCK_NODES)
        } else {
            u64::MAX
        };
        self.check_at = clock.min(self.max_nodes.unwrap_or(u64::MAX));
    }
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("max_nodes", &self.max_nodes)
            .field("deadline", &self.deadline)
            .field("stopped", &self.stopped)
            .finish()
    }
}

/// The search solver for one board and penalty. It owns the transposition table,
/// which stays valid across calls, so it pays to reuse one solver for many
/// positions of the same board.
#[derive(Debug)]
pub struct Solver {
    /// What the search knows before it starts; each helper thread gets a copy.
    rules: Rules,
    /// Shared with the helper threads of a parallel solve.
    table: Arc<Table>,
    nodes: u64,
    /// Threads of [`Solver::solve`] (lazy SMP: helpers share the table).
    threads: usize,
    /// Nodes with at least this many open lines try enhanced transposition cutoffs
    /// ([`ETC_MIN_OPEN`] unless [`Solver::set_cutoff_floor`]).
    etc_min: u32,
    /// Limits and progress of the current call.
    guard: Guard,
    /// A helper thread's root while it searches a value alongside the main thread:
    /// its moves are tried in reverse order.
    reversed_root: Option<Lines>,
    /// In a parallel solve, where the threads are (see `Crew`).
    crew: Option<Arc<Crew>>,
    /// Whether [`Solver::solve`] follows a principal variation (see
    /// [`Solver::set_principal_variation`]).
    want_pv: bool,
    /// Whether [`Solver::solve`] values one best move only (see
    /// [`Solver::set_best_move_only`]).
    best_only: bool,
    /// Whether moves below the value get an upper bound only (see
    /// [`Solver::set_losing_bounds`]).
    losing_bounds: bool,
    /// The root's move that passed its last MTD(f) test (see
    /// [`Solver::note_root_proof`]).
    root_proof: Option<usize>,
    /// Whether [`Solver::seed`] wrote into the table (so that it is no longer the
    /// zeroed allocation [`Solver::clear`] may skip).
    seeded: bool,
    /// The moves passed over on a table bound (position, line, bound), for the
    /// unit test that checks each bound against a brute force.
    #[cfg(test)]
    passed_over: Vec<(Lines, usize, i32)>,
}

/// Where the threads of a parallel solve are while they value the root's moves:
/// each move's position as its table key, [`NOWHERE`] when none. A thread about to
/// value a move another thread is valuing searches it alongside (its replies in
/// reverse order) instead of repeating the same search.
#[derive(Debug)]
struct Crew {
    /// The move the main thread is valuing.
    main_at: AtomicU64,
    /// The move a helper is valuing.
    helper_at: AtomicU64,
}

/// A position the search has reached once its forced captures are played, and
/// the lines that may be drawn in it.
#[derive(Clone, Copy, Debug)]
struct Node {
    position: Lines,
    legal: Lines,
}

/// Where the forced captures from a position lead ([`Solver::settle`]); `taken` is
/// the boxes they take, all for the player to move.
enum Settled {
    /// They finish the board.
    Over { taken: i32 },
    /// A position where no capture is forced, with its [`Images`] and [`Scan`]: the
    /// position the search gives a node (and the table an entry).
    At {
        taken: i32,
        node: Node,
        images: Images,
        scan: Scan,
    },
}

/// A [`Crew`] place: valuing no move.
const NOWHERE: Lines = u64::MAX;

/// The board's geometry, the rules in force (penalty, chains) and the tables
/// derived from them: everything a search reads and never changes.
#[derive(Debug, Clone)]
struct Rules {
    board: Board,
    penalty: i32,
    all: Lines,
    /// Four-line mask of every box.
    boxes: Vec<Lines>,
    /// Per line, the other three lines of each box it borders (`u64::MAX` if none).
    completion: Vec<[Lines; 2]>,
    /// Per line, the boxes it borders (indices into `boxes`, [`NO_BOX`] if none).
    adjacent: Vec<[usize; 2]>,
    syms: Symmetries,
    /// Every line, nearest the centre of the board first (ties by line index).
    centre_first: Vec<u8>,
    /// Per line, its place in `centre_first`.
    centre_rank: [u8; 64],
    /// Chains played as pseudo-lines (none: the plain game); see [`Solver::set_chains`].
    chains: Chains,
    /// Groups of two or more interchangeable lines: the perimeter sides of one box
    /// (a corner box's two, or more on 1xN boards), which border that box only.
    /// Swapping them maps the game onto itself, so table keys hold the drawn ones
    /// first and only the first open one is searched. (None that touch a chain.)
    twins: Vec<Lines>,
    /// Per chain, its lines and every side of a box that borders one of them: while
    /// the chain is not drawn, captures there are not forced.
    chain_near: Vec<(Lines, Lines)>,
    /// `image_bits[line]`: what drawing `line` adds to a position's normalised
    /// image under symmetry `s` (see [`Images`]): `[0][s]`, the image line's bit
    /// when it is in no twin group, else `[1][s]`, that group's mask (the image gets
    /// the group's lowest line not yet drawn there); both 0 for symmetries the
    /// board does not have, so that [`Rules::child_images`] runs over all eight
    /// (a loop of fixed length, which the compiler turns into vector operations).
    image_bits: Vec<[Images; 2]>,
    /// Every box in the spaced layout of [`Rules::scan`].
    spaced_boxes: u64,
}

/// A position's images under each of the board's symmetries (entry `s` for
/// symmetry `s`, the first [`Symmetries::len`] used), each normalised (the drawn
/// lines of each twin group on its lowest lines): the table key is the least of
/// them. Kept up to date move by move ([`Rules::child_images`]: a few operations per
/// symmetry) instead of mapping the whole position at every node.
type Images = [Lines; 8];

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
        let boxes: Vec<Lines> = (0..board.rows())
            .flat_map(|r| (0..board.cols()).map(move |c| (r, c)))
            .map(|(r, c)| board.box_mask(r, c))
            .collect();
        let adjacent = (0..board.num_lines())
            .map(|l| {
                let mut adj = [NO_BOX; 2];
                for (slot, (r, c)) in board.boxes_of_line(l).into_iter().enumerate() {
                    adj[slot] = r * board.cols() + c;
                    debug_assert_eq!(boxes[adj[slot]] >> l & 1, 1);
                }
                adj
            })
            .collect();
        let centre_first = centre_first(board);
        let mut rules = Rules {
            board,
            penalty: options.penalty,
            all: board.all_lines(),
            boxes,
            completion: board.completion_masks(),
            adjacent,
            syms: Symmetries::new(board),
            centre_rank: centre_rank(&centre_first),
            centre_first,
            chains: Chains::none(),
            chain_near: Vec::new(),
            twins: Vec::new(),
            image_bits: Vec::new(),
            spaced_boxes: 0,
        };
        rules.spaced_boxes = rules.spaced_box_mask();
        rules.set_twins();
        Solver {
            rules,
            table: Arc::new(Table::new(options.tt_bytes, board.num_lines() as u32)),
            nodes: 0,
            threads: 1,
            etc_min: ETC_MIN_OPEN,
            guard: Guard::idle(None),
            reversed_root: None,
            crew: None,
            want_pv: true,
            best_only: false,
            losing_bounds: false,
            root_proof: None,
            seeded: false,
            #[cfg(test)]
            passed_over: Vec::new(),
        }
    }

    /// The table key of `position` (the least normalised image under the board's
    /// symmetries), the symmetry giving it, and the symmetries fixing `position`
    /// itself (see [`Symmetries::canonicalize`]).
    #[inline]
    fn canonicalize(&self, position: Lines) -> (Lines, usize, u8) {
        self.rules
            .syms
            .canonicalize_with(position, |p| self.rules.normalize(p))
    }

    /// The table key of `position`.
    #[inline]
    fn key(&self, position: Lines) -> Lines {
        self.canonicalize(position).0
    }

    /// Plays `chains` as pseudo-lines from now on (see [`super::chains`]): while a
    /// chain is partly drawn only its lines may be drawn. Clears the table, and turns
    /// symmetry off when there are chains (a symmetry need not keep them).
    pub fn set_chains(&mut self, chains: Chains) {
        self.rules.set_chains(chains);
        self.clear();
    }

    /// Runs [`Solver::solve`] and [`Solver::solve_within`] on `threads` threads:
    /// helpers run the same tests of the root's value (trying the root's moves in
    /// the opposite order), then value the moves from the other end and join the
    /// main thread where they meet (see `Crew`), all into the shared table, so
    /// that each thread finds what the others proved; a thread whose test another
    /// one has answered moves on to the next. The value is the same; the node count
    /// is every thread's.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// A helper thread's solver: the rules and the cutoff depth copied, the table
    /// shared, its own counters.
    fn helper(&self, halt: Arc<AtomicBool>, crew: Arc<Crew>) -> Solver {
        Solver {
            rules: self.rules.clone(),
            table: Arc::clone(&self.table),
            nodes: 0,
            threads: 1,
            etc_min: self.etc_min,
            guard: Guard {
                halt: Some(halt),
                ..Guard::idle(None)
            },
            reversed_root: None,
            crew: Some(crew),
            want_pv: false,
            best_only: self.best_only,
            losing_bounds: self.losing_bounds,
            root_proof: None,
            seeded: self.seeded,
            #[cfg(test)]
            passed_over: Vec::new(),
        }
    }

    /// A helper's work: the root's value alongside the main thread (its tests the
    /// same, the root's moves tried in reverse order, so that the threads refute
    /// different moves first); then the moves' values, each position once (moves
    /// that lead to the same key are one), from the last line backwards while the
    /// main thread goes forwards; then alongside the main thread on each move it
    /// values, until done or halted.
    fn help(&mut self, position: Lines) {
        self.guard.rearm(self.nodes);
        self.reversed_root = Some(position);
        let Some(value) = self.mtdf_from(position, (-INF, INF), Pass::Shared, 0) else {
            return;
        };
        self.reversed_root = None;
        if self.best_only {
            // The main thread checks one move; valuing the others would be wasted.
            return;
        }
        let crew = Arc::clone(self.crew.as_ref().expect("a helper has a crew"));
        let mut distinct: Vec<(usize, Lines)> = Vec::new();
        for line in lines_of(self.legal(position)) {
            let key = self.key(position | 1 << line);
            if distinct.iter().all(|&(_, k)| k != key) {
                distinct.push((line, key));
            }
        }
        for &(line, key) in distinct.iter().rev() {
            if crew.main_at.load(Ordering::Acquire) == key {
                break;
            }
            crew.helper_at.store(key, Ordering::Release);
            self.move_value(position, line, value, Pass::Shared);
            crew.helper_at.store(NOWHERE, Ordering::Release);
            if self.guard.stopped.is_some() {
                return;
            }
        }
        let mut done = NOWHERE;
        while !self.guard.halted() {
            let at = crew.main_at.load(Ordering::Acquire);
            let found = (at != done).then(|| distinct.iter().find(|&&(_, key)| key == at));
            let Some(Some(&(line, _))) = found else {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            };
            self.reversed_root = Some(position | 1 << line);
            self.move_value(position, line, value, Pass::Shared);
            self.reversed_root = None;
            if self.guard.stopped.is_some() {
                return;
            }
            done = at;
        }
    }

    /// The lines that may be drawn in `position`.
    #[inline]
    fn legal(&self, position: Lines) -> Lines {
        self.rules
            .chains
            .legal(position, self.rules.all & !position)
    }

    /// Whether [`Solver::solve`] and [`Solver::solve_within`] also follow a
    /// principal variation to the end of the game (on by default; off, the result's
    /// `pv` is empty). It is one search per move of the line on top of the moves'
    /// values, on one thread: on empty 4x4 it took longer than all the values.
    pub fn set_principal_variation(&mut self, on: bool) {
        self.want_pv = on;
    }

    /// Whether [`Solver::solve`] and [`Solver::solve_within`] give one best move
    /// only (off by default): the result's `moves` is then that move, proven to
    /// reach the value by one null-window search. The move that passed the root's
    /// last passed MTD(f) test is tried first (it proved the value; its tree is
    /// still in the table), then the root's table move, then the others in line
    /// order; which best move it is may differ between runs with several
    /// threads. The other moves' values each need a search of their own: on
    /// problem 12.18 they took as long as the value. Helper threads stop once the
    /// value is known.
    pub fn set_best_move_only(&mut self, on: bool) {
        self.best_only = on;
    }

    /// Whether [`Solver::solve`] and [`Solver::solve_within`], valuing every move,
    /// give a move that does not reach the position's value an upper bound only (off
    /// by default: every value exact). Each move is tested once at the position's
    /// value, as it is anyway; a move that fails the test is not searched again for
    /// its exact value, and gets the upper bound that test proved (at most the value
    /// less two), its line set in [`SolveResult::bounded`]. The value and the best
    /// moves' values stay exact.
    pub fn set_losing_bounds(&mut self, on: bool) {
        self.losing_bounds = on;
    }

    /// Calls `progress` about once a second during long searches (`None`: never).
    pub fn set_progress(&mut self, progress: Option<ProgressFn>) {
        self.guard.progress = progress;
    }

    /// The board this solver works on.
    pub fn board(&self) -> Board {
        self.rules.board
    }

    /// The penalty (value of the full board).
    pub fn penalty(&self) -> i32 {
        self.rules.penalty
    }

    /// The board's symmetries, as used for the table keys.
    pub fn symmetries(&self) -> &Symmetries {
        &self.rules.syms
    }

    /// Bytes of the transposition table.
    pub fn table_bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Total search nodes since the solver was made.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The bounds the table holds on positions with at least `min_open` open lines.
    /// Everything in the table was proven, also after a stopped search, so these
    /// are true bounds of the game this solver plays (its board, penalty and
    /// chains; keys of [`KEY_FORM`]).
    pub fn proven(&self, min_open: u32) -> Vec<Proven> {
        let min_depth = u8::try_from(min_open + 1).unwrap_or(u8::MAX);
        self.table
            .entries(min_depth)
            .into_iter()
            .map(|e| Proven {
                key: e.key,
                open: e.depth - 1,
                lower: e.lower,
                upper: e.upper,
                best: e.best,
            })
            .collect()
    }

    /// Puts bounds proven by an earlier search of the same game (board, penalty,
    /// chains, [`KEY_FORM`]) into the table, merged with what it holds. The search
    /// trusts them as it trusts its own entries.
    pub fn seed(&mut self, proven: &[Proven]) {
        for p in proven {
            self.table
                .store(p.key & self.rules.all, p.lower, p.upper, p.best);
        }
        self.seeded = true;
    }

    /// Forgets everything in the transposition table.
    pub fn clear(&mut self) {
        // A solver that has not searched yet has stored nothing: its table is still
        // the zeroed allocation, and clearing it would write every page once more
        // (seconds for the 8 GiB table of a big endgame).
        if self.nodes == 0 && !self.seeded {
            return;
        }
        Arc::get_mut(&mut self.table)
            .expect("helper threads end with the solve that started them")
            .clear();
    }

    /// The exact value of `position` for the player to move. Bits above the board's
    /// last line are ignored.
    pub fn value(&mut self, position: Lines) -> i32 {
        self.mtdf(position & self.rules.all)
    }

    /// Tries enhanced transposition cutoffs at nodes with at least `open_lines` open
    /// lines instead of the default `ETC_MIN_OPEN`: fewer is slower, but it lets
    /// tests on small boards reach them (values are the same either way).
    pub fn set_cutoff_floor(&mut self, open_lines: u32) {
        self.etc_min = open_lines;
    }

    /// The exact value of `position`, of each of its legal moves (or one best move,
    /// see [`Solver::set_best_move_only`]), and a principal variation if asked for.
    /// Bits above the board's last line are ignored.
    pub fn solve(&mut self, position: Lines) -> SolveResult {
        match self.solve_within(position, Limits::default()) {
            Ok(result) => result,
            Err(stopped) => unreachable!("a search without limits stopped: {stopped}"),
        }
    }

    /// [`Solver::solve`] within `limits`: when one is reached, the bounds on the
    /// value found so far. The transposition table keeps only what was proven.
    pub fn solve_within(
        &mut self,
        position: Lines,
        limits: Limits,
    ) -> Result<SolveResult, Stopped> {
        let start = self.nodes;
        let position = position & self.rules.all;
        let scan = self.rules.scan(position);
        let most = scan.unfinished + self.rules.penalty.abs();
        self.arm(limits, (-most, most));
        let outcome = self.solve_armed(position);
        let reason = self.guard.stopped.take();
        let (lower, upper) = self.guard.bounds;
        let stopped_at = self.guard.stopped_at;
        self.guard = Guard::idle(self.guard.progress.take());
        match (outcome, reason) {
            (Some(mut result), None) => {
                result.nodes = self.nodes - start;
                Ok(result)
            }
            (_, reason) => Err(Stopped {
                lower,
                upper,
                nodes: stopped_at - start,
                reason: reason.unwrap_or("limit"),
            }),
        }
    }

    /// Sets up the guard for one call.
    fn arm(&mut self, limits: Limits, bounds: (i32, i32)) {
        let now = Instant::now();
        let g = &mut self.guard;
        g.max_nodes = limits.max_nodes.map(|n| self.nodes.saturating_add(n));
        g.deadline = limits.time_limit.map(|t| now + t);
        g.started = Some(now);
        g.last_report = Some(now);
        g.stopped = None;
        g.bounds = bounds;
        g.rearm(self.nodes);
    }

    /// Whether a limit has been reached (and the progress callback's turn); called
    /// when the node count reaches `guard.check_at`, so rarely.
    #[cold]
    fn limit_reached(&mut self) -> bool {
        let g = &mut self.guard;
        if g.stopped.is_some() {
            return true;
        }
        if g.halted() {
            g.stopped = Some("halted");
            g.stopped_at = self.nodes;
            return true;
        }
        if let Some((key, beta)) = g.shared_test
            && let Some(e) = self.table.probe(key)
            && (i32::from(e.lower) >= beta || i32::from(e.upper) < beta)
        {
            g.stopped = Some(STALE);
            g.stopped_at = self.nodes;
            return true;
        }
        if g.max_nodes.is_some_and(|max| self.nodes >= max) {
            g.stopped = Some("node limit");
            g.stopped_at = self.nodes;
            return true;
        }
        let now = Instant::now();
        if g.deadline.is_some_and(|d| now >= d) {
            g.stopped = Some("time limit");
            g.stopped_at = self.nodes;
            return true;
        }
        if let (Some(progress), Some(started), Some(last)) =
            (g.progress.as_mut(), g.started, g.last_report)
            && now.duration_since(last) >= Duration::from_secs(1)
        {
            g.last_report = Some(now);
            progress(&SearchStatus {
                nodes: self.nodes,
                seconds: now.duration_since(started).as_secs_f64(),
                lower: g.bounds.0,
                upper: g.bounds.1,
            });
        }
        g.rearm(self.nodes);
        false
    }

    /// The body of [`Solver::solve_within`]: `None` once a limit stops it.
    fn solve_armed(&mut self, position: Lines) -> Option<SolveResult> {
        if self.threads == 1 {
            return self.solve_alone(position);
        }
        let halt = Arc::new(AtomicBool::new(false));
        let crew = Arc::new(Crew {
            main_at: AtomicU64::new(NOWHERE),
            helper_at: AtomicU64::new(NOWHERE),
        });
        let helpers: Vec<Solver> = (1..self.threads)
            .map(|_| self.helper(Arc::clone(&halt), Arc::clone(&crew)))
            .collect();
        self.crew = Some(crew);
        std::thread::scope(|scope| {
            let running: Vec<_> = helpers
                .into_iter()
                .map(|mut helper| {
                    scope.spawn(move || {
                        helper.help(position);
                        helper.nodes
                    })
                })
                .collect();
            let result = self.solve_alone(position);
            self.crew = None;
            halt.store(true, Ordering::Relaxed);
            for helper in running {
                self.nodes += helper.join().expect("a search helper thread panicked");
            }
            result
        })
    }

    /// [`Solver::solve_armed`] on this thread.
    fn solve_alone(&mut self, position: Lines) -> Option<SolveResult> {
        self.root_proof = None;
        let value = self.mtdf_root(position)?;
        let mut moves = Vec::new();
        let mut bounded = 0;
        // With one best move, its child's value, for the principal variation.
        let mut best = None;
        if self.best_only {
            if position != self.rules.all {
                let (line, child_value) = self.best_move(position, value)?;
                moves.push(MoveValue {
                    line,
                    value,
                    boxes: self.completes(position, line) as u32,
                });
                best = Some((line, child_value));
            }
        } else {
            bounded = self.value_every_move(position, value, &mut moves)?;
        }
        let pv = match (self.want_pv, best) {
            (false, _) => Vec::new(),
            // With one best move, the principal variation starts from it.
            (true, Some((line, child_value))) => {
                let rest = self.principal_variation(position | 1 << line, child_value)?;
                [vec![line], rest].concat()
            }
            (true, None) => self.principal_variation(position, value)?,
        };
        Some(SolveResult {
            value,
            moves,
            nodes: 0,
            pv,
            best_only: self.best_only,
            bounded,
        })
    }

    /// Each legal move of `position` (worth `value`) with its exact value (or an
    /// upper bound, see [`Solver::set_losing_bounds`]: those moves are the mask
    /// returned), into `moves`, best first. `None` once a limit stops it.
    fn value_every_move(
        &mut self,
        position: Lines,
        value: i32,
        moves: &mut Vec<MoveValue>,
    ) -> Option<Lines> {
        let mut bounded = 0;
        for line in lines_of(self.legal(position)) {
            let (value, exact) = self.main_move_value(position, line, value);
            if self.guard.stopped.is_some() {
                return None;
            }
            if !exact {
                bounded |= 1 << line;
            }
            moves.push(MoveValue {
                line,
                value,
                boxes: self.completes(position, line) as u32,
            });
        }
        moves.sort_by(|a, b| b.value.cmp(&a.value).then(a.line.cmp(&b.line)));
        debug_assert!(moves.first().is_none_or(|m| m.value == value));
        Some(bounded)
    }

    /// [`Solver::move_value`] on the main thread: alone, or telling the helpers
    /// which move it values, and searching alongside a helper already on it.
    fn main_move_value(&mut self, position: Lines, line: usize, value: i32) -> (i32, bool) {
        let Some(crew) = self.crew.clone() else {
            return self.move_value(position, line, value, Pass::Inner);
        };
        let child = position | 1 << line;
        let key = self.key(child);
        crew.main_at.store(key, Ordering::Release);
        if crew.helper_at.load(Ordering::Acquire) == key {
            self.reversed_root = Some(child);
        }
        let value = self.move_value(position, line, value, Pass::Shared);
        self.reversed_root = None;
        crew.main_at.store(NOWHERE, Ordering::Release);
        value
    }

    /// The exact value of drawing `line` in `position`, whose value is `value`:
    /// first tested at `value` itself (many moves are best). No move is worth more
    /// than `value`, so the child's MTD(f) starts from that bound and never tests
    /// it (where the table has lost the root's proof of it, that test would be a
    /// search of its own). With [`Solver::set_losing_bounds`], a move that fails
    /// that first test gets the upper bound it proved instead (`false`: a bound,
    /// `true`: exact). After a stopped search the number means nothing (the caller
    /// sees `guard.stopped` and drops it).
    fn move_value(&mut self, position: Lines, line: usize, value: i32, pass: Pass) -> (i32, bool) {
        let k = self.completes(position, line);
        let child = position | 1 << line;
        let (mut bounds, guess, sign) = if k > 0 {
            ((-INF, value - k), value - k, 1)
        } else {
            ((-value, INF), -value, -1)
        };
        if self.losing_bounds {
            // One test, "does the move reach `value`?": the far bound is narrowed to
            // the next value of the child's parity, so that MTD(f) stops after it.
            // (That bound is not proven and is never stored: the search stores only
            // what its own tests prove.)
            if k > 0 {
                bounds.0 = value - k - 2;
            } else {
                bounds.1 = -value + 2;
            }
        }
        let child_value = self.mtdf_from(child, bounds, pass, guess).unwrap_or(0);
        let worth = k + sign * child_value;
        if !self.losing_bounds || worth == value {
            return (worth, true);
        }
        // The move fails to reach `value`: at most `value - 2` (the values' parity),
        // or less where the failed test proved less (its bound is in the table).
        let mut bound = value - 2;
        if let Some(e) = self.table.probe(self.key(child)) {
            let parity = self.parity(child);
            let proven = if k > 0 {
                k + round_down(e.upper.into(), parity)
            } else {
                -round_up(e.lower.into(), parity)
            };
            bound = bound.min(proven);
        }
        (bound, false)
    }

    /// Follows the lowest best move from `position` (worth `value`) to the full board.
    fn principal_variation(&mut self, mut position: Lines, mut value: i32) -> Option<Vec<usize>> {
        let mut pv = Vec::new();
        while position != self.rules.all {
            let (line, child_value) =
                self.first_achieving(position, value, lines_of(self.legal(position)))?;
            pv.push(line);
            position |= 1 << line;
            value = child_value;
        }
        Some(pv)
    }

    /// A best move of `position` (worth `value`) and its child's value: the move
    /// that proved the value first, then the table's move (a stale or drawn one
    /// costs a search or nothing), then the others in line order.
    fn best_move(&mut self, position: Lines, value: i32) -> Option<(usize, i32)> {
        let legal = self.legal(position);
        let (key, sym, _) = self.canonicalize(position);
        let table_move = self
            .table
            .probe(key)
            .filter(|e| e.best != NO_MOVE)
            .map(|e| self.rules.syms.unmap_line(sym, e.best.into()));
        // The move of the root's last passed test first, then the table's, then
        // the rest, each once and only if legal.
        let mut order: Vec<usize> = Vec::new();
        for line in [self.root_proof, table_move]
            .into_iter()
            .flatten()
            .chain(lines_of(legal))
        {
            if legal >> line & 1 == 1 && !order.contains(&line) {
                order.push(line);
            }
        }
        self.first_achieving(position, value, order.into_iter())
    }

    /// The first of `lines` that achieves `value` in `position`, with the child's
    /// value: one the table already proves (a seeded table knows the moves of a
    /// stored search), else by a null-window search of each child in turn. `None`
    /// once a limit stops it.
    fn first_achieving(
        &mut self,
        position: Lines,
        value: i32,
        lines: impl Iterator<Item = usize>,
    ) -> Option<(usize, i32)> {
        let lines: Vec<usize> = lines.collect();
        for &line in &lines {
            let k = self.completes(position, line);
            let child = position | 1 << line;
            if let Some(e) = self.table.probe(self.key(child)) {
                // Bounds hold at the parity of the child's values (as in MTD(f)).
                let parity = self.parity(child);
                if k > 0 && round_up(e.lower.into(), parity) >= value - k {
                    return Some((line, value - k));
                }
                if k == 0 && round_down(e.upper.into(), parity) <= -value {
                    return Some((line, -value));
                }
            }
        }
        for line in lines {
            let k = self.completes(position, line);
            let child = position | 1 << line;
            let achieves = if k > 0 {
                let target = value - k;
                (self.search(child, target - 1, target) >= target).then_some(target)
            } else {
                (self.search(child, -value, -value + 1) <= -value).then_some(-value)
            };
            if self.guard.stopped.is_some() {
                return None;
            }
            if let Some(child_value) = achieves {
                return Some((line, child_value));
            }
        }
        // Only a stopped search finds no move achieving the value.
        assert!(
            self.guard.stopped.is_some(),
            "some move achieves the value of the position"
        );
        None
    }

    /// After a root test at `beta` (this thread's or, answered alongside, a
    /// helper's): if the table now proves the root worth at least `beta`, its move
    /// is the one whose search did, kept for [`Solver::best_move`]; a later test that
    /// fails low overwrites the table's move with the one of highest bound.
    fn note_root_proof(&mut self, position: Lines, beta: i32) {
        let (key, sym, _) = self.canonicalize(position);
        if let Some(e) = self.table.probe(key)
            && i32::from(e.lower) >= beta
            && e.best != NO_MOVE
        {
            self.root_proof = Some(self.rules.syms.unmap_line(sym, e.best.into()));
        }
    }

    /// MTD(f): null-window searches until the bounds meet.
    fn mtdf(&mut self, position: Lines) -> i32 {
        // (Only a stopped search has no value; its caller discards it.)
        self.mtdf_from(position, (-INF, INF), Pass::Inner, 0)
            .unwrap_or(0)
    }

    /// MTD(f) at the root: the bounds it proves are kept in the guard (for progress
    /// and a stopped search).
    fn mtdf_root(&mut self, position: Lines) -> Option<i32> {
        self.mtdf_from(position, self.guard.bounds, Pass::Root, 0)
    }

    /// MTD(f) from known bounds, narrowed by the table, first testing `guess` (the
    /// nearer the value, the fewer tests). `None` once a limit stops it.
    fn mtdf_from(
        &mut self,
        position: Lines,
        bounds: (i32, i32),
        pass: Pass,
        mut guess: i32,
    ) -> Option<i32> {
        let key = self.key(position);
        let (mut lower, mut upper) = bounds;
        // Every value of the position has this parity: bounds and guesses keep it,
        // so that each test moves a bound by two.
        let parity = self.parity(position);
        loop {
            if let Some(e) = self.table.probe(key) {
                lower = lower.max(e.lower.into());
                upper = upper.min(e.upper.into());
            }
            lower = round_up(lower, parity);
            upper = round_down(upper, parity);
            // (Bounds narrowed by assumption, as `move_value` does for a losing move's
            // bound, may cross what the table proves: nothing is left to test then.)
            if lower >= upper {
                break;
            }
            guess = round_up(guess, parity).clamp(lower, upper);
            if pass == Pass::Root {
                self.guard.bounds = (lower, upper);
            }
            // "V > guess" (so at least guess + 2) at the lower bound, else "V >= guess".
            let beta = if guess == lower { guess + 1 } else { guess };
            let parallel = pass != Pass::Inner && self.threads_alongside();
            if parallel {
                self.guard.shared_test = Some((key, beta));
                self.guard.rearm(self.nodes);
            }
            guess = self.search(position, beta - 1, beta);
            if parallel {
                self.guard.shared_test = None;
            }
            if pass == Pass::Root {
                self.note_root_proof(position, beta);
            }
            match self.guard.stopped {
                // Another thread answered this test: the table has its bound.
                Some(STALE) => {
                    self.guard.stopped = None;
                    self.guard.rearm(self.nodes);
                    guess = beta;
                    continue;
                }
                Some(_) => return None,
                None => {}
            }
            if guess < beta {
                guess = round_down(guess, parity);
                upper = guess;
            } else {
                guess = round_up(guess, parity);
                lower = guess;
            }
        }
        if pass == Pass::Root {
            self.guard.bounds = (lower, lower);
        }
        Some(lower)
    }

    /// Whether other threads search this root too (a helper, or a main thread with
    /// helpers): then a root test may be answered by one of them first.
    fn threads_alongside(&self) -> bool {
        self.threads > 1 || self.guard.halt.is_some()
    }

    /// The parity (0 or 1) of every value of `position`: the unfinished boxes are
    /// shared out between the players, so a value is their number (plus the penalty)
    /// minus twice the opponent's boxes.
    fn parity(&self, position: Lines) -> i32 {
        (self.rules.scan(position).unfinished + self.rules.penalty) & 1
    }

    /// Number of boxes that drawing `line` completes in `position`.
    #[inline]
    fn completes(&self, position: Lines, line: usize) -> i32 {
        boxes_completed_with(position, self.rules.completion[line]) as i32
    }

    /// Fail-soft alpha-beta: returns `v` with `v <= alpha` meaning `V <= v`,
    /// `v >= beta` meaning `V >= v`, and `V = v` in between.
    fn search(&mut self, position: Lines, alpha: i32, beta: i32) -> i32 {
        let images = self.rules.images(position);
        self.search_from(position, &images, alpha, beta)
    }

    /// [`Solver::search`] of `position`, whose [`Images`] are `images`: one node.
    /// Forced captures (rule 1) are played here, in a loop, before anything else,
    /// and the position they lead to is the node's: a position whose only move is
    /// forced gets no key, no table fetch and no node of its own (such positions
    /// were 37% of the nodes of a 4x4 middle game, each fetching a table bucket it
    /// never read).
    fn search_from(&mut self, position: Lines, images: &Images, alpha: i32, beta: i32) -> i32 {
        debug_assert_eq!(
            images[..self.rules.syms.len()],
            self.rules.images(position)[..self.rules.syms.len()]
        );
        self.nodes += 1;
        if self.nodes >= self.guard.check_at && self.limit_reached() {
            // Unwinding a stopped search: the value is discarded by the caller.
            return alpha;
        }
        match self.settle(position, images) {
            Settled::Over { taken } => taken + self.rules.penalty,
            Settled::At {
                taken,
                node,
                images,
                scan,
            } => taken + self.search_settled(node, &images, &scan, alpha - taken, beta - taken),
        }
    }

    /// Plays the forced captures (rule 1) from `position` (whose [`Images`] are
    /// `images`), in a loop, and says where they lead.
    #[inline]
    fn settle(&self, mut position: Lines, images: &Images) -> Settled {
        let mut images = *images;
        // Boxes taken by forced captures so far.
        let mut taken = 0;
        loop {
            let open = self.rules.all & !position;
            if open == 0 {
                return Settled::Over { taken };
            }
            let scan = self.rules.scan(position);
            let (legal, forced) =
                self.rules
                    .legal_and_forced(position, open, scan.captures & !scan.thirds);
            if forced == 0 {
                let node = Node { position, legal };
                return Settled::At {
                    taken,
                    node,
                    images,
                    scan,
                };
            }
            let line = forced.trailing_zeros() as usize;
            taken += self.completes(position, line);
            images = self.rules.child_images(&images, line);
            position |= 1 << line;
        }
    }

    /// The body of [`Solver::search_from`] once no capture is forced: `node` with
    /// its [`Images`] and [`Scan`].
    fn search_settled(
        &mut self,
        node: Node,
        images: &Images,
        scan: &Scan,
        mut alpha: i32,
        mut beta: i32,
    ) -> i32 {
        let Node { position, legal } = node;
        let open = self.rules.all & !position;
        // The key is made and its bucket fetched first, so that the memory access
        // (the node's largest cost on big tables) overlaps the checks before the
        // probe. (Before forced captures were played in a loop, the fetch came
        // before the scan, and every forced capture paid for one.)
        let (key, sym, stabilizer) = self.rules.canonical_of(position, images);
        self.table.prefetch(key);
        if scan.all_two_sided
            && let Some(value) = self.rules.simple_endgame_value(position)
        {
            return value;
        }
        let bound = scan.unfinished + self.rules.penalty.abs();
        if bound <= alpha {
            return bound;
        }
        if -bound >= beta {
            return -bound;
        }

        let (mut lower, mut upper) = (-bound, bound);
        let mut hint = None;
        if let Some(e) = self.table.probe(key) {
            lower = lower.max(e.lower.into());
            upper = upper.min(e.upper.into());
            if e.best != NO_MOVE {
                hint = Some(self.rules.syms.unmap_line(sym, e.best.into()));
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

        // Move list: hint, captures, safe moves, sacrifices; safe moves and
        // sacrifices nearest the centre of the board first.
        // Of open twin lines only the first: the others lead to equivalent positions.
        let mut candidates = legal;
        for &group in &self.rules.twins {
            let open_twins = legal & group;
            candidates &= !(open_twins & open_twins.wrapping_sub(1));
        }
        let captures = scan.captures & candidates;
        let mut quiet = candidates & !captures;
        if legal == open {
            // Rule 2 (with chains: between chains, for captures outside them, and
            // never pruning a chain's line; see `chain_reply`).
            let chain_lines = self.rules.chains.all();
            for line in lines_of(captures & scan.thirds & !chain_lines) {
                quiet &= self.chain_reply(position, line, chain_lines);
            }
        }
        let safe = quiet & !scan.thirds;
        let mut sacrifices = quiet & scan.thirds;
        if scan.captures == 0 && sacrifices != 0 && self.rules.chains.is_empty() {
            // Of the lines of one string, one (see `strings`).
            sacrifices &= !self.rules.dominated_openings(
                position,
                sacrifices,
                self.rules.compact_boxes(scan.two_sided_spaced),
            );
        }
        let hint_mask = hint.map_or(0, |h| 1u64 << h) & (captures | safe | sacrifices);
        let mut moves = [0u8; 64];
        let mut count = 0;
        for group in [hint_mask, captures & !hint_mask] {
            for line in lines_of(group) {
                moves[count] = line as u8;
                count += 1;
            }
        }
        for group in [safe & !hint_mask, sacrifices & !hint_mask] {
            // The group's lines as places in `centre_first`, so that only its own
            // lines are visited, in that order (scanning every line of the board
            // for each group cost 5% of a 4x4 search).
            let ranks = lines_of(group).fold(0u64, |ranks, line| {
                ranks | 1 << self.rules.centre_rank[line]
            });
            for rank in lines_of(ranks) {
                moves[count] = self.rules.centre_first[rank];
                count += 1;
            }
        }
        let moves = &mut moves[..count];
        if self.reversed_root == Some(position) {
            moves.reverse();
        }
        let moves = &*moves;

        // Enhanced transposition cutoffs near the root, once the first move has
        // failed to cut (it mostly does, and then the probes would be wasted): a
        // child whose stored bound already refutes the window ends the node, and a
        // move the table bounds no better than one searched already is not searched.
        let ask_table = open.count_ones() >= self.etc_min;
        // Per move, an upper bound on its worth that the table held (INF: none).
        let mut known_upper = [INF; 64];
        let mut best = -INF;
        let mut best_move = NO_MOVE;
        let mut a = alpha;
        for (index, &line) in moves.iter().enumerate() {
            if ask_table
                && index == 1
                && let Some(cut) = self.table_bounds(
                    position,
                    images,
                    scan,
                    &moves[index..],
                    beta,
                    &mut known_upper[index..],
                )
            {
                // Stored as a search's cutoff is, with the move that proves it (a
                // stored search reuses the root's).
                let (cut, cut_line) = cut;
                let cut = round_up(cut, (scan.unfinished + self.rules.penalty) & 1);
                if self.guard.stopped.is_none() {
                    let canonical_move = self.rules.syms.map_line(sym, cut_line.into()) as u8;
                    self.table
                        .store(key, cut as i16, upper as i16, canonical_move);
                }
                return cut;
            }
            let line = line as usize;
            if stabilizer != 1 && self.has_smaller_image(stabilizer, line) {
                continue;
            }
            let k = self.completes(position, line);
            let child = position | 1 << line;
            let child_images = self.rules.child_images(images, line);
            let v = if known_upper[index] <= a {
                // The table bounds this move no better than a move searched already.
                #[cfg(test)]
                self.passed_over.push((position, line, known_upper[index]));
                known_upper[index]
            } else if k > 0 {
                k + self.search_from(child, &child_images, a - k, beta - k)
            } else if scan.thirds >> line & 1 == 1
                // A bound is at least 2 - (unfinished boxes): below that, none prunes.
                && a >= 2 - scan.unfinished
                && let Some(bound) = self.rules.handout_bound(position, line)
                && bound <= a
            {
                // A handout no better than a move searched already (see `handouts`).
                bound
            } else {
                -self.search_from(child, &child_images, -beta, -a)
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

        // A bound rounded to the parity of the values is still a bound, and tighter.
        let parity = (scan.unfinished + self.rules.penalty) & 1;
        let (lo, hi) = if best <= alpha {
            best = round_down(best, parity);
            (lower, best)
        } else if best >= beta {
            best = round_up(best, parity);
            (best, upper)
        } else {
            debug_assert_eq!(
                best,
                round_up(best, parity),
                "an exact value of the wrong parity"
            );
            (best, best)
        };
        if self.guard.stopped.is_some() {
            // What a stopped subtree returned proves nothing.
            return best;
        }
        debug_assert!(lo <= hi, "inconsistent bounds {lo} > {hi}");
        let canonical_move = self.rules.syms.map_line(sym, best_move.into()) as u8;
        self.table.store(key, lo as i16, hi as i16, canonical_move);
        best
    }

    /// Enhanced transposition cutoffs for `moves` of `position` (whose [`Images`]
    /// are `images`): a move whose child's stored bound makes it worth at least
    /// `beta` is returned at once with its bound; otherwise each move's `known_upper` becomes the
    /// upper bound on its worth that the table holds (unchanged where it holds none).
    /// A child's forced captures are played first, as the search plays them: the
    /// table holds only the positions they lead to (a sacrifice's child, whose
    /// handed-out box the opponent must take, is never stored itself). Only a
    /// capture or a sacrifice (see `scan`, the position's [`Scan`]) can lead to one:
    /// a safe move gives no box its third side, so its child is looked up as it is
    /// (settling every child cost 7.7% more instructions on a 4x4 middle game); with
    /// chains, drawing a chain's line can change what rule 1 forces, so every child
    /// is settled.
    fn table_bounds(
        &self,
        position: Lines,
        images: &Images,
        scan: &Scan,
        moves: &[u8],
        beta: i32,
        known_upper: &mut [i32],
    ) -> Option<(i32, u8)> {
        // Per move: the boxes its own line and the forced captures after it take
        // (the first for the mover, the second for whoever moves in the child), and
        // the key of the position they lead to (None: they finish the board). Every
        // key's bucket is fetched first, so that the probes' memory accesses overlap.
        let mut settled = [(0, 0, None::<Lines>); 64];
        let may_force = if self.rules.chains.is_empty() {
            scan.captures | scan.thirds
        } else {
            Lines::MAX
        };
        for (child, &line) in settled.iter_mut().zip(moves) {
            let line = usize::from(line);
            let k = self.completes(position, line);
            let child_images = self.rules.child_images(images, line);
            *child = if may_force >> line & 1 == 0 {
                (k, 0, Some(self.rules.key_of(&child_images)))
            } else {
                match self.settle(position | 1 << line, &child_images) {
                    Settled::Over { taken } => (k, taken, None),
                    Settled::At { taken, images, .. } => {
                        (k, taken, Some(self.rules.key_of(&images)))
                    }
                }
            };
            if let (_, _, Some(key)) = *child {
                self.table.prefetch(key);
            }
        }
        for ((upper, &(k, taken, key)), &line) in known_upper.iter_mut().zip(&settled).zip(moves) {
            // The child's worth to whoever moves in it lies in `low..=high`.
            let (low, high) = match key {
                None => (taken + self.rules.penalty, taken + self.rules.penalty),
                Some(key) => match self.table.probe(key) {
                    Some(e) => (taken + i32::from(e.lower), taken + i32::from(e.upper)),
                    None => continue,
                },
            };
            // The move's worth lies in `lower..=at_most`.
            let (lower, at_most) = if k > 0 {
                (k + low, k + high)
            } else {
                (-high, -low)
            };
            if lower >= beta {
                return Some((lower, line));
            }
            *upper = at_most;
        }
        None
    }

    /// For a capture `line` that rule 1 does not force (it completes one box `b` and
    /// gives the other, `b'`, its third side): the non-capturing moves that rule 2
    /// leaves, i.e. the mask of the other open side `y` of `b'`, or nothing when `y`
    /// continues the chain into a two-sided box `c` whose other open side `z` does
    /// not complete a box.
    ///
    /// With chains (whose lines `chain_lines` are never pruned), the proof needs every
    /// move it plays after another to be legal then: it holds for a capture `line`
    /// outside the chains when no chain is partly drawn, and `y` is pruned only when
    /// `z` is outside the chains too.
    #[inline]
    fn chain_reply(&self, position: Lines, line: usize, chain_lines: Lines) -> Lines {
        let open_sides = |b: usize| self.rules.boxes[b] & !position;
        let other = |l: usize, b: usize| {
            let [a, c] = self.rules.adjacent[l];
            if a == b { c } else { a }
        };
        let [a, c] = self.rules.adjacent[line];
        // b' is the box of `line` with two open sides (the other has one).
        let b2 = if a != NO_BOX && open_sides(a).count_ones() == 2 {
            a
        } else {
            c
        };
        debug_assert!(b2 != NO_BOX && open_sides(b2).count_ones() == 2);
        let y = (open_sides(b2) & !(1 << line)).trailing_zeros() as usize;
        let c = other(y, b2);
        if c == NO_BOX || open_sides(c).count_ones() != 2 {
            return 1 << y | chain_lines;
        }
        let z = (open_sides(c) & !(1 << y)).trailing_zeros() as usize;
        let d = other(z, c);
        if d != NO_BOX && open_sides(d).count_ones() == 1 || chain_lines >> z & 1 == 1 {
            return 1 << y | chain_lines;
        }
        chain_lines
    }

    /// Whether a symmetry fixing the position maps `line` to a smaller line (so the
    /// move is equivalent to one searched already or later in line order).
    #[inline]
    fn has_smaller_image(&self, stabilizer: u8, line: usize) -> bool {
        (1..self.rules.syms.len())
            .filter(|s| stabilizer >> s & 1 == 1)
            .any(|s| self.rules.syms.map_line(s, line) < line)
    }
}

impl Rules {
    /// The legal moves of `position` (whose open lines are `open`), and those of the
    /// captures `rule1` (which rule 1 forces in the plain game) that it still forces.
    /// Inside a partly drawn chain only its lines are legal, and rule 1 holds among
    /// them; elsewhere it is applied only away from the undrawn chains, whose
    /// resolution a capture next to them could change (checked against a brute
    /// force of the chain game in tests/chains_oracle.rs).
    #[inline]
    fn legal_and_forced(&self, position: Lines, open: Lines, rule1: Lines) -> (Lines, Lines) {
        match self.chains.partial(position) {
            Some(chain) => (open & chain, rule1 & chain),
            None => (
                open,
                self.chain_near
                    .iter()
                    .filter(|&&(chain, _)| chain & !position != 0)
                    .fold(rule1, |forced, &(_, near)| forced & !near),
            ),
        }
    }

    /// See [`Solver::set_chains`].
    fn set_chains(&mut self, chains: Chains) {
        self.chain_near = chains
            .masks()
            .iter()
            .map(|&chain| {
                let near = self
                    .boxes
                    .iter()
                    .filter(|&&b| b & chain != 0)
                    .fold(0, |near, &b| near | b);
                (chain, near)
            })
            .collect();
        self.syms = if chains.is_empty() {
            Symmetries::new(self.board)
        } else {
            Symmetries::identity(self.board)
        };
        self.chains = chains;
        self.set_twins();
    }

    /// Sets [`Rules::twins`]: each box's perimeter sides, unless they touch a chain.
    fn set_twins(&mut self) {
        let (perimeter, chain_lines) = (self.board.perimeter(), self.chains.all());
        self.twins = self
            .boxes
            .iter()
            .map(|&b| b & perimeter)
            .filter(|&g| g.count_ones() >= 2 && g & chain_lines == 0)
            .collect();
        let lines = self.board.num_lines();
        self.image_bits = (0..lines)
            .map(|line| {
                let (mut singles, mut groups) = ([0; 8], [0; 8]);
                let each = singles.iter_mut().zip(&mut groups).enumerate();
                for (s, (single, group)) in each.take(self.syms.len()) {
                    let image = self.syms.map_line(s, line);
                    match self.twins.iter().find(|&&g| g >> image & 1 == 1) {
                        Some(&g) => *group = g,
                        None => *single = 1 << image,
                    }
                }
                [singles, groups]
            })
            .collect();
    }

    /// `position` with the drawn lines of every twin group moved to its lowest lines.
    #[inline]
    fn normalize(&self, mut position: Lines) -> Lines {
        for &group in &self.twins {
            let drawn = position & group;
            if drawn != 0 && drawn != group {
                let mut low = 0;
                let mut rest = group;
                for _ in 0..drawn.count_ones() {
                    let bit = rest & rest.wrapping_neg();
                    low |= bit;
                    rest ^= bit;
                }
                position = position & !group | low;
            }
        }
        position
    }

    /// The [`Images`] of `position`, computed from scratch.
    fn images(&self, position: Lines) -> Images {
        let mut images = [0; 8];
        for (s, image) in images.iter_mut().enumerate().take(self.syms.len()) {
            *image = self.normalize(self.syms.apply(s, position));
        }
        images
    }

    /// The [`Images`] of `position | 1 << line` from those of `position` (where
    /// `line` is open).
    #[inline]
    fn child_images(&self, images: &Images, line: usize) -> Images {
        let mut child = *images;
        let [single, group] = &self.image_bits[line];
        for s in 0..8 {
            let free = group[s] & !child[s];
            child[s] |= single[s] | (free & free.wrapping_neg());
        }
        child
    }

    /// The table key of a position with these [`Images`]: the least of them.
    #[inline]
    fn key_of(&self, images: &Images) -> Lines {
        images[..self.syms.len()]
            .iter()
            .copied()
            .min()
            .unwrap_or(images[0])
    }

    /// The table key of `position` (whose [`Images`] are `images`), the lowest
    /// symmetry giving it, and the symmetries fixing `position` itself (bit `s`),
    /// as [`Symmetries::canonicalize_with`] gives them. A symmetry that fixes the
    /// position fixes its normalised image too, so the position is mapped only
    /// when some other image equals the first.
    #[inline]
    fn canonical_of(&self, position: Lines, images: &Images) -> (Lines, usize, u8) {
        let (mut key, mut sym, mut same) = (images[0], 0, 1u8);
        for (s, &image) in images.iter().enumerate().take(self.syms.len()).skip(1) {
            if image == images[0] {
                same |= 1 << s;
            }
            if image < key {
                key = image;
                sym = s;
            }
        }
        let mut stabilizer = 1u8;
        if same != 1 {
            for s in 1..self.syms.len() {
                if same >> s & 1 == 1 && self.syms.apply(s, position) == position {
                    stabilizer |= 1 << s;
                }
            }
        }
        (key, sym, stabilizer)
    }
}

/// The lines of `board` ordered by the distance of their midpoints from the centre
/// of the board, nearest first, ties by line index. Searching central moves first
/// cuts the tree by a factor of 2 to 4 on 3x3 and 3x4 (measured with
/// `examples/search_bench.rs`).
fn centre_first(board: Board) -> Vec<u8> {
    let (rows, cols) = (board.rows() as i64, board.cols() as i64);
    let hcount = (board.rows() + 1) * board.cols();
    // Squared distance in half-units: the centre is (rows, cols), the midpoint of
    // h<r>.<c> is (2r, 2c+1), that of v<r>.<c> is (2r+1, 2c).
    let distance = |l: usize| {
        let (y, x) = if l < hcount {
            let (r, c) = ((l / board.cols()) as i64, (l % board.cols()) as i64);
            (2 * r, 2 * c + 1)
        } else {
            let i = l - hcount;
            let (r, c) = (
                (i / (board.cols() + 1)) as i64,
                (i % (board.cols() + 1)) as i64,
            );
            (2 * r + 1, 2 * c)
        };
        (y - rows).pow(2) + (x - cols).pow(2)
    };
    let mut lines: Vec<usize> = (0..board.num_lines()).collect();
    lines.sort_by_key(|&l| (distance(l), l));
    lines.into_iter().map(|l| l as u8).collect()
}

/// Per line, its place in `order` (a permutation of the board's lines).
fn centre_rank(order: &[u8]) -> [u8; 64] {
    let mut rank = [0; 64];
    for (place, &line) in order.iter().enumerate() {
        rank[usize::from(line)] = place as u8;
    }
    rank
}

/// The least value of `parity` (0 or 1) at or above `v`.
#[inline]
fn round_up(v: i32, parity: i32) -> i32 {
    v + ((v ^ parity) & 1)
}

/// The greatest value of `parity` (0 or 1) at or below `v`.
#[inline]
fn round_down(v: i32, parity: i32) -> i32 {
    v - ((v ^ parity) & 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn solver(spec: &str, penalty: i32, tt_bytes: usize) -> Solver {
        Solver::new(spec.parse().unwrap(), SearchOptions { penalty, tt_bytes })
    }

    /// A search stopped by its limits gives bounds that hold the value and leaves
    /// nothing false in the transposition table: every later answer is exact.
    #[test]
    fn a_stopped_search_gives_true_bounds_and_leaves_the_table_sound() {
        let fresh = solver("3x3", 0, 1 << 20).solve(0);
        let mut s = solver("3x3", 0, 1 << 20);
        let mut stopped = 0;
        for max in [1, 10, 100, 1_000, 10_000, 30_000, 100_000] {
            let limits = Limits {
                max_nodes: Some(max),
                time_limit: None,
            };
            match s.solve_within(0, limits) {
                Ok(r) => assert_eq!(
                    (r.value, &r.moves, &r.pv),
                    (fresh.value, &fresh.moves, &fresh.pv)
                ),
                Err(e) => {
                    stopped += 1;
                    assert!(e.lower <= fresh.value && fresh.value <= e.upper, "{e}");
                    assert_eq!(e.nodes, max, "{e}");
                }
            }
        }
        assert!(stopped >= 3, "the limits never stopped the search");
        let again = s.solve(0);
        assert_eq!(
            (again.value, again.moves, again.pv),
            (fresh.value, fresh.moves, fresh.pv)
        );
    }

    /// A time limit of zero stops at the first node, on one thread and on two (the
    /// first clock check comes [`CLOCK_NODES`] later, and a search smaller than
    /// that would finish). On two threads empty 3x4, which the helper cannot
    /// finish before the main thread's first node (a root already proven would
    /// leave the main thread nothing to search).
    #[test]
    fn a_zero_time_limit_stops_at_once() {
        for (board, threads) in [("3x3", 1), ("3x4", 2)] {
            let mut s = solver(board, 0, 1 << 20);
            s.set_threads(threads);
            let limits = Limits {
                max_nodes: None,
                time_limit: Some(Duration::ZERO),
            };
            let stopped = s.solve_within(0, limits).expect_err("a zero time limit");
            assert!(stopped.nodes <= 2 * threads as u64, "{stopped}");
        }
    }

    /// Moves passed over on a table bound (enhanced transposition cutoffs, tried down
    /// to 4 open lines): on random positions of 3x3 and 2x4 each bound is at least
    /// the move's worth by a brute force, the search's values and every move's are
    /// the brute force's, and the rule fires often.
    #[test]
    fn moves_passed_over_on_a_table_bound_are_worth_no_more() {
        let mut random = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        let mut checked = 0;
        for (spec, trials) in [("3x3", 12), ("2x4", 12)] {
            let board: Board = spec.parse().unwrap();
            let n = board.num_lines();
            for _ in 0..trials {
                let mut start: Lines = 0;
                for _ in 0..4 + random() as usize % 4 {
                    start |= 1 << (random() % n as u64);
                }
                let value = brute::brute_force(&board, start, &[]);
                let mut s = solver(spec, 0, 1 << 20);
                s.set_cutoff_floor(4);
                let result = s.solve(start);
                assert_eq!(
                    result.value,
                    i32::from(value[start as usize]),
                    "{spec} {start:#x}"
                );
                let worth = |p: Lines, line: usize| {
                    let k = s.completes(p, line);
                    let child = i32::from(value[(p | 1 << line) as usize]);
                    if k > 0 { k + child } else { -child }
                };
                for m in &result.moves {
                    assert_eq!(
                        m.value,
                        worth(start, m.line),
                        "{spec} {start:#x} {}",
                        m.line
                    );
                }
                for &(p, line, bound) in &s.passed_over {
                    assert!(
                        worth(p, line) <= bound,
                        "{spec} {p:#x} {line}: bound {bound}"
                    );
                }
                checked += s.passed_over.len();
            }
        }
        assert!(checked > 1000, "only {checked} moves passed over");
    }

    /// With losing moves given as bounds ([`Solver::set_losing_bounds`]), on random
    /// positions of 3x3 and 2x4 (one and two threads): the value
    /// and every move reaching it are exact, every other move is marked and its
    /// bound lies between its worth by a brute force and the value less two; and
    /// the bounds are sometimes tighter than that.
    #[test]
    fn losing_moves_get_true_upper_bounds() {
        let mut random = crate::test_rng::xorshift(0x5851_f42d_4c95_7f2d);
        let (mut bounded, mut tighter) = (0, 0);
        for (spec, threads) in [("3x3", 1), ("2x4", 1), ("3x3", 2)] {
            let board: Board = spec.parse().unwrap();
            let n = board.num_lines();
            for _ in 0..10 {
                let mut start: Lines = 0;
                for _ in 0..3 + random() as usize % 6 {
                    start |= 1 << (random() % n as u64);
                }
                let value = brute::brute_force(&board, start, &[]);
                let mut s = solver(spec, 0, 1 << 20);
                s.set_losing_bounds(true);
                s.set_threads(threads);
                let result = s.solve(start);
                let root = i32::from(value[start as usize]);
                assert_eq!(result.value, root, "{spec} {start:#x}");
                assert_eq!(
                    result.moves.len(),
                    (board.all_lines() & !start).count_ones() as usize
                );
                for m in &result.moves {
                    let k = s.completes(start, m.line);
                    let child = i32::from(value[(start | 1 << m.line) as usize]);
                    let worth = if k > 0 { k + child } else { -child };
                    if result.bounded >> m.line & 1 == 1 {
                        assert!(worth < root, "{spec} {start:#x} {}", m.line);
                        assert!(
                            worth <= m.value && m.value <= root - 2,
                            "{spec} {start:#x} {}: worth {worth}, bound {}",
                            m.line,
                            m.value
                        );
                        bounded += 1;
                        tighter += usize::from(m.value < root - 2);
                    } else {
                        assert_eq!(m.value, worth, "{spec} {start:#x} {}", m.line);
                        assert_eq!(worth, root, "{spec} {start:#x} {}", m.line);
                    }
                }
            }
        }
        assert!(
            bounded > 100 && tighter > 10,
            "{bounded} bounds, {tighter} tighter"
        );
    }

    #[test]
    fn rounding_to_a_parity_keeps_a_bound_and_moves_it_by_at_most_one() {
        for v in -7..=7 {
            for parity in [0, 1] {
                let (up, down) = (round_up(v, parity), round_down(v, parity));
                assert_eq!((up - parity).rem_euclid(2), 0, "{v} {parity}");
                assert_eq!((down - parity).rem_euclid(2), 0, "{v} {parity}");
                assert!((v..=v + 1).contains(&up) && (v - 1..=v).contains(&down));
            }
        }
    }

    #[test]
    fn full_board_is_worth_the_penalty() {
        for penalty in [0, -1, 3] {
            let mut s = solver("2x3", penalty, 1 << 16);
            let full = s.board().all_lines();
            let r = s.solve(full);
            assert_eq!((r.value, r.moves.len(), r.pv.len()), (penalty, 0, 0));
            assert_eq!(s.value(full), penalty);
        }
    }

    #[test]
    fn last_line_completes_its_boxes() {
        let mut s = solver("1x1", 0, 1 << 16);
        let r = s.solve(0b0111);
        assert_eq!(r.value, 1);
        assert_eq!(
            r.moves,
            vec![MoveValue {
                line: 3,
                value: 1,
                boxes: 1
            }]
        );
        assert_eq!(r.pv, vec![3]);
        let mut s = solver("1x1", -1, 1 << 16);
        assert_eq!(s.value(0b0111), 0);
    }

    /// Forced captures are played inside the node that reaches them: a position
    /// whose every move is a forced capture (each box of 2x2 with one perimeter
    /// side open) costs one node per MTD(f) test, and its value is the brute force's.
    #[test]
    fn forced_captures_are_played_within_one_node() {
        let board: Board = "2x2".parse().unwrap();
        let open: Lines = 1 << 0 | 1 << 1 | 1 << 4 | 1 << 5;
        let position = board.all_lines() & !open;
        let brute = brute::brute_force(&board, position, &[]);
        let mut s = solver("2x2", 0, 1 << 16);
        assert_eq!(s.value(position), 4);
        assert_eq!(i32::from(brute[position as usize]), 4);
        // Two tests ("at least 0", "more than 4"), one node each.
        assert_eq!(s.nodes(), 2);
        // One move played by hand first: the same with a box fewer.
        let mut s = solver("2x2", 0, 1 << 16);
        assert_eq!(s.value(position | 1), 3);
        assert_eq!(i32::from(brute[(position | 1) as usize]), 3);
    }

    #[test]
    fn a_solve_without_principal_variation_gives_the_same_values() {
        let mut with = solver("2x3", 0, 1 << 20);
        let mut without = solver("2x3", 0, 1 << 20);
        without.set_principal_variation(false);
        let p = 0b1000_0001_0010_0001;
        let (a, b) = (with.solve(p), without.solve(p));
        assert_eq!((a.value, &a.moves), (b.value, &b.moves));
        assert_eq!(a.pv.len(), with.board().num_lines() - 4);
        assert!(b.pv.is_empty());
    }

    /// The table's move for the root is only a first guess: planted as a move that
    /// is not best, or as a drawn line, [`Solver::best_move`] tests it, passes over
    /// it and finds a best move (values of every move from a full solve, which
    /// tests/search_oracle.rs checks against a brute force).
    #[test]
    fn a_stale_table_move_is_tested_and_passed_over() {
        let p: Lines = 0b1000_0001_0010_0001;
        let full = solver("2x3", 0, 1 << 20).solve(p);
        let value_of = |line: usize| full.moves.iter().find(|m| m.line == line).unwrap().value;
        let worse: Vec<usize> = full
            .moves
            .iter()
            .filter(|m| m.value < full.value)
            .map(|m| m.line)
            .collect();
        assert!(!worse.is_empty());
        for planted in worse.iter().copied().chain([0]) {
            let mut s = solver("2x3", 0, 1 << 20);
            assert_eq!(s.value(p), full.value);
            let (key, sym, _) = s.canonicalize(p);
            let canonical = (0..s.board().num_lines())
                .find(|&c| s.rules.syms.unmap_line(sym, c) == planted)
                .unwrap();
            s.table.store(key, i16::MIN, i16::MAX, canonical as u8);
            assert_eq!(s.table.probe(key).unwrap().best, canonical as u8);
            let (line, _) = s.best_move(p, full.value).unwrap();
            assert_ne!(line, planted);
            assert_eq!(value_of(line), full.value, "planted {planted}");
        }
    }

    /// The images kept move by move equal those computed from scratch, and the key,
    /// symmetry and stabiliser from them equal [`Symmetries::canonicalize_with`]'s, on
    /// square and oblong boards and on 1xN boards (twin groups of three lines), along
    /// random games.
    #[test]
    fn images_kept_move_by_move_equal_the_images_from_scratch() {
        let mut random = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        for spec in ["1x1", "1x3", "2x2", "2x3", "3x3", "3x4", "4x4", "5x5"] {
            let s = solver(spec, 0, 1 << 16);
            for _ in 0..50 {
                let (mut position, mut images) = (0, s.rules.images(0));
                while position != s.rules.all {
                    let open: Vec<usize> = lines_of(s.rules.all & !position).collect();
                    let line = open[random() as usize % open.len()];
                    images = s.rules.child_images(&images, line);
                    position |= 1 << line;
                    let used = s.rules.syms.len();
                    assert_eq!(images[..used], s.rules.images(position)[..used], "{spec}");
                    assert_eq!(
                        s.rules.canonical_of(position, &images),
                        s.canonicalize(position),
                        "{spec} {position:#x}"
                    );
                    assert_eq!(s.rules.key_of(&images), s.key(position));
                }
            }
        }
    }

    #[test]
    fn bits_above_the_last_line_are_ignored() {
        let mut s = solver("2x2", 0, 1 << 16);
        let p = 0b1010_0000_0101;
        let expected = s.value(p);
        assert_eq!(s.value(p | 1 << 40 | 1 << 63), expected);
        assert_eq!(s.solve(p | 1 << 12).moves.len(), 8);
    }

    #[test]
    fn a_tiny_table_still_gives_exact_values() {
        let mut small = solver("3x3", 0, 0);
        let mut big = solver("3x3", 0, 1 << 20);
        let p = small.board().all_lines() & !0x7ff; // 11 open lines
        assert_eq!(small.value(p), big.value(p));
        assert_eq!(small.solve(p).moves, big.solve(p).moves);
    }

    #[test]
    fn results_are_deterministic() {
        let p = 0b0001_0010_0000_0100_0000_0001;
        let a = solver("3x3", 0, 1 << 20).solve(p);
        let b = solver("3x3", 0, 1 << 20).solve(p);
        assert_eq!(a, b);
    }

    #[test]
    #[should_panic(expected = "penalty")]
    fn huge_penalties_are_refused() {
        solver("2x2", 5000, 1 << 16);
    }

    #[test]
    fn debug_output_is_small() {
        let s = solver("3x3", 0, 1 << 20);
        assert!(format!("{s:?}").len() < 10_000);
    }
}
