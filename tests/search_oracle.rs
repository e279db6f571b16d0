//! The search solver against an independent brute force.
//!
//! The oracle below shares no code with the crate: it re-derives the board geometry
//! from the fixed line order (docs/FORMAT.md §3.1) and computes values by plain
//! recursion over bitmasks with a memo, no pruning of any kind. Every position of
//! the smallest boards and random positions of bigger ones are compared, value and
//! every move's value, for penalties 0 and -1. This also validates the solver's
//! forced-capture rule, which the oracle does not use.

use std::collections::HashMap;

use tb::games::dots::board::Board;
use tb::games::dots::search::{SearchOptions, Solver};

/// Plain brute force for one board and penalty.
struct Oracle {
    all: u64,
    /// For every line, the 4-line masks of the boxes it borders.
    line_boxes: Vec<Vec<u64>>,
    penalty: i32,
    memo: HashMap<u64, i32>,
}

impl Oracle {
    fn new(rows: usize, cols: usize, penalty: i32) -> Oracle {
        let h = |r: usize, c: usize| r * cols + c;
        let v = |r: usize, c: usize| (rows + 1) * cols + r * (cols + 1) + c;
        let lines = (rows + 1) * cols + rows * (cols + 1);
        let mut line_boxes = vec![Vec::new(); lines];
        for r in 0..rows {
            for c in 0..cols {
                let sides = [h(r, c), h(r + 1, c), v(r, c), v(r, c + 1)];
                let mask = sides.iter().fold(0u64, |m, &l| m | 1 << l);
                for l in sides {
                    line_boxes[l].push(mask);
                }
            }
        }
        Oracle {
            all: if lines == 64 { !0 } else { (1 << lines) - 1 },
            line_boxes,
            penalty,
            memo: HashMap::new(),
        }
    }

    /// Boxes completed by drawing `line` into `p`.
    fn completes(&self, p: u64, line: usize) -> i32 {
        let q = p | 1 << line;
        self.line_boxes[line]
            .iter()
            .filter(|&&b| q & b == b)
            .count() as i32
    }

    fn move_value(&mut self, p: u64, line: usize) -> i32 {
        let k = self.completes(p, line);
        let child = self.value(p | 1 << line);
        if k > 0 { k + child } else { -child }
    }

    fn value(&mut self, p: u64) -> i32 {
        if p == self.all {
            return self.penalty;
        }
        if let Some(&v) = self.memo.get(&p) {
            return v;
        }
        let best = (0..self.line_boxes.len())
            .filter(|&l| p >> l & 1 == 0)
            .map(|l| self.move_value(p, l))
            .max()
            .unwrap();
        self.memo.insert(p, best);
        best
    }
}

/// Small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random position of `lines` lines with exactly `open` of them undrawn.
    fn position(&mut self, lines: usize, open: usize) -> u64 {
        let mut order: Vec<usize> = (0..lines).collect();
        for i in (1..lines).rev() {
            order.swap(i, self.below(i + 1));
        }
        order[open..].iter().fold(0, |p, &l| p | 1 << l)
    }
}

fn solver(rows: usize, cols: usize, penalty: i32) -> Solver {
    Solver::new(
        Board::new(rows, cols).unwrap(),
        SearchOptions {
            penalty,
            tt_bytes: 1 << 22,
        },
    )
}

/// Compares value and every move's value (and the order and PV) of `p`.
fn check(oracle: &mut Oracle, solver: &mut Solver, p: u64) {
    let result = solver.solve(p);
    let expected = oracle.value(p);
    assert_eq!(result.value, expected, "value of {p:#x}");
    assert_eq!(solver.value(p), expected, "value() of {p:#x}");
    let open = (oracle.all & !p).count_ones() as usize;
    assert_eq!(result.moves.len(), open, "moves of {p:#x}");
    for m in &result.moves {
        assert_eq!(p >> m.line & 1, 0, "{p:#x}: move {} is drawn", m.line);
        assert_eq!(m.boxes as i32, oracle.completes(p, m.line));
        assert_eq!(
            m.value,
            oracle.move_value(p, m.line),
            "{p:#x}: value of move {}",
            m.line
        );
    }
    for w in result.moves.windows(2) {
        assert!(
            w[0].value > w[1].value || (w[0].value == w[1].value && w[0].line < w[1].line),
            "{p:#x}: moves out of order"
        );
    }
    assert_eq!(result.pv.len(), open, "pv length of {p:#x}");
    assert_plays_best_moves(oracle, p, expected, &result.pv);
}

/// `pv` plays best moves from `p` (worth `value`) to the full board.
fn assert_plays_best_moves(oracle: &mut Oracle, p: u64, value: i32, pv: &[usize]) {
    let (mut q, mut v) = (p, value);
    for &line in pv {
        assert_eq!(oracle.move_value(q, line), v, "pv of {p:#x} at {q:#x}");
        let k = oracle.completes(q, line);
        v = if k > 0 { v - k } else { -v };
        q |= 1 << line;
    }
    assert_eq!((q, v), (oracle.all, oracle.penalty), "pv of {p:#x}");
}

fn every_position(rows: usize, cols: usize) {
    for penalty in [0, -1] {
        let mut oracle = Oracle::new(rows, cols, penalty);
        let mut solver = solver(rows, cols, penalty);
        for p in 0..=oracle.all {
            check(&mut oracle, &mut solver, p);
        }
    }
}

fn random_positions(rows: usize, cols: usize, open: std::ops::RangeInclusive<usize>, count: usize) {
    random_positions_on(rows, cols, open, count, |_| {});
}

/// [`random_positions`] with the solver set up by `setup` (threads, cutoffs).
fn random_positions_on(
    rows: usize,
    cols: usize,
    open: std::ops::RangeInclusive<usize>,
    count: usize,
    setup: impl Fn(&mut Solver),
) {
    let lines = (rows + 1) * cols + rows * (cols + 1);
    for penalty in [0, -1] {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (rows * 31 + cols) as u64 ^ penalty as u64);
        let mut oracle = Oracle::new(rows, cols, penalty);
        let mut solver = solver(rows, cols, penalty);
        setup(&mut solver);
        for i in 0..count {
            let n = *open.start() + i % (open.end() - open.start() + 1);
            let p = rng.position(lines, n);
            check(&mut oracle, &mut solver, p);
            // Keep the oracle's memory bounded.
            if oracle.memo.len() > 4_000_000 {
                oracle.memo.clear();
            }
        }
    }
}

#[test]
fn every_position_of_1x1_1x2_2x1() {
    every_position(1, 1);
    every_position(1, 2);
    every_position(2, 1);
}

#[test]
fn every_position_of_2x2() {
    every_position(2, 2);
}

#[test]
fn random_positions_of_2x3_and_3x2() {
    random_positions(2, 3, 8..=17, 300);
    random_positions(3, 2, 8..=17, 100);
}

#[test]
fn random_positions_of_3x3() {
    random_positions(3, 3, 10..=16, 150);
}

#[test]
fn random_positions_of_2x4() {
    random_positions(2, 4, 12..=18, 100);
}

#[test]
fn random_positions_of_3x4() {
    random_positions(3, 4, 14..=17, 40);
}

/// Lazy SMP: helper threads sharing the table change no value (the table's
/// bucket locks keep every entry whole), on positions big enough for the helpers
/// to run alongside the main thread.
#[test]
fn three_threads_agree_with_the_oracle() {
    random_positions_on(3, 3, 14..=18, 60, |s| s.set_threads(3));
    random_positions_on(2, 4, 14..=18, 40, |s| s.set_threads(3));
}

/// Enhanced transposition cutoffs (with the moves the table bounds low passed over),
/// which the solver tries only at 16 open lines or more, tried down to 8 open lines:
/// no value changes, on one thread and three.
#[test]
fn transposition_cutoffs_on_small_boards_agree_with_the_oracle() {
    random_positions_on(3, 3, 12..=18, 60, |s| s.set_cutoff_floor(8));
    random_positions_on(2, 4, 12..=18, 40, |s| {
        s.set_cutoff_floor(8);
        s.set_threads(3);
    });
}

/// With one best move only, the move given reaches the value (by the oracle), on
/// one thread and two, from a fresh table and a warm one.
#[test]
fn one_best_move_reaches_the_value() {
    for (rows, cols, threads) in [(2, 3, 1), (3, 3, 1), (3, 3, 2), (2, 4, 2)] {
        let lines = (rows + 1) * cols + rows * (cols + 1);
        for penalty in [0, -1] {
            let mut rng = Rng(0x5851_F42D_4C95_7F2D ^ (rows * 31 + cols + threads) as u64);
            let mut oracle = Oracle::new(rows, cols, penalty);
            let mut warm = solver(rows, cols, penalty);
            warm.set_threads(threads);
            warm.set_best_move_only(true);
            warm.set_principal_variation(false);
            for i in 0..40 {
                let p = rng.position(lines, 6 + i % 12);
                let mut fresh = solver(rows, cols, penalty);
                fresh.set_threads(threads);
                fresh.set_best_move_only(true);
                // A fresh solver follows a principal variation, from the move it gives.
                let expected = oracle.value(p);
                for result in [warm.solve(p), fresh.solve(p)] {
                    assert_eq!(result.value, expected, "value of {p:#x}");
                    assert_eq!(result.moves.len(), 1, "{p:#x}: one move");
                    assert!(result.best_only);
                    let m = result.moves[0];
                    assert_eq!(p >> m.line & 1, 0, "{p:#x}: move {} is drawn", m.line);
                    assert_eq!(m.boxes as i32, oracle.completes(p, m.line));
                    assert_eq!(oracle.move_value(p, m.line), expected, "{p:#x}: {}", m.line);
                    if !result.pv.is_empty() {
                        assert_eq!(result.pv[0], m.line, "{p:#x}: the pv starts from it");
                        assert_plays_best_moves(&mut oracle, p, expected, &result.pv);
                    }
                }
            }
        }
    }
    // The full board has no move to give.
    let mut s = solver(2, 2, -1);
    s.set_best_move_only(true);
    let full = s.solve(u64::MAX);
    assert_eq!((full.value, full.moves.len()), (-1, 0));
}

/// Thousands of small endgames (where the forced-capture rule fires most) on
/// several boards, including a non-square and a 64-line one.
#[test]
fn thousands_of_endgames() {
    for (rows, cols) in [(2, 3), (3, 3), (2, 4), (3, 4), (4, 4), (3, 5), (5, 5)] {
        random_positions(rows, cols, 4..=11, 500);
    }
}

/// Empty-board values of the literature, computed by the oracle and by the solver.
#[test]
fn empty_board_values() {
    for (rows, cols, known) in [(1, 1, -1), (1, 2, 0), (2, 1, 0), (2, 2, 2)] {
        let oracle = Oracle::new(rows, cols, 0).value_fresh(0);
        assert_eq!(oracle, known, "{rows}x{cols} oracle");
        assert_eq!(solver(rows, cols, 0).value(0), known, "{rows}x{cols}");
    }
    // 2x3 and 3x3: the solver only (the oracle is checked on 2x3 below and slow on
    // 3x3 in debug builds).
    assert_eq!(solver(2, 3, 0).value(0), -2);
    assert_eq!(solver(3, 2, 0).value(0), -2);
    assert_eq!(solver(3, 3, 0).value(0), -3);
}

#[test]
fn empty_2x3_against_the_oracle() {
    for penalty in [0, -1] {
        let mut oracle = Oracle::new(2, 3, penalty);
        let mut solver = solver(2, 3, penalty);
        check(&mut oracle, &mut solver, 0);
    }
}

/// Every position of 2x3 (131072 of them, both penalties).
#[test]
fn every_position_of_2x3() {
    every_position(2, 3);
}

/// The empty 3x3 board, every move, against the oracle (16.7M oracle states).
#[test]
#[ignore = "slow: run with --ignored"]
fn empty_3x3_against_the_oracle() {
    let mut oracle = Oracle::new(3, 3, 0);
    let mut solver = solver(3, 3, 0);
    check(&mut oracle, &mut solver, 0);
}

/// The empty 2x4 board and the Swedish 3x5 start (22 open lines each, 4M oracle
/// states), every move, against the oracle.
#[test]
#[ignore = "slow: run with --ignored"]
fn empty_2x4_and_swedish_3x5_against_the_oracle() {
    let mut oracle = Oracle::new(2, 4, 0);
    check(&mut oracle, &mut solver(2, 4, 0), 0);
    let mut oracle = Oracle::new(3, 5, 0);
    let perimeter = (0..5).fold(0u64, |p, c| p | 1 << c | 1 << (15 + c))
        | (0..3).fold(0u64, |p, r| p | 1 << (20 + 6 * r) | 1 << (20 + 6 * r + 5));
    assert_eq!(perimeter.count_ones(), 16);
    check(&mut oracle, &mut solver(3, 5, 0), perimeter);
}

/// The Icelandic 3x4 and Swedish 4x4 starts (24 open lines each, 16.7M oracle
/// states, about 1 GB), every move, against the oracle.
#[test]
#[ignore = "slow: run with --ignored"]
fn icelandic_3x4_and_swedish_4x4_against_the_oracle() {
    // 3x4: h r.c = 4r + c (16 lines), v r.c = 16 + 5r + c.
    let icelandic =
        (0..4).fold(0u64, |p, c| p | 1 << c) | (0..3).fold(0, |p, r| p | 1 << (16 + 5 * r));
    let mut oracle = Oracle::new(3, 4, 0);
    check(&mut oracle, &mut solver(3, 4, 0), icelandic);
    drop(oracle);
    // 4x4: h r.c = 4r + c (20 lines), v r.c = 20 + 5r + c.
    let swedish = (0..4).fold(0u64, |p, c| p | 1 << c | 1 << (16 + c))
        | (0..4).fold(0, |p, r| p | 1 << (20 + 5 * r) | 1 << (20 + 5 * r + 4));
    let mut oracle = Oracle::new(4, 4, 0);
    check(&mut oracle, &mut solver(4, 4, 0), swedish);
}

/// Many more random positions of the bigger boards.
#[test]
#[ignore = "slow: run with --ignored"]
fn many_random_positions() {
    random_positions(3, 3, 10..=18, 1000);
    random_positions(2, 4, 10..=19, 500);
    random_positions(3, 4, 12..=18, 200);
    random_positions(4, 4, 12..=16, 200);
}

impl Oracle {
    fn value_fresh(mut self, p: u64) -> i32 {
        self.value(p)
    }
}

/// A random simple loony endgame of a `rows` x `cols` board with at most `max_open`
/// open lines: box-disjoint random strings of boxes from the edge to the edge, and
/// rings of boxes around random rectangles, their inner lines open; every other line
/// drawn. Every unfinished box then has exactly two open sides (the solver values
/// such positions by formula, which this oracle knows nothing of). Also says whether
/// a ring is among them.
fn loony_endgame(
    oracle: &Oracle,
    rows: usize,
    cols: usize,
    rng: &mut Rng,
    max_open: u32,
) -> (u64, bool) {
    let h = |r: usize, c: usize| r * cols + c;
    let v = |r: usize, c: usize| (rows + 1) * cols + r * (cols + 1) + c;
    // Each side of box (r, c): its line and the box behind it (None: the edge).
    let sides = |r: usize, c: usize| {
        [
            (h(r, c), r.checked_sub(1).map(|r| (r, c))),
            (h(r + 1, c), (r + 1 < rows).then_some((r + 1, c))),
            (v(r, c), c.checked_sub(1).map(|c| (r, c))),
            (v(r, c + 1), (c + 1 < cols).then_some((r, c + 1))),
        ]
    };
    let mut used = vec![vec![false; cols]; rows];
    let mut open = 0u64;
    let mut any_ring = false;
    for _ in 0..12 {
        let mut path: Vec<(usize, usize)> = Vec::new();
        let mut lines = 0u64;
        let ring = rng.below(3) == 0;
        if ring {
            // A ring around a rectangle of at least 2 x 2 boxes.
            let (height, width) = (2 + rng.below(rows - 1), 2 + rng.below(cols - 1));
            let (top, left) = (rng.below(rows - height + 1), rng.below(cols - width + 1));
            let (bottom, right) = (top + height - 1, left + width - 1);
            path.extend((left..=right).map(|c| (top, c)));
            path.extend((top + 1..=bottom).map(|r| (r, right)));
            path.extend((left..right).rev().map(|c| (bottom, c)));
            path.extend((top + 1..bottom).rev().map(|r| (r, left)));
            for (i, &(r, c)) in path.iter().enumerate() {
                let next = path[(i + 1) % path.len()];
                let (line, _) = sides(r, c)
                    .into_iter()
                    .find(|&(_, behind)| behind == Some(next))
                    .expect("ring boxes are neighbours");
                lines |= 1 << line;
            }
        } else {
            // A string from an edge line, walking to random free neighbours until
            // it leaves the board.
            let (mut r, mut c) = (rng.below(rows), rng.below(cols));
            let Some((entry, _)) = sides(r, c).into_iter().find(|&(_, b)| b.is_none()) else {
                continue;
            };
            lines |= 1 << entry;
            loop {
                path.push((r, c));
                let choices: Vec<(usize, Option<(usize, usize)>)> = sides(r, c)
                    .into_iter()
                    .filter(|&(line, behind)| {
                        lines >> line & 1 == 0
                            && behind.is_none_or(|b| !path.contains(&b) && !used[b.0][b.1])
                    })
                    .collect();
                if choices.is_empty() {
                    path.clear();
                    break;
                }
                let (line, behind) = choices[rng.below(choices.len())];
                lines |= 1 << line;
                match behind {
                    Some(b) => (r, c) = b,
                    None => break,
                }
            }
        }
        let free = path.iter().all(|&(r, c)| !used[r][c]);
        if path.is_empty() || !free || (open | lines).count_ones() > max_open {
            continue;
        }
        for &(r, c) in &path {
            used[r][c] = true;
        }
        open |= lines;
        any_ring |= ring;
    }
    (oracle.all & !open, any_ring)
}

/// Simple loony endgames (chains and loops only, valued by formula in the solver)
/// of several boards, value and every move's against the oracle.
#[test]
fn simple_loony_endgames() {
    for (rows, cols, max_open) in [
        (2, 2, 12),
        (2, 3, 14),
        (3, 3, 16),
        (3, 4, 16),
        (4, 4, 16),
        (5, 5, 14),
    ] {
        for penalty in [0, -1] {
            let mut rng = Rng(0x5EED ^ (rows * 7 + cols) as u64 ^ penalty as u64);
            let mut oracle = Oracle::new(rows, cols, penalty);
            let mut solver = solver(rows, cols, penalty);
            let mut loops = 0;
            for _ in 0..60 {
                let (p, ring) = loony_endgame(&oracle, rows, cols, &mut rng, max_open);
                loops += usize::from(ring);
                check(&mut oracle, &mut solver, p);
                if oracle.memo.len() > 4_000_000 {
                    oracle.memo.clear();
                }
            }
            assert!(loops > 0, "{rows}x{cols}: no loop generated");
        }
    }
}
