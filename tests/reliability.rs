//! Reliability: kill -9 and resume, corrupted chunks, locking, parameter checks and
//! probes while a build runs. Real processes, real files.

use crate::harness;
use crate::oracle;

use harness::{build_all_layers, describe, info, info_layers, run_ok, tb};
use oracle::Oracle;
use rusqlite::Connection;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A 3x4 start with 26 open lines: big enough (2^26 positions, many blocks) to be
/// interrupted, small enough to build in seconds.
const START_3X4: &str = "h0.0,h0.3,v0.0,v2.4,h3.1";
/// Build arguments shared by every run on the same file; a book of 12 lines makes
/// the build prune (and drop child blocks early) while it is being killed.
const ARGS_3X4: [&str; 8] = [
    "3x4",
    "--start",
    START_3X4,
    "--groups",
    "9,9,8",
    "--book-lines",
    "12",
    "--db",
];

fn spawn_build(db: &Path, extra: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin!("tb"))
        .arg("build")
        .args(ARGS_3X4)
        .arg(db)
        .arg("--quiet")
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tb build")
}

/// Number of stored blocks, or 0 while the file is not there yet.
fn stored_blocks(db: &Path) -> i64 {
    let Ok(conn) = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.query_row("SELECT count(*) FROM blocks", [], |r| r.get(0))
        .unwrap_or(0)
}

/// Waits until the build has stored more than `blocks` blocks (or ended).
fn wait_for_blocks(child: &mut Child, db: &Path, blocks: i64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline {
        if child.try_wait().expect("try_wait").is_some() {
            return false;
        }
        if stored_blocks(db) > blocks {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("build stored no blocks within 300 s");
}

fn layer_digests(db: &Path) -> Vec<(usize, u64, String, String)> {
    let mut v: Vec<_> = info_layers(&info(db))
        .into_iter()
        .map(|(n, (positions, status, digest))| (n, positions, status, digest))
        .collect();
    v.sort();
    v
}

#[test]
fn kill_9_at_random_moments_then_resume_gives_identical_values() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference.tb");
    let mut child = spawn_build(&reference, &[]);
    assert!(
        child.wait().unwrap().success(),
        "uninterrupted build failed"
    );

    let db = dir.path().join("killed.tb");
    let mut kills = 0;
    let mut threshold = 0;
    for round in 0..6 {
        let mut child = spawn_build(&db, &[]);
        if wait_for_blocks(&mut child, &db, threshold) {
            // Vary the moment inside the block/transaction cycle.
            std::thread::sleep(Duration::from_millis(7 * round));
            child.kill().expect("kill -9");
            kills += 1;
        }
        child.wait().unwrap();
        threshold = stored_blocks(&db) + 5;
    }
    assert!(
        kills >= 2,
        "the build finished before it could be interrupted ({kills} kills)"
    );
    let out = Command::new(assert_cmd::cargo::cargo_bin!("tb"))
        .arg("build")
        .args(ARGS_3X4)
        .arg(&db)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "resumed build failed: {}",
        describe(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains(", 0 blocks resumed"),
        "nothing was resumed: {stderr}"
    );
    assert_eq!(layer_digests(&db), layer_digests(&reference));
    run_ok(
        tb().args(["verify", "--sample", "2000", "--db"]).arg(&db),
        "verify after resume",
    );
}

#[test]
fn a_second_builder_is_refused_and_probes_read_during_a_build() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.tb");
    let mut child = spawn_build(&db, &[]);
    assert!(wait_for_blocks(&mut child, &db, 3), "build ended too early");

    let second = tb()
        .arg("build")
        .args(ARGS_3X4)
        .arg(&db)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1), "{}", describe(&second));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("another `tb build`"),
        "{}",
        describe(&second)
    );

    // Probe positions of finished layers while the build goes on: values must be
    // right (oracle) or the layer reported as not stored, never anything else.
    let mut o = Oracle::new_sparse(3, 4, 0);
    let mut answered = 0;
    let mut rng = oracle::Rng::new(7);
    while child.try_wait().unwrap().is_none() && answered < 200 {
        let full = o.full();
        // Near-full positions: the layers finished first.
        let mut p = full;
        for _ in 0..(1 + rng.next_u64() % 4) {
            p &= !(1u64 << (rng.next_u64() % 31));
        }
        let start = moves(&o, START_3X4);
        p |= start;
        let out = tb()
            .args(["probe", "--json", "--db"])
            .arg(&db)
            .arg(o.bits(p))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
        if let Some(value) = v.get("value") {
            assert_eq!(
                value.as_i64().unwrap(),
                o.value(p) as i64,
                "probe during build: {text}"
            );
            answered += 1;
        } else {
            assert!(
                v["error"].as_str().unwrap().contains("stores positions"),
                "{text}"
            );
        }
    }
    child.kill().ok();
    child.wait().unwrap();
    assert!(answered > 0, "no probe was answered during the build");
}

#[test]
fn rebuilding_with_other_parameters_is_refused() {
    let o = Oracle::new(2, 2, 0);
    let b = build_all_layers(&o, "empty");
    for args in [
        vec![
            "build",
            "2x2",
            "--penalty=-1",
            "--quiet",
            "--book-lines",
            "12",
        ],
        vec![
            "build",
            "2x2",
            "--start",
            "swedish",
            "--quiet",
            "--book-lines",
            "12",
        ],
        vec!["build", "2x2", "--quiet", "--book-lines", "5"],
        vec!["build", "2x3", "--quiet"],
        // Another reduction would read the stored blocks with another index.
        vec![
            "build",
            "2x2",
            "--symmetry",
            "none",
            "--quiet",
            "--book-lines",
            "12",
        ],
        vec![
            "build",
            "2x2",
            "--no-corners",
            "--quiet",
            "--book-lines",
            "12",
        ],
    ] {
        let out = tb().args(&args).arg("--db").arg(&b.db).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("other parameters"),
            "{args:?}: {}",
            describe(&out)
        );
    }
    // The same parameters are accepted (nothing left to do).
    run_ok(
        tb().args(["build", "2x2", "--quiet", "--book-lines", "12", "--db"])
            .arg(&b.db),
        "same parameters",
    );
}

/// Corners are on by default (where a corner has both lines free), and a build
/// that leaves them to the default resumes a file either way: a file begun
/// without them (as before they were the default) goes on without them.
#[test]
fn default_corners_follow_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let corners_of = |db: &Path| info(db)["corners"].clone();
    let fresh = dir.path().join("fresh.tb");
    run_ok(
        tb().args(["build", "2x3", "--quiet", "--db"]).arg(&fresh),
        "default build",
    );
    assert_eq!(corners_of(&fresh), serde_json::json!(true));
    let none = dir.path().join("none.tb");
    run_ok(
        tb().args(["build", "2x3", "--symmetry", "none", "--quiet", "--db"])
            .arg(&none),
        "build without symmetry",
    );
    assert_eq!(corners_of(&none), serde_json::json!(false));
    // A file begun without corners: the default build resumes it as it is.
    let old = dir.path().join("old.tb");
    run_ok(
        tb().args(["build", "2x3", "--no-corners", "--quiet", "--db"])
            .arg(&old),
        "build without corners",
    );
    run_ok(
        tb().args(["build", "2x3", "--quiet", "--db"]).arg(&old),
        "default build on a file without corners",
    );
    assert_eq!(corners_of(&old), serde_json::json!(false));
    let out = tb()
        .args(["build", "2x3", "--corners", "--quiet", "--db"])
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other parameters"));
}

/// A move list as a mask, through the oracle's own line names.
fn moves(o: &Oracle, list: &str) -> u64 {
    list.split(',').fold(0, |m, name| {
        m | 1 << o.line_by_name(name).expect("line name")
    })
}

/// Overwrites one stored chunk through SQL.
fn damage(db: &Path, sql: &str) {
    let conn = Connection::open(db).unwrap();
    if sql == "FLIP" {
        let mut data: Vec<u8> = conn
            .query_row("SELECT data FROM chunks WHERE n = 8", [], |r| r.get(0))
            .unwrap();
        let middle = data.len() / 2;
        data[middle] ^= 0x5a;
        conn.execute("UPDATE chunks SET data = ?1 WHERE n = 8", [data])
            .unwrap();
        return;
    }
    let changed = conn.execute(sql, []).unwrap();
    assert!(changed > 0, "nothing damaged by {sql}");
}

#[test]
fn corrupted_chunks_are_reported_never_answered() {
    let o = Oracle::new(2, 3, 0);
    for (what, sql) in [
        ("flipped byte in the zstd frame", "FLIP"),
        (
            "valid frame, other values",
            "UPDATE chunks SET checksum = checksum + 1 WHERE n = 8",
        ),
    ] {
        let b = build_all_layers(&o, "empty");
        damage(&b.db, sql);
        let verify = tb().args(["verify", "--db"]).arg(&b.db).output().unwrap();
        assert_eq!(
            verify.status.code(),
            Some(1),
            "{what}: verify: {}",
            describe(&verify)
        );
        assert!(
            String::from_utf8_lossy(&verify.stdout).contains("problem: chunk"),
            "{what}: {}",
            describe(&verify)
        );

        // Every position of layer 8 now fails loudly; no value is printed for it.
        let p = moves(&o, "h0.0,h0.1,h0.2,h1.0,h1.1,h1.2,h2.0,h2.1");
        let out = tb()
            .args(["probe", "--json", "--db"])
            .arg(&b.db)
            .arg(o.bits(p))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{what}: probe: {}",
            describe(&out)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v.get("value").is_none(),
            "{what}: answered from a corrupt chunk: {v}"
        );
        assert!(
            v["error"].as_str().unwrap().contains("corrupt"),
            "{what}: {v}"
        );
    }
}

/// Regression: `tb export | head -1` panicked with "failed printing to stdout".
#[test]
fn a_closed_stdout_ends_output_quietly() {
    use std::io::{BufRead, BufReader};
    let o = Oracle::new(2, 3, 0);
    let b = build_all_layers(&o, "empty");
    for args in [vec!["export", "--format", "csv"], vec!["info", "--json"]] {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("tb"))
            .args(&args)
            .arg("--db")
            .arg(&b.db)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader is dropped here: the pipe is closed after one line.
        let out = child.wait_with_output().unwrap();
        assert!(!first.is_empty());
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{args:?}: {}",
            describe(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
    }
}
