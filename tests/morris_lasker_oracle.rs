//! Lasker Morris against an independent brute force: the real `tb` builds the game
//! with 3 stones a side (`--rules lasker --stones 3 --phase all`: every sector,
//! stones on the board and in hand of both sides), and every position of it (each
//! class of the 16 symmetries, both colours to move) must have the value the oracle
//! below finds, as must the start and each first move through `tb probe`. With 4
//! stones a side, the positions with the most stones in hand (about a hundred
//! thousand classes, where stones slide to neighbours during placement) are checked the
//! same way, the oracle reading the values of the positions their placements and
//! captures lead to from the file.
//!
//! The oracle shares no code with the crate: its board (adjacency and mills from
//! the points' coordinates), symmetries and values are those of the Nine Men's
//! Morris oracle (`tests/morris_oracle`, written from docs/FORMAT.md §4 alone); its
//! move generator (a side with stones in hand places one or slides one of its
//! stones, flies with 3 stones on the board and in hand together) and its solver
//! are its own. With moving allowed
//! during placement the positions with stones in hand have cycles, so the whole
//! game is solved by sweeps over explicit positions (ply d = 1, 2, ...: won in d
//! plies when a move reaches a position lost in d - 1, lost in d when every move
//! reaches a position won in fewer; what is left is drawn).

use crate::harness;
use crate::morris_oracle;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

use harness::{assert_no_panic, tb};
use morris_oracle::sweep::{self, Sweep, text};
use morris_oracle::{ALL, Geometry, Symmetries, Val, bits};
use tb::games::morris::rules::Position;
use tb::games::morris::tablebase::MorrisTablebase;
use tb::games::morris::variant::Rules;

/// Stones a side in the game checked.
const STONES: u32 = 3;

/// The nine board and its symmetries.
struct Board {
    geometry: Geometry,
    symmetries: Symmetries,
}

impl Board {
    fn new() -> Board {
        Board {
            geometry: Geometry::new(),
            symmetries: Symmetries::new(),
        }
    }

    /// The least image of (mover, opponent) under the 16 symmetries, as one key.
    fn canonical(&self, me: u32, you: u32) -> u64 {
        let (m, o) = self.symmetries.canonical(me, you);
        u64::from(m) << 24 | u64::from(o)
    }

    /// The successors of (me to move, you, [my hand, your hand]): `None` for a move
    /// that wins at once, else the next position as the other side sees it (its
    /// stones first, its hand first). Lasker: with stones in hand a side places
    /// one or slides one of its stones; it flies with 3 stones on the board and
    /// in hand together.
    fn successors(&self, me: u32, you: u32, hands: [u32; 2]) -> Vec<Option<Sweep>> {
        let g = &self.geometry;
        let mut out = Vec::new();
        let empty = ALL & !(me | you);
        // (my stones after the move, its destination, my hand after it).
        let mut steps = Vec::new();
        if hands[0] > 0 {
            for to in bits(empty) {
                steps.push((me | 1 << to, to, hands[0] - 1));
            }
        }
        let flies = me.count_ones() + hands[0] == 3;
        for from in bits(me) {
            let targets = if flies {
                empty
            } else {
                g.adjacent[from] & empty
            };
            for to in bits(targets) {
                steps.push((me & !(1 << from) | 1 << to, to, hands[0]));
            }
        }
        for (mine, to, hand) in steps {
            let next_hands = [hands[1], hand];
            // A mill captures one stone; with none on the board it takes nothing.
            if !g.closes_mill(mine, to) || you == 0 {
                out.push(Some((you, mine, next_hands)));
                continue;
            }
            for c in bits(g.removable(you)) {
                let left = you & !(1 << c);
                if left.count_ones() + hands[1] < 3 {
                    out.push(None);
                } else {
                    out.push(Some((left, mine, next_hands)));
                }
            }
        }
        out
    }
}

/// The Lasker game with `stones` a side from weight `from` up ([`sweep::solve`]):
/// every hand occurs (the two hands are independent), no position is drawn for
/// want of moves.
fn solve(board: &Board, stones: u32, from: u32, below: impl Fn(Sweep) -> Val) -> Vec<(Sweep, Val)> {
    let canonical = |me, you| board.canonical(me, you);
    let successors = |(me, you, hands): Sweep| board.successors(me, you, hands);
    let rules = sweep::Rules {
        canonical: &canonical,
        successors: &successors,
        hands_ok: &|_| true,
        drawn: &|_| false,
    };
    sweep::solve(&rules, stones, from, below)
}

/// Runs `tb` with `args`, then `--db db`, then `after` (a position); it must not
/// panic.
fn run(args: &[&str], db: &Path, after: &[&str]) -> Output {
    let out = tb()
        .args(args)
        .arg("--db")
        .arg(db)
        .args(after)
        .output()
        .unwrap();
    assert_no_panic(&out, &format!("{args:?}"));
    out
}

/// [`run`], which must succeed; its standard output.
fn run_ok(args: &[&str], db: &Path, after: &[&str]) -> String {
    let mut cmd = tb();
    cmd.args(args).arg("--db").arg(db).args(after);
    let out = harness::run_ok(&mut cmd, &format!("{args:?}"));
    String::from_utf8(out.stdout).unwrap()
}

/// Builds `--rules lasker --stones N --phase all` into `dir`; the file.
fn build(dir: &Path, stones: u32) -> MorrisTablebase {
    let db = dir.join(format!("lasker-{stones}.tb"));
    let n = stones.to_string();
    let build = [
        "build", "morris", "--rules", "lasker", "--stones", &n, "--phase", "all", "--quiet",
    ];
    run_ok(&build, &db, &[]);
    let t = MorrisTablebase::open(&db).unwrap();
    assert_eq!(t.spec().rules, Rules::Lasker);
    t
}

/// tb's value of a position (either colour to move: White's here).
fn value_in(t: &MorrisTablebase, pos: Sweep) -> String {
    let position = Position::parse_in(Rules::Lasker, &text(pos, true)).unwrap();
    t.value(&position).unwrap().to_string()
}

/// Compares every position of `solved` (both colours to move) with the file;
/// returns how many were won, lost and drawn.
fn compare(t: &MorrisTablebase, solved: &[(Sweep, Val)]) -> [usize; 3] {
    let value = |text: &str| {
        let position = Position::parse_in(Rules::Lasker, text).unwrap();
        t.value(&position).unwrap().to_string()
    };
    sweep::compare(solved, |_| &[true, false], value)
}

#[test]
fn lasker_with_three_stones_matches_the_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let t = build(dir.path(), STONES);
    let board = Board::new();
    let solved = solve(&board, STONES, 0, |_| unreachable!("the whole game"));
    // As many classes as the file holds (tb counts them by Burnside's lemma).
    let db = dir.path().join("lasker-3.tb");
    let info = run_ok(&["info", "--json"], &db, &[]);
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["total"]["positions"], solved.len() as u64);
    // Wins, losses and draws all occur (the game is not trivial here).
    let seen = compare(&t, &solved);
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    let by_position: HashMap<Sweep, Val> = solved.into_iter().collect();
    // The start and each first placement through the real probe command.
    let out = run_ok(&["probe", "--json"], &db, &["start"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    sweep::check_start(&json, STONES, &by_position, |me, you| {
        board.canonical(me, you)
    });
}

/// With 3 stones a side every side flies (3 stones on the board and in hand), and
/// the values come out the same whether a side may move during placement or not
/// (this oracle, so changed, still agrees with the file); with 4 a side stones
/// slide to neighbours while others are still in hand, and either change to the
/// oracle's rules shows here. The oracle solves
/// the positions of weight 11 and more (2 x in hand + on the board; some 97,000
/// classes, those with the most stones in hand) on its own; the moves
/// that leave them (placements, captures) lead to lighter positions, whose values
/// it reads from the file (the 4-stone moving phase there is Nine Men's Morris',
/// checked by the other Morris tests).
#[test]
fn lasker_with_four_stones_matches_the_brute_force_from_weight_eleven() {
    let dir = tempfile::tempdir().unwrap();
    let t = build(dir.path(), 4);
    let board = Board::new();
    let from = 11;
    let below = |pos: Sweep| value_in(&t, pos).parse::<Val>().unwrap();
    let solved = solve(&board, 4, from, below);
    assert!(solved.len() > 90_000, "{}", solved.len());
    let seen = compare(&t, &solved);
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

/// Sliding instead of placing is a legal move with stones in hand; a file records
/// its rules and refuses another rule set on resume; hand counts that do not fit
/// the file are clear errors.
#[test]
fn lasker_files_probe_moves_in_placement_and_refuse_other_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lasker-3.tb");
    run_ok(
        &[
            "build", "morris", "--rules", "lasker", "--stones", "3", "--phase", "all", "--quiet",
        ],
        &db,
        &[],
    );
    let before = run_ok(&["info"], &db, &[]);
    assert!(before.contains("rules: lasker: 24 points"), "{before}");
    let verified = run_ok(&["verify"], &db, &[]);
    assert!(
        verified.trim_end().ends_with("one ply deep: OK"),
        "{verified}"
    );
    // White, 2 on the board and 1 in hand, may slide (and flies: 3 stones in all).
    let out = run_ok(
        &["probe", "--json"],
        &db,
        &["WW.......B.............. w 1 2"],
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let moves: Vec<&str> = json["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert!(moves.contains(&"a1-g7"), "{moves:?}");
    assert!(moves.contains(&"g7"), "{moves:?}");
    // Resuming with the nine rules is refused, the file unchanged.
    let out = run(
        &[
            "build", "morris", "--stones", "3", "--phase", "all", "--quiet",
        ],
        &db,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("with the lasker rules, and this build asks for nine"),
        "{stderr}"
    );
    assert_eq!(run_ok(&["info"], &db, &[]), before);
    // Hands: more than the file's 3 stones a side, more than the rules' 10, not a
    // number.
    for (position, says) in [
        ("W....................... w 3 3", "no sector 1-0 h3-3"),
        ("W....................... w 11 3", "bad stones in hand"),
        ("W....................... w x 3", "bad stones in hand"),
    ] {
        let out = run(&["probe"], &db, &[position]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{position}: {stderr}");
        assert!(stderr.contains(says), "{position}: {stderr}");
    }
}
