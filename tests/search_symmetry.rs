//! Symmetry: a transformed position has the same value and the same canonical form.
//!
//! The transforms are re-derived here from the fixed line order (docs/FORMAT.md
//! §3.1), independently of the crate: each line is a pair of dots, and a symmetry maps
//! dots `(y, x)` by mirroring and, on square boards, swapping the coordinates.

use crate::transforms;

use proptest::prelude::*;
use tb::games::dots::board::Board;
use tb::games::dots::search::{SearchOptions, Solver};
use transforms::{apply, transforms};

/// A random position of `board` with at most `max_open` open lines.
fn position(board: Board, seed: u64, max_open: usize) -> u64 {
    let lines = board.num_lines();
    let mut x = seed | 1;
    let mut order: Vec<usize> = (0..lines).collect();
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let open = (x >> 32) as usize % (max_open.min(lines) + 1);
    order[open..].iter().fold(0, |p, &l| p | 1 << l)
}

fn solver(board: Board, penalty: i32) -> Solver {
    Solver::new(
        board,
        SearchOptions {
            penalty,
            tt_bytes: 1 << 20,
        },
    )
}

#[test]
fn the_crate_has_the_same_symmetries_as_the_test() {
    for rows in 1..=4 {
        for cols in 1..=4 {
            let board = Board::new(rows, cols).unwrap();
            let ours = transforms(rows, cols);
            let solver = solver(board, 0);
            let syms = solver.symmetries();
            assert_eq!(syms.len(), ours.len(), "{board}");
            for s in 0..syms.len() {
                assert!(
                    ours.iter().any(|t| t == syms.permutation(s)),
                    "{board}: symmetry {s} is not one of the board's"
                );
            }
        }
    }
}

#[test]
fn canonical_form_is_the_smallest_image_on_every_board_up_to_4x4() {
    for rows in 1..=4 {
        for cols in 1..=4 {
            let board = Board::new(rows, cols).unwrap();
            let ours = transforms(rows, cols);
            let solver = solver(board, 0);
            for seed in 0..300u64 {
                let p = position(board, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 64);
                let smallest = ours.iter().map(|t| apply(t, p)).min().unwrap();
                for t in &ours {
                    let q = apply(t, p);
                    assert_eq!(solver.symmetries().canonical(q), smallest, "{board} {p:#x}");
                }
            }
        }
    }
}

#[test]
fn transformed_positions_have_the_same_value_on_every_board_up_to_4x4() {
    for rows in 1..=4 {
        for cols in 1..=4 {
            let board = Board::new(rows, cols).unwrap();
            let ours = transforms(rows, cols);
            for penalty in [0, -1] {
                // Two solvers, so that the second never answers from a table entry
                // the first position left behind.
                let (mut a, mut b) = (solver(board, penalty), solver(board, penalty));
                for seed in 0..40u64 {
                    let p = position(board, seed.wrapping_mul(0x2545_F491_4F6C_DD1D) + 7, 14);
                    let v = a.value(p);
                    for t in &ours {
                        b.clear();
                        assert_eq!(b.value(apply(t, p)), v, "{board} p{penalty} {p:#x}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every move of a transformed position has the value of the corresponding move.
    #[test]
    fn move_values_follow_the_transform(seed in any::<u64>(), shape in 0usize..4) {
        let (rows, cols) = [(3, 3), (2, 4), (4, 2), (3, 4)][shape];
        let board = Board::new(rows, cols).unwrap();
        let p = position(board, seed, 13);
        let mut solver = solver(board, 0);
        let base = solver.solve(p);
        for t in transforms(rows, cols) {
            let image = solver.solve(apply(&t, p));
            prop_assert_eq!(image.value, base.value);
            for m in &base.moves {
                let mapped = image.moves.iter().find(|x| x.line == t[m.line]).unwrap();
                prop_assert_eq!(mapped.value, m.value);
                prop_assert_eq!(mapped.boxes, m.boxes);
            }
        }
    }
}
