//! Helpers that drive the real `tb` binary and compare what it says with the oracle.
//!
//! Nothing here uses the `tb` library: checks through `tb::tablebase` take a
//! closure, so the binary's answers are compared with the oracle, not with the
//! library's code.

use crate::oracle::{Oracle, Rng, digest_element};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;
use tempfile::TempDir;

/// Longest a single build may take before the test gives up.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(900);
/// Longest a probe, export or info may take.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(300);
/// How many mismatches a failing check lists before summarising.
const SHOWN: usize = 10;

/// The `tb` binary under test.
pub fn tb() -> assert_cmd::Command {
    assert_cmd::cargo::cargo_bin_cmd!("tb")
}

/// Describes a finished process for failure messages.
pub fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status.code(),
        truncate(&String::from_utf8_lossy(&output.stdout)),
        truncate(&String::from_utf8_lossy(&output.stderr)),
    )
}

fn truncate(s: &str) -> String {
    if s.len() > 4000 {
        let mut cut = 4000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... ({} bytes)", &s[..cut], s.len())
    } else {
        s.to_string()
    }
}

/// Runs a command that must succeed; returns its output.
pub fn run_ok(cmd: &mut assert_cmd::Command, what: &str) -> Output {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run tb: {e}"));
    assert!(
        output.status.success(),
        "{what} failed: {}",
        describe(&output)
    );
    assert_no_panic(&output, what);
    output
}

/// A panic is never an acceptable way for `tb` to report anything.
pub fn assert_no_panic(output: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{what}: tb panicked: {}",
        describe(output)
    );
}

/// A tablebase built by the binary into a temporary directory.
pub struct Build {
    /// Keeps the directory alive as long as the build is used.
    pub dir: TempDir,
    pub db: PathBuf,
    /// Board as text, `RxC`.
    pub board: String,
    /// The `--start` argument as given.
    pub start_arg: String,
    /// The start position the oracle expects.
    pub start: u64,
    pub penalty: i32,
    /// `--book-lines`, if one was given.
    pub book_lines: Option<usize>,
    /// Further `tb build` arguments (reductions such as `--symmetry none`).
    pub extra: Vec<String>,
}

impl Build {
    pub fn label(&self) -> String {
        format!(
            "{} start {} penalty {}{}",
            self.board,
            self.start_arg,
            self.penalty,
            self.extra
                .iter()
                .map(|a| format!(" {a}"))
                .collect::<String>()
        )
    }
}

/// `tb build` of the oracle's board from `start_arg` (a start name or a 0/1
/// position), which must denote `start`. `book_lines: Some(E)` keeps every layer.
pub fn build(o: &Oracle, start_arg: &str, start: u64, book_lines: Option<usize>) -> Build {
    build_with(o, start_arg, start, book_lines, &[])
}

/// The reductions every small board is built with: none, Wilson's symmetry alone,
/// corners alone, and both (the default).
pub const REDUCTIONS: [&[&str]; 4] = [
    &["--symmetry", "none"],
    &["--no-corners"],
    &["--symmetry", "none", "--corners"],
    &[],
];

/// [`build`] with further `tb build` arguments.
pub fn build_with(
    o: &Oracle,
    start_arg: &str,
    start: u64,
    book_lines: Option<usize>,
    extra: &[&str],
) -> Build {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = dir.path().join("test.tb");
    let board = o.board_name();
    let mut cmd = tb();
    cmd.arg("build")
        .arg(&board)
        .arg("--start")
        .arg(start_arg)
        // `=` so that a negative penalty cannot be mistaken for a flag.
        .arg(format!("--penalty={}", o.penalty()))
        .arg("--db")
        .arg(&db)
        .arg("--quiet")
        .args(extra)
        .timeout(BUILD_TIMEOUT);
    if let Some(k) = book_lines {
        cmd.arg("--book-lines").arg(k.to_string());
    }
    let label = format!(
        "tb build {board} --start {start_arg} --penalty={} {}",
        o.penalty(),
        extra.join(" ")
    );
    run_ok(&mut cmd, &label);
    assert!(db.is_file(), "{label} did not create {}", db.display());
    Build {
        dir,
        db,
        board,
        start_arg: start_arg.to_string(),
        start,
        penalty: o.penalty(),
        book_lines,
        extra: extra.iter().map(|a| a.to_string()).collect(),
    }
}

/// Builds from a named start (`empty`, `swedish`, `icelandic`) keeping all layers.
pub fn build_all_layers(o: &Oracle, start_name: &str) -> Build {
    build(o, start_name, o.start(start_name), Some(o.num_lines()))
}

/// `tb info --db PATH --json`, parsed.
pub fn info(db: &Path) -> Value {
    let output = run_ok(
        tb().arg("info")
            .arg("--db")
            .arg(db)
            .arg("--json")
            .timeout(QUERY_TIMEOUT),
        "tb info --json",
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "tb info --json did not print one JSON object ({e}): {}",
            describe(&output)
        )
    })
}

/// The per-layer rows of `tb info --json`: n -> (positions, digest, status).
pub fn info_layers(info: &Value) -> HashMap<usize, (u64, String, String)> {
    let layers = info["layers"]
        .as_array()
        .unwrap_or_else(|| panic!("tb info --json has no `layers` array: {info}"));
    let mut out = HashMap::new();
    for layer in layers {
        let field = |name: &str| {
            layer
                .get(name)
                .unwrap_or_else(|| panic!("layer without `{name}`: {layer}"))
        };
        let n = field("n").as_u64().expect("layer n is a number") as usize;
        let positions = field("positions")
            .as_u64()
            .expect("layer positions is a number");
        let digest = field("digest")
            .as_str()
            .expect("layer digest is a string")
            .to_string();
        let status = field("status")
            .as_str()
            .expect("layer status is a string")
            .to_string();
        assert!(
            out.insert(n, (positions, digest, status)).is_none(),
            "layer {n} listed twice: {info}"
        );
    }
    out
}

/// Digest text as `tb info` prints it: 16 lowercase hex digits.
pub fn hex(digest: u64) -> String {
    format!("{digest:016x}")
}

/// Checks `tb info --json` against the oracle: board, start, penalty and every
/// layer's position count and digest (pruned layers included). With a reduction
/// (symmetry or corners) the stored positions are one per class, so the layers
/// are checked against the exported rows instead ([`check_reduced_layers`]).
pub fn check_info(o: &mut Oracle, b: &Build) {
    let info = info(&b.db);
    assert_eq!(
        info["board"],
        Value::from(b.board.clone()),
        "{}: board",
        b.label()
    );
    assert_eq!(
        info["start_position"],
        Value::from(o.bits(b.start)),
        "{}: start_position",
        b.label()
    );
    assert_eq!(
        info["penalty"],
        Value::from(b.penalty),
        "{}: penalty",
        b.label()
    );
    let layers = info_layers(&info);
    let reduced = info["symmetries"].as_u64() != Some(1) || info["corners"] != Value::Bool(false);
    if reduced {
        check_reduced_layers(o, b, &layers);
        return;
    }
    let expected = o.layers(b.start);
    let mut problems = String::new();
    for layer in &expected {
        match layers.get(&layer.n) {
            None => writeln!(problems, "layer {} missing", layer.n).unwrap(),
            Some((positions, digest, status)) => {
                if *positions != layer.positions || *digest != hex(layer.digest) {
                    writeln!(
                        problems,
                        "layer {} ({status}): positions {positions} digest {digest}, oracle: positions {} digest {}",
                        layer.n,
                        layer.positions,
                        hex(layer.digest)
                    )
                    .unwrap();
                }
                if let Some(k) = b.book_lines
                    && layer.n <= k
                    && status == "pruned"
                {
                    writeln!(
                        problems,
                        "layer {} pruned although --book-lines {k}",
                        layer.n
                    )
                    .unwrap();
                }
            }
        }
    }
    let known: HashSet<usize> = expected.iter().map(|l| l.n).collect();
    for n in layers.keys().filter(|n| !known.contains(n)) {
        writeln!(problems, "unexpected layer {n}").unwrap();
    }
    assert!(problems.is_empty(), "{}: tb info:\n{problems}", b.label());
}

/// For a reduced build: every layer from the start to the full board is listed, no
/// book layer is pruned, and each readable layer's position count and digest equal
/// those of its `tb export` rows, whose values match the oracle and which are
/// distinct positions of the right layer.
pub fn check_reduced_layers(
    o: &mut Oracle,
    b: &Build,
    layers: &HashMap<usize, (u64, String, String)>,
) {
    let first = b.start.count_ones() as usize;
    let mut problems = String::new();
    for n in first..=o.num_lines() {
        match layers.get(&n) {
            None => writeln!(problems, "layer {n} missing").unwrap(),
            Some((_, _, status)) => {
                if b.book_lines.is_some_and(|k| n <= k) && status == "pruned" {
                    writeln!(problems, "layer {n} pruned inside the book").unwrap();
                }
            }
        }
    }
    let rows = parse_csv(b, &export(b, &["--format", "csv"]));
    let mut seen = HashSet::new();
    let mut per_layer: HashMap<usize, (u64, u64)> = HashMap::new();
    for (text, lines, value) in &rows {
        let p = o.parse_bits(text);
        let n = p.count_ones() as usize;
        let expected = o.value(p);
        if *lines != n as u64
            || *value != i64::from(expected)
            || !seen.insert(p)
            || p & b.start != b.start
        {
            writeln!(
                problems,
                "row {text},{lines},{value}: oracle value {expected}"
            )
            .unwrap();
        }
        let entry = per_layer.entry(n).or_default();
        entry.0 += 1;
        entry.1 = entry.1.wrapping_add(digest_element(p, expected));
    }
    for (n, (positions, digest, status)) in layers {
        if status == "pruned" {
            continue;
        }
        let (count, sum) = per_layer.get(n).copied().unwrap_or_default();
        if (*positions, digest.as_str()) != (count, hex(sum).as_str()) {
            writeln!(
                problems,
                "layer {n}: info {positions} positions digest {digest}; export {count} rows digest {}",
                hex(sum)
            )
            .unwrap();
        }
    }
    let shown: String = problems
        .lines()
        .take(SHOWN)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        problems.is_empty(),
        "{}: reduced tb info/export:\n{shown}",
        b.label()
    );
}

/// Checks every position containing the start through `value` (the library's
/// `Tablebase::value`), and that positions lacking a start line give `None`.
pub fn check_all_values(
    o: &mut Oracle,
    b: &Build,
    mut value: impl FnMut(u64) -> anyhow::Result<Option<i8>>,
) {
    let mut wrong = 0u64;
    let mut shown = String::new();
    let mut checked = 0u64;
    for p in o.supersets(b.start) {
        let expected = o.value(p);
        let got = value(p).unwrap_or_else(|e| {
            panic!(
                "{}: Tablebase::value({}) failed: {e:#}",
                b.label(),
                o.bits(p)
            )
        });
        checked += 1;
        if got.map(i32::from) != Some(expected) {
            wrong += 1;
            if wrong as usize <= SHOWN {
                writeln!(shown, "{}: {got:?}, oracle {expected}", o.bits(p)).unwrap();
            }
        }
    }
    assert_eq!(checked, o.count_supersets(b.start));
    assert!(
        wrong == 0,
        "{}: {wrong} of {checked} values differ from the oracle, e.g.\n{shown}",
        b.label()
    );
    // Positions that lack one of the start's lines are not in the tablebase.
    let mut rng = Rng::new(b.start ^ 0x5eed);
    let mut lines = b.start;
    while lines != 0 {
        let line = lines.trailing_zeros();
        lines &= lines - 1;
        let p = rng.superset(0, o.full()) & !(1u64 << line);
        let got = value(p).unwrap_or_else(|e| {
            panic!(
                "{}: Tablebase::value({}) failed: {e:#}",
                b.label(),
                o.bits(p)
            )
        });
        assert_eq!(
            got,
            None,
            "{}: {} lacks start line {} but has a value",
            b.label(),
            o.bits(p),
            o.line_name(line as usize)
        );
    }
}

/// Random positions containing `start`: the start itself, the full board, then
/// alternately uniform over all positions and uniform over layers. Distinct.
pub fn sample_positions(o: &Oracle, start: u64, count: usize, seed: u64) -> Vec<u64> {
    let total = o.count_supersets(start);
    if total <= count as u64 {
        return o.supersets(start).collect();
    }
    let open: Vec<usize> = (0..o.num_lines())
        .filter(|&l| start >> l & 1 == 0)
        .collect();
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in [start, o.full()] {
        if seen.insert(p) {
            out.push(p);
        }
    }
    while out.len() < count {
        let p = if out.len() % 2 == 0 {
            rng.superset(start, o.full())
        } else {
            let drawn = rng.below(open.len() as u64 + 1) as usize;
            let sub = rng.position_with(open.len(), drawn);
            open.iter()
                .enumerate()
                .filter(|&(i, _)| sub >> i & 1 == 1)
                .fold(start, |m, (_, &l)| m | 1u64 << l)
        };
        if seen.insert(p) {
            out.push(p);
        }
    }
    out
}

/// One probe object compared with the oracle; returns a description of every
/// difference (empty when it agrees).
pub fn probe_differences(o: &mut Oracle, board: &str, p: u64, object: &Value) -> String {
    let mut d = String::new();
    let bits = o.bits(p);
    if object["board"] != board {
        writeln!(d, "board {} (expected {board})", object["board"]).unwrap();
    }
    if object["position"] != bits {
        writeln!(d, "position {}", object["position"]).unwrap();
    }
    if object["lines"] != p.count_ones() {
        writeln!(d, "lines {} (expected {})", object["lines"], p.count_ones()).unwrap();
    }
    let value = o.value(p);
    if object["value"] != value {
        writeln!(d, "value {} (oracle {value})", object["value"]).unwrap();
    }
    if !object["source"].is_string() {
        writeln!(d, "no `source` string").unwrap();
    }
    let expected: Vec<(u64, String, i64, u64)> = o
        .moves_best_first(p)
        .into_iter()
        .map(|(l, v, k)| (l as u64, o.line_name(l), i64::from(v), u64::from(k)))
        .collect();
    match object["moves"].as_array() {
        None => writeln!(d, "no `moves` array").unwrap(),
        Some(moves) => {
            let got: Vec<(u64, String, i64, u64)> = moves
                .iter()
                .map(|m| {
                    (
                        m["line"].as_u64().unwrap_or(u64::MAX),
                        m["name"].as_str().unwrap_or("?").to_string(),
                        m["value"].as_i64().unwrap_or(i64::MIN),
                        m["boxes"].as_u64().unwrap_or(u64::MAX),
                    )
                })
                .collect();
            if got != expected {
                writeln!(
                    d,
                    "moves (line, name, value, boxes), best first:\n  tb:     {got:?}\n  oracle: {expected:?}"
                )
                .unwrap();
            }
        }
    }
    d
}

/// `tb probe --json` of `positions` (one per stdin line; every third one as a
/// move list) compared with the oracle's values and move lists.
pub fn check_probe(o: &mut Oracle, b: &Build, positions: &[u64]) {
    let input: String = positions
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            if i % 3 == 2 && p != 0 {
                o.move_list(p) + "\n"
            } else {
                o.bits(p) + "\n"
            }
        })
        .collect();
    let output = run_ok(
        tb().arg("probe")
            .arg("--db")
            .arg(&b.db)
            .arg("--json")
            .write_stdin(input)
            .timeout(QUERY_TIMEOUT),
        &format!("{}: tb probe --json", b.label()),
    );
    compare_probe_output(o, b, positions, &output);
    // The same through arguments, for a few of them.
    let few: Vec<u64> = positions.iter().copied().take(5).collect();
    let output = run_ok(
        tb().arg("probe")
            .arg("--db")
            .arg(&b.db)
            .arg("--json")
            .args(few.iter().map(|&p| o.bits(p)))
            .timeout(QUERY_TIMEOUT),
        &format!("{}: tb probe --json POSITION...", b.label()),
    );
    compare_probe_output(o, b, &few, &output);
}

fn compare_probe_output(o: &mut Oracle, b: &Build, positions: &[u64], output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        positions.len(),
        "{}: tb probe --json printed {} lines for {} positions",
        b.label(),
        lines.len(),
        positions.len()
    );
    let mut wrong = 0;
    let mut shown = String::new();
    for (&p, line) in positions.iter().zip(&lines) {
        let object: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}: probe line is not JSON ({e}): {line}", b.label()));
        let d = probe_differences(o, &b.board, p, &object);
        if !d.is_empty() {
            wrong += 1;
            if wrong <= SHOWN {
                writeln!(shown, "{}:\n{d}", o.bits(p)).unwrap();
            }
        }
    }
    assert!(
        wrong == 0,
        "{}: {wrong} of {} probes differ from the oracle:\n{shown}",
        b.label(),
        positions.len()
    );
}

/// Runs `tb export` with the given extra arguments and returns stdout.
pub fn export(b: &Build, args: &[&str]) -> String {
    let output = run_ok(
        tb().arg("export")
            .arg("--db")
            .arg(&b.db)
            .args(args)
            .timeout(QUERY_TIMEOUT),
        &format!("{}: tb export {}", b.label(), args.join(" ")),
    );
    String::from_utf8(output.stdout).expect("export is UTF-8")
}

/// Parses `tb export --format csv` output into (position text, lines, value).
pub fn parse_csv(b: &Build, text: &str) -> Vec<(String, u64, i64)> {
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("position,lines,value"),
        "{}: CSV header",
        b.label()
    );
    lines
        .filter(|l| !l.is_empty())
        .map(|row| {
            let fields: Vec<&str> = row.split(',').collect();
            assert_eq!(fields.len(), 3, "{}: CSV row {row:?}", b.label());
            (
                fields[0].to_string(),
                fields[1]
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: CSV lines in {row:?}", b.label())),
                fields[2]
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: CSV value in {row:?}", b.label())),
            )
        })
        .collect()
}

/// Parses `tb export --format jsonl` output into (position text, lines, value).
pub fn parse_jsonl(b: &Build, text: &str) -> Vec<(String, u64, i64)> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|row| {
            let v: Value = serde_json::from_str(row)
                .unwrap_or_else(|e| panic!("{}: JSONL row {row:?}: {e}", b.label()));
            (
                v["position"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{}: no position in {row}", b.label()))
                    .to_string(),
                v["lines"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{}: no lines in {row}", b.label())),
                v["value"]
                    .as_i64()
                    .unwrap_or_else(|| panic!("{}: no value in {row}", b.label())),
            )
        })
        .collect()
}

/// Compares exported rows with the oracle: exactly the positions of the layers
/// `n <= max_lines` that contain the start, each once (in any order), each with the
/// oracle's value and its line count.
pub fn check_export_rows(
    o: &mut Oracle,
    b: &Build,
    rows: &[(String, u64, i64)],
    max_lines: usize,
    what: &str,
) {
    let mut problems = String::new();
    let mut bad = 0;
    let mut seen = HashSet::new();
    for (text, lines, value) in rows {
        let ok_text = text.len() == o.num_lines() && text.bytes().all(|c| c == b'0' || c == b'1');
        if !ok_text {
            bad += 1;
            if bad <= SHOWN {
                writeln!(problems, "bad position text {text:?}").unwrap();
            }
            continue;
        }
        let p = o.parse_bits(text);
        let repeated = !seen.insert(p);
        let outside = p & b.start != b.start || p.count_ones() as usize > max_lines;
        let expected = o.value(p);
        if *lines != u64::from(p.count_ones())
            || *value != i64::from(expected)
            || repeated
            || outside
        {
            bad += 1;
            if bad <= SHOWN {
                writeln!(
                    problems,
                    "row {text},{lines},{value}: oracle lines {} value {expected}{}{}",
                    p.count_ones(),
                    if repeated { ", repeated" } else { "" },
                    if outside {
                        ", not in the start's layers <= max lines"
                    } else {
                        ""
                    }
                )
                .unwrap();
            }
        }
    }
    let mut missing = 0u64;
    let mut expected_rows = 0u64;
    for p in o.supersets(b.start) {
        if p.count_ones() as usize > max_lines {
            continue;
        }
        expected_rows += 1;
        if !seen.contains(&p) {
            missing += 1;
            if missing as usize <= SHOWN {
                writeln!(problems, "position {} not exported", o.bits(p)).unwrap();
            }
        }
    }
    assert!(
        bad == 0 && missing == 0,
        "{}: {what}: {} rows (expected {expected_rows}), {bad} wrong, {missing} positions missing:\n{problems}",
        b.label(),
        rows.len()
    );
}

/// Builds `tb build ARGS --quiet --db DIR/NAME` with the real binary; the file.
pub fn build_file(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let db = dir.join(name);
    run_ok(
        tb().arg("build")
            .args(args)
            .arg("--quiet")
            .arg("--db")
            .arg(&db),
        name,
    );
    db
}

/// `tb probe --json` of many positions (one process): the answers in order.
pub fn probe_all(db: &Path, positions: &[String]) -> Vec<Value> {
    let out = run_ok(
        tb().args(["probe", "--json", "--db"])
            .arg(db)
            .args(positions),
        "probe",
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), positions.len());
    answers
}
