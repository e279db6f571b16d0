//! Wilson's symmetry reduction and Fraser's corners (`tb::games::dots::orbits`): kept
//! symmetries, Burnside counts, group-1 canonicalisation, values under symmetry and
//! corner swaps, and the reduction factors.
//!
//! The board symmetries are re-derived here from the fixed line order (docs/FORMAT.md
//! §3.1), independently of the crate: each line is a pair of dots, and a
//! symmetry maps dots `(y, x)` by mirroring and, on square boards, swapping the
//! coordinates. Counts are checked against brute-force enumeration on small boards
//! and against Burnside's lemma (cycle-index polynomials) on all of them.

use crate::oracle;
use crate::transforms;

use oracle::Oracle;
use std::collections::BTreeSet;
use tb::games::dots::board::{Board, Lines};
use tb::games::dots::group_symmetry::GroupSymmetry;
use tb::games::dots::groups::split_even;
use tb::games::dots::layout::{Layout, MAX_GROUP_LINES};
use tb::games::dots::orbits::{line_orbits, reduced_layout, symmetric_split};
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

/// Symmetric groups chosen for a budget (full symmetry, no corners).
fn symmetric_groups(board: &Board, start: Lines, memory: u64) -> Vec<Vec<usize>> {
    tb::games::dots::groups::symmetric_groups(board, start, memory, true, false)
}

/// The unreduced layout and its symmetries (no corners).
fn symmetry_of(board: &Board, layout: &Layout) -> GroupSymmetry {
    let groups: Vec<Vec<usize>> = layout.groups.iter().map(|g| g.lines.clone()).collect();
    GroupSymmetry::new(board, layout.start, &groups, true, &[])
}

/// The reduced layout for the groups of an unreduced one (symmetry, no corners).
fn reduce(board: &Board, layout: &Layout) -> Layout {
    let groups = layout.groups.iter().map(|g| g.lines.clone()).collect();
    reduced_layout(board, layout.start, groups, true, false)
}

/// Layouts from symmetric splits with fixed group counts (every symmetry of the
/// start kept), then by budget (which may fall back to fewer symmetries).
fn symmetric_layouts(board: &Board, start: Lines) -> Vec<Layout> {
    let mut out = Vec::new();
    for count in 1..=4 {
        if let Some(groups) = symmetric_split(board, start, count, true, false) {
            out.push(Layout::new(start, groups));
        }
    }
    for memory in [8u64 << 30, 256 << 20, 1 << 20] {
        out.push(Layout::new(start, symmetric_groups(board, start, memory)));
    }
    out
}

/// How many of `symmetric_layouts` keep every symmetry of the start.
fn full_symmetry_layouts(board: &Board, start: Lines) -> usize {
    (1..=4)
        .filter(|&count| symmetric_split(board, start, count, true, false).is_some())
        .count()
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
            let full = full_symmetry_layouts(&board, start);
            for (i, layout) in symmetric
                .iter()
                .chain(&simple_layouts(&board, start))
                .enumerate()
            {
                let what = format!("{board} {name} layout {i} {:?}", layout.sizes());
                let sym = symmetry_of(&board, layout);
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
                if i < full {
                    // Symmetric splits lose no symmetry of the start.
                    assert_eq!(kept.len(), fixing_start, "{what}");
                }
                if i < symmetric.len() {
                    assert_eq!(fixing_start % kept.len(), 0, "{what}: a subgroup");
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
    let orbits = line_orbits(&board, 0, true, false);
    let sizes: Vec<usize> = orbits.iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2]);
    let groups = symmetric_split(&board, 0, 6, true, false).unwrap();
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
    let sym = symmetry_of(board, layout);
    let reduced = reduce(board, layout);
    let perms = expected_kept(board, layout);
    assert_eq!(perms.len(), sym.len(), "{what}");
    let s0 = layout.start_lines();
    let free = free_lines(board, layout.start);
    let orbits = subset_orbits(&perms, &free);
    let first = layout.groups.first().map_or(vec![], |g| g.lines.clone());
    let first_orbits = subset_orbits(&perms, &first);
    for (c, &count) in first_orbits.iter().enumerate() {
        assert_eq!(reduced.groups[0].radix(c), count, "{what} c1={c}");
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
        let size = reduced.layer_size(n);
        assert_eq!(size, stored[k], "{what} layer {n}: stored size");
        assert!(size >= orbits[k], "{what} layer {n}: fewer than the orbits");
        assert!(size <= binomial_row(free.len())[k], "{what} layer {n}");
        if brute {
            assert_eq!(by_orbit[k], orbits[k], "{what} layer {n}: Burnside");
            assert_eq!(by_first[k], size, "{what} layer {n}: canonical group 1");
        }
    }
    assert_eq!(reduced.layer_size(s0 + free.len() + 1), 0);
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
                if let Some(groups) = symmetric_split(&board, start, count, true, false) {
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
        let sym = symmetry_of(&board, &layout);
        let reduced = reduce(&board, &layout);
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
            let stored = &reduced.groups[0];
            if least == local {
                let r = stored.rank(local) as usize;
                assert_eq!(r, seen[c], "{what}: ranks ascend");
                assert_eq!(stored.locals(c)[r], local, "{what}");
                seen[c] += 1;
                assert!(sym.is_canonical_first(local));
            } else {
                assert_eq!(
                    stored.rank(local),
                    tb::games::dots::layout::NOT_STORED,
                    "{what}"
                );
                assert!(!sym.is_canonical_first(local));
                assert_ne!(
                    stored.rank(least),
                    tb::games::dots::layout::NOT_STORED,
                    "{what}"
                );
            }
        }
        for (c, &n) in seen.iter().enumerate() {
            assert_eq!(reduced.groups[0].radix(c), n as u64, "{what}");
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
        let sym = symmetry_of(&board, &layout);
        let reduced = reduce(&board, &layout);
        let what = format!("{board} start {:x} {:?}", layout.start, layout.sizes());
        let in_orbit = |p: Lines, q: Lines| (0..sym.len()).any(|s| sym.apply(s, p) == q);
        let mut x = 0x2545_f491_4f6c_dd1d ^ layout.start;
        for _ in 0..3000 {
            let p = (next(&mut x) & board.all_lines()) | layout.start;
            let rep = reduced.canonical(p);
            assert!(in_orbit(p, rep), "{what}");
            assert!(
                sym.is_canonical_first(layout.groups[0].local_of(rep)),
                "{what}"
            );
            let (counts, index) = reduced.locate(p);
            assert_eq!(layout.locate(rep).0, counts, "{what}: same block");
            assert!(index < reduced.block_size(&counts), "{what}");
            assert_eq!(reduced.position_at(&counts, index), rep, "{what}");
            // Every member of the orbit lands on a stored position of the same orbit.
            for t in 0..sym.len() {
                let q = sym.apply(t, p);
                let (cq, iq) = reduced.locate(q);
                assert_eq!(cq, counts, "{what}");
                assert!(in_orbit(p, reduced.position_at(&cq, iq)), "{what}");
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
            let sym = symmetry_of(&board, &layout);
            let reduced = reduce(&board, &layout);
            let mut x = 0x9e37_79b9_7f4a_7c15 ^ (rows * 8 + cols) as u64;
            for _ in 0..samples {
                let p = (next(&mut x) & next(&mut x) & board.all_lines()) | start;
                let v = oracle.value(p);
                for s in 0..sym.len() {
                    assert_eq!(oracle.value(sym.apply(s, p)), v, "{board} {name} sym {s}");
                }
                let rep = reduced.canonical(p);
                assert_eq!(oracle.value(rep), v, "{board} {name} representative");
                // The builder's children: a move in groups 2..G from a stored
                // position is stored as is; a move in group 1 is looked up through
                // `locate` and has the child's value.
                for line in (0..board.num_lines()).filter(|&l| rep >> l & 1 == 0) {
                    let child = rep | 1 << line;
                    let (counts, index) = reduced.locate(child);
                    let stored = reduced.position_at(&counts, index);
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
    let sym = symmetry_of(board, layout);
    let reduced = reduce(board, layout);
    let perms = expected_kept(board, layout);
    let free = free_lines(board, layout.start);
    let orbits: u64 = subset_orbits(&perms, &free).iter().sum();
    let raw = 1u64 << free.len();
    let stored: u64 = (layout.start_lines()..=layout.full_layer())
        .map(|n| reduced.layer_size(n))
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
            if let Some(groups) = symmetric_split(&board, 0, count, true, false) {
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

/// The corner pairs derived here from the line order (docs/FORMAT.md §3.1): the
/// top/bottom and left/right perimeter lines of each corner box.
fn corner_pairs(board: &Board) -> Vec<(usize, usize)> {
    let (r, c) = (board.rows(), board.cols());
    if r < 2 || c < 2 {
        return Vec::new();
    }
    let h = |y: usize, x: usize| y * c + x;
    let v = |y: usize, x: usize| (r + 1) * c + y * (c + 1) + x;
    vec![
        (h(0, 0), v(0, 0)),
        (h(0, c - 1), v(0, c)),
        (h(r, 0), v(r - 1, 0)),
        (h(r, c - 1), v(r - 1, c)),
    ]
}

/// `p` with each corner pair holding only its second line moved to the first.
fn normalise(pairs: &[(usize, usize)], p: Lines) -> Lines {
    pairs.iter().fold(p, |p, &(a, b)| {
        if p >> b & 1 == 1 && p >> a & 1 == 0 {
            p & !(1 << b) | 1 << a
        } else {
            p
        }
    })
}

/// Corners (with and without symmetry): the stored count per layer equals a brute
/// force count of positions that are corner-normal and whose group-1 part is least
/// among its normalised images; without symmetry it is the coefficient of
/// `(1 + x + x^2)^pairs (1 + x)^rest`, 81/256 of all with four corners.
#[test]
fn corner_counts_on_every_shape() {
    for board in shapes() {
        let pairs_all = corner_pairs(&board);
        for (name, start) in starts(&board) {
            let pairs: Vec<(usize, usize)> = pairs_all
                .iter()
                .copied()
                .filter(|&(a, b)| start >> a & 1 == 0 && start >> b & 1 == 0)
                .collect();
            let free = free_lines(&board, start);
            for symmetry in [false, true] {
                let groups = tb::games::dots::groups::symmetric_groups(
                    &board,
                    start,
                    8 << 30,
                    symmetry,
                    true,
                );
                for &(a, b) in &pairs {
                    assert!(
                        groups.iter().any(|g| g.contains(&a) && g.contains(&b)),
                        "{board} {name}: corner pair split"
                    );
                }
                let layout = reduced_layout(&board, start, groups.clone(), symmetry, true);
                let what = format!("{board} {name} symmetry {symmetry}");
                let by_poly = (0..pairs.len())
                    .fold(binomial_row(free.len() - 2 * pairs.len()), |acc, _| {
                        mul(&acc, &[1, 1, 1])
                    });
                let stored: Vec<u64> = (0..=free.len())
                    .map(|k| layout.layer_size(start.count_ones() as usize + k))
                    .collect();
                if !symmetry {
                    assert_eq!(stored, by_poly, "{what}");
                    if pairs.len() == 4 {
                        assert_eq!(stored.iter().sum::<u64>() * 256, 81 << free.len());
                    }
                }
                if free.len() <= 17 {
                    let raw = Layout::new(start, groups.clone());
                    let mut perms = expected_kept(&board, &raw);
                    let identity: Vec<usize> = (0..board.num_lines()).collect();
                    if !symmetry {
                        perms.retain(|t| *t == identity);
                    }
                    let first = mask(&raw.groups[0].lines);
                    let mut brute = vec![0u64; free.len() + 1];
                    for bits in 0u64..1 << free.len() {
                        let p = free
                            .iter()
                            .enumerate()
                            .filter(|&(i, _)| bits >> i & 1 == 1)
                            .fold(start, |p, (_, &l)| p | 1 << l);
                        let q = p & first;
                        let least = perms.iter().all(|t| normalise(&pairs, apply(t, q)) >= q);
                        if normalise(&pairs, p) == p && least {
                            brute[bits.count_ones() as usize] += 1;
                        }
                    }
                    assert_eq!(stored, brute, "{what}: brute force");
                }
            }
        }
    }
}

/// The corner swap keeps values (the oracle, every corner, random positions), and
/// the stored representative under symmetry + corners has the position's value.
#[test]
fn corner_swaps_keep_values() {
    for (rows, cols, samples) in [(2, 2, 400), (2, 3, 400), (3, 3, 1200)] {
        let board = Board::new(rows, cols).unwrap();
        let mut oracle = Oracle::new(rows, cols, 0);
        let pairs = corner_pairs(&board);
        let layout = reduced_layout(
            &board,
            0,
            tb::games::dots::groups::symmetric_groups(&board, 0, 8 << 30, true, true),
            true,
            true,
        );
        let mut x = 0x51_7cc1_b727_220a ^ (rows * 8 + cols) as u64;
        for _ in 0..samples {
            let p = next(&mut x) & next(&mut x) & board.all_lines();
            let v = oracle.value(p);
            for &(a, b) in &pairs {
                if (p >> a & 1) != (p >> b & 1) {
                    let swapped = p ^ (1 << a | 1 << b);
                    assert_eq!(oracle.value(swapped), v, "{board} swap {a} {b}");
                }
            }
            assert_eq!(
                oracle.value(layout.canonical(p)),
                v,
                "{board} representative"
            );
        }
    }
}
