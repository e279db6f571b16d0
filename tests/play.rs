//! `tb play`, the real binary: scripted games line by line (stdin a pipe) and in a
//! pseudo-terminal (`script` from util-linux), every board read back from the text
//! by its documented layout and compared with the independent brute force of
//! `tests/oracle`: each open line's value, the drawn lines, the score, whose turn,
//! the position's value and best moves, and that the program's own moves are best.

use crate::harness;
use crate::oracle;
use crate::screens;

use harness::{describe, tb};
use oracle::Oracle;
use screens::{Screen, screens};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use tempfile::TempDir;

fn value_text(v: i32) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// A board is right: every open line shows the oracle's value of drawing it, the
/// status gives the position's value and exactly the best lines, and the marked
/// boxes add up to the score.
fn check_screen(o: &mut Oracle, s: &Screen) {
    let moves = o.move_values(s.position);
    let shown: BTreeMap<usize, String> = moves
        .iter()
        .map(|&(line, v, _)| (line, value_text(v)))
        .collect();
    assert_eq!(s.values, shown, "values of {}", o.move_list(s.position));
    let score = |who: &str| -> u32 {
        let at = s.status.find(who).expect("a score");
        s.status[at + who.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!([score("A "), score("B ")], s.marked, "{}", s.status);
    if moves.is_empty() {
        assert!(s.status.contains("game over"), "{}", s.status);
        return;
    }
    let value = o.value(s.position);
    assert!(
        s.status.contains(&format!("value {} (", value_text(value))),
        "{} should give value {value}",
        s.status
    );
    let best: Vec<String> = moves
        .iter()
        .filter(|m| m.1 == value)
        .map(|m| o.line_name(m.0))
        .collect();
    let listed = s.status.split("best: ").nth(1).expect("best moves listed");
    assert_eq!(listed.split_whitespace().collect::<Vec<_>>(), best);
}

fn play(args: &[&str], input: &str) -> String {
    let output = tb()
        .arg("play")
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap()
}

fn build(dir: &TempDir, board: &str) -> String {
    let db = dir.path().join(format!("{board}.tb"));
    let out = tb()
        .args(["build", board, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    db.to_str().unwrap().to_string()
}

#[test]
fn a_game_on_a_table_shows_the_oracle_values_and_the_computer_plays_best() {
    let dir = TempDir::new().unwrap();
    let db = build(&dir, "2x3");
    let mut o = Oracle::new(2, 3, 0);
    let input = "h0.0\nh9.9\nbest\nv1.3\nundo\nredo\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\nbest\n";
    let text = play(&["--db", &db, "--computer", "B"], input);
    let boards = screens(&o, &text);
    // The start, then one board per accepted command (h9.9 is refused).
    assert!(boards.len() >= 8, "{text}");
    assert_eq!(
        boards.last().unwrap().position,
        o.full(),
        "played to the end: {text}"
    );
    assert!(text.contains("`h9.9` is not a line"), "{text}");
    for s in &boards {
        check_screen(&mut o, s);
    }
    // Each board follows from the one before by the moves its message names: the
    // person's (a best one after `best`), then the computer's, each a best move.
    let mut computer_moves = 0;
    for pair in boards.windows(2) {
        let message = pair[1].message.clone().unwrap_or_default();
        if message.starts_with("took back") || message.starts_with("replayed") {
            continue;
        }
        let mut position = pair[0].position;
        let mut to_move = pair[0].status.split(" to move").next().unwrap();
        to_move = &to_move[to_move.len() - 1..];
        for part in message.split("; ") {
            let (who, name, best) = if let Some(n) = part.strip_prefix("B (computer) plays ") {
                computer_moves += 1;
                ("B", n, true)
            } else if let Some((who, n)) = part.split_once(" plays ") {
                let name = n.trim_end_matches(" (a best move)");
                (who, name, name != n)
            } else {
                panic!("unexpected message part `{part}` in `{message}`");
            };
            assert_eq!(who, to_move, "{message}");
            let l = o.line_by_name(name).unwrap_or_else(|| panic!("{part}"));
            let value = o.value(position);
            let mv = o.move_values(position).into_iter().find(|m| m.0 == l);
            let (_, move_value, boxes) = mv.unwrap_or_else(|| panic!("{part}: not legal"));
            if best {
                assert_eq!(move_value, value, "{part} is not a best move");
            }
            if boxes == 0 {
                to_move = if to_move == "A" { "B" } else { "A" };
            }
            position |= 1 << l;
        }
        assert_eq!(position, pair[1].position, "{message}");
    }
    assert!(computer_moves >= 5, "{text}");
}

#[test]
fn search_values_without_a_table_from_a_given_position() {
    let mut o = Oracle::new(2, 2, 0);
    let text = play(&["2x2", "h0.0,v0.0"], "h1.0\nundo\nredo\nbest\nbest\n");
    let boards = screens(&o, &text);
    assert_eq!(boards.len(), 6, "{text}");
    assert_eq!(boards[0].position, 1 << o.h(0, 0) | 1 << o.v(0, 0));
    // Undo and redo show the same boards again (with other messages).
    let same = |a: &Screen, b: &Screen| {
        (a.position, &a.values, &a.status) == (b.position, &b.values, &b.status)
    };
    assert!(same(&boards[0], &boards[2]), "{text}");
    assert!(same(&boards[1], &boards[3]), "{text}");
    for s in &boards {
        check_screen(&mut o, s);
    }
    // Wilson's penalty changes the values: the full board is worth -1 here.
    let mut o = Oracle::new(1, 2, -1);
    let text = play(&["1x2", "--penalty", "-1"], "best\n");
    for s in &screens(&o, &text) {
        check_screen(&mut o, s);
    }
}

#[test]
fn a_whole_game_ends_with_the_result_and_the_boxes_owned() {
    let mut o = Oracle::new(1, 2, 0);
    let text = play(&["1x2", "--computer", "A"], &"best\n".repeat(8));
    let boards = screens(&o, &text);
    let last = boards.last().unwrap();
    assert_eq!(last.position, o.full(), "{text}");
    assert!(last.status.contains("game over"), "{}", last.status);
    assert_eq!(last.marked[0] + last.marked[1], 2);
    for s in &boards {
        check_screen(&mut o, s);
    }
    // Nothing more to play; the refusal says so.
    assert!(text.contains("the game is over"), "{text}");
}

#[test]
fn in_a_terminal_it_redraws_in_place() {
    let dir = TempDir::new().unwrap();
    let db = build(&dir, "2x2");
    let tb_path = assert_cmd::cargo::cargo_bin!("tb");
    let command = format!("{} play --db {db} --computer B", tb_path.display());
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(b"v0.0\nbest\nundo\nquit\n").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let text = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    // Cleared and redrawn for each command, with a prompt, in colour.
    assert_eq!(text.matches("\x1b[H\x1b[2J").count(), 4, "{text}");
    assert!(text.matches("> ").count() >= 4, "{text}");
    assert!(text.contains("\x1b[1;32m"), "best moves in green: {text}");
    // Without the colours the boards read as in line mode.
    let plain = strip_ansi(&text);
    let mut o = Oracle::new(2, 2, 0);
    let boards = screens(&o, &plain);
    assert_eq!(boards.len(), 4, "{plain}");
    for s in &boards {
        check_screen(&mut o, s);
    }
    assert!(plain.contains("B (computer) plays"), "{plain}");
    // The undo takes back the person's move and the computer's answer: the board
    // after the first exchange again.
    assert_eq!(boards[3].position, boards[1].position);
    assert_ne!(boards[2].position, boards[1].position);
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn clear_errors_for_bad_arguments() {
    let dir = TempDir::new().unwrap();
    let db = build(&dir, "1x2");
    let cases: [(&[&str], &str); 4] = [
        (&[], "give a board"),
        (&["--db", &db, "2x2", "h0.0"], "not 2x2"),
        (&["--db", &db, "--penalty", "1"], "--penalty"),
        (&["1x2", "h7.7"], "not a line"),
    ];
    for (args, expected) in cases {
        let output = tb()
            .arg("play")
            .args(args)
            .write_stdin("")
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}: {}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
