//! Every kernel path against the oracle: the automatic layouts of small boards have
//! one or two groups, so here the same boards are built with explicit `--groups`
//! that exercise three to six groups, rows longer than the shared suffix table
//! (2^16 positions), single-line and interleaved (h and v mixed) groups.

use crate::harness;
use crate::oracle;

use harness::{Build, check_all_values, check_info, run_ok, tb};
use oracle::Oracle;

/// Builds with explicit groups, keeping every layer.
fn build_with_groups(o: &Oracle, start: &str, groups: &str) -> Build {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("layout.tb");
    let board = o.board_name();
    run_ok(
        tb().args([
            "build", &board, "--start", start, "--groups", groups, "--quiet",
        ])
        .arg(format!("--penalty={}", o.penalty()))
        .arg("--book-lines")
        .arg(o.num_lines().to_string())
        .arg("--db")
        .arg(&db),
        &format!("tb build {board} --groups {groups}"),
    );
    Build {
        dir,
        db,
        board,
        start_arg: start.to_string(),
        start: o.start(start),
        penalty: o.penalty(),
        book_lines: Some(o.num_lines()),
        extra: Vec::new(),
    }
}

fn check(o: &mut Oracle, start: &str, groups: &str) {
    let b = build_with_groups(o, start, groups);
    let table = tb::games::dots::tablebase::Tablebase::open(&b.db).expect("open the built file");
    check_all_values(o, &b, |p| table.value(p));
    check_info(o, &b);
}

#[test]
fn three_by_three_with_many_group_layouts() {
    let mut o = Oracle::new(3, 3, 0);
    // Rows of 213,444 positions for group-1 moves (past the shared suffix table).
    check(&mut o, "empty", "2,11,11");
    check(&mut o, "empty", "8,8,8");
    check(&mut o, "empty", "4,4,4,4,4,4");
    check(&mut o, "empty", "1,7,16");
    // Interleaved groups: each mixes horizontal and vertical lines.
    check(
        &mut o,
        "empty",
        "h0.0 v0.0 h3.2 v2.3 h1.1 v1.2/h0.1 h0.2 v0.1 v0.2 v0.3 h1.0/h1.2 h2.0 h2.1 h2.2 h3.0 h3.1/v1.0 v1.1 v1.3 v2.0 v2.1 v2.2",
    );
}

#[test]
fn starts_and_penalty_with_several_groups() {
    let mut o = Oracle::new(3, 3, -1);
    check(&mut o, "swedish", "3,4,5");
    check(&mut o, "icelandic", "6,6,6");
    let mut o = Oracle::new(2, 4, 0);
    check(&mut o, "empty", "5,6,5,6");
}

/// `tb build --plan --json` predicts what the build then does: the same groups,
/// stored positions per layer, and a time from the assumed rate.
#[test]
fn a_plan_counts_what_the_build_stores() {
    for args in [
        &["2x3"][..],
        &["3x3", "--corners"],
        &["3x3", "--symmetry", "none"],
    ] {
        let plan = run_ok(
            tb().arg("build")
                .args(args)
                .args(["--plan", "--json", "--threads", "2"]),
            "tb build --plan",
        );
        let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = harness::build_file(dir.path(), "p.tb", args);
        let info = harness::info(&db);
        let layers = harness::info_layers(&info);
        let mut total = 0;
        for layer in plan["layers"].as_array().unwrap() {
            let n = layer["n"].as_u64().unwrap() as usize;
            let positions = layer["positions"].as_u64().unwrap();
            assert_eq!(layers[&n].0, positions, "{args:?} layer {n}");
            total += positions;
        }
        assert_eq!(layers.len(), plan["layers"].as_array().unwrap().len());
        assert_eq!(plan["total_positions"], total);
        assert_eq!(info["stored_positions"], total, "{args:?}");
        assert_eq!(plan["threads"], 2);
        let seconds = plan["predicted_seconds"].as_f64().unwrap();
        let expected =
            total as f64 / (2.0 * tb::games::dots::plan::ASSUMED_POSITIONS_PER_CORE_SECOND);
        assert!(
            (seconds - expected).abs() <= 1e-9 * expected,
            "{seconds} vs {expected}"
        );
    }
}
