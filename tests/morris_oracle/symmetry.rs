//! The 16 board symmetries, built from coordinates: the 8 symmetries of the square
//! (rotations and reflections of (x, y) about the centre (3, 3)), each with or
//! without the inner/outer ring swap.

use super::geometry::{NUM_POINTS, coords, point_at};

/// Inner/outer swap on one coordinate: 0 <-> 2, 6 <-> 4; 1, 3, 5 fixed. Applied to
/// both coordinates it sends a1 to c3, d1 to d3, a4 to c4 and keeps the middle ring.
fn swap_rings(c: i32) -> i32 {
    match c {
        0 => 2,
        2 => 0,
        6 => 4,
        4 => 6,
        other => other,
    }
}

/// One of the 8 symmetries of the square, on coordinates relative to the centre.
fn dihedral(k: usize, u: i32, v: i32) -> (i32, i32) {
    match k {
        0 => (u, v),
        1 => (-v, u),
        2 => (-u, -v),
        3 => (v, -u),
        4 => (-u, v),
        5 => (u, -v),
        6 => (v, u),
        _ => (-v, -u),
    }
}

/// The 16 symmetries as point permutations, with byte lookup tables to map masks.
pub struct Symmetries {
    /// `perms[g][p]`: image of point `p` under symmetry `g` (`g = 0` is the identity).
    pub perms: Vec<[usize; NUM_POINTS]>,
    /// `luts[g][k][b]`: image of the bits `b` of byte `k` of a mask.
    luts: Vec<[[u32; 256]; 3]>,
}

impl Default for Symmetries {
    fn default() -> Self {
        Self::new()
    }
}

impl Symmetries {
    /// Builds the 16 permutations.
    pub fn new() -> Self {
        let mut perms = Vec::new();
        for swap in [false, true] {
            for k in 0..8 {
                let mut perm = [0usize; NUM_POINTS];
                for (p, image) in perm.iter_mut().enumerate() {
                    let (mut x, mut y) = coords(p);
                    if swap {
                        (x, y) = (swap_rings(x), swap_rings(y));
                    }
                    let (u, v) = dihedral(k, x - 3, y - 3);
                    *image = point_at(u + 3, v + 3).expect("a symmetry maps points to points");
                }
                perms.push(perm);
            }
        }
        let luts = perms
            .iter()
            .map(|perm| {
                let mut lut = [[0u32; 256]; 3];
                for (k, table) in lut.iter_mut().enumerate() {
                    for (b, image) in table.iter_mut().enumerate() {
                        for bit in 0..8 {
                            if b >> bit & 1 == 1 {
                                *image |= 1 << perm[8 * k + bit];
                            }
                        }
                    }
                }
                lut
            })
            .collect();
        Symmetries { perms, luts }
    }

    /// Number of symmetries (16).
    pub fn len(&self) -> usize {
        self.perms.len()
    }

    /// Always false (there is at least the identity).
    pub fn is_empty(&self) -> bool {
        self.perms.is_empty()
    }

    /// Image of a point mask under symmetry `g`.
    pub fn apply(&self, g: usize, mask: u32) -> u32 {
        let lut = &self.luts[g];
        lut[0][(mask & 0xff) as usize]
            | lut[1][(mask >> 8 & 0xff) as usize]
            | lut[2][(mask >> 16 & 0xff) as usize]
    }

    /// The canonical representative of the orbit of (mover, opp): the image with the
    /// smallest key `mover << 24 | opp`.
    pub fn canonical(&self, mover: u32, opp: u32) -> (u32, u32) {
        (0..self.len())
            .map(|g| (self.apply(g, mover), self.apply(g, opp)))
            .min_by_key(|&(m, o)| (u64::from(m) << 24) | u64::from(o))
            .expect("at least the identity")
    }

    /// Whether (mover, opp) is the canonical representative of its orbit.
    pub fn is_canonical(&self, mover: u32, opp: u32) -> bool {
        self.canonical(mover, opp) == (mover, opp)
    }
}
