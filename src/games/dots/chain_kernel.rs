//! The kernel of chain tablebases (`tb build --start FILE` where the file marks
//! chains): every position of a block in unit form (see [`Spec::chains`]) gets the
//! best of its moves, a free line's worth `k + V` or `-V` as in the plain game, a
//! chain's worth what playing it out to the end gives
//! ([`Chains::play_out`]). Plain per-position lookups, no streaming: chain files are
//! endgames of big boards, whose units are few.

use super::board::{Lines, boxes_completed_with, move_value};
use super::chains::Chains;
use super::layout::Layout;
use super::spec::Spec;
use rayon::prelude::*;

/// Positions per parallel task.
const TILE: usize = 1 << 14;

/// The values of block `key` of a chain tablebase, from `children[g]`: the block
/// with one more line of group `g` (`None` where group `g` is full).
pub fn compute_block(
    spec: &Spec,
    layout: &Layout,
    completion: &[[Lines; 2]],
    key: &[u8],
    children: &[Option<&[i8]>],
) -> Vec<i8> {
    let mut group_of = [usize::MAX; 64];
    for (g, group) in layout.groups.iter().enumerate() {
        for &line in &group.lines {
            group_of[line] = g;
        }
    }
    let all = spec.board.all_lines();
    let completes = |p: Lines, line: usize| boxes_completed_with(p, completion[line]) as i32;
    let value_of = |units: Lines| -> i8 {
        let open = all & !units;
        if open == 0 {
            return spec.penalty;
        }
        let position = spec.chains.from_units(units);
        let best = (0..64)
            .filter(|l| open >> l & 1 == 1)
            .map(|line| {
                let (_, index) = layout.locate_packed(units | 1 << line);
                let child = children[group_of[line]].expect("a child block for an open line");
                let after = i32::from(child[index as usize]);
                match spec.chains.represented_by(line) {
                    Some(chain) => Chains::play_out(position, chain, after, completes),
                    None => move_value(completes(position, line) as u32, after),
                }
            })
            .max()
            .expect("an open unit");
        best as i8
    };
    let mut values = vec![0i8; layout.block_size(key) as usize];
    values
        .par_chunks_mut(TILE)
        .enumerate()
        .for_each(|(t, tile)| {
            let len = tile.len();
            let mut out = tile.iter_mut();
            layout.visit(key, (t * TILE) as u64, len, |units| {
                *out.next().expect("one value per position") = value_of(units);
            });
        });
    values
}
