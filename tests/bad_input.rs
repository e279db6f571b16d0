//! Malformed input never panics: `tb` exits 1 (runtime error) or 2 (usage error)
//! with a short message on stderr that names the offending input.

use crate::harness;
use crate::oracle;

use harness::{Build, build_all_layers, describe, tb};
use oracle::Oracle;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// A rejected command: exit code 1 or 2, no panic, nothing on stdout that looks
/// like an answer, and a short stderr (one message line; a usage error may add
/// clap's usage/help hint) with a line that names `needle`.
fn assert_rejected(output: &Output, what: &str, needle: &str) {
    let code = output.status.code();
    assert!(
        matches!(code, Some(1) | Some(2)),
        "{what}: expected exit 1 or 2: {}",
        describe(output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{what}: tb panicked: {}",
        describe(output)
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !lines.is_empty(),
        "{what}: no message on stderr: {}",
        describe(output)
    );
    assert!(
        lines.len() <= 4,
        "{what}: expected a short message, got {} lines: {}",
        lines.len(),
        describe(output)
    );
    assert!(
        lines.iter().any(|l| l.contains(needle)),
        "{what}: the message does not name {needle:?}: {}",
        describe(output)
    );
}

/// Runs `tb` with a time limit.
fn run(cmd: &mut assert_cmd::Command) -> Output {
    cmd.timeout(harness::QUERY_TIMEOUT)
        .output()
        .expect("run tb")
}

fn small_db() -> (Oracle, Build) {
    let o = Oracle::new(1, 1, 0);
    let b = build_all_layers(&o, "empty");
    (o, b)
}

/// (input, text the message must contain)
const BAD_POSITIONS: &[(&str, &str)] = &[
    ("010", "010"),                   // 3 characters, 1x1 has 4 lines
    ("01010", "01010"),               // 5 characters
    ("000000000000", "000000000000"), // a 2x2 position
    ("01x1", "01x1"),                 // bad character
    ("0 10", "0 10"),                 // blank inside
    ("h9.9", "h9.9"),                 // no such line
    ("h0.0,h9.9", "h9.9"),            // no such line in a list
    ("v0.2", "v0.2"),                 // column out of range on 1x1
    ("h0.0,h0.0", "h0.0"),            // repeated line
    ("h0.0,,v0.0", "h0.0,,v0.0"),     // empty element
    ("x1.1", "x1.1"),                 // neither h nor v
];

#[test]
fn probe_rejects_malformed_positions() {
    let (_o, b) = small_db();
    for &(input, needle) in BAD_POSITIONS {
        for json in [false, true] {
            let mut cmd = tb();
            cmd.arg("probe").arg("--db").arg(&b.db);
            if json {
                cmd.arg("--json");
            }
            let output = run(cmd.arg(input));
            let what = format!("tb probe{} {input:?}", if json { " --json" } else { "" });
            if json {
                // The error may be reported as a JSON object instead of on stderr.
                assert_json_error(&output, &what, input);
            } else {
                assert_rejected(&output, &what, needle);
            }
        }
    }
}

/// `--json`: a bad position gives `{"input":..., "error":...}` on stdout, exit 1.
fn assert_json_error(output: &Output, what: &str, input: &str) {
    assert_eq!(
        output.status.code(),
        Some(1),
        "{what}: {}",
        describe(output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{what}: tb panicked: {}",
        describe(output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let objects: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {l}\n{}", describe(output)))
        })
        .collect();
    assert_eq!(objects.len(), 1, "{what}: {}", describe(output));
    assert_eq!(
        objects[0]["input"],
        Value::from(input),
        "{what}: {}",
        describe(output)
    );
    let error = objects[0]["error"].as_str().unwrap_or("");
    assert!(
        !error.is_empty() && !error.contains('\n'),
        "{what}: `error` must be a one-line message: {}",
        describe(output)
    );
}

/// A batch on stdin goes on after a bad line and exits 1 at the end; the good
/// lines are answered correctly, in order.
#[test]
fn probe_batch_continues_after_bad_lines() {
    let (mut o, b) = small_db();
    let input = "0000\n01x1\n1110\nh9.9\nh0.0,v0.1\n";
    let output = run(tb()
        .arg("probe")
        .arg("--db")
        .arg(&b.db)
        .arg("--json")
        .write_stdin(input));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    harness::assert_no_panic(&output, "probe batch");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let objects: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(objects.len(), 5, "{}", describe(&output));
    for (i, line) in input.lines().enumerate() {
        let object = &objects[i];
        if line == "01x1" || line == "h9.9" {
            assert_eq!(object["input"], Value::from(line), "line {i}: {object}");
            assert!(object["error"].is_string(), "line {i}: {object}");
        } else {
            let p = if line.starts_with('h') {
                line.split(',').fold(0u64, |m, name| {
                    m | 1 << o.line_by_name(name).expect("known line")
                })
            } else {
                o.parse_bits(line)
            };
            let d = harness::probe_differences(&mut o, "1x1", p, object);
            assert!(d.is_empty(), "line {i} ({line}): {d}");
        }
    }
}

#[test]
fn build_rejects_bad_boards() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (board, needle) in [
        ("9x9", "9x9"),
        ("3y3", "3y3"),
        ("0x3", "0x3"),
        ("3x", "3x"),
        ("3x3x3", "3x3x3"),
    ] {
        let db = dir.path().join(format!("board-{board}.tb"));
        let output = run(tb()
            .arg("build")
            .arg(board)
            .arg("--db")
            .arg(&db)
            .arg("--quiet"));
        assert_rejected(&output, &format!("tb build {board}"), needle);
        assert!(!db.exists(), "tb build {board} left a database behind");
    }
}

#[test]
fn build_rejects_bad_starts_and_penalties() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("bad.tb");
    for (args, needle) in [
        (vec!["2x2", "--start", "nonsense"], "nonsense"),
        (vec!["2x2", "--start", "0101"], "0101"), // wrong length
        (vec!["2x2", "--start", "h0.0,h7.7"], "h7.7"),
        (vec!["2x2", "--penalty", "abc"], "abc"),
        (vec!["2x2", "--book-lines", "many"], "many"),
        (vec!["2x2", "--symmetry", "mirror"], "mirror"),
        // Consecutive groups split the corner pairs (h and v lines are far apart).
        (vec!["2x2", "--corners", "--groups", "6,6"], "corner"),
    ] {
        let output = run(tb()
            .arg("build")
            .args(&args)
            .arg("--db")
            .arg(&db)
            .arg("--quiet"));
        assert_rejected(&output, &format!("tb build {}", args.join(" ")), needle);
        assert!(
            !db.exists(),
            "tb build {} left a database behind",
            args.join(" ")
        );
    }
}

fn missing_db_commands(db: &Path) -> Vec<(String, assert_cmd::Command)> {
    let mut probe = tb();
    probe.arg("probe").arg("--db").arg(db).arg("0000");
    let mut probe_json = tb();
    probe_json
        .arg("probe")
        .arg("--db")
        .arg(db)
        .arg("--json")
        .arg("0000");
    let mut info = tb();
    info.arg("info").arg("--db").arg(db).arg("--json");
    let mut export = tb();
    export
        .arg("export")
        .arg("--db")
        .arg(db)
        .arg("--format")
        .arg("csv");
    vec![
        ("probe".into(), probe),
        ("probe --json".into(), probe_json),
        ("info".into(), info),
        ("export".into(), export),
    ]
}

#[test]
fn missing_database_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("missing.tb");
    for (what, mut cmd) in missing_db_commands(&db) {
        let output = run(&mut cmd);
        assert_rejected(
            &output,
            &format!("tb {what} on a missing file"),
            "missing.tb",
        );
        assert!(!db.exists(), "tb {what} created the missing database");
    }
}

#[test]
fn a_file_that_is_not_a_tablebase_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("junk.tb");
    std::fs::write(
        &db,
        b"this is not an SQLite database, just some text\n".repeat(100),
    )
    .expect("write junk");
    for (what, mut cmd) in missing_db_commands(&db) {
        let output = run(&mut cmd);
        assert_rejected(&output, &format!("tb {what} on a junk file"), "junk.tb");
    }
}

/// (meta key, tampered value, text the message must contain)
const TAMPERED_META: &[(&str, &str, &str)] = &[
    ("chunk_positions", "0", "chunk_positions"),
    ("chunk_positions", "99999999999", "chunk_positions"),
    ("chunk_positions", "many", "chunk_positions"),
    ("penalty", "1000", "penalty"),
    ("penalty", "-99999999999", "penalty"),
    ("book_lines", "99", "book_lines"),
    ("groups", "[[0,1]]", "groups"),
    ("groups", "[[0,1,2,3],[3]]", "groups"),
    ("groups", "[[0,1],[],[2,3]]", "groups"),
    ("groups", "not json", "groups"),
    ("corners", "maybe", "corners"),
];

#[test]
fn tampered_metadata_is_a_clear_error() {
    let (_, build) = small_db();
    let dir = tempfile::tempdir().expect("tempdir");
    for &(key, value, needle) in TAMPERED_META {
        let db = dir.path().join("tampered.tb");
        std::fs::copy(&build.db, &db).expect("copy the file");
        let conn = rusqlite::Connection::open(&db).expect("open");
        let changed = conn
            .execute("UPDATE meta SET value = ?1 WHERE key = ?2", (value, key))
            .expect("tamper");
        assert_eq!(changed, 1, "no meta row `{key}`");
        drop(conn);
        let mut commands = missing_db_commands(&db);
        let mut verify = tb();
        verify.arg("verify").arg("--db").arg(&db);
        commands.push(("verify".into(), verify));
        for (what, mut cmd) in commands {
            let output = run(&mut cmd);
            assert_rejected(&output, &format!("tb {what} with {key} = {value}"), needle);
        }
        std::fs::remove_file(&db).expect("remove");
    }
}

/// A layer row whose position count disagrees with the layout: probes that read
/// the layer, `info`, `export` and `verify` refuse the file naming the layer; a
/// probe that reads only other layers still gets its right value (layer sizes are
/// checked when a layer is first read, so that a cold probe near the start does
/// not build the layout's tables for every layer).
#[test]
fn a_wrong_layer_size_is_refused_where_the_layer_is_read() {
    let (mut o, build) = small_db();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("tampered.tb");
    std::fs::copy(&build.db, &db).expect("copy the file");
    let conn = rusqlite::Connection::open(&db).expect("open");
    let changed = conn
        .execute(
            "UPDATE layers SET positions = positions + 1 WHERE n = 2",
            (),
        )
        .expect("tamper");
    assert_eq!(changed, 1, "no row for layer 2");
    drop(conn);

    let output = run(tb()
        .arg("probe")
        .arg("--db")
        .arg(&db)
        .arg("--json")
        .arg("0000"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let answer: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let d = harness::probe_differences(&mut o, "1x1", 0, &answer);
    assert!(d.is_empty(), "{d}");

    let mut commands: Vec<(&str, assert_cmd::Command)> = Vec::new();
    for args in [
        &["probe", "1100"][..],
        &["probe", "1000"][..],
        &["info"][..],
        &["export"][..],
    ] {
        let mut cmd = tb();
        cmd.arg(args[0]).arg("--db").arg(&db).args(&args[1..]);
        commands.push((args[0], cmd));
    }
    for (what, mut cmd) in commands {
        let output = run(&mut cmd);
        assert_rejected(
            &output,
            &format!("tb {what} with a wrong layer 2 size"),
            "layer 2",
        );
    }
    // verify lists it among the problems of its report.
    let output = run(tb().arg("verify").arg("--db").arg(&db));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("problem: layer 2 claims"),
        "{}",
        describe(&output)
    );
}

/// (SQL run on a good file, text the message must contain): schema objects a
/// tablebase does not have (a view standing in for a table returned endless rows
/// and filled the disk with temporary files before schemas were checked).
const TAMPERED_SCHEMA: &[(&str, &str)] = &[
    ("CREATE VIEW extra AS SELECT 1", "view `extra`"),
    (
        "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1; END",
        "trigger `t`",
    ),
    (
        "CREATE INDEX chunk_data ON chunks(data)",
        "index `chunk_data`",
    ),
    ("CREATE TABLE extra(x)", "table `extra`"),
    (
        "ALTER TABLE layers RENAME TO old_layers; \
         CREATE VIEW layers AS WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM r) \
         SELECT n, 'book' AS status, 1 AS positions, 0 AS bytes, 0.0 AS seconds, NULL AS histogram, NULL AS digest FROM r",
        "view `layers`",
    ),
    ("ALTER TABLE meta ADD COLUMN note TEXT", "table `meta`"),
];

#[test]
fn a_file_with_another_schema_is_refused() {
    let (_, build) = small_db();
    let dir = tempfile::tempdir().expect("tempdir");
    for &(sql, needle) in TAMPERED_SCHEMA {
        let db = dir.path().join("tampered.tb");
        std::fs::copy(&build.db, &db).expect("copy the file");
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch(sql).expect("tamper");
        drop(conn);
        let mut commands = missing_db_commands(&db);
        let mut verify = tb();
        verify.arg("verify").arg("--db").arg(&db);
        commands.push(("verify".into(), verify));
        // Resuming a build on it is refused as well (before any identity check).
        let mut resume = tb();
        resume.args(["build", "1x1", "--quiet", "--db"]).arg(&db);
        commands.push(("build".into(), resume));
        for (what, mut cmd) in commands {
            let output = run(&mut cmd);
            assert_rejected(&output, &format!("tb {what} after `{sql}`"), needle);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("not a tablebase file"), "{what}: {stderr}");
        }
        std::fs::remove_file(&db).expect("remove");
    }
}

/// Numeric flags are range-checked when parsed; memory sizes against the machine.
#[test]
fn out_of_range_flags_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("flags.tb");
    for (args, needle) in [
        (vec!["build", "2x2", "--penalty=-2147483648"], "-2147483648"),
        (vec!["build", "2x2", "--threads", "100000"], "--threads"),
        (vec!["build", "2x2", "--threads", "0"], "--threads"),
        (vec!["build", "2x2", "--memory", "1000TiB"], "--memory"),
        (vec!["build", "2x2", "--memory", "1e400"], "--memory"),
        (vec!["build", "2x2", "--chunk", "0"], "--chunk"),
        (
            vec!["build", "morris", "--stones", "3", "--memory", "1000TiB"],
            "--memory",
        ),
        (vec!["solve", "2x2", "--tt", "1000TiB"], "--tt"),
        (vec!["solve", "2x2", "--threads", "0"], "--threads"),
    ] {
        let mut cmd = tb();
        cmd.args(&args);
        if args[0] == "build" {
            cmd.arg("--quiet").arg("--db").arg(&db);
        }
        let output = run(&mut cmd);
        assert_rejected(&output, &format!("tb {}", args.join(" ")), needle);
        assert!(!db.exists(), "tb {} left a database", args.join(" "));
    }
}

/// `--db` must name a regular file: a device or a directory is refused before
/// anything is created beside it.
#[test]
fn a_database_path_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_dir = dir.path().join("file");
    std::fs::write(&not_dir, "x").unwrap();
    let inside_a_file = not_dir.join("x.tb");
    for db in [Path::new("/dev/null"), dir.path(), inside_a_file.as_path()] {
        let output = run(tb().args(["build", "1x1", "--quiet", "--db"]).arg(db));
        assert_rejected(&output, &format!("tb build --db {}", db.display()), "");
        let output = run(tb().args(["probe", "0000", "--db"]).arg(db));
        assert_rejected(&output, &format!("tb probe --db {}", db.display()), "");
    }
    let listed: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(listed.len(), 1, "files were created beside the paths");
}

/// `-o` never overwrites the database being exported; a good export appears only
/// when complete (no partial file left beside it).
#[test]
fn export_never_overwrites_its_own_database() {
    let (_o, b) = small_db();
    let before = std::fs::read(&b.db).unwrap();
    // The database itself, and another name for the same file.
    let link = b.dir.path().join("link.tb");
    std::fs::hard_link(&b.db, &link).unwrap();
    for (target, what) in [(&b.db, "its db"), (&link, "a hard link to its db")] {
        let output = run(tb()
            .arg("export")
            .arg("--db")
            .arg(&b.db)
            .arg("-o")
            .arg(target));
        assert_rejected(&output, &format!("tb export -o <{what}>"), "-o");
        assert_eq!(
            std::fs::read(&b.db).unwrap(),
            before,
            "the database changed"
        );
    }
    let out = b.dir.path().join("rows.csv");
    let output = run(tb()
        .arg("export")
        .arg("--db")
        .arg(&b.db)
        .args(["--format", "csv", "-o"])
        .arg(&out));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let to_stdout = run(tb()
        .arg("export")
        .arg("--db")
        .arg(&b.db)
        .args(["--format", "csv"]));
    assert_eq!(std::fs::read(&out).unwrap(), to_stdout.stdout);
    let partial: Vec<String> = std::fs::read_dir(b.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
}

/// A stdin batch goes on past lines that are not UTF-8 or longer than 1 MiB.
#[test]
fn probe_batch_survives_binary_and_huge_lines() {
    let (_o, b) = small_db();
    let mut input = b"0000\n\xff\xfe\n".to_vec();
    input.extend(std::iter::repeat_n(b'0', 3 << 20));
    input.extend(b"\n1110\n");
    let output = run(tb()
        .arg("probe")
        .arg("--db")
        .arg(&b.db)
        .arg("--json")
        .write_stdin(input));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    harness::assert_no_panic(&output, "probe batch");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 4, "{}", describe(&output));
    assert_eq!(lines[0]["position"], "0000");
    assert!(lines[1]["error"].as_str().unwrap().contains("UTF-8"));
    assert!(lines[2]["error"].as_str().unwrap().contains("longer"));
    assert_eq!(lines[3]["position"], "1110");
}

/// A Wilson file asking for another penalty than the table's is refused, not
/// answered with the table's values.
#[test]
fn probe_refuses_a_wilson_file_with_another_penalty() {
    let (_o, b) = small_db();
    let file = b.dir.path().join("pos.txt");
    std::fs::write(&file, "1\n+ +\n\n+ +\n").unwrap();
    let output = run(tb().arg("probe").arg("--db").arg(&b.db).arg(&file));
    assert_rejected(&output, "tb probe <Wilson file, penalty 1>", "penalty 1");
    std::fs::write(&file, "0\n+ +\n\n+ +\n").unwrap();
    let output = run(tb().arg("probe").arg("--db").arg(&b.db).arg(&file));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
}

/// Closed stdout or stderr end the run quietly with its exit code, never a panic.
#[test]
fn closed_output_streams_are_not_a_panic() {
    let (_o, b) = small_db();
    let tb_path = assert_cmd::cargo::cargo_bin!("tb");
    let db = b.db.display().to_string();
    let tb_path = tb_path.display().to_string();
    for (script, code) in [
        // stderr closed: the error cannot be written, the exit code still says it.
        (format!("exec 2>&-; '{tb_path}' probe --db '{db}' 01x1"), 1),
        // stdout closed by the reader: a quiet end.
        (
            format!(
                "'{tb_path}' export --db '{db}' | head -c 10 >/dev/null; exit ${{PIPESTATUS[0]}}"
            ),
            0,
        ),
        // A full stdout is an error (said on stderr).
        (format!("'{tb_path}' info --db '{db}' >/dev/full"), 1),
    ] {
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        harness::assert_no_panic(&output, &script);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{script}: {}",
            describe(&output)
        );
    }
}

/// A batch answered on several threads prints exactly what one thread prints: every
/// answer and error object in input order, over several batches (more than 8,192
/// lines), with unreadable lines in their place; the exit code says some failed.
#[test]
fn probe_batch_answers_in_input_order_on_any_number_of_threads() {
    let (_o, b) = small_db();
    let mut input = Vec::new();
    let mut expected = Vec::new();
    for i in 0..20_000u32 {
        if i % 997 == 5 {
            input.extend(b"\xff\n");
            expected.push(None);
        } else if i % 301 == 7 {
            input.extend(b"01x1\n");
            expected.push(None);
        } else {
            let position = format!("{:04b}", i % 15);
            input.extend(position.as_bytes());
            input.push(b'\n');
            expected.push(Some(position));
        }
    }
    let answers = |threads: &str| {
        let output = run(tb()
            .args(["probe", "--json", "--threads", threads, "--db"])
            .arg(&b.db)
            .write_stdin(input.clone()));
        assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
        harness::assert_no_panic(&output, "probe batch");
        output.stdout
    };
    let one = answers("1");
    let lines: Vec<Value> = String::from_utf8_lossy(&one)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), expected.len());
    for (line, position) in lines.iter().zip(&expected) {
        match position {
            Some(p) => assert_eq!(line["position"], p.as_str()),
            None => assert!(line["error"].is_string(), "{line}"),
        }
    }
    for threads in ["2", "3"] {
        assert!(
            answers(threads) == one,
            "{threads} threads answer otherwise"
        );
    }
}

/// A script that writes a position and waits for its answer before the next gets
/// each answer at once (the batch does not wait for more input).
#[test]
fn probe_answers_a_line_before_the_next_is_written() {
    use std::io::{BufRead, Write};
    let (_o, b) = small_db();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("tb"))
        .args(["probe", "--json", "--db"])
        .arg(&b.db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (sender, answers) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if sender.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    for position in ["0000", "1000", "1100", "01x1", "1110"] {
        writeln!(stdin, "{position}").unwrap();
        stdin.flush().unwrap();
        let answer = answers
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no answer to {position} while stdin stays open"));
        let answer: Value = serde_json::from_str(&answer).unwrap();
        if position.contains('x') {
            assert!(answer["error"].is_string());
        } else {
            assert_eq!(answer["position"], position);
        }
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

/// A budget beyond this machine's memory: a build is refused at once (before any
/// work), a `--plan` plans for that bigger machine and says so.
#[test]
fn memory_beyond_the_machine_is_refused_for_a_build_but_planned() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.tb");
    let too_much = "100TiB";
    let out = run(tb()
        .args(["build", "2x2", "--memory", too_much, "--db"])
        .arg(&db));
    assert_rejected(&out, "build with 100TiB", "machine's memory");
    assert!(!db.exists(), "a refused build made {}", db.display());
    let out = run(tb().args(["build", "4x5", "--plan", "--memory", too_much]));
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("a plan for a bigger machine"), "{text}");
    let out = run(tb().args(["build", "4x5", "--plan", "--json", "--memory", too_much]));
    assert!(out.status.success(), "{}", describe(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["memory_bytes"].as_u64(), Some(100 << 40));
    assert!(plan["machine_memory_bytes"].as_u64().unwrap() < 100 << 40);
    // Within the machine: no such line.
    let out = run(tb().args(["build", "4x5", "--plan", "--memory", "1GiB"]));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("bigger machine"));
}
