//! `tb solve`, the probe fallback past the book and `verify --search`, through the
//! real binary, against the independent oracle.

use crate::harness;
use crate::oracle;

use harness::{build, probe_differences, run_ok, sample_positions, tb};
use oracle::Oracle;
use serde_json::Value;

/// `--max-nodes` stops a search with exit 1 and bounds that hold the oracle's
/// value (or lets it finish with the right answer); the probe fallback too.
#[test]
fn bounded_searches_stop_with_true_bounds() {
    let mut o = Oracle::new(2, 3, 0);
    let board = o.board_name();
    let mut stopped = 0;
    for p in sample_positions(&o, 0, 20, 5) {
        let value = o.value(p) as i64;
        let out = tb()
            .args(["solve", &board, &o.bits(p), "--json", "--max-nodes", "30"])
            .output()
            .unwrap();
        harness::assert_no_panic(&out, "tb solve --max-nodes");
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        match out.status.code() {
            Some(0) => assert!(probe_differences(&mut o, &board, p, &v).is_empty(), "{v}"),
            Some(1) => {
                stopped += 1;
                assert_eq!(v["stopped"], "node limit", "{v}");
                let (lower, upper) = (v["lower"].as_i64().unwrap(), v["upper"].as_i64().unwrap());
                assert!(lower <= value && value <= upper, "{v}: value {value}");
            }
            code => panic!("exit {code:?}: {v}"),
        }
    }
    assert!(stopped > 0, "no search was stopped");
    // The probe fallback past a book of 2 lines: a stopped search is an error
    // object for its position, never a value.
    let b = build(&o, "empty", 0, Some(2));
    let deep: Vec<u64> = sample_positions(&o, 0, 40, 9)
        .into_iter()
        .filter(|p| (3..=8).contains(&p.count_ones()))
        .take(5)
        .collect();
    let mut cmd = tb();
    cmd.args(["probe", "--json", "--max-nodes", "5", "--db"])
        .arg(&b.db);
    for &p in &deep {
        cmd.arg(o.bits(p));
    }
    let out = cmd.output().unwrap();
    harness::assert_no_panic(&out, "tb probe --max-nodes");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), deep.len());
    let mut errors = 0;
    for (v, &p) in lines.iter().zip(&deep) {
        if let Some(e) = v["error"].as_str() {
            errors += 1;
            assert!(e.contains("node limit"), "{v}");
        } else {
            assert!(probe_differences(&mut o, &board, p, v).is_empty(), "{v}");
        }
    }
    assert!(errors > 0, "no probe search was stopped");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn solve_agrees_with_the_oracle_on_random_positions() {
    for (rows, cols, penalty, count) in [(2, 3, 0, 60), (3, 3, -1, 25), (2, 4, 0, 25)] {
        let mut o = Oracle::new(rows, cols, penalty);
        let board = o.board_name();
        // Positions with at most 16 open lines keep each search short.
        let positions: Vec<u64> = sample_positions(&o, 0, count * 4, 11)
            .into_iter()
            .filter(|p| o.num_lines() - p.count_ones() as usize <= 16)
            .take(count)
            .collect();
        for p in positions {
            let out = run_ok(
                tb().args([
                    "solve",
                    &board,
                    &o.bits(p),
                    "--json",
                    "--pv",
                    "--tt",
                    "16MiB",
                ])
                .arg(format!("--penalty={penalty}")),
                "tb solve",
            );
            let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
            let diff = probe_differences(&mut o, &board, p, &v);
            assert!(diff.is_empty(), "tb solve {board} {}: {diff}", o.bits(p));
            assert_eq!(v["source"], "search");
            assert!(v["nodes"].as_u64().is_some());
            let pv = v["pv"].as_array().expect("pv");
            assert_eq!(
                pv.len(),
                o.num_lines() - p.count_ones() as usize,
                "pv plays to the end"
            );
        }
    }
}

/// `tb solve --losing-bounds`: the value and every move reaching it exact, every
/// other move listed in `upper_bounds` with a bound the oracle's worth does not
/// exceed, below the value; the text marks those moves `<=`.
#[test]
fn solve_losing_bounds_gives_true_upper_bounds() {
    let mut o = Oracle::new(3, 3, 0);
    let board = o.board_name();
    let mut bounded = 0;
    for p in sample_positions(&o, 0, 12, 17) {
        let out = run_ok(
            tb().args(["solve", &board, &o.bits(p), "--losing-bounds", "--json"]),
            "tb solve --losing-bounds",
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        let value = o.value(p) as i64;
        assert_eq!(v["value"].as_i64(), Some(value), "{v}");
        let listed: Vec<&str> = v["upper_bounds"]
            .as_array()
            .expect("upper_bounds")
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        let worths = o.move_values(p);
        let moves = v["moves"].as_array().expect("moves");
        assert_eq!(moves.len(), worths.len(), "{v}");
        for m in moves {
            let line = m["line"].as_u64().unwrap() as usize;
            let shown = m["value"].as_i64().unwrap();
            let worth = i64::from(worths.iter().find(|w| w.0 == line).unwrap().1);
            if listed.contains(&m["name"].as_str().unwrap()) {
                bounded += 1;
                assert!(worth <= shown && shown < value, "{v}: {line} worth {worth}");
            } else {
                assert_eq!((shown, worth), (value, value), "{v}: {line}");
            }
        }
    }
    assert!(bounded > 20, "only {bounded} bounds");
    let out = run_ok(
        tb().args(["solve", &board, "h0.0,v1.1", "--losing-bounds"]),
        "tb solve --losing-bounds",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.contains("<=")), "{text}");
}

/// `tb solve --best`: the value and one move, which the oracle says reaches it;
/// on a Wilson file with chains, one of the moves a full solve values best.
#[test]
fn solve_best_gives_one_move_that_reaches_the_value() {
    let mut o = Oracle::new(3, 3, 0);
    let board = o.board_name();
    for p in sample_positions(&o, 0, 12, 13) {
        let out = run_ok(
            tb().args(["solve", &board, &o.bits(p), "--best", "--json"]),
            "tb solve --best",
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        let value = o.value(p) as i64;
        assert_eq!(v["value"].as_i64(), Some(value), "{v}");
        let moves = v["moves"].as_array().expect("moves");
        if p == o.full() {
            assert!(moves.is_empty(), "{v}");
            continue;
        }
        assert_eq!(moves.len(), 1, "{v}");
        assert_eq!(v["best_only"], true, "{v}");
        let line = moves[0]["line"].as_u64().unwrap() as usize;
        let reached = o
            .move_values(p)
            .into_iter()
            .find(|m| m.0 == line)
            .map(|m| m.1);
        assert_eq!(reached.map(i64::from), Some(value), "{v}");
    }
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/problem-12.18-endgame.txt"
    );
    let solve = |extra: &[&str]| -> Value {
        let out = run_ok(
            tb().args(["solve", "5x5", file, "--json"]).args(extra),
            "tb solve",
        );
        serde_json::from_slice(&out.stdout).expect("one JSON object")
    };
    let (full, best) = (solve(&[]), solve(&["--best"]));
    assert_eq!(best["value"], full["value"]);
    assert!(full.get("best_only").is_none(), "{full}");
    let moves = best["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 1, "{best}");
    let best_lines: Vec<&Value> = full["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["value"] == full["value"])
        .map(|m| &m["line"])
        .collect();
    assert!(
        best_lines.contains(&&moves[0]["line"]),
        "{best} against {full}"
    );
    let out = tb()
        .args(["solve", "2x2", "--loony", "--best"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "--loony --best is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--best"));
}

#[test]
fn probe_falls_back_to_search_past_the_book_and_says_so() {
    let mut o = Oracle::new(2, 3, 0);
    let b = build(&o, "empty", 0, Some(6));
    let positions = sample_positions(&o, 0, 300, 5);
    let input: String = positions.iter().map(|&p| o.bits(p) + "\n").collect();
    let out = run_ok(
        tb().args(["probe", "--json", "--db"])
            .arg(&b.db)
            .write_stdin(input),
        "tb probe past the book",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut sources = [0; 2];
    for (line, &p) in text.lines().zip(&positions) {
        let v: Value = serde_json::from_str(line).unwrap();
        let diff = probe_differences(&mut o, "2x3", p, &v);
        assert!(diff.is_empty(), "{}: {diff}", o.bits(p));
        // Book layers are 0..=6; a position of layer 6 needs layer 7 for its moves.
        let expected = if p.count_ones() < 6 { "book" } else { "search" };
        assert_eq!(v["source"], expected, "{}", o.bits(p));
        sources[usize::from(expected == "search")] += 1;
    }
    assert!(
        sources[0] > 0 && sources[1] > 0,
        "both sources exercised: {sources:?}"
    );

    // With the fallback off, deep positions are refused clearly.
    let deep = positions
        .iter()
        .find(|p| (9..17).contains(&p.count_ones()))
        .unwrap();
    let out = tb()
        .args(["probe", "--search-limit", "0", "--db"])
        .arg(&b.db)
        .arg(o.bits(*deep))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stores positions with 0..6 lines"));

    let verify = run_ok(
        tb().args(["verify", "--search", "200", "--json", "--db"])
            .arg(&b.db),
        "verify --search",
    );
    let report: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(report["searched"], 200);
    assert_eq!(report["ok"], true);
}
