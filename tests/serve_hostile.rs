//! `tb serve` against hostile files and clients (issue 48), as a real process
//! over real loopback connections: a served file overwritten in place by one
//! whose `chunks` is an endless recursive view, clients that post the largest
//! batches and never read, idle and slow connections past the descriptor limit,
//! bodies over the limit. In every case the server keeps answering `/health`
//! and its other tables, stays under 1 GiB, refuses what it cannot answer
//! (never a wrong answer) and ends on SIGTERM with exit 0.
//!
//! No wall-clock time is asserted: the limits below only keep a hang from
//! hanging the test (each was a hang before), and the times are printed.

use crate::harness;
use crate::http;

use http::{Server, encode, probe_json, read_response};
use serde_json::Value;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Longer than any wait the server should make us do: only a hang reaches it.
const HANG: Duration = Duration::from_secs(15);

/// The most a server may take to end after SIGTERM before the test calls it a
/// hang (the server waits 3 s for requests under way).
const SHUTDOWN_HANG: Duration = Duration::from_secs(10);

/// What memory the server may reach in any of these cases.
const MEMORY: u64 = 1 << 30;

/// `count` different positions of a 2x3 board (17 lines) as 0/1 strings.
fn positions_2x3(count: usize) -> Vec<String> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (0..17)
                .map(|line| if state >> line & 1 == 1 { '1' } else { '0' })
                .collect()
        })
        .collect()
}

/// `/health` answered (within [`HANG`]); prints how long it took.
fn assert_healthy(server: &Server, when: &str) {
    let (status, body, took) = server
        .get_within("/health", HANG)
        .unwrap_or_else(|e| panic!("{when}: /health got no answer: {e}"));
    assert_eq!(status, 200, "{when}: {body}");
    println!("{when}: /health answered in {took:?}");
}

/// SIGTERM ends the server with exit 0; prints how long it took.
fn assert_terminates(mut server: Server, when: &str) {
    let (status, took) = server.terminate(SHUTDOWN_HANG);
    assert_eq!(status.code(), Some(0), "{when}: {status:?}");
    println!("{when}: SIGTERM ended the server in {took:?}");
}

fn assert_memory_bounded(server: &Server, when: &str) {
    let peak = server.peak_rss();
    println!("{when}: peak RSS {} MiB", peak >> 20);
    assert!(peak < MEMORY, "{when}: peak RSS {} MiB", peak >> 20);
}

/// Overwrites `path` in place (the same inode, as `cat other > path` does) with
/// `content`.
fn overwrite_in_place(path: &Path, content: &[u8]) {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(path).unwrap().ino();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    file.write_all(content).unwrap();
    file.sync_all().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().ino(), inode);
}

/// A served file overwritten in place by one whose `chunks` is an endless
/// recursive view: that table is refused from then on (500, table error
/// `schema`, even for positions it answered before), the other table answers
/// right, and nothing hangs.
#[test]
fn a_file_changed_underneath_is_refused_and_the_others_answer() {
    let dir = tempfile::tempdir().unwrap();
    let served = harness::build_file(dir.path(), "served.tb", &["2x3"]);
    let other = dir.path().join("other.tb");
    std::fs::copy(&served, &other).unwrap();
    let hostile = dir.path().join("hostile.tb");
    std::fs::copy(&served, &hostile).unwrap();
    rusqlite::Connection::open(&hostile)
        .unwrap()
        .execute_batch(
            "ALTER TABLE chunks RENAME TO chunks_old;
             CREATE VIEW chunks AS
                 WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)
                 SELECT -x AS n, '' || x AS counts, x AS chunk, 0 AS raw_len,
                        0 AS checksum, x'' AS data FROM r;",
        )
        .unwrap();
    let positions = positions_2x3(40);
    let expected = probe_json(&other, &positions);
    let server = Server::start(&[
        "--db",
        served.to_str().unwrap(),
        "--db",
        other.to_str().unwrap(),
    ]);
    let probe = |table: &str, position: &str| {
        let target = format!("/api/probe?table={table}&position={}", encode(position));
        let (status, body, _) = server
            .get_within(&target, HANG)
            .unwrap_or_else(|e| panic!("{table} {position}: no answer: {e}"));
        (status, body)
    };
    // Answered (and cached) before the change.
    let (status, before) = probe("served", &positions[0]);
    assert_eq!((status, &before), (200, &expected[0]));

    overwrite_in_place(&served, &std::fs::read(&hostile).unwrap());
    // Every position, cold or answered before: refused, never answered from
    // what the file was, never a hang.
    for position in positions.iter().rev() {
        let (status, body) = probe("served", position);
        assert_eq!(status, 500, "{position}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (&v["kind"], &v["table_error"]),
            (&"table".into(), &"schema".into()),
            "{body}"
        );
    }
    let batch = format!(
        "[{}]",
        positions
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let (status, body) = http::exchange(
        &server.address,
        "POST",
        "/api/probe?table=served",
        batch.as_bytes(),
        Some(HANG),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let answers: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(answers.len(), positions.len());
    assert!(
        answers.iter().all(|a| a["table_error"] == "schema"),
        "{body}"
    );
    // The other table, a copy of what the file was, answers right.
    for (position, want) in positions.iter().zip(&expected) {
        assert_eq!(probe("other", position), (200, want.clone()), "{position}");
    }
    assert_healthy(&server, "file changed");
    assert_memory_bounded(&server, "file changed");
    assert_terminates(server, "file changed");
}

/// Sends a whole POST of `body` to `table` and never reads the answer.
fn post_and_stall(address: &str, table: &str, body: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_write_timeout(Some(HANG)).unwrap();
    let head = format!(
        "POST /api/probe?table={table} HTTP/1.1\r\nHost: {address}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    // A batch refused at once (503) is not read: its write fails; no matter.
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body));
    stream
}

/// Waits until the server's resident memory stops growing (it has taken what
/// the stalled clients gave it), at most [`HANG`].
fn settle(server: &Server) {
    let rss = || http::memory(server.child.id(), "VmRSS:");
    let start = Instant::now();
    let mut last = rss();
    while start.elapsed() < HANG {
        std::thread::sleep(Duration::from_millis(500));
        let now = rss();
        if now <= last + last / 100 && start.elapsed() > Duration::from_secs(2) {
            return;
        }
        last = now;
    }
}

/// 24 clients post the largest batch (100,000 positions) and never read: the
/// server's memory stays bounded (each answer streams, a piece at a time), the
/// connections are dropped after the idle time and what they held is given
/// back: a batch is then answered whole and right.
#[test]
fn clients_that_do_not_read_cannot_grow_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let distinct = positions_2x3(64);
    let expected = probe_json(&db, &distinct);
    let batch: Vec<&String> = distinct.iter().cycle().take(100_000).collect();
    let body = serde_json::to_string(&batch).unwrap();
    let server = Server::start(&["--db", db.to_str().unwrap(), "--idle-time", "3s"]);

    let stalled: Vec<TcpStream> = (0..24)
        .map(|_| post_and_stall(&server.address, "2x3", body.as_bytes()))
        .collect();
    settle(&server);
    assert_healthy(&server, "24 clients not reading");
    let (status, answer, _) = server
        .get_within(&format!("/api/probe?position={}", distinct[1]), HANG)
        .unwrap();
    assert_eq!((status, &answer), (200, &expected[1]));
    assert_memory_bounded(&server, "24 clients not reading");

    // Once the idle time has dropped them, a batch gets its permits and is
    // answered whole.
    let want = format!(
        "[{}]",
        (0..100_000)
            .map(|k| expected[k % expected.len()].as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
    let start = Instant::now();
    let answered = loop {
        let (status, text) = http::exchange(
            &server.address,
            "POST",
            "/api/probe?table=2x3",
            body.as_bytes(),
            Some(HANG),
        )
        .unwrap();
        if status == 200 {
            break text;
        }
        assert_eq!(status, 503, "{text}");
        assert!(
            start.elapsed() < HANG,
            "the stalled batches were never dropped"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    println!(
        "a batch was answered {:?} after the stalled ones",
        start.elapsed()
    );
    assert!(
        answered == want,
        "the batch's answer differs from tb probe's"
    );
    drop(stalled);

    // And SIGTERM ends it while clients stall.
    let _stalled: Vec<TcpStream> = (0..24)
        .map(|_| post_and_stall(&server.address, "2x3", body.as_bytes()))
        .collect();
    settle(&server);
    assert_memory_bounded(&server, "24 more clients not reading");
    assert_terminates(server, "clients not reading");
}

/// The server's limit on open descriptors: (soft, hard), from /proc.
fn descriptor_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_string(), fields[4].to_string())
}

/// Raises this process's soft limit of descriptors to its hard limit; the soft
/// limit now.
fn raise_own_descriptor_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: get/setrlimit read and write the struct they are given.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max.min(1 << 16);
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}

/// 1,030 connections that send nothing, against a server started with the
/// usual soft limit of 1,024 descriptors: it raises the limit, keeps at most
/// `--max-connections` open by closing the idle ones, and answers `/health`
/// and probes throughout.
#[test]
fn idle_connections_past_the_descriptor_limit_lock_no_one_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let position = &positions_2x3(1)[0];
    let expected = probe_json(&db, std::slice::from_ref(position));
    let ours = raise_own_descriptor_limit();
    let server = Server::start_with(&["--db", db.to_str().unwrap()], |command| {
        use std::os::unix::process::CommandExt;
        // SAFETY: only setrlimit between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let mut limit = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
                limit.rlim_cur = limit.rlim_max.min(1024);
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
                Ok(())
            });
        }
    });
    let (soft, hard) = descriptor_limits(server.child.id());
    assert_eq!(soft, hard, "the server keeps the soft limit {soft}");

    let count = 1030.min(ours.saturating_sub(64) as usize);
    let idle: Vec<TcpStream> = (0..count)
        .map(|_| TcpStream::connect(&server.address).unwrap())
        .collect();
    println!("{} idle connections open", idle.len());
    assert_healthy(&server, "1,030 idle connections");
    let (status, body, _) = server
        .get_within(&format!("/api/probe?position={position}"), HANG)
        .unwrap();
    assert_eq!((status, &body), (200, &expected[0]));
    assert_memory_bounded(&server, "1,030 idle connections");
    assert_terminates(server, "1,030 idle connections");
}

/// Reads until the server closes the connection (end of file or reset); how
/// long it took, or `None` if it stayed open for [`HANG`].
fn closed_by_server(stream: &mut TcpStream) -> Option<Duration> {
    let start = Instant::now();
    stream.set_read_timeout(Some(HANG)).unwrap();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None;
            }
            Err(_) => return Some(start.elapsed()),
        }
    }
}

/// A head that never ends, a keep-alive connection left idle, a body that
/// stops arriving and one sent a byte at a time are each ended after
/// `--idle-time`; past `--max-connections` the idle ones make room for the one
/// that asks.
#[test]
fn slow_and_idle_connections_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let server = Server::start(&[
        "--db",
        db.to_str().unwrap(),
        "--idle-time",
        "1s",
        "--max-connections",
        "8",
    ]);
    let address = server.address.clone();

    let mut slow_head = TcpStream::connect(&address).unwrap();
    write!(slow_head, "GET /health HTTP/1.1\r\nHost: {address}\r\n").unwrap();
    let took = closed_by_server(&mut slow_head).expect("a head that never ends is not dropped");
    println!("a head that never ends: closed after {took:?}");

    let mut kept = TcpStream::connect(&address).unwrap();
    write!(kept, "GET /health HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let (status, _) = read_response(&mut BufReader::new(kept.try_clone().unwrap())).unwrap();
    assert_eq!(status, 200);
    let took = closed_by_server(&mut kept).expect("an idle keep-alive connection stays open");
    println!("an idle keep-alive connection: closed after {took:?}");

    let mut slow_body = TcpStream::connect(&address).unwrap();
    write!(
        slow_body,
        "POST /api/probe HTTP/1.1\r\nHost: {address}\r\nContent-Length: 100\r\n\r\n[\"0"
    )
    .unwrap();
    slow_body.set_read_timeout(Some(HANG)).unwrap();
    let (status, body) = read_response(&mut BufReader::new(slow_body)).unwrap();
    assert_eq!(status, 408, "{body}");

    // A body sent a byte every 100 ms: never idle for the idle time, but not
    // all sent within it.
    let mut dribble = TcpStream::connect(&address).unwrap();
    write!(
        dribble,
        "POST /api/probe HTTP/1.1\r\nHost: {address}\r\nContent-Length: 100\r\n\r\n"
    )
    .unwrap();
    let mut writer = dribble.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(100));
            if writer.write_all(b" ").is_err() {
                return;
            }
        }
    });
    dribble.set_read_timeout(Some(HANG)).unwrap();
    let (status, body) = read_response(&mut BufReader::new(dribble)).unwrap();
    assert_eq!(status, 408, "{body}");
    sender.join().unwrap();

    // More idle connections than the cap: the one that asks is answered.
    let _idle: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    assert_healthy(&server, "20 idle connections, at most 8");
    assert_terminates(server, "slow connections");
}

/// A body declared over `--max-body` is refused at once: a client that waits
/// for `100 Continue` gets 413 instead, and sends nothing; a chunked body over
/// the limit gets 413 too.
#[test]
fn bodies_over_the_limit_are_refused_before_they_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    let address = server.address.clone();

    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    write!(
        stream,
        "POST /api/probe HTTP/1.1\r\nHost: {address}\r\nContent-Length: 1073741824\r\n\
         Expect: 100-continue\r\n\r\n"
    )
    .unwrap();
    let (status, body) = read_response(&mut BufReader::new(stream)).unwrap();
    assert_eq!(status, 413, "{body}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["error"].is_string());

    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    stream.set_write_timeout(Some(HANG)).unwrap();
    write!(
        stream,
        "POST /api/probe HTTP/1.1\r\nHost: {address}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..5 {
        if write!(stream, "{:x}\r\n", chunk.len())
            .and_then(|()| stream.write_all(&chunk))
            .and_then(|()| stream.write_all(b"\r\n"))
            .is_err()
        {
            break; // refused before the end: the answer is waiting
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let (status, body) = read_response(&mut BufReader::new(stream)).unwrap();
    assert_eq!(status, 413, "{body}");
    assert_healthy(&server, "bodies over the limit");
    assert_terminates(server, "bodies over the limit");
}

/// SIGTERM while clients probe and post batches as fast as they can and
/// others never read their batches' answers: the server ends with exit 0
/// (after its grace for the stalled ones, not their idle time), and every
/// answer a client got whole is right (one cut by the end is an error on the
/// client's side, never a wrong answer).
#[test]
fn sigterm_under_load_ends_the_server_and_no_answer_is_wrong() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "2x3.tb", &["2x3"]);
    let distinct = positions_2x3(64);
    let expected = Arc::new(probe_json(&db, &distinct));
    let batch: Vec<&String> = distinct.iter().cycle().take(5_000).collect();
    let body = Arc::new(serde_json::to_string(&batch).unwrap());
    let want = Arc::new(format!(
        "[{}]",
        (0..5_000)
            .map(|k| expected[k % expected.len()].as_str())
            .collect::<Vec<_>>()
            .join(",")
    ));
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    let answered = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..6)
        .map(|client| {
            let (address, distinct) = (server.address.clone(), distinct.clone());
            let (expected, body, want) = (expected.clone(), body.clone(), want.clone());
            let answered = Arc::clone(&answered);
            std::thread::spawn(move || {
                // Until the server is gone: (position or batch, status, body).
                for k in (client * 7).. {
                    let (what, got) = if k % 4 == 0 {
                        let got = http::exchange(
                            &address,
                            "POST",
                            "/api/probe",
                            body.as_bytes(),
                            Some(HANG),
                        );
                        ("a batch".to_string(), got.map(|(s, b)| (s, b == *want, b)))
                    } else {
                        let position = &distinct[k % distinct.len()];
                        let target = format!("/api/probe?position={position}");
                        let got = http::exchange(&address, "GET", &target, b"", Some(HANG));
                        let right = &expected[k % distinct.len()];
                        (position.clone(), got.map(|(s, b)| (s, b == *right, b)))
                    };
                    match got {
                        Err(_) => return,
                        Ok((200, true, _)) => answered.fetch_add(1, Ordering::Relaxed),
                        Ok((503, _, _)) => 0,
                        Ok((status, _, text)) => panic!("{what}: {status} {text:.300}"),
                    };
                }
            })
        })
        .collect();
    // And clients whose batches never finish sending (they read nothing, and
    // the idle time is far off): the server waits for them only so long.
    let stalled_body =
        serde_json::to_string(&distinct.iter().cycle().take(25_600).collect::<Vec<_>>()).unwrap();
    let _stalled: Vec<TcpStream> = (0..4)
        .map(|_| post_and_stall(&server.address, "2x3", stalled_body.as_bytes()))
        .collect();
    let start = Instant::now();
    while answered.load(Ordering::Relaxed) < 200 {
        assert!(start.elapsed() < HANG, "the clients got no answers");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_terminates(server, "6 clients probing, 4 stalled");
    for client in clients {
        client.join().expect("a client got a wrong answer");
    }
    println!(
        "{} right answers before the end",
        answered.load(Ordering::Relaxed)
    );
}
