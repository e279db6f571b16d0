//! The boxes left (not yet completed) in each position, and the stored form of values
//! built on them (meta `value_form=boxes-left`, legacy formats 5, plain, and 6,
//! loony: the value part of a loony byte, `loony::FlipLoony`; docs/FORMAT.md §9.8):
//! a position's value `v` is stored as `B - v`, `B` its
//! boxes left. Without a last-move penalty that is twice the boxes
//! the side not to move takes, which is small and smooth where `v` is not: boxes
//! the mover can take at once move `v` with `B` and leave `B - v` alone, so zstd
//! finds long runs in the later layers (3x4: 2.57 -> 2.17 bits/position over all
//! layers, 0.9 bits instead of 2.0 on layer 22). The map is its own inverse and
//! wraps in `i8`, so it is lossless for any byte, penalty or tampered chunk.

use super::board::{Board, Lines};
use super::layout::{LastGroupTable, Layout};

/// The stored form of `value` given the position's boxes left, and the value of a
/// stored byte (the same map).
#[inline]
pub fn flip(boxes_left: u32, x: i8) -> i8 {
    (boxes_left as i8).wrapping_sub(x)
}

/// What a pass over a block does to each value given its position's boxes left.
pub trait LeftMap: Copy {
    /// The new value of `x` at a position with `left` boxes left.
    fn map(self, left: u32, x: i8) -> i8;
}

/// [`flip`]: plain values to the boxes-left form and back.
#[derive(Debug, Clone, Copy)]
pub struct Flip;

impl LeftMap for Flip {
    #[inline(always)]
    fn map(self, left: u32, x: i8) -> i8 {
        flip(left, x)
    }
}

/// One run of [`BoxesLeft::map_all`]: `x = m(base_left - |inner & live|, x)`.
#[inline(always)]
fn map_run_body<M: LeftMap>(run: &mut [i8], inner: &[u32], live: u32, base_left: u32, m: M) {
    for (x, &bits) in run.iter_mut().zip(inner) {
        *x = m.map(base_left - (bits & live).count_ones(), *x);
    }
}

crate::sys::cpu_dispatch!(map_run, map_run_avx2, map_run_body, [M: LeftMap], (run: &mut [i8], inner: &[u32], live: u32, base_left: u32, m: M), ["avx2", "popcnt"]);

/// Mask of each box's four lines, box `r * cols + c` at index `r * cols + c`.
pub fn box_masks(board: &Board) -> Vec<Lines> {
    (0..board.rows())
        .flat_map(|r| (0..board.cols()).map(move |c| board.box_mask(r, c)))
        .collect()
}

/// Boxes of `masks` (see [`box_masks`]) not complete in `position`.
#[inline]
pub fn boxes_left(masks: &[Lines], position: Lines) -> u32 {
    masks.iter().filter(|&&m| position & m != m).count() as u32
}

/// Boxes left of every position of a layout's blocks, a run at a time: a box whose
/// lines lie outside the last group is complete or not for the whole run; of the
/// others, those whose outer lines are all drawn (`live`) are complete where the
/// last group's subset holds their inner lines, one bit per box in a table by rank.
/// Per position that is a table read, an `and` and a population count.
pub struct BoxesLeft<'a> {
    layout: &'a Layout,
    masks: Vec<Lines>,
    /// The lines of the last group (none in a layout without groups).
    last: Lines,
    /// Bit `b` set when box `b` has a line in the last group.
    touches_last: u32,
    /// By subset of the last group: bit `b` set when box `b`'s lines in the last
    /// group are all in the subset.
    inner: LastGroupTable<'a, u32>,
}

/// Bit `b` set when the lines of box `masks[b]` inside `within` are all in `position`.
fn complete_bits(masks: &[Lines], position: Lines, within: Lines) -> u32 {
    (masks.iter().enumerate())
        .filter(|&(_, &m)| position & m & within == m & within)
        .fold(0, |bits, (b, _)| bits | 1 << b)
}

impl<'a> BoxesLeft<'a> {
    /// The boxes of `board` over the blocks of `layout`. Boards have at most 32
    /// boxes (64 lines).
    pub fn new(board: &Board, layout: &'a Layout) -> BoxesLeft<'a> {
        let masks = box_masks(board);
        assert!(masks.len() <= 32, "a board of at most 32 boxes");
        let last = layout.groups.last().map_or(0, |g| g.mask());
        let touches_last = (masks.iter().enumerate())
            .filter(|&(_, &m)| m & last != 0)
            .fold(0, |bits, (b, _)| bits | 1 << b);
        let inner_masks = masks.clone();
        BoxesLeft {
            layout,
            masks,
            last,
            touches_last,
            inner: LastGroupTable::new(layout, move |m| complete_bits(&inner_masks, m, last)),
        }
    }

    /// Replaces each `x` of `values` (block `counts` from index `first` on) with
    /// [`flip`]`(B, x)`, `B` its position's boxes left: values to their stored form
    /// and back.
    pub fn flip_all(&self, counts: &[u8], first: u64, values: &mut [i8]) {
        self.map_all(counts, first, values, Flip);
    }

    /// Replaces each `x` of `values` (block `counts` from index `first` on) with
    /// `m.map(B, x)`, `B` its position's boxes left.
    pub fn map_all(&self, counts: &[u8], first: u64, values: &mut [i8], m: impl LeftMap) {
        let inner = self.inner.of_block(counts);
        let all = self.masks.len() as u32;
        self.layout
            .visit_rank_runs_mut(counts, first, values, |base, ranks, run| {
                // Boxes with no line in the last group are decided by the base; the
                // others can complete in this run only if their outer lines are in it.
                let outer_done = complete_bits(&self.masks, base, !self.last);
                let decided = (outer_done & !self.touches_last).count_ones();
                let live = outer_done & self.touches_last;
                map_run(run, &inner[ranks], live, all - decided, m);
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::groups::symmetric_groups;
    use crate::games::dots::layout::split_sizes;
    use crate::games::dots::orbits::reduced_layout;

    /// Boxes left counted line by line from the board's coordinates.
    fn brute_boxes_left(board: &Board, position: Lines) -> u32 {
        let drawn = |l: usize| position >> l & 1 == 1;
        let mut left = 0;
        for r in 0..board.rows() {
            for c in 0..board.cols() {
                let sides = [
                    board.h(r, c),
                    board.h(r + 1, c),
                    board.v(r, c),
                    board.v(r, c + 1),
                ];
                left += u32::from(!sides.into_iter().all(drawn));
            }
        }
        left
    }

    #[test]
    fn every_position_flips_with_its_boxes_left_and_back() {
        let b23 = Board::new(2, 3).unwrap();
        let b33 = Board::new(3, 3).unwrap();
        let b22 = Board::new(2, 2).unwrap();
        let free23 = b23.free_lines(0);
        let ice = b23.top_left_perimeter();
        let free_ice = b23.free_lines(ice);
        let layouts = [
            (b23, Layout::new(0, split_sizes(&free23, &[9, 8]))),
            (b23, Layout::new(0, split_sizes(&free23, &[6, 6, 5]))),
            (b22, Layout::new(0, split_sizes(&b22.free_lines(0), &[12]))),
            (b23, Layout::new(ice, split_sizes(&free_ice, &[7, 5]))),
            (b33, {
                let groups = symmetric_groups(&b33, 0, 1 << 30, true, true);
                reduced_layout(&b33, 0, groups, true, true)
            }),
        ];
        for (board, layout) in &layouts {
            let boxes = BoxesLeft::new(board, layout);
            assert_eq!(boxes_left(&box_masks(board), 0), board.num_boxes() as u32);
            for n in layout.start_lines()..=layout.full_layer() {
                for counts in layout.blocks_of_layer(n) {
                    let size = layout.block_size(&counts) as usize;
                    let values: Vec<i8> = (0..size).map(|i| (i * 37 % 251) as i8).collect();
                    // From every start, so that runs begin inside rows too.
                    for first in [0, size / 3, size.saturating_sub(1)] {
                        let mut flipped = values[first..].to_vec();
                        boxes.flip_all(&counts, first as u64, &mut flipped);
                        let mut k = 0;
                        layout.visit(&counts, first as u64, size - first, |p| {
                            let left = brute_boxes_left(board, p);
                            assert_eq!(boxes_left(&box_masks(board), p), left);
                            let want = (left as i8).wrapping_sub(values[first + k]);
                            assert_eq!(flipped[k], want, "{counts:?} index {}", first + k);
                            k += 1;
                        });
                        assert_eq!(k, size - first);
                        boxes.flip_all(&counts, first as u64, &mut flipped);
                        assert_eq!(flipped, values[first..]);
                    }
                }
            }
        }
    }
}
