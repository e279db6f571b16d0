//! Nine Men's Morris from the empty board: the complete 3- and 4-stone games
//! (`tb build morris --stones N --phase all`, the real binary and file) against the
//! independent oracle (tests/morris_oracle, no code shared with the crate): every
//! stored class's value, every move of sampled positions, export rows, a game
//! given as a move list, verify, and kill -9 during the placement tables.

use crate::harness;
use crate::interrupt;
use crate::morris_oracle;

use harness::{describe, tb};
use morris_oracle::placement::{Placement, hands};
use morris_oracle::{ALL, Oracle, POINT_NAMES, Rng, Val, bits};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tb::games::morris::rules::Position;
use tb::games::morris::tablebase::MorrisTablebase;

fn build(dir: &Path, stones: u32) -> PathBuf {
    let db = dir.join(format!("m{stones}.tb"));
    let out = tb()
        .args(["build", "morris", "--phase", "all", "--quiet", "--stones"])
        .arg(stones.to_string())
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    db
}

/// The game with `stones` a side: its file and the oracle's values.
struct Game {
    db: PathBuf,
    moving: Oracle,
    placement: Placement,
    _dir: tempfile::TempDir,
}

fn game(stones: u32) -> &'static Game {
    static GAMES: [OnceLock<Game>; 5] = [const { OnceLock::new() }; 5];
    GAMES[stones as usize].get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = build(dir.path(), stones);
        let moving = Oracle::solve(stones);
        let placement = Placement::solve(&moving, stones);
        Game {
            db,
            moving,
            placement,
            _dir: dir,
        }
    })
}

/// Position text with hands (docs/FORMAT.md §4.2) for the oracle's (mover, opp).
fn text(h: u32, mover: u32, opp: u32) -> String {
    let (hm, ho) = hands(h);
    let white_to_move = h.is_multiple_of(2);
    let (white, black) = if white_to_move {
        (mover, opp)
    } else {
        (opp, mover)
    };
    let cells: String = (0..24)
        .map(|p| match (white >> p & 1, black >> p & 1) {
            (1, _) => 'W',
            (_, 1) => 'B',
            _ => '.',
        })
        .collect();
    let (wh, bh) = if white_to_move { (hm, ho) } else { (ho, hm) };
    format!(
        "{cells} {} {wh} {bh}",
        if white_to_move { 'w' } else { 'b' }
    )
}

/// (mover, opp, h) of a position text with hands.
fn parse(text: &str) -> (u32, u32, u32) {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let (mut white, mut black) = (0u32, 0u32);
    for (p, c) in parts[0].chars().enumerate() {
        match c {
            'W' => white |= 1 << p,
            'B' => black |= 1 << p,
            _ => {}
        }
    }
    let h: u32 = parts
        .get(2..4)
        .map_or(0, |x| x.iter().map(|n| n.parse::<u32>().unwrap()).sum());
    if parts[1] == "w" {
        (white, black, h)
    } else {
        (black, white, h)
    }
}

/// Every placement move of (mover, opp) with `h` in hand, in notation, with its
/// value for the side that plays it, from the oracle.
fn oracle_moves(g: &Game, h: u32, mover: u32, opp: u32) -> Vec<(String, Val)> {
    let (hm, ho) = hands(h);
    if mover.count_ones() + hm < 3 {
        return Vec::new();
    }
    let geo = g.moving.geometry();
    let child = |next: u32, after: u32| -> Val {
        if next.count_ones() + ho < 3 {
            Val::Loss(0)
        } else if h == 1 {
            g.moving.value(next, after)
        } else {
            g.placement.value(h - 1, next, after)
        }
    };
    let mut out = Vec::new();
    for p in bits(ALL & !(mover | opp)) {
        let after = mover | 1 << p;
        let removable = geo.removable(opp);
        if geo.closes_mill(after, p) && removable != 0 {
            for c in bits(removable) {
                let v = Val::from_child(child(opp & !(1 << c), after));
                out.push((format!("{}x{}", POINT_NAMES[p], POINT_NAMES[c]), v));
            }
        } else {
            out.push((
                POINT_NAMES[p].to_string(),
                Val::from_child(child(opp, after)),
            ));
        }
    }
    out
}

/// Checks every stored placement class of the game with `stones` a side against
/// the oracle (through the library, reading the file), and the moves of `samples`
/// random positions of each layer (all of them when the layer is smaller).
fn check_game(stones: u32, samples: usize) {
    check_file(stones, &game(stones).db, samples, EveryClass::Read);
}

/// Whether [`check_file`] reads every stored class's value one by one.
#[derive(Clone, Copy, PartialEq)]
enum EveryClass {
    Read,
    /// Only the probes: for a file recoded from the checked build, whose every
    /// value the caller compares by `tb export` (one class at a time, a chunk of
    /// context mixing is decoded again from its start for each: minutes in all).
    Skip,
}

/// [`check_game`] on `db`, a file of the game with `stones` a side. The probes
/// come first, on a cold reader: each decodes only the part of a chunk it needs
/// (files of format 3), and the values read after them find some chunks cached in
/// part, some whole and some not at all.
fn check_file(stones: u32, db: &Path, samples: usize, every_class: EveryClass) {
    let g = game(stones);
    let t = MorrisTablebase::open(db).unwrap();
    let mut rng = Rng::new(7 + stones as u64);
    // Every stored class of each placement layer: (h, its representative, mover, opponent).
    let mut layers: Vec<Vec<(u32, Position, u32, u32)>> = Vec::new();
    for h in 1..=2 * stones {
        let (hm, ho) = hands(h);
        let mut layer = Vec::new();
        for (m, o) in g.placement.tables(h) {
            if m + hm < 3 || o + ho < 3 {
                continue; // the game is over there: nothing is stored
            }
            let size =
                tb::games::morris::index::Table::<tb::games::morris::Nine>::get(m as u8, o as u8)
                    .unwrap()
                    .size();
            for index in 0..size {
                let p = t
                    .placement_representative(h as u8, m as u8, o as u8, index)
                    .unwrap();
                let (mover, opp, hh) = parse(&p.to_string());
                assert_eq!(hh, h, "{p}");
                layer.push((h, p, mover, opp));
            }
        }
        layers.push(layer);
    }
    for layer in &layers {
        for _ in 0..samples.min(layer.len()) {
            let (h, _, mover, opp) = layer[(rng.next_u64() % layer.len() as u64) as usize];
            let position = Position::parse(&text(h, mover, opp)).unwrap();
            let probe = t.probe(&position).unwrap();
            let ours: Vec<(String, String)> = probe
                .moves
                .iter()
                .map(|(mv, v)| (mv.text(position.rules).to_string(), v.to_string()))
                .collect();
            let mut want: Vec<(String, String)> = oracle_moves(g, h, mover, opp)
                .into_iter()
                .map(|(mv, v)| (mv, v.to_string()))
                .collect();
            let mut sorted = ours.clone();
            sorted.sort();
            want.sort();
            assert_eq!(sorted, want, "moves of {position}");
            // Best first.
            let keys: Vec<(u8, u32)> = ours
                .iter()
                .map(|(_, v)| v.parse::<Val>().unwrap().sort_key())
                .collect();
            assert!(keys.windows(2).all(|w| w[0] <= w[1]), "order of {position}");
        }
    }
    if every_class == EveryClass::Skip {
        return;
    }
    let mut classes = 0u64;
    for (h, p, mover, opp) in layers.iter().flatten() {
        let stored = t.value(p).unwrap().to_string();
        let want = g.placement.value(*h, *mover, *opp).to_string();
        assert_eq!(stored, want, "value of {p}");
        classes += 1;
    }
    assert!(classes > 0);
}

#[test]
fn the_3_stone_game_matches_the_oracle_everywhere() {
    check_game(3, 200);
    // The start: White to move on the empty board, every first placement.
    let g = game(3);
    let out = tb()
        .args(["probe", "--json", "--db"])
        .arg(&g.db)
        .arg("........................ w 3 3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["value"],
        g.placement.value(6, 0, 0).to_string(),
        "the game's value"
    );
    assert_eq!(answer["moves"].as_array().unwrap().len(), 24);
}

#[test]
fn the_4_stone_game_matches_the_oracle_everywhere() {
    check_game(4, 300);
}

#[test]
fn a_recoded_4_stone_game_matches_the_oracle_everywhere() {
    // Chunks of 1000 (the build's hold many tables whole here): the context
    // models' neighbours now often lie before a chunk's start, and a probe reads
    // several chunks of a table, each in part.
    let g = game(4);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m4-1000.tb");
    let recoded = tb()
        .args(["recode", "--quiet", "--chunk", "1000", "--db"])
        .arg(&g.db)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(recoded.status.success(), "{}", describe(&recoded));
    check_file(4, &out, 100, EveryClass::Skip);
    assert_eq!(digests(&g.db), digests(&out));
    assert_eq!(export(&g.db), export(&out));
    let verify = tb().args(["verify", "--db"]).arg(&out).output().unwrap();
    assert!(verify.status.success(), "{}", describe(&verify));
}

/// `tb export` (JSON lines) of a file.
fn export(db: &Path) -> Vec<u8> {
    let out = tb().args(["export", "--db"]).arg(db).output().unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    out.stdout
}

/// Every value byte a Morris file stores (its chunks decoded by the library).
fn stored_values(db: &Path) -> Vec<u8> {
    use tb::retro::Format as _;
    let store = tb::store::Store::open_read(db).unwrap();
    let spec = tb::games::morris::spec::MorrisSpec::from_meta(&store.meta().unwrap()).unwrap();
    let format = tb::games::morris::spec::MorrisFormat::new(spec);
    let mut all = Vec::new();
    for layer in format.layers() {
        for key in format.blocks(layer) {
            let id = tb::retro::BlockId { layer, key };
            let values = tb::retro::chunks::load_block(&store, &format, &id).unwrap();
            all.extend(values.iter().map(|&v| v as u8));
        }
    }
    all
}

/// `tb recode --quiet --db FROM --out OUT` with `args`, which must succeed.
fn recode(from: &Path, out: &Path, args: &[&str]) {
    let recoded = tb()
        .args(["recode", "--quiet"])
        .args(args)
        .arg("--db")
        .arg(from)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(recoded.status.success(), "{}", describe(&recoded));
}

#[test]
fn an_archival_4_stone_game_matches_the_oracle_everywhere() {
    // The default chunk (1,024), and chunks of 1000 (not a power of two;
    // neighbours before a chunk's start, tables split over chunks): every value
    // of both compared by export, the probes and verify on the second.
    let g = game(4);
    let dir = tempfile::tempdir().unwrap();
    for chunk in [None, Some("1000")] {
        let out = dir.path().join(format!("m4-a{}.tb", chunk.unwrap_or("")));
        let mut args = vec!["--coding", "archive"];
        args.extend(chunk.map(|c| ["--chunk", c]).into_iter().flatten());
        recode(&g.db, &out, &args);
        let info = harness::info(&out);
        assert_eq!(info["features"]["chunk_coding"], "archive", "{info}");
        // Its wins are stored without their distance, which the readers
        // recompute from the moves (format 5).
        assert_eq!(info["features"]["value_form"], "wins-marked", "{info}");
        assert_eq!(info["format_version"], 5, "{info}");
        // Moving and placement layers: archival (or constant) chunks only.
        let conn = rusqlite::Connection::open(&out).unwrap();
        let tags: Vec<(i64, u8)> = conn
            .prepare("SELECT n, substr(data, 1, 1) FROM chunks")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, Vec<u8>>(1)?[0])))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(tags.iter().all(|&(_, tag)| tag == 0x04 || tag == 0x02));
        for placement in [false, true] {
            assert!(
                tags.iter()
                    .any(|&(n, tag)| tag == 0x04 && (n > 100) == placement),
                "placement {placement}"
            );
        }
        drop(conn);
        assert_eq!(export(&g.db), export(&out));
        if chunk.is_some() {
            check_file(4, &out, 100, EveryClass::Skip);
            assert_eq!(digests(&g.db), digests(&out));
            let verify = tb().args(["verify", "--db"]).arg(&out).output().unwrap();
            assert!(verify.status.success(), "{}", describe(&verify));
        }
        // Every win is stored as the mark, and there are wins with longer
        // distances in the build's file: the test reads marks, not distances.
        assert!(
            stored_values(&out)
                .iter()
                .all(|&v| v == 0 || v % 2 == 1 || v == 2)
        );
        assert!(stored_values(&g.db).iter().any(|&v| v > 2 && v % 2 == 0));
        // Recoding it again would need every win's distance: refused, naming
        // the file to recode instead.
        let refused = tb()
            .args(["recode", "--quiet", "--coding", "mix-checked", "--db"])
            .arg(&out)
            .arg("--out")
            .arg(dir.path().join(format!("m4-b{}.tb", chunk.unwrap_or(""))))
            .output()
            .unwrap();
        assert!(!refused.status.success(), "{}", describe(&refused));
        assert!(
            describe(&refused).contains("recode the file it was made from"),
            "{}",
            describe(&refused)
        );
    }
    // Context mixing without the checksum of coded bytes is not a coding Morris
    // files are recoded to.
    let refused = tb()
        .args(["recode", "--quiet", "--coding", "mix", "--db"])
        .arg(&g.db)
        .arg("--out")
        .arg(dir.path().join("z.tb"))
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{}", describe(&refused));
}

#[test]
fn a_file_with_marked_wins_says_so_or_is_refused() {
    let g = game(3);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m3-a.tb");
    recode(&g.db, &out, &["--coding", "archive"]);
    // Small chunks unless asked: a cold probe decodes its won children's
    // children's chunks up to the values it needs.
    assert_eq!(harness::info(&g.db)["chunk_positions"], 2048);
    assert_eq!(harness::info(&out)["chunk_positions"], 1024);
    let position = "d6,f4,b4,d2";
    let probe = |db: &Path| {
        tb().args(["probe", position, "--db"])
            .arg(db)
            .output()
            .unwrap()
    };
    let (want, got) = (probe(&g.db), probe(&out));
    assert_eq!(got.stdout, want.stdout, "{}", describe(&got));
    // Read as format 4, every win would be a win in one ply: the key says it is
    // not, so the file is damaged; a value form this tb does not know is named.
    for (sql, said) in [
        (
            "UPDATE meta SET value = '4' WHERE key = 'format_version'",
            "has no `value_form`",
        ),
        (
            "UPDATE meta SET value = 'wins-halved' WHERE key = 'value_form'",
            "stored as `wins-halved`, unknown to this tb",
        ),
    ] {
        let forged = dir.path().join("forged.tb");
        std::fs::copy(&out, &forged).unwrap();
        let conn = rusqlite::Connection::open(&forged).unwrap();
        conn.execute(sql, []).unwrap();
        drop(conn);
        let refused = probe(&forged);
        assert!(!refused.status.success(), "{}", describe(&refused));
        assert!(describe(&refused).contains(said), "{}", describe(&refused));
        std::fs::remove_file(&forged).unwrap();
    }
    // A sampled check restores only the wins it reads: the blocks are checked as
    // stored (their histograms with every win one mark), not against their
    // digests, and it says so.
    let verify = |db: &Path, args: &[&str]| {
        let out = tb()
            .args(["verify", "--json", "--db"])
            .arg(db)
            .args(args)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.success(), report)
    };
    let (ok, report) = verify(&out, &["--sample", "300"]);
    assert!(ok, "{report}");
    assert!(
        report["unchecked_digests"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert!(report["recomputed"].as_u64().unwrap() > 0, "{report}");
    let (ok, report) = verify(&out, &[]);
    assert!(ok && report["unchecked_digests"] == 0, "{report}");
    // Block 3-3's row with one position moved between two win distances (4 and
    // 6: the sampled check cannot see it, the full one does), or between two
    // loss distances (3 and 5: both see it).
    for (from, to, sampled_sees) in [("4", "6", false), ("3", "5", true)] {
        let forged = dir.path().join("forged.tb");
        std::fs::copy(&out, &forged).unwrap();
        let conn = rusqlite::Connection::open(&forged).unwrap();
        let moved = conn
            .execute(
                &format!(
                    "UPDATE blocks SET histogram = json_set(histogram, \
                     '$.\"{from}\"', json_extract(histogram, '$.\"{from}\"') - 1, \
                     '$.\"{to}\"', json_extract(histogram, '$.\"{to}\"') + 1) \
                     WHERE n = 33 AND counts = '3.3'"
                ),
                [],
            )
            .unwrap();
        assert_eq!(moved, 1);
        drop(conn);
        let (ok, report) = verify(&forged, &["--sample", "300"]);
        assert_eq!(ok, !sampled_sees, "{from} -> {to}: {report}");
        let (ok, report) = verify(&forged, &[]);
        assert!(!ok, "{from} -> {to}: {report}");
        assert!(report.to_string().contains("histogram"), "{report}");
        std::fs::remove_file(&forged).unwrap();
    }
}

#[test]
fn a_damaged_archival_morris_chunk_is_refused() {
    let g = game(3);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m3-a.tb");
    recode(&g.db, &out, &["--coding", "archive"]);
    let conn = rusqlite::Connection::open(&out).unwrap();
    let (n, counts, chunk, mut data): (i64, String, i64, Vec<u8>) = conn
        .query_row(
            "SELECT n, counts, chunk, data FROM chunks WHERE substr(data, 1, 1) = x'04' ORDER BY length(data) DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let at = data.len() * 2 / 3;
    data[at] ^= 0x21;
    conn.execute(
        "UPDATE chunks SET data = ?1 WHERE n = ?2 AND counts = ?3 AND chunk = ?4",
        rusqlite::params![data, n, counts, chunk],
    )
    .unwrap();
    drop(conn);
    for args in [&["verify"][..], &["export"][..]] {
        let failed = tb().args(args).arg("--db").arg(&out).output().unwrap();
        assert!(!failed.status.success(), "{args:?}: {}", describe(&failed));
        let said = describe(&failed);
        assert!(
            said.contains("corrupt") || said.contains("damaged"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("panicked"), "{said}");
    }
}

#[test]
fn export_lists_every_placement_class_with_the_oracle_value() {
    let g = game(3);
    let out = tb()
        .args(["export", "--format", "csv", "--db"])
        .arg(&g.db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut per_layer: BTreeMap<u32, u64> = BTreeMap::new();
    for row in text.lines().skip(1) {
        let fields: Vec<&str> = row.split(',').collect();
        let (mover, opp, h) = parse(fields[0]);
        let want = if h == 0 {
            g.moving.value(mover, opp)
        } else {
            g.placement.value(h, mover, opp)
        };
        assert_eq!(fields[2], want.to_string(), "{row}");
        *per_layer.entry(h).or_default() += 1;
    }
    // Each layer's rows are its classes under the 16 symmetries: as many as the
    // oracle's canonical raw positions.
    let syms = morris_oracle::Symmetries::new();
    for h in 1..=6 {
        let (hm, ho) = hands(h);
        let mut classes = 0;
        for (m, o) in g.placement.tables(h) {
            if m + hm >= 3 && o + ho >= 3 {
                classes += morris_oracle::count_classes(&syms, m, o);
            }
        }
        assert_eq!(
            per_layer.get(&h).copied().unwrap_or(0),
            classes,
            "layer {h}"
        );
    }
}

#[test]
fn a_game_from_the_start_is_a_move_list() {
    let g = game(3);
    // White and Black place; Black's third stone closes no mill.
    let moves = "d1,d7,a1,a7,g4,b6";
    let out = tb()
        .args(["probe", "--json", "--db"])
        .arg(&g.db)
        .arg(moves)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Worked out by hand from the notation: White d1 a1 g4, Black d7 a7 b6, White
    // to move in the moving phase.
    let mut cells = vec!['.'; 24];
    for (name, c) in [
        ("d1", 'W'),
        ("a1", 'W'),
        ("g4", 'W'),
        ("d7", 'B'),
        ("a7", 'B'),
        ("b6", 'B'),
    ] {
        cells[POINT_NAMES.iter().position(|p| *p == name).unwrap()] = c;
    }
    let expected: String = cells.into_iter().collect();
    assert_eq!(answer["position"], format!("{expected} w"));
    let (mover, opp, _) = parse(&format!("{expected} w"));
    assert_eq!(answer["value"], g.moving.value(mover, opp).to_string());
    // A move that is not legal there is an error naming it.
    let out = tb()
        .args(["probe", "--db"])
        .arg(&g.db)
        .arg("d1,d1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("move 2: illegal move d1"),
        "{}",
        describe(&out)
    );
}

#[test]
fn verify_checks_the_placement_tables() {
    let g = game(3);
    let out = tb()
        .args(["verify", "--json", "--db"])
        .arg(&g.db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every stored class is recomputed: moving and placement.
    let info = tb()
        .args(["info", "--json", "--db"])
        .arg(&g.db)
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(report["recomputed"], info["total"]["positions"], "{report}");
    assert_eq!(info["phase"], "all");
}

fn stored_layers(db: &Path) -> Vec<i64> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return Vec::new();
    };
    let Ok(mut stmt) = conn.prepare("SELECT n FROM layers WHERE status != 'building' ORDER BY n")
    else {
        return Vec::new();
    };
    stmt.query_map([], |r| r.get(0))
        .map(|rows| rows.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

/// Positions stored in `db`: its layers past building and the blocks stored of those
/// being built; and whether some placement layer being built has a block stored.
fn stored_positions(db: &Path) -> (i64, bool) {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return (0, false);
    };
    let query = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap_or(0);
    let building = "SELECT n FROM layers WHERE status = 'building'";
    let stored = query("SELECT COALESCE(SUM(positions), 0) FROM layers WHERE status != 'building'")
        + query(&format!(
            "SELECT COALESCE(SUM(positions), 0) FROM blocks WHERE n IN ({building})"
        ));
    let midway = query(&format!(
        "SELECT COUNT(*) FROM blocks WHERE n >= 101 AND n IN ({building})"
    )) > 0;
    (stored, midway)
}

fn digests(db: &Path) -> serde_json::Value {
    let info = harness::info(db);
    info["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| serde_json::json!([p["tables"], p["digest"]]))
        .collect()
}

#[test]
fn a_build_killed_during_placement_resumes_with_identical_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.tb");
    // Kill inside a placement layer: some of its blocks stored, not all, and the
    // last layer (108) not finished. Four stones a side: 2 s of CPU a build (five
    // took 26, three builds in all).
    let killed = interrupt::kill_build_midway(
        &[
            "build",
            "morris",
            "--stones",
            "4",
            "--phase",
            "all",
            "--threads",
            "1",
        ],
        &db,
        10,
        Duration::from_secs(120),
        |db| stored_positions(db).1,
        |db| stored_positions(db).1 && !stored_layers(db).contains(&108),
    );
    assert!(killed, "could not kill the build inside a placement table");
    let (stored, _) = stored_positions(&db);
    let out = tb()
        .args(["build", "morris", "--stones", "4", "--phase", "all", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    // The resumed build counts every position stored, those of the layer it was
    // building too.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("tb: resuming: {stored} of ")),
        "{stored} stored: {err}"
    );
    let whole = build(dir.path(), 4);
    assert_eq!(digests(&db), digests(&whole));
}

/// One screen of `tb play` on a Morris file, read back by its layout: the stones
/// of the drawn board, the status line and every move with its value.
struct PlayScreen {
    white: u32,
    black: u32,
    status: String,
    moves: BTreeMap<String, Val>,
    first: Option<String>,
}

/// The screens of a scripted `tb play` session (each board below the last) and
/// the messages after them.
fn play_screens(out: &str) -> (Vec<PlayScreen>, Vec<String>) {
    let lines: Vec<&str> = out.lines().collect();
    let (mut screens, mut messages) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with(" 7  ") {
            messages.push(lines[i].to_string());
            i += 1;
            continue;
        }
        // Ranks 7..1 on the even rows of 13, each point at column 4 + 4 * file.
        let (mut white, mut black) = (0u32, 0u32);
        for (p, name) in POINT_NAMES.iter().enumerate() {
            let file = (name.as_bytes()[0] - b'a') as usize;
            let rank = (name.as_bytes()[1] - b'0') as usize;
            let row = lines[i + 2 * (7 - rank)].as_bytes();
            match row[4 + 4 * file] {
                b'W' => white |= 1 << p,
                b'B' => black |= 1 << p,
                b'.' => {}
                c => panic!("point {name} drawn as {}", c as char),
            }
        }
        assert_eq!(lines[i + 13].trim(), "a   b   c   d   e   f   g");
        let status = lines[i + 14].to_string();
        let (mut moves, mut first) = (BTreeMap::new(), None);
        i += 15;
        // Move groups: "  <value> <move> [k/n] <move> ...".
        while i < lines.len() && lines[i].starts_with("  ") && !lines[i].starts_with("  (") {
            let mut words = lines[i].split_whitespace();
            let value: Val = words.next().unwrap().parse().unwrap();
            for word in words.filter(|w| !w.contains('/')) {
                first.get_or_insert_with(|| word.to_string());
                assert!(
                    moves.insert(word.to_string(), value).is_none(),
                    "{word} twice"
                );
            }
            i += 1;
        }
        screens.push(PlayScreen {
            white,
            black,
            status,
            moves,
            first,
        });
    }
    (screens, messages)
}

/// A screen is right: every legal move listed once with the oracle's value, the
/// position's value the best of them, and the first listed a best move (a screen
/// after the winning move has nothing to check but its board).
fn check_play_screen(g: &Game, s: &PlayScreen) {
    if s.status.starts_with("game over") {
        // The board after a winning capture: nothing is left to play.
        return;
    }
    let white_to_move = s.status.contains("White to move");
    let (mover, opp) = if white_to_move {
        (s.white, s.black)
    } else {
        (s.black, s.white)
    };
    let hands: u32 = match s.status.strip_prefix("in hand: White ") {
        Some(rest) => {
            let numbers: Vec<u32> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|w| !w.is_empty())
                .take(2)
                .map(|n| n.parse().unwrap())
                .collect();
            numbers.iter().sum()
        }
        None => 0,
    };
    let want: BTreeMap<String, Val> = if hands > 0 {
        oracle_moves(g, hands, mover, opp).into_iter().collect()
    } else {
        g.moving.moves(mover, opp).into_iter().collect()
    };
    assert_eq!(s.moves, want, "moves of the screen {}", s.status);
    if want.is_empty() {
        return;
    }
    let best = Val::best(want.values().copied());
    assert!(
        s.status.contains(&format!("value {best} (")),
        "{} should give {best}",
        s.status
    );
    let first = s.first.as_ref().unwrap();
    assert_eq!(want[first], best, "the first listed move {first} is best");
}

/// `tb play` on the 3-stone file, the real binary, scripted: every screen of a
/// game of best moves to its end against the oracle, each move played the first
/// listed; then the program playing Black answers with best moves, undo takes the
/// program's move back with the person's, and bad input is refused by name.
#[test]
fn tb_play_shows_the_oracle_values_and_plays_best_moves() {
    let g = game(3);
    let play = |args: &[&str], input: &str| -> String {
        let out = tb()
            .arg("play")
            .arg("--db")
            .arg(&g.db)
            .args(args)
            .write_stdin(input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    // Best moves for both sides until the game ends (a 3-stone game is short).
    let out = play(&[], &"best\n".repeat(60));
    let (screens, messages) = play_screens(&out);
    assert!(screens.len() > 6, "{out}");
    for s in &screens {
        check_play_screen(g, s);
    }
    let plays: Vec<&String> = messages.iter().filter(|m| m.contains(" plays ")).collect();
    for (s, said) in screens.iter().zip(&plays) {
        let first = s.first.as_ref().unwrap();
        assert!(
            said.contains(&format!("plays {first} (a best move)")),
            "{said}: the first listed move {first}"
        );
    }
    // The oracle's start value says who wins; the game of best moves ends so.
    let start_value = g.placement.value(6, 0, 0);
    let winner = match start_value {
        Val::Win(_) => "White wins",
        Val::Loss(_) => "Black wins",
        Val::Draw => panic!("a drawn 3-stone game has no end to check"),
    };
    assert!(out.contains(&format!("game over: {winner}")), "{out}");
    assert!(
        messages.iter().any(|m| m.starts_with("the game is over")),
        "best after the end is refused"
    );

    // The program plays Black: after the person's move it answers at once.
    let out = play(&["--computer", "black"], "d1\nundo\nredo\nz9\nquit\n");
    let (screens, messages) = play_screens(&out);
    for s in &screens {
        check_play_screen(g, s);
    }
    assert!(
        messages[0].starts_with("White plays d1; Black (computer) plays "),
        "{out}"
    );
    let answer = messages[0].rsplit(' ').next().unwrap().to_string();
    assert_eq!(messages[1], format!("took back {answer}, d1"));
    assert_eq!(messages[2], format!("replayed d1, {answer}"));
    assert!(messages[3].contains("z9"), "{}", messages[3]);
    assert_eq!(screens.len(), 4, "a refused command shows no board again");
    // The program's answer was a best move: the position after it is worth for
    // White what the position before it (after d1) is worth for Black, negated.
    let after_d1 = g.placement.value(5, 0, 1 << 1);
    let (white, black) = (screens[1].white, screens[1].black);
    let now = g.placement.value(4, white, black);
    assert_eq!(Val::from_child(now), after_d1, "{out}");
}
