//! Morabaraba against an independent brute force: the real `tb` builds the game
//! with 3 stones a side (`--rules morabaraba --stones 3 --phase all`), and every
//! position of it (each class of the 16 symmetries, both colours to move, every
//! placement layer and the moving phase) must have the value the oracle finds, as
//! must the start and each first placement through `tb probe`; the file refuses
//! to be resumed with other rules. With 4 stones a
//! side, the placement positions with 2 stones or more in hand are solved the same
//! way (reading the positions their moves leave them for from the file), and
//! random moving-phase positions with 4 stones, where stones slide along the
//! diagonals, must each hold the best of their moves' values as the oracle's own
//! move generator finds them.
//!
//! The oracle shares no code with the crate: its board is the Nine Men's Morris
//! oracle's (`tests/morris_oracle`, adjacency and mills from the points'
//! coordinates) with the four diagonals of docs/FORMAT.md §4.7 written out here by
//! point name; its symmetries are that oracle's (a test checks they keep the
//! diagonals); its move generator is its own and its solver the sweep of
//! `tests/morris_oracle/sweep.rs`. With at most 4 stones a side the board cannot
//! fill up; the full-board draw is pinned by the crate's unit test
//! `a_full_morabaraba_board_is_a_draw` (table 12-12: every position drawn, and
//! the probe and the verifier agree).

use crate::harness;
use crate::morris_oracle;

use std::collections::HashMap;
use std::path::Path;

use harness::tb;
use morris_oracle::sweep::{self, Sweep, text};
use morris_oracle::{ALL, Geometry, NUM_POINTS, Rng, Symmetries, Val, bits, parse_point};
use tb::games::morris::rules::Position;
use tb::games::morris::tablebase::MorrisTablebase;
use tb::games::morris::variant::Rules;

/// The four diagonals Morabaraba adds to the nine board: lines and mills.
const DIAGONALS: [[&str; 3]; 4] = [
    ["a1", "b2", "c3"],
    ["g1", "f2", "e3"],
    ["a7", "b6", "c5"],
    ["g7", "f6", "e5"],
];

/// The Morabaraba board and its symmetries.
struct Board {
    adjacent: [u32; NUM_POINTS],
    mills: Vec<u32>,
    symmetries: Symmetries,
}

impl Board {
    fn new() -> Board {
        let nine = Geometry::new();
        let (mut adjacent, mut mills) = (nine.adjacent, nine.mills.clone());
        for line in DIAGONALS {
            let [a, b, c] = line.map(|n| parse_point(n).unwrap());
            adjacent[a] |= 1 << b;
            adjacent[b] |= 1 << a | 1 << c;
            adjacent[c] |= 1 << b;
            mills.push(1 << a | 1 << b | 1 << c);
        }
        Board {
            adjacent,
            mills,
            symmetries: Symmetries::new(),
        }
    }

    /// The least image of (mover, opponent) under the 16 symmetries, as one key.
    fn canonical(&self, me: u32, you: u32) -> u64 {
        let (m, o) = self.symmetries.canonical(me, you);
        u64::from(m) << 24 | u64::from(o)
    }

    /// The stones of `stones` the other side may capture: those outside its
    /// mills, or all when every one stands in a mill.
    fn removable(&self, stones: u32) -> u32 {
        let in_mills = self
            .mills
            .iter()
            .filter(|&&m| stones & m == m)
            .fold(0, |acc, &m| acc | m);
        if stones & !in_mills == 0 {
            stones
        } else {
            stones & !in_mills
        }
    }

    /// The successors of (me to move, you, [my hand, your hand]): `None` for a move
    /// that wins at once, else the next position as the other side sees it.
    /// Morabaraba as Nine Men's Morris: with stones in hand a side places one,
    /// then it slides along a line, flying with exactly 3 stones on the board.
    fn successors(&self, (me, you, hands): Sweep) -> Vec<Option<Sweep>> {
        let empty = ALL & !(me | you);
        // (my stones after the move, its destination, my hand after it).
        let mut steps = Vec::new();
        if hands[0] > 0 {
            for to in bits(empty) {
                steps.push((me | 1 << to, to, hands[0] - 1));
            }
        } else {
            let flies = me.count_ones() == 3;
            for from in bits(me) {
                let targets = if flies {
                    empty
                } else {
                    self.adjacent[from] & empty
                };
                for to in bits(targets) {
                    steps.push((me & !(1 << from) | 1 << to, to, 0));
                }
            }
        }
        let mut out = Vec::new();
        for (mine, to, hand) in steps {
            let next_hands = [hands[1], hand];
            let closes = self
                .mills
                .iter()
                .any(|&m| m >> to & 1 == 1 && mine & m == m);
            // A mill captures one stone; with none on the board it takes nothing.
            if !closes || you == 0 {
                out.push(Some((you, mine, next_hands)));
                continue;
            }
            for c in bits(self.removable(you)) {
                let left = you & !(1 << c);
                out.push((left.count_ones() + hands[1] >= 3).then_some((left, mine, next_hands)));
            }
        }
        out
    }

    /// The game with `stones` a side from weight `from` up ([`sweep::solve`]):
    /// White places first, so the side to move has as many stones in hand as
    /// the other or one more; a full board in the moving phase is drawn.
    fn solve(&self, stones: u32, from: u32, below: impl Fn(Sweep) -> Val) -> Vec<(Sweep, Val)> {
        let canonical = |me, you| self.canonical(me, you);
        let successors = |pos: Sweep| self.successors(pos);
        let rules = sweep::Rules {
            canonical: &canonical,
            successors: &successors,
            hands_ok: &|[hm, ho]| hm == ho || hm == ho + 1,
            drawn: &|(me, you, hands)| me | you == ALL && hands == [0, 0],
        };
        sweep::solve(&rules, stones, from, below)
    }
}

/// Builds `--rules morabaraba --stones N --phase all` into `dir`; the file and
/// its path.
fn build(dir: &Path, stones: u32) -> (MorrisTablebase, std::path::PathBuf) {
    let db = dir.join(format!("morabaraba-{stones}.tb"));
    let n = stones.to_string();
    let mut cmd = tb();
    cmd.args([
        "build",
        "morris",
        "--rules",
        "morabaraba",
        "--stones",
        &n,
        "--phase",
        "all",
        "--quiet",
        "--db",
    ])
    .arg(&db);
    harness::run_ok(&mut cmd, "build");
    let t = MorrisTablebase::open(&db).unwrap();
    assert_eq!(t.spec().rules, Rules::Morabaraba);
    (t, db)
}

/// tb's value of a position, White to move.
fn value_in(t: &MorrisTablebase, pos: Sweep) -> Val {
    let position = Position::parse_in(Rules::Morabaraba, &text(pos, true)).unwrap();
    t.value(&position).unwrap().to_string().parse().unwrap()
}

/// Compares every position of `solved` with the file (White to move only where
/// the hands are equal, Black where it has a stone more in hand); returns how
/// many were won, lost and drawn.
fn compare(t: &MorrisTablebase, solved: &[(Sweep, Val)]) -> [usize; 3] {
    let colours = |(_, _, hands): Sweep| -> &'static [bool] {
        if hands[0] == hands[1] {
            &[true, false]
        } else {
            &[false]
        }
    };
    let value = |text: &str| {
        let position = Position::parse_in(Rules::Morabaraba, text).unwrap();
        t.value(&position).unwrap().to_string()
    };
    sweep::compare(solved, colours, value)
}

#[test]
fn the_symmetries_keep_the_diagonals() {
    let board = Board::new();
    let map = |g: usize, mask: u32| board.symmetries.apply(g, mask);
    assert_eq!(board.mills.len(), 20);
    let edges: u32 = board.adjacent.iter().map(|a| a.count_ones()).sum();
    assert_eq!(edges / 2, 40);
    for g in 0..board.symmetries.len() {
        for &m in &board.mills {
            assert!(board.mills.contains(&map(g, m)), "symmetry {g}");
        }
        for p in 0..NUM_POINTS {
            let image = board.symmetries.perms[g][p];
            assert_eq!(
                map(g, board.adjacent[p]),
                board.adjacent[image],
                "symmetry {g}"
            );
        }
    }
}

#[test]
fn morabaraba_with_three_stones_matches_the_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let (t, db) = build(dir.path(), 3);
    let board = Board::new();
    let solved = board.solve(3, 0, |_| unreachable!("the whole game"));
    let mut info = tb();
    info.args(["info", "--json", "--db"]).arg(&db);
    let info: serde_json::Value =
        serde_json::from_slice(&harness::run_ok(&mut info, "info").stdout).unwrap();
    assert_eq!(info["total"]["positions"], solved.len() as u64);
    // Wins and losses occur; with 20 mills and every side flying no position of
    // the 3-stone game is drawn.
    let seen = compare(&t, &solved);
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
    let by_position: HashMap<Sweep, Val> = solved.into_iter().collect();
    let mut probe = tb();
    probe
        .args(["probe", "--json", "--db"])
        .arg(&db)
        .arg("start");
    let json: serde_json::Value =
        serde_json::from_slice(&harness::run_ok(&mut probe, "probe").stdout).unwrap();
    sweep::check_start(&json, 3, &by_position, |me, you| board.canonical(me, you));
    // The file records its rules: resuming it as Lasker Morris (the same 24
    // points) is refused by name, the file unchanged.
    let info_text = |db: &Path| {
        let mut info = tb();
        info.args(["info", "--db"]).arg(db);
        harness::run_ok(&mut info, "info").stdout
    };
    let before = info_text(&db);
    let mut resume = tb();
    resume
        .args([
            "build", "morris", "--rules", "lasker", "--stones", "3", "--phase", "all", "--quiet",
            "--db",
        ])
        .arg(&db);
    let out = resume.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("with the morabaraba rules, and this build asks for lasker"),
        "{stderr}"
    );
    assert_eq!(info_text(&db), before);
}

/// 4 stones a side: the placement positions of weight 10 and more (2 x in hand +
/// on the board: at least 2 stones in hand) solved by the oracle, the lighter ones
/// they lead to read from the file; then random moving-phase positions with 4
/// stones (sliding, diagonals included), each holding the best of its moves.
#[test]
fn morabaraba_with_four_stones_matches_the_brute_force() {
    let dir = tempfile::tempdir().unwrap();
    let (t, _) = build(dir.path(), 4);
    let board = Board::new();
    let solved = board.solve(4, 10, |pos| value_in(&t, pos));
    assert!(solved.len() > 100_000, "{}", solved.len());
    let seen = compare(&t, &solved);
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    let mut rng = Rng::new(47);
    let nine = Geometry::new();
    let mut diagonal_moves = 0;
    for (m, o) in [(4, 4), (4, 3), (3, 4)] {
        for _ in 0..3000 {
            let (me, you) = rng.position(m, o);
            let moves = board.successors((me, you, [0, 0]));
            let best = Val::best(moves.iter().map(|c| match c {
                None => Val::Win(1),
                Some(child) => Val::from_child(value_in(&t, *child)),
            }));
            assert_eq!(
                value_in(&t, (me, you, [0, 0])),
                best,
                "{}",
                text((me, you, [0, 0]), true)
            );
            // Slides along a diagonal (a line the nine board lacks) occur.
            let empty = ALL & !(me | you);
            diagonal_moves += bits(me)
                .filter(|&p| (board.adjacent[p] & !nine.adjacent[p]) & empty != 0)
                .count();
        }
    }
    assert!(diagonal_moves > 1000, "{diagonal_moves}");
}
