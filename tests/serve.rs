//! `tb serve` as a real process, asked over real TCP connections (a minimal
//! HTTP/1.1 client here, no shared code): every answer equals `tb probe --json`'s,
//! errors are JSON with their status, bounds hold, SIGTERM ends it cleanly.

use crate::harness;
use crate::http;

use harness::{describe, tb};
use http::{Server, encode, probe_json};
use serde_json::Value;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;

#[test]
fn the_server_answers_like_tb_probe() {
    let dir = tempfile::tempdir().unwrap();
    let dots = harness::build_file(dir.path(), "2x2.tb", &["2x2"]);
    let morris = harness::build_file(dir.path(), "m3.tb", &["morris", "--stones", "3"]);
    let server = Server::start(&[
        "--db",
        dots.to_str().unwrap(),
        "--db",
        &format!("mill={}", morris.display()),
        "--max-batch",
        "5",
    ]);

    let (status, body) = server.get("/health");
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"status":"ok","tables":2}"#)
    );
    let (status, body) = server.get("/api/tables");
    assert_eq!(status, 200, "{body}");
    let tables: Vec<Value> = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["2x2", "mill"]);
    assert_eq!(tables[0]["game"], "dots-and-boxes");
    assert_eq!(tables[0]["board"], "2x2");
    assert_eq!(tables[1]["game"], "morris");
    assert!(
        !body.contains(dir.path().to_str().unwrap()),
        "paths leak: {body}"
    );

    // GET: the same object as tb probe --json, for good and bad positions.
    let dots_positions = ["000000000000", "h0.0,v1.1", "111111111110", "01x1"];
    let expected = probe_json(&dots, &dots_positions);
    for (position, want) in dots_positions.iter().zip(&expected) {
        let (status, body) = server.get(&format!(
            "/api/probe?table=2x2&position={}",
            encode(position)
        ));
        let bad = *position == "01x1";
        assert_eq!(status, if bad { 400 } else { 200 }, "{position}: {body}");
        assert_eq!(&body, want, "{position}");
    }
    // Past the book the server searches (on its blocking pool), like tb probe.
    let shallow = harness::build_file(dir.path(), "2x2-book3.tb", &["2x2", "--book-lines", "3"]);
    let past_book = Server::start(&["--db", shallow.to_str().unwrap()]);
    let deep = ["111111000000", "h0.0,v1.1,h2.1,v0.0,h1.0"];
    for (position, want) in deep.iter().zip(probe_json(&shallow, &deep)) {
        let (status, body) = past_book.get(&format!(
            "/api/probe?table=2x2-book3&position={}",
            encode(position)
        ));
        assert_eq!(status, 200, "{position}: {body}");
        assert!(body.contains(r#""source":"search""#), "{position}: {body}");
        assert_eq!(body, want, "{position}");
    }
    drop(past_book);
    let morris_positions = ["WWW......BBB............ w", "WWW.........B..B.....B.. b"];
    let expected_morris = probe_json(&morris, &morris_positions);
    for (position, want) in morris_positions.iter().zip(&expected_morris) {
        let (status, body) = server.get(&format!(
            "/api/probe?table=mill&position={}",
            encode(position)
        ));
        assert_eq!((status, &body), (200, want), "{position}");
    }

    // POST: a JSON array in order, and JSON lines; a bad entry is an error object.
    let (status, body) = server.request(
        "POST",
        "/api/probe?table=2x2",
        br#"["000000000000","h0.0,v1.1","111111111110","01x1",7]"#,
    );
    assert_eq!(status, 200, "{body}");
    let answers: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(answers.len(), 5);
    for (answer, want) in answers.iter().zip(&expected) {
        assert_eq!(answer, &serde_json::from_str::<Value>(want).unwrap());
    }
    assert!(answers[4]["error"].is_string(), "{}", answers[4]);
    let lines: String = morris_positions
        .iter()
        .map(|p| format!("{}\n", Value::from(*p)))
        .collect();
    let (status, body) = server.request("POST", "/api/probe?table=mill", lines.as_bytes());
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.lines().collect::<Vec<_>>(), expected_morris);

    // Errors: JSON with their status.
    for (method, target, body, want) in [
        ("GET", "/api/probe?table=nope&position=0", &b""[..], 404),
        ("GET", "/api/probe?position=0", b"", 400),
        ("GET", "/api/probe?table=2x2", b"", 400),
        ("GET", "/etc/passwd", b"", 404),
        ("POST", "/api/probe?table=2x2", b"[1,2,3,4,5,6]", 413),
        ("POST", "/api/probe?table=2x2", b"[\"0000", 400),
        ("POST", "/api/probe?table=2x2", b"\xff\xfe", 400),
    ] {
        let (status, text) = server.request(method, target, body);
        assert_eq!(status, want, "{method} {target}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {target}: not JSON ({e}): {text}"));
        assert!(v["error"].is_string(), "{text}");
    }
    let big = vec![b' '; 5 << 20];
    let (status, text) = server.request("POST", "/api/probe?table=2x2", &big);
    assert_eq!(status, 413, "{text}");
    assert!(serde_json::from_str::<Value>(&text).is_ok(), "{text}");
}

#[test]
fn sigterm_ends_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let dots = harness::build_file(dir.path(), "1x1.tb", &["1x1"]);
    // Once after an answer, and several times the instant the server says it
    // listens: the handler must already be in place then (a lazily installed
    // one left the default action, and CI saw the process killed by the signal).
    for ask_first in [true, false, false, false, false] {
        let mut server = Server::start(&["--db", dots.to_str().unwrap()]);
        if ask_first {
            assert_eq!(server.get("/health").0, 200);
        }
        // SAFETY: signalling our own child.
        unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGTERM) };
        let status = server.child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{status:?}");
    }
    // A file that is not a tablebase is refused at start, naming it.
    let junk = dir.path().join("junk.tb");
    std::fs::write(&junk, "not a database").unwrap();
    let out = tb()
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.tb"));
}

/// Concurrent clients, malformed and cut requests, more requests than permits: the
/// server answers every good request right, refuses the rest with JSON, keeps its
/// memory bounded and never dies.
#[test]
fn the_server_survives_load_and_faults() {
    let dir = tempfile::tempdir().unwrap();
    let dots = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let positions = ["00000000000000000", "h0.0,v1.1", "h0.0,h0.1,h0.2"];
    let expected = probe_json(&dots, &positions);
    let server = Server::start(&["--db", dots.to_str().unwrap(), "--max-concurrent", "2"]);

    // 16 clients, 100 requests each, all answered right (or 503 when more than two
    // are in flight: then with a JSON error).
    let answered = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for c in 0..16 {
            let (server, expected, answered) = (&server, &expected, &answered);
            scope.spawn(move || {
                for i in 0..100 {
                    let k = (c + i) % positions.len();
                    let (status, body) = server.get(&format!(
                        "/api/probe?table=2x3&position={}",
                        encode(positions[k])
                    ));
                    match status {
                        200 => {
                            assert_eq!(body, expected[k]);
                            answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        503 => assert!(body.contains("error"), "{body}"),
                        _ => panic!("status {status}: {body}"),
                    }
                }
            });
        }
    });
    assert!(answered.into_inner() > 0);

    // Many big batches at once against two permits: some are refused with 503.
    let batch: String = format!("[{}]", vec!["\"h0.0,v1.1\""; 20_000].join(","));
    let barrier = std::sync::Barrier::new(8);
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (server, batch, barrier) = (&server, &batch, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let (status, body) =
                        server.request("POST", "/api/probe?table=2x3", batch.as_bytes());
                    assert!(body.starts_with('[') || body.contains("error"), "{status}");
                    status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        statuses.iter().all(|s| [200, 503].contains(s)),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&503),
        "two permits, eight batches at once: {statuses:?}"
    );

    // Garbage, a request cut short and a client gone mid-body.
    for raw in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET /api/probe?table=2x3&position=0",
        b"POST /api/probe?table=2x3 HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n[\"0000",
        b"\x00\x01\x02\xff\r\n\r\n",
    ] {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        stream.write_all(raw).unwrap();
        drop(stream);
    }
    let (status, body) = server.get("/health");
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.get(&format!(
        "/api/probe?table=2x3&position={}",
        encode(positions[1])
    ));
    assert_eq!((status, &body), (200, &expected[1]));
    let rss = server.peak_rss();
    assert!(
        rss < 512 << 20,
        "the server's peak RSS is {} MiB",
        rss >> 20
    );
}

/// Overwrites the data of one chunk of layer `n` with a flipped byte (its checksum
/// no longer matches).
fn damage_chunk(db: &Path, n: u32) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut data: Vec<u8> = conn
        .query_row("SELECT data FROM chunks WHERE n = ?1", [n], |r| r.get(0))
        .unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0x5a;
    let changed = conn
        .execute(
            "UPDATE chunks SET data = ?1 WHERE n = ?2",
            rusqlite::params![data, n],
        )
        .unwrap();
    assert!(changed > 0);
}

/// Each kind of probe error gets its status and a typed JSON object: 400 a bad
/// position, 404 an unknown table, 500 a damaged table (other positions still
/// answered), 503 a search stopped at the request's time with its bounds; the
/// same objects as `tb probe --json`.
#[test]
fn probe_errors_get_their_status_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let dots = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    damage_chunk(&dots, 8);
    let server = Server::start(&["--db", dots.to_str().unwrap()]);
    let eight = "h0.0,h0.1,h0.2,h1.0,h1.1,h1.2,h2.0,h2.1";
    let cases = [
        ("01x1", 400, "position"),
        (eight, 500, "table"),
        ("h0.0", 200, ""),
        ("11111111111111111", 200, ""),
    ];
    for (position, status, kind) in cases {
        // One table: no ?table= needed.
        let (got, body) = server.get(&format!("/api/probe?position={}", encode(position)));
        assert_eq!(got, status, "{position}: {body}");
        assert_eq!(body, probe_json(&dots, &[position])[0], "{position}");
        if !kind.is_empty() {
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["kind"], kind, "{body}");
            assert!(v.get("value").is_none(), "{body}");
        }
    }
    let (_, body) = server.get(&format!("/api/probe?position={}", encode(eight)));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["table_error"], "damaged", "{body}");
    assert_eq!(server.get("/api/probe?table=nope&position=0").0, 404);
    drop(server);

    // A search stopped by the request's time: 503 with the bounds proven.
    let shallow = harness::build_file(dir.path(), "3x3-book2.tb", &["3x3", "--book-lines", "2"]);
    let server = Server::start(&["--db", shallow.to_str().unwrap(), "--request-time", "0s"]);
    let (status, body) = server.get("/api/probe?position=h0.0,h0.1,v1.1");
    assert_eq!(status, 503, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&v["kind"], &v["stopped"]),
        (&"stopped".into(), &"time limit".into()),
        "{body}"
    );
    let (lower, upper) = (v["lower"].as_i64().unwrap(), v["upper"].as_i64().unwrap());
    assert!(lower <= upper, "{body}");
    // The bounds hold the value a full search finds.
    let solved = tb()
        .args(["solve", "3x3", "h0.0,h0.1,v1.1", "--json"])
        .output()
        .unwrap();
    let solved: Value = serde_json::from_slice(&solved.stdout).unwrap();
    let value = solved["value"].as_i64().unwrap();
    assert!((lower..=upper).contains(&value), "{value} outside {body}");
}

/// `/api/tables` gives typed JSON (numbers, booleans, lists), names Morris
/// tables as `tb info` does, and a Qubic strategy is served like any table.
#[test]
fn every_game_is_served_with_a_typed_description() {
    let dir = tempfile::tempdir().unwrap();
    let dots = harness::build_file(dir.path(), "2x2.tb", &["2x2"]);
    let morris = harness::build_file(
        dir.path(),
        "m3.tb",
        &["morris", "--stones", "3", "--phase", "all"],
    );
    let qubic = harness::build_file(
        dir.path(),
        "q.tb",
        &["qubic", "--start", "0-3-60-21-15-63-12"],
    );
    let server = Server::start(&[
        "--db",
        dots.to_str().unwrap(),
        "--db",
        morris.to_str().unwrap(),
        "--db",
        qubic.to_str().unwrap(),
    ]);
    let (status, body) = server.get("/api/tables");
    assert_eq!(status, 200, "{body}");
    let tables: Vec<Value> = serde_json::from_str(&body).unwrap();
    let by_name = |name: &str| tables.iter().find(|t| t["name"] == name).unwrap();
    let d = by_name("2x2");
    assert!(
        d["penalty"].is_i64() && d["chunk_positions"].is_i64(),
        "{d}"
    );
    assert!(d["corners"].is_boolean() && d["groups"].is_array(), "{d}");
    assert_eq!(d["layers"].as_array().unwrap().len(), 13, "{d}");
    let m = by_name("m3");
    assert_eq!(m["game"], "morris");
    assert!(m["stones"].is_i64(), "{m}");
    let info: Value = serde_json::from_slice(
        &tb()
            .args(["info", "--json", "--db"])
            .arg(&morris)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let labels: Vec<&str> = info["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["tables"].as_str().unwrap())
        .collect();
    let served: Vec<&str> = m["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(served.iter().any(|t| t.starts_with('h')), "{served:?}");
    assert!(
        served.iter().all(|t| labels.contains(t)),
        "{served:?} vs {labels:?}"
    );
    let q = by_name("q");
    assert_eq!(
        (&q["game"], q["positions"].is_u64()),
        (&"qubic".into(), true),
        "{q}"
    );

    let positions = [
        "start",
        "0-3-60-21-15-63-12-1",
        "0-3-60-21-15-63-12-1-2",
        "0-0",
    ];
    for (position, want) in positions.iter().zip(probe_json(&qubic, &positions)) {
        let (status, body) =
            server.get(&format!("/api/probe?table=q&position={}", encode(position)));
        let bad = *position == "0-0";
        assert_eq!(status, if bad { 400 } else { 200 }, "{position}: {body}");
        assert_eq!(body, want, "{position}");
    }
    // POST lines that are not JSON strings are positions as they stand.
    let (status, body) = server.request("POST", "/api/probe?table=q", b"start\n\"start\"\n");
    assert_eq!(status, 200, "{body}");
    let want = probe_json(&qubic, &["start"]).remove(0);
    assert_eq!(
        body.lines().collect::<Vec<_>>(),
        [want.as_str(), want.as_str()]
    );
}
