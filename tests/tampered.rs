//! The tampered-file suite: a built 3x3 Dots-and-Boxes file, a 3-stone Morris
//! file and a small Qubic strategy, each changed in a few hundred ways (metadata, layer, block and chunk rows,
//! forged chunks, raw bytes of the SQLite file), and every reading command run on
//! each. A tampered file may be refused, but never with a panic, a hang, more than
//! [`MEMORY_LIMIT`] of memory, or a wrong answer with exit 0; and `verify` fails on
//! every change that is not harmless.
//!
//! The suite runs thousands of processes: the default test runs one mutation in
//! [`SAMPLE_EVERY`] (which ones turns with the day, printed; `TB_TAMPERED_OFFSET`
//! repeats a day's), and `cargo test --release --test tampered -- --ignored` runs
//! every one.

use crate::harness;

use harness::tb;
use rusqlite::Connection;
use serde_json::Value;
use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Longest any command may take on a tampered file.
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// Most memory (peak RSS) any command may use on a tampered file.
const MEMORY_LIMIT: u64 = 2 << 30;

/// The default test runs the mutations whose index is this offset modulo this.
/// (Twelve: a fourth took 205 s of CPU, an eighth 77 s of a CI run's 564 s of
/// integration tests, the longest test of the suite.)
const SAMPLE_EVERY: usize = 12;

/// Which mutations of each subject a test runs: those whose index `i` has
/// `i % every == offset`.
#[derive(Clone, Copy, Debug)]
struct Selection {
    every: usize,
    offset: usize,
}

impl Selection {
    /// Every mutation.
    const ALL: Selection = Selection {
        every: 1,
        offset: 0,
    };

    /// One in [`SAMPLE_EVERY`]: `TB_TAMPERED_OFFSET`, else the day's turn (so that
    /// consecutive days' runs cover every mutation).
    fn sample() -> Selection {
        let day = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400) as usize;
        let offset = std::env::var("TB_TAMPERED_OFFSET")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(day);
        Selection {
            every: SAMPLE_EVERY,
            offset: offset % SAMPLE_EVERY,
        }
    }

    fn takes(self, index: usize) -> bool {
        index % self.every == self.offset
    }
}

/// What a mutation may do to the answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Changes what the file says: `verify` must fail; other commands may refuse
    /// the file but never answer wrongly with exit 0.
    Harmful,
    /// Forges values with valid checksums (as only someone who knows the format
    /// can): readers cannot tell, `verify` must fail.
    Forged,
    /// Harmless (timings, informational metadata) or unknown (a random byte of the
    /// file): `verify` may pass; answers with exit 0 must be right.
    Harmless,
}

/// One way to tamper with a copy of a file.
struct Mutation {
    name: String,
    kind: Kind,
    apply: Box<dyn Fn(&Path) + Send + Sync>,
}

fn sql(name: impl Into<String>, kind: Kind, statements: impl Into<String>) -> Mutation {
    let statements = statements.into();
    Mutation {
        name: format!("{}: {statements}", name.into()),
        kind,
        apply: Box::new(move |db| {
            let conn = Connection::open(db).expect("open the copy");
            conn.execute_batch(&statements)
                .unwrap_or_else(|e| panic!("tampering with `{statements}`: {e}"));
        }),
    }
}

fn raw(name: impl Into<String>, apply: impl Fn(&mut Vec<u8>) + Send + Sync + 'static) -> Mutation {
    Mutation {
        name: name.into(),
        kind: Kind::Harmless,
        apply: Box::new(move |db| {
            let mut bytes = std::fs::read(db).expect("read the copy");
            apply(&mut bytes);
            std::fs::write(db, bytes).expect("write the copy");
        }),
    }
}

/// A built file, the commands run on it and what they print on the good file.
struct Subject {
    label: &'static str,
    db: PathBuf,
    positions: Vec<String>,
    /// Metadata keys that only inform (a change is harmless).
    informational: &'static [&'static str],
    /// A value byte the game never stores, if there is one.
    out_of_range: Option<i8>,
    baseline: Vec<Run>,
}

/// How a command ended.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    seconds: f64,
    peak_rss: u64,
    timed_out: bool,
}

/// The reading commands, by name, with their arguments after `--db FILE`.
fn commands(subject_positions: &[String]) -> Vec<(&'static str, Vec<String>)> {
    let mut probe_json = vec!["--json".to_string()];
    probe_json.extend(subject_positions.iter().cloned());
    vec![
        ("probe --json", probe_json),
        ("probe", subject_positions.to_vec()),
        ("export", vec!["--format".into(), "csv".into()]),
        ("info", vec!["--json".into()]),
        ("verify", vec![]),
    ]
}

/// Runs `tb <command> --db db args`, measuring time and peak RSS, killing it at
/// [`TIME_LIMIT`].
#[expect(
    clippy::zombie_processes,
    reason = "reaped by waitpid while its peak RSS is polled"
)]
fn run(command: &str, db: &Path, args: &[String]) -> Run {
    let subcommand = command.split(' ').next().expect("a subcommand");
    let program = tb().get_program().to_owned();
    let mut child = std::process::Command::new(program)
        .arg(subcommand)
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tb");
    let pid = child.id() as libc::pid_t;
    let mut stdout_pipe = child.stdout.take().expect("stdout");
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout_pipe, &mut v).ok();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr_pipe, &mut v).ok();
        v
    });
    let start = Instant::now();
    let mut timed_out = false;
    // The child's own peak RSS (VmHWM of its address space, polled while it runs:
    // wait4's ru_maxrss would include this test process's peak, inherited at spawn).
    let mut peak_rss = 0u64;
    let status = loop {
        peak_rss = peak_rss.max(vm_hwm(pid).unwrap_or(0));
        let mut status = 0;
        // SAFETY: plain waitpid on our own child, with an out-parameter we own.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break std::process::ExitStatus::from_raw(status);
        }
        assert!(done == 0, "waitpid failed");
        if !timed_out && start.elapsed() > TIME_LIMIT {
            timed_out = true;
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code: status.code(),
        signal: status.signal(),
        stdout: out.join().expect("stdout reader"),
        stderr: String::from_utf8_lossy(&err.join().expect("stderr reader")).into_owned(),
        seconds: start.elapsed().as_secs_f64(),
        peak_rss,
        timed_out,
    }
}

/// `VmHWM` of a running `tb` process, in bytes (`None` before it has exec'd: the
/// spawned child first shares this process's address space).
fn vm_hwm(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    if !status
        .lines()
        .any(|l| l.split_whitespace().eq(["Name:", "tb"]))
    {
        return None;
    }
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Run {
    fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// What is wrong with `run` of `command` on a file tampered by a mutation of
/// `kind`, against the good file's `good` run (empty: nothing).
fn problems(command: &str, kind: Kind, run: &Run, good: &Run) -> Vec<String> {
    let mut found = Vec::new();
    if run.timed_out {
        found.push(format!("ran longer than {TIME_LIMIT:?}"));
    }
    if let Some(signal) = run.signal {
        found.push(format!("killed by signal {signal}"));
    }
    if run.stderr.contains("panicked") {
        found.push(format!("panicked: {}", run.stderr.trim()));
    }
    if run.peak_rss > MEMORY_LIMIT {
        found.push(format!("used {} MiB", run.peak_rss >> 20));
    }
    if !matches!(run.code, Some(0) | Some(1) | Some(2)) && run.signal.is_none() {
        found.push(format!("exit code {:?}", run.code));
    }
    // (verify reports on stdout; probe --json with an error object per position)
    let message = match command {
        "verify" => run.stdout_text() + &run.stderr,
        "probe --json" => "(error objects)".to_string(),
        _ => run.stderr.clone(),
    };
    if run.code != Some(0) && message.trim().is_empty() {
        found.push("failed without a message".into());
    }
    let answers = matches!(command, "probe --json" | "probe" | "export");
    if answers && kind != Kind::Forged && run.code == Some(0) && answer(run) != answer(good) {
        found.push(format!(
            "exit 0 with a different answer:\n{}",
            first_difference(&good.stdout_text(), &run.stdout_text())
        ));
    }
    if command == "probe --json" && kind != Kind::Forged && run.code != Some(0) {
        // Per position: the right answer or an error object.
        let good_lines: Vec<&str> = std::str::from_utf8(&good.stdout)
            .unwrap_or("")
            .lines()
            .collect();
        let text = run.stdout_text();
        for (i, line) in text.lines().enumerate() {
            let is_error = serde_json::from_str::<Value>(line)
                .ok()
                .is_some_and(|v| v["error"].is_string());
            let same = |good: &&str| {
                let strip = |text: &str| {
                    let mut v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                    if let Value::Object(o) = &mut v {
                        o.remove("source");
                    }
                    v
                };
                strip(good) == strip(line)
            };
            if !is_error && !good_lines.get(i).is_some_and(same) {
                found.push(format!("position {i}: wrong answer {line}"));
            }
        }
    }
    if command == "verify" && kind != Kind::Harmless && run.code == Some(0) {
        found.push(format!("verify passed: {}", run.stdout_text().trim()));
    }
    found
}

/// What a run answered: its output, without saying which source answered (a
/// position whose layer is not readable is searched: the same values).
fn answer(run: &Run) -> String {
    run.stdout_text()
        .lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut object)) => {
                object.remove("source");
                Value::Object(object).to_string()
            }
            _ => line.replace("(search)", "(book)"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_difference(good: &str, bad: &str) -> String {
    for (i, (g, b)) in good.lines().zip(bad.lines()).enumerate() {
        if g != b {
            return format!("line {i}: expected {g}\n          got {b}");
        }
    }
    format!(
        "{} lines instead of {}",
        bad.lines().count(),
        good.lines().count()
    )
}

/// Every mutation of `subject`'s file, generated from what the file holds.
fn mutations(subject: &Subject) -> Vec<Mutation> {
    let conn = Connection::open(&subject.db).expect("open");
    let mut list = Vec::new();
    let quote = |s: &str| s.replace('\'', "''");
    // Whether `column = value` changes the rows of `table` that `at` selects (a
    // change that changes nothing is no mutation).
    let changes = |table: &str, at: &str, change: &str| {
        let (column, value) = change.split_once(" = ").expect("column = value");
        let differ: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} {at} AND ({column}) IS NOT ({value})"),
                [],
                |r| r.get(0),
            )
            .expect("compare");
        differ > 0
    };

    // Metadata: every key deleted or given values of every shape.
    let meta: Vec<(String, String)> = conn
        .prepare("SELECT key, value FROM meta ORDER BY key")
        .expect("meta")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("meta")
        .collect::<Result<_, _>>()
        .expect("meta");
    for (key, value) in &meta {
        let kind = if subject.informational.contains(&key.as_str()) {
            Kind::Harmless
        } else {
            Kind::Harmful
        };
        // (A file without `corners` is one from before corners existed; a Qubic
        // strategy without `chunk_coding` one from before the feature keys.)
        let older = (key.as_str(), value.as_str()) == ("corners", "false")
            || (subject.label == "qubic" && key == "chunk_coding");
        let deleted = if older { Kind::Harmless } else { kind };
        list.push(sql(
            "meta",
            deleted,
            format!("DELETE FROM meta WHERE key = '{key}'"),
        ));
        let mut values: Vec<String> = [
            "",
            "x",
            "-1",
            "0",
            "1",
            "18446744073709551617",
            "[[0]]",
            "true",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        values.push(format!("{value} "));
        if let Ok(n) = value.parse::<i64>() {
            values.extend([
                (n + 1).to_string(),
                (n - 1).to_string(),
                (n * 2).to_string(),
            ]);
        }
        for v in values.into_iter().filter(|v| v != value) {
            // A feature key given another value it may hold says the values mean
            // something else (docs/FORMAT.md §9.11): a forgery by someone who
            // knows the format, which readers cannot tell and `verify` finds.
            let feature = FEATURE_VALUES.contains(&(key.as_str(), v.as_str()));
            list.push(sql(
                "meta",
                if feature { Kind::Forged } else { kind },
                format!(
                    "UPDATE meta SET value = '{}' WHERE key = '{key}'",
                    quote(&v)
                ),
            ));
        }
    }
    list.push(sql(
        "meta",
        Kind::Harmless,
        "INSERT INTO meta VALUES ('comment', 'an unknown key')",
    ));

    // Layer rows: a few of them, every column.
    let layers: Vec<(i64, i64)> = conn
        .prepare("SELECT n, positions FROM layers ORDER BY positions DESC, n")
        .expect("layers")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("layers")
        .collect::<Result<_, _>>()
        .expect("layers");
    let mut picked: Vec<i64> = vec![layers[0].0, layers[layers.len() - 1].0];
    picked.extend(layers.get(layers.len() / 2).map(|l| l.0));
    picked.dedup();
    let max_n = layers.iter().map(|l| l.0).max().expect("a layer");
    for n in &picked {
        let at = format!("WHERE n = {n}");
        for change in [
            "status = 'building'",
            "status = 'pruned'",
            "status = 'complete'",
            "positions = positions + 1",
            "positions = positions - 1",
            "positions = 0",
            "positions = -5",
            "positions = 4611686018427387904",
            "bytes = bytes + 1",
            "histogram = NULL",
            "histogram = 'x'",
            "histogram = '{}'",
            "histogram = '{\"100\": 1}'",
            "digest = NULL",
            "digest = 'zz'",
            "digest = '0000000000000000'",
        ] {
            if !changes("layers", &at, change) {
                continue;
            }
            // (A histogram with no values, such as a Qubic strategy's, says as
            // much as none.)
            let empty = !changes("layers", &at, "histogram = '{}'");
            let kind = if change == "histogram = NULL" && empty {
                Kind::Harmless
            } else {
                Kind::Harmful
            };
            list.push(sql(
                "layer",
                kind,
                format!("UPDATE layers SET {change} {at}"),
            ));
        }
        list.push(sql(
            "layer",
            Kind::Harmless,
            format!("UPDATE layers SET seconds = 99 {at}"),
        ));
        list.push(sql(
            "layer",
            Kind::Harmful,
            format!("DELETE FROM layers {at}"),
        ));
    }
    for n in [max_n + 1, -1, 99_999_999_999] {
        list.push(sql(
            "layer",
            Kind::Harmful,
            format!("INSERT INTO layers(n, status, positions) VALUES ({n}, 'book', 1)"),
        ));
    }

    // Block rows.
    let blocks: Vec<(i64, String)> = conn
        .prepare("SELECT n, counts FROM blocks ORDER BY positions DESC, n, counts")
        .expect("blocks")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("blocks")
        .collect::<Result<_, _>>()
        .expect("blocks");
    for (n, counts) in [&blocks[0], &blocks[blocks.len() - 1]] {
        let at = format!("WHERE n = {n} AND counts = '{counts}'");
        for change in [
            "positions = positions + 1",
            "positions = positions - 1",
            "chunks = chunks + 1",
            "chunks = chunks - 1",
            "bytes = bytes + 1",
            "histogram = 'x'",
            "histogram = '{}'",
            "digest = digest + 1",
            "counts = 'x'",
            "counts = '99.99'",
            "counts = '1.2.3'",
            "counts = ''",
        ] {
            if !changes("blocks", &at, change) {
                continue;
            }
            list.push(sql(
                "block",
                Kind::Harmful,
                format!("UPDATE blocks SET {change} {at}"),
            ));
        }
        list.push(sql(
            "block",
            Kind::Harmless,
            format!("UPDATE blocks SET seconds = 99 {at}"),
        ));
        list.push(sql(
            "block",
            Kind::Harmful,
            format!("DELETE FROM blocks {at}"),
        ));
        list.push(sql(
            "block",
            Kind::Harmful,
            format!(
                "INSERT INTO blocks SELECT n, '{}', positions, chunks, bytes, seconds, histogram, digest FROM blocks {at}",
                // (Qubic's block keys have no dots: a key it never writes.)
                if counts.contains('.') {
                    counts.replace('.', ".1")
                } else {
                    format!("{counts}.1")
                }
            ),
        ));
    }

    // Chunk rows: the first and last of the biggest block and a lone chunk.
    let chunks: Vec<(i64, String, i64, i64)> = conn
        .prepare(
            "SELECT n, counts, chunk, raw_len FROM chunks ORDER BY raw_len DESC, n, counts, chunk",
        )
        .expect("chunks")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("chunks")
        .collect::<Result<_, _>>()
        .expect("chunks");
    let (big_n, big_counts, _, big_len) = chunks[0].clone();
    let last = chunks
        .iter()
        .filter(|c| c.0 == big_n && c.1 == big_counts)
        .max_by_key(|c| c.2)
        .expect("a chunk")
        .clone();
    let lone = chunks[chunks.len() - 1].clone();
    let twin = chunks
        .iter()
        .find(|c| c.3 == big_len && (c.0, &c.1, c.2) != (big_n, &big_counts, 0))
        .cloned();
    for (n, counts, chunk, raw_len) in [chunks[0].clone(), last.clone(), lone] {
        let at = format!("WHERE n = {n} AND counts = '{counts}' AND chunk = {chunk}");
        for change in [
            "raw_len = 0",
            "raw_len = -1",
            "raw_len = raw_len + 1",
            "raw_len = raw_len - 1",
            "raw_len = 1099511627776",
            "checksum = checksum + 1",
            "data = substr(data, 1, length(data) / 2)",
            "data = x''",
            "data = CAST(data AS TEXT)",
            "data = x'00' || substr(data, 2)",
            "data = substr(data, 1, length(data) - 1) || x'00'",
            "data = substr(data, 1, length(data) / 2) || x'ff' || substr(data, length(data) / 2 + 2)",
            "chunk = chunk + 1000",
        ] {
            // (An empty block's chunk already holds no values.)
            if raw_len == 0 && change == "raw_len = 0" {
                continue;
            }
            list.push(sql(
                "chunk",
                Kind::Harmful,
                format!("UPDATE chunks SET {change} {at}"),
            ));
        }
        list.push(sql(
            "chunk",
            Kind::Harmful,
            format!("DELETE FROM chunks {at}"),
        ));
    }
    // An extra chunk after the last one of its block.
    list.push(sql(
        "chunk",
        Kind::Harmful,
        format!(
            "INSERT INTO chunks SELECT n, counts, chunk + 1, raw_len, checksum, data FROM chunks WHERE n = {} AND counts = '{}' AND chunk = {}",
            last.0, last.1, last.2
        ),
    ));
    // Two chunks of the same length swapped (each still matches its checksum).
    if let Some((n2, counts2, chunk2, _)) = twin {
        list.push(sql(
            "chunk",
            Kind::Harmful,
            format!(
                "UPDATE chunks SET data = (SELECT data FROM chunks WHERE n = {n2} AND counts = '{counts2}' AND chunk = {chunk2}), \
                 checksum = (SELECT checksum FROM chunks WHERE n = {n2} AND counts = '{counts2}' AND chunk = {chunk2}) \
                 WHERE n = {big_n} AND counts = '{big_counts}' AND chunk = 0"
            ),
        ));
    }
    // A decompression bomb: a small zstd frame of 1 GiB, claimed in the row.
    let bomb = zstd::bulk::compress(&vec![0u8; 1 << 28], 3).expect("compress");
    let hex: String = bomb.iter().map(|b| format!("{b:02x}")).collect();
    for raw_len in [big_len, 1 << 28] {
        list.push(sql(
            "chunk",
            Kind::Harmful,
            format!(
                "UPDATE chunks SET raw_len = {raw_len}, data = x'{hex}' WHERE n = {big_n} AND counts = '{big_counts}' AND chunk = 0"
            ),
        ));
    }
    // Forged values with a valid checksum: out of every game's range, and in range
    // but wrong.
    let keyed = meta.iter().any(|(k, _)| k == "chunk_checksum");
    let mut forged = vec![("in range", 0i8, Kind::Forged)];
    if let Some(value) = subject.out_of_range {
        forged.push(("out of range", value, Kind::Harmful));
    }
    for (name, value, kind) in forged {
        let values = vec![value as u8; big_len as usize];
        let data = zstd::bulk::compress(&values, 3).expect("compress");
        let sum = tb::store::checksum::chunk_checksum(
            &values,
            keyed.then_some((big_n as usize, big_counts.as_str(), 0)),
        );
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        list.push(sql(
            format!("forged chunk {name}"),
            kind,
            format!(
                "UPDATE chunks SET data = x'{hex}', checksum = {} WHERE n = {big_n} AND counts = '{big_counts}' AND chunk = 0",
                sum as i64
            ),
        ));
    }

    // The SQLite file's bytes: header fields, truncation, garbage, random flips.
    let len = std::fs::metadata(&subject.db).expect("metadata").len() as usize;
    for offset in [
        16usize, 18, 19, 21, 28, 32, 36, 44, 52, 56, 60, 92, 96, 100, 105,
    ] {
        list.push(raw(format!("byte {offset} flipped"), move |b| {
            b[offset] ^= 0xff
        }));
    }
    for keep in [0usize, 100, 4096, len / 2, len - 1] {
        list.push(raw(format!("cut to {keep} bytes"), move |b| {
            b.truncate(keep)
        }));
    }
    list.push(raw("4 KiB of garbage appended", |b| {
        b.extend((0..4096u32).map(|i| (i * 37 % 251) as u8))
    }));
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..40 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let offset = (state % len as u64) as usize;
        list.push(raw(format!("byte {offset} flipped"), move |b| {
            b[offset] ^= 0x5a
        }));
    }
    list
}

/// The longest run and the largest peak RSS seen.
#[derive(Default)]
struct Worst {
    seconds: f64,
    peak_rss: u64,
    runs: usize,
    /// The run with the largest peak RSS.
    largest: String,
}

/// Runs every command on every mutation of `subject` (two at a time) and returns
/// what went wrong, one line per problem.
fn check_subject(
    subject: &Subject,
    selection: Selection,
    worst: &std::sync::Mutex<Worst>,
) -> (usize, Vec<String>) {
    let list: Vec<Mutation> = mutations(subject)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| selection.takes(*i))
        .map(|(_, m)| m)
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(Vec::new());
    let commands = commands(&subject.positions);
    std::thread::scope(|scope| {
        for worker in 0..2 {
            let (list, next, found, commands, dir) = (&list, &next, &found, &commands, &dir);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(mutation) = list.get(i) else { break };
                    let db = dir.path().join(format!("tampered-{worker}.tb"));
                    for sidecar in ["", "-wal", "-shm", "-journal"] {
                        let _ = std::fs::remove_file(format!("{}{sidecar}", db.display()));
                    }
                    std::fs::copy(&subject.db, &db).expect("copy");
                    (mutation.apply)(&db);
                    for ((command, args), good) in commands.iter().zip(&subject.baseline) {
                        let result = run(command, &db, args);
                        {
                            let mut w = worst.lock().unwrap();
                            w.seconds = w.seconds.max(result.seconds);
                            if result.peak_rss > w.peak_rss {
                                w.peak_rss = result.peak_rss;
                                w.largest = format!("tb {command} on {}", mutation.name);
                            }
                            w.runs += 1;
                        }
                        for p in problems(command, mutation.kind, &result, good) {
                            let mut line = String::new();
                            write!(
                                line,
                                "{} | {} | tb {command}: {p}",
                                subject.label, mutation.name
                            )
                            .unwrap();
                            found.lock().unwrap().push(line);
                        }
                    }
                }
            });
        }
    });
    (list.len(), found.into_inner().unwrap())
}

fn subject(
    label: &'static str,
    build_args: &[&str],
    positions: Vec<String>,
    out_of_range: Option<i8>,
    dir: &Path,
) -> Subject {
    let db = dir.join(format!("{label}.tb"));
    harness::run_ok(
        tb().arg("build")
            .args(build_args)
            .arg("--quiet")
            .arg("--db")
            .arg(&db),
        label,
    );
    let baseline: Vec<Run> = commands(&positions)
        .iter()
        .map(|(command, args)| {
            let r = run(command, &db, args);
            assert_eq!(
                r.code,
                Some(0),
                "{label}: tb {command} on the good file: {r:?}"
            );
            r
        })
        .collect();
    Subject {
        label,
        db,
        positions,
        informational: INFORMATIONAL,
        out_of_range,
        baseline,
    }
}

/// Positions for the probes: some of every layer (Dots) or table (Morris), taken
/// from the good file's export.
fn sample_positions(db: &Path, every: usize) -> Vec<String> {
    let out = tb()
        .args(["export", "--db"])
        .arg(db)
        .output()
        .expect("export");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .step_by(every)
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("jsonl")["position"]
                .as_str()
                .expect("position")
                .to_string()
        })
        .collect()
}

/// The values a Dots-and-Boxes feature key may hold (others are refused).
const FEATURE_VALUES: &[(&str, &str)] = &[
    ("loony", "true"),
    ("loony", "false"),
    ("value_form", "net"),
    ("value_form", "boxes-left"),
];

const INFORMATIONAL: &[&str] = &[
    "tool_version",
    "build_threads",
    "build_cache_bytes",
    "peak_file_bytes",
];

#[test]
fn tampered_files_are_refused_or_answered_right() {
    let selection = Selection::sample();
    eprintln!(
        "one mutation in {}, offset {} (TB_TAMPERED_OFFSET={} repeats this run; --ignored runs every one)",
        selection.every, selection.offset, selection.offset
    );
    check_every_subject(selection);
}

#[test]
#[ignore = "thousands of processes: minutes; the default test runs a sample"]
fn every_tampered_file_is_refused_or_answered_right() {
    check_every_subject(Selection::ALL);
}

fn check_every_subject(selection: Selection) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut report = Vec::new();
    let mut total = 0;
    let worst = std::sync::Mutex::new(Worst::default());
    // Dots-and-Boxes 3x3 values lie within +-9; every Morris byte is a value.
    // A Qubic strategy's records have no value byte: forged records are tested as
    // wrong, not out of range.
    for (label, args, out_of_range, every) in [
        // Without corners: 3x3's largest blocks then span two chunks, so a changed
        // chunk size misreads them and must be caught (with corners every block
        // fits one chunk, and the chunk size means nothing to the file).
        ("3x3", vec!["3x3", "--no-corners"], Some(120), 150_001),
        ("morris-3", vec!["morris", "--stones", "3"], None, 150_001),
        (
            "qubic",
            vec!["qubic", "--start", "0-3-60-21-15-63-12"],
            None,
            9,
        ),
    ] {
        // Build once to sample positions, then the subject itself.
        let sample_db = dir.path().join(format!("{label}-sample.tb"));
        harness::run_ok(
            tb().arg("build")
                .args(&args)
                .arg("--quiet")
                .arg("--db")
                .arg(&sample_db),
            label,
        );
        let positions = sample_positions(&sample_db, every);
        let s = subject(label, &args, positions, out_of_range, dir.path());
        let (count, found) = check_subject(&s, selection, &worst);
        total += count;
        report.extend(found);
    }
    let worst = worst.into_inner().unwrap();
    eprintln!(
        "{total} tampered files, {} runs: longest {:.2} s, largest peak RSS {} MiB ({})",
        worst.runs,
        worst.seconds,
        worst.peak_rss >> 20,
        worst.largest
    );
    assert!(
        report.is_empty(),
        "{} problems over {total} tampered files:\n{}",
        report.len(),
        report.join("\n")
    );
}
