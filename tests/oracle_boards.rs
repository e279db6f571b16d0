//! Every board up to 2x3 / 3x2, and 3x3: each start and penalties 0 and -1, built
//! with the real binary (without reduction, with Wilson's symmetry, corners, and
//! both) and compared with the brute-force oracle: every position through the
//! library, `tb info` digests, `tb export` rows (`--expand`ed to every position with
//! a reduction; boards up to 2x3) and `tb probe --json` move lists for samples.

use crate::harness;
use crate::oracle;

use harness::{
    Build, REDUCTIONS, build, build_all_layers, build_with, check_all_values, check_export_rows,
    check_info, check_probe, export, info, info_layers, parse_csv, parse_jsonl, run_ok,
    sample_positions, tb,
};
use oracle::Oracle;
use std::fmt::Write as _;
use tb::games::dots::tablebase::Tablebase;

const STARTS: [&str; 3] = ["empty", "swedish", "icelandic"];
const PENALTIES: [i32; 2] = [0, -1];

/// Every position containing the start, through `Tablebase::value` on the file.
fn check_library(o: &mut Oracle, b: &Build) {
    #[allow(unused_mut)] // whether `value` needs `&mut self` is the library's choice
    let mut table =
        Tablebase::open(&b.db).unwrap_or_else(|e| panic!("{}: Tablebase::open: {e:#}", b.label()));
    check_all_values(o, b, |p| table.value(p));
}

/// All checks for one small board, every start and penalty.
fn check_small_board(rows: usize, cols: usize) {
    for penalty in PENALTIES {
        let mut o = Oracle::new(rows, cols, penalty);
        for (i, start) in STARTS.into_iter().enumerate() {
            for extra in REDUCTIONS {
                let all = o.num_lines();
                let b = build_with(&o, start, o.start(start), Some(all), extra);
                check_info(&mut o, &b);
                check_library(&mut o, &b);
                let csv = export(&b, &["--format", "csv", "--expand"]);
                let rows_out = parse_csv(&b, &csv);
                check_export_rows(&mut o, &b, &rows_out, all, "tb export --expand");
                let seed = (rows * 100 + cols * 10 + i) as u64 ^ penalty as u64;
                let samples = sample_positions(&o, b.start, 100, seed);
                check_probe(&mut o, &b, &samples);
            }
        }
    }
}

#[test]
fn board_1x1() {
    check_small_board(1, 1);
}

#[test]
fn board_1x2() {
    check_small_board(1, 2);
}

#[test]
fn board_2x1() {
    check_small_board(2, 1);
}

#[test]
fn board_1x3() {
    check_small_board(1, 3);
}

#[test]
fn board_3x1() {
    check_small_board(3, 1);
}

#[test]
fn board_2x2() {
    check_small_board(2, 2);
}

#[test]
fn board_2x3() {
    check_small_board(2, 3);
}

#[test]
fn board_3x2() {
    check_small_board(3, 2);
}

/// JSONL export, `--max-lines` and `-o FILE` on 2x2 (the CSV path is covered above).
#[test]
fn export_formats_and_limits_2x2() {
    for penalty in PENALTIES {
        let mut o = Oracle::new(2, 2, penalty);
        let all = o.num_lines();
        let b = build_with(&o, "empty", 0, Some(all), &["--symmetry", "none"]);
        let jsonl = parse_jsonl(&b, &export(&b, &["--format", "jsonl"]));
        check_export_rows(&mut o, &b, &jsonl, all, "tb export --format jsonl");
        for k in [0, 3, 7] {
            let k_text = k.to_string();
            let csv = export(&b, &["--format", "csv", "--max-lines", &k_text]);
            let rows = parse_csv(&b, &csv);
            check_export_rows(&mut o, &b, &rows, k, "tb export --max-lines");
        }
        let file = b.dir.path().join("export.csv");
        export(
            &b,
            &["--format", "csv", "-o", file.to_str().expect("UTF-8 path")],
        );
        let written = std::fs::read_to_string(&file).expect("export -o wrote its file");
        let rows = parse_csv(&b, &written);
        check_export_rows(&mut o, &b, &rows, all, "tb export -o FILE");
    }
}

/// A build with the default book keeps its deep layers' digests in `tb info`, has
/// no values for pruned layers in the library, and still answers every probe
/// (pruned positions by search).
#[test]
fn default_book_2x3() {
    for penalty in PENALTIES {
        let mut o = Oracle::new(2, 3, penalty);
        for start in ["empty", "icelandic"] {
            let b = build(&o, start, o.start(start), None);
            check_info(&mut o, &b);
            let layers = info_layers(&info(&b.db));
            #[allow(unused_mut)]
            let mut table = Tablebase::open(&b.db)
                .unwrap_or_else(|e| panic!("{}: Tablebase::open: {e:#}", b.label()));
            let mut problems = String::new();
            for p in o.supersets(b.start) {
                let n = p.count_ones() as usize;
                let pruned = layers.get(&n).is_none_or(|l| l.2 == "pruned");
                let expected = (!pruned).then(|| o.value(p) as i8);
                let got = table
                    .value(p)
                    .unwrap_or_else(|e| panic!("{}: Tablebase::value: {e:#}", b.label()));
                if got != expected && problems.lines().count() < 10 {
                    writeln!(
                        problems,
                        "{} (layer {n}): {got:?}, expected {expected:?}",
                        o.bits(p)
                    )
                    .unwrap();
                }
            }
            assert!(problems.is_empty(), "{}:\n{problems}", b.label());
            let samples = sample_positions(&o, b.start, 200, 99 ^ penalty as u64);
            check_probe(&mut o, &b, &samples);
        }
    }
}

/// Building twice into the same file (resume of a finished build) changes nothing.
#[test]
fn rebuild_is_idempotent_2x2() {
    let mut o = Oracle::new(2, 2, 0);
    let b = build_all_layers(&o, "icelandic");
    let before = info_layers(&info(&b.db));
    run_ok(
        tb().arg("build")
            .arg(&b.board)
            .args(["--start", "icelandic", "--penalty=0", "--quiet"])
            .arg("--db")
            .arg(&b.db)
            .arg("--book-lines")
            .arg(o.num_lines().to_string()),
        "second tb build",
    );
    let after = info_layers(&info(&b.db));
    for (n, (positions, digest, _)) in &before {
        let (p2, d2, _) = &after[n];
        assert_eq!(
            (positions, digest),
            (p2, d2),
            "layer {n} changed on rebuild"
        );
    }
    check_library(&mut o, &b);
}

fn check_3x3(start: &str, penalty: i32, probes: usize) {
    let mut o = Oracle::new(3, 3, penalty);
    for extra in REDUCTIONS {
        let b = build_with(&o, start, o.start(start), Some(o.num_lines()), extra);
        check_info(&mut o, &b);
        check_library(&mut o, &b);
        let samples = sample_positions(&o, b.start, probes, 333 ^ penalty as u64);
        check_probe(&mut o, &b, &samples);
    }
}

#[test]
fn board_3x3_empty() {
    check_3x3("empty", 0, 300);
}

#[test]
fn board_3x3_empty_penalty() {
    check_3x3("empty", -1, 300);
}

#[test]
fn board_3x3_swedish() {
    check_3x3("swedish", 0, 200);
}

#[test]
fn board_3x3_swedish_penalty() {
    check_3x3("swedish", -1, 200);
}

#[test]
fn board_3x3_icelandic() {
    check_3x3("icelandic", 0, 200);
}

#[test]
fn board_3x3_icelandic_penalty() {
    check_3x3("icelandic", -1, 200);
}
