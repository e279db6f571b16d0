//! Six Men's Morris against an independent brute force: the real `tb` builds the
//! game with 4 stones a side on the six board (`--rules six --stones 4 --phase
//! all`, and the same with `six-flying`), and every raw position of the moving-phase tables 3-3, 3-4, 4-3 and 4-4,
//! and every placement position reachable from the empty board, must have the
//! value the oracle below finds.
//!
//! The oracle shares no code with the crate: its board is written out here from
//! the picture in docs/FORMAT.md §4.5 (two squares of a 5x5 grid joined at the side
//! midpoints), its move generator and its solver are its own. The moving phase is
//! solved by plain sweeps over explicit positions (ply d = 1, 2, ...: a position is
//! won in d plies when a move reaches a position lost in d - 1, lost in d when
//! every move reaches a position won in fewer; what is left is drawn), the
//! placement by memoised minimax (it has no cycles).

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use tb::games::morris::rules::Position;
use tb::games::morris::tablebase::MorrisTablebase;
use tb::games::morris::variant::Rules;

/// The points in the fixed order of docs/FORMAT.md §4.5.
const NAMES: [&str; 16] = [
    "a1", "c1", "e1", "b2", "c2", "d2", "a3", "b3", "d3", "e3", "b4", "c4", "d4", "a5", "c5", "e5",
];

/// The lines of the board, as pairs of point names: the two squares' sides and
/// the four joints between them.
const EDGES: [(&str, &str); 20] = [
    ("a1", "c1"),
    ("c1", "e1"),
    ("e1", "e3"),
    ("e3", "e5"),
    ("e5", "c5"),
    ("c5", "a5"),
    ("a5", "a3"),
    ("a3", "a1"),
    ("b2", "c2"),
    ("c2", "d2"),
    ("d2", "d3"),
    ("d3", "d4"),
    ("d4", "c4"),
    ("c4", "b4"),
    ("b4", "b3"),
    ("b3", "b2"),
    ("c1", "c2"),
    ("a3", "b3"),
    ("d3", "e3"),
    ("c4", "c5"),
];

/// The mills: the sides of the two squares.
const MILLS: [[&str; 3]; 8] = [
    ["a1", "c1", "e1"],
    ["e1", "e3", "e5"],
    ["a5", "c5", "e5"],
    ["a1", "a3", "a5"],
    ["b2", "c2", "d2"],
    ["d2", "d3", "d4"],
    ["b4", "c4", "d4"],
    ["b2", "b3", "b4"],
];

/// Stones a side in the game checked.
const STONES: u32 = 4;

/// A value for the side to move: plies to the end of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Win(u32),
    Loss(u32),
    Draw,
}

impl Val {
    /// The value of a move leading to a position of value `self` for the opponent.
    fn back(self) -> Val {
        match self {
            Val::Win(p) => Val::Loss(p + 1),
            Val::Loss(p) => Val::Win(p + 1),
            Val::Draw => Val::Draw,
        }
    }

    /// Larger is better: short wins, draws, long losses.
    fn rank(self) -> i64 {
        match self {
            Val::Win(p) => 1000 - p as i64,
            Val::Draw => 0,
            Val::Loss(p) => -1000 + p as i64,
        }
    }

    fn text(self) -> String {
        match self {
            Val::Win(p) => format!("W{p}"),
            Val::Loss(p) => format!("L{p}"),
            Val::Draw => "D".into(),
        }
    }
}

/// The board's tables, from the names above, and whether a side with 3 stones
/// flies.
struct Board {
    adjacent: [u32; 16],
    mills: Vec<u32>,
    flying: bool,
}

impl Board {
    fn new(flying: bool) -> Board {
        let at = |name: &str| NAMES.iter().position(|n| *n == name).unwrap();
        let mut adjacent = [0u32; 16];
        for (a, b) in EDGES {
            adjacent[at(a)] |= 1 << at(b);
            adjacent[at(b)] |= 1 << at(a);
        }
        let mills = MILLS
            .iter()
            .map(|m| m.iter().fold(0, |acc, n| acc | 1 << at(n)))
            .collect();
        Board {
            adjacent,
            mills,
            flying,
        }
    }

    /// Does `stones` have a complete mill through point `p`?
    fn closes(&self, stones: u32, p: usize) -> bool {
        self.mills
            .iter()
            .any(|&m| m & (1 << p) != 0 && stones & m == m)
    }

    /// The opponent stones a mill may take: those outside complete mills, or any
    /// when all stand in mills.
    fn takeable(&self, stones: u32) -> u32 {
        let in_mills = self
            .mills
            .iter()
            .filter(|&&m| stones & m == m)
            .fold(0, |acc, m| acc | m);
        if stones & !in_mills == 0 {
            stones
        } else {
            stones & !in_mills
        }
    }

    /// The successors of (me to move, you, my hand, your hand): `None` for a move
    /// that wins at once, else the next position as seen by the other side
    /// (its stones first, then its hand first).
    fn successors(&self, me: u32, you: u32, hands: [u32; 2]) -> Vec<Option<(u32, u32, [u32; 2])>> {
        let mut out = Vec::new();
        let empty = 0xffff & !(me | you);
        let mut steps = Vec::new();
        if hands[0] > 0 {
            for to in 0..16 {
                if empty >> to & 1 == 1 {
                    steps.push((me | 1 << to, to));
                }
            }
        } else {
            let flies = self.flying && me.count_ones() == 3;
            for from in 0..16 {
                if me >> from & 1 == 0 {
                    continue;
                }
                for to in 0..16 {
                    let reaches = flies || self.adjacent[from] >> to & 1 == 1;
                    if reaches && empty >> to & 1 == 1 {
                        steps.push((me & !(1 << from) | 1 << to, to));
                    }
                }
            }
        }
        let next_hands = [hands[1], hands[0].saturating_sub(1)];
        for (mine, to) in steps {
            if !self.closes(mine, to) {
                out.push(Some((you, mine, next_hands)));
                continue;
            }
            let take = self.takeable(you);
            for c in 0..16 {
                if take >> c & 1 == 0 {
                    continue;
                }
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

/// Every k-subset of the 16 points.
fn subsets(k: u32) -> impl Iterator<Item = u32> {
    (0u32..1 << 16).filter(move |s| s.count_ones() == k)
}

/// The moving phase with 3 or 4 stones a side, solved by sweeps: the value of
/// every (mover, opponent) pair.
fn solve_moving(board: &Board) -> HashMap<(u32, u32), Val> {
    let mut positions = Vec::new();
    for m in 3..=STONES {
        for o in 3..=STONES {
            for me in subsets(m) {
                for you in subsets(o).filter(|y| y & me == 0) {
                    positions.push((me, you));
                }
            }
        }
    }
    let number: HashMap<(u32, u32), usize> =
        positions.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    // Children by number; usize::MAX: a move that wins at once.
    let children: Vec<Vec<usize>> = positions
        .iter()
        .map(|&(me, you)| {
            board
                .successors(me, you, [0, 0])
                .into_iter()
                .map(|c| c.map_or(usize::MAX, |(a, b, _)| number[&(a, b)]))
                .collect()
        })
        .collect();
    let mut value: Vec<Option<Val>> = vec![None; positions.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, moves) in children.iter().enumerate() {
        if moves.is_empty() {
            value[i] = Some(Val::Loss(0));
        } else {
            open.push(i);
        }
    }
    let mut quiet = 0;
    let mut d = 1;
    while quiet < 2 {
        let mut decided = Vec::new();
        open.retain(|&i| {
            let moves = &children[i];
            let v = if d % 2 == 1 {
                let wins = moves.iter().any(|&c| {
                    if c == usize::MAX {
                        d == 1
                    } else {
                        value[c] == Some(Val::Loss(d - 1))
                    }
                });
                wins.then_some(Val::Win(d))
            } else {
                let all_won = moves
                    .iter()
                    .all(|&c| c != usize::MAX && matches!(value[c], Some(Val::Win(_))));
                all_won.then_some(Val::Loss(d))
            };
            match v {
                Some(v) => {
                    decided.push((i, v));
                    false
                }
                None => true,
            }
        });
        quiet = if decided.is_empty() { quiet + 1 } else { 0 };
        for (i, v) in decided {
            value[i] = Some(v);
        }
        d += 1;
    }
    positions
        .into_iter()
        .zip(value)
        .map(|(p, v)| (p, v.unwrap_or(Val::Draw)))
        .collect()
}

/// A placement position: (mover, opponent, [mover's hand, opponent's hand]).
type Placing = (u32, u32, [u32; 2]);

/// The value of a placement position by minimax over its moves (memoised), the
/// moving phase from `moving`.
fn placement_value(
    board: &Board,
    moving: &HashMap<(u32, u32), Val>,
    memo: &mut HashMap<Placing, Val>,
    pos: Placing,
) -> Val {
    let (me, you, hands) = pos;
    if hands == [0, 0] {
        return moving[&(me, you)];
    }
    if let Some(&v) = memo.get(&pos) {
        return v;
    }
    let mut best: Option<Val> = None;
    for child in board.successors(me, you, hands) {
        let v = match child {
            None => Val::Win(1),
            Some(next) => placement_value(board, moving, memo, next).back(),
        };
        if best.is_none_or(|b| v.rank() > b.rank()) {
            best = Some(v);
        }
    }
    let v = best.expect("a placement always has an empty point");
    memo.insert(pos, v);
    v
}

/// The position text of docs/FORMAT.md §4.5: a character per point, the side to move, the
/// hands of White and Black.
fn text(me: u32, you: u32, white: bool, hands: [u32; 2]) -> String {
    let (w, b) = if white { (me, you) } else { (you, me) };
    let board: String = (0..16)
        .map(|p| match (w >> p & 1, b >> p & 1) {
            (1, _) => 'W',
            (_, 1) => 'B',
            _ => '.',
        })
        .collect();
    let side = if white { 'w' } else { 'b' };
    if hands == [0, 0] {
        format!("{board} {side}")
    } else {
        let (hw, hb) = if white {
            (hands[0], hands[1])
        } else {
            (hands[1], hands[0])
        };
        format!("{board} {side} {hw} {hb}")
    }
}

/// Runs `tb` with `args`, then `--db db`, then `after` (a position).
fn run(args: &[&str], db: &Path, after: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(args)
        .arg("--db")
        .arg(db)
        .args(after)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    out
}

/// [`run`], which must succeed; its standard output.
fn run_ok(args: &[&str], db: &Path, after: &[&str]) -> String {
    let out = run(args, db, after);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn ours(t: &MorrisTablebase, text: &str) -> String {
    let position = Position::parse_in(t.spec().rules, text).unwrap();
    t.value(&position).unwrap().to_string()
}

#[test]
fn six_men_with_four_stones_matches_the_brute_force() {
    check_game("six", false);
}

#[test]
fn six_men_flying_with_four_stones_matches_the_brute_force() {
    check_game("six-flying", true);
}

/// Builds `--rules rules --stones 4 --phase all` and compares it with the oracle
/// (`flying`: whether the rules let a side with 3 stones fly).
fn check_game(rules: &str, flying: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("six-4.tb");
    let build = [
        "build", "morris", "--rules", rules, "--stones", "4", "--phase", "all",
    ];
    run_ok(&[&build[..], &["--quiet"]].concat(), &db, &[]);
    let t = MorrisTablebase::open(&db).unwrap();
    assert_eq!(t.spec().rules, rules.parse::<Rules>().unwrap());
    let board = Board::new(flying);
    let moving = solve_moving(&board);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (&(me, you), &v) in &moving {
        // Both colours to move: the tables are relative to the side to move.
        for white in [true, false] {
            let text = text(me, you, white, [0, 0]);
            let got = ours(&t, &text);
            checked += 1;
            if got != v.text() && wrong.len() < 10 {
                wrong.push(format!("{text}: tb {got}, oracle {}", v.text()));
            }
        }
    }
    assert!(wrong.is_empty(), "moving phase: {wrong:#?}");
    // Sweeps found wins, losses and draws (so the game is not trivial here).
    for kind in [Val::Win(1), Val::Loss(0), Val::Draw] {
        assert!(
            moving
                .values()
                .any(|v| std::mem::discriminant(v) == std::mem::discriminant(&kind))
        );
    }
    let mut memo = HashMap::new();
    let start = (0, 0, [STONES, STONES]);
    let value = placement_value(&board, &moving, &mut memo, start);
    for (&(me, you, hands), &v) in &memo {
        // White places first: the side to move with as many stones in hand as the
        // other is White.
        let white = hands[0] == hands[1];
        let text = text(me, you, white, hands);
        let got = ours(&t, &text);
        checked += 1;
        if got != v.text() && wrong.len() < 10 {
            wrong.push(format!("{text}: tb {got}, oracle {}", v.text()));
        }
    }
    assert!(wrong.is_empty(), "placement: {wrong:#?}");
    assert!(checked > 3_000_000, "{checked}");
    // The start through the real probe command, each first placement's value too.
    let out = run_ok(&["probe", "--json"], &db, &["start"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["position"], "................ w 4 4");
    assert_eq!(json["value"], value.text());
    let moves = json["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 16);
    for mv in moves {
        let name = mv["move"].as_str().unwrap();
        let p = NAMES.iter().position(|n| *n == name).unwrap();
        let child = memo[&(0, 1 << p, [STONES, STONES - 1])];
        assert_eq!(mv["value"], child.back().text(), "{name}");
    }
}

/// A file records its rules: a build of other rules into it is refused with the
/// reason, and the file is left as it was; positions of another board are refused.
#[test]
fn six_files_refuse_other_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("six-3.tb");
    run_ok(
        &[
            "build", "morris", "--rules", "six", "--stones", "3", "--quiet",
        ],
        &db,
        &[],
    );
    let before = run_ok(&["info"], &db, &[]);
    assert!(before.contains("rules: six: 16 points"), "{before}");
    let out = run(&["build", "morris", "--stones", "3", "--quiet"], &db, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("with the six rules, and this build asks for nine"),
        "{stderr}"
    );
    assert_eq!(run_ok(&["info"], &db, &[]), before);
    // A nine-board position is not a position of this file; a 16-point one is.
    let out = run(&["probe"], &db, &["WWW......BBB............ w"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("expected 16"), "{stderr}");
    let out = run_ok(&["probe"], &db, &["WWW......BBB.... b"]);
    assert!(out.starts_with("morris WWW......BBB.... b: "), "{out}");
}
