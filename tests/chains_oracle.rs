//! Chains as pseudo-lines against an independent brute force.
//!
//! Random positions of small boards get chains marked with dots in a Wilson file
//! written here (the chain boxes and their grouping found by this test's own code);
//! the crate reads the file and searches with the chains as pseudo-lines. The brute
//! force below plays the same game with no pruning and no shared code: while a chain
//! is partly drawn only its lines may be drawn, otherwise any line. Every value and
//! every move's value must agree. The plain game's value (no chains) is compared too:
//! the test prints how often Wilson's assumption changes a value, and checks that the
//! chain game never changes it in these samples where every chain is long (three or
//! more boxes, both ends on the edge): observed, not proven, and not true of every
//! move's value (see `Chains::is_exact_unit`). The exact rule (the default of `tb
//! solve` and `tb build`) is checked against the plain game's brute force: value and
//! every move, with the chains it keeps as units.

use crate::harness;
use crate::oracle;

use harness::tb;
use oracle::{Oracle, Rng};
use std::collections::HashMap;
use tb::games::dots::board::Board;
use tb::games::dots::chains::ChainRule;
use tb::games::dots::notation;
use tb::games::dots::search::{SearchOptions, Solver};

/// The chain game by plain recursion.
struct ChainGame<'a> {
    oracle: &'a Oracle,
    chains: Vec<u64>,
    penalty: i32,
    memo: HashMap<u64, i32>,
}

impl ChainGame<'_> {
    fn legal(&self, p: u64) -> u64 {
        let open = self.oracle.full() & !p;
        for &c in &self.chains {
            if c & p != 0 && c & p != c {
                return c & open;
            }
        }
        open
    }

    fn move_value(&mut self, p: u64, line: usize) -> i32 {
        let k = self.oracle.boxes_completed(p, line) as i32;
        let child = self.value(p | 1 << line);
        if k > 0 { k + child } else { -child }
    }

    fn value(&mut self, p: u64) -> i32 {
        if p == self.oracle.full() {
            return self.penalty;
        }
        if let Some(&v) = self.memo.get(&p) {
            return v;
        }
        let moves = self.legal(p);
        let best = (0..64)
            .filter(|l| moves >> l & 1 == 1)
            .map(|l| self.move_value(p, l))
            .max()
            .expect("a legal move");
        self.memo.insert(p, best);
        best
    }
}

/// Open sides of the boxes with exactly two drawn sides, grouped into chains: two
/// such sides are in one chain when a box joins them (connected components).
fn chain_components(o: &Oracle, p: u64) -> Vec<u64> {
    let mut components: Vec<u64> = Vec::new();
    for r in 0..o.rows() {
        for c in 0..o.cols() {
            let sides = o.box_lines(r, c).iter().fold(0u64, |m, &l| m | 1 << l);
            if (sides & p).count_ones() != 2 {
                continue;
            }
            let open = sides & !p;
            // Merge every component this box touches with its two open sides.
            let mut merged = open;
            components.retain(|&comp| {
                let touches = comp & open != 0;
                if touches {
                    merged |= comp;
                }
                !touches
            });
            components.push(merged);
        }
    }
    components
}

/// A Wilson file of `p` with `dotted` lines marked.
fn wilson(o: &Oracle, p: u64, dotted: u64, penalty: i32) -> String {
    // A line's text: drawn, dotted or open.
    let mark = |l: usize, [drawn, dot, open]: [&'static str; 3]| {
        if p >> l & 1 == 1 {
            drawn
        } else if dotted >> l & 1 == 1 {
            dot
        } else {
            open
        }
    };
    let mut text = format!("{penalty}\n");
    for r in 0..=o.rows() {
        text.push('+');
        for c in 0..o.cols() {
            text.push_str(mark(o.h(r, c), ["-----", "  .  ", "     "]));
            text.push('+');
        }
        text.push('\n');
        if r == o.rows() {
            break;
        }
        for _ in 0..3 {
            let mut row = String::new();
            for c in 0..=o.cols() {
                row.push_str(mark(o.v(r, c), ["|", ".", " "]));
                if c < o.cols() {
                    row.push_str("     ");
                }
            }
            text.push_str(row.trim_end());
            text.push('\n');
        }
    }
    text
}

/// Whether every chain is "long": three or more boxes, both ends on the edge of the
/// board (each end line borders one box only).
fn all_long_and_grounded(o: &Oracle, chains: &[u64]) -> bool {
    chains.iter().all(|&c| {
        let lines: Vec<usize> = (0..64).filter(|l| c >> l & 1 == 1).collect();
        let boxes = lines.len() - 1;
        let edge = lines.iter().filter(|&&l| o.boxes_of_line(l) == 1).count();
        boxes >= 3 && edge == 2
    })
}

#[test]
fn chain_games_match_the_brute_force() {
    let mut rng = Rng::new(1218);
    let (mut compared, mut moves_compared, mut differ_from_plain) = (0, 0, 0);
    let (mut long_chains, mut exact_units) = (0, 0);
    // More samples for exploration: CHAINS_ORACLE_SAMPLES=N (default 60 per case).
    let samples: usize = std::env::var("CHAINS_ORACLE_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250);
    for &(rows, cols, min_drawn) in &[(2, 2, 3), (2, 3, 5), (3, 3, 9), (2, 4, 7)] {
        for penalty in [0, -1] {
            let mut plain = Oracle::new_sparse(rows, cols, penalty);
            let board: Board = plain.board_name().parse().unwrap();
            let lines = plain.num_lines();
            let mut tries = 0;
            let mut found = 0;
            while found < samples && tries < 400 * samples {
                tries += 1;
                let drawn = min_drawn + rng.below(4) as usize;
                let p = rng.position_with(lines, drawn);
                let components = chain_components(&plain, p);
                if components.is_empty() {
                    continue;
                }
                // A random non-empty subset of the chains.
                let pick = 1 + rng.below((1 << components.len()) - 1);
                let chains: Vec<u64> = components
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| pick >> i & 1 == 1)
                    .map(|(_, &c)| c)
                    .collect();
                let dotted = chains.iter().fold(0, |m, &c| m | c);
                let text = wilson(&plain, p, dotted, penalty);
                let parsed = notation::parse_position(&board, &text)
                    .unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_eq!(parsed.lines, p, "{text}");
                let mut theirs = parsed.chains.masks().to_vec();
                let mut ours = chains.clone();
                theirs.sort_unstable();
                ours.sort_unstable();
                assert_eq!(theirs, ours, "chains read from\n{text}");

                let mut solver = Solver::new(
                    board,
                    SearchOptions {
                        penalty,
                        tt_bytes: 1 << 20,
                    },
                );
                let exact = parsed.chains.under(&board, ChainRule::Exact);
                solver.set_chains(parsed.chains);
                // Every other position on two threads (lazy SMP with chains).
                solver.set_threads(1 + found % 2);
                let got = solver.solve(p);
                let want = {
                    let mut game = ChainGame {
                        oracle: &plain,
                        chains: chains.clone(),
                        penalty,
                        memo: HashMap::new(),
                    };
                    let want = game.value(p);
                    assert_eq!(got.value, want, "chain value of\n{text}");
                    let legal = game.legal(p);
                    assert_eq!(
                        got.moves.iter().fold(0u64, |m, mv| m | 1 << mv.line),
                        legal,
                        "legal moves of\n{text}"
                    );
                    for mv in &got.moves {
                        assert_eq!(
                            mv.value,
                            game.move_value(p, mv.line),
                            "move {} of\n{text}",
                            plain.line_name(mv.line)
                        );
                        moves_compared += 1;
                    }
                    want
                };
                let plain_value = plain.value(p);
                // The exact rule: the plain game's value and every move's, with the
                // chains it keeps as units (boxes on the edge nothing else touches).
                exact_units += exact.masks().len();
                let mut solver = Solver::new(
                    board,
                    SearchOptions {
                        penalty,
                        tt_bytes: 1 << 20,
                    },
                );
                if !exact.is_empty() {
                    solver.set_chains(exact);
                }
                let got = solver.solve(p);
                assert_eq!(got.value, plain_value, "exact value of\n{text}");
                let plain_moves = plain.move_values(p);
                assert_eq!(got.moves.len(), plain_moves.len(), "exact moves of\n{text}");
                for mv in &got.moves {
                    let want = plain_moves.iter().find(|m| m.0 == mv.line).map(|m| m.1);
                    assert_eq!(
                        Some(mv.value),
                        want,
                        "exact move {} of\n{text}",
                        plain.line_name(mv.line)
                    );
                }
                long_chains += usize::from(all_long_and_grounded(&plain, &chains));
                if plain_value != want {
                    differ_from_plain += 1;
                    assert!(
                        !all_long_and_grounded(&plain, &chains),
                        "long grounded chains changed the value ({plain_value} plain, {want} with chains) of\n{text}"
                    );
                }
                compared += 1;
                found += 1;
            }
            assert!(
                found >= samples / 3,
                "{rows}x{cols}: only {found} positions with chains"
            );
        }
    }
    eprintln!(
        "{compared} positions ({moves_compared} moves) match; Wilson's assumption changed the value of {differ_from_plain}; {long_chains} had only long grounded chains; the exact rule kept {exact_units} chains as units"
    );
    assert!(
        exact_units > 0,
        "no chain the exact rule keeps: the exact units went untested"
    );
}

/// The real binary: `tb solve` on a Wilson file with chains analyses them (text and
/// JSON say so, the values are the chain game's), and the commands that answer the
/// plain game refuse such a file instead of ignoring its dots.
#[test]
fn the_commands_read_chain_files() {
    let plain = Oracle::new_sparse(3, 3, 0);
    let board = plain.board_name();
    // Box (1,1) with its left and right sides drawn: a one-box chain of two lines
    // (h1.1 and h2.1); and v0.0 drawn elsewhere.
    let p = [plain.v(1, 1), plain.v(1, 2), plain.v(0, 0)]
        .iter()
        .fold(0u64, |m, &l| m | 1 << l);
    let chain = 1u64 << plain.h(1, 1) | 1 << plain.h(2, 1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chain.txt");
    std::fs::write(&file, wilson(&plain, p, chain, 0)).unwrap();
    let file = file.to_str().unwrap();

    // By default the chain (one box inside the board) is played as plain lines:
    // the plain game's answer, and the output says so.
    let out = harness::run_ok(tb().args(["solve", &board, file]), "tb solve");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("chains: 1 marked, analysed exactly: 0 played as units"),
        "{text}"
    );
    let out = harness::run_ok(tb().args(["solve", &board, file, "--json"]), "tb solve");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut plain_game = Oracle::new_sparse(3, 3, 0);
    assert_eq!(v["value"], plain_game.value(p), "{v}");
    assert_eq!(v["chain_rule"], "exact", "{v}");
    assert!(
        v.get("chains").is_none() && v.get("approximate").is_none(),
        "{v}"
    );
    let plain_moves = plain_game.move_values(p);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), plain_moves.len(), "{v}");
    for m in moves {
        let line = m["line"].as_u64().unwrap() as usize;
        let want = plain_moves.iter().find(|x| x.0 == line).unwrap().1;
        assert_eq!(m["value"], want, "{v}");
    }

    // --wilson-chains: the chain game, said to be approximate.
    let out = harness::run_ok(
        tb().args(["solve", &board, file, "--wilson-chains"]),
        "tb solve --wilson-chains",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "chains as pseudo-lines: 1 chains of 2 lines; 20 units open (Wilson's assumption: values may differ"
        ),
        "{text}"
    );
    let out = harness::run_ok(
        tb().args(["solve", &board, file, "--json", "--wilson-chains"]),
        "tb solve --wilson-chains",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chains"], serde_json::json!([["h1.1", "h2.1"]]), "{v}");
    assert_eq!(v["chain_rule"], "wilson", "{v}");
    assert_eq!(v["approximate"], true, "{v}");
    let mut game = ChainGame {
        oracle: &plain,
        chains: vec![chain],
        penalty: 0,
        memo: HashMap::new(),
    };
    assert_eq!(v["value"], game.value(p), "{v}");
    // Entering the chain at either line leaves the other as the only legal move.
    let moves: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(moves.contains(&"h1.1") && moves.contains(&"h2.1"), "{v}");
    assert_eq!(game.legal(p | 1 << plain.h(1, 1)), 1 << plain.h(2, 1));

    // Plain-game commands refuse chain files.
    let db = harness::build_file(dir.path(), "3x3.tb", &["3x3"]);
    for (args, what) in [
        (
            vec!["probe", "--db", db.to_str().unwrap(), file],
            "a tablebase holds the plain game",
        ),
        (
            vec![
                "build",
                &board,
                "--start",
                file,
                "--loony",
                "--wilson-chains",
            ],
            "--loony analyses the plain game",
        ),
        (
            vec![
                "build",
                &board,
                "--start",
                file,
                "--corners",
                "--wilson-chains",
            ],
            "leave out --symmetry wilson and --corners",
        ),
        (vec!["play", &board, file], "remove the chain dots"),
        (
            vec!["solve", &board, file, "--loony"],
            "remove the chain dots",
        ),
    ] {
        let out = tb().current_dir(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            harness::describe(&out)
        );
        assert!(err.contains(what), "{args:?}: {err}");
    }
    // An exact build of the chain file keeps no chain (it is one box inside the
    // board): a plain table from that start, which answers the file itself.
    let exact = dir.path().join("exact.tb");
    harness::run_ok(
        tb().args(["build", &board, "--quiet", "--start", file, "--db"])
            .arg(&exact),
        "tb build exact",
    );
    let out = harness::run_ok(tb().args(["info", "--json", "--db"]).arg(&exact), "tb info");
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        info.get("chains").is_none() && info.get("approximate").is_none(),
        "{info}"
    );
    let out = harness::run_ok(
        tb().args(["probe", "--json", "--db"])
            .arg(&exact)
            .arg(plain.bits(p)),
        "tb probe",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["value"], plain_game.value(p), "{v}");

    // A chain file built under Wilson's rule resumes only under it.
    let wilson_db = dir.path().join("wilson.tb");
    harness::run_ok(
        tb().args([
            "build",
            &board,
            "--quiet",
            "--wilson-chains",
            "--start",
            file,
            "--db",
        ])
        .arg(&wilson_db),
        "tb build --wilson-chains",
    );
    let out = tb()
        .args(["build", &board, "--quiet", "--start", file, "--db"])
        .arg(&wilson_db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", harness::describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("resume it with --wilson-chains"),
        "{}",
        harness::describe(&out)
    );

    // A dot on a line that no chain box joins is an error naming the line.
    std::fs::write(
        dir.path().join("stray.txt"),
        wilson(&plain, p, 1 << plain.h(0, 2), 0),
    )
    .unwrap();
    let out = tb()
        .current_dir(dir.path())
        .args(["solve", &board, "stray.txt"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        err.contains("dotted line h0.2 is not a side of a chain box"),
        "{err}"
    );
}

/// A random position of `o` with `min_drawn..min_drawn + 4` lines and some of its
/// chains (none when it has none).
fn position_with_chains(o: &Oracle, rng: &mut Rng, min_drawn: usize) -> Option<(u64, Vec<u64>)> {
    let drawn = min_drawn + rng.below(4) as usize;
    let p = rng.position_with(o.num_lines(), drawn);
    let components = chain_components(o, p);
    if components.is_empty() {
        return None;
    }
    let pick = 1 + rng.below((1 << components.len()) - 1);
    let chains = components
        .iter()
        .enumerate()
        .filter(|(i, _)| pick >> i & 1 == 1)
        .map(|(_, &c)| c)
        .collect();
    Some((p, chains))
}

/// Chain tablebases (`tb build --start FILE` where the file marks chains), built by
/// the real binary, against the brute force: every stored position (`tb export`),
/// probes of positions reached by random legal play (chains partly drawn among them:
/// value and every move's), and `tb verify`.
#[test]
fn chain_tablebases_match_the_brute_force() {
    let mut rng = Rng::new(1812);
    let dir = tempfile::tempdir().unwrap();
    let (mut builds, mut exported, mut probed) = (0, 0, 0);
    for &(rows, cols, min_drawn, samples) in &[(2, 2, 3, 4), (2, 3, 5, 4), (3, 3, 10, 3)] {
        for penalty in [0, -1] {
            let plain = Oracle::new_sparse(rows, cols, penalty);
            let board = plain.board_name();
            let mut found = 0;
            for _ in 0..400 * samples {
                if found == samples {
                    break;
                }
                let Some((p, chains)) = position_with_chains(&plain, &mut rng, min_drawn) else {
                    continue;
                };
                let dotted = chains.iter().fold(0, |m, &c| m | c);
                let units = (plain.full() & !p & !dotted).count_ones() + chains.len() as u32;
                if units > 16 {
                    continue;
                }
                found += 1;
                let file = dir.path().join(format!("start{builds}.txt"));
                std::fs::write(&file, wilson(&plain, p, dotted, penalty)).unwrap();
                let db = dir.path().join(format!("chains{builds}.tb"));
                builds += 1;
                let what = format!(
                    "{board} penalty {penalty} chains {chains:?} from\n{}",
                    plain.bits(p)
                );
                harness::run_ok(
                    tb().args(["build", &board, "--quiet", "--wilson-chains", "--start"])
                        .arg(&file)
                        .arg("--db")
                        .arg(&db),
                    &format!("tb build {what}"),
                );
                let mut game = ChainGame {
                    oracle: &plain,
                    chains: chains.clone(),
                    penalty,
                    memo: HashMap::new(),
                };
                let parsed_board: Board = board.parse().unwrap();

                // Every stored position: one per combination of units.
                let out = harness::run_ok(
                    tb().args(["export", "--format", "jsonl", "--db"]).arg(&db),
                    &format!("tb export {what}"),
                );
                let text = String::from_utf8(out.stdout).unwrap();
                let mut rows_seen = 0u64;
                for row in text.lines() {
                    let v: serde_json::Value = serde_json::from_str(row).unwrap();
                    let position =
                        notation::parse_position(&parsed_board, v["position"].as_str().unwrap())
                            .unwrap()
                            .lines;
                    assert_eq!(v["lines"], position.count_ones(), "{row} of {what}");
                    assert_eq!(v["value"], game.value(position), "{row} of {what}");
                    rows_seen += 1;
                }
                assert_eq!(rows_seen, 1 << units, "positions exported of {what}");
                exported += rows_seen;

                // Random legal play from the start, each position probed.
                let mut positions = Vec::new();
                for _ in 0..8 {
                    let mut q = p;
                    let steps = rng.below(u64::from(units) + 4);
                    for _ in 0..steps {
                        let legal = game.legal(q);
                        if legal == 0 {
                            break;
                        }
                        let options: Vec<usize> = (0..64).filter(|l| legal >> l & 1 == 1).collect();
                        q |= 1 << options[rng.below(options.len() as u64) as usize];
                        positions.push(q);
                    }
                }
                positions.push(p);
                let input: String = positions.iter().map(|&q| plain.bits(q) + "\n").collect();
                let out = harness::run_ok(
                    tb().args(["probe", "--json", "--db"])
                        .arg(&db)
                        .write_stdin(input),
                    &format!("tb probe {what}"),
                );
                let text = String::from_utf8(out.stdout).unwrap();
                let answers: Vec<&str> = text.lines().collect();
                assert_eq!(answers.len(), positions.len(), "{text}");
                for (&q, answer) in positions.iter().zip(answers) {
                    let v: serde_json::Value = serde_json::from_str(answer).unwrap();
                    let here = format!("{} in {what}", plain.bits(q));
                    assert_eq!(v["value"], game.value(q), "value of {here}: {answer}");
                    assert_eq!(v["source"], "book", "{here}: {answer}");
                    let moves = v["moves"].as_array().unwrap();
                    let legal = game.legal(q);
                    assert_eq!(
                        moves.len() as u32,
                        legal.count_ones(),
                        "moves of {here}: {answer}"
                    );
                    for m in moves {
                        let line = m["line"].as_u64().unwrap() as usize;
                        assert_eq!(legal >> line & 1, 1, "move {line} of {here}");
                        assert_eq!(
                            m["value"],
                            game.move_value(q, line),
                            "move {line} of {here}"
                        );
                    }
                    probed += 1;
                }

                let out = harness::run_ok(
                    tb().args(["verify", "--db"]).arg(&db),
                    &format!("tb verify {what}"),
                );
                assert!(String::from_utf8_lossy(&out.stdout).ends_with("OK\n"));

                // `tb info` names the chains it stores as units.
                let out = harness::run_ok(
                    tb().args(["info", "--json", "--db"]).arg(&db),
                    &format!("tb info {what}"),
                );
                let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                let mut listed: Vec<Vec<String>> =
                    serde_json::from_value(info["chains"].clone()).unwrap();
                let mut expected: Vec<Vec<String>> =
                    chains.iter().map(|&c| parsed_board.line_names(c)).collect();
                listed.sort();
                expected.sort();
                assert_eq!(listed, expected, "chains in tb info of {what}");
                // Approximate unless every chain is a box on the edge that nothing
                // else touches (two lines, each bordering one box).
                let exact_units = chains.iter().all(|&c| {
                    c.count_ones() == 2
                        && (0..64)
                            .filter(|l| c >> l & 1 == 1)
                            .all(|l| plain.boxes_of_line(l) == 1)
                });
                assert_eq!(
                    info.get("approximate") == Some(&serde_json::json!(true)),
                    !exact_units,
                    "approximate in tb info of {what}"
                );
            }
            assert!(found == samples, "{board}: only {found} starts with chains");
        }
    }
    eprintln!("{builds} chain tablebases: {exported} stored positions and {probed} probes match");
}
