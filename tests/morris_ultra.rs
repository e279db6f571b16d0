//! The probe's tie-break among moves of equal value (docs/FORMAT.md §4.3: the
//! opponent's replies that go wrong) against an independent count: the real `tb`
//! builds Six Men's Morris with 4 stones a side from the empty board, one `tb probe
//! --json` process answers positions of random games, and for every move that
//! carries a tie-break a second process probes the position after it: its moves
//! are the opponent's replies, their values say which go wrong (after a draw, those
//! that lose; after a loss, those that do not win). The counts must match, the
//! moves without a tie-break must be those the format says, and the first move
//! (what a player of the table plays: the web page's computer) must have the
//! largest share among the moves of the best value.

use crate::harness;

use harness::probe_all;
use tb::games::morris::rules::{Move, Outcome, Position};
use tb::games::morris::variant::Rules;

/// Xorshift64.
fn rng(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

#[test]
fn tie_break_counts_the_replies_that_go_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let db = harness::build_file(
        dir.path(),
        "six4.tb",
        &[
            "morris", "--rules", "six", "--stones", "4", "--phase", "all",
        ],
    );
    // Positions of random games from the empty board, both phases.
    let rules = Rules::Six;
    let mut next = rng(0x9e37_79b9_7f4a_7c15);
    let mut positions = Vec::new();
    for _ in 0..40 {
        let mut pos = Position::with_mover(0, 0, true, [4, 4]).on(rules);
        for _ in 0..next(30) + 2 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            match legal[next(legal.len())].1 {
                Outcome::Child(c) => pos = c,
                Outcome::Win => break,
            }
            positions.push(pos.to_string());
        }
    }
    positions.sort();
    positions.dedup();
    let answers = probe_all(&db, &positions);
    // Every move with a tie-break: (answer, move) and the position after it.
    let mut asked = Vec::new();
    let mut children = Vec::new();
    let (mut draws, mut losses) = (0, 0);
    for (k, answer) in answers.iter().enumerate() {
        let value = answer["value"].as_str().unwrap();
        let moves = answer["moves"].as_array().unwrap();
        let pos = Position::parse_in(rules, &positions[k]).unwrap();
        for (i, mv) in moves.iter().enumerate() {
            let known = !mv["opponent_replies"].is_null();
            assert_eq!(known, !mv["opponent_errors"].is_null());
            // Known exactly for the moves of the position's value, when it is a
            // draw or a loss.
            let expected = !value.starts_with('W') && mv["value"] == answer["value"];
            assert_eq!(known, expected, "{}: {mv}", positions[k]);
            if known {
                let m = Move::parse_in(rules, mv["move"].as_str().unwrap()).unwrap();
                let Outcome::Child(c) = pos.play(m).unwrap() else {
                    panic!("a move with a tie-break wins at once");
                };
                asked.push((k, i));
                children.push(c.to_string());
            }
        }
        if value == "D" && moves.iter().filter(|m| m["value"] == "D").count() > 1 {
            draws += 1;
        }
        if value.starts_with('L') {
            losses += 1;
        }
    }
    assert!(draws >= 20 && losses >= 5, "{draws} draws, {losses} losses");
    eprintln!(
        "{} positions ({draws} drawn with several drawing moves, {losses} lost), {} moves with a tie-break",
        positions.len(),
        asked.len()
    );
    assert!(asked.len() >= 100);
    let replies = probe_all(&db, &children);
    for ((k, i), child) in asked.iter().zip(&replies) {
        let mv = &answers[*k]["moves"][*i];
        let drawn = mv["value"] == "D";
        let all = child["moves"].as_array().unwrap();
        let wrong = all
            .iter()
            .filter(|r| {
                let result = r["result"].as_str().unwrap();
                if drawn {
                    result == "loss"
                } else {
                    result != "win"
                }
            })
            .count();
        assert_eq!(
            (
                mv["opponent_errors"].as_u64(),
                mv["opponent_replies"].as_u64()
            ),
            (Some(wrong as u64), Some(all.len() as u64)),
            "{} then {}",
            positions[*k],
            mv["move"]
        );
    }
    // The first move has the largest share among the moves of the best value,
    // which come first, each share at most the one before.
    for answer in &answers {
        let moves = answer["moves"].as_array().unwrap();
        let tied: Vec<(u64, u64)> = moves
            .iter()
            .take_while(|m| !m["opponent_replies"].is_null())
            .map(|m| {
                (
                    m["opponent_errors"].as_u64().unwrap(),
                    m["opponent_replies"].as_u64().unwrap(),
                )
            })
            .collect();
        for w in tied.windows(2) {
            assert!(w[0].0 * w[1].1 >= w[1].0 * w[0].1, "{answer}");
        }
    }
}
