//! The retrograde kernel: the values of one block (n; c1..cG) from its child blocks
//! (n+1; ..c_g+1..).
//!
//! The block is filled in one pass per group g. For a fixed row (the digits of groups
//! 1..=g), the positions that differ only in the later groups are contiguous in the
//! parent, and so are their children along any move in group g: the kernel streams
//! through runs of both arrays. The box test needs the whole position, whose later-
//! group part ("suffix mask") depends only on the offset inside the row.

use crate::board::Lines;
use crate::layout::{Layout, Odometer};
use rayon::prelude::*;

/// Positions handled by one parallel task.
const TILE: usize = 1 << 14;
/// Rows up to this long share one precomputed table of suffix masks.
const SHARED_SUFFIX_MAX: u64 = 1 << 16;

/// What the kernel needs besides the blocks: the layout and the box-test masks.
pub struct Kernel<'a> {
    /// The group layout.
    pub layout: &'a Layout,
    /// Per line, the other three lines of each box it borders (see
    /// [`crate::board::Board::completion_masks`]).
    pub completion: &'a [[Lines; 2]],
    /// Value of the full board.
    pub penalty: i8,
}

impl Kernel<'_> {
    /// Computes block `counts`. `children[g]` must hold block `counts + e_g` for every
    /// group that still has a free line (and is ignored otherwise).
    pub fn compute_block(&self, counts: &[u8], children: &[Option<&[i8]>]) -> Vec<i8> {
        let size = self.layout.block_size(counts) as usize;
        let groups = &self.layout.groups;
        let has_move = groups.iter().zip(counts).any(|(g, &c)| (c as usize) < g.len());
        if !has_move {
            return vec![self.penalty; size];
        }
        let mut values = vec![i8::MIN; size];
        for (g, group) in groups.iter().enumerate() {
            if (counts[g] as usize) < group.len() {
                let child = children[g].expect("child block of a group with a free line");
                self.pass(counts, g, child, &mut values);
            }
        }
        debug_assert!(values.iter().all(|&v| v != i8::MIN));
        values
    }

    /// Folds every move in group `g` into `parent`.
    fn pass(&self, counts: &[u8], g: usize, child: &[i8], parent: &mut [i8]) {
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
        debug_assert_eq!(child.len() as u64 * radix, parent.len() as u64 * child_radix);
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
        let shared_suffix: Option<Vec<Lines>> = (row_len <= SHARED_SUFFIX_MAX)
            .then(|| {
                let mut all = Vec::new();
                fill_suffix_masks(&suffix_tables, 0, row_len as usize, &mut all);
                all
            });
        let locals = group.locals(c);
        let full_local = ((1u64 << group.len()) - 1) as u32;

        parent.par_chunks_mut(TILE).enumerate().for_each(|(t, out)| {
            let start = (t * TILE) as u64;
            let end = start + out.len() as u64;
            let mut outer = Odometer::new(outer_tables.clone(), start / row_len);
            let mut scratch: Vec<Lines> = Vec::new();
            let mut pos = start;
            while pos < end {
                let row = pos / row_len;
                let s0 = pos % row_len;
                let len = (row_len - s0).min(end - pos) as usize;
                let suffix: &[Lines] = match &shared_suffix {
                    Some(all) => &all[s0 as usize..s0 as usize + len],
                    None => {
                        fill_suffix_masks(&suffix_tables, s0, len, &mut scratch);
                        &scratch
                    }
                };
                let base = outer.mask();
                let sub = locals[outer.digit(g)];
                let prefix = row / radix;
                let out_run = &mut out[(pos - start) as usize..][..len];
                let mut free = !sub & full_local;
                while free != 0 {
                    let bit = free.trailing_zeros() as usize;
                    free &= free - 1;
                    let rank = group.rank(sub | 1 << bit) as u64;
                    let child_start = ((prefix * child_radix + rank) * row_len + s0) as usize;
                    let masks = self.completion[group.lines[bit]];
                    fold_moves(out_run, &child[child_start..child_start + len], base, suffix, masks, suffix_lines);
                }
                pos += len as u64;
                outer.advance();
            }
        });
    }
}

/// Suffix masks of `len` consecutive offsets from `from` in the later groups.
fn fill_suffix_masks(tables: &[&[Lines]], from: u64, len: usize, out: &mut Vec<Lines>) {
    out.clear();
    let mut odo = Odometer::new(tables.to_vec(), from);
    for _ in 0..len {
        out.push(odo.mask());
        odo.advance();
    }
}

/// `out[i] = max(out[i], value of the move)` along one run: the move completes k
/// boxes in position `base | suffix[i]`; its value is `k + child` if k > 0 (same
/// player again), else `-child`.
#[inline]
fn fold_moves(out: &mut [i8], child: &[i8], base: Lines, suffix: &[Lines], masks: [Lines; 2], suffix_lines: Lines) {
    // A box test that does not look at the later groups is the same for the whole run.
    let varies = |m: Lines| m != u64::MAX && m & suffix_lines != 0;
    if !varies(masks[0]) && !varies(masks[1]) {
        let k = masks.iter().filter(|&&m| base & m == m).count() as i8;
        if k == 0 {
            for (o, &c) in out.iter_mut().zip(child) {
                *o = (*o).max(c.wrapping_neg());
            }
        } else {
            for (o, &c) in out.iter_mut().zip(child) {
                *o = (*o).max(c.wrapping_add(k));
            }
        }
        return;
    }
    let [m1, m2] = masks;
    for ((o, &c), &s) in out.iter_mut().zip(child).zip(suffix) {
        let p = base | s;
        let k = ((p & m1) == m1) as i8 + ((p & m2) == m2) as i8;
        let v = if k == 0 { c.wrapping_neg() } else { c.wrapping_add(k) };
        *o = (*o).max(v);
    }
}
