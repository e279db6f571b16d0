//! The 4x4x4 board: 64 cells (cell = 16 z + 4 y + x: level from the top, then row,
//! then column, as in seed 002), the 76 lines of four, and the 192 automorphisms
//! (permutations of the cells that map lines onto lines), each applied to a 64-bit
//! cell set by eight byte-table lookups.

use std::sync::OnceLock;

/// Cells of the board.
pub const CELLS: usize = 64;
/// Lines of four.
pub const LINES: usize = 76;
/// Automorphisms of the board.
pub const AUTOMORPHISMS: usize = 192;

/// A set of cells, bit `c` = cell `c`.
pub type Cells = u64;

/// The cell at column `x`, row `y`, level `z` (each 0..4).
pub const fn cell(x: usize, y: usize, z: usize) -> usize {
    16 * z + 4 * y + x
}

/// `(x, y, z)` of a cell.
pub const fn coordinates(c: usize) -> [usize; 3] {
    [c % 4, (c / 4) % 4, c / 16]
}

/// The 76 lines as cell sets: the four cells at `start + k * step` (k = 0..4) for
/// every direction (a nonzero vector of -1/0/1 up to sign) and start that keep all
/// four on the board.
pub fn lines() -> &'static [Cells; LINES] {
    static LINES_TABLE: OnceLock<[Cells; LINES]> = OnceLock::new();
    LINES_TABLE.get_or_init(|| {
        let mut out = Vec::with_capacity(LINES);
        for d in directions() {
            for c in 0..CELLS {
                let p = coordinates(c).map(|v| v as i32);
                // Every cell of the line on the board; each line once, from the end
                // whose previous cell would be off the board.
                let at = |k: i32| -> Option<usize> {
                    let q: Vec<i32> = (0..3).map(|i| p[i] + k * d[i]).collect();
                    q.iter()
                        .all(|v| (0..4).contains(v))
                        .then(|| cell(q[0] as usize, q[1] as usize, q[2] as usize))
                };
                if at(-1).is_some() {
                    continue;
                }
                let cells: Option<Vec<usize>> = (0..4).map(at).collect();
                if let Some(cells) = cells {
                    out.push(cells.iter().fold(0, |m, &c| m | 1 << c));
                }
            }
        }
        out.try_into().expect("76 lines")
    })
}

/// The 13 directions: nonzero vectors of -1/0/1 whose first nonzero entry is +1.
fn directions() -> Vec<[i32; 3]> {
    let mut out = Vec::new();
    for dx in -1..=1 {
        for dy in -1..=1 {
            for dz in -1..=1 {
                let d = [dx, dy, dz];
                if d.iter().find(|&&v| v != 0) == Some(&1) {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// Whether `cells` hold a whole line.
pub fn has_line(cells: Cells) -> bool {
    for &l in lines() {
        if cells & l == l {
            return true;
        }
    }
    false
}

/// Per cell, the lines through it (bit `l` = line `l`).
pub fn lines_through() -> &'static [u128; CELLS] {
    static TABLE: OnceLock<[u128; CELLS]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = [0u128; CELLS];
        for (l, &line) in lines().iter().enumerate() {
            for (c, slot) in out.iter_mut().enumerate() {
                if line >> c & 1 == 1 {
                    *slot |= 1 << l;
                }
            }
        }
        out
    })
}

/// One automorphism as eight byte tables: the image of a cell set is the union of
/// `bytes[k][byte k of the set]`.
pub struct Automorphism {
    /// The image of every cell.
    pub perm: [u8; CELLS],
    bytes: [[Cells; 256]; 8],
}

impl Automorphism {
    fn new(perm: [u8; CELLS]) -> Automorphism {
        let mut bytes = [[0; 256]; 8];
        for (k, table) in bytes.iter_mut().enumerate() {
            for (v, image) in table.iter_mut().enumerate() {
                for b in 0..8 {
                    if v >> b & 1 == 1 {
                        *image |= 1 << perm[8 * k + b];
                    }
                }
            }
        }
        Automorphism { perm, bytes }
    }

    /// The image of a cell set.
    #[inline]
    pub fn apply(&self, set: Cells) -> Cells {
        let mut out = 0;
        for (k, table) in self.bytes.iter().enumerate() {
            out |= table[(set >> (8 * k)) as usize & 0xff];
        }
        out
    }
}

/// The 192 automorphisms, the identity first: the 48 symmetries of the cube
/// (coordinate permutations and reflections x -> 3 - x) composed with the four
/// "inner" maps that apply one permutation of 0..4 to every coordinate: the
/// identity, swapping 1 and 2, swapping 0 with 1 and 2 with 3, and both.
pub fn automorphisms() -> &'static [Automorphism] {
    static TABLE: OnceLock<Vec<Automorphism>> = OnceLock::new();
    TABLE.get_or_init(|| {
        const INNER: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 2, 1, 3], [1, 0, 3, 2], [2, 0, 3, 1]];
        const AXES: [[usize; 3]; 6] = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        let mut out = Vec::with_capacity(AUTOMORPHISMS);
        for inner in INNER {
            for axes in AXES {
                for flips in 0..8 {
                    let perm: [u8; CELLS] = std::array::from_fn(|c| {
                        let p = coordinates(c).map(|v| inner[v]);
                        let q: [usize; 3] = std::array::from_fn(|i| {
                            let v = p[axes[i]];
                            if flips >> i & 1 == 1 { 3 - v } else { v }
                        });
                        cell(q[0], q[1], q[2]) as u8
                    });
                    out.push(Automorphism::new(perm));
                }
            }
        }
        out
    })
}

/// The canonical form of a position (X's and O's cells): the least `(x, o)` image
/// under the 192 automorphisms, and the index of an automorphism giving it.
pub fn canonical(x: Cells, o: Cells) -> ((Cells, Cells), usize) {
    let mut best = (x, o);
    let mut which = 0;
    for (i, a) in automorphisms().iter().enumerate().skip(1) {
        // O's image only matters when X's ties or wins (most images lose on X's).
        let ix = a.apply(x);
        if ix > best.0 {
            continue;
        }
        let image = (ix, a.apply(o));
        if image < best {
            best = image;
            which = i;
        }
    }
    (best, which)
}

/// Per cell, its image under every automorphism (`[cell][automorphism]`): the
/// images of one cell side by side, for [`Images::canonical_after`].
fn cell_images() -> &'static [[u8; AUTOMORPHISMS]; CELLS] {
    static TABLE: OnceLock<[[u8; AUTOMORPHISMS]; CELLS]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = [[0; AUTOMORPHISMS]; CELLS];
        for (i, a) in automorphisms().iter().enumerate() {
            for (c, images) in out.iter_mut().enumerate() {
                images[i] = a.perm[c];
            }
        }
        out
    })
}

/// A position's images under the 192 automorphisms, made once so that the
/// canonical forms of its children (one stone more) cost one cell lookup an
/// automorphism instead of two set images ([`canonical`] of each child).
pub struct Images {
    x: [Cells; AUTOMORPHISMS],
    o: [Cells; AUTOMORPHISMS],
}

impl Images {
    /// The images of `(x, o)`.
    pub fn of(x: Cells, o: Cells) -> Images {
        let autos = automorphisms();
        Images {
            x: std::array::from_fn(|i| autos[i].apply(x)),
            o: std::array::from_fn(|i| autos[i].apply(o)),
        }
    }

    /// [`canonical`] of the position with a stone more on the empty `cell`, X's
    /// when `x_stone`, else O's: the same form and the same automorphism.
    pub fn canonical_after(&self, cell: usize, x_stone: bool) -> ((Cells, Cells), usize) {
        let images = &cell_images()[cell];
        let (xs, os) = if x_stone {
            (&self.x, &self.o)
        } else {
            (&self.o, &self.x)
        };
        // The moving side's image gains the cell's image; `mine` is X's side
        // when X moves, and the comparison is on X's cells first either way.
        let image = |i: usize| {
            let mine = xs[i] | 1 << images[i];
            if x_stone {
                (mine, os[i])
            } else {
                (os[i], mine)
            }
        };
        // Both images are lookups here (no set image to save, as in `canonical`):
        // the tuple comparison decides on X's cells first.
        let mut best = image(0);
        let mut which = 0;
        for i in 1..AUTOMORPHISMS {
            let candidate = image(i);
            if candidate < best {
                best = candidate;
                which = i;
            }
        }
        (best, which)
    }
}

/// `count` random positions of 0 to 39 stones (X's and O's taken in turn, on
/// cells drawn from `seed`), neither side with four in a line: inputs for tests
/// that compare a fast path with a slow one.
#[cfg(test)]
pub(crate) fn random_positions(count: usize, mut seed: u64) -> Vec<(Cells, Cells)> {
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let (mut x, mut o) = (0u64, 0u64);
        let stones = out.len() % 40;
        for k in 0..stones {
            let mut cells = !(x | o);
            for _ in 0..next() % u64::from(cells.count_ones()) {
                cells &= cells - 1;
            }
            let c = 1u64 << cells.trailing_zeros();
            if k % 2 == 0 { x |= c } else { o |= c }
        }
        if !has_line(x) && !has_line(o) {
            out.push((x, o));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn seventy_six_lines_seven_through_corners_and_centres() {
        let lines = lines();
        assert_eq!(lines.iter().collect::<HashSet<_>>().len(), LINES);
        assert!(lines.iter().all(|l| l.count_ones() == 4));
        let through = lines_through();
        let sevens = (0..CELLS).filter(|&c| through[c].count_ones() == 7).count();
        let fours = (0..CELLS).filter(|&c| through[c].count_ones() == 4).count();
        assert_eq!((sevens, fours), (16, 48));
        assert_eq!(through[0].count_ones(), 7);
        assert_eq!(through[1].count_ones(), 4);
        assert_eq!(through[cell(1, 1, 1)].count_ones(), 7);
    }

    #[test]
    fn the_192_automorphisms_are_distinct_and_keep_lines_lines() {
        let autos = automorphisms();
        assert_eq!(autos.len(), AUTOMORPHISMS);
        let perms: HashSet<[u8; CELLS]> = autos.iter().map(|a| a.perm).collect();
        assert_eq!(perms.len(), AUTOMORPHISMS);
        assert!(
            autos[0]
                .perm
                .iter()
                .enumerate()
                .all(|(c, &p)| p as usize == c)
        );
        let line_set: HashSet<Cells> = lines().iter().copied().collect();
        for a in autos {
            for &line in lines() {
                assert!(line_set.contains(&a.apply(line)));
            }
        }
        // A group: closed under composition.
        for a in autos.iter().step_by(7) {
            for b in autos.iter().step_by(5) {
                let composed: [u8; CELLS] = std::array::from_fn(|c| b.perm[a.perm[c] as usize]);
                assert!(perms.contains(&composed));
            }
        }
    }

    #[test]
    fn byte_tables_agree_with_the_permutation() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for a in automorphisms() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let set = seed;
            let slow = (0..CELLS)
                .filter(|&c| set >> c & 1 == 1)
                .fold(0u64, |m, c| m | 1 << a.perm[c]);
            assert_eq!(a.apply(set), slow);
        }
    }

    /// The children's forms made from the parent's images are `canonical`'s
    /// (form and automorphism) on random positions of every size.
    #[test]
    fn canonical_after_a_stone_equals_canonical() {
        for (x, o) in random_positions(20_000, 0x0ddb_a11c_afef_00d1) {
            let images = Images::of(x, o);
            let x_stone = x.count_ones() == o.count_ones();
            let mut empty = !(x | o);
            while empty != 0 {
                let m = empty.trailing_zeros() as usize;
                empty &= empty - 1;
                let slow = if x_stone {
                    canonical(x | 1 << m, o)
                } else {
                    canonical(x, o | 1 << m)
                };
                assert_eq!(images.canonical_after(m, x_stone), slow, "{x:x} {o:x} {m}");
            }
        }
    }

    #[test]
    fn canonical_forms_agree_across_images() {
        let x = 1 << 0 | 1 << 21;
        let o = 1 << 3 | 1 << 60;
        let (c, _) = canonical(x, o);
        for a in automorphisms() {
            assert_eq!(canonical(a.apply(x), a.apply(o)).0, c);
        }
        // The first move: corners (and centres) are one class, the 48 others another.
        let classes: HashSet<(Cells, Cells)> = (0..CELLS).map(|m| canonical(1 << m, 0).0).collect();
        assert_eq!(classes.len(), 2);
    }
}
