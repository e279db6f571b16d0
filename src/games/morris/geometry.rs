//! Board geometry: the 24 points, adjacency, the 16 mills and the 16 symmetries.
//!
//! A set of points is a 24-bit mask, bit `i` = point `i` in algebraic order
//! (`a1 d1 g1 b2 ... a7 d7 g7`). Everything here is computed at compile time so the
//! hot loops only read static tables.

/// Number of points on the board.
pub const POINTS: usize = 24;

/// Mask of all 24 points.
pub const FULL: u32 = (1 << POINTS) - 1;

/// Point names in algebraic order (rank 1 upwards, files left to right).
pub const NAMES: [&str; POINTS] = [
    "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4", "e4", "f4", "g4", "c5",
    "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
];

/// The three rings (outer, middle, inner), each as 8 point indices going round the
/// ring from its lower-left corner: even positions are corners, odd positions midpoints.
/// Position `k` of every ring lies on the same ray from the centre, so the cross lines
/// join position `k` (odd) of the three rings.
pub const RINGS: [[u8; 8]; 3] = [
    [0, 1, 2, 14, 23, 22, 21, 9],  // a1 d1 g1 g4 g7 d7 a7 a4
    [3, 4, 5, 13, 20, 19, 18, 10], // b2 d2 f2 f4 f6 d6 b6 b4
    [6, 7, 8, 12, 17, 16, 15, 11], // c3 d3 e3 e4 e5 d5 c5 c4
];

/// `(ring, position in ring)` of every point.
const fn ring_of() -> [(u8, u8); POINTS] {
    let mut out = [(0u8, 0u8); POINTS];
    let mut r = 0;
    while r < 3 {
        let mut k = 0;
        while k < 8 {
            out[RINGS[r][k] as usize] = (r as u8, k as u8);
            k += 1;
        }
        r += 1;
    }
    out
}

/// `(ring, position in ring)` of every point (inverse of [`RINGS`]).
pub const RING_POS: [(u8, u8); POINTS] = ring_of();

const fn bit(r: usize, k: usize) -> u32 {
    1 << RINGS[r][k % 8]
}

const fn adjacency() -> [u32; POINTS] {
    let mut adj = [0u32; POINTS];
    let mut r = 0;
    while r < 3 {
        let mut k = 0;
        while k < 8 {
            let p = RINGS[r][k] as usize;
            adj[p] |= bit(r, k + 1) | bit(r, k + 7);
            if k % 2 == 1 {
                if r > 0 {
                    adj[p] |= bit(r - 1, k);
                }
                if r < 2 {
                    adj[p] |= bit(r + 1, k);
                }
            }
            k += 1;
        }
        r += 1;
    }
    adj
}

/// `ADJACENT[p]`: mask of the points joined to `p` by a line of the board.
pub const ADJACENT: [u32; POINTS] = adjacency();

const fn mills() -> [u32; 16] {
    let mut out = [0u32; 16];
    let mut n = 0;
    let mut r = 0;
    while r < 3 {
        let mut side = 0;
        while side < 4 {
            out[n] = bit(r, 2 * side) | bit(r, 2 * side + 1) | bit(r, 2 * side + 2);
            n += 1;
            side += 1;
        }
        r += 1;
    }
    let mut k = 1;
    while k < 8 {
        out[n] = bit(0, k) | bit(1, k) | bit(2, k);
        n += 1;
        k += 2;
    }
    out
}

/// The 16 mills as masks of three points: the 4 sides of each ring (outer, middle,
/// inner), then the 4 cross lines (d1-d2-d3, g4-f4-e4, d7-d6-d5, a4-b4-c4).
pub const MILLS: [u32; 16] = mills();

const fn mills_of() -> [[u32; 2]; POINTS] {
    let mut out = [[0u32; 2]; POINTS];
    let mut count = [0usize; POINTS];
    let mut i = 0;
    while i < 16 {
        let mut p = 0;
        while p < POINTS {
            if MILLS[i] & (1 << p) != 0 {
                out[p][count[p]] = MILLS[i];
                count[p] += 1;
            }
            p += 1;
        }
        i += 1;
    }
    out
}

/// `MILLS_OF[p]`: the two mills through point `p` (every point lies on exactly two).
pub const MILLS_OF: [[u32; 2]; POINTS] = mills_of();

/// True if point `p` is part of a complete mill of `stones`.
#[inline]
pub fn in_mill(stones: u32, p: usize) -> bool {
    let [a, b] = MILLS_OF[p];
    stones & a == a || stones & b == b
}

/// The stones of `stones` that stand in a complete mill of `stones`.
#[inline]
pub fn stones_in_mills(stones: u32) -> u32 {
    let mut out = 0;
    for m in MILLS {
        if stones & m == m {
            out |= m;
        }
    }
    out
}

/// The stones of `stones` an opponent may capture: those not in a mill, or all of
/// them when every stone stands in a mill.
#[inline]
pub fn capturable(stones: u32) -> u32 {
    let free = stones & !stones_in_mills(stones);
    if free == 0 { stones } else { free }
}

/// Number of symmetries of the board.
pub const SYMMETRIES: usize = 16;

const fn sym_perm() -> [[u8; POINTS]; SYMMETRIES] {
    let mut out = [[0u8; POINTS]; SYMMETRIES];
    let mut s = 0;
    while s < SYMMETRIES {
        let rot = s % 4;
        let refl = (s / 4) % 2 == 1;
        let swap = s / 8 == 1;
        let mut p = 0;
        while p < POINTS {
            let (r, k) = RING_POS[p];
            let k2 = if refl {
                (2 * rot + 8 - k as usize) % 8
            } else {
                (k as usize + 2 * rot) % 8
            };
            let r2 = if swap { 2 - r as usize } else { r as usize };
            out[s][p] = RINGS[r2][k2];
            p += 1;
        }
        s += 1;
    }
    out
}

/// The 16 symmetries as point permutations: `SYM_PERM[s][p]` is the image of `p`.
/// `s = 8 * swap + 4 * reflect + rotation`: `rotation` quarter turns, optionally a
/// reflection first, optionally swapping the inner and outer ring. `s = 0` is the
/// identity.
pub const SYM_PERM: [[u8; POINTS]; SYMMETRIES] = sym_perm();

const fn sym_bytes() -> [[[u32; 256]; 3]; SYMMETRIES] {
    let mut out = [[[0u32; 256]; 3]; SYMMETRIES];
    let mut s = 0;
    while s < SYMMETRIES {
        let mut j = 0;
        while j < 3 {
            let mut v = 0;
            while v < 256 {
                let mut img = 0u32;
                let mut b = 0;
                while b < 8 {
                    if v & (1 << b) != 0 {
                        img |= 1 << SYM_PERM[s][8 * j + b];
                    }
                    b += 1;
                }
                out[s][j][v] = img;
                v += 1;
            }
            j += 1;
        }
        s += 1;
    }
    out
}

/// Per symmetry, per byte of a mask: the image of that byte (three lookups per mask).
static SYM_BYTES: [[[u32; 256]; 3]; SYMMETRIES] = sym_bytes();

/// The image of the point set `mask` under symmetry `s`.
#[inline(always)]
pub fn transform(s: usize, mask: u32) -> u32 {
    let t = &SYM_BYTES[s];
    t[0][(mask & 0xff) as usize] | t[1][((mask >> 8) & 0xff) as usize] | t[2][(mask >> 16) as usize]
}

/// Index of a point from its name (`a1`..`g7`).
pub fn point_from_name(name: &str) -> Option<usize> {
    NAMES.iter().position(|n| *n == name)
}

/// Iterator over the indices of the set bits of a mask, lowest first.
#[inline]
pub fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(p)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_mask(s: usize, mask: u32) -> u32 {
        bits(mask).fold(0, |acc, p| acc | 1 << SYM_PERM[s][p])
    }

    #[test]
    fn adjacency_is_symmetric_and_sized() {
        let mut edges = 0;
        for (p, &adj) in ADJACENT.iter().enumerate() {
            assert_eq!(adj & (1 << p), 0);
            for q in bits(adj) {
                assert_ne!(ADJACENT[q] & (1 << p), 0);
            }
            edges += adj.count_ones();
        }
        // 3 rings x 8 sides + 4 cross lines x 2 segments.
        assert_eq!(edges / 2, 32);
        let n = |s: &str| point_from_name(s).unwrap();
        assert_eq!(
            ADJACENT[n("d1")],
            1 << n("a1") | 1 << n("g1") | 1 << n("d2")
        );
        assert_eq!(ADJACENT[n("c4")] & (1 << n("e4")), 0);
        assert_eq!(
            ADJACENT[n("b4")],
            1 << n("a4") | 1 << n("c4") | 1 << n("b2") | 1 << n("b6")
        );
    }

    #[test]
    fn mills_are_the_sixteen_lines() {
        let n = |s: &str| 1u32 << point_from_name(s).unwrap();
        let expect = [
            ["a1", "d1", "g1"],
            ["a4", "b4", "c4"],
            ["e4", "f4", "g4"],
            ["d1", "d2", "d3"],
            ["d5", "d6", "d7"],
            ["c3", "d3", "e3"],
            ["g1", "g4", "g7"],
            ["b2", "b4", "b6"],
        ];
        for e in expect {
            let m = n(e[0]) | n(e[1]) | n(e[2]);
            assert!(MILLS.contains(&m), "{e:?}");
        }
        assert!(!MILLS.contains(&(n("c4") | n("d5") | n("e4"))));
        for p in 0..POINTS {
            assert_eq!(MILLS.iter().filter(|m| *m & (1 << p) != 0).count(), 2);
        }
        let mut sorted = MILLS;
        sorted.sort();
        assert!(sorted.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn symmetries_preserve_lines_and_form_a_group() {
        let mut seen = std::collections::HashSet::new();
        for s in 0..SYMMETRIES {
            assert!(seen.insert(SYM_PERM[s]), "duplicate symmetry {s}");
            for p in 0..POINTS {
                assert_eq!(map_mask(s, ADJACENT[p]), ADJACENT[SYM_PERM[s][p] as usize]);
            }
            for m in MILLS {
                assert!(MILLS.contains(&map_mask(s, m)));
            }
            for mask in [0u32, 1, 0xabcdef, FULL, 0x123456] {
                assert_eq!(transform(s, mask), map_mask(s, mask));
            }
        }
        assert!((0..POINTS).all(|p| SYM_PERM[0][p] as usize == p));
        // Closure: every composition is one of the 16.
        for pa in &SYM_PERM {
            for pb in &SYM_PERM {
                let c: [u8; POINTS] = std::array::from_fn(|p| pa[pb[p] as usize]);
                assert!(seen.contains(&c));
            }
        }
    }

    #[test]
    fn capturable_respects_mills() {
        let n = |s: &str| 1u32 << point_from_name(s).unwrap();
        let mill = n("a1") | n("d1") | n("g1");
        assert_eq!(capturable(mill | n("b2")), n("b2"));
        assert_eq!(capturable(mill), mill);
        assert!(in_mill(mill, point_from_name("d1").unwrap()));
        assert!(!in_mill(mill, point_from_name("d2").unwrap()));
    }
}
