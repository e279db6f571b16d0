//! Symmetry and corner reduction of the tablebase in David Wilson's style
//! (docs/FORMAT.md §9.8).
//!
//! **Symmetry.** Wilson uses only the board symmetries that map every line group
//! onto itself (as a set of lines), so a transformed position stays in a block with
//! the same counts (n; c1..cG). He stores a position only if its group-1 subset is
//! numerically the least of its orbit under those symmetries; the other groups are
//! stored whole.
//!
//! **Corners** (Fraser). The two boundary lines of a corner box touch that box only,
//! so swapping them maps the game onto itself: a position with one of them drawn has
//! the value of the position with the other one drawn instead. Only corner-normal
//! subsets are stored (never the second line of a pair without the first), so a
//! corner takes 3 states instead of 4; both lines of a pair must lie in one group.
//!
//! Together: the stored representative of a position is `normalize(s(p))` for the
//! symmetry `s` that makes `normalize(s(group-1 subset))` least (the corner swaps
//! are absorbed by `normalize`, and symmetries map corner pairs onto corner pairs,
//! so this is constant on every class). [`super::layout::Layout::reduced`] turns
//! this into groups that store only representatives; then
//!
//! * a move in groups 2..G keeps the group-1 subset, hence stays canonical: the
//!   child row is the same contiguous run as without the reduction;
//! * a move in group 1 gives a group-1 subset whose least orbit member and symmetry
//!   `s` come from one table lookup ([`GroupSymmetry::canonicalize_first`]); the
//!   other groups' subsets are then mapped by `s` with one per-group permutation
//!   ([`GroupSymmetry::permute_local`]), a permutation of the child row's ranks;
//! * drawing the second line of a corner pair while the first is free is skipped
//!   (it is the same move as drawing the first), so children stay corner-normal.
//!
//! [`symmetric_groups`](super::groups::symmetric_groups) builds groups from unions
//! of line orbits so that every symmetry of the board that fixes the start is
//! usable (Wilson: for 3x5, seven orbits of 4 lines and five of 2, assigned to 6
//! groups of 8,6,6,6,6,6 lines).

use super::board::{Board, Lines};
use super::group_symmetry::GroupSymmetry;
use super::layout::{Layout, MAX_GROUP_LINES};
use super::symmetry::Symmetries;

/// The symmetries of `board` that fix `start` (indices into [`Symmetries::new`]).
fn start_symmetries(syms: &Symmetries, start: Lines) -> Vec<usize> {
    (0..syms.len())
        .filter(|&s| syms.apply(s, start) == start)
        .collect()
}

/// The subgroups of the symmetries that fix `start` (each a list of indices into
/// `syms`, identity first), largest first: smaller subgroups have smaller line
/// orbits, hence allow smaller groups when memory is short.
pub(super) fn start_subgroups(syms: &Symmetries, start: Lines) -> Vec<Vec<usize>> {
    let fixing = start_symmetries(syms, start);
    let compose = |a: usize, b: usize| -> Option<usize> {
        let image: Vec<usize> = syms
            .permutation(b)
            .iter()
            .map(|&l| syms.map_line(a, l))
            .collect();
        (0..syms.len()).find(|&c| syms.permutation(c) == image.as_slice())
    };
    let mut subgroups: Vec<Vec<usize>> = (0..1u32 << fixing.len())
        .filter(|&m| m & 1 == 1)
        .map(|m| {
            (0..fixing.len())
                .filter(|&i| m >> i & 1 == 1)
                .map(|i| fixing[i])
                .collect::<Vec<_>>()
        })
        .filter(|set| {
            set.iter().all(|&a| {
                set.iter()
                    .all(|&b| compose(a, b).is_some_and(|c| set.contains(&c)))
            })
        })
        .collect();
    subgroups.sort_by_key(|set| std::cmp::Reverse(set.len()));
    subgroups
}

/// The orbits of the free lines (those not in `start`) under the board symmetries
/// that fix `start` (only the identity unless `symmetry`), each ascending, largest
/// first, then by their smallest line. With `corners`, orbits holding the two lines
/// of a free corner pair are merged, so a group built from whole orbits keeps every
/// pair together. For 3x5 from the empty board: seven orbits of 4 lines, five of 2.
pub fn line_orbits(board: &Board, start: Lines, symmetry: bool, corners: bool) -> Vec<Vec<usize>> {
    let syms = Symmetries::new(*board);
    let fixing = if symmetry {
        start_symmetries(&syms, start)
    } else {
        vec![0]
    };
    orbits_under(board, &syms, start, &fixing, corners)
}

/// [`line_orbits`] under the symmetries `fixing` (indices into `syms`).
fn orbits_under(
    board: &Board,
    syms: &Symmetries,
    start: Lines,
    fixing: &[usize],
    corners: bool,
) -> Vec<Vec<usize>> {
    let mut seen = start;
    let mut orbits: Vec<Vec<usize>> = Vec::new();
    for l in 0..board.num_lines() {
        if seen >> l & 1 == 1 {
            continue;
        }
        let mut orbit: Vec<usize> = fixing.iter().map(|&s| syms.map_line(s, l)).collect();
        orbit.sort_unstable();
        orbit.dedup();
        for &m in &orbit {
            seen |= 1 << m;
        }
        orbits.push(orbit);
    }
    if corners {
        for (a, b) in free_corner_pairs(board, start) {
            let i = orbits.iter().position(|o| o.contains(&a));
            let j = orbits.iter().position(|o| o.contains(&b));
            if let (Some(i), Some(j)) = (i, j)
                && i != j
            {
                let merged = orbits.remove(i.max(j));
                orbits[i.min(j)].extend(merged);
                orbits[i.min(j)].sort_unstable();
            }
        }
    }
    orbits.sort_by_key(|o| (std::cmp::Reverse(o.len()), o[0]));
    orbits
}

/// The board's corner pairs whose two lines are both free at `start`.
pub fn free_corner_pairs(board: &Board, start: Lines) -> Vec<(usize, usize)> {
    board
        .corner_pairs()
        .into_iter()
        .filter(|&(a, b)| start >> a & 1 == 0 && start >> b & 1 == 0)
        .collect()
}

/// The layout for `groups` storing one representative per class: board
/// symmetries mapping every group onto itself if `symmetry`, corner pairs (both
/// lines free and in one group) if `corners`. Unreduced if neither applies.
pub fn reduced_layout(
    board: &Board,
    start: Lines,
    groups: Vec<Vec<usize>>,
    symmetry: bool,
    corners: bool,
) -> Layout {
    let pairs = if corners {
        free_corner_pairs(board, start)
    } else {
        Vec::new()
    };
    let reduction = GroupSymmetry::new(board, start, &groups, symmetry, &pairs);
    if reduction.reduces() {
        Layout::reduced(start, groups, reduction)
    } else {
        Layout::new(start, groups)
    }
}

/// Sum over the symmetries `fixing` of 2^(cycles of the symmetry on `lines`), i.e.
/// |H| times the number of orbits of subsets of `lines` (Burnside), for a set of
/// lines that every symmetry maps onto itself.
fn subset_orbits_times_order(syms: &Symmetries, fixing: &[usize], lines: &[usize]) -> u64 {
    fixing
        .iter()
        .map(|&s| {
            let mut done = 0u64;
            let mut cycles = 0;
            for &l in lines {
                if done >> l & 1 == 1 {
                    continue;
                }
                cycles += 1;
                let mut m = l;
                while done >> m & 1 == 0 {
                    done |= 1 << m;
                    m = syms.map_line(s, m);
                }
            }
            1u64 << cycles
        })
        .sum()
}

/// Splits the line orbits of [`line_orbits`] into exactly `count` groups of at most
/// [`MAX_GROUP_LINES`] lines, sizes as even as possible (largest orbits first, each
/// into the group with the fewest lines). Group 1 is the group with the best
/// reduction (2^k / number of orbits of its subsets, which is the reduction factor of
/// the whole tablebase), the others follow largest first. `None` if `count` is 0,
/// exceeds the number of orbits, or some group would get more than 16 lines.
pub fn symmetric_split(
    board: &Board,
    start: Lines,
    count: usize,
    symmetry: bool,
    corners: bool,
) -> Option<Vec<Vec<usize>>> {
    let syms = Symmetries::new(*board);
    let fixing = if symmetry {
        start_symmetries(&syms, start)
    } else {
        vec![0]
    };
    split_orbits(board, &syms, start, count, &fixing, corners)
}

/// [`symmetric_split`] under the symmetries `fixing` (indices into `syms`).
pub(super) fn split_orbits(
    board: &Board,
    syms: &Symmetries,
    start: Lines,
    count: usize,
    fixing: &[usize],
    corners: bool,
) -> Option<Vec<Vec<usize>>> {
    let orbits = orbits_under(board, syms, start, fixing, corners);
    if count == 0 || count > orbits.len() {
        return None;
    }
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); count];
    for orbit in orbits {
        let target = (0..count).min_by_key(|&g| groups[g].len()).unwrap_or(0);
        groups[target].extend(orbit);
    }
    if groups.iter().any(|g| g.len() > MAX_GROUP_LINES) {
        return None;
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    // Reduction of group g: 2^k |H| / S_g; compare a/b by cross-multiplying.
    let score: Vec<(u64, u64)> = groups
        .iter()
        .map(|g| (1u64 << g.len(), subset_orbits_times_order(syms, fixing, g)))
        .collect();
    let best = (0..count)
        .max_by(|&a, &b| {
            let (ka, sa) = score[a];
            let (kb, sb) = score[b];
            (ka as u128 * sb as u128)
                .cmp(&(kb as u128 * sa as u128))
                .then(groups[a].len().cmp(&groups[b].len()))
                .then(b.cmp(&a))
        })
        .unwrap_or(0);
    let first = groups.remove(best);
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    groups.insert(0, first);
    Some(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(spec: &str) -> Board {
        spec.parse().unwrap()
    }

    fn sym_of(b: &Board, groups: Vec<Vec<usize>>, start: Lines) -> GroupSymmetry {
        GroupSymmetry::new(b, start, &groups, true, &[])
    }

    #[test]
    fn wilson_3x5_orbits_and_groups() {
        let b = board("3x5");
        let sizes: Vec<usize> = line_orbits(&b, 0, true, false)
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(sizes, [4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2]);
        let groups = symmetric_split(&b, 0, 6, true, false).unwrap();
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        assert_eq!(sizes, [8, 6, 6, 6, 6, 6]);
        assert_eq!(sym_of(&b, groups.clone(), 0).len(), 4);
        // Group 1 = two free orbits of 4: (256 + 3 * 16) / 4 = 76 canonical subsets.
        let layout = reduced_layout(&b, 0, groups, true, false);
        let total: u64 = (0..=8).map(|c| layout.groups[0].radix(c)).sum();
        assert_eq!(total, 76);
        // With corners the two lines of each corner pair share an orbit (and group).
        let orbits = line_orbits(&b, 0, true, true);
        for (a, c) in b.corner_pairs() {
            assert!(orbits.iter().any(|o| o.contains(&a) && o.contains(&c)));
        }
    }

    #[test]
    fn square_of_four_lines() {
        // 1x1: the subsets of a square's sides up to the 8 symmetries: sizes 0..4 have
        // 1, 1, 2 (adjacent, opposite), 1, 1 classes.
        let b = board("1x1");
        let layout = reduced_layout(&b, 0, vec![(0..4).collect()], true, false);
        assert_eq!(layout.reduction.as_ref().map(|r| r.len()), Some(8));
        let counts: Vec<u64> = (0..=4).map(|c| layout.groups[0].radix(c)).collect();
        assert_eq!(counts, [1, 1, 2, 1, 1]);
        assert_eq!(layout.groups[0].radix(5), 0);
        assert_eq!(layout.layer_size(2), 2);
    }

    #[test]
    fn corners_keep_three_states_of_four() {
        // 2x2 without symmetry: four corner pairs, every line in one group.
        let b = board("2x2");
        let layout = reduced_layout(&b, 0, vec![(0..12).collect()], false, true);
        let stored: u64 = (0..=12).map(|n| layout.layer_size(n)).sum();
        assert_eq!(stored, 81 * 16);
        // A position with a corner's second line only is stored as its first line.
        let (a, c) = b.corner_pairs()[0];
        assert_eq!(layout.canonical(1 << c), 1 << a);
        assert_eq!(layout.locate(1 << c), layout.locate(1 << a));
    }

    /// 4x4 in three symmetric groups, with or without corners: the groups and the
    /// group symmetry.
    fn symmetric_4x4(corners: bool) -> (Vec<Vec<usize>>, GroupSymmetry) {
        let b = board("4x4");
        let groups = symmetric_split(&b, 0, 3, true, corners).unwrap();
        let pairs = if corners {
            b.corner_pairs()
        } else {
            Vec::new()
        };
        let sym = GroupSymmetry::new(&b, 0, &groups, true, &pairs);
        (groups, sym)
    }

    #[test]
    fn least_images_one_by_one_agree_with_the_table() {
        for corners in [false, true] {
            let (groups, sym) = symmetric_4x4(corners);
            let table = sym.clone();
            // Past the calls computed one by one, `table` answers from its table.
            for local in 0..1u32 << groups[0].len() {
                table.canonicalize_first(local);
            }
            for local in 0..1u32 << groups[0].len() {
                assert_eq!(
                    sym.least_image(local),
                    table.canonicalize_first(local),
                    "mask {local:#x}"
                );
            }
        }
    }

    #[test]
    fn local_permutations_agree_with_global_application() {
        let b = board("4x4");
        for corners in [false, true] {
            let (groups, sym) = symmetric_4x4(corners);
            let raw = Layout::new(0, groups);
            assert_eq!(sym.len(), 8);
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let p = x & b.all_lines();
                for s in 0..sym.len() {
                    let image = sym.normalize(sym.apply(s, p));
                    for (g, group) in raw.groups.iter().enumerate() {
                        let local = sym.permute_local(g, s, group.local_of(p));
                        assert_eq!(local, group.local_of(image), "group {g} sym {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn locate_and_position_at_are_inverse_on_stored_positions() {
        let b = board("3x3");
        for corners in [false, true] {
            let groups = symmetric_split(&b, 0, 2, true, corners).unwrap();
            let layout = reduced_layout(&b, 0, groups, true, corners);
            for n in 0..=b.num_lines() {
                for counts in layout.blocks_of_layer(n) {
                    let size = layout.block_size(&counts);
                    for index in (0..size).step_by(97) {
                        let p = layout.position_at(&counts, index);
                        assert_eq!(p.count_ones() as usize, n);
                        assert_eq!(layout.canonical(p), p);
                        assert_eq!(layout.locate(p), (counts.clone(), index));
                        let members = layout.class_members(p);
                        assert!(members.contains(&p));
                        for q in members {
                            assert_eq!(layout.canonical(q), p);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn layer_size_is_the_sum_over_blocks() {
        for (spec, count) in [("2x2", 2), ("3x3", 3), ("3x5", 6), ("4x4", 4)] {
            let b = board(spec);
            for start in [0, b.perimeter(), b.top_left_perimeter()] {
                for corners in [false, true] {
                    let Some(groups) = symmetric_split(&b, start, count, true, corners) else {
                        continue;
                    };
                    let layout = reduced_layout(&b, start, groups, true, corners);
                    for n in 0..=b.num_lines() + 1 {
                        let walk: u64 = layout
                            .blocks_of_layer(n)
                            .iter()
                            .map(|c| layout.block_size(c))
                            .sum();
                        assert_eq!(layout.layer_size(n), walk, "{spec} {n}");
                    }
                }
            }
        }
    }
}
