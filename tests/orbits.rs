//! Wilson's symmetry reduction (`tb::orbits`): kept symmetries, Burnside counts,
//! group-1 canonicalisation, values under symmetry, and the reduction factors.
//!
//! The board symmetries are re-derived here from the fixed line order (DESIGN.md
//! section 2), independently of the crate: each line is a pair of dots, and a
//! symmetry maps dots `(y, x)` by mirroring and, on square boards, swapping the
//! coordinates. Counts are checked against brute-force enumeration on small boards
//! and against Burnside's lemma (cycle-index polynomials) on all of them.

mod oracle;
mod transforms;

use oracle::Oracle;
use std::collections::BTreeSet;
use tb::board::{Board, Lines};
use tb::layout::{Layout, MAX_GROUP_LINES};
use tb::orbits::{GroupSymmetry, line_orbits, symmetric_groups, symmetric_split};
use tb::spec::split_even;
use transforms::{apply, transforms};

fn mask(lines: &[usize]) -> Lines {
    lines.iter().fold(0, |m, &l| m | 1 << l)
}

/// The transforms that fix the start and every group of the layout, computed
/// without the crate: what `GroupSymmetry` must keep.
fn expected_kept(board: &Board, layout: &Layout) -> Vec<Vec<usize>> {
    transforms(board.rows(), board.cols())
        .into_iter()
        .filter(|t| {
            apply(t, layout.start) == layout.start
                && layout.groups.iter().all(|g| {
                    let m = mask(&g.lines);
                    apply(t, m) == m
                })
        })
        .collect()
}

/// The kept symmetries of `sym` as line permutations.
fn kept_perms(board: &Board, sym: &GroupSymmetry) -> Vec<Vec<usize>> {
    (0..sym.len())
        .map(|s| {
            (0..board.num_lines())
                .map(|l| sym.apply(s, 1 << l).trailing_zeros() as usize)
                .collect()
        })
        .collect()
}

fn shapes() -> Vec<Board> {
    let mut out = Vec::new();
    for rows in 1..=5 {
        for cols in 1..=5 {
            if rows * cols <= 20 {
                out.push(Board::new(rows, cols).unwrap());
            }
        }
    }
    out
}

fn starts(board: &Board) -> [(&'static str, Lines); 3] {
    [
        ("empty", 0),
        ("perimeter", board.perimeter()),
        ("top-left", board.top_left_perimeter()),
    ]
}

fn free_lines(board: &Board, start: Lines) -> Vec<usize> {
    (0..board.num_lines())
        .filter(|&l| start >> l & 1 == 0)
        .collect()
}

/// Layouts built from symmetric groups: by budget and with fixed group counts.
fn symmetric_layouts(board: &Board, start: Lines) -> Vec<Layout> {
    let mut out: Vec<Layout> = [8u64 << 30, 256 << 20, 1 << 20]
        .iter()
        .map(|&memory| Layout::new(start, symmetric_groups(board, start, memory)))
        .collect();
    for count in 1..=4 {
        if let Some(groups) = symmetric_split(board, start, count) {
            out.push(Layout::new(start, groups));
        }
    }
    out
}

/// Layouts of consecutive free lines (what `spec::auto_groups` builds).
fn simple_layouts(board: &Board, start: Lines) -> Vec<Layout> {
    let free = free_lines(board, start);
    let min = free.len().div_ceil(MAX_GROUP_LINES).max(1);
    (min..min + 3)
        .filter(|&g| g <= free.len().max(1))
        .map(|g| Layout::new(start, split_even(&free, g)))
        .collect()
}

#[test]
fn kept_symmetries_are_exactly_those_mapping_every_group_onto_itself() {
    for board in shapes() {
        let all = transforms(board.rows(), board.cols());
        for (name, start) in starts(&board) {
            let fixing_start = all.iter().filter(|t| apply(t, start) == start).count();
            let free = free_lines(&board, start);
            let symmetric = symmetric_layouts(&board, start);
            for (i, layout) in symmetric
                .iter()
                .chain(&simple_layouts(&board, start))
                .enumerate()
            {
                let what = format!("{board} {name} layout {i} {:?}", layout.sizes());
                let sym = GroupSymmetry::new(&board, layout);
                let kept = kept_perms(&board, &sym);
                assert_eq!(kept[0], all[0], "{what}: symmetry 0 is not the identity");
                let expected = expected_kept(&board, layout);
                assert_eq!(
                    kept.iter().collect::<BTreeSet<_>>(),
                    expected.iter().collect::<BTreeSet<_>>(),
                    "{what}"
                );
                assert_eq!(kept.len(), expected.len(), "{what}: duplicates");
                for t in &kept {
                    for g in &layout.groups {
                        let m = mask(&g.lines);
                        assert_eq!(apply(t, m), m, "{what}");
                    }
                }
                if i < symmetric.len() {
                    // Symmetric groups lose no symmetry of the start.
                    assert_eq!(kept.len(), fixing_start, "{what}");
                    let mut lines: Vec<usize> =
                        layout.groups.iter().flat_map(|g| g.lines.clone()).collect();
                    lines.sort_unstable();
                    assert_eq!(lines, free, "{what}: not a partition of the free lines");
                    assert!(
                        layout
                            .groups
                            .iter()
                            .all(|g| g.len() <= MAX_GROUP_LINES
                                && (!g.is_empty() || free.is_empty())),
                        "{what}"
                    );
                    // As even as possible up to one orbit (orbits have at most 8 lines).
                    let sizes = layout.sizes();
                    let spread = sizes.iter().max().unwrap() - sizes.iter().min().unwrap();
                    assert!(spread <= 8, "{what}");
                }
            }
        }
    }
}

#[test]
fn wilson_3x5_orbits_give_groups_of_8_6_6_6_6_6() {
    let board = Board::new(3, 5).unwrap();
    let orbits = line_orbits(&board, 0);
    let sizes: Vec<usize> = orbits.iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2]);
    let groups = symmetric_split(&board, 0, 6).unwrap();
    assert_eq!(
        groups.iter().map(Vec::len).collect::<Vec<_>>(),
        [8, 6, 6, 6, 6, 6]
    );
    for g in &groups {
        let parts = orbits
            .iter()
            .filter(|o| o.iter().all(|l| g.contains(l)))
            .count();
        assert_eq!(parts, 2, "each group is the union of two orbits");
    }
}

/// Product of polynomials (coefficient vectors).
fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

/// The cycle lengths of permutation `perm` on `lines` (which it maps onto itself).
fn cycles(perm: &[usize], lines: &[usize]) -> Vec<usize> {
    let mut done: Lines = 0;
    let mut out = Vec::new();
    for &l in lines {
        let mut len = 0;
        let mut m = l;
        while done >> m & 1 == 0 {
            done |= 1 << m;
            m = perm[m];
            len += 1;
        }
        if len > 0 {
            out.push(len);
        }
    }
    out
}

/// Burnside: coefficient c = number of orbits of c-subsets of `lines` under `perms`
/// (each mapping `lines` onto itself).
fn subset_orbits(perms: &[Vec<usize>], lines: &[usize]) -> Vec<u64> {
    let mut total = vec![0u64; lines.len() + 1];
    for p in perms {
        let fixed = cycles(p, lines).iter().fold(vec![1u64], |acc, &len| {
            let mut f = vec![0u64; len + 1];
            f[0] = 1;
            f[len] = 1;
            mul(&acc, &f)
        });
        for (t, f) in total.iter_mut().zip(fixed) {
            *t += f;
        }
    }
    total
        .into_iter()
        .map(|t| {
            assert_eq!(t % perms.len() as u64, 0, "Burnside sum not divisible");
            t / perms.len() as u64
        })
        .collect()
}

/// (1 + x)^k.
fn binomial_row(k: usize) -> Vec<u64> {
    (0..k).fold(vec![1u64], |acc, _| mul(&acc, &[1, 1]))
}

/// Checks one layout: per layer, Burnside orbit counts <= stored sizes, and the
/// stored sizes equal canonical-group-1 counts (Burnside on group 1 times binomials
/// of the other groups). With `brute`, both are also counted position by position.
fn check_counts(board: &Board, layout: &Layout, brute: bool, what: &str) {
    let sym = GroupSymmetry::new(board, layout);
    let perms = expected_kept(board, layout);
    assert_eq!(perms.len(), sym.len(), "{what}");
    let s0 = layout.start_lines();
    let free = free_lines(board, layout.start);
    let orbits = subset_orbits(&perms, &free);
    let first = layout.groups.first().map_or(vec![], |g| g.lines.clone());
    let first_orbits = subset_orbits(&perms, &first);
    for (c, &count) in first_orbits.iter().enumerate() {
        assert_eq!(sym.canonical_first(c).len() as u64, count, "{what} c1={c}");
    }
    let stored = layout.groups[1.min(layout.groups.len())..]
        .iter()
        .fold(first_orbits, |acc, g| mul(&acc, &binomial_row(g.len())));
    let (mut by_orbit, mut by_first) = (vec![0u64; free.len() + 1], vec![0u64; free.len() + 1]);
    if brute {
        let first_mask = mask(&first);
        for bits in 0u64..1 << free.len() {
            let p = free
                .iter()
                .enumerate()
                .filter(|&(i, _)| bits >> i & 1 == 1)
                .fold(layout.start, |p, (_, &l)| p | 1 << l);
            let k = bits.count_ones() as usize;
            if perms.iter().all(|t| apply(t, p) >= p) {
                by_orbit[k] += 1;
            }
            let q = p & first_mask;
            if perms.iter().all(|t| apply(t, q) >= q) {
                by_first[k] += 1;
            }
        }
    }
    for k in 0..=free.len() {
        let n = s0 + k;
        let size = sym.stored_layer_size(layout, n);
        assert_eq!(size, stored[k], "{what} layer {n}: stored size");
        assert!(size >= orbits[k], "{what} layer {n}: fewer than the orbits");
        assert!(size <= binomial_row(free.len())[k], "{what} layer {n}");
        if brute {
            assert_eq!(by_orbit[k], orbits[k], "{what} layer {n}: Burnside");
            assert_eq!(by_first[k], size, "{what} layer {n}: canonical group 1");
        }
    }
    assert_eq!(sym.stored_layer_size(layout, s0 + free.len() + 1), 0);
}

#[test]
fn burnside_and_stored_sizes_on_every_shape() {
    for board in shapes() {
        let brute = board.num_lines() <= 17;
        for (name, start) in starts(&board) {
            let layouts = symmetric_layouts(&board, start)
                .into_iter()
                .chain(simple_layouts(&board, start));
            for (i, layout) in layouts.enumerate() {
                let what = format!("{board} {name} layout {i} {:?}", layout.sizes());
                check_counts(&board, &layout, brute, &what);
            }
        }
    }
}

/// Every group-1 layout worth checking for canonicalisation (groups up to 16 lines).
fn canonicalisation_layouts() -> Vec<(Board, Layout)> {
    let mut out = Vec::new();
    for (rows, cols, counts) in [
        (2, 2, &[1, 2][..]),
        (2, 3, &[1, 2][..]),
        (3, 3, &[2, 3][..]),
        (3, 5, &[3, 6][..]),
        (4, 4, &[3, 5][..]),
        (4, 5, &[4][..]),
    ] {
        let board = Board::new(rows, cols).unwrap();
        for (_, start) in starts(&board) {
            for &count in counts {
                if let Some(groups) = symmetric_split(&board, start, count) {
                    out.push((board, Layout::new(start, groups)));
                }
            }
        }
    }
    out
}

#[test]
fn canonicalize_first_is_idempotent_minimal_and_consistent() {
    for (board, layout) in canonicalisation_layouts() {
        let sym = GroupSymmetry::new(&board, &layout);
        let first = &layout.groups[0];
        let k = first.len();
        let global = |local: u32| -> Lines {
            first
                .lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| local >> i & 1 == 1)
                .fold(0, |m, (_, &l)| m | 1 << l)
        };
        let what = format!("{board} start {:x} {:?}", layout.start, layout.sizes());
        let mut seen = vec![0usize; k + 1];
        for local in 0..1u32 << k {
            let (least, s) = sym.canonicalize_first(local);
            assert!(least <= local, "{what}");
            assert_eq!(least.count_ones(), local.count_ones(), "{what}");
            assert_eq!(
                sym.canonicalize_first(least),
                (least, 0),
                "{what}: idempotent"
            );
            assert_eq!(sym.permute_local(0, s, local), least, "{what}");
            assert_eq!(sym.apply(s, global(local)), global(least), "{what}");
            let min = (0..sym.len())
                .map(|t| sym.permute_local(0, t, local))
                .min()
                .unwrap();
            assert_eq!(least, min, "{what}: not the least image");
            let c = local.count_ones() as usize;
            if least == local {
                let r = sym.canonical_rank(local).expect("canonical has a rank") as usize;
                assert_eq!(r, seen[c], "{what}: ranks ascend");
                assert_eq!(sym.canonical_first(c)[r], local, "{what}");
                seen[c] += 1;
                assert!(sym.is_canonical_first(local));
            } else {
                assert_eq!(sym.canonical_rank(local), None, "{what}");
                assert!(!sym.is_canonical_first(local));
                assert!(sym.canonical_rank(least).is_some(), "{what}");
            }
        }
        for (c, &n) in seen.iter().enumerate() {
            assert_eq!(sym.canonical_first(c).len(), n, "{what}");
        }
    }
}

/// xorshift64.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn locate_finds_the_stored_representative() {
    for (board, layout) in canonicalisation_layouts() {
        let sym = GroupSymmetry::new(&board, &layout);
        let what = format!("{board} start {:x} {:?}", layout.start, layout.sizes());
        let mut x = 0x2545_f491_4f6c_dd1d ^ layout.start;
        for _ in 0..3000 {
            let p = (next(&mut x) & board.all_lines()) | layout.start;
            let (rep, s) = sym.canonical_position(&layout, p);
            assert_eq!(rep, sym.apply(s, p), "{what}");
            assert!(
                sym.is_canonical_first(layout.groups[0].local_of(rep)),
                "{what}"
            );
            let (counts, index) = sym.locate(&layout, p);
            assert_eq!(layout.locate(rep).0, counts, "{what}: same block");
            assert!(index < sym.stored_block_size(&layout, &counts), "{what}");
            assert_eq!(sym.position_at(&layout, &counts, index), rep, "{what}");
            // Every member of the orbit lands on a stored position of the same orbit.
            for t in 0..sym.len() {
                let q = sym.apply(t, p);
                let (cq, iq) = sym.locate(&layout, q);
                assert_eq!(cq, counts, "{what}");
                let stored = sym.position_at(&layout, &cq, iq);
                assert!((0..sym.len()).any(|u| sym.apply(u, p) == stored), "{what}");
            }
        }
    }
}

#[test]
fn transformed_positions_have_the_same_value() {
    for (rows, cols, samples) in [(2, 2, 400), (2, 3, 400), (3, 2, 400), (3, 3, 1500)] {
        let board = Board::new(rows, cols).unwrap();
        let mut oracle = Oracle::new(rows, cols, 0);
        for (name, start) in starts(&board) {
            let layout = Layout::new(start, symmetric_groups(&board, start, 8 << 30));
            let sym = GroupSymmetry::new(&board, &layout);
            let mut x = 0x9e37_79b9_7f4a_7c15 ^ (rows * 8 + cols) as u64;
            for _ in 0..samples {
                let p = (next(&mut x) & next(&mut x) & board.all_lines()) | start;
                let v = oracle.value(p);
                for s in 0..sym.len() {
                    assert_eq!(oracle.value(sym.apply(s, p)), v, "{board} {name} sym {s}");
                }
                let (rep, _) = sym.canonical_position(&layout, p);
                assert_eq!(oracle.value(rep), v, "{board} {name} representative");
                // The builder's children: a move in groups 2..G from a stored
                // position is stored as is; a move in group 1 is looked up through
                // `locate` and has the child's value.
                for line in (0..board.num_lines()).filter(|&l| rep >> l & 1 == 0) {
                    let child = rep | 1 << line;
                    let (counts, index) = sym.locate(&layout, child);
                    let stored = sym.position_at(&layout, &counts, index);
                    if layout.group_of(line) != Some(0) {
                        assert_eq!(stored, child, "{board} {name}: moved in group 2..G");
                    }
                    assert_eq!(oracle.value(stored), oracle.value(child), "{board} {name}");
                }
            }
        }
    }
}

/// Raw and stored positions over all layers, and the orbit count (the ideal).
fn totals(board: &Board, layout: &Layout) -> (u64, u64, u64, usize) {
    let sym = GroupSymmetry::new(board, layout);
    let perms = expected_kept(board, layout);
    let free = free_lines(board, layout.start);
    let orbits: u64 = subset_orbits(&perms, &free).iter().sum();
    let raw = 1u64 << free.len();
    let stored: u64 = (layout.start_lines()..=layout.full_layer())
        .map(|n| sym.stored_layer_size(layout, n))
        .sum();
    (raw, stored, orbits, sym.len())
}

/// Prints raw / stored positions over all layers (the reduction factor) and raw /
/// orbits (the ideal, |G| for big boards) for symmetric groups chosen by budget and
/// for some fixed splits; run with `--nocapture` to see the table.
#[test]
fn reduction_factors() {
    let mut rows: Vec<(Board, String, Layout)> = Vec::new();
    for (r, c) in [(3, 3), (3, 4), (3, 5), (4, 4)] {
        let board = Board::new(r, c).unwrap();
        for (label, memory) in [("8GiB", 8u64 << 30), ("256MiB", 256 << 20)] {
            let layout = Layout::new(0, symmetric_groups(&board, 0, memory));
            rows.push((board, label.to_string(), layout));
        }
        for count in [2, 3, 6] {
            if let Some(groups) = symmetric_split(&board, 0, count) {
                rows.push((board, format!("{count} groups"), Layout::new(0, groups)));
            }
        }
    }
    println!("board  groups by  sizes                            |G|  raw/stored  raw/orbits");
    let mut factors = Vec::new();
    for (board, label, layout) in &rows {
        let (raw, stored, orbits, order) = totals(board, layout);
        let factor = raw as f64 / stored as f64;
        println!(
            "{board:<6} {label:<10} {:<32} {order}  {factor:>10.2}  {:>10.2}",
            format!("{:?}", layout.sizes()),
            raw as f64 / orbits as f64
        );
        assert!(factor > 1.0 && factor <= order as f64, "{board} {label}");
        assert!(stored >= orbits, "{board} {label}");
        factors.push((board.to_string(), label.as_str(), layout.sizes(), factor));
    }
    let factor = |board: &str, sizes: &[usize]| {
        factors
            .iter()
            .find(|(b, _, s, _)| b == board && s == sizes)
            .unwrap_or_else(|| panic!("no {board} {sizes:?} row"))
            .3
    };
    // Wilson's 3x5 split: group 1 = two free orbits of 4 lines, whose 256 subsets
    // fall into (256 + 3 * 16) / 4 = 76 classes: 256 / 76 = 3.37 (he reports
    // 256 GB -> 85 GB, i.e. 3.0).
    assert!((factor("3x5", &[8, 6, 6, 6, 6, 6]) - 256.0 / 76.0).abs() < 1e-9);
    // Square boards: group 1 = one free orbit of 8 lines: (256 + 5 * 16 + 2 * 4) / 8
    // = 43 classes, 5.95; 12 lines (3x3): 4096 / 570 = 7.19; 16 lines (4x4): 7.84.
    assert!((factor("4x4", &[8, 8, 8, 8, 8]) - 256.0 / 43.0).abs() < 1e-9);
    assert!((factor("3x3", &[12, 12]) - 4096.0 / 570.0).abs() < 1e-9);
    assert!(factor("4x4", &[16, 12, 12]) > 7.8);
}
