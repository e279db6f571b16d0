//! `tb build qubic` end to end on positions small enough for CI: the real binary
//! builds a strategy file, `tb verify` (the independent checker) accepts it, games
//! against random defences played by the probe answers end in X's four (lines
//! counted here, from the rules), a damaged strategy is caught, and a build killed
//! with SIGKILL resumes.

use crate::interrupt;

use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tb::games::qubic::position::Position;
use tb::games::qubic::report;
use tb::games::qubic::stored::StrategyFile;

fn tb() -> assert_cmd::Command {
    assert_cmd::cargo::cargo_bin_cmd!("tb")
}

fn run_ok(cmd: &mut assert_cmd::Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A start with 57 O replies whose strategy is proven in a few seconds.
const SMALL: &str = "0-3-60-21-15-63-12";
/// A richer one (a few hundred strategic positions, ~10 s).
const RICHER: &str = "0-63-21-42-15";

fn build(dir: &Path, start: &str) -> (std::path::PathBuf, Value) {
    build_with(dir, start, &[])
}

fn build_with(dir: &Path, start: &str, options: &[&str]) -> (std::path::PathBuf, Value) {
    let db = dir.join(format!(
        "{}{}.tb",
        start.replace('-', "_"),
        // (A path among the options names no directory.)
        options.join("").replace('/', "_")
    ));
    let out = run_ok(
        tb().args(["build", "qubic", "--start", start, "--json", "-q", "--db"])
            .arg(&db)
            .args(options),
        "build qubic",
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["complete"], true, "{summary}");
    (db, summary)
}

/// The 76 lines, from the rules: four cells in a row along any of the 13
/// directions.
fn lines() -> Vec<u64> {
    let mut out = Vec::new();
    for a in 0..64i32 {
        for d in [1, 4, 16, 5, 3, 17, 15, 20, 12, 21, 19, 13, 11] {
            let cells: Vec<i32> = (0..4).map(|k| a + k * d).collect();
            let xyz = |c: i32| (c % 4, c / 4 % 4, c / 16);
            // Consecutive cells must be neighbours in every coordinate.
            let ok = cells.iter().all(|&c| (0..64).contains(&c))
                && cells.windows(2).all(|w| {
                    let (p, q) = (xyz(w[0]), xyz(w[1]));
                    (p.0 - q.0).abs() <= 1 && (p.1 - q.1).abs() <= 1 && (p.2 - q.2).abs() <= 1
                });
            if ok {
                out.push(cells.iter().fold(0u64, |m, &c| m | 1 << c));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn four(lines: &[u64], cells: u64) -> bool {
    lines.iter().any(|&l| (cells & l).count_ones() == 4)
}

#[test]
fn strategies_verify_and_win_every_random_game() {
    let lines = lines();
    assert_eq!(lines.len(), 76);
    let dir = tempfile::tempdir().unwrap();
    for start in [SMALL, RICHER] {
        let (db, summary) = build(dir.path(), start);
        assert!(summary["strategic"].as_u64().unwrap() >= 1);
        let out = run_ok(
            tb().args(["verify", "--json", "--db"]).arg(&db),
            "verify qubic",
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["gaps"], 0, "{v}");
        assert!(v["forced"].as_u64().unwrap() > 0);

        // Random games: O plays at random, X plays what the probe says.
        let file = StrategyFile::open(&db).unwrap();
        let begin = Position::parse(start).unwrap();
        let mut seed = 0x9e37_79b9u64;
        for game in 0..300 {
            let mut p = begin;
            let promised = file.probe(p).plies.expect("the start is won");
            let mut plies = 0;
            loop {
                assert!(!four(&lines, p.o), "game {game}: O has four at {p}");
                if four(&lines, p.x) {
                    break;
                }
                // O's move: a block of X's threat three times in four, else random.
                let empty: Vec<usize> = (0..64).filter(|&c| p.empty() >> c & 1 == 1).collect();
                let blocks: Vec<usize> = empty
                    .iter()
                    .copied()
                    .filter(|&c| four(&lines, p.x | 1 << c))
                    .collect();
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = (seed >> 33) as usize;
                let r = if !blocks.is_empty() && !pick.is_multiple_of(4) {
                    blocks[pick / 4 % blocks.len()]
                } else {
                    empty[pick % empty.len()]
                };
                p = p.play(r).unwrap();
                plies += 1;
                if four(&lines, p.o) {
                    panic!("game {game}: O completed a line at {p}");
                }
                let answer = file.probe(p);
                assert_eq!(answer.result, "win", "game {game}: {}", answer.json());
                let m = answer.cell.unwrap();
                assert_eq!(p.empty() >> m & 1, 1, "game {game}: move {m} taken at {p}");
                p = p.play(m).unwrap();
                plies += 1;
                assert!(plies <= 64, "game {game} never ends");
            }
            // The plies are those of the lines the strategy was stored with; the
            // probe's later forced lines may be other ones (see the README).
            assert!(promised >= 1 && plies <= 64, "game {game}");
        }

        // The CLI's probe JSON is the library's answer.
        let after = begin.play(begin.empty().trailing_zeros() as usize).unwrap();
        let out = run_ok(
            tb().args(["probe", "--json", "--db"])
                .arg(&db)
                .arg(after.to_string()),
            "probe qubic",
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            file.probe(after).json()
        );

        // The Patashnik-style export: one line per strategic move (no forced
        // blocks), each a stored position and its move.
        let out = run_ok(
            tb().args(["export", "--format", "patashnik", "--db"])
                .arg(&db),
            "export patashnik",
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut rows = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (stones, m) = line.split_once(" : ").unwrap();
            let (xs, os) = stones.split_once(" / ").unwrap();
            let set = |t: &str| {
                t.split(' ')
                    .filter(|&c| c != "-")
                    .fold(0u64, |s, c| s | 1 << c.parse::<u32>().unwrap())
            };
            let (x, o) = (set(xs), set(os));
            let r = file.records.get(&(x, o)).expect("a stored position");
            assert_eq!(r.cell.to_string(), m);
            assert_eq!(o.count_ones(), x.count_ones(), "X to move");
            rows += 1;
        }
        assert_eq!(
            rows,
            summary["strategic_moves"].as_u64().unwrap(),
            "{summary}"
        );
    }

    // Shrinking pays: the same start read off the proof as it is needs more
    // strategic moves.
    let (_, plain) = build_with(dir.path(), RICHER, &["--shrink", "0"]);
    let (_, shrunk) = build(dir.path(), RICHER);
    assert!(
        shrunk["strategic_moves"].as_u64().unwrap() < plain["strategic_moves"].as_u64().unwrap(),
        "{shrunk} vs {plain}"
    );
}

#[test]
fn a_damaged_strategy_is_caught_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = build(dir.path(), RICHER);
    let whole = StrategyFile::open(&db).unwrap();
    assert!(report::verify(&whole).ok());
    // Every stored position is strategic (no forced win there): without its
    // record (in every block that holds it) the checker must find a gap,
    // whichever record goes. A dozen records spread over the file (each removal
    // costs a whole verify: every seventh record took a minute of CPU, two dozen
    // and 20 changed moves 48 s of a CI run).
    let keys: Vec<(u64, u64)> = whole.records.keys().copied().collect();
    for key in keys.iter().step_by(keys.len().div_ceil(12)) {
        let mut damaged = StrategyFile::open(&db).unwrap();
        for block in &mut damaged.blocks {
            block.records.remove(key);
        }
        assert!(!report::verify(&damaged).ok(), "{key:?} removed");
    }
    // Moves changed to another empty cell: most lose somewhere, and the probe
    // never answers the changed move where the checker finds a gap.
    let mut caught = 0;
    for key in keys.iter().take(12) {
        let mut damaged = StrategyFile::open(&db).unwrap();
        let mut changed = None;
        for block in &mut damaged.blocks {
            if let Some(r) = block.records.get_mut(key) {
                let empty = !(key.0 | key.1) & !(1u64 << r.cell);
                r.cell = (63 - empty.leading_zeros()) as u8;
                changed = Some(r.cell);
            }
        }
        let ok = report::verify(&damaged).ok();
        caught += usize::from(!ok);
        let answer = damaged.lookup(Position { x: key.0, o: key.1 });
        assert!(
            ok || answer.is_none_or(|(cell, _)| Some(cell as u8) != changed),
            "{key:?}: the changed move answered"
        );
    }
    assert!(caught >= 6, "only {caught} of 12 wrong moves caught");
}

#[test]
fn a_killed_qubic_build_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("resume.tb");
    let blocks = |db: &Path| count(db, "SELECT COUNT(*) FROM blocks");
    let killed = interrupt::kill_build_midway(
        &["build", "qubic", "--start", SMALL, "-q"],
        &db,
        5,
        Duration::from_secs(60),
        |db| blocks(db) >= 3,
        |db| blocks(db) >= 1 && StrategyFile::open(db).is_err(),
    );
    assert!(killed, "the build was never killed midway");
    resume_and_verify(&db, &[], blocks(&db));
    // A different start on the same file is refused.
    let out = tb()
        .args(["build", "qubic", "--start", RICHER, "-q", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds a strategy from"));
}

/// A build killed while a reply's proof is under way goes on from the proof's
/// checkpoint (`--checkpoint-every 0`: one after every slice of 40,960
/// expansions): the resumed run says how far into the proof it starts, stores
/// the reply, and removes the checkpoint.
#[test]
fn a_killed_build_goes_on_from_the_proofs_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("checkpointed.tb");
    // O 3 of this start takes about 450,000 expansions, O 1 and O 2 a few
    // thousand before it (one thread: one chain at a time, in order).
    let checkpoint = dir.path().join("checkpointed.tb.proof-3");
    let args = [
        "build",
        "qubic",
        "--start",
        "0-63-21",
        "--threads",
        "1",
        "--proofs",
        "1",
        "--checkpoint-every",
        "0",
    ];
    let killed = interrupt::kill_build_midway(
        &args,
        &db,
        3,
        Duration::from_secs(300),
        |_| checkpoint.exists(),
        |_| checkpoint.exists(),
    );
    assert!(
        killed,
        "the build was never killed with a checkpoint written"
    );
    let log = dir.path().join("resumed.log");
    let stored = || count(&db, "SELECT COUNT(*) FROM blocks WHERE counts = '3'") == 1;
    let mut resumed_args = args.to_vec();
    resumed_args.extend(["--db", db.to_str().unwrap()]);
    interrupt::run_until(
        &resumed_args,
        std::fs::File::create(&log).unwrap().into(),
        Duration::from_secs(600),
        || stored() && !checkpoint.exists(),
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(stored() && !checkpoint.exists(), "O 3 not stored: {text}");
    let from = text
        .lines()
        .find_map(|l| {
            let rest = l
                .split("O 3 (3 of 17): resumed from the checkpoint")
                .nth(1)?;
            rest.split(" (")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no resume from the checkpoint: {text}"));
    assert!(from >= 40_960, "{from} expansions into the proof");
}

/// The number `sql` reads from the file `db` (0 when it cannot: no file yet,
/// or one being written).
fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Runs the build of [`SMALL`] killed midway on `db` again (with `options`) to
/// the end: the `resumed` replies stored before come back as resumed, and `tb
/// verify` accepts the file. Returns the build's summary.
fn resume_and_verify(db: &Path, options: &[&str], resumed: i64) -> Value {
    let out = run_ok(
        tb().args(["build", "qubic", "--start", SMALL, "--json", "-q", "--db"])
            .arg(db)
            .args(options),
        "resumed build",
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["complete"], true);
    let came_back = summary["replies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["resumed"] == true)
        .count();
    assert_eq!(came_back as i64, resumed, "{summary}");
    let out = run_ok(
        tb().args(["verify", "--json", "--db"]).arg(db),
        "verify resumed",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gaps"], 0, "{v}");
    summary
}

/// A strategy file names its chunk coding (`chunk_coding`, docs/FORMAT.md §9.11)
/// under format version 1 and `tb info` shows it; a file from before the key
/// reads as it did, and one that names a coding this tb does not know is refused.
#[test]
fn a_strategy_file_names_its_chunk_coding() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = build(dir.path(), SMALL);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let row = |key: &str| -> Option<String> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .ok()
    };
    assert_eq!(row("format_version").as_deref(), Some("1"));
    assert_eq!(row("chunk_coding").as_deref(), Some("zstd"));
    let info = || run_ok(tb().args(["info", "--json", "--db"]).arg(&db), "info");
    let json: Value = serde_json::from_slice(&info().stdout).unwrap();
    assert_eq!(json["format_version"], 1, "{json}");
    assert_eq!(json["features"]["chunk_coding"], "zstd", "{json}");
    conn.execute("DELETE FROM meta WHERE key = 'chunk_coding'", [])
        .unwrap();
    info();
    conn.execute("INSERT INTO meta VALUES ('chunk_coding', 'mix')", [])
        .unwrap();
    let out = tb()
        .args(["probe", "--db"])
        .arg(&db)
        .arg(SMALL)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("coded `mix`, unknown to this tb"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The default build (`--proofs auto`) killed (SIGKILL) once some second proofs
/// and their counts are stored, then their counts deleted, resumes to the end:
/// a file the checker accepts, holding neither second-proof blocks nor the
/// build's counts and marks.
#[test]
fn a_killed_auto_build_resumes_and_leaves_no_build_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("auto.tb");
    let second = "SELECT COUNT(*) FROM blocks WHERE CAST(counts AS INTEGER) >= 128";
    let build_keys = "SELECT COUNT(*) FROM meta WHERE key LIKE 'expansions %' OR key LIKE 'second proof given up %'";
    let killed = interrupt::kill_build_midway(
        &["build", "qubic", "--start", SMALL, "-q"],
        &db,
        5,
        Duration::from_secs(60),
        |db| count(db, second) >= 2,
        |db| count(db, second) >= 1 && StrategyFile::open(db).is_err(),
    );
    assert!(killed, "the build was never killed midway");
    assert!(
        count(&db, build_keys) > count(&db, second),
        "the counts are kept while it is built"
    );
    // A second proof's block without its count (lost, or an older tb's) is
    // never kept, and the build still ends.
    let deleted = rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "DELETE FROM meta WHERE key IN (SELECT 'expansions ' || CAST(counts AS TEXT) FROM blocks WHERE CAST(counts AS INTEGER) >= 128)",
            [],
        )
        .unwrap();
    assert!(deleted >= 1);
    let first = count(&db, "SELECT COUNT(*) FROM blocks") - count(&db, second);
    resume_and_verify(&db, &[], first);
    assert_eq!(count(&db, second), 0);
    assert_eq!(count(&db, build_keys), 0);
}

/// A build with two proofs of each reply killed (SIGKILL) once some second
/// proofs are stored resumes: every first proof stored comes back as such, the
/// finished file holds no second-proof block (`tb verify`'s reader refuses any
/// block but the replies' and the opening's) and the checker accepts it; built
/// again, the finished file is left as it is. A third proof is refused with a
/// clear message.
#[test]
fn a_killed_two_proof_build_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two.tb");
    // Block keys are stored as text: a second proof's is 128 + the reply's cell.
    let second = "SELECT COUNT(*) FROM blocks WHERE CAST(counts AS INTEGER) >= 128";
    let replies = Position::parse(SMALL)
        .map(|p| tb::games::qubic::prover::child_classes((p.x, p.o)).len())
        .unwrap() as i64;
    let killed = interrupt::kill_build_midway(
        &["build", "qubic", "--start", SMALL, "--proofs", "2", "-q"],
        &db,
        5,
        Duration::from_secs(60),
        |db| count(db, second) >= 2,
        |db| count(db, second) >= 1 && StrategyFile::open(db).is_err(),
    );
    assert!(killed, "the build was never killed midway");
    let first = count(&db, "SELECT COUNT(*) FROM blocks") - count(&db, second);
    let summary = resume_and_verify(&db, &["--proofs", "2"], first);
    assert_eq!(summary["replies"].as_array().unwrap().len() as i64, replies);
    assert_eq!(count(&db, second), 0);
    // A finished file is left as it is.
    // (Each digest reduced: their plain sum can overflow.)
    let digests = "SELECT SUM(digest % 1000003) FROM blocks";
    let before = count(&db, digests);
    assert_ne!(before, 0);
    let out = run_ok(
        tb().args(["build", "qubic", "--start", SMALL, "--proofs", "2", "--db"])
            .arg(&db),
        "build of a finished file",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("complete already"));
    assert_eq!(count(&db, digests), before);
    // Out of WAL mode, as a finished file is.
    let mode: String = rusqlite::Connection::open(&db)
        .and_then(|c| c.query_row("PRAGMA journal_mode", [], |r| r.get(0)))
        .unwrap();
    assert_ne!(mode, "wal");
    assert_eq!(count(&db, second), 0);
    let out = tb()
        .args([
            "build", "qubic", "--start", SMALL, "--proofs", "3", "-q", "--db",
        ])
        .arg(dir.path().join("three.tb"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--proofs 3: 1, 2 or auto"));
}

/// A proof split by hand (`--known`): X's move in RICHER's costliest reply (O
/// 37, about half of its 63,494 expansions) built from the position after it,
/// then RICHER built with that file known. The known file's positions are taken
/// as won and its moves played there: with no shrinking (`--shrink 0`), every
/// position of the piece is in the strategy built, and it verifies on its own.
/// A strategy built from its own file known takes no expansion at all.
#[test]
fn a_proof_is_built_from_pieces_proven_before() {
    let dir = tempfile::tempdir().unwrap();
    let reply_after_move = format!("{RICHER}-37-1");
    let (piece, _) = build(dir.path(), &reply_after_move);
    let known = piece.to_str().unwrap();
    let (db, summary) = build_with(
        dir.path(),
        RICHER,
        &["--threads", "1", "--shrink", "0", "--known", known],
    );
    let built = StrategyFile::open(&db).unwrap();
    assert!(report::verify(&built).ok());
    let piece_file = StrategyFile::open(&piece).unwrap();
    for (key, record) in &piece_file.records {
        let stored = built.blocks.iter().find_map(|b| b.records.get(key));
        assert_eq!(
            stored.map(|r| r.cell),
            Some(record.cell),
            "{key:?} of the piece in the strategy built ({})",
            summary["expansions"]
        );
    }

    // Its own file known: every reply is known after O's reply, so no search.
    let (again, summary) = build_with(dir.path(), RICHER, &["--known", db.to_str().unwrap()]);
    assert_eq!(summary["expansions"], 0, "{summary}");
    assert!(report::verify(&StrategyFile::open(&again).unwrap()).ok());

    // Not a finished strategy file: refused before any proof.
    let out = tb()
        .args(["build", "qubic", "--start", RICHER, "-q", "--known"])
        .arg(dir.path().join("missing.tb"))
        .arg("--db")
        .arg(dir.path().join("refused.tb"))
        .output()
        .unwrap();
    assert!(!out.status.success());
}
