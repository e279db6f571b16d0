//! An independent brute-force oracle for Dots-and-Boxes values.
//!
//! This module deliberately shares no code with the `tb` crate: it re-derives the
//! board geometry from the fixed line order of docs/FORMAT.md §3.1 and computes
//! values by plain negamax recursion over `u64` line masks with a memo.
//!
//! * Board `R`x`C` boxes, E = (R+1)C + R(C+1) lines.
//! * Horizontal lines first, row-major: `h<r>.<c>` (r in 0..=R, c in 0..C) has index
//!   `r*C + c`; then vertical lines row-major: `v<r>.<c>` (r in 0..R, c in 0..=C) has
//!   index `(R+1)*C + r*(C+1) + c`.
//! * Box (r, c) has lines `h r.c`, `h r+1.c`, `v r.c`, `v r.c+1`.
//! * V(p) = boxes the player to move still makes minus boxes the opponent still
//!   makes; V(full) = penalty; a move completing k >= 1 boxes is worth k + V(p|m)
//!   (same player again), any other move -V(p|m); V(p) = max over moves.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Boards with at most this many lines get a dense memo of 2^E bytes.
pub const DENSE_MAX_LINES: usize = 26;

/// On bigger boards (sparse memo) a query may have at most this many open lines, so
/// that a mistaken call cannot run for hours.
pub const SPARSE_MAX_OPEN: u32 = 24;

/// Memo marker for "not computed yet" (no real value comes near it).
const UNKNOWN: i8 = i8::MIN;

/// Placeholder box mask: never contained in a position that lacks the line itself.
const NO_BOX: u64 = u64::MAX;

/// The SplitMix64 finaliser used by the layer digest.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// One position's contribution to its layer digest (a wrapping sum over the layer).
pub fn digest_element(position: u64, value: i32) -> u64 {
    mix(position.wrapping_add((value as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// A hasher for `u64` keys built on [`mix`] (the std SipHash is needlessly slow here).
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0 ^ n);
    }
}

enum Memo {
    /// Indexed by the position mask itself.
    Dense(Vec<i8>),
    Sparse(HashMap<u64, i8, BuildHasherDefault<MixHasher>>),
}

/// Brute-force solver for one board and penalty.
pub struct Oracle {
    rows: usize,
    cols: usize,
    lines: usize,
    penalty: i32,
    full: u64,
    /// For each line, the masks of the other three lines of each box it borders;
    /// a perimeter line has one box and [`NO_BOX`] in the second slot.
    box_rest: Vec<[u64; 2]>,
    memo: Memo,
    /// Whether the dense memo has been filled (it is filled whole, once).
    dense_filled: bool,
}

/// Layer statistics: positions with `n` lines drawn containing the start's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    pub n: usize,
    pub positions: u64,
    pub digest: u64,
}

impl Oracle {
    /// An oracle for `rows` x `cols` boxes with the given last-move penalty.
    pub fn new(rows: usize, cols: usize, penalty: i32) -> Oracle {
        let lines = (rows + 1) * cols + rows * (cols + 1);
        Oracle::with_memo(rows, cols, penalty, lines <= DENSE_MAX_LINES)
    }

    /// Like [`Oracle::new`] but always with the recursive, hash-map memo (to check
    /// the two paths against each other on small boards).
    pub fn new_sparse(rows: usize, cols: usize, penalty: i32) -> Oracle {
        Oracle::with_memo(rows, cols, penalty, false)
    }

    fn with_memo(rows: usize, cols: usize, penalty: i32, dense: bool) -> Oracle {
        assert!(rows >= 1 && cols >= 1, "empty board {rows}x{cols}");
        let lines = (rows + 1) * cols + rows * (cols + 1);
        assert!(lines <= 64, "board {rows}x{cols} has {lines} > 64 lines");
        assert!(
            (rows * cols) as i32 + penalty.abs() < 100,
            "values must fit in an i8 memo"
        );
        let full = if lines == 64 {
            u64::MAX
        } else {
            (1u64 << lines) - 1
        };
        let mut oracle = Oracle {
            rows,
            cols,
            lines,
            penalty,
            full,
            box_rest: vec![[NO_BOX; 2]; lines],
            memo: if dense {
                Memo::Dense(vec![UNKNOWN; 1usize << lines])
            } else {
                Memo::Sparse(HashMap::default())
            },
            dense_filled: false,
        };
        for r in 0..rows {
            for c in 0..cols {
                let sides = oracle.box_lines(r, c);
                let mask = sides.iter().fold(0u64, |m, &l| m | 1u64 << l);
                for l in sides {
                    let slot = usize::from(oracle.box_rest[l][0] != NO_BOX);
                    oracle.box_rest[l][slot] = mask & !(1u64 << l);
                }
            }
        }
        oracle
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn penalty(&self) -> i32 {
        self.penalty
    }

    /// The board as text, `RxC`.
    pub fn board_name(&self) -> String {
        format!("{}x{}", self.rows, self.cols)
    }

    pub fn num_lines(&self) -> usize {
        self.lines
    }

    /// Mask with every line drawn.
    pub fn full(&self) -> u64 {
        self.full
    }

    /// Index of `h<r>.<c>`.
    pub fn h(&self, r: usize, c: usize) -> usize {
        assert!(r <= self.rows && c < self.cols);
        r * self.cols + c
    }

    /// Index of `v<r>.<c>`.
    pub fn v(&self, r: usize, c: usize) -> usize {
        assert!(r < self.rows && c <= self.cols);
        (self.rows + 1) * self.cols + r * (self.cols + 1) + c
    }

    /// The four lines of box (r, c): top, bottom, left, right.
    pub fn box_lines(&self, r: usize, c: usize) -> [usize; 4] {
        [
            self.h(r, c),
            self.h(r + 1, c),
            self.v(r, c),
            self.v(r, c + 1),
        ]
    }

    pub fn line_name(&self, line: usize) -> String {
        assert!(line < self.lines, "line {line} out of range");
        let horizontal = (self.rows + 1) * self.cols;
        if line < horizontal {
            format!("h{}.{}", line / self.cols, line % self.cols)
        } else {
            let i = line - horizontal;
            format!("v{}.{}", i / (self.cols + 1), i % (self.cols + 1))
        }
    }

    /// The line called `name`, searched by name (deliberately not parsed).
    pub fn line_by_name(&self, name: &str) -> Option<usize> {
        (0..self.lines).find(|&l| self.line_name(l) == name)
    }

    /// All perimeter lines (the Swedish start).
    pub fn perimeter(&self) -> u64 {
        let mut m = 0u64;
        for c in 0..self.cols {
            m |= 1 << self.h(0, c) | 1 << self.h(self.rows, c);
        }
        for r in 0..self.rows {
            m |= 1 << self.v(r, 0) | 1 << self.v(r, self.cols);
        }
        m
    }

    /// Top and left perimeter lines (the Icelandic start).
    pub fn top_left(&self) -> u64 {
        let mut m = 0u64;
        for c in 0..self.cols {
            m |= 1 << self.h(0, c);
        }
        for r in 0..self.rows {
            m |= 1 << self.v(r, 0);
        }
        m
    }

    /// The named start position: `empty`, `swedish` or `icelandic`.
    pub fn start(&self, name: &str) -> u64 {
        match name {
            "empty" => 0,
            "swedish" => self.perimeter(),
            "icelandic" => self.top_left(),
            other => panic!("unknown start {other}"),
        }
    }

    /// Position as E characters `0`/`1` in line order.
    pub fn bits(&self, position: u64) -> String {
        (0..self.lines)
            .map(|l| if position >> l & 1 == 1 { '1' } else { '0' })
            .collect()
    }

    /// Inverse of [`Oracle::bits`].
    pub fn parse_bits(&self, text: &str) -> u64 {
        assert_eq!(
            text.len(),
            self.lines,
            "position {text:?} has the wrong length"
        );
        text.bytes().enumerate().fold(0, |m, (l, b)| match b {
            b'0' => m,
            b'1' => m | 1 << l,
            _ => panic!("bad character in position {text:?}"),
        })
    }

    /// Position as a move list `h0.0,v1.2,...` (drawn lines in line order).
    pub fn move_list(&self, position: u64) -> String {
        (0..self.lines)
            .filter(|&l| position >> l & 1 == 1)
            .map(|l| self.line_name(l))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Boxes completed by drawing `line` into `position` (which lacks it).
    pub fn boxes_completed(&self, position: u64, line: usize) -> u32 {
        debug_assert!(position >> line & 1 == 0);
        let [a, b] = self.box_rest[line];
        u32::from(position & a == a) + u32::from(position & b == b)
    }

    /// Number of boxes line `line` borders (1 on the perimeter, 2 inside).
    pub fn boxes_of_line(&self, line: usize) -> usize {
        self.box_rest[line].iter().filter(|&&m| m != NO_BOX).count()
    }

    /// V(position): net boxes for the player to move, best play.
    pub fn value(&mut self, position: u64) -> i32 {
        assert_eq!(
            position & !self.full,
            0,
            "position has bits beyond line {}",
            self.lines
        );
        match self.memo {
            Memo::Dense(_) if !self.dense_filled => self.fill_dense(),
            Memo::Dense(_) => {}
            Memo::Sparse(_) => {
                let open = (self.full & !position).count_ones();
                assert!(
                    open <= SPARSE_MAX_OPEN,
                    "{open} open lines on a {} board: too many for the brute force",
                    self.board_name()
                );
            }
        }
        self.solve(position)
    }

    /// (line, move value, boxes completed) for every undrawn line, in line order.
    pub fn move_values(&mut self, position: u64) -> Vec<(usize, i32, u32)> {
        assert_eq!(
            position & !self.full,
            0,
            "position has bits beyond line {}",
            self.lines
        );
        (0..self.lines)
            .filter(|&l| position >> l & 1 == 0)
            .map(|l| {
                let k = self.boxes_completed(position, l);
                let child = self.value(position | 1 << l);
                let v = if k > 0 { k as i32 + child } else { -child };
                (l, v, k)
            })
            .collect()
    }

    /// [`Oracle::move_values`] sorted best first, ties by lower line index.
    pub fn moves_best_first(&mut self, position: u64) -> Vec<(usize, i32, u32)> {
        let mut moves = self.move_values(position);
        moves.sort_by_key(|&(l, v, _)| (-v, l));
        moves
    }

    fn lookup(&self, position: u64) -> Option<i32> {
        let v = match &self.memo {
            Memo::Dense(table) => table[position as usize],
            Memo::Sparse(map) => *map.get(&position)?,
        };
        (v != UNKNOWN).then_some(i32::from(v))
    }

    fn store(&mut self, position: u64, value: i32) {
        let v = i8::try_from(value).expect("value fits in i8");
        match &mut self.memo {
            Memo::Dense(table) => table[position as usize] = v,
            Memo::Sparse(map) => {
                map.insert(position, v);
            }
        }
    }

    /// Dense path: the same recurrence as [`Oracle::solve`], unrolled. Every child
    /// `p | m` of `p` is numerically larger than `p`, so one pass over all masks in
    /// decreasing order sees every child before its parent (and streams through the
    /// table instead of jumping around it, which makes 3x3 take about a second).
    fn fill_dense(&mut self) {
        let Memo::Dense(table) = &mut self.memo else {
            unreachable!("dense fill of a sparse memo")
        };
        let full = self.full;
        let box_rest = &self.box_rest;
        table[full as usize] = i8::try_from(self.penalty).expect("penalty fits in i8");
        for p in (0..full).rev() {
            let mut best = i32::MIN;
            let mut open = full & !p;
            while open != 0 {
                let line = open.trailing_zeros() as usize;
                let bit = open & open.wrapping_neg();
                open ^= bit;
                let [a, b] = box_rest[line];
                let k = i32::from(p & a == a) + i32::from(p & b == b);
                let child = i32::from(table[(p | bit) as usize]);
                best = best.max(if k > 0 { k + child } else { -child });
            }
            table[p as usize] = best as i8;
        }
        self.dense_filled = true;
    }

    fn solve(&mut self, position: u64) -> i32 {
        if position == self.full {
            return self.penalty;
        }
        if let Some(v) = self.lookup(position) {
            return v;
        }
        let mut best = i32::MIN;
        let mut open = self.full & !position;
        while open != 0 {
            let line = open.trailing_zeros() as usize;
            let bit = open & open.wrapping_neg();
            open ^= bit;
            let k = self.boxes_completed(position, line) as i32;
            let child = self.solve(position | bit);
            best = best.max(if k > 0 { k + child } else { -child });
        }
        self.store(position, best);
        best
    }

    /// Every position containing `start`'s lines (supersets of `start`).
    pub fn supersets(&self, start: u64) -> Supersets {
        assert_eq!(start & !self.full, 0);
        Supersets {
            start,
            open: self.full & !start,
            next: Some(0),
        }
    }

    /// Number of positions containing `start`.
    pub fn count_supersets(&self, start: u64) -> u64 {
        1u64 << (self.full & !start).count_ones()
    }

    /// Positions and digest of every layer n = |start| ..= E of the build from
    /// `start`; layer n holds the positions with n lines containing `start`.
    pub fn layers(&mut self, start: u64) -> Vec<Layer> {
        let first = start.count_ones() as usize;
        let mut layers: Vec<Layer> = (first..=self.lines)
            .map(|n| Layer {
                n,
                positions: 0,
                digest: 0,
            })
            .collect();
        for p in self.supersets(start) {
            let v = self.value(p);
            let layer = &mut layers[p.count_ones() as usize - first];
            layer.positions += 1;
            layer.digest = layer.digest.wrapping_add(digest_element(p, v));
        }
        layers
    }

    /// The board's geometric symmetries as line permutations (`perm[l]` = image of
    /// line `l`): the 4 of a rectangle, the 8 of a square. Identity first.
    pub fn symmetries(&self) -> Vec<Vec<usize>> {
        let (rr, cc) = (2 * self.rows as i64, 2 * self.cols as i64);
        // Line midpoints on the doubled dot grid: h r.c at (2r, 2c+1), v r.c at
        // (2r+1, 2c); a transform maps (y, x) to (y', x').
        type Map = fn(i64, i64, i64, i64) -> (i64, i64);
        let mut maps: Vec<Map> = vec![
            |y, x, _, _| (y, x),
            |y, x, _, cc| (y, cc - x),
            |y, x, rr, _| (rr - y, x),
            |y, x, rr, cc| (rr - y, cc - x),
        ];
        if self.rows == self.cols {
            maps.extend([
                (|y, x, _, _| (x, y)) as Map,
                |y, x, rr, _| (rr - x, y),
                |y, x, _, cc| (x, cc - y),
                |y, x, rr, cc| (rr - x, cc - y),
            ]);
        }
        maps.into_iter()
            .map(|f| {
                (0..self.lines)
                    .map(|l| {
                        let (y, x) = self.midpoint(l);
                        let (y2, x2) = f(y, x, rr, cc);
                        self.line_at(y2, x2)
                    })
                    .collect()
            })
            .collect()
    }

    fn midpoint(&self, line: usize) -> (i64, i64) {
        let horizontal = (self.rows + 1) * self.cols;
        if line < horizontal {
            let (r, c) = (line / self.cols, line % self.cols);
            (2 * r as i64, 2 * c as i64 + 1)
        } else {
            let i = line - horizontal;
            let (r, c) = (i / (self.cols + 1), i % (self.cols + 1));
            (2 * r as i64 + 1, 2 * c as i64)
        }
    }

    fn line_at(&self, y: i64, x: i64) -> usize {
        assert!(y >= 0 && x >= 0, "midpoint ({y},{x}) off the board");
        let (y, x) = (y as usize, x as usize);
        match (y % 2, x % 2) {
            (0, 1) => self.h(y / 2, x / 2),
            (1, 0) => self.v(y / 2, x / 2),
            _ => panic!("({y},{x}) is not a line midpoint"),
        }
    }

    /// Classes of interchangeable lines: perimeter lines of the same box (they
    /// border only that box, so swapping them never changes a value). Only classes
    /// of two or more lines, each sorted.
    pub fn twin_classes(&self) -> Vec<Vec<usize>> {
        let mut classes: Vec<Vec<usize>> = Vec::new();
        for r in 0..self.rows {
            for c in 0..self.cols {
                let mut outer: Vec<usize> = self
                    .box_lines(r, c)
                    .into_iter()
                    .filter(|&l| self.boxes_of_line(l) == 1)
                    .collect();
                outer.sort_unstable();
                if outer.len() >= 2 {
                    classes.push(outer);
                }
            }
        }
        classes
    }

    /// Applies a line permutation to a position.
    pub fn permute(position: u64, perm: &[usize]) -> u64 {
        perm.iter()
            .enumerate()
            .filter(|&(l, _)| position >> l & 1 == 1)
            .fold(0, |m, (_, &to)| m | 1u64 << to)
    }
}

/// Value-preserving equivalence of positions: board symmetries combined with
/// permutations of twin lines (see [`Oracle::twin_classes`]).
pub struct Equivalence {
    symmetries: Vec<Vec<usize>>,
    twins: Vec<Vec<usize>>,
}

impl Equivalence {
    pub fn new(oracle: &Oracle) -> Equivalence {
        Equivalence {
            symmetries: oracle.symmetries(),
            twins: oracle.twin_classes(),
        }
    }

    /// Within each twin class, moves the drawn lines to the class's lowest indices.
    fn normalise_twins(&self, position: u64) -> u64 {
        let mut p = position;
        for class in &self.twins {
            let drawn = class.iter().filter(|&&l| p >> l & 1 == 1).count();
            for (i, &l) in class.iter().enumerate() {
                if i < drawn {
                    p |= 1 << l;
                } else {
                    p &= !(1 << l);
                }
            }
        }
        p
    }

    /// The least normalised image: equal for equivalent positions only.
    pub fn class_of(&self, position: u64) -> u64 {
        self.symmetries
            .iter()
            .map(|perm| self.normalise_twins(Oracle::permute(position, perm)))
            .min()
            .expect("identity")
    }
}

/// Iterator over the supersets of a position, in increasing mask order.
pub struct Supersets {
    start: u64,
    open: u64,
    next: Option<u64>,
}

impl Iterator for Supersets {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let sub = self.next?;
        let following = sub.wrapping_sub(self.open) & self.open;
        self.next = (following != 0).then_some(following);
        Some(self.start | sub)
    }
}

/// Deterministic xorshift64* generator for reproducible test samples.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(mix(seed) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in 0..n (n > 0; the tiny modulo bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A uniformly random superset of `start` within `full`.
    pub fn superset(&mut self, start: u64, full: u64) -> u64 {
        start | (self.next_u64() & full & !start)
    }

    /// A random position of `lines` lines with exactly `drawn` of them drawn.
    pub fn position_with(&mut self, lines: usize, drawn: usize) -> u64 {
        let mut order: Vec<usize> = (0..lines).collect();
        for i in (1..lines).rev() {
            order.swap(i, self.below(i as u64 + 1) as usize);
        }
        order[..drawn].iter().fold(0, |m, &l| m | 1u64 << l)
    }
}
