//! The board symmetries re-derived from the fixed line order (docs/FORMAT.md §3.1),
//! independently of the crate: each line is a pair of dots, and a symmetry maps dots
//! `(y, x)` by mirroring and, on square boards, swapping the coordinates. Shared by
//! the search and orbits symmetry tests.

/// The line permutations of the symmetries of an `rows` x `cols` board: 8 if it is
/// square, 4 otherwise.
pub fn transforms(rows: usize, cols: usize) -> Vec<Vec<usize>> {
    let hcount = (rows + 1) * cols;
    let line_of = |a: (usize, usize), b: (usize, usize)| -> usize {
        if a.0 == b.0 {
            a.0 * cols + a.1.min(b.1)
        } else {
            assert_eq!(a.1, b.1);
            hcount + a.0.min(b.0) * (cols + 1) + a.1
        }
    };
    let dots = |l: usize| -> [(usize, usize); 2] {
        if l < hcount {
            [(l / cols, l % cols), (l / cols, l % cols + 1)]
        } else {
            let (r, c) = ((l - hcount) / (cols + 1), (l - hcount) % (cols + 1));
            [(r, c), (r + 1, c)]
        }
    };
    let lines = hcount + rows * (cols + 1);
    // (mirror rows, mirror columns, swap rows and columns)
    let mut maps = Vec::new();
    for flip_y in [false, true] {
        for flip_x in [false, true] {
            maps.push((flip_y, flip_x, false));
            if rows == cols {
                maps.push((flip_y, flip_x, true));
            }
        }
    }
    let map = |(flip_y, flip_x, swap): (bool, bool, bool), (y, x): (usize, usize)| {
        let (y, x) = if swap { (x, y) } else { (y, x) };
        (
            if flip_y { rows - y } else { y },
            if flip_x { cols - x } else { x },
        )
    };
    maps.into_iter()
        .map(|m| {
            (0..lines)
                .map(|l| {
                    let [a, b] = dots(l);
                    line_of(map(m, a), map(m, b))
                })
                .collect()
        })
        .collect()
}

pub fn apply(perm: &[usize], p: u64) -> u64 {
    perm.iter()
        .enumerate()
        .filter(|&(l, _)| p >> l & 1 == 1)
        .fold(0, |q, (_, &t)| q | 1 << t)
}
