//! The board symmetries and corner swaps usable with a line-group layout, as lookup
//! tables: canonicalising a group-1 subset and permuting each group's local masks
//! (Wilson's symmetry and Fraser's corners; see [`super::orbits`] for the idea).

use super::board::{Board, Lines};
use super::symmetry::Symmetries;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// Most lines in one group (local masks are `u32`, group-1 tables have `2^k` entries).
pub const MAX_GROUP_LINES: usize = 16;

/// The board symmetries and corner pairs usable with a given layout, with the tables
/// that canonicalise group-1 subsets and permute every group's local masks.
///
/// Symmetries are numbered `0..len()`, symmetry 0 being the identity.
#[derive(Clone)]
pub struct GroupSymmetry {
    /// All symmetries of the board (4 or 8).
    board_syms: Symmetries,
    /// Index into `board_syms` of each kept symmetry (`kept[0] == 0`, the identity).
    kept: Vec<usize>,
    /// Corner pairs (global lines, lower first) with both lines free and in one group.
    corners: Vec<(usize, usize)>,
    /// `local_tables[((g * kept + s) * 2 + j) * 256 + v]`: image under symmetry `s`
    /// of the local bits `8j..8j+8` of group `g` selected by `v` (low 16 bits), and
    /// above them which of the group's corner lines the image holds (bits 2i and
    /// 2i + 1 for the first and second line of its corner pair i).
    local_tables: Vec<u32>,
    /// `corner_fix[g * 256 + c]`: what normalising flips in a local mask of group
    /// `g` whose corner lines are `c` (as above). With it a permutation followed
    /// by normalisation is three table reads and no branch (random masks made the
    /// branches of a fold over the pairs mispredict).
    corner_fix: Vec<u32>,
    /// Lines of group 1 (`None` without groups): the tables below are of its masks.
    first_lines: Option<usize>,
    /// [`LeastImages`] of every group-1 local mask, built once
    /// [`GroupSymmetry::canonicalize_first`] has been called often enough to pay for
    /// it (a cold probe computes its few images instead).
    least: OnceLock<LeastImages>,
    /// Calls of [`GroupSymmetry::canonicalize_first`] before the table was built.
    least_calls: Arc<AtomicU32>,
}

/// Calls of [`GroupSymmetry::canonicalize_first`] computed one by one before the
/// table of every group-1 mask is built (its 2^16 masks cost as much as that many
/// calls, a sixth of a cold probe when built at open).
const CALLS_BEFORE_LEAST_TABLE: u32 = 4096;

/// For each group-1 local mask: its least normalised image and the lowest symmetry
/// giving it.
#[derive(Clone)]
struct LeastImages {
    least: Vec<u16>,
    to_least: Vec<u8>,
}

impl std::fmt::Debug for GroupSymmetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupSymmetry")
            .field("kept", &self.kept)
            .field("corners", &self.corners)
            .finish_non_exhaustive()
    }
}

impl GroupSymmetry {
    /// Finds the symmetries of `board` that fix `start` and every group of lines in
    /// `groups` (only the identity unless `symmetry`), keeps the corner pairs of
    /// `corners` whose lines are both free and in one group, and builds the lookup
    /// tables (group 1 is canonicalised through a full table of `2^k` entries,
    /// `k <= 16` its number of lines). Local bits follow each group's lines in
    /// ascending order, as in [`super::layout::Group`].
    pub fn new(
        board: &Board,
        start: Lines,
        groups: &[Vec<usize>],
        symmetry: bool,
        corners: &[(usize, usize)],
    ) -> GroupSymmetry {
        let groups: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| {
                let mut g = g.clone();
                g.sort_unstable();
                g
            })
            .collect();
        let board_syms = Symmetries::new(*board);
        let masks: Vec<Lines> = groups
            .iter()
            .map(|g| g.iter().fold(0, |m, &l| m | 1 << l))
            .collect();
        let kept: Vec<usize> = (0..board_syms.len())
            .filter(|&s| {
                s == 0
                    || symmetry
                        && board_syms.apply(s, start) == start
                        && masks.iter().all(|&m| board_syms.apply(s, m) == m)
            })
            .collect();
        let corners: Vec<(usize, usize)> = corners
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .filter(|&(a, b)| masks.iter().any(|&m| m >> a & 1 == 1 && m >> b & 1 == 1))
            .collect();
        let mut local_tables = vec![0u32; groups.len() * kept.len() * 2 * 256];
        let mut corner_fix = vec![0u32; groups.len() * 256];
        for (g, group) in groups.iter().enumerate() {
            let mut local_of_line = [usize::MAX; 64];
            for (i, &l) in group.iter().enumerate() {
                local_of_line[l] = i;
            }
            let pairs: Vec<(u32, u32)> = corners
                .iter()
                .filter(|&&(a, _)| local_of_line[a] != usize::MAX)
                .map(|&(a, b)| (1u32 << local_of_line[a], 1u32 << local_of_line[b]))
                .collect();
            assert!(pairs.len() <= 4, "a board has four corners");
            // The corner lines an image holds, as an index into `corner_fix`.
            let corner_bits = |image: u32| {
                pairs.iter().enumerate().fold(0, |c, (i, &(a, b))| {
                    c | u32::from(image & a != 0) << (2 * i)
                        | u32::from(image & b != 0) << (2 * i + 1)
                })
            };
            for (c, fix) in corner_fix[g * 256..(g + 1) * 256].iter_mut().enumerate() {
                *fix = pairs.iter().enumerate().fold(0, |m, (i, &(a, b))| {
                    if c >> (2 * i + 1) & 1 == 1 && c >> (2 * i) & 1 == 0 {
                        m | a | b
                    } else {
                        m
                    }
                });
            }
            for (s, &bs) in kept.iter().enumerate() {
                let image: Vec<usize> = group
                    .iter()
                    .map(|&l| local_of_line[board_syms.map_line(bs, l)])
                    .collect();
                for j in 0..2 {
                    let base = ((g * kept.len() + s) * 2 + j) * 256;
                    for v in 0..256usize {
                        let bits = (0..8)
                            .filter(|&bit| v >> bit & 1 == 1)
                            .filter_map(|bit| image.get(8 * j + bit))
                            .fold(0, |m, &i| m | 1 << i);
                        local_tables[base + v] = bits | corner_bits(bits) << 16;
                    }
                }
            }
        }
        let first_lines = groups.first().map(|g| g.len());
        debug_assert!(first_lines.is_none_or(|k| k <= MAX_GROUP_LINES));
        GroupSymmetry {
            board_syms,
            kept,
            corners,
            local_tables,
            corner_fix,
            first_lines,
            least: OnceLock::new(),
            least_calls: Arc::default(),
        }
    }

    /// The table of [`GroupSymmetry::canonicalize_first`] for every group-1 mask:
    /// one pass over all 2^k masks per symmetry (with the symmetry outermost, its
    /// two byte tables stay in L1).
    fn least_images(&self) -> LeastImages {
        let mut least: Vec<u16> = match self.first_lines {
            Some(k) => {
                let normalize = self.local_permutation(0, 0);
                (0..1u32 << k).map(|m| normalize(m) as u16).collect()
            }
            None => vec![u16::MAX],
        };
        let mut to_least = vec![0u8; least.len()];
        if self.first_lines.is_some() {
            for s in 1..self.kept.len() {
                let permute = self.local_permutation(0, s);
                for (local, (best, best_s)) in least.iter_mut().zip(&mut to_least).enumerate() {
                    // Branch-free: whether an image is smaller is a coin toss.
                    let image = permute(local as u32) as u16;
                    let smaller = image < *best;
                    *best = (*best).min(image);
                    *best_s = if smaller { s as u8 } else { *best_s };
                }
            }
        }
        LeastImages { least, to_least }
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

    /// The corner pairs in use (global lines, lower first).
    pub fn corner_pairs(&self) -> &[(usize, usize)] {
        &self.corners
    }

    /// Whether this reduces anything (a symmetry besides the identity, or a corner).
    pub fn reduces(&self) -> bool {
        self.kept.len() > 1 || !self.corners.is_empty()
    }

    /// The image of `position` (global lines) under kept symmetry `s`.
    #[inline]
    pub fn apply(&self, s: usize, position: Lines) -> Lines {
        self.board_syms.apply(self.kept[s], position)
    }

    /// `position` with every corner pair holding only its second line changed to
    /// hold only its first.
    #[inline]
    pub fn normalize(&self, position: Lines) -> Lines {
        self.corners.iter().fold(position, |p, &(a, b)| {
            if p >> b & 1 == 1 && p >> a & 1 == 0 {
                p ^ (1 << a | 1 << b)
            } else {
                p
            }
        })
    }

    /// The local-mask permutation of group `g` under kept symmetry `s`, followed by
    /// corner normalisation: the local mask of the normalised image of the group's
    /// lines selected by `local` (two byte lookups). With `s = 0` it normalises.
    #[inline]
    pub fn permute_local(&self, g: usize, s: usize, local: u32) -> u32 {
        self.local_permutation(g, s)(local)
    }

    /// [`GroupSymmetry::permute_local`] for one group and symmetry, with its two
    /// byte tables looked up once (for loops over many masks).
    #[inline]
    fn local_permutation(&self, g: usize, s: usize) -> impl Fn(u32) -> u32 + '_ {
        let base = (g * self.kept.len() + s) * 512;
        let (low, high) = self.local_tables[base..base + 512].split_at(256);
        let fix = &self.corner_fix[g * 256..(g + 1) * 256];
        move |local| {
            let entry = low[(local & 0xff) as usize] | high[(local >> 8 & 0xff) as usize];
            (entry & 0xffff) ^ fix[(entry >> 16) as usize]
        }
    }

    /// For a group-1 local mask: the least normalised image of it under the kept
    /// symmetries, and the lowest symmetry giving it. For a corner-normal mask the
    /// symmetry is 0 exactly when the mask is canonical (its own least image).
    #[inline]
    pub fn canonicalize_first(&self, local: u32) -> (u32, usize) {
        let table = match self.least.get() {
            Some(table) => table,
            None if self.least_calls.fetch_add(1, Ordering::Relaxed) < CALLS_BEFORE_LEAST_TABLE => {
                return self.least_image(local);
            }
            None => self.least.get_or_init(|| self.least_images()),
        };
        (
            table.least[local as usize] as u32,
            table.to_least[local as usize] as usize,
        )
    }

    /// [`GroupSymmetry::canonicalize_first`] without the table: every kept
    /// symmetry's normalised image, the least (the lowest symmetry on ties).
    pub(crate) fn least_image(&self, local: u32) -> (u32, usize) {
        if self.first_lines.is_none() {
            return (u32::from(u16::MAX), 0);
        }
        (0..self.kept.len())
            .map(|s| (self.permute_local(0, s, local), s))
            .min()
            .expect("the identity is kept")
    }

    /// Whether a group-1 local mask is stored: its own least normalised image.
    #[inline]
    pub fn is_canonical_first(&self, local: u32) -> bool {
        self.canonicalize_first(local).0 == local
    }

    /// The stored representative of `position`, whose group-1 local mask is
    /// `first_local`: `normalize(s(position))` for the symmetry `s` that makes the
    /// group-1 part least.
    #[inline]
    pub fn canonical_position(&self, first_local: u32, position: Lines) -> Lines {
        let s = self.canonicalize_first(first_local).1;
        let image = if s == 0 {
            position
        } else {
            self.apply(s, position)
        };
        self.normalize(image)
    }
}
