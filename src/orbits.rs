//! Symmetry reduction of the tablebase in David Wilson's style (DESIGN.md section 3).
//!
//! Wilson uses only the board symmetries that map every line group onto itself (as a
//! set of lines), so a transformed position stays in a block with the same counts
//! (n; c1..cG). He stores a position only if its group-1 subset is numerically the
//! least of its orbit under those symmetries; the other groups are stored whole.
//!
//! * A stored block (n; c1..cG) holds `canonical_first(c1).len() * radix(c2) * ..`
//!   positions; its index is the usual mixed-radix number except that the group-1
//!   digit is the rank of the group-1 subset among the *canonical* subsets of size c1
//!   ([`GroupSymmetry::canonical_rank`]).
//! * A move in groups 2..G keeps the group-1 subset, hence stays canonical: no
//!   transformation is needed and the child row is the same contiguous run as before.
//! * A move in group 1 gives a group-1 subset whose least orbit member and symmetry
//!   `s` come from one table lookup ([`GroupSymmetry::canonicalize_first`]); the
//!   other groups' subsets are then mapped by `s` with one per-group permutation
//!   ([`GroupSymmetry::permute_local`]). See [`GroupSymmetry::locate`].
//!
//! [`symmetric_groups`] builds groups from unions of line orbits so that every
//! symmetry of the board that fixes the start is usable (Wilson: for 3x5, seven
//! orbits of 4 lines and five of 2, assigned to 6 groups of 8,6,6,6,6,6 lines).

use crate::board::{Board, Lines};
use crate::layout::{Counts, Layout, MAX_GROUP_LINES};
use crate::search::symmetry::Symmetries;
use crate::spec::MAX_GROUPS;

/// Marks a group-1 subset that is not the least of its orbit in the rank table.
const NOT_CANONICAL: u32 = u32::MAX;

/// The board symmetries usable with a given layout: those that map the start's lines
/// onto themselves and every group onto itself (as a set of lines), with the tables
/// that canonicalise group-1 subsets and permute every group's local masks.
///
/// Symmetries are numbered `0..len()`, symmetry 0 being the identity.
#[derive(Clone)]
pub struct GroupSymmetry {
    /// All symmetries of the board (4 or 8).
    board_syms: Symmetries,
    /// Index into `board_syms` of each kept symmetry (`kept[0] == 0`, the identity).
    kept: Vec<usize>,
    /// The layout's start and group masks (checked in debug builds).
    start: Lines,
    masks: Vec<Lines>,
    /// `local_tables[((g * kept + s) * 2 + j) * 256 + v]`: image under symmetry `s`
    /// of the local bits `8j..8j+8` of group `g` selected by `v`.
    local_tables: Vec<u32>,
    /// For each group-1 local mask: the least member of its orbit.
    least: Vec<u16>,
    /// For each group-1 local mask: the lowest symmetry mapping it to `least`.
    to_least: Vec<u8>,
    /// For each group-1 local mask: its rank among the canonical subsets of its size,
    /// or [`NOT_CANONICAL`].
    rank: Vec<u32>,
    /// `canonical[c]`: the canonical group-1 local masks with `c` lines, ascending.
    canonical: Vec<Vec<u32>>,
}

impl std::fmt::Debug for GroupSymmetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupSymmetry")
            .field("kept", &self.kept)
            .field(
                "canonical_first",
                &self.canonical.iter().map(Vec::len).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl GroupSymmetry {
    /// Finds the symmetries of `board` that fix `layout.start` and every group of
    /// `layout`, and builds the lookup tables (group 1 is canonicalised through a
    /// full table of `2^k` entries, `k <= 16` its number of lines).
    pub fn new(board: &Board, layout: &Layout) -> GroupSymmetry {
        let board_syms = Symmetries::new(*board);
        let masks: Vec<Lines> = layout.groups.iter().map(|g| g.mask()).collect();
        let kept: Vec<usize> = (0..board_syms.len())
            .filter(|&s| {
                board_syms.apply(s, layout.start) == layout.start
                    && masks.iter().all(|&m| board_syms.apply(s, m) == m)
            })
            .collect();
        debug_assert_eq!(kept.first(), Some(&0), "the identity is always kept");
        let mut local_tables = vec![0u32; layout.groups.len() * kept.len() * 2 * 256];
        for (g, group) in layout.groups.iter().enumerate() {
            let mut local_of_line = [usize::MAX; 64];
            for (i, &l) in group.lines.iter().enumerate() {
                local_of_line[l] = i;
            }
            for (s, &bs) in kept.iter().enumerate() {
                let image: Vec<usize> = group
                    .lines
                    .iter()
                    .map(|&l| local_of_line[board_syms.map_line(bs, l)])
                    .collect();
                for j in 0..2 {
                    let base = ((g * kept.len() + s) * 2 + j) * 256;
                    for v in 0..256usize {
                        local_tables[base + v] = (0..8)
                            .filter(|&bit| v >> bit & 1 == 1)
                            .filter_map(|bit| image.get(8 * j + bit))
                            .fold(0, |m, &i| m | 1 << i);
                    }
                }
            }
        }
        let mut sym = GroupSymmetry {
            board_syms,
            kept,
            start: layout.start,
            masks,
            local_tables,
            least: Vec::new(),
            to_least: Vec::new(),
            rank: Vec::new(),
            canonical: Vec::new(),
        };
        let k = layout.groups.first().map_or(0, |g| g.len());
        debug_assert!(k <= MAX_GROUP_LINES);
        let mut canonical = vec![Vec::new(); k + 1];
        let mut least = Vec::with_capacity(1 << k);
        let mut to_least = Vec::with_capacity(1 << k);
        let mut rank = Vec::with_capacity(1 << k);
        for local in 0..1u32 << k {
            let (mut best, mut best_s) = (local, 0);
            if !layout.groups.is_empty() {
                for s in 1..sym.kept.len() {
                    let image = sym.permute_local(0, s, local);
                    if image < best {
                        best = image;
                        best_s = s;
                    }
                }
            }
            least.push(best as u16);
            to_least.push(best_s as u8);
            if best == local {
                let list = &mut canonical[local.count_ones() as usize];
                rank.push(list.len() as u32);
                list.push(local);
            } else {
                rank.push(NOT_CANONICAL);
            }
        }
        sym.least = least;
        sym.to_least = to_least;
        sym.rank = rank;
        sym.canonical = canonical;
        sym
    }

    /// Number of kept symmetries, the identity included (symmetry 0).
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Always false: the identity is always kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The index in [`Symmetries::new`]`(board)` of kept symmetry `s`.
    pub fn board_symmetry(&self, s: usize) -> usize {
        self.kept[s]
    }

    /// Whether `layout` has the start and groups this was built for.
    pub fn matches(&self, layout: &Layout) -> bool {
        layout.start == self.start
            && layout.groups.len() == self.masks.len()
            && layout
                .groups
                .iter()
                .zip(&self.masks)
                .all(|(g, &m)| g.mask() == m)
    }

    /// The image of `position` (global lines) under kept symmetry `s`.
    #[inline]
    pub fn apply(&self, s: usize, position: Lines) -> Lines {
        self.board_syms.apply(self.kept[s], position)
    }

    /// The local-mask permutation of group `g` under kept symmetry `s`: the local
    /// mask of the image of the group's lines selected by `local` (two byte lookups).
    #[inline]
    pub fn permute_local(&self, g: usize, s: usize, local: u32) -> u32 {
        let base = (g * self.kept.len() + s) * 512;
        self.local_tables[base + (local & 0xff) as usize]
            | self.local_tables[base + 256 + (local >> 8 & 0xff) as usize]
    }

    /// For a group-1 local mask: the least local mask of its orbit under the kept
    /// symmetries, and the lowest symmetry that maps `local` onto it (0 exactly when
    /// `local` is canonical, i.e. is its own least member).
    #[inline]
    pub fn canonicalize_first(&self, local: u32) -> (u32, usize) {
        (
            self.least[local as usize] as u32,
            self.to_least[local as usize] as usize,
        )
    }

    /// Whether a group-1 local mask is the least of its orbit (so it is stored).
    #[inline]
    pub fn is_canonical_first(&self, local: u32) -> bool {
        self.rank[local as usize] != NOT_CANONICAL
    }

    /// The canonical group-1 local masks with `count` lines, ascending: the position
    /// of a mask in this list is its group-1 digit in a stored block, and the list's
    /// length is that digit's radix.
    pub fn canonical_first(&self, count: usize) -> &[u32] {
        self.canonical.get(count).map_or(&[], Vec::as_slice)
    }

    /// The rank of a canonical group-1 local mask among the canonical masks of its
    /// size (its index in [`GroupSymmetry::canonical_first`]); `None` if not
    /// canonical.
    #[inline]
    pub fn canonical_rank(&self, local: u32) -> Option<u32> {
        Some(self.rank[local as usize]).filter(|&r| r != NOT_CANONICAL)
    }

    /// Number of positions stored for block `counts`: canonical group-1 subsets of
    /// size c1 times all subsets of the other groups.
    pub fn stored_block_size(&self, layout: &Layout, counts: &[u8]) -> u64 {
        debug_assert!(self.matches(layout));
        let Some((&c1, rest)) = counts.split_first() else {
            return 1;
        };
        let others: u64 = layout.groups[1..]
            .iter()
            .zip(rest)
            .map(|(g, &c)| g.radix(c as usize))
            .product();
        self.canonical_first(c1 as usize).len() as u64 * others
    }

    /// Positions stored for layer `n` with the reduction (canonical group-1 subsets
    /// times all subsets of the other groups, summed over the blocks of the layer).
    ///
    /// Computed as a coefficient of the product of the group-1 polynomial
    /// `sum_c |canonical_first(c)| x^c` and `(1 + x)^k` for every other group of `k`
    /// lines, so it costs no walk over the blocks.
    pub fn stored_layer_size(&self, layout: &Layout, n: usize) -> u64 {
        debug_assert!(self.matches(layout));
        let Some(drawn) = n.checked_sub(layout.start_lines()) else {
            return 0;
        };
        let mut poly: Vec<u128> = match layout.groups.first() {
            Some(first) => (0..=first.len())
                .map(|c| self.canonical_first(c).len() as u128)
                .collect(),
            None => vec![1],
        };
        let rest: usize = layout.groups.iter().skip(1).map(|g| g.len()).sum();
        let first_len = poly.len();
        poly.resize(first_len + rest, 0);
        // Multiply by (1 + x) once per line of groups 2..G.
        for len in first_len..first_len + rest {
            for i in (1..=len).rev() {
                poly[i] += poly[i - 1];
            }
        }
        poly.get(drawn)
            .map_or(0, |&x| x.min(u64::MAX as u128) as u64)
    }

    /// Bytes of the largest stored block plus its stored child blocks (one byte per
    /// position): [`crate::spec::peak_block_bytes`] with the reduction.
    ///
    /// Exact, without visiting every block: with the other counts fixed, block +
    /// children is `u * C(k, c) + v * C(k, c + 1)` (u, v >= 0) in the count `c` of a
    /// group g >= 2 of k lines, which is largest for some c in
    /// `ceil(k/2) - 1 ..= floor(k/2)` (both binomials are non-decreasing below that
    /// range and non-increasing above it). So only those counts are tried for groups
    /// 2..G (one or two each), and every count for group 1.
    pub fn stored_peak_block_bytes(&self, layout: &Layout) -> u64 {
        debug_assert!(self.matches(layout));
        let Some((first, rest)) = layout.groups.split_first() else {
            return 1;
        };
        let radix = |g: usize, c: usize| -> u128 {
            if g == 0 {
                self.canonical_first(c).len() as u128
            } else {
                layout.groups[g].radix(c) as u128
            }
        };
        let mut candidates: Vec<Vec<usize>> = vec![(0..=first.len()).collect()];
        for g in rest {
            let k = g.len();
            candidates.push((k.div_ceil(2).saturating_sub(1)..=k / 2).collect());
        }
        let mut choice = vec![0usize; candidates.len()];
        let mut peak = 0u128;
        loop {
            let counts: Vec<usize> = choice
                .iter()
                .zip(&candidates)
                .map(|(&i, list)| list[i])
                .collect();
            let block: u128 = counts
                .iter()
                .enumerate()
                .map(|(g, &c)| radix(g, c))
                .product();
            let children: u128 = (0..counts.len())
                .filter(|&g| counts[g] < layout.groups[g].len())
                .map(|g| {
                    counts
                        .iter()
                        .enumerate()
                        .map(|(h, &c)| radix(h, c + usize::from(h == g)))
                        .product::<u128>()
                })
                .sum();
            peak = peak.max(block + children);
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

    /// The stored representative of `position`: its image under the symmetry that
    /// makes its group-1 subset canonical, and that symmetry.
    pub fn canonical_position(&self, layout: &Layout, position: Lines) -> (Lines, usize) {
        debug_assert!(self.matches(layout));
        let Some(first) = layout.groups.first() else {
            return (position, 0);
        };
        let (_, s) = self.canonicalize_first(first.local_of(position));
        (self.apply(s, position), s)
    }

    /// Block counts and stored index of the representative of `position` (which
    /// must contain the start's lines): one table lookup canonicalises group 1, and
    /// each other group is mapped by one local permutation, as the builder does for
    /// a move in group 1. Equal to locating
    /// [`GroupSymmetry::canonical_position`] in the reduced block.
    pub fn locate(&self, layout: &Layout, position: Lines) -> (Counts, u64) {
        debug_assert!(self.matches(layout));
        let Some((first, rest)) = layout.groups.split_first() else {
            return (Vec::new(), 0);
        };
        let (least, s) = self.canonicalize_first(first.local_of(position));
        let mut counts = Vec::with_capacity(layout.groups.len());
        counts.push(least.count_ones() as u8);
        let mut index = self.rank[least as usize] as u64;
        for (g, group) in rest.iter().enumerate() {
            let mut local = group.local_of(position);
            if s != 0 {
                local = self.permute_local(g + 1, s, local);
            }
            let c = local.count_ones() as usize;
            counts.push(c as u8);
            index = index * group.radix(c) + group.rank(local) as u64;
        }
        (counts, index)
    }

    /// The stored position at `index` of block `counts` (inverse of
    /// [`GroupSymmetry::locate`] on stored positions).
    pub fn position_at(&self, layout: &Layout, counts: &[u8], mut index: u64) -> Lines {
        debug_assert!(self.matches(layout));
        let mut position = layout.start;
        let Some((first, rest)) = layout.groups.split_first() else {
            return position;
        };
        for (g, &c) in rest.iter().zip(&counts[1..]).rev() {
            let radix = g.radix(c as usize);
            position |= g.globals(c as usize)[(index % radix) as usize];
            index /= radix;
        }
        let local = self.canonical_first(counts[0] as usize)[index as usize];
        position | first.globals(counts[0] as usize)[first.rank(local) as usize]
    }
}

/// The symmetries of `board` that fix `start` (indices into [`Symmetries::new`]).
fn start_symmetries(syms: &Symmetries, start: Lines) -> Vec<usize> {
    (0..syms.len())
        .filter(|&s| syms.apply(s, start) == start)
        .collect()
}

/// The orbits of the free lines (those not in `start`) under the board symmetries
/// that fix `start`: each orbit ascending, orbits largest first, then by their
/// smallest line. For 3x5 from the empty board: seven orbits of 4 lines, five of 2.
pub fn line_orbits(board: &Board, start: Lines) -> Vec<Vec<usize>> {
    let syms = Symmetries::new(*board);
    let fixing = start_symmetries(&syms, start);
    let mut seen = start;
    let mut orbits = Vec::new();
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
    orbits.sort_by_key(|o| std::cmp::Reverse(o.len()));
    orbits
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
pub fn symmetric_split(board: &Board, start: Lines, count: usize) -> Option<Vec<Vec<usize>>> {
    let orbits = line_orbits(board, start);
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
    let syms = Symmetries::new(*board);
    let fixing = start_symmetries(&syms, start);
    // Reduction of group g: 2^k |H| / S_g; compare a/b by cross-multiplying.
    let score: Vec<(u64, u64)> = groups
        .iter()
        .map(|g| {
            (
                1u64 << g.len(),
                subset_orbits_times_order(&syms, &fixing, g),
            )
        })
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

/// Line groups built from unions of line orbits under the board symmetries that fix
/// `start` (see [`symmetric_split`]), so that every such symmetry maps every group
/// onto itself; at most 16 lines per group, sizes as even as possible. The group
/// count is chosen like [`crate::spec::auto_groups`]: the fewest groups whose
/// largest block plus its children (stored sizes, i.e. with the reduction) fits in a
/// quarter of `memory`, or the most groups tried if none does.
pub fn symmetric_groups(board: &Board, start: Lines, memory: u64) -> Vec<Vec<usize>> {
    let free = (board.all_lines() & !start).count_ones() as usize;
    if free == 0 {
        return vec![Vec::new()];
    }
    let mut best = None;
    for count in free.div_ceil(MAX_GROUP_LINES).max(1)..=MAX_GROUPS {
        let Some(groups) = symmetric_split(board, start, count) else {
            continue;
        };
        let layout = Layout::new(start, groups.clone());
        let peak = GroupSymmetry::new(board, &layout).stored_peak_block_bytes(&layout);
        best = Some(groups);
        if peak <= memory / 4 {
            break;
        }
    }
    best.expect("some split into at most 16 groups exists")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(spec: &str) -> Board {
        spec.parse().unwrap()
    }

    #[test]
    fn wilson_3x5_orbits_and_groups() {
        let b = board("3x5");
        let sizes: Vec<usize> = line_orbits(&b, 0).iter().map(Vec::len).collect();
        assert_eq!(sizes, [4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2]);
        let groups = symmetric_split(&b, 0, 6).unwrap();
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        assert_eq!(sizes, [8, 6, 6, 6, 6, 6]);
        let layout = Layout::new(0, groups);
        let sym = GroupSymmetry::new(&b, &layout);
        assert_eq!(sym.len(), 4);
        // Group 1 = two free orbits of 4: (256 + 3 * 16) / 4 = 76 canonical subsets.
        let total: usize = (0..=8).map(|c| sym.canonical_first(c).len()).sum();
        assert_eq!(total, 76);
    }

    #[test]
    fn square_of_four_lines() {
        // 1x1: the subsets of a square's sides up to the 8 symmetries: sizes 0..4 have
        // 1, 1, 2 (adjacent, opposite), 1, 1 classes.
        let b = board("1x1");
        let layout = Layout::new(0, vec![(0..4).collect()]);
        let sym = GroupSymmetry::new(&b, &layout);
        assert_eq!(sym.len(), 8);
        let counts: Vec<usize> = (0..=4).map(|c| sym.canonical_first(c).len()).collect();
        assert_eq!(counts, [1, 1, 2, 1, 1]);
        assert_eq!(sym.canonical_first(5), &[] as &[u32]);
        assert_eq!(sym.stored_layer_size(&layout, 2), 2);
    }

    #[test]
    fn local_permutations_agree_with_global_application() {
        let b = board("4x4");
        let layout = Layout::new(0, symmetric_split(&b, 0, 3).unwrap());
        let sym = GroupSymmetry::new(&b, &layout);
        assert_eq!(sym.len(), 8);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = x & b.all_lines();
            for s in 0..sym.len() {
                let image = sym.apply(s, p);
                for (g, group) in layout.groups.iter().enumerate() {
                    let local = sym.permute_local(g, s, group.local_of(p));
                    assert_eq!(local, group.local_of(image), "group {g} sym {s}");
                }
            }
        }
    }

    #[test]
    fn symmetries_breaking_a_group_are_dropped() {
        let b = board("2x2");
        // Consecutive halves (h lines, v lines) are kept by the 4 symmetries that do
        // not swap rows and columns.
        let layout = Layout::with_sizes(b.all_lines(), 0, &[6, 6]);
        assert_eq!(GroupSymmetry::new(&b, &layout).len(), 4);
        // Splitting the top row from the bottom keeps only the left-right mirror.
        let layout = Layout::with_sizes(b.all_lines(), 0, &[2, 10]);
        assert_eq!(GroupSymmetry::new(&b, &layout).len(), 2);
        // The Icelandic start keeps the identity and the transpose.
        let start = b.top_left_perimeter();
        let layout = Layout::new(start, symmetric_groups(&b, start, 1 << 30));
        assert_eq!(GroupSymmetry::new(&b, &layout).len(), 2);
    }

    #[test]
    fn locate_and_position_at_are_inverse_on_stored_positions() {
        let b = board("3x3");
        let layout = Layout::new(0, symmetric_split(&b, 0, 2).unwrap());
        let sym = GroupSymmetry::new(&b, &layout);
        for n in 0..=b.num_lines() {
            for counts in layout.blocks_of_layer(n) {
                let size = sym.stored_block_size(&layout, &counts);
                for index in (0..size).step_by(97) {
                    let p = sym.position_at(&layout, &counts, index);
                    assert_eq!(p.count_ones() as usize, n);
                    assert!(sym.is_canonical_first(layout.groups[0].local_of(p)));
                    assert_eq!(sym.locate(&layout, p), (counts.clone(), index));
                }
            }
        }
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
            let b = board(spec);
            for layout in [
                Layout::new(start, symmetric_split(&b, start, count).unwrap()),
                Layout::new(
                    start,
                    crate::spec::split_even(&(0..b.num_lines()).collect::<Vec<_>>(), count),
                ),
            ] {
                let sym = GroupSymmetry::new(&b, &layout);
                let walk = (0..=b.num_lines())
                    .flat_map(|n| layout.blocks_of_layer(n))
                    .map(|counts| {
                        let children: u64 = (0..counts.len())
                            .filter(|&g| (counts[g] as usize) < layout.groups[g].len())
                            .map(|g| {
                                let mut c = counts.clone();
                                c[g] += 1;
                                sym.stored_block_size(&layout, &c)
                            })
                            .sum();
                        sym.stored_block_size(&layout, &counts) + children
                    })
                    .max()
                    .unwrap();
                assert_eq!(sym.stored_peak_block_bytes(&layout), walk, "{spec} {count}");
                if sym.len() == 1 {
                    assert_eq!(walk, crate::spec::peak_block_bytes(&layout));
                }
            }
        }
    }

    #[test]
    fn stored_layer_size_is_the_sum_over_blocks() {
        for (spec, count) in [("2x2", 2), ("3x3", 3), ("3x5", 6), ("4x4", 4)] {
            let b = board(spec);
            for start in [0, b.perimeter(), b.top_left_perimeter()] {
                let Some(groups) = symmetric_split(&b, start, count) else {
                    continue;
                };
                let layout = Layout::new(start, groups);
                let sym = GroupSymmetry::new(&b, &layout);
                for n in 0..=b.num_lines() + 1 {
                    let walk: u64 = layout
                        .blocks_of_layer(n)
                        .iter()
                        .map(|c| sym.stored_block_size(&layout, c))
                        .sum();
                    assert_eq!(sym.stored_layer_size(&layout, n), walk, "{spec} {n}");
                }
            }
        }
    }
}
