//! `tb recode`: a finished Dots-and-Boxes file copied into chunks of other sizes
//! or into the archival coding (the real binary and files) holds exactly the
//! oracle's values, passes `verify`, answers probes and exports as the original
//! does, refuses damaged input without writing a file, and resumes after kill -9.
//! (Morris files: tests/morris_placement.rs.)

use crate::harness;
use crate::interrupt;
use crate::oracle;

use harness::{Build, build_with, check_all_values, describe, info, run_ok, tb};
use oracle::Oracle;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tb::games::dots::tablebase::Tablebase;

/// `tb recode --quiet --json --chunk N --db FROM --out OUT`, not yet run.
fn recode_command(from: &Path, out: &Path, chunk: u64) -> assert_cmd::Command {
    let mut cmd = tb();
    cmd.args(["recode", "--quiet", "--json", "--chunk"])
        .arg(chunk.to_string())
        .arg("--db")
        .arg(from)
        .arg("--out")
        .arg(out);
    cmd
}

/// [`recode_command`], which must succeed: its summary.
fn recode(from: &Path, out: &Path, chunk: u64) -> serde_json::Value {
    run_recode(&mut recode_command(from, out, chunk))
}

/// A recode that must succeed: its summary.
fn run_recode(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    let output = run_ok(cmd, "tb recode");
    serde_json::from_slice(&output.stdout).expect("recode prints JSON")
}

/// `tb recode --quiet --json --coding CODING --db FROM --out OUT` (the default
/// chunk size), not yet run.
fn recode_to(from: &Path, out: &Path, coding: &str) -> assert_cmd::Command {
    let mut cmd = tb();
    cmd.args(["recode", "--quiet", "--json", "--coding", coding, "--db"])
        .arg(from)
        .arg("--out")
        .arg(out);
    cmd
}

/// The data of each chunk of a file, by key.
fn chunk_data(db: &Path) -> Vec<(i64, String, i64, Vec<u8>)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT n, counts, chunk, data FROM chunks ORDER BY n, counts, chunk")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `tb export` (JSON lines) of a file: every stored position with its value.
fn export_all(db: &Path) -> String {
    let output = run_ok(tb().args(["export", "--db"]).arg(db), "tb export");
    String::from_utf8(output.stdout).unwrap()
}

/// The build `b` with its file replaced by `db` (same board and start).
fn with_file(b: &Build, db: PathBuf) -> Build {
    Build {
        dir: tempfile::tempdir().unwrap(),
        db,
        board: b.board.clone(),
        start_arg: b.start_arg.clone(),
        start: b.start,
        penalty: b.penalty,
        book_lines: b.book_lines,
        extra: b.extra.clone(),
    }
}

/// `tb probe --json` of the lines read from stdin (one position per line).
fn probe_all(db: &Path, positions: &str) -> String {
    let output = run_ok(
        tb().args(["probe", "--json", "--db"])
            .arg(db)
            .write_stdin(positions.to_string()),
        "tb probe",
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `tb probe --json` answers the same on two 3x3 files for `count` random
/// positions (from `seed`).
fn assert_same_probes(a: &Path, b: &Path, count: usize, seed: u64) {
    let o = Oracle::new(3, 3, 0);
    let positions: String = harness::sample_positions(&o, 0, count, seed)
        .into_iter()
        .map(|p| o.bits(p) + "\n")
        .collect();
    assert_eq!(probe_all(a, &positions), probe_all(b, &positions));
}

#[test]
fn recoded_files_hold_the_oracle_values_for_chunk_sizes_that_do_and_do_not_divide() {
    let mut o = Oracle::new(2, 3, 0);
    for extra in [&[][..], &["--corners", "--symmetry", "none"][..]] {
        let b = build_with(&o, "empty", o.start("empty"), Some(o.num_lines()), extra);
        // 777 divides neither the old chunks nor the blocks; 1 << 20 is larger than
        // every block.
        for chunk in [777u64, 4096, 1 << 20] {
            let out = b.dir.path().join(format!("r{chunk}.tb"));
            let summary = recode(&b.db, &out, chunk);
            assert_eq!(summary["chunk_positions_after"], chunk);
            assert_eq!(summary["resumed_blocks"], 0);
            assert!(summary["bytes_after"].as_u64().unwrap() > 0);
            let r = with_file(&b, out.clone());
            let table = Tablebase::open(&out).unwrap();
            check_all_values(&mut o, &r, |p| table.value(p));
            assert_eq!(info(&out)["chunk_positions"], chunk, "{}", b.label());
            // The layers' digests and histograms are the original's.
            assert_eq!(layer_values(&b.db), layer_values(&out), "{}", b.label());
            let verify = tb().args(["verify", "--db"]).arg(&out).output().unwrap();
            assert!(verify.status.success(), "{}", describe(&verify));
            assert!(!harness_partial(&out).exists());
        }
    }
}

/// What `tb info --json` says of each layer's values (not of their coding).
fn layer_values(db: &Path) -> Vec<serde_json::Value> {
    info(db)["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|layer| {
            let mut layer = layer.clone();
            let fields = layer.as_object_mut().unwrap();
            fields.remove("stored_bytes");
            fields.remove("bits_per_position");
            layer
        })
        .collect()
}

/// `<out>.partial`.
fn harness_partial(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

#[test]
fn probes_of_a_recoded_3x3_equal_the_original_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "3x3.tb", &["3x3"]);
    let out = dir.path().join("small.tb");
    recode(&db, &out, 1000);
    assert_same_probes(&db, &out, 3000, 11);
}

#[test]
fn recode_refuses_damaged_input_and_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3", "--book-lines", "17"]);
    let out = dir.path().join("out.tb");
    // An existing output file is never overwritten.
    std::fs::write(&out, b"keep me").unwrap();
    let refused = recode_command(&db, &out, 100).output().unwrap();
    assert!(!refused.status.success(), "{}", describe(&refused));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("exists"));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    std::fs::remove_file(&out).unwrap();

    // Values that no longer match their block's digest (a chunk forged with a
    // valid checksum would decode fine: the block row catches it), and a chunk
    // that does not decode.
    for (what, statement) in [
        (
            "digest",
            "UPDATE blocks SET digest = digest + 1 WHERE n = 9",
        ),
        ("chunk", "UPDATE chunks SET data = x'00' WHERE n = 9"),
    ] {
        let copy = dir.path().join(format!("{what}.tb"));
        std::fs::copy(&db, &copy).unwrap();
        Connection::open(&copy)
            .unwrap()
            .execute_batch(statement)
            .unwrap();
        let out = dir.path().join(format!("{what}-out.tb"));
        let failed = recode_command(&copy, &out, 100).output().unwrap();
        harness::assert_no_panic(&failed, what);
        assert!(!failed.status.success(), "{what}: {}", describe(&failed));
        assert!(!out.exists(), "{what}: a damaged source gave a file");
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(stderr.contains("layer 9"), "{what}: {stderr}");
    }
}

#[test]
fn a_recode_killed_midway_resumes_and_gives_the_same_file_contents() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "3x3.tb", &["3x3", "--book-lines", "24"]);
    let whole = dir.path().join("whole.tb");
    recode(&db, &whole, 256);

    let out = dir.path().join("resumed.tb");
    let partial = harness_partial(&out);
    let blocks = |path: &Path| -> i64 {
        Connection::open(path)
            .and_then(|c| c.query_row("SELECT count(*) FROM blocks", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let args = [
        "recode",
        "--quiet",
        "--threads",
        "1",
        "--chunk",
        "256",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let killed = interrupt::kill_midway(
        &args,
        || {
            let _ = std::fs::remove_file(&partial);
        },
        20,
        Duration::from_secs(60),
        || blocks(&partial) >= 5,
        || blocks(&partial) >= 5 && !out.exists(),
    );
    assert!(killed, "could not kill tb recode midway");
    let summary = recode(&db, &out, 256);
    let resumed = summary["resumed_blocks"].as_u64().unwrap();
    assert!(resumed >= 5, "{summary}");
    assert!(resumed < summary["blocks"].as_u64().unwrap(), "{summary}");
    assert_eq!(info(&whole)["layers"], info(&out)["layers"]);
    assert_eq!(layer_values(&db), layer_values(&out));
    assert_same_probes(&whole, &out, 2000, 5);
}

#[test]
fn archival_files_hold_the_oracle_values_and_read_as_the_zstd_ones() {
    let mut o = Oracle::new(2, 3, 0);
    for extra in [&[][..], &["--corners", "--symmetry", "none"][..]] {
        let b = build_with(&o, "empty", o.start("empty"), Some(o.num_lines()), extra);
        // The default archival chunk (2048), and chunks that split blocks unevenly.
        for chunk in [None, Some(777u64)] {
            let out = b.dir.path().join(format!("a{chunk:?}.tb"));
            let mut cmd = recode_to(&b.db, &out, "archive");
            if let Some(chunk) = chunk {
                cmd.arg("--chunk").arg(chunk.to_string());
            }
            let summary = run_recode(&mut cmd);
            assert_eq!(summary["chunk_positions_after"], chunk.unwrap_or(2048));
            assert_eq!(info(&out)["features"]["chunk_coding"], "archive-fast");
            // Every chunk is fast archival (0x05) or constant, and the file is
            // smaller.
            let chunks = chunk_data(&out);
            assert!(chunks.iter().all(|c| [0x02, 0x05].contains(&c.3[0])));
            assert!(chunks.iter().any(|c| c.3[0] == 0x05));
            let bytes = |s: &serde_json::Value| s.as_u64().unwrap();
            assert!(bytes(&summary["bytes_after"]) < bytes(&summary["bytes_before"]));
            let r = with_file(&b, out.clone());
            let table = Tablebase::open(&out).unwrap();
            check_all_values(&mut o, &r, |p| table.value(p));
            assert_eq!(layer_values(&b.db), layer_values(&out), "{}", b.label());
            assert_eq!(export_all(&b.db), export_all(&out), "{}", b.label());
            let verify = tb().args(["verify", "--db"]).arg(&out).output().unwrap();
            assert!(verify.status.success(), "{}", describe(&verify));
            // And back to zstd: the same chunks as a zstd recode of the original.
            let back = b.dir.path().join(format!("z{chunk:?}.tb"));
            run_recode(&mut recode_to(&out, &back, "zstd"));
            let direct = b.dir.path().join(format!("d{chunk:?}.tb"));
            recode(&b.db, &direct, chunk.unwrap_or(2048));
            assert_eq!(chunk_data(&back), chunk_data(&direct));
            assert_eq!(info(&back)["features"]["chunk_coding"], "zstd");
        }
    }
}

/// A 3x3 book of every layer built in `dir`, and its archival recode: their paths.
fn archival_3x3(dir: &Path) -> (PathBuf, PathBuf) {
    let db = harness::build_file(dir, "3x3.tb", &["3x3", "--book-lines", "24"]);
    let out = dir.join("archive.tb");
    run_recode(&mut recode_to(&db, &out, "archive"));
    (db, out)
}

#[test]
fn probes_of_an_archival_3x3_equal_the_original_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (db, out) = archival_3x3(dir.path());
    assert_same_probes(&db, &out, 3000, 13);
}

#[test]
fn a_damaged_archival_chunk_is_refused_and_archival_chunks_need_their_coding() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = archival_3x3(dir.path());
    // The largest archival chunk, its coded bytes changed (the checksums left as
    // they were), and the same chunk in a file that says it holds zstd chunks.
    let (n, counts, chunk, data) = chunk_data(&out)
        .into_iter()
        .filter(|c| c.3[0] == 0x05)
        .max_by_key(|c| c.3.len())
        .unwrap();
    let mut flipped = data.clone();
    let at = flipped.len() * 2 / 3;
    flipped[at] ^= 0x21;
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("flipped", flipped, "archive-fast"),
        ("claimed zstd", data.clone(), "zstd"),
        ("claimed the first archival coding", data, "archive"),
    ];
    for (what, data, coding) in cases {
        let copy = dir.path().join(format!("{what}.tb"));
        std::fs::copy(&out, &copy).unwrap();
        let conn = Connection::open(&copy).unwrap();
        conn.execute(
            "UPDATE chunks SET data = ?1 WHERE n = ?2 AND counts = ?3 AND chunk = ?4",
            rusqlite::params![data, n, counts, chunk],
        )
        .unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'chunk_coding'",
            [coding],
        )
        .unwrap();
        drop(conn);
        for args in [vec!["verify"], vec!["export"]] {
            let failed = tb().args(&args).arg("--db").arg(&copy).output().unwrap();
            harness::assert_no_panic(&failed, what);
            assert!(!failed.status.success(), "{what}: {}", describe(&failed));
            // verify reports on stdout, export on stderr.
            let said = describe(&failed);
            assert!(
                said.contains("is corrupt") || said.contains("damaged"),
                "{what} {args:?}: {said}"
            );
        }
        let failed = recode_to(&copy, &dir.path().join(format!("{what}-out.tb")), "zstd")
            .output()
            .unwrap();
        assert!(!failed.status.success(), "{what}: {}", describe(&failed));
    }
    // Loony files have no archival coding.
    let loony = harness::build_file(dir.path(), "loony.tb", &["2x2", "--loony"]);
    let refused = recode_to(&loony, &dir.path().join("loony-a.tb"), "archive")
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{}", describe(&refused));
}

#[test]
fn readers_sharing_their_chunks_answer_from_what_the_others_decoded() {
    use tb::games::read::{Ask, ReadOptions};
    use tb::store::reader::SharedChunks;
    let dir = tempfile::tempdir().unwrap();
    let (db, out) = archival_3x3(dir.path());
    let o = Oracle::new(3, 3, 0);
    let positions: Vec<String> = harness::sample_positions(&o, 0, 200, 17)
        .into_iter()
        .map(|p| o.bits(p))
        .collect();
    let open = || tb::games::open(&out, &ReadOptions::default()).unwrap();
    let shared = SharedChunks::new();
    let (mut a, mut b, mut alone) = (open(), open(), open());
    a.share_chunks(&shared);
    b.share_chunks(&shared);
    let memory_only = Ask {
        cached_only: true,
        ..Ask::MOVES
    };
    let json = |answer: Option<Box<dyn tb::games::read::Answer>>| answer.map(|a| a.json());
    for p in &positions {
        let read = json(a.probe(p, Ask::MOVES).unwrap());
        assert!(read.is_some());
        // B reads nothing from the file: every chunk comes from A's decoding.
        assert_eq!(json(b.probe(p, memory_only).unwrap()), read, "{p}");
    }
    // A reader that does not share has nothing in memory.
    assert!(
        positions
            .iter()
            .any(|p| alone.probe(p, memory_only).unwrap().is_none())
    );
    // A batch on several threads answers as the zstd file does.
    let lines: String = positions.iter().map(|p| p.clone() + "\n").collect();
    let threads = |db: &Path| {
        let output = run_ok(
            tb().args(["probe", "--json", "--threads", "3", "--db"])
                .arg(db)
                .write_stdin(lines.clone()),
            "tb probe",
        );
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(threads(&db), threads(&out));
}
