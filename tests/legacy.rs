//! Files written before the game-generic core (by tb at commit fea5160, kept in
//! `data/legacy-2x2.tb`) still open: verify passes and every exported value equals
//! a fresh build's.

use std::path::Path;

fn tb() -> assert_cmd::Command {
    assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tb"))
}

fn run(args: &[&str], db: &Path) -> String {
    let out = tb().args(args).arg("--db").arg(db).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A copy of `data/NAME` in `dir` (tests write to it: locks, resumed builds).
fn copy_fixture(name: &str, dir: &Path) -> std::path::PathBuf {
    let copy = dir.join(name);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name),
        &copy,
    )
    .unwrap();
    copy
}

#[test]
fn a_file_from_before_the_generic_core_reads_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture("legacy-2x2.tb", dir.path());
    let fresh = dir.path().join("fresh.tb");
    // The old file reduced no corners (expanded rows come class by class).
    run(&["build", "2x2", "--no-corners", "--quiet"], &fresh);
    assert!(run(&["verify"], &old).contains("OK"));
    let export = |db: &Path| run(&["export", "--expand"], db);
    assert_eq!(export(&old), export(&fresh));
    assert_eq!(export(&old).lines().count(), 1 << 12);
}

fn meta(db: &Path, key: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .unwrap()
}

/// A plain file of value format 1 (values stored as they are) whose early layers
/// are missing resumes in format 1, reading its stored layers as they are; a recode
/// writes the boxes-left form (format 5); all three export the values of a fresh
/// build (which is of format 5).
#[test]
fn a_file_of_format_1_resumes_in_it_and_recodes_to_format_5() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture("legacy-2x2.tb", dir.path());
    let fresh = dir.path().join("fresh.tb");
    run(&["build", "2x2", "--no-corners", "--quiet"], &fresh);
    assert_eq!(meta(&old, "format_version"), "1");
    assert_eq!(meta(&fresh, "format_version"), "5");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        for table in ["chunks", "blocks", "layers"] {
            conn.execute(&format!("DELETE FROM {table} WHERE n < 6"), [])
                .unwrap();
        }
    }
    let build = [
        "build",
        "2x2",
        "--no-corners",
        "--groups",
        "12",
        "--book-lines",
        "12",
        "--json",
    ];
    let summary: serde_json::Value = serde_json::from_str(&run(&build, &old)).unwrap();
    // Only the missing layers were computed, from layer 6 read as stored (format 1).
    let computed = summary["computed_positions"].as_u64().unwrap();
    assert!(computed > 0 && computed < summary["total_positions"].as_u64().unwrap());
    assert_eq!(summary["start_value"], 2);
    assert_eq!(meta(&old, "format_version"), "1");
    assert!(run(&["verify"], &old).contains("OK"));
    let recoded = dir.path().join("recoded.tb");
    tb().args(["recode", "--quiet", "--chunk", "1000", "--db"])
        .arg(&old)
        .arg("--out")
        .arg(&recoded)
        .assert()
        .success();
    assert_eq!(meta(&recoded, "format_version"), "5");
    assert!(run(&["verify"], &recoded).contains("OK"));
    let export = |db: &Path| run(&["export", "--expand"], db);
    assert_eq!(export(&old), export(&fresh));
    assert_eq!(export(&recoded), export(&fresh));
}

/// Files from before the `symmetry` and `corners` keys existed stored every
/// position: resuming one with `--symmetry none` goes on, with the default
/// reduction it is refused as other parameters.
#[test]
fn a_file_without_reduction_keys_resumes_as_unreduced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.tb");
    run(&["build", "2x2", "--symmetry", "none", "--quiet"], &db);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("DELETE FROM meta WHERE key IN ('symmetry', 'corners')", [])
            .unwrap();
    }
    let out = tb()
        .args(["build", "2x2", "--quiet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other parameters"));
    run(&["build", "2x2", "--symmetry", "none", "--quiet"], &db);
    assert!(run(&["verify"], &db).contains("OK"));
}

/// A Morris file of value format 1 (zstd chunks, written by tb at bcf0be4, kept in
/// `data/morris-3-format1.tb`) reads like a fresh build (context-mixing chunks);
/// resuming it is refused as another format.
#[test]
fn a_morris_file_of_format_1_reads_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture("morris-3-format1.tb", dir.path());
    let fresh = dir.path().join("fresh.tb");
    run(&["build", "morris", "--stones", "3", "--quiet"], &fresh);
    assert!(run(&["verify"], &old).contains("OK"));
    let export = |db: &Path| run(&["export"], db);
    assert_eq!(export(&old), export(&fresh));
    assert_eq!(export(&old).lines().count(), 169_626);
    let probe = |db: &Path| run(&["probe", "WWW......BBB............ w"], db);
    assert_eq!(probe(&old), probe(&fresh));
    let out = tb()
        .args(["build", "morris", "--stones", "3", "--quiet", "--db"])
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let current = tb::games::morris::spec::FORMAT_VERSION;
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("format version 1 vs {current}"))
    );
}

/// A loony file of value format 2 (every byte with its offer bit, written by tb at
/// f846811, kept in `data/loony-2x3-format2.tb`) reads like a fresh build of format
/// 3 (offer bits left out), probes included, and verifies; resuming it is refused as
/// another format.
#[test]
fn a_loony_file_of_format_2_reads_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture("loony-2x3-format2.tb", dir.path());
    let fresh = dir.path().join("fresh.tb");
    let build = [
        "build",
        "2x3",
        "--loony",
        "--no-corners",
        "--book-lines",
        "17",
        "--quiet",
    ];
    run(&build, &fresh);
    assert!(run(&["verify"], &old).contains("OK"));
    let export = |db: &Path| run(&["export", "--expand"], db);
    assert_eq!(export(&old), export(&fresh));
    assert!(export(&old).contains("\"loony\":\"opponent\""));
    for position in ["00000000000000000", "h0.0", "h0.0,v1.1", "h0.0,h1.0,v0.0"] {
        let probe = |db: &Path| run(&["probe", "--json", position], db);
        assert_eq!(probe(&old), probe(&fresh), "{position}");
    }
    let out = tb().args(build).arg("--db").arg(&old).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("format version 2 vs 3"));
}

/// Reading leaves nothing beside a file: neither a finished file of this tb (which
/// leaves WAL mode) nor a WAL-mode file of an older tb gets -wal/-shm files, so
/// shared and read-only copies stay as they are.
#[test]
fn readers_leave_no_files_beside_a_tablebase() {
    let dir = tempfile::tempdir().unwrap();
    let fresh_dir = dir.path().join("fresh");
    std::fs::create_dir(&fresh_dir).unwrap();
    let fresh = fresh_dir.join("3x3.tb");
    run(&["build", "3x3", "--quiet"], &fresh);
    // A finished build leaves no lock file either.
    assert!(!fresh_dir.join("3x3.tb.lock").exists());
    let old_dir = dir.path().join("old");
    std::fs::create_dir(&old_dir).unwrap();
    let old = copy_fixture("morris-3-format1.tb", &old_dir);
    for (db, position) in [
        (&fresh, "000000000000000000000000"),
        (&old, "WWW......BBB............ w"),
    ] {
        run(&["probe", position], db);
        run(&["info"], db);
        run(&["export"], db);
        run(&["verify"], db);
        let files: Vec<String> = std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files.len(), 1, "{}: {files:?}", db.display());
    }
}
