//! Board symmetries as line permutations, and fast canonical forms.
//!
//! A rectangular board has 4 symmetries (identity, left-right mirror, top-bottom
//! mirror, 180 degree rotation); a square board has 8 (those four plus the transpose,
//! the two quarter turns and the anti-transpose). Each symmetry is a permutation of
//! the lines that maps boxes onto boxes, so it preserves the value of every position.
//!
//! Applying a symmetry to a position is done byte by byte with lookup tables: for
//! symmetry `s`, byte `i` and byte value `v`, the table holds the image of the lines
//! `8i..8i+8` selected by `v`; the image of a position is the OR of one lookup per
//! byte. The canonical form of a position is the smallest of its images.

use super::board::{Board, Lines};

/// The symmetries of one board, with per-symmetry line permutations and byte-wise
/// lookup tables for applying them to positions.
#[derive(Clone)]
pub struct Symmetries {
    /// `perm[s][l]`: the line that line `l` becomes under symmetry `s`.
    perm: Vec<Vec<usize>>,
    /// `inverse[s][l]`: the line that becomes line `l` under symmetry `s`.
    inverse: Vec<Vec<usize>>,
    /// Number of bytes a position of this board spans.
    bytes: usize,
    /// `table[(s * bytes + i) * 256 + v]`: image of byte `i` with value `v`.
    table: Vec<Lines>,
}

/// A symmetry as a map of dot coordinates `(y, x)`, `y` in `0..=R`, `x` in `0..=C`.
type DotMap = fn(usize, usize, usize, usize) -> (usize, usize);

/// The dot maps: the first four are valid on every board, the last four (which swap
/// rows and columns) only on square boards.
const DOT_MAPS: [DotMap; 8] = [
    |y, x, _, _| (y, x),
    |y, x, _, c| (y, c - x),
    |y, x, r, _| (r - y, x),
    |y, x, r, c| (r - y, c - x),
    |y, x, _, _| (x, y),
    |y, x, _, c| (x, c - y),
    |y, x, r, _| (r - x, y),
    |y, x, r, c| (r - x, c - y),
];

impl std::fmt::Debug for Symmetries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symmetries")
            .field("permutations", &self.perm)
            .finish_non_exhaustive()
    }
}

impl Symmetries {
    /// Computes the symmetries of `board`: 8 if it is square, 4 otherwise. Symmetry 0
    /// is always the identity.
    pub fn new(board: Board) -> Symmetries {
        let count = if board.rows() == board.cols() { 8 } else { 4 };
        Symmetries::first(board, count)
    }

    /// The identity alone: for positions whose structure no symmetry keeps (chains).
    pub fn identity(board: Board) -> Symmetries {
        Symmetries::first(board, 1)
    }

    /// The first `count` symmetries of [`DOT_MAPS`].
    fn first(board: Board, count: usize) -> Symmetries {
        let (rows, cols) = (board.rows(), board.cols());
        let lines = board.num_lines();
        let hcount = (rows + 1) * cols;
        // Endpoints (two dots) of every line.
        let ends = |l: usize| -> [(usize, usize); 2] {
            if l < hcount {
                let (r, c) = (l / cols, l % cols);
                [(r, c), (r, c + 1)]
            } else {
                let i = l - hcount;
                let (r, c) = (i / (cols + 1), i % (cols + 1));
                [(r, c), (r + 1, c)]
            }
        };
        let perm: Vec<Vec<usize>> = DOT_MAPS[..count]
            .iter()
            .map(|map| {
                (0..lines)
                    .map(|l| {
                        let [a, b] = ends(l).map(|(y, x)| map(y, x, rows, cols));
                        if a.0 == b.0 {
                            board.h(a.0, a.1.min(b.1))
                        } else {
                            board.v(a.0.min(b.0), a.1)
                        }
                    })
                    .collect()
            })
            .collect();
        let inverse = perm
            .iter()
            .map(|p| {
                let mut inv = vec![0; lines];
                for (l, &t) in p.iter().enumerate() {
                    inv[t] = l;
                }
                inv
            })
            .collect();
        let bytes = lines.div_ceil(8);
        let mut table = vec![0; count * bytes * 256];
        for (s, p) in perm.iter().enumerate() {
            for i in 0..bytes {
                for v in 0..256usize {
                    let mut image = 0;
                    for bit in 0..8 {
                        let l = 8 * i + bit;
                        if v >> bit & 1 == 1 && l < lines {
                            image |= 1 << p[l];
                        }
                    }
                    table[(s * bytes + i) * 256 + v] = image;
                }
            }
        }
        Symmetries {
            perm,
            inverse,
            bytes,
            table,
        }
    }

    /// Number of symmetries (4 or 8), the identity included.
    pub fn len(&self) -> usize {
        self.perm.len()
    }

    /// Always false: the identity is a symmetry of every board.
    pub fn is_empty(&self) -> bool {
        self.perm.is_empty()
    }

    /// The line permutation of symmetry `s`: entry `l` is the image of line `l`.
    pub fn permutation(&self, s: usize) -> &[usize] {
        &self.perm[s]
    }

    /// The image of line `line` under symmetry `s`.
    #[inline]
    pub fn map_line(&self, s: usize, line: usize) -> usize {
        self.perm[s][line]
    }

    /// The line whose image under symmetry `s` is `line`.
    #[inline]
    pub fn unmap_line(&self, s: usize, line: usize) -> usize {
        self.inverse[s][line]
    }

    /// The image of `position` under symmetry `s`.
    #[inline]
    pub fn apply(&self, s: usize, position: Lines) -> Lines {
        let base = s * self.bytes * 256;
        let mut image = 0;
        for i in 0..self.bytes {
            let v = (position >> (8 * i)) as usize & 0xff;
            image |= self.table[base + i * 256 + v];
        }
        image
    }

    /// The canonical form of `position`: the smallest of its images.
    pub fn canonical(&self, position: Lines) -> Lines {
        self.canonicalize(position).0
    }

    /// The canonical form of `position`, the index of a symmetry that maps `position`
    /// onto it (the lowest such index), and the set of symmetries that fix `position`
    /// (bit `s` set when symmetry `s` maps `position` onto itself; bit 0 always set).
    #[inline]
    pub fn canonicalize(&self, position: Lines) -> (Lines, usize, u8) {
        self.canonicalize_with(position, |p| p)
    }

    /// [`Symmetries::canonicalize`] where the canonical form is the smallest
    /// `normalize`d image (a further equivalence that every symmetry respects); the
    /// stabiliser is still that of `position` itself.
    #[inline]
    pub fn canonicalize_with(
        &self,
        position: Lines,
        normalize: impl Fn(Lines) -> Lines,
    ) -> (Lines, usize, u8) {
        let (mut best, mut sym, mut stabilizer) = (normalize(position), 0, 1u8);
        for s in 1..self.perm.len() {
            let image = self.apply(s, position);
            if image == position {
                stabilizer |= 1 << s;
            }
            let key = normalize(image);
            if key < best {
                best = key;
                sym = s;
            }
        }
        (best, sym, stabilizer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_map_boxes_onto_boxes() {
        for rows in 1..=5 {
            for cols in 1..=5 {
                let Ok(board) = Board::new(rows, cols) else {
                    continue;
                };
                let syms = Symmetries::new(board);
                assert_eq!(syms.len(), if rows == cols { 8 } else { 4 });
                let boxes: Vec<Lines> = (0..rows)
                    .flat_map(|r| (0..cols).map(move |c| (r, c)))
                    .map(|(r, c)| board.box_mask(r, c))
                    .collect();
                for s in 0..syms.len() {
                    let p = syms.permutation(s);
                    let mut seen = vec![false; p.len()];
                    for &t in p {
                        assert!(!seen[t], "{board} symmetry {s} is not a permutation");
                        seen[t] = true;
                    }
                    for &b in &boxes {
                        assert!(boxes.contains(&syms.apply(s, b)), "{board} sym {s}");
                    }
                    for l in 0..p.len() {
                        assert_eq!(syms.unmap_line(s, syms.map_line(s, l)), l);
                    }
                }
                // The symmetries are distinct (except on 1x1 boards... which are
                // square and still have 8 distinct line permutations).
                for a in 0..syms.len() {
                    for b in 0..a {
                        assert_ne!(syms.permutation(a), syms.permutation(b), "{board}");
                    }
                }
            }
        }
    }

    #[test]
    fn canonical_form_is_the_minimum_image_and_is_invariant() {
        let board = Board::new(3, 3).unwrap();
        let syms = Symmetries::new(board);
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = x & board.all_lines();
            let (canon, s, stab) = syms.canonicalize(p);
            assert_eq!(syms.apply(s, p), canon);
            assert!(stab & 1 == 1);
            for t in 0..syms.len() {
                let image = syms.apply(t, p);
                assert!(canon <= image);
                assert_eq!(syms.canonical(image), canon);
                assert_eq!(stab >> t & 1 == 1, image == p);
            }
        }
    }
}
