//! Files written before the game-generic core (by tb at commit fea5160, kept in
//! `data/legacy-2x2.tb`) still open: verify passes and every exported value equals
//! a fresh build's.

use rusqlite::OptionalExtension;
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

/// `tb recode` of `from` into `out` with chunks of `chunk` positions.
fn recode(from: &Path, out: &Path, chunk: &str) {
    tb().args(["recode", "--quiet", "--chunk", chunk, "--db"])
        .arg(from)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// The metadata row `key` of `db`, if it has one.
fn meta_row(db: &Path, key: &str) -> Option<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .unwrap()
}

fn meta(db: &Path, key: &str) -> String {
    meta_row(db, key).unwrap_or_else(|| panic!("{} has no `{key}`", db.display()))
}

/// The format rows of a file: `format_version` and the feature keys (None where
/// absent).
fn format_rows(db: &Path) -> Vec<Option<String>> {
    ["format_version", "value_form", "loony", "chunk_coding"]
        .iter()
        .map(|key| meta_row(db, key))
        .collect()
}

/// The format rows of a plain Dots-and-Boxes file this tb creates.
fn current_plain() -> Vec<Option<String>> {
    ["7", "boxes-left", "false", "zstd"]
        .iter()
        .map(|v| Some(v.to_string()))
        .collect()
}

/// A plain file of value format 1 (values stored as they are) whose early layers
/// are missing resumes in format 1, reading its stored layers as they are and
/// keeping its metadata (no feature keys); a recode writes the boxes-left form in
/// the current format (7, feature keys); all three export the values of a fresh
/// build.
#[test]
fn a_file_of_format_1_resumes_in_it_and_recodes_to_the_current_format() {
    let dir = tempfile::tempdir().unwrap();
    let old = copy_fixture("legacy-2x2.tb", dir.path());
    let fresh = dir.path().join("fresh.tb");
    run(&["build", "2x2", "--no-corners", "--quiet"], &fresh);
    let legacy_1 = vec![Some("1".to_string()), None, None, None];
    assert_eq!(format_rows(&old), legacy_1);
    assert_eq!(format_rows(&fresh), current_plain());
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
    assert_eq!(format_rows(&old), legacy_1);
    assert!(run(&["verify"], &old).contains("OK"));
    let recoded = dir.path().join("recoded.tb");
    recode(&old, &recoded, "1000");
    assert_eq!(format_rows(&recoded), current_plain());
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

/// Runs `tb` on `db` expecting failure; returns stderr.
fn run_err(args: &[&str], db: &Path) -> String {
    let out = tb().args(args).arg("--db").arg(db).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

/// Executes SQL statements on a file (writes the metadata as an older tb did).
fn sql(db: &Path, statements: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(statements)
        .unwrap();
}

fn info_json(db: &Path) -> serde_json::Value {
    serde_json::from_str(&run(&["info", "--json"], db)).unwrap()
}

/// Files written just before the feature keys (legacy formats 5, plain, and 6,
/// loony, in the boxes-left form; made here from fresh builds by writing their
/// metadata as that tb did) read like fresh builds, `tb info` shows their
/// features, a build resumed on one keeps its metadata (no feature keys written,
/// the version kept), and a recode writes the current format.
#[test]
fn files_of_formats_5_and_6_read_resume_and_recode_as_before() {
    let dir = tempfile::tempdir().unwrap();
    for (loony, version) in [(false, "5"), (true, "6")] {
        let mut build = vec!["build", "2x2", "--book-lines", "12", "--quiet"];
        if loony {
            build.push("--loony");
        }
        let fresh = dir.path().join(format!("fresh-{version}.tb"));
        run(&build, &fresh);
        let old = dir.path().join(format!("old-{version}.tb"));
        std::fs::copy(&fresh, &old).unwrap();
        sql(
            &old,
            &format!(
                "UPDATE meta SET value = '{version}' WHERE key = 'format_version';
                 DELETE FROM meta WHERE key IN ('value_form', 'chunk_coding')
                     OR (key = 'loony' AND value = 'false');"
            ),
        );
        let legacy = vec![
            Some(version.to_string()),
            None,
            loony.then(|| "true".to_string()),
            None,
        ];
        assert_eq!(format_rows(&old), legacy);
        let export = |db: &Path| run(&["export", "--expand"], db);
        assert_eq!(export(&old), export(&fresh));
        assert!(run(&["verify"], &old).contains("OK"));
        let info = info_json(&old);
        assert_eq!(
            info["format_version"],
            version.parse::<u64>().unwrap(),
            "{info}"
        );
        assert_eq!(info["packed_format"], true);
        assert_eq!(info["features"]["value_form"], "boxes-left");
        assert_eq!(info["features"]["loony"], loony.to_string());
        assert_eq!(info_json(&fresh)["features"], info["features"]);
        assert!(run(&["info"], &old).contains(&format!("format {version} (legacy")));

        sql(
            &old,
            "DELETE FROM chunks WHERE n < 6; DELETE FROM blocks WHERE n < 6; DELETE FROM layers WHERE n < 6;",
        );
        let mut resume = build.clone();
        resume.push("--json");
        let summary: serde_json::Value = serde_json::from_str(&run(&resume, &old)).unwrap();
        assert!(
            summary["computed_positions"].as_u64().unwrap() > 0,
            "{summary}"
        );
        assert_eq!(format_rows(&old), legacy);
        assert!(run(&["verify"], &old).contains("OK"));
        assert_eq!(export(&old), export(&fresh));

        let recoded = dir.path().join(format!("recoded-{version}.tb"));
        recode(&old, &recoded, "100");
        assert_eq!(format_rows(&recoded), format_rows(&fresh));
        assert_eq!(export(&recoded), export(&fresh));
    }
}

/// A file of the current format names its features, and a reader refuses a
/// feature value or a version it does not know, naming it, instead of reading the
/// values another way.
#[test]
fn the_feature_keys_are_read_and_unknown_values_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("2x2.tb");
    run(&["build", "2x2", "--quiet"], &fresh);
    assert_eq!(format_rows(&fresh), current_plain());
    let info = info_json(&fresh);
    assert_eq!(info["format_version"], 7);
    assert_eq!(info["packed_format"], false);
    assert!(
        run(&["info"], &fresh)
            .contains("format 7: chunk_coding=zstd loony=false value_form=boxes-left")
    );
    // (What the file says is wrong, and the kind of store error a library caller
    // gets: `version` for a format this tb does not read.)
    use tb::store::{StoreError, StoreErrorKind};
    let (version, damaged, untyped) = (
        Some(StoreErrorKind::Version),
        Some(StoreErrorKind::Damaged),
        None,
    );
    for (change, message, kind) in [
        (
            "UPDATE meta SET value = 'delta' WHERE key = 'value_form'",
            "stored in the form `delta`, unknown to this tb",
            version,
        ),
        (
            "DELETE FROM meta WHERE key = 'value_form'",
            "no `value_form` metadata",
            untyped,
        ),
        (
            "UPDATE meta SET value = 'mix' WHERE key = 'chunk_coding'",
            "chunks are coded `mix`, which this tb does not read for Dots-and-Boxes",
            version,
        ),
        (
            "DELETE FROM meta WHERE key = 'loony'",
            "no `loony` metadata",
            untyped,
        ),
        (
            "UPDATE meta SET value = '8' WHERE key = 'format_version'",
            "value format 8 is newer than this tb understands (7)",
            version,
        ),
        (
            "UPDATE meta SET value = '5' WHERE key = 'format_version'",
            "metadata `value_form` is corrupt: the file's value format 5 is from before the feature keys",
            damaged,
        ),
    ] {
        let db = dir.path().join("changed.tb");
        std::fs::copy(&fresh, &db).unwrap();
        sql(&db, change);
        let err = run_err(&["probe", "start"], &db);
        assert!(err.contains(message), "{change}: {err}");
        let opened = tb::games::open(&db, &Default::default()).map(|_| ());
        let found = StoreError::find(&opened.expect_err(change)).map(|e| e.kind);
        assert_eq!(found, kind, "{change}");
    }
    // A chain file stores values as they are.
    let chains = dir.path().join("chains.txt");
    std::fs::write(
        &chains,
        "0\n+-----+-----+-----+\n.     .     .     .\n+-----+-----+-----+\n|                 |\n+     +     +     +\n",
    )
    .unwrap();
    let db = dir.path().join("chain.tb");
    run(
        &[
            "build",
            "2x3",
            "--start",
            chains.to_str().unwrap(),
            "--wilson-chains",
            "--quiet",
        ],
        &db,
    );
    assert_eq!(meta(&db, "value_form"), "net");
    assert!(meta(&db, "chains").contains("v0.0"));
    sql(
        &db,
        "UPDATE meta SET value = 'boxes-left' WHERE key = 'value_form'",
    );
    assert!(run_err(&["probe", "-"], &db).contains("chains with values in the boxes-left form"));
}

/// A Morris file of the current format names its chunk coding; one of legacy
/// format 3 (made here from a fresh build as that tb wrote it) reads, shows its
/// features, and stays format 3 when a build adds the placement tables; a file
/// whose `chunk_coding` allows no checked context-mixing chunk reports them.
#[test]
fn morris_files_name_their_chunk_coding_and_format_3_resumes_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("m3.tb");
    run(&["build", "morris", "--stones", "3", "--quiet"], &fresh);
    assert_eq!(meta(&fresh, "format_version"), "4");
    assert_eq!(meta(&fresh, "chunk_coding"), "mix-checked");
    let info = info_json(&fresh);
    assert_eq!(info["features"]["chunk_coding"], "mix-checked", "{info}");
    assert_eq!(info["packed_format"], false);
    let position = "WWW......BBB............ w";

    let zstd = dir.path().join("zstd.tb");
    std::fs::copy(&fresh, &zstd).unwrap();
    sql(
        &zstd,
        "UPDATE meta SET value = 'zstd' WHERE key = 'chunk_coding'",
    );
    assert!(run_err(&["probe", position], &zstd).contains("files of this format do not hold"));
    sql(
        &zstd,
        "UPDATE meta SET value = 'brotli' WHERE key = 'chunk_coding'",
    );
    assert!(run_err(&["probe", position], &zstd).contains("coded `brotli`, unknown to this tb"));
    // An archival file holds no context-mixing chunk of the game-neighbour rule.
    sql(
        &zstd,
        "UPDATE meta SET value = 'archive' WHERE key = 'chunk_coding'",
    );
    assert!(run_err(&["probe", position], &zstd).contains("files of this format do not hold"));
    // The fast archival coding is Dots-and-Boxes's only.
    sql(
        &zstd,
        "UPDATE meta SET value = 'archive-fast' WHERE key = 'chunk_coding'",
    );
    assert!(
        run_err(&["probe", position], &zstd).contains("coded `archive-fast`, unknown to this tb")
    );

    let old = dir.path().join("old.tb");
    std::fs::copy(&fresh, &old).unwrap();
    sql(
        &old,
        "UPDATE meta SET value = '3' WHERE key = 'format_version'",
    );
    let err = run_err(&["probe", position], &old);
    assert!(
        err.contains(
            "metadata `chunk_coding` is corrupt: the file's value format 3 is from before"
        ),
        "{err}"
    );
    sql(&old, "DELETE FROM meta WHERE key = 'chunk_coding'");
    assert_eq!(
        run(&["probe", position], &old),
        run(&["probe", position], &fresh)
    );
    let info = info_json(&old);
    assert_eq!(info["format_version"], 3, "{info}");
    assert_eq!(info["packed_format"], true);
    assert_eq!(info["features"]["chunk_coding"], "mix-checked");
    run(
        &[
            "build", "morris", "--stones", "3", "--phase", "all", "--quiet",
        ],
        &old,
    );
    assert_eq!(meta(&old, "format_version"), "3");
    assert_eq!(meta_row(&old, "chunk_coding"), None);
    assert_eq!(meta(&old, "phase"), "all");
    assert!(run(&["verify"], &old).contains("OK"));
    run(&["probe", "........................ w 3 3"], &old);
}

/// An archival Dots-and-Boxes file (chunks of coding `0x04`) written by tb at
/// commit 54689cb (`tb build 2x3 --book-lines 17 --groups 9,8`, then `tb recode
/// --coding archive`; kept in `data/archive-2x3.tb`, vacuumed to 4 KiB pages
/// without WAL to keep it small) reads like a fresh build: verify, every exported
/// value, probes. The archival coder and the sites it codes with are fixed
/// (docs/FORMAT.md §9.6): a change to either that still round-trips fails here.
/// Recoded, it keeps its coding unless asked for `archive`, the fast one today.
#[test]
fn an_archival_file_of_0x04_chunks_reads_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let (old, fresh) = archival_fixture_and_fresh_build(dir.path(), "archive-2x3.tb", 0x04);
    assert!(run(&["info"], &old).contains("chunk_coding=archive "));
    let recoded = |coding: Option<&str>, name: &str| {
        let out = dir.path().join(name);
        let mut cmd = tb();
        cmd.args(["recode", "--quiet", "--chunk", "1000", "--db"])
            .arg(&old)
            .arg("--out")
            .arg(&out);
        if let Some(coding) = coding {
            cmd.args(["--coding", coding]);
        }
        assert!(cmd.output().unwrap().status.success(), "{name}");
        assert_eq!(run(&["export"], &out), run(&["export"], &fresh), "{name}");
        out
    };
    let kept = recoded(None, "kept.tb");
    assert!(run(&["info"], &kept).contains("chunk_coding=archive "));
    assert_eq!(chunk_tags(&kept), [0x02, 0x04]);
    let fast = recoded(Some("archive"), "fast.tb");
    assert!(run(&["info"], &fast).contains("chunk_coding=archive-fast "));
    assert_eq!(chunk_tags(&fast), [0x02, 0x05]);
}

/// A fast archival Dots-and-Boxes file (chunks of coding `0x05`) written by tb
/// at commit e48a6f7 (the same build as `data/archive-2x3.tb`, then `tb recode
/// --coding archive`; kept in `data/archive-fast-2x3.tb`, vacuumed the same way)
/// reads like a fresh build. The fast coder and the features it codes with are
/// fixed (docs/FORMAT.md §9.6): a change to either that still round-trips fails
/// here.
#[test]
fn an_archival_file_of_0x05_chunks_reads_like_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let (old, _) = archival_fixture_and_fresh_build(dir.path(), "archive-fast-2x3.tb", 0x05);
    assert!(run(&["info"], &old).contains("chunk_coding=archive-fast "));
}

/// The tags of a file's chunks, each once, in order.
fn chunk_tags(db: &Path) -> Vec<u8> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT DISTINCT substr(data, 1, 1) FROM chunks ORDER BY 1")
        .unwrap();
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|tag| tag.unwrap()[0])
        .collect()
}

/// The archival fixture `data/NAME` copied into `dir`, checked to hold at least
/// 50 chunks of coding `tag` and to read like a fresh build of its 2x3 book
/// (verify, every exported value, probes): the copy and the fresh build.
fn archival_fixture_and_fresh_build(
    dir: &Path,
    name: &str,
    tag: u8,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let old = copy_fixture(name, dir);
    let fresh = dir.join("fresh.tb");
    let build = ["build", "2x3", "--book-lines", "17", "--groups", "9,8"];
    run(&[&build[..], &["--quiet"]].concat(), &fresh);
    let conn = rusqlite::Connection::open(&old).unwrap();
    let archival: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks WHERE substr(data, 1, 1) = ?1",
            [vec![tag]],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    assert!(archival >= 50, "{archival} chunks of {tag:#04x}");
    assert_eq!(chunk_tags(&old), [0x02, tag]);
    assert!(run(&["verify"], &old).contains("OK"));
    let export = |db: &Path| run(&["export"], db);
    assert_eq!(export(&old), export(&fresh));
    for position in [
        "00000000000000000",
        "h0.0",
        "h0.0,v1.1",
        "h0.0,h1.0,v0.0,v0.3",
    ] {
        let probe = |db: &Path| run(&["probe", "--json", position], db);
        assert_eq!(probe(&old), probe(&fresh), "{position}");
    }
    (old, fresh)
}
