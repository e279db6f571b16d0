//! Bigger boards against the brute-force oracle: all of 2x4 (22 lines), and 3x4
//! (31 lines) from random start positions that leave 19-20 lines open, built with
//! the default reduction and with corners; and 3x4 from random *symmetric* starts
//! (so that Wilson's symmetry applies) with symmetry and corners.

use crate::harness;
use crate::oracle;

use harness::{
    Build, build, build_with, check_all_values, check_info, check_probe, sample_positions,
};
use oracle::{Oracle, Rng};
use tb::games::dots::tablebase::Tablebase;

fn check_library(o: &mut Oracle, b: &Build) {
    #[allow(unused_mut)] // whether `value` needs `&mut self` is the library's choice
    let mut table =
        Tablebase::open(&b.db).unwrap_or_else(|e| panic!("{}: Tablebase::open: {e:#}", b.label()));
    check_all_values(o, b, |p| table.value(p));
}

#[test]
fn board_2x4_full() {
    let mut o = Oracle::new(2, 4, 0);
    let b = build(&o, "empty", 0, Some(o.num_lines()));
    check_info(&mut o, &b);
    check_library(&mut o, &b);
    let samples = sample_positions(&o, 0, 300, 24);
    check_probe(&mut o, &b, &samples);
}

/// A 3x4 build from a random start with `open` lines left, given to `--start` as a
/// 0/1 string or as a move list.
fn check_3x4_random(seed: u64, open: usize, penalty: i32, as_move_list: bool) {
    let mut o = Oracle::new(3, 4, penalty);
    let lines = o.num_lines();
    let start = Rng::new(seed).position_with(lines, lines - open);
    let start_arg = if as_move_list {
        o.move_list(start)
    } else {
        o.bits(start)
    };
    for extra in [&[][..], &["--corners"]] {
        let b = build_with(&o, &start_arg, start, Some(lines), extra);
        check_info(&mut o, &b);
        check_library(&mut o, &b);
        let samples = sample_positions(&o, start, 250, seed ^ 0x3434);
        check_probe(&mut o, &b, &samples);
    }
}

/// A 3x4 start made of whole line orbits under the board's symmetries (so every
/// symmetry fixes it) avoiding the corner lines, with `open` lines left (or one
/// orbit more), built with symmetry and corners.
fn check_3x4_symmetric(seed: u64, open: usize) {
    let mut o = Oracle::new(3, 4, 0);
    let lines = o.num_lines();
    let syms = o.symmetries();
    // Corner lines: the perimeter lines of the four corner boxes (line order of
    // docs/FORMAT.md §3.1: h r.c = r * 4 + c, v r.c = 16 + r * 5 + c).
    let corners: u64 = [0, 3, 12, 15, 16, 20, 26, 30]
        .iter()
        .fold(0, |m, &l| m | 1 << l);
    let mut rng = Rng::new(seed);
    let mut start = 0u64;
    while lines - (start.count_ones() as usize) > open {
        let l = rng.next_u64() as usize % lines;
        let orbit = syms.iter().fold(0u64, |m, s| m | 1 << s[l]);
        if orbit & corners == 0 && lines - ((start | orbit).count_ones() as usize) + 4 >= open {
            start |= orbit;
        }
    }
    let b = build_with(&o, &o.bits(start), start, Some(lines), &["--corners"]);
    let info = harness::info(&b.db);
    assert_eq!(info["symmetries"], 4, "{}: every symmetry kept", b.label());
    assert_eq!(info["corners"], true, "{}", b.label());
    check_info(&mut o, &b);
    check_library(&mut o, &b);
    let samples = sample_positions(&o, start, 250, seed ^ 0x5151);
    check_probe(&mut o, &b, &samples);
}

#[test]
fn board_3x4_symmetric_start_with_symmetry_and_corners() {
    check_3x4_symmetric(0x3a4_0003, 20);
    check_3x4_symmetric(0x3a4_0004, 21);
}

#[test]
fn board_3x4_random_start() {
    check_3x4_random(0x3a4_0001, 19, 0, false);
}

#[test]
fn board_3x4_random_start_penalty_move_list() {
    check_3x4_random(0x3a4_0002, 20, -1, true);
}
