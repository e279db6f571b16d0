//! The web board in a real browser: Debian's chromium, driven over the WebDriver
//! protocol by chromedriver (both real processes), against a real `tb serve`.
//! The tests load the page, click lines, points and cells, read the DOM, and
//! compare what the board shows with `tb probe --json`; they save screenshots
//! under `target/web/`.
//!
//! Needs `/usr/bin/chromedriver` and chromium (Debian packages `chromium-driver`
//! and `chromium`; `tools/test-setup` installs them): without them the tests fail
//! and say so.

use crate::harness;
use crate::http;

use harness::{probe_all, tb};
use http::{Server, encode, request};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver on a free port, once it answers `GET /status` with ready; `None`
/// when it exits first (its port was taken).
fn start_driver() -> Option<(Child, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut driver = Command::new(DRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let address = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !driver_ready(&address) {
        if driver.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((driver, address))
}

/// Whether the WebDriver server at `address` says it is ready (any error: not yet).
fn driver_ready(address: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(address) else {
        return false;
    };
    let asked = write!(
        stream,
        "GET /status HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    );
    // chromedriver may keep the connection open: read what comes within a second.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while asked.is_ok() && !String::from_utf8_lossy(&answer).contains("\"ready\"") {
        match stream.read(&mut buffer) {
            Ok(n) if n > 0 => answer.extend_from_slice(&buffer[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&answer)
        .replace(' ', "")
        .contains("\"ready\":true")
}

/// A chromium session under chromedriver; both end when dropped.
struct Browser {
    driver: Child,
    address: String,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless chromium.
    fn start() -> Browser {
        assert!(
            Path::new(DRIVER).exists(),
            "{DRIVER} is missing: install the Debian packages chromium and chromium-driver (tools/test-setup)"
        );
        // A free port can be taken by another test between our look and
        // chromedriver's bind: then chromedriver exits and we try another port.
        let (driver, address) = (0..5)
            .find_map(|_| start_driver())
            .expect("chromedriver did not start (5 ports tried)");
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,820",
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
        }}});
        let mut browser = Browser {
            driver,
            address,
            session: String::new(),
            _profile: profile,
        };
        let session = browser.command("POST", "/session", &capabilities);
        browser.session = session["sessionId"].as_str().unwrap().to_string();
        browser
    }

    /// One WebDriver command; its `value`.
    fn command(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = if method == "GET" || method == "DELETE" {
            String::new()
        } else {
            body.to_string()
        };
        let (status, text) = request(&self.address, method, path, body.as_bytes());
        let answer: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("chromedriver said {text:?}: {e}"));
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }

    fn session_command(&self, method: &str, path: &str, body: Value) -> Value {
        self.command(method, &format!("/session/{}{path}", self.session), &body)
    }

    fn goto(&self, url: &str) {
        self.session_command("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page; its return value.
    fn script(&self, script: &str) -> Value {
        self.session_command(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
    }

    fn find(&self, css: &str) -> String {
        let found = self.session_command(
            "POST",
            "/element",
            json!({"using": "css selector", "value": css}),
        );
        found[ELEMENT].as_str().unwrap().to_string()
    }

    /// A real click (the browser's own input events) on the element `css` finds.
    fn click(&self, css: &str) {
        let id = self.find(css);
        self.session_command("POST", &format!("/element/{id}/click"), json!({}));
    }

    /// Clears a text field and types `text` into it.
    fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.session_command("POST", &format!("/element/{id}/clear"), json!({}));
        self.session_command(
            "POST",
            &format!("/element/{id}/value"),
            json!({ "text": text }),
        );
    }

    /// Waits until the page has drawn the answer for `moves` (played so far,
    /// comma separated) and is not waiting for the server or the computer.
    fn wait_for(&self, moves: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let page = self.page();
            if page["state"] == "ready" && page["moves"] == moves {
                return page;
            }
            assert!(
                Instant::now() < deadline,
                "the page did not reach moves {moves:?}: {page}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Waits until the page is not waiting for the server or the computer and
    /// `done` holds for what it shows; that.
    fn wait_until(&self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let page = self.page();
            if page["state"] == "ready" && done(&page) {
                return page;
            }
            assert!(Instant::now() < deadline, "{what}: {page}");
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// What the page shows, read from the DOM.
    fn page(&self) -> Value {
        self.script(
            "const b = document.body.dataset;
             const texts = (css) => [...document.querySelectorAll(css)].map((e) => e.textContent);
             return {
               state: b.state || '', moves: b.moves || '', position: b.position || '',
               status: document.getElementById('status').textContent,
               score: document.getElementById('score').textContent,
               error: document.getElementById('error').textContent,
               field: document.getElementById('position').value,
               url: location.search,
               list: texts('#moves li'),
               best: [...document.querySelectorAll('#moves li.best')].map((e) => e.dataset.move),
               lines: [...document.querySelectorAll('g[data-line]')].map((g) => ({
                 name: g.dataset.line, label: g.querySelector('text')?.textContent ?? null,
                 best: g.classList.contains('best') })),
               drawn: [...document.querySelectorAll('[data-drawn]')].map((e) => e.dataset.drawn),
               boxes: [...document.querySelectorAll('rect[data-box]')].map((e) => e.dataset.box + ':' + e.getAttribute('class')),
               stones: [...document.querySelectorAll('[data-stone]')].length,
               cells: [...document.querySelectorAll('g[data-cell]')].map((g) => ({
                 cell: Number(g.dataset.cell), stone: g.dataset.stone ?? '.',
                 label: g.querySelector('text.value')?.textContent ?? null,
                 classes: g.getAttribute('class').split(' ') })),
             };",
        )
    }

    /// Saves a screenshot as a PNG under target/web/; its size in pixels.
    fn screenshot(&self, name: &str) -> (u32, u32) {
        let encoded = self.session_command("GET", "/screenshot", json!({}));
        let png = base64_decode(encoded.as_str().unwrap());
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../web");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), &png).unwrap();
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        (width, height)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = request(&self.address, "DELETE", &path, b"");
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    } as u32;
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for group in bytes.chunks(4) {
        let mut word = 0;
        for (k, &c) in group.iter().enumerate() {
            word |= digit(c) << (18 - 6 * k);
        }
        let word = word.to_be_bytes();
        out.extend_from_slice(&word[1..group.len()]);
    }
    out
}

fn probe(db: &Path, position: &str) -> Value {
    let out = harness::run_ok(
        tb().args(["probe", "--json", "--db"]).arg(db).arg(position),
        "probe",
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The label the board writes for a Dots-and-Boxes value.
fn signed(value: i64) -> String {
    if value > 0 {
        format!("+{value}")
    } else {
        value.to_string()
    }
}

/// Checks that every open line of the board is labelled with the value `tb probe`
/// gives its move, that exactly the best moves are marked, and that the drawn
/// lines are the position's.
fn check_dots_board(page: &Value, answer: &Value) {
    assert_eq!(page["position"], answer["position"], "{page}");
    let moves = answer["moves"].as_array().unwrap();
    let best = moves[0]["value"].as_i64().unwrap();
    let lines = page["lines"].as_array().unwrap();
    assert_eq!(lines.len(), moves.len(), "one open line per move: {page}");
    for m in moves {
        let name = m["name"].as_str().unwrap();
        let line = lines
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no open line {name} on the board"));
        let value = m["value"].as_i64().unwrap();
        assert_eq!(line["label"], signed(value), "label of {name}");
        assert_eq!(line["best"], value == best, "best mark of {name}");
    }
    let drawn = answer["position"].as_str().unwrap().matches('1').count();
    assert_eq!(page["drawn"].as_array().unwrap().len(), drawn);
    assert!(
        page["status"].as_str().unwrap().contains(&format!(
            "value {} ",
            signed(answer["value"].as_i64().unwrap())
        )),
        "{page}"
    );
    assert_eq!(page["list"].as_array().unwrap().len(), moves.len());
    assert_eq!(page["error"], "", "{page}");
}

/// Checks that the board draws its open lines unlike its drawn ones (from the
/// browser's computed style): every open line dashed, best moves included, every
/// drawn line solid and thicker than any open one.
fn check_line_strokes(browser: &Browser) {
    let strokes = browser.script(
        "const stroke = (e) => {
           const s = getComputedStyle(e);
           return { dash: s.strokeDasharray, width: parseFloat(s.strokeWidth) };
         };
         return {
           open: [...document.querySelectorAll('g[data-line] line')].map(stroke),
           drawn: [...document.querySelectorAll('line[data-drawn]')].map(stroke),
         };",
    );
    let open = strokes["open"].as_array().unwrap();
    let drawn = strokes["drawn"].as_array().unwrap();
    assert!(!open.is_empty(), "{strokes}");
    for line in open {
        assert!(
            !matches!(line["dash"].as_str(), Some("none" | "") | None),
            "an open line drawn solid: {strokes}"
        );
    }
    for line in drawn {
        assert_eq!(line["dash"], "none", "a drawn line dashed: {strokes}");
    }
    let widest_open = open
        .iter()
        .map(|l| l["width"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for line in drawn {
        assert!(
            line["width"].as_f64().unwrap() > widest_open,
            "a drawn line as thin as an open one: {strokes}"
        );
    }
}

#[test]
fn the_web_board_plays_dots_and_boxes_in_a_browser() {
    let browser = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "3x3.tb", &["3x3"]);
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    let base = format!("http://{}/", server.address);

    // The start: every line labelled with its value.
    browser.goto(&base);
    let page = browser.wait_for("");
    check_dots_board(&page, &probe(&db, &"0".repeat(24)));
    assert!(page["status"].as_str().unwrap().starts_with("A to move"));
    // The empty board does not look finished: every line is drawn as open.
    check_line_strokes(&browser);
    browser.screenshot("dots-start.png");

    // Clicks on lines play them; the URL follows.
    let mut played: Vec<&str> = Vec::new();
    for line in ["h0.0", "v0.0", "h1.0"] {
        browser.click(&format!("g[data-line=\"{line}\"] rect.hit"));
        played.push(line);
        let page = browser.wait_for(&played.join(","));
        check_dots_board(&page, &probe(&db, &played.join(",")));
        assert_eq!(
            page["url"],
            format!("?table=3x3&moves={}", played.join(","))
        );
    }
    // B completes box (0, 0), owns it and moves again.
    browser.click("g[data-line=\"v0.1\"] rect.hit");
    played.push("v0.1");
    let page = browser.wait_for(&played.join(","));
    check_dots_board(&page, &probe(&db, &played.join(",")));
    assert_eq!(page["boxes"], json!(["0,0:box box-1"]));
    assert!(page["score"].as_str().unwrap().contains("A 0, B 1"));
    assert!(page["status"].as_str().unwrap().starts_with("B to move"));
    check_line_strokes(&browser);
    browser.screenshot("dots.png");

    // Undo and redo.
    browser.click("#undo");
    let page = browser.wait_for("h0.0,v0.0,h1.0");
    check_dots_board(&page, &probe(&db, "h0.0,v0.0,h1.0"));
    assert_eq!(page["boxes"], json!([]));
    browser.click("#redo");
    browser.wait_for("h0.0,v0.0,h1.0,v0.1");

    // The shared URL gives the same board.
    let shared = browser.page()["url"].as_str().unwrap().to_string();
    browser.goto(&format!("{base}{shared}"));
    let page = browser.wait_for("h0.0,v0.0,h1.0,v0.1");
    check_dots_board(&page, &probe(&db, "h0.0,v0.0,h1.0,v0.1"));
    assert_eq!(page["boxes"], json!(["0,0:box box-1"]));

    // The computer answers with a best move.
    browser.goto(&base);
    browser.wait_for("");
    browser.click("#computer option[value=\"1\"]");
    // Choosing redraws the board: wait, or the click below may hit a replaced line.
    browser.wait_for("");
    browser.click("g[data-line=\"h2.1\"] rect.hit");
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = browser.page();
        if page["state"] == "ready" && page["moves"].as_str().unwrap().contains(',') {
            break page;
        }
        assert!(Instant::now() < deadline, "no reply: {page}");
        std::thread::sleep(Duration::from_millis(30));
    };
    let moves: Vec<&str> = page["moves"].as_str().unwrap().split(',').collect();
    assert_eq!(moves[0], "h2.1");
    let before_reply = probe(&db, "h2.1");
    let reply = before_reply["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == moves[1])
        .unwrap();
    assert_eq!(
        reply["value"], before_reply["value"],
        "the reply is a best move"
    );
    check_dots_board(&page, &probe(&db, &moves.join(",")));

    // A position typed into the field (any position form) starts a new game.
    browser.click("#computer option[value=\"\"]");
    browser.wait_for(&moves.join(","));
    browser.type_into("#position", "h0.0,h0.1,v2.3\u{E007}");
    let typed = probe(&db, "h0.0,h0.1,v2.3");
    let deadline = Instant::now() + Duration::from_secs(30);
    while browser.page()["position"] != typed["position"] {
        assert!(Instant::now() < deadline, "{}", browser.page());
        std::thread::sleep(Duration::from_millis(30));
    }
    let page = browser.wait_for("");
    check_dots_board(&page, &typed);
    assert_eq!(
        page["field"], typed["position"],
        "the field shows the position"
    );
    assert_eq!(
        page["url"],
        format!(
            "?table=3x3&position={}",
            typed["position"].as_str().unwrap()
        )
    );

    // A bad position is refused with the server's message; the board stays.
    browser.type_into("#position", "h9.9\u{E007}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = browser.page();
        if page["error"] != "" && page["state"] == "ready" {
            break page;
        }
        assert!(Instant::now() < deadline, "no error shown: {page}");
        std::thread::sleep(Duration::from_millis(30));
    };
    assert!(page["error"].as_str().unwrap().contains("h9.9"), "{page}");
    let mut board = page.clone();
    board["error"] = json!("");
    check_dots_board(&board, &typed);
    assert_eq!(
        page["field"], "h9.9",
        "the typed text stays to be corrected"
    );

    let (width, height) = browser.screenshot("dots-typed.png");
    assert_eq!(width, 1200, "the window's width");
    assert!(height >= 600, "the window's height: {height}");
}

/// The nine board's points (docs/FORMAT.md §4.1).
const NINE_POINTS: [&str; 24] = [
    "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4", "e4", "f4", "g4", "c5",
    "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
];

/// The six board's points (docs/FORMAT.md §4.5).
const SIX_POINTS: [&str; 16] = [
    "a1", "c1", "e1", "b2", "c2", "d2", "a3", "b3", "d3", "e3", "b4", "c4", "d4", "a5", "c5", "e5",
];

/// The position after a Morris move in the notation of docs/FORMAT.md §4.2 (`a1-a4xd7`, `d6`),
/// worked out here independently of the page and the tb library.
fn morris_after(position: &str, mv: &str) -> String {
    morris_after_on(&NINE_POINTS, position, mv)
}

/// [`morris_after`] on the board of `points`.
fn morris_after_on(points: &[&str], position: &str, mv: &str) -> String {
    let at = |p: &str| points.iter().position(|q| *q == p).unwrap();
    let (cells, side) = position.split_once(' ').unwrap();
    let mut cells: Vec<char> = cells.chars().collect();
    let (main, capture) = match mv.split_once('x') {
        Some((m, c)) => (m, Some(c)),
        None => (mv, None),
    };
    let (from, to) = main.split_once('-').unwrap();
    cells[at(to)] = cells[at(from)];
    cells[at(from)] = '.';
    if let Some(c) = capture {
        cells[at(c)] = '.';
    }
    let side = if side.starts_with('w') { 'b' } else { 'w' };
    format!("{} {side}", cells.into_iter().collect::<String>())
}

/// The move list the page shows for a Morris probe answer: `move value`, best first,
/// with the tie-break counts where the answer has them (`d2 D (3/12 replies err)`).
fn morris_list(answer: &Value) -> Vec<String> {
    answer["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let counts = match (
                m["opponent_errors"].as_u64(),
                m["opponent_replies"].as_u64(),
            ) {
                (Some(e), Some(r)) => format!(" ({e}/{r} replies err)"),
                _ => String::new(),
            };
            format!(
                "{} {}{counts}",
                m["move"].as_str().unwrap(),
                m["value"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_web_board_plays_morris_in_a_browser() {
    let browser = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "mill.tb", &["morris", "--stones", "4"]);
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    // Black can close the mill c3-d3-e3 with d2-d3 and then takes g4 (the other
    // White stones stand in a mill).
    let start = "WWW.B.B.B.B...W......... b";
    browser.goto(&format!(
        "http://{}/?table=mill&position={}",
        server.address,
        encode(start)
    ));
    let page = browser.wait_for("");
    let answer = probe(&db, start);
    let listed = morris_list(&answer);
    assert_eq!(page["list"], json!(listed), "{page}");
    assert_eq!(page["position"], answer["position"]);
    assert_eq!(page["stones"], 8);
    assert!(
        page["status"]
            .as_str()
            .unwrap()
            .starts_with("Black to move")
    );
    let best_value = &answer["moves"][0]["value"];
    let best: Vec<&str> = answer["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| &m["value"] == best_value)
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert_eq!(page["best"], json!(best));

    // Three clicks: the stone, where it goes, the stone it takes.
    let mv = "d2-d3xg4";
    for point in ["d2", "d3", "g4"] {
        assert_eq!(
            browser.page()["moves"],
            "",
            "played before the move was complete"
        );
        browser.click(&format!("circle[data-point=\"{point}\"]"));
    }
    let page = browser.wait_for(mv);
    let after = morris_after(start, mv);
    let answer = probe(&db, &after);
    assert_eq!(page["position"], after);
    assert_eq!(answer["position"], after);
    assert_eq!(page["stones"], 7);
    let listed = morris_list(&answer);
    assert_eq!(page["list"], json!(listed));
    browser.screenshot("morris.png");

    // A click on a point no move starts from selects nothing and plays nothing.
    browser.click("circle[data-point=\"d7\"]");
    browser.click("#best");
    let best_reply = answer["moves"][0]["move"].as_str().unwrap();
    let page = browser.wait_for(&format!("{mv},{best_reply}"));
    assert_eq!(page["position"], morris_after(&after, best_reply));
}

/// The board of a Six Men's Morris file: its 16 points, and moves played by clicks.
#[test]
fn the_web_board_plays_six_mens_morris_in_a_browser() {
    let browser = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(
        dir.path(),
        "six.tb",
        &["morris", "--rules", "six", "--stones", "4"],
    );
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    // White (a1 b3 a5) can close a1-a3-a5 with b3-a3 and take one of Black's four
    // stones (e1 b2 c4 e5).
    let start = "W.BB...W...B.W.B w";
    browser.goto(&format!(
        "http://{}/?table=six&position={}",
        server.address,
        encode(start)
    ));
    let page = browser.wait_for("");
    let answer = probe(&db, start);
    assert_eq!(page["list"], json!(morris_list(&answer)), "{page}");
    assert_eq!(page["position"], answer["position"]);
    assert_eq!(page["stones"], 7);
    let mv = answer["moves"][0]["move"].as_str().unwrap().to_string();
    let points: Vec<&str> = mv.split(['-', 'x']).collect();
    assert!(points.iter().all(|p| SIX_POINTS.contains(p)), "{mv}");
    for point in &points {
        browser.click(&format!("circle[data-point=\"{point}\"]"));
    }
    let page = browser.wait_for(&mv);
    let after = morris_after_on(&SIX_POINTS, start, &mv);
    assert_eq!(page["position"], after);
    assert_eq!(probe(&db, &after)["position"], after);
    browser.screenshot("morris-six.png");
}

/// The start of the Qubic strategy the browser test builds (SMALL in
/// tests/qubic_strategy.rs: X wins against each of the 57 O replies, proven in
/// seconds; after the reply 4 X's move comes from the stored strategy, after most
/// others from the forced-win search).
const QUBIC_START: &str = "0-3-60-21-15-63-12";

/// The cells of a Qubic page that carry `class`, in cell order.
fn cells_with(page: &Value, class: &str) -> Vec<u64> {
    page["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["classes"].as_array().unwrap().iter().any(|k| k == class))
        .map(|c| c["cell"].as_u64().unwrap())
        .collect()
}

/// Checks a Qubic board against `tb probe --json` of the game `moves` (a move list
/// from the empty board, the oracle's own notation, not the page's): the stones,
/// the status, X's winning move marked alone (X to move), every O reply labelled
/// with the plies to X's four after it, counted from here, and the slowest marked
/// (O to move); every empty cell playable. The oracle's answer.
fn check_qubic_board(db: &Path, page: &Value, moves: &str) -> Value {
    let answer = probe(db, moves);
    let position = answer["position"].as_str().unwrap();
    assert_eq!(page["position"], position, "{page}");
    assert_eq!(page["error"], "", "{page}");
    let cells = page["cells"].as_array().unwrap();
    let shown: Vec<(u64, String)> = cells
        .iter()
        .map(|c| {
            (
                c["cell"].as_u64().unwrap(),
                c["stone"].as_str().unwrap().into(),
            )
        })
        .collect();
    let stones: Vec<(u64, String)> = position
        .chars()
        .enumerate()
        .map(|(c, s)| (c as u64, s.to_string()))
        .collect();
    assert_eq!(shown, stones, "every cell shows its stone: {page}");
    let empty: Vec<u64> = stones
        .iter()
        .filter(|(_, s)| s == ".")
        .map(|(c, _)| *c)
        .collect();
    let status = page["status"].as_str().unwrap();
    let list = page["list"].as_array().unwrap();
    assert_eq!(cells_with(page, "playable"), empty, "{page}");
    if answer["to_move"] == "X" {
        if answer["result"] == "win" {
            let (cell, plies) = (&answer["move"], &answer["plies"]);
            assert_eq!(cells_with(page, "best"), vec![cell.as_u64().unwrap()]);
            let says = format!("X to move wins in {plies} plies: play {cell}");
            assert!(status.contains(&says), "{status:?} does not say {says:?}");
            let source = answer["source"].as_str().unwrap();
            assert_eq!(
                page["list"],
                json!([format!("{cell} wins in {plies} plies ({source})")])
            );
        } else {
            assert_eq!(answer["result"], "unknown");
            assert!(status.contains("outside the strategy"), "{status}");
            assert_eq!(cells_with(page, "best"), Vec::<u64>::new());
            assert!(list.is_empty(), "{page}");
        }
        return answer;
    }
    // O to move: each reply as the oracle answers the game one move longer.
    let children: Vec<String> = empty.iter().map(|c| format!("{moves}-{c}")).collect();
    let after = probe_all(db, &children);
    let mut longest = 0;
    for (c, child) in empty.iter().zip(&after) {
        let label = match child["result"].as_str().unwrap() {
            "win" => {
                let plies = child["plies"].as_u64().unwrap() + 1;
                longest = longest.max(plies);
                plies.to_string()
            }
            "unknown" => "?".to_string(),
            other => panic!("reply {c}: X to move with {other}"),
        };
        let cell = cells.iter().find(|x| x["cell"] == *c).unwrap();
        assert_eq!(cell["label"], label, "reply {c}: {page}");
    }
    assert_eq!(list.len(), empty.len(), "every reply listed: {page}");
    if answer["result"] == "loss" {
        assert_eq!(
            answer["plies"], longest,
            "the answer is the slowest reply's"
        );
        let slowest: Vec<u64> = empty
            .iter()
            .zip(&after)
            .filter(|(_, a)| a["plies"].as_u64().unwrap() + 1 == longest)
            .map(|(c, _)| *c)
            .collect();
        assert_eq!(cells_with(page, "best"), slowest, "{page}");
        let says = format!("O to move: X wins in {longest} plies whatever O plays");
        assert!(status.contains(&says), "{status:?} does not say {says:?}");
    } else {
        assert_eq!(answer["result"], "unknown");
        assert!(status.contains("outside the strategy"), "{status}");
    }
    answer
}

#[test]
fn the_web_board_plays_a_qubic_strategy_in_a_browser() {
    let browser = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(dir.path(), "small.tb", &["qubic", "--start", QUBIC_START]);
    let server = Server::start(&["--db", db.to_str().unwrap()]);
    let base = format!("http://{}/", server.address);

    // One table: the page needs no ?table=. The start: O to move, every reply
    // labelled.
    browser.goto(&base);
    let page = browser.wait_for("");
    let start = check_qubic_board(&db, &page, QUBIC_START);
    assert_eq!(start["to_move"], "O");
    assert_eq!(page["url"], "?table=small");

    // An O reply: the board probes the new position and marks X's answer.
    let mut game = vec![QUBIC_START.to_string()];
    let mut played: Vec<String> = Vec::new();
    let mut play = |cell: &str, browser: &Browser| {
        browser.click(&format!("g[data-cell=\"{cell}\"]"));
        game.push(cell.to_string());
        played.push(cell.to_string());
        let page = browser.wait_for(&played.join(","));
        (page, game.join("-"), played.join(","))
    };
    let (page, moves, _) = play("4", &browser);
    let answer = check_qubic_board(&db, &page, &moves);
    assert_eq!(answer["source"], "strategy", "the stored strategy's move");
    assert!(
        page["status"]
            .as_str()
            .unwrap()
            .contains("the strategy's move")
    );
    assert_eq!(page["url"], "?table=small&moves=4");

    // X's highlighted move, then the O reply that holds out longest and one
    // that does not.
    let x_move = cells_with(&page, "best")[0].to_string();
    let (page, moves, _) = play(&x_move, &browser);
    check_qubic_board(&db, &page, &moves);
    browser.screenshot("qubic.png");
    let slowest = cells_with(&page, "best")[0].to_string();
    let quick = cells_with(&page, "even")[0].to_string();
    let (page, moves, _) = play(&quick, &browser);
    let answer = check_qubic_board(&db, &page, &moves);
    assert_eq!(answer["result"], "win");

    // Undo, redo, and the shared URL.
    browser.click("#undo");
    let page = browser.wait_for(&format!("4,{x_move}"));
    check_qubic_board(&db, &page, &format!("{QUBIC_START}-4-{x_move}"));
    browser.click("#redo");
    let page = browser.wait_for(&format!("4,{x_move},{quick}"));
    check_qubic_board(&db, &page, &moves);
    let shared = page["url"].as_str().unwrap().to_string();
    assert_eq!(shared, format!("?table=small&moves=4,{x_move},{quick}"));
    browser.goto(&format!("{base}{shared}"));
    let page = browser.wait_for(&format!("4,{x_move},{quick}"));
    check_qubic_board(&db, &page, &moves);

    // The computer as O answers X's move with a slowest reply.
    browser.click("#undo");
    browser.wait_for(&format!("4,{x_move}"));
    browser.click("#undo");
    browser.wait_for("4");
    browser.click("#computer option[value=\"O\"]");
    browser.wait_for("4");
    browser.click("#best");
    let page = browser.wait_until("the computer's reply", |p| {
        p["moves"].as_str().unwrap().split(',').count() == 3
    });
    let reply = page["moves"]
        .as_str()
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .to_string();
    assert_eq!(reply, slowest, "the first of the slowest replies");
    check_qubic_board(&db, &page, &format!("{QUBIC_START}-4-{x_move}-{reply}"));
    browser.click("#computer option[value=\"\"]");
    browser.wait_for(&format!("4,{x_move},{reply}"));

    // A position outside the strategy, typed as a move list.
    browser.type_into("#position", "0-1-2\u{E007}");
    let outside = probe(&db, "0-1-2");
    assert_eq!(outside["result"], "unknown");
    let page = browser.wait_until("the typed position", |p| {
        p["position"] == outside["position"] && p["moves"] == ""
    });
    check_qubic_board(&db, &page, "0-1-2");
    assert!(
        page["status"]
            .as_str()
            .unwrap()
            .starts_with("O to move: outside the strategy")
    );
    // X's move there is outside the strategy too.
    browser.click("g[data-cell=\"5\"]");
    let page = browser.wait_for("5");
    let answer = check_qubic_board(&db, &page, "0-1-2-5");
    assert_eq!(answer["result"], "unknown");

    // A game X has won: its four marked, nothing to play.
    let won = "0-4-1-5-2-6-3";
    browser.goto(&format!("{base}?position={won}"));
    let over = probe(&db, won);
    assert_eq!(
        (&over["result"], &over["plies"]),
        (&json!("loss"), &json!(0))
    );
    let page = browser.wait_until("the won game", |p| p["position"] == over["position"]);
    assert_eq!(cells_with(&page, "four"), vec![0, 1, 2, 3]);
    assert_eq!(cells_with(&page, "playable"), Vec::<u64>::new());
    assert_eq!(page["status"], "X has four in a line: X wins");
    assert_eq!(page["list"], json!([]));

    // Among other tables: a bad ?table= is said, the table menu switches games.
    let dots = harness::build_file(dir.path(), "3x3.tb", &["3x3"]);
    let both = Server::start(&["--db", dots.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    browser.goto(&format!("http://{}/?table=nope", both.address));
    let page = browser.wait_for("");
    assert_eq!(page["error"], "no table nope; showing 3x3", "{page}");
    assert_eq!(page["position"], "0".repeat(24));
    browser.click("#table option[value=\"small\"]");
    let page = browser.wait_until("the Qubic table", |p| p["position"] == start["position"]);
    check_qubic_board(&db, &page, QUBIC_START);
    assert_eq!(page["url"], "?table=small");
}
