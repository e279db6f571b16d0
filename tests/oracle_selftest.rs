//! Checks of the brute-force oracle itself (no `tb` code involved).

use crate::oracle;

use oracle::{Equivalence, Oracle, Rng, digest_element};
use std::time::Instant;

/// First-player values of the empty board, penalty 0, from the literature (Berlekamp,
/// Wilson). These are checks of the oracle, so hard-coding them is the point.
#[test]
fn empty_board_values_match_the_literature() {
    for (rows, cols, expected) in [
        (1, 1, -1),
        (1, 2, 0),
        (2, 1, 0),
        (2, 2, 2),
        (2, 3, -2),
        (3, 2, -2),
        (3, 3, -3),
    ] {
        let mut o = Oracle::new(rows, cols, 0);
        assert_eq!(o.value(0), expected, "{rows}x{cols}");
    }
}

#[test]
fn geometry_follows_the_fixed_line_order() {
    let o = Oracle::new(2, 3, 0);
    assert_eq!(o.num_lines(), 17);
    let names: Vec<String> = (0..o.num_lines()).map(|l| o.line_name(l)).collect();
    assert_eq!(
        names,
        [
            "h0.0", "h0.1", "h0.2", "h1.0", "h1.1", "h1.2", "h2.0", "h2.1", "h2.2", "v0.0", "v0.1",
            "v0.2", "v0.3", "v1.0", "v1.1", "v1.2", "v1.3"
        ]
    );
    assert_eq!(o.box_lines(1, 2), [5, 8, 15, 16]);
    assert_eq!(o.perimeter().count_ones(), 10);
    assert_eq!(o.top_left().count_ones(), 5);
    assert_eq!(o.move_list(o.top_left()), "h0.0,h0.1,h0.2,v0.0,v1.0");
    for (rows, cols, lines) in [(1, 1, 4), (3, 3, 24), (3, 5, 38), (4, 4, 40), (5, 5, 60)] {
        assert_eq!(Oracle::new(rows, cols, 0).num_lines(), lines);
    }
}

#[test]
fn full_board_is_worth_the_penalty_and_last_line_closes_boxes() {
    for penalty in [0, -1, 2] {
        let mut o = Oracle::new(2, 2, penalty);
        assert_eq!(o.value(o.full()), penalty);
        // One line missing: drawing it closes one or two boxes, then the penalty.
        for l in 0..o.num_lines() {
            let p = o.full() & !(1 << l);
            let k = o.boxes_completed(p, l) as i32;
            assert!(k == 1 || k == 2);
            assert_eq!(o.value(p), k + penalty);
            assert_eq!(o.move_values(p), vec![(l, k + penalty, k as u32)]);
        }
    }
}

#[test]
fn values_satisfy_the_recurrence_and_bounds() {
    for (rows, cols) in [(1, 2), (2, 2), (2, 3)] {
        for penalty in [0, -1] {
            let mut o = Oracle::new(rows, cols, penalty);
            let boxes = (rows * cols) as i32;
            for p in o.supersets(0).collect::<Vec<_>>() {
                let v = o.value(p);
                assert!(v.abs() <= boxes + penalty.abs(), "{p:#x}: {v}");
                let moves = o.move_values(p);
                assert_eq!(moves.len() as u32, (o.full() & !p).count_ones());
                if let Some(best) = moves.iter().map(|m| m.1).max() {
                    assert_eq!(best, v);
                }
            }
        }
    }
}

/// Swapping twin lines or applying a board symmetry never changes a value: an
/// internal consistency check of the geometry (lines, boxes, symmetries).
#[test]
fn values_are_invariant_under_symmetries_and_twin_swaps() {
    for (rows, cols) in [(1, 1), (1, 3), (2, 2), (2, 3), (3, 2)] {
        let mut o = Oracle::new(rows, cols, -1);
        let syms = o.symmetries();
        assert_eq!(syms.len(), if rows == cols { 8 } else { 4 });
        for perm in &syms {
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..o.num_lines()).collect::<Vec<_>>(),
                "not a permutation"
            );
        }
        let eq = Equivalence::new(&o);
        let mut rng = Rng::new((rows * 10 + cols) as u64);
        for _ in 0..2000 {
            let p = rng.superset(0, o.full());
            let v = o.value(p);
            for perm in &syms {
                assert_eq!(o.value(Oracle::permute(p, perm)), v);
            }
            let class = eq.class_of(p);
            assert_eq!(o.value(class), v, "{rows}x{cols} {p:#x}");
            for perm in &syms {
                assert_eq!(eq.class_of(Oracle::permute(p, perm)), class);
            }
        }
    }
}

/// The recursive (hash-map) path and the bottom-up dense fill are two different
/// algorithms for the same recurrence: they must agree everywhere.
#[test]
fn recursion_agrees_with_dense_fill() {
    for (rows, cols, penalty) in [(1, 1, 0), (2, 2, -1), (2, 3, 0), (3, 2, -1)] {
        let mut dense = Oracle::new(rows, cols, penalty);
        let mut sparse = Oracle::new_sparse(rows, cols, penalty);
        for p in dense.supersets(0).collect::<Vec<_>>() {
            assert_eq!(
                dense.value(p),
                sparse.value(p),
                "{rows}x{cols} {}",
                dense.bits(p)
            );
        }
    }
}

/// 1x8 (25 lines) uses the dense memo, 1x9 (28 lines) the sparse one. With the
/// extra box of 1x9 fully drawn (and its shared line drawn in 1x8 too) both play the
/// same game, so their values must agree.
#[test]
fn sparse_memo_agrees_with_dense_memo() {
    let mut dense = Oracle::new(1, 8, 0);
    let mut sparse = Oracle::new(1, 9, 0);
    let shared = dense.v(0, 8);
    let mut rng = Rng::new(7);
    for i in 0..300 {
        let drawn = 8 + i % 17; // 8..=24 of 25 lines
        let p = rng.position_with(dense.num_lines(), drawn) | 1 << shared;
        let mut q = 0u64;
        for l in 0..dense.num_lines() {
            if p >> l & 1 == 1 {
                q |= 1 << sparse.line_by_name(&dense.line_name(l)).expect("same name");
            }
        }
        for l in sparse.box_lines(0, 8) {
            q |= 1 << l;
        }
        assert_eq!(dense.value(p), sparse.value(q), "{}", dense.bits(p));
        assert_eq!(
            dense
                .move_values(p)
                .iter()
                .map(|m| (m.1, m.2))
                .collect::<Vec<_>>(),
            sparse
                .move_values(q)
                .iter()
                .map(|m| (m.1, m.2))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn digest_element_is_the_fixed_definition() {
    // Recomputed by hand from the definition in the brief, so a change to `mix` or to
    // the value encoding shows up.
    fn reference(p: u64, v: i32) -> u64 {
        let mut z = p.wrapping_add((v as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    for (p, v) in [(0, 0), (1, -1), (0xffffff, -3), (u64::MAX, 9)] {
        assert_eq!(digest_element(p, v), reference(p, v));
    }
    // Negative values are sign-extended: -1 is u64::MAX times the constant.
    assert_eq!(
        digest_element(0, -1),
        oracle::mix(0x9E37_79B9_7F4A_7C15u64.wrapping_neg())
    );
}

#[test]
fn layers_partition_the_positions() {
    let mut o = Oracle::new(2, 2, 0);
    for start in ["empty", "swedish", "icelandic"] {
        let s = o.start(start);
        let layers = o.layers(s);
        assert_eq!(layers.first().map(|l| l.n), Some(s.count_ones() as usize));
        assert_eq!(layers.last().map(|l| l.n), Some(o.num_lines()));
        let open = o.num_lines() as u64 - u64::from(s.count_ones());
        let mut binom = 1u64;
        for (k, layer) in layers.iter().enumerate() {
            assert_eq!(layer.positions, binom, "{start} layer {}", layer.n);
            binom = binom * (open - k as u64) / (k as u64 + 1);
        }
        assert_eq!(layers.last().unwrap().digest, digest_element(o.full(), 0));
    }
}

/// Timing of the dense path: every position of 3x3 (2^24).
#[test]
fn solves_all_of_3x3() {
    let t = Instant::now();
    let mut o = Oracle::new(3, 3, 0);
    assert_eq!(o.value(0), -3);
    let solved = t.elapsed();
    let mut sum = 0u64;
    for layer in o.layers(0) {
        sum += layer.positions;
    }
    assert_eq!(sum, 1 << 24);
    eprintln!(
        "3x3: value(empty) in {:.2?}, all 2^24 positions and layer digests in {:.2?}",
        solved,
        t.elapsed()
    );
}
