//! Bigger boards against the brute-force oracle: all of 2x4 (22 lines), and 3x4
//! (31 lines) from random start positions that leave 19-20 lines open.

mod harness;
mod oracle;

use harness::{Build, build, check_all_values, check_info, check_probe, sample_positions};
use oracle::{Oracle, Rng};
use tb::tablebase::Tablebase;

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
    let b = build(&o, &start_arg, start, Some(lines));
    check_info(&mut o, &b);
    check_library(&mut o, &b);
    let samples = sample_positions(&o, start, 250, seed ^ 0x3434);
    check_probe(&mut o, &b, &samples);
}

#[test]
fn board_3x4_random_start() {
    check_3x4_random(0x3a4_0001, 19, 0, false);
}

#[test]
fn board_3x4_random_start_penalty_move_list() {
    check_3x4_random(0x3a4_0002, 20, -1, true);
}
