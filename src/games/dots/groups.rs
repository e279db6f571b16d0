//! Build policy for Dots-and-Boxes: which line groups a build uses (from the memory
//! budget), how deep the book goes, and whether a build fits its budget at all.
//! The layout itself ([`super::layout`]) and the symmetry orbits
//! ([`super::orbits`]) only describe; this module decides.

use super::board::{Board, Lines};
use super::layout::{Layout, MAX_GROUP_LINES, MAX_GROUPS, split_sizes};
use super::orbits::{reduced_layout, split_orbits, start_subgroups};
use super::symmetry::Symmetries;

/// Positions the default book may hold (about 20 MB stored).
const DEFAULT_BOOK_POSITIONS: u64 = 1 << 26;

/// Default book depth: the deepest K such that layers start..=K hold at most
/// 2^26 positions (about 20 MB stored), but never below the start layer.
pub fn default_book_lines(layout: &Layout) -> usize {
    let first = layout.start_lines();
    let mut total = 0u64;
    let mut k = first;
    for n in first..=layout.full_layer() {
        total += layout.layer_size(n);
        if total > DEFAULT_BOOK_POSITIONS {
            break;
        }
        k = n;
    }
    k
}

/// Groups for a budget: the fewest groups of at most [`MAX_GROUP_LINES`] lines
/// (consecutive free lines in line order, sizes as even as possible) such that the
/// largest block plus its children stays within a quarter of `memory`.
pub fn auto_groups(board: &Board, start: Lines, memory: u64) -> Vec<Vec<usize>> {
    let free = board.free_lines(start);
    let min_groups = free.len().div_ceil(MAX_GROUP_LINES).max(1);
    let mut best = None;
    for g in min_groups..=free.len().clamp(1, MAX_GROUPS) {
        let groups = split_even(&free, g);
        let layout = Layout::new(start, groups.clone());
        let peak = peak_block_bytes(&layout);
        best = Some(groups);
        if peak <= memory / 4 {
            break;
        }
    }
    best.unwrap_or_default()
}

/// Splits lines into `g` consecutive groups of nearly equal size.
pub fn split_even(lines: &[usize], g: usize) -> Vec<Vec<usize>> {
    let sizes: Vec<usize> = (0..g)
        .map(|i| lines.len() / g + usize::from(i < lines.len() % g))
        .collect();
    split_sizes(lines, &sizes)
}

/// Bytes of the largest stored block plus its stored child blocks (one value byte
/// per position), exact, without visiting every block.
///
/// With the other counts fixed, block + children is `u * R(c) + v * R(c + 1)`
/// (u, v >= 0) in the count `c` of a group g >= 2, where R is the group's radix
/// polynomial: a binomial row, or with corner pairs a product of `(1 + x)` and
/// `(1 + x + x^2)` factors; either way palindromic and unimodal, so the sum is
/// largest for some c in `ceil(k/2) - 1 ..= floor(k/2)`. So only those counts are
/// tried for groups 2..G (one or two each), and every count for group 1 (which
/// symmetry makes lopsided).
pub fn peak_block_bytes(layout: &Layout) -> u64 {
    let Some((first, rest)) = layout.groups.split_first() else {
        return 1;
    };
    let mut candidates: Vec<Vec<usize>> = vec![(0..=first.len()).collect()];
    for g in rest {
        let k = g.len();
        candidates.push((k.div_ceil(2).saturating_sub(1)..=k / 2).collect());
    }
    let size = |counts: &[usize]| -> u128 {
        layout
            .groups
            .iter()
            .zip(counts)
            .map(|(g, &c)| g.radix(c) as u128)
            .product()
    };
    let mut choice = vec![0usize; candidates.len()];
    let mut peak = 0u128;
    loop {
        let mut counts: Vec<usize> = choice
            .iter()
            .zip(&candidates)
            .map(|(&i, list)| list[i])
            .collect();
        let mut total = size(&counts);
        for g in 0..counts.len() {
            if counts[g] < layout.groups[g].len() {
                counts[g] += 1;
                total += size(&counts);
                counts[g] -= 1;
            }
        }
        peak = peak.max(total);
        // Next combination (odometer over the candidate lists).
        let mut g = choice.len();
        loop {
            if g == 0 {
                return peak.min(u64::MAX as u128) as u64;
            }
            g -= 1;
            choice[g] += 1;
            if choice[g] < candidates[g].len() {
                break;
            }
            choice[g] = 0;
        }
    }
}

/// Line groups built from unions of line orbits under the board symmetries that fix
/// `start` (see [`super::orbits::symmetric_split`]), so that every such symmetry maps every group
/// onto itself and (with `corners`) every corner pair lies in one group; at most 16
/// lines per group, sizes as even as possible. The group count is chosen like
/// [`auto_groups`]: the fewest groups whose largest block plus its
/// children (stored sizes, i.e. with the reduction) fits in a quarter of `memory`.
/// If no split fits, smaller subgroups of the symmetries are tried (their orbits
/// are smaller, so groups can be); if none fits, the split with the smallest peak.
pub fn symmetric_groups(
    board: &Board,
    start: Lines,
    memory: u64,
    symmetry: bool,
    corners: bool,
) -> Vec<Vec<usize>> {
    let free = (board.all_lines() & !start).count_ones() as usize;
    if free == 0 {
        return vec![Vec::new()];
    }
    let syms = Symmetries::new(*board);
    let subgroups = if symmetry {
        start_subgroups(&syms, start)
    } else {
        vec![vec![0]]
    };
    let mut best: Option<(u64, Vec<Vec<usize>>)> = None;
    for fixing in &subgroups {
        for count in free.div_ceil(MAX_GROUP_LINES).max(1)..=MAX_GROUPS {
            let Some(groups) = split_orbits(board, &syms, start, count, fixing, corners) else {
                continue;
            };
            let layout = reduced_layout(board, start, groups.clone(), symmetry, corners);
            let peak = super::groups::peak_block_bytes(&layout);
            if peak <= memory / 4 {
                return groups;
            }
            if best.as_ref().is_none_or(|(p, _)| peak < *p) {
                best = Some((peak, groups));
            }
        }
    }
    best.expect("some split into at most 16 groups exists").1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::group_symmetry::GroupSymmetry;
    use crate::games::dots::orbits::symmetric_split;

    #[test]
    fn children_located_together_are_located_as_one() {
        // Every child of random positions, through the incremental path, against
        // locating the child alone: with and without symmetry and corners, 2-4
        // groups, a start with lines drawn, and groups that do not follow line order.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut layouts = Vec::new();
        for (spec, count) in [("3x4", 2), ("3x3", 3), ("4x4", 4)] {
            let b: Board = spec.parse().unwrap();
            for (symmetry, corners) in [(true, true), (true, false), (false, true), (false, false)]
            {
                let groups = symmetric_split(&b, 0, count, symmetry, corners).unwrap();
                layouts.push((b, 0, reduced_layout(&b, 0, groups, symmetry, corners)));
            }
        }
        let b: Board = "3x3".parse().unwrap();
        let start = b.top_left_perimeter();
        let groups = symmetric_groups(&b, start, 1 << 30, true, true);
        layouts.push((b, start, reduced_layout(&b, start, groups, true, true)));
        let free: Vec<usize> = (0..24).rev().filter(|&l| l % 5 != 0).collect();
        let interleaved = vec![
            free.iter().step_by(2).copied().collect(),
            free.iter().skip(1).step_by(2).copied().collect(),
        ];
        let rest: Vec<usize> = (0..24).filter(|&l| l % 5 == 0).collect();
        layouts.push((b, 0, Layout::new(0, [interleaved, vec![rest]].concat())));
        for (b, start, layout) in &layouts {
            for _ in 0..300 {
                let position = next() & next() & b.all_lines() | start;
                let moves = b.all_lines() & !position;
                let mut seen = 0u64;
                let here = layout.locate_children(position, moves, |line, place| {
                    assert_eq!(moves >> line & 1, 1);
                    seen |= 1 << line;
                    assert_eq!(
                        place,
                        layout.locate_packed(position | 1 << line),
                        "{b:?} line {line}"
                    );
                });
                assert_eq!(seen, moves);
                assert_eq!(here, layout.locate_packed(position));
            }
        }
    }

    #[test]
    fn symmetries_breaking_a_group_are_dropped() {
        let b: Board = "2x2".parse().unwrap();
        // Board symmetries (without corner swaps) that keep each group.
        let kept = |groups: Vec<Vec<usize>>, start| {
            GroupSymmetry::new(&b, start, &groups, true, &[]).len()
        };
        // Consecutive halves (h lines, v lines) are kept by the 4 symmetries that do
        // not swap rows and columns.
        let halves = split_sizes(&(0..12).collect::<Vec<_>>(), &[6, 6]);
        assert_eq!(kept(halves, 0), 4);
        // Splitting the top row from the bottom keeps only the left-right mirror.
        let split = split_sizes(&(0..12).collect::<Vec<_>>(), &[2, 10]);
        assert_eq!(kept(split, 0), 2);
        // The Icelandic start keeps the identity and the transpose.
        let start = b.top_left_perimeter();
        assert_eq!(
            kept(symmetric_groups(&b, start, 1 << 30, true, false), start),
            2
        );
    }

    #[test]
    fn peak_matches_a_walk_over_every_block() {
        for (spec, start, count) in [
            ("2x2", 0, 1),
            ("2x2", 0, 2),
            ("3x3", 0, 2),
            ("3x3", 0, 3),
            ("3x4", 0, 4),
            ("3x5", 0, 6),
            ("4x4", 0, 5),
        ] {
            let b: Board = spec.parse().unwrap();
            for corners in [false, true] {
                let even = split_even(&(0..b.num_lines()).collect::<Vec<_>>(), count);
                for layout in [
                    reduced_layout(
                        &b,
                        start,
                        symmetric_split(&b, start, count, true, corners).unwrap(),
                        true,
                        corners,
                    ),
                    Layout::new(start, even),
                ] {
                    let walk = (0..=b.num_lines())
                        .flat_map(|n| layout.blocks_of_layer(n))
                        .map(|counts| {
                            let children: u64 = (0..counts.len())
                                .filter(|&g| (counts[g] as usize) < layout.groups[g].len())
                                .map(|g| {
                                    let mut c = counts.clone();
                                    c[g] += 1;
                                    layout.block_size(&c)
                                })
                                .sum();
                            layout.block_size(&counts) + children
                        })
                        .max()
                        .unwrap();
                    assert_eq!(peak_block_bytes(&layout), walk, "{spec} {count}");
                }
            }
        }
    }

    #[test]
    fn small_boards_get_one_group_and_big_ones_several() {
        let b: Board = "2x2".parse().unwrap();
        assert_eq!(auto_groups(&b, 0, 8 << 30).len(), 1);
        let b: Board = "3x4".parse().unwrap();
        let groups = auto_groups(&b, 0, 8 << 30);
        assert_eq!(
            groups.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![16, 15]
        );
        let b: Board = "3x5".parse().unwrap();
        let groups = auto_groups(&b, 0, 1 << 30);
        let layout = Layout::new(0, groups);
        assert!(peak_block_bytes(&layout) <= 1 << 28);
    }
}
