//! The retrograde kernel: the values of one block (n; c1..cG) from its child blocks
//! (n+1; ..c_g+1..).
//!
//! The block is filled in one pass per group g. For a fixed row (the digits of groups
//! 1..=g), the positions that differ only in the later groups are contiguous in the
//! parent, and so are their children along any move in group g: the kernel streams
//! through runs of both arrays. The box test needs the whole position, whose later-
//! group part ("suffix mask") depends only on the offset inside the row.
//!
//! What a child's entry means is the [`Child`] type's: a plain value (`i8`), or
//! for loony analysis a [`LoonyChild`]; the kernel folds the greatest move value
//! (a value, or a loony key) into each parent.

use super::board::{Lines, move_value_i8};
use super::group_symmetry::GroupSymmetry;
use super::layout::{Layout, MAX_GROUP_LINES, Odometer};
use super::loony::{self, Loony};
use super::transpose::{self, LANES, byte_lanes_to_rows, byte_rows_to_lanes};
use crate::sys::cpu_dispatch;
use rayon::prelude::*;

/// Positions handled by one parallel task.
const TILE: usize = 1 << 14;
/// The innermost groups of a row, up to this many offsets, get one precomputed
/// table (of suffix masks, or of permuted child offsets) shared by every row.
const SHARED_SUFFIX_MAX: u64 = 1 << 16;

/// One move inside the last group: from the parent subset of rank `parent` to the
/// child subset of rank `child`; `local` bit i says whether the lines of the move's
/// box i that lie inside the last group are all drawn.
#[derive(Debug, Clone, Copy)]
struct LastMove {
    parent: u16,
    child: u16,
    local: u8,
}

/// Moves of one line of the last group whose parents and children are both
/// consecutive ranks: `len` moves from parents `parent..` to children `child..`,
/// their `local` flags at `locals[at..at + len]` of the line's [`LastLine`].
#[derive(Debug, Clone, Copy)]
struct LastRun {
    parent: u16,
    child: u16,
    len: u16,
    at: u32,
}

/// Runs at least this long are folded as streams (vectorised), shorter ones move
/// by move.
const MIN_RUN: usize = 16;

/// The moves drawing one line of the last group from its subsets of one size: in
/// combinatorial order the moves of a line that is late in the group come in long
/// runs of consecutive parents and children, which stream; the rest are a list.
#[derive(Debug, Default)]
struct LastLine {
    runs: Vec<LastRun>,
    locals: Vec<u8>,
    list: Vec<LastMove>,
}

impl LastLine {
    /// Splits `moves` (in parent order) into runs of at least [`MIN_RUN`] and the rest.
    fn new(moves: &[LastMove]) -> LastLine {
        let mut line = LastLine::default();
        let mut start = 0;
        while start < moves.len() {
            let first = moves[start];
            let len = moves[start..]
                .iter()
                .enumerate()
                .take_while(|&(i, m)| {
                    m.parent as usize == first.parent as usize + i
                        && m.child as usize == first.child as usize + i
                })
                .count();
            let run = &moves[start..start + len];
            if len >= MIN_RUN {
                line.runs.push(LastRun {
                    parent: first.parent,
                    child: first.child,
                    len: len as u16,
                    at: line.locals.len() as u32,
                });
                line.locals.extend(run.iter().map(|m| m.local));
            } else {
                line.list.extend_from_slice(run);
            }
            start += len;
        }
        line
    }
}

/// A batch of [`LANES`] rows of the last group's pass, transposed (see
/// [`super::transpose`]): `out[p][w]` is parent rank p of row w, `child[q][w]` child
/// rank q of row w. A move's parent and child ranks are the same in every row, so
/// each move is one vector operation over the batch.
struct Lanes<T> {
    out: Vec<[i8; LANES]>,
    child: Vec<[T; LANES]>,
}

impl<T: Child> Lanes<T> {
    fn new(radix: usize, child_radix: usize) -> Lanes<T> {
        Lanes {
            out: vec![[0; LANES]; radix],
            child: vec![[T::default(); LANES]; child_radix],
        }
    }

    /// Transposes in `LANES` consecutive parent rows and their child rows.
    fn load(&mut self, out_rows: &[i8], child_rows: &[T]) {
        byte_rows_to_lanes(out_rows, &mut self.out);
        T::rows_to_lanes(child_rows, &mut self.child);
    }

    /// Transposes the parent rows back out.
    fn store(&self, out_rows: &mut [i8]) {
        byte_lanes_to_rows(&self.out, out_rows);
    }
}

/// Boxes completed for a 2-bit "box i is complete" pattern (branch-free, so that
/// the loops using it vectorise).
#[inline(always)]
fn boxes(flags: u8) -> i8 {
    ((flags & 1) + (flags >> 1)) as i8
}

/// A child position's entry as the kernel reads it: what a move into it is worth
/// to the side making it.
pub trait Child: Copy + Default + Send + Sync {
    /// A move that completes `boxes` boxes (0, 1 or 2); the kernel keeps the
    /// greatest over a position's moves.
    fn moved(self, boxes: i8) -> i8;
    /// The entry of a position without moves (the full board) whose value is the
    /// last-move `penalty`.
    fn terminal(penalty: i8) -> i8;
    /// [`transpose::rows_to_lanes`] (bytes have a faster one).
    fn rows_to_lanes(rows: &[Self], lanes: &mut [[Self; LANES]]) {
        transpose::rows_to_lanes(rows, lanes);
    }
}

/// A plain value: net boxes for the side to move.
impl Child for i8 {
    #[inline(always)]
    fn moved(self, boxes: i8) -> i8 {
        move_value_i8(boxes, self)
    }

    fn terminal(penalty: i8) -> i8 {
        penalty
    }

    fn rows_to_lanes(rows: &[i8], lanes: &mut [[i8; LANES]]) {
        byte_rows_to_lanes(rows, lanes);
    }
}

/// A child of loony analysis ([`super::loony`]), made from its stored byte: the
/// key of a move into it that completes no box, and the key of one that completes
/// boxes before adding them (`4 * value + flag`; each box adds 4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoonyChild {
    /// The key of a move completing boxes, less 4 per box.
    pub capture: i8,
    /// The key of a move completing none.
    pub quiet: i8,
}

impl LoonyChild {
    /// A child's stored byte ([`loony::encode`]) as the kernel reads it: the keys of
    /// moves into it, as [`loony::move_key`] gives them (for boxes > 0, less 4 per
    /// box). A byte [`loony::encode`] never gives (a build never reads one: chunks
    /// are checksummed) reads as the least key.
    pub fn of_byte(byte: u8) -> LoonyChild {
        match loony::decode(byte) {
            Some((value, flag, offers)) => LoonyChild {
                capture: loony::key(value, flag) as i8,
                quiet: if offers {
                    loony::key(-value, Loony::Mover) as i8
                } else {
                    loony::key(-value, flag.swapped()) as i8
                },
            },
            None => LoonyChild {
                capture: loony::key(loony::MIN_VALUE, Loony::Mover) as i8,
                quiet: loony::key(loony::MIN_VALUE, Loony::Mover) as i8,
            },
        }
    }
}

impl Child for LoonyChild {
    #[inline(always)]
    fn moved(self, boxes: i8) -> i8 {
        if boxes == 0 {
            self.quiet
        } else {
            self.capture.wrapping_add(4 * boxes)
        }
    }

    fn terminal(penalty: i8) -> i8 {
        loony::key(penalty as i32, Loony::Neither) as i8
    }
}

/// The retrograde kernel for one layout: box-test masks and per-group move tables.
pub struct Kernel<'a> {
    layout: &'a Layout,
    completion: &'a [[Lines; 2]],
    penalty: i8,
    /// `last_moves[c][bit]`: every move drawing local line `bit` of the last group
    /// from a subset of size `c`.
    last_moves: Vec<Vec<LastLine>>,
}

impl<'a> Kernel<'a> {
    /// A kernel for `layout`, with `completion` from
    /// [`super::board::Board::completion_masks`] and the full board's value.
    pub fn new(layout: &'a Layout, completion: &'a [[Lines; 2]], penalty: i8) -> Kernel<'a> {
        let last_moves = match layout.groups.last() {
            Some(group) => {
                let group_mask = group.mask();
                // With a single group, group 1 is the last one: its children are
                // canonicalised (no other group to permute).
                let child_rank = |local: u32| match (&layout.reduction, layout.groups.len()) {
                    (Some(r), 1) => group.rank(r.canonicalize_first(local).0),
                    _ => group.rank(local),
                };
                (0..group.len())
                    .map(|c| {
                        (0..group.len())
                            .map(|bit| {
                                let own = completion[group.lines[bit]]
                                    .map(|m| group.local_of(m & group_mask));
                                let child_ranks = group.locals(c + 1);
                                group
                                    .locals(c)
                                    .iter()
                                    .enumerate()
                                    .filter(|&(_, &sub)| group.moves(sub) >> bit & 1 == 1)
                                    .map(|(r, &sub)| {
                                        let child = child_rank(sub | 1 << bit);
                                        debug_assert!((child as usize) < child_ranks.len());
                                        let local =
                                            own.iter().enumerate().fold(0u8, |f, (i, &o)| {
                                                f | u8::from(sub & o == o) << i
                                            });
                                        LastMove {
                                            parent: r as u16,
                                            child: child as u16,
                                            local,
                                        }
                                    })
                                    .collect::<Vec<_>>()
                            })
                            .map(|moves| LastLine::new(&moves))
                            .collect()
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        Kernel {
            layout,
            completion,
            penalty,
            last_moves,
        }
    }

    /// Computes block `counts`. `children[g]` must hold block `counts + e_g` for every
    /// group that still has a free line (and is ignored otherwise).
    pub fn compute_block<T: Child>(&self, counts: &[u8], children: &[Option<&[T]>]) -> Vec<i8> {
        let size = self.layout.block_size(counts) as usize;
        let groups = &self.layout.groups;
        let has_move = groups
            .iter()
            .zip(counts)
            .any(|(g, &c)| (c as usize) < g.len());
        if !has_move {
            return crate::sys::huge_filled(size, T::terminal(self.penalty));
        }
        let mut values = crate::sys::huge_filled(size, i8::MIN);
        for (g, group) in groups.iter().enumerate() {
            if (counts[g] as usize) < group.len() {
                let child = children[g].expect("child block of a group with a free line");
                if g + 1 == groups.len() {
                    self.last_group_pass(counts, child, &mut values);
                } else {
                    self.pass(counts, g, child, &mut values);
                }
            }
        }
        debug_assert!(values.iter().all(|&v| v != i8::MIN));
        values
    }

    /// Folds the moves of the last group into `parent`. Each parent position is its
    /// own row here, so instead of streaming, the pass walks precomputed move lists
    /// (parent rank -> child rank) for each line of the group; the children of one
    /// row of the earlier groups lie in one short run of the child block.
    fn last_group_pass<T: Child>(&self, counts: &[u8], child: &[T], parent: &mut [i8]) {
        let groups = &self.layout.groups;
        let g = groups.len() - 1;
        let group = &groups[g];
        let c = counts[g] as usize;
        let radix = group.radix(c) as usize;
        let child_radix = group.radix(c + 1) as usize;
        let prefix_tables: Vec<&[Lines]> = groups[..g]
            .iter()
            .zip(counts)
            .map(|(h, &ch)| h.globals(ch as usize))
            .collect();
        let group_mask = group.mask();
        // Per line of the group: the parts of its two box masks outside the group.
        let outside: Vec<[Lines; 2]> = group
            .lines
            .iter()
            .map(|&l| self.completion[l].map(|m| if m == u64::MAX { m } else { m & !group_mask }))
            .collect();
        let moves = &self.last_moves[c];
        // Which of each line's boxes have all their outside lines drawn, in a row
        // whose earlier groups hold `base`.
        let ready = |base: Lines, bit: usize| {
            outside[bit].iter().enumerate().fold(0u8, |f, (j, &m)| {
                f | u8::from(m != u64::MAX && base & m == m) << j
            })
        };
        // Whole batches of LANES rows per task where there are rows enough.
        let rows = parent.len() / radix;
        let rows_per_task = if rows >= LANES {
            (TILE / radix).max(1).next_multiple_of(LANES)
        } else {
            (TILE / radix).max(1)
        };
        parent
            .par_chunks_mut(rows_per_task * radix)
            .enumerate()
            // One batch buffer per worker's run of tasks, not per task.
            .for_each_init(
                || Lanes::<T>::new(radix, child_radix),
                |lanes, (t, out)| {
                    let first_row = t * rows_per_task;
                    let task_rows = out.len() / radix;
                    let mut prefix_odo = Odometer::new(prefix_tables.clone(), first_row as u64);
                    let batched = task_rows / LANES * LANES;
                    let (batch_out, rest) = out.split_at_mut(batched * radix);
                    for (b, out_rows) in batch_out.chunks_exact_mut(LANES * radix).enumerate() {
                        let row = first_row + b * LANES;
                        let child_rows = &child[row * child_radix..][..LANES * child_radix];
                        let mut ready_lanes = [[0u8; LANES]; MAX_GROUP_LINES];
                        for w in 0..LANES {
                            let base = self.layout.start | prefix_odo.mask();
                            for (bit, r) in ready_lanes.iter_mut().enumerate().take(moves.len()) {
                                r[w] = ready(base, bit);
                            }
                            prefix_odo.advance();
                        }
                        lanes.load(out_rows, child_rows);
                        for (line, r) in moves.iter().zip(&ready_lanes) {
                            fold_lanes(&mut lanes.out, &lanes.child, line, r);
                        }
                        lanes.store(out_rows);
                    }
                    for (i, out_row) in rest.chunks_exact_mut(radix).enumerate() {
                        let base = self.layout.start | prefix_odo.mask();
                        let row = first_row + batched + i;
                        let child_row = &child[row * child_radix..][..child_radix];
                        for (bit, line) in moves.iter().enumerate() {
                            let ready = ready(base, bit);
                            for run in &line.runs {
                                let len = run.len as usize;
                                fold_last_run(
                                    &mut out_row[run.parent as usize..][..len],
                                    &child_row[run.child as usize..][..len],
                                    &line.locals[run.at as usize..][..len],
                                    ready,
                                );
                            }
                            fold_last_moves(out_row, child_row, &line.list, ready);
                        }
                        prefix_odo.advance();
                    }
                },
            );
    }

    /// Folds every move in group `g` (not the last) into `parent`.
    fn pass<T: Child>(&self, counts: &[u8], g: usize, child: &[T], parent: &mut [i8]) {
        let groups = &self.layout.groups;
        let group = &groups[g];
        let c = counts[g] as usize;
        let radix = group.radix(c);
        let child_radix = group.radix(c + 1);
        let row_len: u64 = groups[g + 1..]
            .iter()
            .zip(&counts[g + 1..])
            .map(|(h, &ch)| h.radix(ch as usize))
            .product();
        debug_assert_eq!(
            child.len() as u64 * radix,
            parent.len() as u64 * child_radix
        );
        let outer_tables: Vec<&[Lines]> = groups[..=g]
            .iter()
            .zip(counts)
            .map(|(h, &ch)| h.globals(ch as usize))
            .collect();
        let suffix_tables: Vec<&[Lines]> = groups[g + 1..]
            .iter()
            .zip(&counts[g + 1..])
            .map(|(h, &ch)| h.globals(ch as usize))
            .collect();
        let suffix_lines = groups[g + 1..].iter().fold(0, |m, h| m | h.mask());
        let suffix_masks = SuffixMasks::new(&suffix_tables);
        let locals = group.locals(c);
        // Moves in group 1 may need the child row permuted (see `orbits`).
        let reduction = self
            .layout
            .reduction
            .as_deref()
            .filter(|r| g == 0 && r.len() > 1);
        // `permutations[s - 1]` for symmetry s >= 1 (the identity needs none).
        let permutations: Vec<RowPermutation> = reduction.map_or(Vec::new(), |r| {
            (1..r.len())
                .map(|s| RowPermutation::new(self.layout, r, counts, s))
                .collect()
        });

        parent
            .par_chunks_mut(TILE)
            .enumerate()
            .for_each(|(t, out)| {
                let start = (t * TILE) as u64;
                let end = start + out.len() as u64;
                let mut outer = Odometer::new(outer_tables.clone(), start / row_len);
                let mut segments: Vec<SuffixSegment> = Vec::new();
                let mut gathered: Vec<T> = Vec::new();
                let mut pos = start;
                while pos < end {
                    let row = pos / row_len;
                    let s0 = pos % row_len;
                    let len = (row_len - s0).min(end - pos) as usize;
                    suffix_masks.segments(s0, len, &mut segments);
                    let base = self.layout.start | outer.mask();
                    let sub = locals[outer.digit(g)];
                    let prefix = row / radix;
                    let out_run = &mut out[(pos - start) as usize..][..len];
                    let mut free = group.moves(sub);
                    while free != 0 {
                        let bit = free.trailing_zeros() as usize;
                        free &= free - 1;
                        let (target, s) = match reduction {
                            Some(r) => r.canonicalize_first(sub | 1 << bit),
                            None => (sub | 1 << bit, 0),
                        };
                        let rank = group.rank(target) as u64;
                        let row_start = ((prefix * child_radix + rank) * row_len) as usize;
                        let [m1, m2] = self.completion[group.lines[bit]];
                        let tests = [
                            suffix_test(base, m1, suffix_lines),
                            suffix_test(base, m2, suffix_lines),
                        ];
                        let child_run = if s == 0 {
                            &child[row_start + s0 as usize..][..len]
                        } else {
                            let child_row = &child[row_start..][..row_len as usize];
                            permutations[s - 1].gather(child_row, s0, len, &mut gathered);
                            &gathered[..]
                        };
                        let mut at = 0;
                        for segment in &segments {
                            let take = segment.inner.len();
                            suffix_masks.fold(
                                segment,
                                &mut out_run[at..at + take],
                                &child_run[at..at + take],
                                tests,
                            );
                            at += take;
                        }
                    }
                    pos += len as u64;
                    outer.advance();
                }
            });
    }
}

/// Where the children of a row lie when a group-1 move needs symmetry `s`: the
/// value of row offset `x` (digits of groups 2..G) is the child row's value at the
/// offset of `s(x)`, i.e. `sum_g P_g[digit_g] * stride_g` with `P_g` the rank
/// permutation of group g under `s`. The inner groups (product at most 2^16) are one
/// table, the outer ones a table per group.
struct RowPermutation {
    inner_len: u64,
    /// Permuted offsets of the inner part, by inner index.
    inner: Vec<u32>,
    /// Outer groups, least significant first: radix and permuted offset per digit.
    outer: Vec<(u64, Vec<u64>)>,
}

impl RowPermutation {
    fn new(layout: &Layout, reduction: &GroupSymmetry, counts: &[u8], s: usize) -> RowPermutation {
        // Per group g >= 2 (0-based 1..): radix, stride and permuted offsets.
        let mut stride = 1u64;
        let mut per_group: Vec<(u64, Vec<u64>)> = Vec::new();
        for (g, group) in layout.groups.iter().enumerate().skip(1).rev() {
            let c = counts[g] as usize;
            let offsets = group
                .locals(c)
                .iter()
                .map(|&local| group.rank(reduction.permute_local(g, s, local)) as u64 * stride)
                .collect();
            per_group.push((group.radix(c), offsets));
            stride *= group.radix(c);
        }
        let split = inner_groups(per_group.iter().map(|(radix, _)| *radix));
        let mut inner = vec![0u32];
        for (_, offsets) in per_group[..split].iter().rev() {
            inner = inner
                .iter()
                .flat_map(|&a| offsets.iter().map(move |&o| a + o as u32))
                .collect();
        }
        RowPermutation {
            inner_len: inner.len() as u64,
            inner,
            outer: per_group.split_off(split),
        }
    }

    /// Fills `out` with the child values of row offsets `from..from + len`.
    fn gather<T: Child>(&self, child_row: &[T], from: u64, len: usize, out: &mut Vec<T>) {
        out.clear();
        for_segments(self.inner_len, from, len, |mut o, j, take| {
            let mut base = 0u64;
            for (radix, offsets) in &self.outer {
                base += offsets[(o % radix) as usize];
                o /= radix;
            }
            let row = &child_row[base as usize..];
            out.extend(self.inner[j..j + take].iter().map(|&i| row[i as usize]));
        });
    }
}

/// How many of the least significant digits (radices given least significant
/// first) form the inner part of a row: the longest run whose product stays within
/// [`SHARED_SUFFIX_MAX`], so its table is small and shared by every row.
fn inner_groups(radices: impl Iterator<Item = u64>) -> usize {
    let mut product = 1u64;
    radices
        .take_while(|&r| {
            product *= r;
            product <= SHARED_SUFFIX_MAX
        })
        .count()
}

/// Splits row offsets `from..from + len` at multiples of `inner_len` and calls
/// `f(outer index, inner index, length)` for each piece, in order.
#[inline]
fn for_segments(inner_len: u64, from: u64, len: usize, mut f: impl FnMut(u64, usize, usize)) {
    let end = from + len as u64;
    let mut pos = from;
    while pos < end {
        let (o, j) = (pos / inner_len, (pos % inner_len) as usize);
        let take = (inner_len as usize - j).min((end - pos) as usize);
        f(o, j, take);
        pos += take as u64;
    }
}

/// The later groups' lines at each offset of a row: one table for the inner groups
/// (see [`inner_groups`]) with the outer groups' masks ORed on per segment.
struct SuffixMasks<'a> {
    inner: Vec<Lines>,
    /// Every line some inner mask holds.
    inner_lines: Lines,
    /// The inner masks as 16-bit words (bit i: the i-th line of `inner_lines`) when
    /// they have at most 16 lines: the box tests then read a quarter of the bytes
    /// and vectorise four times as wide.
    narrow: Option<Vec<u16>>,
    /// A narrow mask no inner mask holds (bit 15, spare below 16 lines).
    never: Option<u16>,
    /// Outer groups' subset masks, least significant first.
    outer: Vec<&'a [Lines]>,
}

impl<'a> SuffixMasks<'a> {
    /// Masks for the digits `tables` (most significant first).
    fn new(tables: &[&'a [Lines]]) -> SuffixMasks<'a> {
        let split = inner_groups(tables.iter().rev().map(|t| t.len() as u64));
        let (outer, inner_tables) = tables.split_at(tables.len() - split);
        let mut inner = vec![0];
        for table in inner_tables {
            inner = inner
                .iter()
                .flat_map(|&a| table.iter().map(move |&m| a | m))
                .collect();
        }
        let inner_lines = inner.iter().fold(0, |a, &m| a | m);
        let narrow = (inner_lines.count_ones() <= 16)
            .then(|| inner.iter().map(|&m| compress(m, inner_lines)).collect());
        SuffixMasks {
            inner,
            inner_lines,
            narrow,
            never: (inner_lines.count_ones() < 16).then_some(1 << 15),
            outer: outer.iter().rev().copied().collect(),
        }
    }

    /// Offsets `from..from + len` as segments into `out`: the masks of a segment are
    /// `high | m` for each `m` of its slice of the inner table (which stays in the
    /// first-level cache, where assembling the masks of a whole run did not).
    fn segments<'s>(&'s self, from: u64, len: usize, out: &mut Vec<SuffixSegment<'s>>) {
        out.clear();
        for_segments(self.inner.len() as u64, from, len, |mut o, j, take| {
            let mut high = 0;
            for table in &self.outer {
                high |= table[(o % table.len() as u64) as usize];
                o /= table.len() as u64;
            }
            out.push(SuffixSegment {
                high,
                inner: &self.inner[j..j + take],
                narrow: self.narrow.as_deref().map(|n| &n[j..j + take]),
            });
        });
    }

    /// Folds one move over `segment` (`out` and `child` are the segment's): `tests`
    /// are the move's box tests ([`suffix_test`]) for the whole row.
    #[inline]
    fn fold<T: Child>(
        &self,
        segment: &SuffixSegment,
        out: &mut [i8],
        child: &[T],
        tests: [Lines; 2],
    ) {
        let tests = tests.map(|t| segment.test(t));
        let Some(narrow) = segment.narrow else {
            return fold_moves(out, child, segment.inner, tests);
        };
        // Each test: met whatever the inner lines (1), never met (0), or a narrow mask.
        let classify = |t: Lines| match t {
            0 => Err(1),
            _ if t == u64::MAX || t & !self.inner_lines != 0 => Err(0),
            _ => Ok(compress(t, self.inner_lines)),
        };
        match (tests.map(classify), self.never) {
            ([Ok(t1), Ok(t2)], _) => fold_moves_narrow(out, child, narrow, [t1, t2], 0),
            ([Ok(t), Err(met)] | [Err(met), Ok(t)], Some(never)) => {
                fold_moves_narrow(out, child, narrow, [t, never], met)
            }
            // Both constant (fold_moves's fast path), or one test on 16 lines.
            _ => fold_moves(out, child, segment.inner, tests),
        }
    }
}

/// Consecutive offsets of a row whose outer groups' lines are `high`, with the
/// inner groups' lines of each.
#[derive(Clone, Copy)]
struct SuffixSegment<'a> {
    high: Lines,
    inner: &'a [Lines],
    /// The same masks narrowed (see [`SuffixMasks`]), where they fit.
    narrow: Option<&'a [u16]>,
}

impl SuffixSegment<'_> {
    /// A box test of [`suffix_test`] on this segment's inner masks: the lines of `test`
    /// that the outer groups hold are met already (and those they lack never will be:
    /// the inner lines are other lines).
    #[inline]
    fn test(&self, test: Lines) -> Lines {
        if test == u64::MAX {
            test
        } else {
            test & !self.high
        }
    }
}

/// The bits of `x` at the lines of `lines`, packed (bit i: the i-th line of `lines`).
fn compress(x: Lines, lines: Lines) -> u16 {
    let mut packed = 0u16;
    let mut rest = lines;
    let mut i = 0;
    while rest != 0 {
        let line = rest & rest.wrapping_neg();
        packed |= u16::from(x & line != 0) << i;
        rest &= rest - 1;
        i += 1;
    }
    packed
}

/// `out[m.parent] = max(out[m.parent], value of move m)` for one line's move list.
#[inline(always)]
fn fold_last_moves_body<T: Child>(out: &mut [i8], child: &[T], list: &[LastMove], ready: u8) {
    for m in list {
        let v = child[m.child as usize];
        let value = v.moved(boxes(m.local & ready));
        let o = &mut out[m.parent as usize];
        *o = (*o).max(value);
    }
}

/// [`fold_last_moves_body`] for one run: `out[i]` and `child[i]` are the parent and
/// child of a move whose local box flags are `local[i]`.
#[inline(always)]
fn fold_last_run_body<T: Child>(out: &mut [i8], child: &[T], local: &[u8], ready: u8) {
    for ((o, &c), &l) in out.iter_mut().zip(child).zip(local) {
        *o = (*o).max(c.moved(boxes(l & ready)));
    }
}

/// Every move of one line of the last group over a transposed batch of rows;
/// `ready[w]` is the line's outside box flags in row w (see [`Lanes`]).
#[inline(always)]
fn fold_lanes_body<T: Child>(
    out: &mut [[i8; LANES]],
    child: &[[T; LANES]],
    line: &LastLine,
    ready: &[u8; LANES],
) {
    let mut fold = |p: usize, q: usize, local: u8| {
        let (o, c) = (&mut out[p], &child[q]);
        for w in 0..LANES {
            o[w] = o[w].max(c[w].moved(boxes(local & ready[w])));
        }
    };
    for run in &line.runs {
        let locals = &line.locals[run.at as usize..][..run.len as usize];
        for (i, &local) in locals.iter().enumerate() {
            fold(run.parent as usize + i, run.child as usize + i, local);
        }
    }
    for m in &line.list {
        fold(m.parent as usize, m.child as usize, m.local);
    }
}

/// [`fold_moves_body`] on narrow masks ([`SuffixMasks`]): the move completes
/// `met + #{t in tests: suffix[i] & t == t}` boxes.
#[inline(always)]
fn fold_moves_narrow_body<T: Child>(
    out: &mut [i8],
    child: &[T],
    suffix: &[u16],
    tests: [u16; 2],
    met: i8,
) {
    let [t1, t2] = tests;
    for ((o, &c), &s) in out.iter_mut().zip(child).zip(suffix) {
        let k = met + ((s & t1) == t1) as i8 + ((s & t2) == t2) as i8;
        *o = (*o).max(c.moved(k));
    }
}

/// The part of a box test that depends on the later groups, for a fixed row with
/// lines `base` drawn in groups 1..=g: `0` (the box completes whatever the later
/// groups hold), `u64::MAX` (it cannot complete in this row) or the later-group lines
/// it still needs.
#[inline]
fn suffix_test(base: Lines, box_mask: Lines, suffix_lines: Lines) -> Lines {
    let own = box_mask & !suffix_lines;
    if box_mask == u64::MAX || base & own != own {
        u64::MAX
    } else {
        box_mask & suffix_lines
    }
}

/// `out[i] = max(out[i], value of the move)` along one run: the move completes
/// `k = #{t in tests: suffix[i] & t == t}` boxes; its value is `k + child` if k > 0
/// (same player again), else `-child`.
#[inline(always)]
fn fold_moves_body<T: Child>(out: &mut [i8], child: &[T], suffix: &[Lines], tests: [Lines; 2]) {
    let constant = |t: Lines| t == 0 || t == u64::MAX;
    if constant(tests[0]) && constant(tests[1]) {
        let k = tests.iter().filter(|&&t| t == 0).count() as i8;
        if k == 0 {
            for (o, &c) in out.iter_mut().zip(child) {
                *o = (*o).max(c.moved(0));
            }
        } else {
            for (o, &c) in out.iter_mut().zip(child) {
                *o = (*o).max(c.moved(k));
            }
        }
        return;
    }
    let [t1, t2] = tests;
    for ((o, &c), &s) in out.iter_mut().zip(child).zip(suffix) {
        let k = ((s & t1) == t1) as i8 + ((s & t2) == t2) as i8;
        *o = (*o).max(c.moved(k));
    }
}

// The streaming loops vectorise twice as wide with AVX2.
cpu_dispatch!(fold_moves, fold_moves_avx2, fold_moves_body, [T: Child], (out: &mut [i8], child: &[T], suffix: &[Lines], tests: [Lines; 2]), ["avx2", "bmi1", "bmi2", "popcnt"]);
cpu_dispatch!(fold_moves_narrow, fold_moves_narrow_avx2, fold_moves_narrow_body, [T: Child], (out: &mut [i8], child: &[T], suffix: &[u16], tests: [u16; 2], met: i8), ["avx2", "bmi1", "bmi2", "popcnt"]);
cpu_dispatch!(fold_lanes, fold_lanes_avx2, fold_lanes_body, [T: Child], (out: &mut [[i8; LANES]], child: &[[T; LANES]], line: &LastLine, ready: &[u8; LANES]), ["avx2", "bmi1", "bmi2", "popcnt"]);
cpu_dispatch!(fold_last_run, fold_last_run_avx2, fold_last_run_body, [T: Child], (out: &mut [i8], child: &[T], local: &[u8], ready: u8), ["avx2", "bmi1", "bmi2", "popcnt"]);
cpu_dispatch!(fold_last_moves, fold_last_moves_avx2, fold_last_moves_body, [T: Child], (out: &mut [i8], child: &[T], list: &[LastMove], ready: u8), ["avx2", "bmi1", "bmi2", "popcnt"]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_reads_children_as_move_key_does() {
        for byte in 0..=251u8 {
            let child = LoonyChild::of_byte(byte);
            for boxes in 0..=2 {
                let expected = loony::move_key(boxes, byte).unwrap();
                let got = if boxes == 0 {
                    child.quiet as i32
                } else {
                    child.capture as i32 + 4 * boxes as i32
                };
                assert_eq!(got, expected, "byte {byte}, boxes {boxes}");
            }
            let (value, flag, offers) = loony::decode(byte).unwrap();
            assert_eq!(
                loony::entry_of_key(loony::key(value, flag) as i8, offers),
                byte
            );
        }
    }

    /// Runs and the list together hold every move once, each run consecutive in
    /// parent and child and at least [`MIN_RUN`] long.
    #[test]
    fn a_line_splits_its_moves_into_runs_and_the_rest() {
        let mut moves = Vec::new();
        let mut push = |parent: u16, child: u16, len: u16| {
            for i in 0..len {
                let local = (parent + i) as u8 % 4;
                moves.push(LastMove {
                    parent: parent + i,
                    child: child + i,
                    local,
                });
            }
        };
        push(0, 5, 3); // short
        push(3, 20, MIN_RUN as u16); // a run, though its parents follow the last
        push(40, 60, MIN_RUN as u16 + 7); // a run
        push(70, 100, MIN_RUN as u16 - 1); // short
        push(85, 200, 1);
        let line = LastLine::new(&moves);
        let mut seen: Vec<(u16, u16, u8)> = line
            .list
            .iter()
            .map(|m| (m.parent, m.child, m.local))
            .collect();
        assert_eq!(line.runs.len(), 2);
        for run in &line.runs {
            assert!(run.len as usize >= MIN_RUN);
            for i in 0..run.len {
                let local = line.locals[run.at as usize + i as usize];
                seen.push((run.parent + i, run.child + i, local));
            }
        }
        seen.sort_unstable();
        let mut all: Vec<(u16, u16, u8)> =
            moves.iter().map(|m| (m.parent, m.child, m.local)).collect();
        all.sort_unstable();
        assert_eq!(seen, all);
    }
}
