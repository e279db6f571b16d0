//! The sites of Dots-and-Boxes positions for the archival chunk coding
//! (`chunk_coding=archive`, docs/FORMAT.md §9.6; the coder is `store::archive`):
//! what predicts a stored value besides the values before it in its chunk.
//!
//! * **Neighbours** (back-offsets inside the block, found by rank arithmetic
//!   without unranking): the position one row back (the same last-group subset
//!   under the previous subsets of the earlier groups: `radix` positions back),
//!   then up to three positions one line apart in the last group: a drawn line of
//!   the last group moved to the nearest free line of the group below it, for the
//!   highest drawn lines first (such a subset ranks lower, so its position comes
//!   earlier in the block).
//! * **Feature**: boxes left `B` and boxes with exactly three sides drawn `T`, as
//!   `B * 64 + T`: the stored byte is `B - v`, and three-sided boxes are the
//!   captures on offer.
//!
//! Per run of a block (fixed earlier groups) the sides each box has outside the
//! last group are counted once; per position they are added to the last group's
//! (a table by rank), four bits a box, so a position costs an addition and two
//! masked bit counts.

use super::board::{Board, Lines};
use super::boxes_left::box_masks;
use super::layout::{Layout, NOT_STORED};
use crate::store::codec::{Contexts, Family, RowFeatures, Site};
use std::sync::OnceLock;

/// Neighbours one line apart in the last group, per position.
const LINE_NEIGHBOURS: usize = 3;

/// Of one last-group subset: its lines' sides per box, and its neighbours' offsets.
#[derive(Debug, Clone, Copy)]
struct LastEntry {
    /// Four bits per box (box `b` at bits `4b..`): the box's sides among the lines.
    sides: u128,
    /// Rank differences to subsets one line apart (0: none).
    back: [u32; LINE_NEIGHBOURS],
}

/// The sites of a layout's positions (it owns a copy of the layout, which shares
/// its tables, so that a reader can keep it beside the store).
pub struct Sites {
    layout: Layout,
    masks: Vec<Lines>,
    /// Lines of the last group.
    last: Lines,
    /// `0x1` in each box's nibble: where nibble counts look.
    ones: u128,
    /// Per size of the last group's subset, by rank; built on first use.
    tables: Vec<OnceLock<Vec<LastEntry>>>,
}

/// Each box's sides among `lines`, four bits a box.
fn packed_sides(masks: &[Lines], lines: Lines) -> u128 {
    (masks.iter().enumerate())
        .map(|(b, &m)| ((lines & m).count_ones() as u128) << (4 * b))
        .sum()
}

/// Boxes complete (four sides) and with three sides among packed sides `x`
/// (each nibble 0..=4, `ones` marking the boxes): 4 is the only count with bit 2
/// set, 3 the only one with bits 0 and 1, so each is one mask and one count.
/// (Comparing every nibble with 4 and 3 made the sites of a 4x4+corners book cost
/// 0.74-0.81 s of CPU, this 0.47-0.51 s: as much as the rest of a probe batch
/// over the zstd file.)
#[inline(always)]
fn complete_and_three(x: u128, ones: u128) -> (u32, u32) {
    (
        (x >> 2 & ones).count_ones(),
        (x & x >> 1 & ones).count_ones(),
    )
}

impl Sites {
    /// The sites of positions of `board` laid out by `layout` (boards of at most
    /// 32 boxes).
    pub fn new(board: &Board, layout: &Layout) -> Sites {
        let masks = box_masks(board);
        assert!(masks.len() <= 32, "a board of at most 32 boxes");
        let sizes = layout.groups.last().map_or(1, |g| g.len() + 1);
        Sites {
            layout: layout.clone(),
            last: layout.groups.last().map_or(0, |g| g.mask()),
            ones: (0..masks.len()).map(|b| 1u128 << (4 * b)).sum(),
            masks,
            tables: (0..sizes).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The last group's entries for subsets of `count` lines, by rank.
    fn last_entries(&self, count: usize) -> &[LastEntry] {
        self.tables[count].get_or_init(|| {
            let Some(group) = self.layout.groups.last() else {
                return vec![LastEntry {
                    sides: 0,
                    back: [0; LINE_NEIGHBOURS],
                }];
            };
            let globals = group.globals(count);
            (group.locals(count).iter().zip(globals))
                .enumerate()
                .map(|(rank, (&local, &global))| {
                    let mut back = [0; LINE_NEIGHBOURS];
                    let mut found = 0;
                    for x in (0..group.len()).rev().filter(|&x| local >> x & 1 == 1) {
                        if found == LINE_NEIGHBOURS {
                            break;
                        }
                        // The nearest free line below x.
                        let Some(y) = (0..x).rev().find(|&y| local >> y & 1 == 0) else {
                            continue;
                        };
                        let other = group.rank(local ^ (1 << x) ^ (1 << y));
                        if other != NOT_STORED {
                            back[found] = rank as u32 - other;
                            found += 1;
                        }
                    }
                    LastEntry {
                        sides: packed_sides(&self.masks, global),
                        back,
                    }
                })
                .collect()
        })
    }

    /// The sites of the `len` positions of block `counts` from index `first` on.
    pub fn sites(&self, counts: &[u8], first: u64, len: usize) -> Vec<Site> {
        let mut out = Vec::with_capacity(len);
        let row = self.row(counts);
        self.visit_features(counts, first, len, |entry, feature| {
            let [a, b, c] = entry.back;
            out.push(Site {
                back: [row, a, b, c],
                feature,
            });
        });
        out
    }

    /// What the fast archival coding needs of the `len` positions of block
    /// `counts` from index `first` on: the row offset and the features (no
    /// neighbours one line apart).
    pub fn row_features(&self, counts: &[u8], first: u64, len: usize) -> RowFeatures {
        let mut features = Vec::with_capacity(len);
        self.visit_features(counts, first, len, |_, feature| features.push(feature));
        RowFeatures {
            row: self.row(counts),
            features,
        }
    }

    /// What the chunk codings of a file of `codings` need of the `len` positions
    /// of block `counts` from index `first` on: the row features for the fast
    /// archival coding, else the sites (which only the first archival coding
    /// reads: zstd chunks ask for nothing).
    pub fn contexts(&self, codings: Family, counts: &[u8], first: u64, len: usize) -> Contexts {
        match codings {
            Family::ArchiveFast => self.row_features(counts, first, len).into(),
            _ => self.sites(counts, first, len).into(),
        }
    }

    /// The back-offset of the row before in block `counts`: the same last-group
    /// subset, one step back in the other groups (0: the layout has one group).
    fn row(&self, counts: &[u8]) -> u32 {
        if self.layout.groups.len() > 1 {
            self.last_entries(last_count(counts)).len() as u32
        } else {
            0
        }
    }

    /// Calls `f` with the last-group entry and the feature of each of the `len`
    /// positions of block `counts` from index `first` on, in order.
    #[inline(always)]
    fn visit_features(
        &self,
        counts: &[u8],
        first: u64,
        len: usize,
        mut f: impl FnMut(&LastEntry, u16),
    ) {
        let entries = self.last_entries(last_count(counts));
        let boxes = self.masks.len() as u32;
        self.layout
            .visit_rank_runs(counts, first, len, |base, ranks| {
                let outside = packed_sides(&self.masks, base & !self.last);
                run_features(&entries[ranks], outside, self.ones, boxes, &mut f);
            });
    }
}

/// [`Sites::visit_features`] of one run: `f(entry, feature)` of each entry, whose
/// sides outside the last group are `outside`.
#[inline(always)]
fn run_features_body<F: FnMut(&LastEntry, u16)>(
    entries: &[LastEntry],
    outside: u128,
    ones: u128,
    boxes: u32,
    f: &mut F,
) {
    for entry in entries {
        let (complete, three) = complete_and_three(outside + entry.sides, ones);
        f(entry, ((boxes - complete) * 64 + three) as u16);
    }
}

// The baseline x86-64 target counts bits in software: the fast archival coding's
// contexts of a 3x5+corners book (31 M positions) took 0.41-0.45 s of CPU so,
// 0.23-0.24 s with `popcnt` (examples/archive_decode, load 9).
crate::sys::cpu_dispatch!(run_features, run_features_popcnt, run_features_body, [F: FnMut(&LastEntry, u16)], (entries: &[LastEntry], outside: u128, ones: u128, boxes: u32, f: &mut F), ["popcnt"]);

/// The size of block `counts`' last-group subsets.
fn last_count(counts: &[u8]) -> usize {
    counts.last().map_or(0, |&c| c as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::boxes_left::boxes_left;
    use crate::games::dots::groups::symmetric_groups;
    use crate::games::dots::layout::split_sizes;
    use crate::games::dots::orbits::reduced_layout;

    /// Every site's feature counts the position's boxes (left, three-sided) and
    /// every neighbour is an earlier position of the block one line apart in the
    /// last group (or the row before), on plain and reduced layouts.
    #[test]
    fn sites_describe_their_positions_and_neighbours() {
        let b23 = Board::new(2, 3).unwrap();
        let b22 = Board::new(2, 2).unwrap();
        let b33 = Board::new(3, 3).unwrap();
        let free23 = b23.free_lines(0);
        let layouts = [
            (b23, Layout::new(0, split_sizes(&free23, &[9, 8]))),
            (b23, Layout::new(0, split_sizes(&free23, &[6, 6, 5]))),
            (b22, Layout::new(0, split_sizes(&b22.free_lines(0), &[12]))),
            (b33, {
                let groups = symmetric_groups(&b33, 0, 1 << 30, true, true);
                reduced_layout(&b33, 0, groups, true, true)
            }),
        ];
        for (board, layout) in &layouts {
            layout.prepare_unranking();
            let sites = Sites::new(board, layout);
            let masks = box_masks(board);
            let mut line_neighbours = 0;
            for n in layout.start_lines()..=layout.full_layer() {
                for counts in layout.blocks_of_layer(n) {
                    let size = layout.block_size(&counts) as usize;
                    let all = sites.sites(&counts, 0, size);
                    assert_eq!(all.len(), size);
                    // The fast coding's contexts are the sites' row and features.
                    let rows = sites.row_features(&counts, 0, size);
                    assert!(all.iter().all(|s| s.back[0] == rows.row));
                    let features: Vec<u16> = all.iter().map(|s| s.feature).collect();
                    assert_eq!(rows.features, features);
                    // From inside a row too: the same sites.
                    let from = size / 3;
                    assert_eq!(sites.sites(&counts, from as u64, size - from), all[from..]);
                    let last = layout.groups.last().unwrap().mask();
                    for (i, site) in all.iter().enumerate() {
                        let p = layout.position_at(&counts, i as u64);
                        let three = masks.iter().filter(|&&m| (p & m).count_ones() == 3).count();
                        let want = boxes_left(&masks, p) * 64 + three as u32;
                        assert_eq!(site.feature as u32, want, "{counts:?} {i}");
                        for (j, &d) in site.back.iter().enumerate() {
                            if d == 0 || d as usize > i {
                                continue;
                            }
                            let q = layout.position_at(&counts, (i - d as usize) as u64);
                            if j == 0 {
                                assert_eq!(p & last, q & last, "{counts:?} {i}");
                            } else {
                                line_neighbours += 1;
                                assert_eq!(p & !last, q & !last);
                                assert_eq!((p ^ q).count_ones(), 2, "{counts:?} {i} {j}");
                            }
                        }
                    }
                }
            }
            assert!(line_neighbours > 0);
        }
    }
}
