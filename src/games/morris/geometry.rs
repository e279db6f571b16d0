//! Board geometry: the points, adjacency, mills and the 16 symmetries of each Morris
//! board, as [`Board`] types whose tables are computed at compile time (the hot
//! loops are monomorphised per board and only read static tables).
//!
//! Every board here is a set of concentric square rings of 8 points (corners and
//! side midpoints) joined at the midpoints: [`Nine`] has three rings (the board of
//! Nine Men's Morris and Lasker Morris), [`Six`] two (Six Men's Morris). A ring's
//! sides are mills; with three rings the four cross lines through the midpoints are
//! mills too (with two they have two points only). The 16 symmetries of either
//! board: the 8 of the square, optionally swapping the inner and outer ring.
//! [`Morabaraba`] is the nine board plus the four diagonals joining the corners of
//! the rings (a1-b2-c3, g1-f2-e3, a7-b6-c5, g7-f6-e5), lines and mills both; the
//! 16 symmetries map corners to corners of the same or swapped ring, so they keep
//! the diagonals.
//!
//! A set of points is a mask, bit `i` = point `i` in the board's algebraic order
//! (rank 1 upwards, files left to right).

/// Largest number of points of a board (masks fit 24 bits).
pub const MAX_POINTS: usize = 24;

/// Number of symmetries of every board.
pub const SYMMETRIES: usize = 16;

/// Most mills through one point on any board (a Morabaraba corner: its two ring
/// sides and its diagonal).
pub const MAX_MILLS_OF: usize = 3;

/// A mill mask no set of stones completes (pads [`Board::MILLS_OF`] for points on
/// fewer than [`MAX_MILLS_OF`] mills).
pub const NO_MILL: u32 = u32::MAX;

/// Which board a rule set plays on (the runtime name of a [`Board`] type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardKind {
    /// Three rings, 24 points, 16 mills ([`Nine`]).
    Nine,
    /// Two rings, 16 points, 8 mills ([`Six`]).
    Six,
    /// The nine board with the four corner diagonals, 20 mills ([`Morabaraba`]).
    Morabaraba,
}

/// Per symmetry, per byte of a mask: the image of that byte (three lookups per mask).
pub type SymBytes = [[[u32; 256]; 3]; SYMMETRIES];

/// A board: its tables, all computed at compile time from its rings.
pub trait Board: Copy + Send + Sync + 'static {
    /// The runtime name of the board.
    const KIND: BoardKind;
    /// Number of points.
    const POINTS: usize;
    /// Mask of all points.
    const FULL: u32 = (1 << Self::POINTS) - 1;
    /// Point names in algebraic order (rank 1 upwards, files left to right).
    const NAMES: &'static [&'static str];
    /// The rings, outer first, each as 8 point indices going round the ring from its
    /// lower-left corner (even positions corners, odd positions midpoints).
    const RINGS: &'static [[u8; 8]];
    /// `ADJACENT[p]`: mask of the points joined to `p` by a line of the board.
    const ADJACENT: &'static [u32; MAX_POINTS];
    /// The mills as masks of three points: the 4 sides of each ring (outer first),
    /// then with three rings the 4 cross lines, then any diagonals.
    const MILLS: &'static [u32];
    /// `MILLS_OF[p]`: the mills through point `p` ([`NO_MILL`] padding).
    const MILLS_OF: &'static [[u32; MAX_MILLS_OF]; MAX_POINTS];
    /// The 16 symmetries as point permutations: `SYM_PERM[s][p]` is the image of `p`.
    /// `s = 8 * swap + 4 * reflect + rotation`: `rotation` quarter turns, optionally a
    /// reflection first, optionally swapping the inner and outer ring. `s = 0` is the
    /// identity.
    const SYM_PERM: &'static [[u8; MAX_POINTS]; SYMMETRIES];
    /// `CYCLE_POINTS[s][i]`: the points on the cycles of length 2^i of symmetry `s`
    /// (every cycle of the 16 symmetries has length 1, 2 or 4).
    const CYCLE_POINTS: &'static [[u32; 3]; SYMMETRIES];

    /// The per-byte images of [`Board::SYM_PERM`] (a static of the board's).
    fn sym_bytes() -> &'static SymBytes;

    /// The image of the point set `mask` under symmetry `s`.
    #[inline(always)]
    fn transform(s: usize, mask: u32) -> u32 {
        let t = &Self::sym_bytes()[s];
        t[0][(mask & 0xff) as usize]
            | t[1][((mask >> 8) & 0xff) as usize]
            | t[2][(mask >> 16) as usize]
    }

    /// True if point `p` is part of a complete mill of `stones`.
    #[inline(always)]
    fn in_mill(stones: u32, p: usize) -> bool {
        let [a, b, c] = Self::MILLS_OF[p];
        stones & a == a || stones & b == b || stones & c == c
    }

    /// The stones of `stones` that stand in a complete mill of `stones`.
    #[inline]
    fn stones_in_mills(stones: u32) -> u32 {
        let mut out = 0;
        for &m in Self::MILLS {
            if stones & m == m {
                out |= m;
            }
        }
        out
    }

    /// The stones of `stones` an opponent may capture: those not in a mill, or all
    /// of them when every stone stands in a mill.
    #[inline]
    fn capturable(stones: u32) -> u32 {
        let free = stones & !Self::stones_in_mills(stones);
        if free == 0 { stones } else { free }
    }

    /// Index of a point from its name.
    fn point_from_name(name: &str) -> Option<usize> {
        Self::NAMES.iter().position(|n| *n == name)
    }
}

/// The board of Nine Men's Morris (and Lasker Morris): three rings, 24 points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Nine;

/// The board of Six Men's Morris: two rings, 16 points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Six;

/// The board of Morabaraba: the nine board plus the four corner diagonals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Morabaraba;

/// The three rings of the nine board (outer, middle, inner).
const NINE_RINGS: [[u8; 8]; 3] = [
    [0, 1, 2, 14, 23, 22, 21, 9],  // a1 d1 g1 g4 g7 d7 a7 a4
    [3, 4, 5, 13, 20, 19, 18, 10], // b2 d2 f2 f4 f6 d6 b6 b4
    [6, 7, 8, 12, 17, 16, 15, 11], // c3 d3 e3 e4 e5 d5 c5 c4
];

/// The two rings of the six board (outer, inner).
const SIX_RINGS: [[u8; 8]; 2] = [
    [0, 1, 2, 9, 15, 14, 13, 6], // a1 c1 e1 e3 e5 c5 a5 a3
    [3, 4, 5, 8, 12, 11, 10, 7], // b2 c2 d2 d3 d4 c4 b4 b3
];

const NINE_ADJACENT: [u32; MAX_POINTS] = adjacency(&NINE_RINGS);
const SIX_ADJACENT: [u32; MAX_POINTS] = adjacency(&SIX_RINGS);
const NINE_MILLS: [u32; 16] = mills(&NINE_RINGS);
const SIX_MILLS: [u32; 8] = mills(&SIX_RINGS);
const NINE_MILLS_OF: [[u32; MAX_MILLS_OF]; MAX_POINTS] = mills_of(&NINE_MILLS);
const SIX_MILLS_OF: [[u32; MAX_MILLS_OF]; MAX_POINTS] = mills_of(&SIX_MILLS);
const MORABARABA_DIAGONALS: [u32; 4] = diagonals(&NINE_RINGS);
const MORABARABA_ADJACENT: [u32; MAX_POINTS] = with_lines(NINE_ADJACENT, &MORABARABA_DIAGONALS);
const MORABARABA_MILLS: [u32; 20] = concat_mills(&NINE_MILLS, &MORABARABA_DIAGONALS);
const MORABARABA_MILLS_OF: [[u32; MAX_MILLS_OF]; MAX_POINTS] = mills_of(&MORABARABA_MILLS);
const NINE_SYM_PERM: [[u8; MAX_POINTS]; SYMMETRIES] = sym_perm(&NINE_RINGS, 24);
const SIX_SYM_PERM: [[u8; MAX_POINTS]; SYMMETRIES] = sym_perm(&SIX_RINGS, 16);
const NINE_CYCLE_POINTS: [[u32; 3]; SYMMETRIES] = cycle_points(&NINE_SYM_PERM, 24);
const SIX_CYCLE_POINTS: [[u32; 3]; SYMMETRIES] = cycle_points(&SIX_SYM_PERM, 16);
static NINE_SYM_BYTES: SymBytes = sym_bytes(&NINE_SYM_PERM);
static SIX_SYM_BYTES: SymBytes = sym_bytes(&SIX_SYM_PERM);

impl Board for Nine {
    const KIND: BoardKind = BoardKind::Nine;
    const POINTS: usize = 24;
    const NAMES: &'static [&'static str] = &[
        "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4", "e4", "f4", "g4",
        "c5", "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
    ];
    const RINGS: &'static [[u8; 8]] = &NINE_RINGS;
    const ADJACENT: &'static [u32; MAX_POINTS] = &NINE_ADJACENT;
    const MILLS: &'static [u32] = &NINE_MILLS;
    const MILLS_OF: &'static [[u32; MAX_MILLS_OF]; MAX_POINTS] = &NINE_MILLS_OF;
    const SYM_PERM: &'static [[u8; MAX_POINTS]; SYMMETRIES] = &NINE_SYM_PERM;
    const CYCLE_POINTS: &'static [[u32; 3]; SYMMETRIES] = &NINE_CYCLE_POINTS;

    #[inline(always)]
    fn sym_bytes() -> &'static SymBytes {
        &NINE_SYM_BYTES
    }
}

impl Board for Six {
    const KIND: BoardKind = BoardKind::Six;
    const POINTS: usize = 16;
    const NAMES: &'static [&'static str] = &[
        "a1", "c1", "e1", "b2", "c2", "d2", "a3", "b3", "d3", "e3", "b4", "c4", "d4", "a5", "c5",
        "e5",
    ];
    const RINGS: &'static [[u8; 8]] = &SIX_RINGS;
    const ADJACENT: &'static [u32; MAX_POINTS] = &SIX_ADJACENT;
    const MILLS: &'static [u32] = &SIX_MILLS;
    const MILLS_OF: &'static [[u32; MAX_MILLS_OF]; MAX_POINTS] = &SIX_MILLS_OF;
    const SYM_PERM: &'static [[u8; MAX_POINTS]; SYMMETRIES] = &SIX_SYM_PERM;
    const CYCLE_POINTS: &'static [[u32; 3]; SYMMETRIES] = &SIX_CYCLE_POINTS;

    #[inline(always)]
    fn sym_bytes() -> &'static SymBytes {
        &SIX_SYM_BYTES
    }
}

impl Board for Morabaraba {
    const KIND: BoardKind = BoardKind::Morabaraba;
    const POINTS: usize = 24;
    const NAMES: &'static [&'static str] = Nine::NAMES;
    const RINGS: &'static [[u8; 8]] = &NINE_RINGS;
    const ADJACENT: &'static [u32; MAX_POINTS] = &MORABARABA_ADJACENT;
    const MILLS: &'static [u32] = &MORABARABA_MILLS;
    const MILLS_OF: &'static [[u32; MAX_MILLS_OF]; MAX_POINTS] = &MORABARABA_MILLS_OF;
    // The nine board's: its symmetries keep the diagonals (a unit test checks).
    const SYM_PERM: &'static [[u8; MAX_POINTS]; SYMMETRIES] = &NINE_SYM_PERM;
    const CYCLE_POINTS: &'static [[u32; 3]; SYMMETRIES] = &NINE_CYCLE_POINTS;

    #[inline(always)]
    fn sym_bytes() -> &'static SymBytes {
        &NINE_SYM_BYTES
    }
}

/// Points of a board with `rings` rings.
const fn points_of(rings: &[[u8; 8]]) -> usize {
    8 * rings.len()
}

/// `(ring, position in ring)` of every point (inverse of the rings).
const fn ring_of(rings: &[[u8; 8]]) -> [(u8, u8); MAX_POINTS] {
    let mut out = [(0u8, 0u8); MAX_POINTS];
    let mut r = 0;
    while r < rings.len() {
        let mut k = 0;
        while k < 8 {
            out[rings[r][k] as usize] = (r as u8, k as u8);
            k += 1;
        }
        r += 1;
    }
    out
}

const fn bit(rings: &[[u8; 8]], r: usize, k: usize) -> u32 {
    1 << rings[r][k % 8]
}

/// Neighbours along each ring, and between neighbouring rings at the midpoints.
const fn adjacency(rings: &[[u8; 8]]) -> [u32; MAX_POINTS] {
    let mut adj = [0u32; MAX_POINTS];
    let mut r = 0;
    while r < rings.len() {
        let mut k = 0;
        while k < 8 {
            let p = rings[r][k] as usize;
            adj[p] |= bit(rings, r, k + 1) | bit(rings, r, k + 7);
            if k % 2 == 1 {
                if r > 0 {
                    adj[p] |= bit(rings, r - 1, k);
                }
                if r + 1 < rings.len() {
                    adj[p] |= bit(rings, r + 1, k);
                }
            }
            k += 1;
        }
        r += 1;
    }
    adj
}

/// The sides of every ring, then (with three rings) the cross lines through the
/// midpoints; `N` = their number.
const fn mills<const N: usize>(rings: &[[u8; 8]]) -> [u32; N] {
    let mut out = [0u32; N];
    let mut n = 0;
    let mut r = 0;
    while r < rings.len() {
        let mut side = 0;
        while side < 4 {
            out[n] =
                bit(rings, r, 2 * side) | bit(rings, r, 2 * side + 1) | bit(rings, r, 2 * side + 2);
            n += 1;
            side += 1;
        }
        r += 1;
    }
    if rings.len() == 3 {
        let mut k = 1;
        while k < 8 {
            out[n] = bit(rings, 0, k) | bit(rings, 1, k) | bit(rings, 2, k);
            n += 1;
            k += 2;
        }
    }
    assert!(n == N, "N is the number of mills");
    out
}

/// The diagonals of a three-ring board: from each corner of the outer ring through
/// the same corner of the middle ring to that of the inner ring.
const fn diagonals(rings: &[[u8; 8]; 3]) -> [u32; 4] {
    let mut out = [0u32; 4];
    let mut corner = 0;
    while corner < 4 {
        out[corner] =
            bit(rings, 0, 2 * corner) | bit(rings, 1, 2 * corner) | bit(rings, 2, 2 * corner);
        corner += 1;
    }
    out
}

/// `adjacent` with the two segments of each line of three points added.
const fn with_lines(mut adjacent: [u32; MAX_POINTS], lines: &[u32]) -> [u32; MAX_POINTS] {
    let mut i = 0;
    while i < lines.len() {
        // The middle point of a diagonal is the one on the middle ring.
        let points = line_points(lines[i]);
        let (a, b, c) = (points[0], points[1], points[2]);
        adjacent[a] |= 1 << b;
        adjacent[b] |= (1 << a) | (1 << c);
        adjacent[c] |= 1 << b;
        i += 1;
    }
    adjacent
}

/// The three points of a diagonal, outer ring first (the ring index of a nine
/// point grows inwards).
const fn line_points(line: u32) -> [usize; 3] {
    let ring_pos = ring_of(&NINE_RINGS);
    let mut out = [0usize; 3];
    let mut p = 0;
    while p < MAX_POINTS {
        if line & (1 << p) != 0 {
            out[ring_pos[p].0 as usize] = p;
        }
        p += 1;
    }
    out
}

/// `first` followed by `second`; `N` = their lengths together.
const fn concat_mills<const N: usize>(first: &[u32], second: &[u32]) -> [u32; N] {
    assert!(first.len() + second.len() == N, "N is the number of mills");
    let mut out = [0u32; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < first.len() {
            first[i]
        } else {
            second[i - first.len()]
        };
        i += 1;
    }
    out
}

/// The (at most [`MAX_MILLS_OF`]) mills through every point, [`NO_MILL`] padding.
const fn mills_of(mills: &[u32]) -> [[u32; MAX_MILLS_OF]; MAX_POINTS] {
    let mut out = [[NO_MILL; MAX_MILLS_OF]; MAX_POINTS];
    let mut count = [0usize; MAX_POINTS];
    let mut i = 0;
    while i < mills.len() {
        let mut p = 0;
        while p < MAX_POINTS {
            if mills[i] & (1 << p) != 0 {
                assert!(
                    count[p] < MAX_MILLS_OF,
                    "a point lies on at most three mills"
                );
                out[p][count[p]] = mills[i];
                count[p] += 1;
            }
            p += 1;
        }
        i += 1;
    }
    out
}

/// The 16 symmetries (see [`Board::SYM_PERM`]) of a board of `points` points.
const fn sym_perm(rings: &[[u8; 8]], points: usize) -> [[u8; MAX_POINTS]; SYMMETRIES] {
    assert!(points == points_of(rings), "8 points a ring");
    let ring_pos = ring_of(rings);
    let mut out = [[0u8; MAX_POINTS]; SYMMETRIES];
    let mut s = 0;
    while s < SYMMETRIES {
        let rot = s % 4;
        let refl = (s / 4) % 2 == 1;
        let swap = s / 8 == 1;
        let mut p = 0;
        while p < MAX_POINTS {
            if p >= points {
                // Past the board: fixed (never set in a mask).
                out[s][p] = p as u8;
                p += 1;
                continue;
            }
            let (r, k) = ring_pos[p];
            let k2 = if refl {
                (2 * rot + 8 - k as usize) % 8
            } else {
                (k as usize + 2 * rot) % 8
            };
            let r2 = if swap {
                rings.len() - 1 - r as usize
            } else {
                r as usize
            };
            out[s][p] = rings[r2][k2];
            p += 1;
        }
        s += 1;
    }
    out
}

/// Per symmetry, per byte of a mask: the image of that byte.
const fn sym_bytes(perm: &[[u8; MAX_POINTS]; SYMMETRIES]) -> SymBytes {
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
                        img |= 1 << perm[s][8 * j + b];
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

/// The points of each symmetry's cycles of length 1, 2 and 4.
const fn cycle_points(
    perm: &[[u8; MAX_POINTS]; SYMMETRIES],
    points: usize,
) -> [[u32; 3]; SYMMETRIES] {
    let mut out = [[0u32; 3]; SYMMETRIES];
    let mut s = 0;
    while s < SYMMETRIES {
        let mut p = 0;
        while p < points {
            let mut len = 1usize;
            let mut q = perm[s][p] as usize;
            while q != p {
                q = perm[s][q] as usize;
                len += 1;
            }
            let i = len.trailing_zeros() as usize;
            assert!(len == 1 << i && i < 3, "cycles of length 1, 2 or 4");
            out[s][i] |= 1 << p;
            p += 1;
        }
        s += 1;
    }
    out
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

    fn map_mask<B: Board>(s: usize, mask: u32) -> u32 {
        bits(mask).fold(0, |acc, p| acc | 1 << B::SYM_PERM[s][p])
    }

    fn point<B: Board>(name: &str) -> u32 {
        1 << B::point_from_name(name).unwrap()
    }

    #[test]
    fn adjacency_is_symmetric_and_sized() {
        fn check<B: Board>(edges_expected: u32) {
            let mut edges = 0;
            for (p, &adj) in B::ADJACENT.iter().enumerate() {
                assert_eq!(adj & (1 << p), 0);
                assert_eq!(adj & !B::FULL, 0);
                for q in bits(adj) {
                    assert_ne!(B::ADJACENT[q] & (1 << p), 0);
                }
                edges += adj.count_ones();
            }
            assert_eq!(edges / 2, edges_expected);
        }
        // 3 rings x 8 sides + 4 cross lines x 2 segments.
        check::<Nine>(32);
        check::<Morabaraba>(40);
        // 2 rings x 8 sides + 4 cross segments.
        check::<Six>(20);
        let n = point::<Nine>;
        assert_eq!(
            Nine::ADJACENT[Nine::point_from_name("d1").unwrap()],
            n("a1") | n("g1") | n("d2")
        );
        assert_eq!(
            Nine::ADJACENT[Nine::point_from_name("c4").unwrap()] & n("e4"),
            0
        );
        assert_eq!(
            Nine::ADJACENT[Nine::point_from_name("b4").unwrap()],
            n("a4") | n("c4") | n("b2") | n("b6")
        );
        // The six board as docs/FORMAT.md §4.5 draws it.
        let s = point::<Six>;
        let adj = |name: &str| Six::ADJACENT[Six::point_from_name(name).unwrap()];
        assert_eq!(adj("c1"), s("a1") | s("e1") | s("c2"));
        assert_eq!(adj("c2"), s("b2") | s("d2") | s("c1"));
        assert_eq!(adj("a3"), s("a1") | s("a5") | s("b3"));
        assert_eq!(adj("d3"), s("d2") | s("d4") | s("e3"));
        assert_eq!(adj("c4"), s("b4") | s("d4") | s("c5"));
        assert_eq!(adj("b2"), s("c2") | s("b3"));
        assert_eq!(adj("e5"), s("c5") | s("e3"));
    }

    #[test]
    fn mills_are_the_lines() {
        let n = point::<Nine>;
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
            assert!(Nine::MILLS.contains(&m), "{e:?}");
        }
        assert!(!Nine::MILLS.contains(&(n("c4") | n("d5") | n("e4"))));
        for p in 0..Nine::POINTS {
            assert_eq!(Nine::MILLS.iter().filter(|m| *m & (1 << p) != 0).count(), 2);
        }
        // Six: the sides of the two squares, nothing else.
        let s = point::<Six>;
        let sides = [
            ["a1", "c1", "e1"],
            ["e1", "e3", "e5"],
            ["a5", "c5", "e5"],
            ["a1", "a3", "a5"],
            ["b2", "c2", "d2"],
            ["d2", "d3", "d4"],
            ["b4", "c4", "d4"],
            ["b2", "b3", "b4"],
        ];
        let mut expected: Vec<u32> = sides.iter().map(|e| s(e[0]) | s(e[1]) | s(e[2])).collect();
        let mut mills = Six::MILLS.to_vec();
        expected.sort();
        mills.sort();
        assert_eq!(mills, expected);
        for p in 0..Six::POINTS {
            let on = Six::MILLS.iter().filter(|m| *m & (1 << p) != 0).count();
            // Corners lie on two sides, midpoints on one.
            assert_eq!(
                on,
                if Six::ADJACENT[p].count_ones() == 2 {
                    2
                } else {
                    1
                },
                "{}",
                Six::NAMES[p]
            );
            assert_eq!(
                Six::MILLS_OF[p].iter().filter(|&&m| m != NO_MILL).count(),
                on
            );
        }
        let mut sorted = Nine::MILLS.to_vec();
        sorted.sort();
        assert!(sorted.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn names_are_in_algebraic_order() {
        fn check<B: Board>() {
            assert_eq!(B::NAMES.len(), B::POINTS);
            let key = |n: &str| (n.as_bytes()[1], n.as_bytes()[0]);
            assert!(B::NAMES.windows(2).all(|w| key(w[0]) < key(w[1])));
        }
        check::<Nine>();
        check::<Six>();
        check::<Morabaraba>();
        assert_eq!(
            Six::NAMES.join(" "),
            "a1 c1 e1 b2 c2 d2 a3 b3 d3 e3 b4 c4 d4 a5 c5 e5"
        );
    }

    #[test]
    fn symmetries_preserve_lines_and_form_a_group() {
        fn check<B: Board>() {
            let mut seen = std::collections::HashSet::new();
            for s in 0..SYMMETRIES {
                assert!(seen.insert(B::SYM_PERM[s]), "duplicate symmetry {s}");
                for p in 0..B::POINTS {
                    assert_eq!(
                        map_mask::<B>(s, B::ADJACENT[p]),
                        B::ADJACENT[B::SYM_PERM[s][p] as usize]
                    );
                }
                for &m in B::MILLS {
                    assert!(B::MILLS.contains(&map_mask::<B>(s, m)));
                }
                for mask in [0u32, 1, 0xabcdef, B::FULL, 0x123456] {
                    let mask = mask & B::FULL;
                    assert_eq!(B::transform(s, mask), map_mask::<B>(s, mask));
                    assert_eq!(B::transform(s, mask) & !B::FULL, 0);
                }
            }
            assert!((0..B::POINTS).all(|p| B::SYM_PERM[0][p] as usize == p));
            // Closure: every composition is one of the 16.
            for pa in B::SYM_PERM {
                for pb in B::SYM_PERM {
                    let c: [u8; MAX_POINTS] = std::array::from_fn(|p| pa[pb[p] as usize]);
                    assert!(seen.contains(&c));
                }
            }
        }
        check::<Nine>();
        check::<Six>();
        check::<Morabaraba>();
    }

    #[test]
    fn morabaraba_adds_the_corner_diagonals() {
        let n = point::<Morabaraba>;
        let adj = |name: &str| Morabaraba::ADJACENT[Morabaraba::point_from_name(name).unwrap()];
        // The nine board's lines plus 4 diagonals of 2 segments.
        let edges: u32 = Morabaraba::ADJACENT.iter().map(|a| a.count_ones()).sum();
        assert_eq!(edges / 2, 32 + 8);
        assert_eq!(adj("a1"), n("d1") | n("a4") | n("b2"));
        assert_eq!(adj("b2"), n("d2") | n("b4") | n("a1") | n("c3"));
        assert_eq!(adj("e5"), n("d5") | n("e4") | n("f6"));
        assert_eq!(adj("d1"), Nine::ADJACENT[1]);
        let diagonals = [
            ["a1", "b2", "c3"],
            ["g1", "f2", "e3"],
            ["a7", "b6", "c5"],
            ["g7", "f6", "e5"],
        ];
        assert_eq!(Morabaraba::MILLS.len(), 20);
        assert_eq!(&Morabaraba::MILLS[..16], Nine::MILLS);
        for d in diagonals {
            assert!(
                Morabaraba::MILLS.contains(&(n(d[0]) | n(d[1]) | n(d[2]))),
                "{d:?}"
            );
        }
        for p in 0..Morabaraba::POINTS {
            let on = Morabaraba::MILLS
                .iter()
                .filter(|m| *m & (1 << p) != 0)
                .count();
            // Corners lie on two sides and a diagonal, midpoints on two lines.
            let corner = Nine::ADJACENT[p].count_ones() == 2;
            assert_eq!(on, if corner { 3 } else { 2 }, "{}", Morabaraba::NAMES[p]);
            assert_eq!(
                Morabaraba::MILLS_OF[p]
                    .iter()
                    .filter(|&&m| m != NO_MILL)
                    .count(),
                on
            );
        }
        // A diagonal mill is a mill on this board only.
        let diagonal = n("a7") | n("b6") | n("c5");
        let c5 = Morabaraba::point_from_name("c5").unwrap();
        assert!(Morabaraba::in_mill(diagonal, c5));
        assert!(!Nine::in_mill(diagonal, c5));
        assert_eq!(Morabaraba::capturable(diagonal | n("d1")), n("d1"));
    }

    #[test]
    fn capturable_respects_mills() {
        let n = point::<Nine>;
        let mill = n("a1") | n("d1") | n("g1");
        assert_eq!(Nine::capturable(mill | n("b2")), n("b2"));
        assert_eq!(Nine::capturable(mill), mill);
        assert!(Nine::in_mill(mill, Nine::point_from_name("d1").unwrap()));
        assert!(!Nine::in_mill(mill, Nine::point_from_name("d2").unwrap()));
        let s = point::<Six>;
        let mill = s("b2") | s("b3") | s("b4");
        assert!(Six::in_mill(mill, Six::point_from_name("b3").unwrap()));
        assert!(!Six::in_mill(
            s("c1") | s("c2"),
            Six::point_from_name("c2").unwrap()
        ));
        assert_eq!(Six::capturable(mill | s("e5")), s("e5"));
    }
}
