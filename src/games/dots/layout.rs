//! How positions are laid out in blocks: line groups, per-group subset ranks
//! (combinatorial number system) and the mixed-radix index of a position inside its
//! block (n; c1..cG).
//!
//! Only the lines that are free at the start position are grouped; the start's lines
//! are drawn in every position of the tablebase. Group 1 is the most significant
//! digit of a block index, so for a fixed group-1 subset, all children along a move in
//! a later group form a contiguous run (docs/FORMAT.md §9.8).

use super::board::Lines;
use super::group_symmetry::GroupSymmetry;
pub use super::group_symmetry::MAX_GROUP_LINES;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// Most line groups a layout may have (block keys pack 8 bits per group).
pub const MAX_GROUPS: usize = 16;

/// Rank-table entry of a subset that a reduced group does not store.
pub const NOT_STORED: u32 = u32::MAX;

/// Binomial coefficient C(n, k) for small n (exact in u64 up to n = 64).
pub fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    (0..k).fold(1u128, |acc, i| acc * (n - i) as u128 / (i as u128 + 1)) as u64
}

/// One line group: its lines and the rank/unrank tables of its stored subsets.
///
/// A plain group stores every subset of its lines. A reduced group (see
/// [`Layout::reduced`]) stores only some of them: corner-normal subsets, and for
/// group 1 with symmetry only the least member of each orbit. Ranks count stored
/// subsets only, so a block's index stays a mixed-radix number.
#[derive(Debug, Clone)]
pub struct Group {
    /// Global line indices, ascending; local bit `i` is line `lines[i]`.
    pub lines: Vec<usize>,
    /// `rank[local_mask]` = 1 + rank of that subset among stored subsets of the
    /// same size, or 0 (not stored, or its size's class not built yet). Sixteen bits
    /// suffice: a group has at most [`MAX_GROUP_LINES`] = 16 lines, so at most
    /// C(16, 8) = 12,870 subsets of one size. Shared by clones.
    rank: Arc<[AtomicU16]>,
    /// `classes[c][r]` = local mask of the stored subset of size `c` with rank `r`;
    /// each size is built (with its ranks) when first used, so that a cold probe
    /// near the start builds a few small sizes, not all 2^16 subsets.
    classes: Arc<[OnceLock<Vec<u32>>]>,
    /// Which subsets are stored.
    stored: StoredSubsets,
    /// `global[c][r]` = the same subset as a global line mask, built when first
    /// asked for (builds and exports unrank; a cold probe only ranks).
    global: OnceLock<Vec<Vec<Lines>>>,
    /// `gather[j][b]`: the local bits of the group's lines found in byte `j` of a
    /// position equal to `b` (a portable stand-in for BMI2 `pext`).
    gather: Vec<[u32; 256]>,
    /// Corner pairs inside the group as local bits `(a, b)`: a stored subset never
    /// holds `b` without `a`, and drawing `b` while `a` is free is the same move as
    /// drawing `a` (the two lines touch the same single box).
    corners: Vec<(u32, u32)>,
}

impl Group {
    /// Builds the tables for a group of lines (at most [`MAX_GROUP_LINES`]) that
    /// stores every subset.
    pub fn new(lines: Vec<usize>) -> Group {
        Group::reduced(lines, &[], |_| true)
    }

    /// A group storing only the subsets (local masks over the ascending `lines`)
    /// for which `stored` holds; `corners` are the group's corner pairs as global
    /// lines (lower line first), which `stored` must already respect.
    pub fn reduced(
        mut lines: Vec<usize>,
        corners: &[(usize, usize)],
        stored: impl Fn(u32) -> bool + Send + Sync + 'static,
    ) -> Group {
        lines.sort_unstable();
        let k = lines.len();
        assert!(k <= MAX_GROUP_LINES, "group of {k} lines is too large");
        // Ranks + 1 fit in 16 bits while groups have at most 16 lines.
        const _: () = assert!(MAX_GROUP_LINES <= 16);
        let rank = (0..1usize << k).map(|_| AtomicU16::new(0)).collect();
        let classes = (0..=k).map(|_| OnceLock::new()).collect();
        let bit = |line: usize| lines.iter().position(|&l| l == line).map(|i| i as u32);
        let corners = corners
            .iter()
            .filter_map(|&(a, b)| Some((bit(a)?, bit(b)?)))
            .collect();
        let gather = (0..8)
            .map(|j| {
                let mut table = [0u32; 256];
                for (b, entry) in table.iter_mut().enumerate() {
                    *entry = lines
                        .iter()
                        .enumerate()
                        .filter(|&(_, &l)| l / 8 == j && b >> (l % 8) & 1 == 1)
                        .fold(0, |m, (i, _)| m | 1 << i);
                }
                table
            })
            .collect();
        Group {
            lines,
            rank,
            classes,
            stored: StoredSubsets(Arc::new(stored)),
            global: OnceLock::new(),
            gather,
            corners,
        }
    }

    /// The stored subsets of size `count` by rank, their ranks recorded: built on
    /// first use. Colex order within a size is ascending numeric order of the local
    /// masks, which is exactly the order of the combinatorial number system.
    #[inline]
    fn class(&self, count: usize) -> &[u32] {
        self.classes[count].get_or_init(|| {
            let mut masks = Vec::with_capacity(binomial(self.len(), count) as usize);
            for mask in masks_of_size(self.len(), count) {
                if (self.stored.0)(mask) {
                    masks.push(mask);
                    self.rank[mask as usize].store(masks.len() as u16, Ordering::Relaxed);
                }
            }
            masks
        })
    }

    /// The local bits that are moves from stored subset `local`: its free lines,
    /// except the second line of a corner pair whose first line is free (the same
    /// move as drawing the first).
    #[inline]
    pub fn moves(&self, local: u32) -> u32 {
        let full = ((1u64 << self.len()) - 1) as u32;
        self.corners
            .iter()
            .filter(|&&(a, _)| local >> a & 1 == 0)
            .fold(!local & full, |m, &(_, b)| m & !(1 << b))
    }

    /// Number of lines in the group.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the group has no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Number of stored subsets with `count` lines: the radix of this group's digit.
    #[inline]
    pub fn radix(&self, count: usize) -> u64 {
        if count < self.classes.len() {
            self.class(count).len() as u64
        } else {
            0
        }
    }

    /// Rank of a stored local subset mask ([`NOT_STORED`] for others).
    #[inline]
    pub fn rank(&self, local_mask: u32) -> u32 {
        self.class(local_mask.count_ones() as usize);
        self.built_rank(local_mask)
    }

    /// [`Group::rank`] for a mask whose size's subsets are built already (by
    /// [`Group::radix`], [`Group::locals`] or [`Group::rank`] of that size): no check,
    /// for the hot loops that asked for the size first.
    #[inline]
    fn built_rank(&self, local_mask: u32) -> u32 {
        debug_assert!(
            self.classes[local_mask.count_ones() as usize]
                .get()
                .is_some()
        );
        // 0 - 1 wraps to NOT_STORED.
        u32::from(self.rank[local_mask as usize].load(Ordering::Relaxed)).wrapping_sub(1)
    }

    /// Local masks of all stored subsets of size `count`, by rank.
    #[inline]
    pub fn locals(&self, count: usize) -> &[u32] {
        self.class(count)
    }

    /// Builds the tables of [`Group::globals`] now (they are otherwise built when
    /// first asked for).
    pub fn prepare_unranking(&self) {
        self.global.get_or_init(|| self.global_tables());
    }

    /// Global line masks of all stored subsets of size `count`, by rank.
    #[inline]
    pub fn globals(&self, count: usize) -> &[Lines] {
        &self.global.get_or_init(|| self.global_tables())[count]
    }

    /// [`Group::globals`] for every size: the local masks scattered a byte at a
    /// time (bit by bit was a quarter of a cold probe when it built these).
    fn global_tables(&self) -> Vec<Vec<Lines>> {
        let scatter: Vec<[Lines; 256]> = (0..self.lines.len().div_ceil(8))
            .map(|j| std::array::from_fn(|b| to_global(&self.lines, (b as u32) << (8 * j))))
            .collect();
        (0..self.classes.len())
            .map(|count| self.class(count))
            .map(|subsets| {
                subsets
                    .iter()
                    .map(|&m| {
                        scatter
                            .iter()
                            .enumerate()
                            .fold(0, |g, (j, table)| g | table[(m >> (8 * j)) as usize & 255])
                    })
                    .collect()
            })
            .collect()
    }

    /// Mask of all the group's lines.
    pub fn mask(&self) -> Lines {
        to_global(&self.lines, ((1u64 << self.len()) - 1) as u32)
    }

    /// The local mask of the group's lines within a global position.
    #[inline]
    pub fn local_of(&self, position: Lines) -> u32 {
        position
            .to_le_bytes()
            .iter()
            .zip(&self.gather)
            .fold(0, |m, (&b, table)| m | table[b as usize])
    }
}

/// Which local masks a group stores (shared by clones of the group).
#[derive(Clone)]
struct StoredSubsets(Arc<dyn Fn(u32) -> bool + Send + Sync>);

impl std::fmt::Debug for StoredSubsets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoredSubsets")
    }
}

/// The masks of `count` bits below bit `k`, ascending (Gosper's hack).
fn masks_of_size(k: usize, count: usize) -> impl Iterator<Item = u32> {
    let end = 1u64 << k;
    let first = (1u64 << count) - 1;
    std::iter::successors((first < end).then_some(first), move |&m| {
        if m == 0 {
            return None;
        }
        let low = m & m.wrapping_neg();
        let ripple = m + low;
        let next = (((ripple ^ m) >> 2) / low) | ripple;
        (next < end).then_some(next)
    })
    .map(|m| m as u32)
}

fn to_global(lines: &[usize], local: u32) -> Lines {
    lines
        .iter()
        .enumerate()
        .filter(|(i, _)| local >> i & 1 == 1)
        .fold(0, |m, (_, &l)| m | 1u64 << l)
}

/// Cuts `lines` into consecutive groups of the given sizes (which must add up to
/// at most `lines.len()`).
pub fn split_sizes(lines: &[usize], sizes: &[usize]) -> Vec<Vec<usize>> {
    let mut rest = lines;
    sizes
        .iter()
        .map(|&s| {
            let (head, tail) = rest.split_at(s);
            rest = tail;
            head.to_vec()
        })
        .collect()
}

/// The group layout of a tablebase: start lines plus the free lines split in groups,
/// and the reduction (symmetry, corners) deciding which positions are stored.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Lines drawn at the start (present in every position).
    pub start: Lines,
    /// The groups, most significant first.
    pub groups: Vec<Group>,
    /// Symmetry and corner reduction; `None` stores every position.
    pub reduction: Option<Arc<GroupSymmetry>>,
    /// See [`Layout::first_places`].
    first_places: OnceLock<Vec<u32>>,
    /// Calls of [`Layout::locate_children`] before the table was built.
    first_place_calls: Arc<AtomicU32>,
}

/// Per-group line counts of a block.
pub type Counts = Vec<u8>;

impl Layout {
    /// A layout from explicit groups of line indices.
    pub fn new(start: Lines, groups: Vec<Vec<usize>>) -> Layout {
        Layout {
            start,
            groups: groups.into_iter().map(Group::new).collect(),
            reduction: None,
            first_places: OnceLock::new(),
            first_place_calls: Arc::default(),
        }
    }

    /// The layout storing only one representative per class of positions that
    /// `reduction` (built for `Layout::new(start, groups)`) makes equivalent: group 1
    /// keeps the canonical subsets, every group only corner-normal ones.
    pub fn reduced(start: Lines, groups: Vec<Vec<usize>>, reduction: GroupSymmetry) -> Layout {
        let corners = reduction.corner_pairs().to_vec();
        let reduction = Arc::new(reduction);
        let groups = groups
            .into_iter()
            .enumerate()
            .map(|(g, mut lines)| {
                // Local bits follow ascending lines, as in the layout `reduction` saw.
                lines.sort_unstable();
                let reduction = Arc::clone(&reduction);
                Group::reduced(lines, &corners, move |m| {
                    if g == 0 {
                        reduction.is_canonical_first(m)
                    } else {
                        reduction.permute_local(g, 0, m) == m
                    }
                })
            })
            .collect();
        Layout {
            start,
            groups,
            reduction: Some(reduction),
            first_places: OnceLock::new(),
            first_place_calls: Arc::default(),
        }
    }

    /// Positions of all layers without a reduction: 2^(free lines), saturating.
    pub fn raw_positions(&self) -> u64 {
        1u64.checked_shl(self.free_lines() as u32)
            .unwrap_or(u64::MAX)
    }

    /// Board symmetries the reduction uses (1: none).
    pub fn symmetries(&self) -> usize {
        self.reduction.as_ref().map_or(1, |r| r.len())
    }

    /// Whether the reduction merges corner pairs.
    pub fn has_corners(&self) -> bool {
        self.reduction
            .as_ref()
            .is_some_and(|r| !r.corner_pairs().is_empty())
    }

    /// Every position whose stored representative is `stored` (itself included),
    /// ascending: the class members one stored position answers for.
    pub fn class_members(&self, stored: Lines) -> Vec<Lines> {
        let (Some(reduction), Some(first)) = (&self.reduction, self.groups.first()) else {
            return vec![stored];
        };
        let mut out = Vec::new();
        for s in 0..reduction.len() {
            let image = reduction.apply(s, stored);
            // Every way of un-normalising the corner pairs with one line drawn.
            let half: Vec<&(usize, usize)> = reduction
                .corner_pairs()
                .iter()
                .filter(|&&(a, b)| (image >> a & 1) + (image >> b & 1) == 1)
                .collect();
            for choice in 0..1u64 << half.len() {
                let q = half
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| choice >> i & 1 == 1)
                    .fold(image, |q, (_, &&(a, b))| q ^ (1 << a | 1 << b));
                if reduction.canonical_position(first.local_of(q), q) == stored {
                    out.push(q);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The stored representative of `position` (itself without a reduction).
    #[inline]
    pub fn canonical(&self, position: Lines) -> Lines {
        match (&self.reduction, self.groups.first()) {
            (Some(r), Some(first)) => r.canonical_position(first.local_of(position), position),
            _ => position,
        }
    }

    /// Splits the free lines (in line order) into groups of the given sizes.
    pub fn with_sizes(all: Lines, start: Lines, sizes: &[usize]) -> Layout {
        let free: Vec<usize> = (0..64).filter(|&l| (all & !start) >> l & 1 == 1).collect();
        assert_eq!(sizes.iter().sum::<usize>(), free.len());
        Layout::new(start, split_sizes(&free, sizes))
    }

    /// Builds every group's unranking tables now (see [`Group::prepare_unranking`]).
    pub fn prepare_unranking(&self) {
        for group in &self.groups {
            group.prepare_unranking();
        }
    }

    /// Number of lines drawn at the start.
    pub fn start_lines(&self) -> usize {
        self.start.count_ones() as usize
    }

    /// Number of free lines.
    pub fn free_lines(&self) -> usize {
        self.groups.iter().map(Group::len).sum()
    }

    /// Total lines of the layer that has every line drawn.
    pub fn full_layer(&self) -> usize {
        self.start_lines() + self.free_lines()
    }

    /// Group sizes.
    pub fn sizes(&self) -> Vec<usize> {
        self.groups.iter().map(Group::len).collect()
    }

    /// Every block of layer `n` (total lines), in lexicographic order of counts
    /// (group 1 count ascending: Wilson's order, which lets child blocks with a
    /// smaller group-1 count be dropped early).
    pub fn blocks_of_layer(&self, n: usize) -> Vec<Counts> {
        let mut out = Vec::new();
        let Some(drawn) = n.checked_sub(self.start_lines()) else {
            return out;
        };
        let mut counts = Vec::with_capacity(self.groups.len());
        self.enumerate(0, drawn, &mut counts, &mut out);
        out
    }

    fn enumerate(&self, g: usize, left: usize, counts: &mut Counts, out: &mut Vec<Counts>) {
        if g == self.groups.len() {
            if left == 0 {
                out.push(counts.clone());
            }
            return;
        }
        let rest: usize = self.groups[g + 1..].iter().map(Group::len).sum();
        let lo = left.saturating_sub(rest);
        let hi = left.min(self.groups[g].len());
        for c in lo..=hi {
            counts.push(c as u8);
            self.enumerate(g + 1, left - c, counts, out);
            counts.pop();
        }
    }

    /// Number of positions in block `counts`.
    pub fn block_size(&self, counts: &[u8]) -> u64 {
        self.groups
            .iter()
            .zip(counts)
            .map(|(g, &c)| g.radix(c as usize))
            .product()
    }

    /// Number of positions stored for layer `n`: the coefficient of x^drawn in the
    /// product over groups of `sum_c radix(c) x^c` (binomial without a reduction).
    pub fn layer_size(&self, n: usize) -> u64 {
        self.layer_sums(n).0
    }

    /// Positions the blocks of layer `n` read: the sum over its blocks of the
    /// sizes of the blocks they read (one more line in each group that has a free
    /// line, as [`crate::retro::Kernel::reads`] lists them), without listing the
    /// blocks. Each block `d` of layer `n + 1` is read by one block of layer `n`
    /// per group with a line drawn in `d`, so this is layer `n + 1`'s positions
    /// weighted by the number of its groups with a line drawn.
    pub fn layer_read_positions(&self, n: usize) -> u64 {
        self.layer_sums(n + 1).1
    }

    /// For layer `n`: its positions, and the sum over its blocks of the block's
    /// size times its groups with a line drawn (both saturating). Coefficients
    /// of x^drawn of the product over groups of `sum_c radix(c) x^c`, the second
    /// carried along with the product rule.
    fn layer_sums(&self, n: usize) -> (u64, u64) {
        let Some(drawn) = n.checked_sub(self.start_lines()) else {
            return (0, 0);
        };
        // (positions, positions x groups with a line drawn) by lines drawn so far.
        let mut poly = vec![(1u128, 0u128)];
        for g in &self.groups {
            let mut next = vec![(0u128, 0u128); poly.len() + g.len()];
            for (i, &(a, b)) in poly.iter().enumerate() {
                for c in 0..=g.len() {
                    let r = g.radix(c) as u128;
                    let (x, y) = &mut next[i + c];
                    *x += a * r;
                    *y += (b + if c > 0 { a } else { 0 }) * r;
                }
            }
            poly = next;
        }
        let saturate = |x: u128| x.min(u64::MAX as u128) as u64;
        poly.get(drawn)
            .map_or((0, 0), |&(a, b)| (saturate(a), saturate(b)))
    }

    /// Number of blocks of layer `n` and the size of its largest block, without
    /// listing the blocks (a small dynamic program over the groups).
    pub fn layer_blocks_summary(&self, n: usize) -> (u64, u64) {
        let Some(drawn) = n.checked_sub(self.start_lines()) else {
            return (0, 0);
        };
        // ways[s] / largest[s]: blocks and largest block over the groups so far with s lines.
        let mut ways = vec![0u64; drawn + 1];
        let mut largest = vec![0u64; drawn + 1];
        ways[0] = 1;
        largest[0] = 1;
        for g in &self.groups {
            let mut next_ways = vec![0u64; drawn + 1];
            let mut next_largest = vec![0u64; drawn + 1];
            for s in 0..=drawn {
                if ways[s] == 0 {
                    continue;
                }
                for c in 0..=g.len().min(drawn - s) {
                    next_ways[s + c] += ways[s];
                    next_largest[s + c] = next_largest[s + c].max(largest[s] * g.radix(c));
                }
            }
            ways = next_ways;
            largest = next_largest;
        }
        (ways[drawn], largest[drawn])
    }

    /// The group holding free line `line`, if any.
    pub fn group_of(&self, line: usize) -> Option<usize> {
        self.groups.iter().position(|g| g.lines.contains(&line))
    }

    /// Block counts and index of the stored representative of a position (which
    /// must contain the start's lines).
    pub fn locate(&self, position: Lines) -> (Counts, u64) {
        let (packed, index) = self.locate_packed(position);
        (self.unpack_counts(packed), index)
    }

    /// Like [`Layout::locate`] without allocating: the counts packed 8 bits each
    /// (group 1 most significant; at most 16 groups) and the index.
    #[inline]
    pub fn locate_packed(&self, position: Lines) -> (u128, u64) {
        let position = self.canonical(position);
        let mut packed = 0u128;
        let mut index = 0u64;
        for g in &self.groups {
            let local = g.local_of(position);
            let c = local.count_ones() as usize;
            packed = packed << 8 | c as u128;
            // `radix` builds size `c`'s subsets if needed.
            index = index * g.radix(c) + g.built_rank(local) as u64;
        }
        (packed, index)
    }

    /// `rank | symmetry << 24` for a group-1 local mask: the rank of its stored
    /// representative and the group-1 symmetry that gives it.
    fn first_place(&self, first: &Group, local: u32) -> u32 {
        match self.reduction.as_deref() {
            Some(r) => {
                let (least, s) = r.canonicalize_first(local);
                first.rank(least) | (s as u32) << 24
            }
            None => first.rank(local),
        }
    }

    /// [`Layout::first_place`] of every group-1 local mask (one table read instead
    /// of three in [`Layout::locate_children`]), once it has been called often
    /// enough to pay for the table (a cold probe does not build it).
    fn first_places(&self) -> Option<&[u32]> {
        const CALLS_BEFORE_TABLE: u32 = 64;
        if let Some(table) = self.first_places.get() {
            return Some(table);
        }
        if self.first_place_calls.fetch_add(1, Ordering::Relaxed) < CALLS_BEFORE_TABLE {
            return None;
        }
        let first = self.groups.first()?;
        Some(self.first_places.get_or_init(|| {
            (0..1u32 << first.len())
                .map(|local| self.first_place(first, local))
                .collect()
        }))
    }

    /// [`Layout::locate_packed`] of `position | 1 << line` for every line of
    /// `moves` (free lines not in `position`), as `f(line, (packed, index))`, lines
    /// in no particular order. Cheaper than locating each child: the parent's group
    /// masks are gathered once, and a move outside group 1 keeps the symmetry that
    /// canonicalises group 1, so only the moved group's digit is recomputed.
    /// Returns the place of `position` itself.
    pub fn locate_children(
        &self,
        position: Lines,
        moves: Lines,
        mut f: impl FnMut(usize, (u128, u64)),
    ) -> (u128, u64) {
        let g_len = self.groups.len();
        debug_assert!(g_len <= MAX_GROUPS);
        if g_len == 0 {
            return (0, 0);
        }
        let first_places = self.first_places();
        let first_place = |local: u32| match first_places {
            Some(table) => table[local as usize],
            None => self.first_place(&self.groups[0], local),
        };
        // The rank of the stored image of group `g`'s `local` under group-1 symmetry `s`.
        let rank = |g: usize, s: usize, local: u32| {
            let stored = match self.reduction.as_deref() {
                Some(r) => r.permute_local(g, s, local),
                None => local,
            };
            self.groups[g].built_rank(stored)
        };
        let mut local = [0u32; MAX_GROUPS];
        let mut ranks = [0u32; MAX_GROUPS];
        let mut counts = [0usize; MAX_GROUPS];
        // Each group's radix at its count and one more (which builds those sizes'
        // subsets, the only ones ranked below).
        let mut radices = [[0u64; 2]; MAX_GROUPS];
        for (g, group) in self.groups.iter().enumerate() {
            local[g] = group.local_of(position);
            counts[g] = local[g].count_ones() as usize;
            radices[g] = [group.radix(counts[g]), group.radix(counts[g] + 1)];
        }
        let first = first_place(local[0]);
        let s = (first >> 24) as usize;
        ranks[0] = first & 0xff_ffff;
        for g in 1..g_len {
            ranks[g] = rank(g, s, local[g]);
        }
        // The packed counts and index of the digits `ranks`, group `moved` having
        // one more line than the parent.
        let place = |ranks: &[u32], moved: usize| {
            let mut packed = 0u128;
            let mut index = 0u64;
            for g in 0..g_len {
                let more = usize::from(g == moved);
                packed = packed << 8 | (counts[g] + more) as u128;
                index = index * radices[g][more] + ranks[g] as u64;
            }
            (packed, index)
        };
        for (g, group) in self.groups.iter().enumerate() {
            let mut bits = group.local_of(moves);
            while bits != 0 {
                let bit = bits & bits.wrapping_neg();
                bits ^= bit;
                let line = group.lines[bit.trailing_zeros() as usize];
                let mut child = ranks;
                if g == 0 {
                    let first = first_place(local[0] | bit);
                    let s_child = (first >> 24) as usize;
                    child[0] = first & 0xff_ffff;
                    if s_child != s {
                        for h in 1..g_len {
                            child[h] = rank(h, s_child, local[h]);
                        }
                    }
                } else {
                    child[g] = rank(g, s, local[g] | bit);
                }
                f(line, place(&child[..g_len], g));
            }
        }
        place(&ranks[..g_len], usize::MAX)
    }

    /// Unpacks counts packed by [`Layout::locate_packed`].
    pub fn unpack_counts(&self, packed: u128) -> Counts {
        let g = self.groups.len();
        (0..g)
            .map(|i| (packed >> (8 * (g - 1 - i))) as u8)
            .collect()
    }

    /// The position at `index` of block `counts` (inverse of [`Layout::locate`]).
    pub fn position_at(&self, counts: &[u8], mut index: u64) -> Lines {
        let mut position = self.start;
        for (g, &c) in self.groups.iter().zip(counts).rev() {
            let radix = g.radix(c as usize);
            position |= g.globals(c as usize)[(index % radix) as usize];
            index /= radix;
        }
        position
    }

    /// Calls `f` with each position of block `counts` and its slot in `values` (the
    /// block's values in index order), on all cores in tiles of `tile` positions.
    pub fn par_visit_mut<T: Send>(
        &self,
        counts: &[u8],
        values: &mut [T],
        tile: usize,
        f: impl Fn(Lines, &mut T) + Sync,
    ) {
        values
            .par_chunks_mut(tile)
            .enumerate()
            .for_each(|(t, slots)| {
                let len = slots.len();
                let mut slots = slots.iter_mut();
                self.visit(counts, (t * tile) as u64, len, |position| {
                    f(position, slots.next().expect("one slot per position"));
                });
            });
    }

    /// Calls `f` with the lines of positions `from..from + len` of block `counts`
    /// (start lines included), in index order. Cheaper than an odometer step per
    /// position: the last group's subsets are read straight from its table.
    #[inline]
    pub fn visit(&self, counts: &[u8], from: u64, len: usize, mut f: impl FnMut(Lines)) {
        self.visit_runs(counts, from, len, |base, run| {
            run.iter().for_each(|&m| f(base | m));
        });
    }

    /// Like [`Layout::visit`], a run at a time: `f(base, masks)` for consecutive
    /// positions whose lines are `base | m` for each `m` of `masks`, in index order
    /// (runs end where the earlier groups' digits change), so that a loop over one
    /// run can be vectorised.
    #[inline]
    pub fn visit_runs(
        &self,
        counts: &[u8],
        from: u64,
        len: usize,
        mut f: impl FnMut(Lines, &[Lines]),
    ) {
        let Some(last) = self.groups.last() else {
            (0..len).for_each(|_| f(self.start, &[0]));
            return;
        };
        let row = last.globals(counts[self.groups.len() - 1] as usize);
        self.visit_rank_runs(counts, from, len, |base, ranks| f(base, &row[ranks]));
    }

    /// [`Layout::visit_rank_runs`] with each run's slots of `values`, the values of
    /// the block's positions from index `first` on.
    #[inline]
    pub fn visit_rank_runs_mut<T>(
        &self,
        counts: &[u8],
        first: u64,
        values: &mut [T],
        mut f: impl FnMut(Lines, std::ops::Range<usize>, &mut [T]),
    ) {
        let mut rest = values;
        self.visit_rank_runs(counts, first, rest.len(), |base, ranks| {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(ranks.len());
            rest = tail;
            f(base, ranks, run);
        });
    }

    /// Like [`Layout::visit_runs`], with each run given as the ranks of its last-group
    /// subsets (of size `counts`' last): `f(base, ranks)` for the positions
    /// `base | globals[r]`, `r` in `ranks`. A layout without groups has one
    /// position per block, `start`, given as rank 0.
    #[inline]
    pub fn visit_rank_runs(
        &self,
        counts: &[u8],
        from: u64,
        len: usize,
        mut f: impl FnMut(Lines, std::ops::Range<usize>),
    ) {
        let Some((last, prefix)) = self.groups.split_last() else {
            (0..len).for_each(|_| f(self.start, 0..1));
            return;
        };
        if len == 0 {
            return;
        }
        let tables = prefix
            .iter()
            .zip(counts)
            .map(|(g, &c)| g.globals(c as usize))
            .collect();
        let radix = last.radix(counts[prefix.len()] as usize) as usize;
        let mut odo = Odometer::new(tables, from / radix as u64);
        let mut r = (from % radix as u64) as usize;
        let mut left = len;
        while left > 0 {
            let take = left.min(radix - r);
            f(self.start | odo.mask(), r..r + take);
            left -= take;
            r = 0;
            odo.advance();
        }
    }
}

/// A value per subset of a layout's last group (`of` its global line mask), by size
/// and rank, each size built when first used: what a pass over a block's runs
/// ([`Layout::visit_rank_runs`]) reads by rank instead of computing per position.
pub struct LastGroupTable<'a, T> {
    layout: &'a Layout,
    of: Box<dyn Fn(Lines) -> T + Send + Sync + 'a>,
    sizes: Vec<OnceLock<Vec<T>>>,
}

impl<'a, T: Send + Sync> LastGroupTable<'a, T> {
    /// The table of `of` over `layout`'s last group.
    pub fn new(layout: &'a Layout, of: impl Fn(Lines) -> T + Send + Sync + 'a) -> Self {
        let sizes = layout.groups.last().map_or(1, |g| g.len() + 1);
        LastGroupTable {
            layout,
            of: Box::new(of),
            sizes: (0..sizes).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The values of the last group's subsets in block `counts`, by rank (one value,
    /// of the empty mask, in a layout without groups).
    pub fn of_block(&self, counts: &[u8]) -> &[T] {
        let Some(last) = self.layout.groups.last() else {
            return self.sizes[0].get_or_init(|| vec![(self.of)(0)]);
        };
        let count = counts[counts.len() - 1] as usize;
        self.sizes[count]
            .get_or_init(|| last.globals(count).iter().map(|&m| (self.of)(m)).collect())
    }
}

/// Iterates the global masks of consecutive indices of a mixed-radix number whose
/// digits are subsets of some groups (most significant first), updating only the
/// digits that change.
pub struct Odometer<'a> {
    tables: Vec<&'a [Lines]>,
    digits: Vec<usize>,
    /// `partial[i]` = OR of the masks of digits `0..i`.
    partial: Vec<Lines>,
}

impl<'a> Odometer<'a> {
    /// An odometer over `tables` (one table of subset masks per digit) at `index`.
    pub fn new(tables: Vec<&'a [Lines]>, index: u64) -> Odometer<'a> {
        let n = tables.len();
        let mut odo = Odometer {
            tables,
            digits: vec![0; n],
            partial: vec![0; n + 1],
        };
        odo.seek(index);
        odo
    }

    /// Moves to `index`.
    pub fn seek(&mut self, mut index: u64) {
        for i in (0..self.tables.len()).rev() {
            let radix = self.tables[i].len() as u64;
            self.digits[i] = (index % radix) as usize;
            index /= radix;
        }
        self.refresh_from(0);
    }

    fn refresh_from(&mut self, from: usize) {
        for i in from..self.tables.len() {
            self.partial[i + 1] = self.partial[i] | self.tables[i][self.digits[i]];
        }
    }

    /// The mask of the current index.
    #[inline]
    pub fn mask(&self) -> Lines {
        self.partial[self.tables.len()]
    }

    /// The current digit `i`.
    #[inline]
    pub fn digit(&self, i: usize) -> usize {
        self.digits[i]
    }

    /// Advances to the next index (wrapping to 0 after the last).
    #[inline]
    pub fn advance(&mut self) {
        let mut i = self.tables.len();
        while i > 0 {
            i -= 1;
            self.digits[i] += 1;
            if self.digits[i] < self.tables[i].len() {
                self.refresh_from(i);
                return;
            }
            self.digits[i] = 0;
        }
        self.refresh_from(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn masks_of_a_size_come_in_ascending_order() {
        for k in 0..=12 {
            for c in 0..=k {
                let want: Vec<u32> = (0..1u32 << k)
                    .filter(|m| m.count_ones() as usize == c)
                    .collect();
                assert_eq!(masks_of_size(k, c).collect::<Vec<_>>(), want, "k {k} c {c}");
            }
        }
        assert_eq!(masks_of_size(16, 16).collect::<Vec<_>>(), vec![0xffff]);
        assert_eq!(masks_of_size(16, 1).count(), 16);
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(6, 2), 15);
        assert_eq!(binomial(31, 15), 300_540_195);
        assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
        assert_eq!(binomial(3, 4), 0);
    }

    #[test]
    fn ranks_follow_the_combinatorial_number_system() {
        // rank {a1 < .. < ak} = sum C(ai, i), i from 1 (docs/FORMAT.md §9.8).
        let g = Group::new((0..6).collect());
        for c in 0..=6 {
            for (r, &m) in g.locals(c).iter().enumerate() {
                let elems: Vec<usize> = (0..6).filter(|i| m >> i & 1 == 1).collect();
                let expect: u64 = elems
                    .iter()
                    .enumerate()
                    .map(|(i, &a)| binomial(a, i + 1))
                    .sum();
                assert_eq!(expect, r as u64);
                assert_eq!(g.rank(m), r as u32);
            }
        }
        assert_eq!(g.locals(2).len(), 15);
    }

    #[test]
    fn local_masks_gather_the_group_lines() {
        let g = Group::new(vec![3, 9, 17, 40, 63]);
        assert_eq!(g.local_of(1 << 3 | 1 << 63 | 1 << 5), 0b10001);
        assert_eq!(g.local_of(u64::MAX), 0b11111);
        assert_eq!(g.local_of(!(1 << 40)), 0b10111);
    }

    #[test]
    fn worked_example_block_sizes() {
        let all = (1u64 << 12) - 1;
        let layout = Layout::with_sizes(all, 0, &[6, 6]);
        assert_eq!(layout.block_size(&[2, 3]), 300);
        assert_eq!(layout.block_size(&[3, 3]), 400);
        let total: u64 = (0..=12).map(|n| layout.layer_size(n)).sum();
        assert_eq!(total, 4096);
        for n in 0..=12 {
            let blocks = layout.blocks_of_layer(n);
            let largest = blocks.iter().map(|c| layout.block_size(c)).max().unwrap();
            let listed: u64 = blocks.iter().map(|c| layout.block_size(c)).sum();
            assert_eq!(listed, layout.layer_size(n));
            assert_eq!(
                layout.layer_blocks_summary(n),
                (blocks.len() as u64, largest)
            );
        }
    }

    proptest! {
        #[test]
        fn locate_and_position_at_are_inverse(position in any::<u64>(), split in 1usize..4) {
            let all = (1u64 << 31) - 1;
            let start = 0b1001;
            let free = 29usize;
            let sizes: Vec<usize> = match split { 1 => vec![15, 14], 2 => vec![10, 10, 9], _ => vec![8, 7, 7, 7] };
            assert_eq!(sizes.iter().sum::<usize>(), free);
            let layout = Layout::with_sizes(all, start, &sizes);
            let p = (position & all) | start;
            let (counts, index) = layout.locate(p);
            prop_assert!(index < layout.block_size(&counts));
            prop_assert_eq!(layout.position_at(&counts, index), p);
        }

        #[test]
        fn odometer_matches_position_at(start_index in 0u64..2000) {
            let all = (1u64 << 17) - 1;
            let layout = Layout::with_sizes(all, 0, &[6, 6, 5]);
            let counts = [3u8, 2, 2];
            let tables = layout.groups.iter().zip(&counts).map(|(g, &c)| g.globals(c as usize)).collect();
            let size = layout.block_size(&counts);
            let mut odo = Odometer::new(tables, start_index % size);
            for k in 0..50 {
                let i = (start_index + k) % size;
                prop_assert_eq!(odo.mask(), layout.position_at(&counts, i));
                odo.advance();
            }
            let from = start_index % size;
            let len = (size - from).min(300) as usize;
            let mut i = from;
            layout.visit(&counts, from, len, |p| {
                assert_eq!(p, layout.position_at(&counts, i));
                i += 1;
            });
            prop_assert_eq!(i, from + len as u64);
        }
    }
}
