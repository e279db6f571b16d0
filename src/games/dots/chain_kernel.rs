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

/// Positions per parallel task.
const TILE: usize = 1 << 14;

/// Most lines around a chain for which [`PlayOutTable`] tabulates it (2^12 line
/// states times the values: at most a few hundred KiB a chain).
const MAX_TABULATED_LINES: u32 = 12;

/// What the chain kernel knows before its first block: which group holds each
/// line, and each chain's play-out as a table.
pub struct ChainKernel<'a> {
    spec: &'a Spec,
    layout: &'a Layout,
    completion: &'a [[Lines; 2]],
    group_of: [usize; 64],
    /// Per line: the index in `play_outs` of the chain it represents.
    chain_of: [Option<usize>; 64],
    play_outs: Vec<PlayOutTable>,
}

impl<'a> ChainKernel<'a> {
    /// The kernel of `spec`'s chain tablebase, its play-out tables made.
    pub fn new(
        spec: &'a Spec,
        layout: &'a Layout,
        completion: &'a [[Lines; 2]],
    ) -> ChainKernel<'a> {
        let mut group_of = [usize::MAX; 64];
        for (g, group) in layout.groups.iter().enumerate() {
            for &line in &group.lines {
                group_of[line] = g;
            }
        }
        let mut chain_of = [None; 64];
        let most =
            spec.board.rows() as i32 * spec.board.cols() as i32 + i32::from(spec.penalty).abs();
        let play_outs = spec
            .chains
            .masks()
            .iter()
            .enumerate()
            .map(|(i, &chain)| {
                chain_of[chain.trailing_zeros() as usize] = Some(i);
                PlayOutTable::new(spec, completion, chain, most)
            })
            .collect();
        ChainKernel {
            spec,
            layout,
            completion,
            group_of,
            chain_of,
            play_outs,
        }
    }

    /// The values of block `key`, from `children[g]`: the block with one more unit
    /// of group `g` (`None` where group `g` is full).
    pub fn compute_block(&self, key: &[u8], children: &[Option<&[i8]>]) -> Vec<i8> {
        let (spec, layout) = (self.spec, self.layout);
        let all = spec.board.all_lines();
        let completes = completes_with(self.completion);
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
                    let child =
                        children[self.group_of[line]].expect("a child block for an open line");
                    let after = i32::from(child[index as usize]);
                    match self.chain_of[line] {
                        Some(c) => self.play_outs[c].value(position, after, completes),
                        None => move_value(completes(position, line) as u32, after),
                    }
                })
                .max()
                .expect("an open unit");
            best as i8
        };
        let mut values = vec![0i8; layout.block_size(key) as usize];
        layout.par_visit_mut(key, &mut values, TILE, |units, value| {
            *value = value_of(units)
        });
        values
    }
}

/// [`Chains::play_out`] of one undrawn chain, tabulated: it depends only on which
/// lines around the chain (the other sides of the boxes its lines border) are
/// drawn and on the value after it, so a build computes it once per such state
/// instead of once per position.
struct PlayOutTable {
    chain: Lines,
    /// The lines around the chain that a position may or may not have drawn (other
    /// chains' lines among them; the start's lines are drawn in every position);
    /// empty when too many to tabulate.
    around: Vec<usize>,
    /// Values after the chain from `-most` to `most`.
    most: i32,
    /// `values[state * (2 * most + 1) + after + most]`; empty: not tabulated.
    values: Vec<i8>,
}

impl PlayOutTable {
    fn new(spec: &Spec, completion: &[[Lines; 2]], chain: Lines, most: i32) -> PlayOutTable {
        let board = &spec.board;
        let around_mask = (0..board.rows())
            .flat_map(|r| (0..board.cols()).map(move |c| board.box_mask(r, c)))
            .filter(|&b| b & chain != 0)
            .fold(0, |m, b| m | b)
            & !chain
            & !spec.start;
        let mut table = PlayOutTable {
            chain,
            around: Vec::new(),
            most,
            values: Vec::new(),
        };
        if around_mask.count_ones() > MAX_TABULATED_LINES {
            return table;
        }
        table.around = (0..64).filter(|l| around_mask >> l & 1 == 1).collect();
        let completes = completes_with(completion);
        let (width, base) = (table.width(), spec.start);
        table.values = (0..1usize << table.around.len())
            .flat_map(|state| {
                let position = table
                    .around
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| state >> i & 1 == 1)
                    .fold(base, |p, (_, &l)| p | 1 << l);
                (0..width).map(move |a| {
                    Chains::play_out(position, chain, a as i32 - most, completes) as i8
                })
            })
            .collect();
        table
    }

    /// What playing the chain out is worth in `position` (the chain undrawn) when
    /// `after` is the value of `position | chain`.
    #[inline]
    fn value(&self, position: Lines, after: i32, completes: impl Fn(Lines, usize) -> i32) -> i32 {
        if self.values.is_empty() || after.abs() > self.most {
            return Chains::play_out(position, self.chain, after, completes);
        }
        let state = self
            .around
            .iter()
            .enumerate()
            .fold(0, |s, (i, &l)| s | ((position >> l & 1) as usize) << i);
        i32::from(self.values[state * self.width() + (after + self.most) as usize])
    }

    /// Entries per state: the values after the chain, `-most..=most`.
    fn width(&self) -> usize {
        (2 * self.most + 1) as usize
    }
}

/// The number of boxes a line completes in a position, as [`Chains::play_out`] takes it.
fn completes_with(completion: &[[Lines; 2]]) -> impl Fn(Lines, usize) -> i32 + Copy + '_ {
    move |p, line| boxes_completed_with(p, completion[line]) as i32
}
