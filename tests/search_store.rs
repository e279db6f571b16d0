//! `tb solve --store`: proven positions kept between searches, through the real
//! binary (separate processes sharing one SQLite store), against the independent
//! oracle: a search run in pieces under a node limit, and a root solved from its
//! children solved first as separate jobs, both give the oracle's value and every
//! move's; a store of another game is refused.

use crate::harness;
use crate::oracle;

use harness::{probe_differences, run_ok, tb};
use oracle::{Oracle, Rng};
use serde_json::Value;

/// One `tb solve --json --store` run: its exit code and JSON object.
fn solve(board: &str, position: &str, store: &std::path::Path, extra: &[&str]) -> (i32, Value) {
    let out = tb()
        .args([
            "solve",
            board,
            position,
            "--json",
            "--threads",
            "1",
            "--store",
        ])
        .arg(store)
        .args(extra)
        .output()
        .unwrap();
    harness::assert_no_panic(&out, "tb solve --store");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", harness::describe(&out)));
    (out.status.code().unwrap(), v)
}

#[test]
fn a_search_in_pieces_and_a_root_from_its_children_give_the_oracle_answer() {
    let mut o = Oracle::new(3, 3, 0);
    let board = o.board_name();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(2044);
    for round in 0..3 {
        let p = rng.position_with(o.num_lines(), 4 + round);
        let bits = o.bits(p);
        let fresh = run_ok(
            tb().args(["solve", &board, &bits, "--json", "--threads", "1"]),
            "tb solve",
        );
        let fresh: Value = serde_json::from_slice(&fresh.stdout).unwrap();
        let fresh_nodes = fresh["nodes"].as_u64().unwrap();

        // In pieces: each run stopped by a node limit adds what it proved, and
        // the runs get further until one finishes.
        let store = dir.path().join(format!("pieces{round}.db"));
        let limit = (fresh_nodes / 5).max(50).to_string();
        let mut runs = 0;
        let answer = loop {
            runs += 1;
            assert!(runs < 200, "the pieces never finish: {bits}");
            let (code, v) = solve(&board, &bits, &store, &["--max-nodes", &limit]);
            if code == 0 {
                break v;
            }
            assert_eq!(code, 1, "{v}");
            assert_eq!(v["stopped"], "node limit", "{v}");
            let value = i64::from(o.value(p));
            assert!(v["lower"].as_i64().unwrap() <= value && value <= v["upper"].as_i64().unwrap());
            assert!(
                v["store"]["total"].as_u64().unwrap() > 0,
                "a stopped run stores: {v}"
            );
        };
        assert!(runs > 1, "no run was stopped: {bits}");
        assert!(
            probe_differences(&mut o, &board, p, &answer).is_empty(),
            "{answer}"
        );
        // Once more: everything comes from the store.
        let (code, again) = solve(&board, &bits, &store, &[]);
        assert_eq!(code, 0);
        assert!(
            probe_differences(&mut o, &board, p, &again).is_empty(),
            "{again}"
        );
        assert!(again["store"]["loaded"].as_u64().unwrap() > 0, "{again}");
        assert!(
            again["nodes"].as_u64().unwrap() * 10 < fresh_nodes,
            "a rerun searched {} nodes, a fresh run {fresh_nodes}",
            again["nodes"]
        );

        // The root's children as separate jobs into one store, then the root.
        let store = dir.path().join(format!("children{round}.db"));
        for line in (0..o.num_lines()).filter(|l| p >> l & 1 == 0) {
            let (code, v) = solve(&board, &o.bits(p | 1 << line), &store, &[]);
            assert_eq!(code, 0, "{v}");
        }
        let (code, root) = solve(&board, &bits, &store, &[]);
        assert_eq!(code, 0, "{root}");
        assert!(
            probe_differences(&mut o, &board, p, &root).is_empty(),
            "{root}"
        );
        assert!(
            root["nodes"].as_u64().unwrap() < fresh_nodes,
            "the root from its children searched {} nodes, a fresh run {fresh_nodes}",
            root["nodes"]
        );
    }

    // A store belongs to one game: another penalty or board is refused.
    let store = dir.path().join("pieces0.db");
    let out = tb()
        .args(["solve", &board, "--penalty", "-1", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", harness::describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("penalty 0, this search penalty -1"),
        "{}",
        harness::describe(&out)
    );
    let out = tb()
        .args(["solve", "2x2", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", harness::describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("board 3x3, this search board 2x2"));
    // Text output says what the store did.
    let out = run_ok(
        tb().args(["solve", &board, "--store"])
            .arg(dir.path().join("text.db")),
        "tb solve --store",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("store: 0 positions loaded, "), "{text}");
}

/// A position solved with `--best` into a store is answered from it again with no
/// search to speak of: the move the store proves is taken before any other is
/// searched (the table's own move for the position may be one that a later test
/// refuted). The children of empty 3x4 through the top two rows of horizontal
/// lines, each solved then solved again.
#[test]
fn a_stored_best_move_is_found_without_search() {
    let o = Oracle::new_sparse(3, 4, 0);
    let board = o.board_name();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("children.db");
    let tt = ["--best", "--tt", "64MiB"];
    for line in 0..8 {
        let bits = o.bits(1 << line);
        let (code, first) = solve(&board, &bits, &store, &tt);
        assert_eq!(code, 0, "{first}");
        let (code, again) = solve(&board, &bits, &store, &tt);
        assert_eq!(code, 0, "{again}");
        assert_eq!(again["value"], first["value"], "{bits}");
        assert!(
            again["nodes"].as_u64().unwrap() <= 2,
            "{bits} again from the store: {again}"
        );
    }
}
