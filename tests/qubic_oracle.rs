//! Qubic's geometry and forced-win search against an independent brute force
//! written here from the rules (no code shared with `tb`): the lines found as every
//! set of four equally spaced collinear cells, positions from random games, and a
//! plain recursive search for wins by continuous threats without masks or caches;
//! every win `tb` reports is also replayed move by move against every defence.

use std::collections::{BTreeSet, HashSet};
use tb::games::qubic::check::Checker;
use tb::games::qubic::geometry::{automorphisms, canonical, lines};
use tb::games::qubic::threats::{ForcedSearch, wins_by};

/// The lines: all sets {p, p+d, p+2d, p+3d} on the board, d any nonzero step of
/// -1/0/1 per coordinate.
fn oracle_lines() -> Vec<[usize; 4]> {
    let mut set: BTreeSet<[usize; 4]> = BTreeSet::new();
    for start in 0..64i32 {
        let (x, y, z) = (start % 4, start / 4 % 4, start / 16);
        for d in 0..27 {
            let (dx, dy, dz) = (d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1);
            if (dx, dy, dz) == (0, 0, 0) {
                continue;
            }
            let cells: Vec<i32> = (0..4)
                .map(|k| (x + k * dx, y + k * dy, z + k * dz))
                .filter(|&(a, b, c)| {
                    (0..4).contains(&a) && (0..4).contains(&b) && (0..4).contains(&c)
                })
                .map(|(a, b, c)| 16 * c + 4 * b + a)
                .collect();
            if cells.len() == 4 {
                let mut line = [0usize; 4];
                for (slot, &c) in line.iter_mut().zip(&cells) {
                    *slot = c as usize;
                }
                line.sort();
                set.insert(line);
            }
        }
    }
    set.into_iter().collect()
}

struct Oracle {
    lines: Vec<[usize; 4]>,
}

impl Oracle {
    /// (own stones, other's stones) on each line.
    fn counts(&self, own: &[bool; 64], other: &[bool; 64], line: &[usize; 4]) -> (usize, usize) {
        (
            line.iter().filter(|&&c| own[c]).count(),
            line.iter().filter(|&&c| other[c]).count(),
        )
    }

    /// Empty cells where `own` would complete four.
    fn winning_cells(&self, own: &[bool; 64], other: &[bool; 64]) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .lines
            .iter()
            .filter(|l| self.counts(own, other, l) == (3, 0))
            .map(|l| *l.iter().find(|&&c| !own[c]).unwrap())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn four(&self, own: &[bool; 64]) -> bool {
        self.lines.iter().any(|l| l.iter().all(|&c| own[c]))
    }

    /// Wins by continuous threats for `me` to move; `budget` bounds the work.
    fn forced(&self, me: &mut [bool; 64], you: &mut [bool; 64], budget: &mut u64) -> Option<bool> {
        self.win_length(me, you, budget, false)
            .map(|win| win.is_some())
    }

    /// The shortest win by continuous threats for `me` to move, in plies up to its
    /// four: `Some(None)` without one, `None` when `budget` runs out.
    fn shortest(
        &self,
        me: &mut [bool; 64],
        you: &mut [bool; 64],
        budget: &mut u64,
    ) -> Option<Option<u32>> {
        self.win_length(me, you, budget, true)
    }

    /// The length of the first win by continuous threats found for `me` to move
    /// (every one's shortest with `shortest`), in plies up to its four:
    /// `Some(None)` without one, `None` when `budget` runs out.
    fn win_length(
        &self,
        me: &mut [bool; 64],
        you: &mut [bool; 64],
        budget: &mut u64,
        shortest: bool,
    ) -> Option<Option<u32>> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if !self.winning_cells(me, you).is_empty() {
            return Some(Some(1));
        }
        let theirs = self.winning_cells(you, me);
        if theirs.len() >= 2 {
            return Some(None);
        }
        let mut best: Option<u32> = None;
        for m in 0..64 {
            if me[m] || you[m] || (theirs.len() == 1 && theirs[0] != m) {
                continue;
            }
            me[m] = true;
            let made = self.winning_cells(me, you);
            let result = match made.len() {
                0 => Some(None),
                1 => {
                    you[made[0]] = true;
                    let r = self.win_length(me, you, budget, shortest);
                    you[made[0]] = false;
                    r.map(|p| p.map(|p| p + 2))
                }
                _ => Some(Some(3)),
            };
            me[m] = false;
            if let Some(p) = result? {
                best = Some(best.map_or(p, |b| b.min(p)));
                if !shortest {
                    break;
                }
            }
        }
        Some(best)
    }

    /// Plays `me`'s moves from `search` against every defence: any reply but the
    /// forced block loses at once, so it is enough that each move threatens, the
    /// defender never has four or a threat the move ignores, and `me` gets four.
    fn replay_win(&self, search: &mut ForcedSearch, mut me: [bool; 64], mut you: [bool; 64]) {
        for _ in 0..64 {
            let pack = |b: &[bool; 64]| (0..64).filter(|&c| b[c]).fold(0u64, |m, c| m | 1 << c);
            let m = search
                .win(pack(&me), pack(&you))
                .expect("still a forced win");
            assert!(!me[m] && !you[m], "move {m} on an empty cell");
            let theirs = self.winning_cells(&you, &me);
            assert!(
                theirs.is_empty() || theirs == [m] || !self.winning_cells(&me, &you).is_empty()
            );
            me[m] = true;
            if self.four(&me) {
                return;
            }
            let made = self.winning_cells(&me, &you);
            assert!(!made.is_empty(), "move {m} makes no threat");
            assert!(
                self.winning_cells(&you, &me).is_empty(),
                "the defender could win at once"
            );
            // The defender blocks one threat (each in turn, over the replays).
            you[made[0]] = true;
            assert!(!self.four(&you));
        }
        panic!("the win never ended");
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

#[test]
fn lines_and_automorphisms_match_the_brute_force() {
    let oracle: HashSet<u64> = oracle_lines()
        .iter()
        .map(|l| l.iter().fold(0u64, |m, &c| m | 1 << c))
        .collect();
    assert_eq!(oracle.len(), 76);
    let ours: HashSet<u64> = lines().iter().copied().collect();
    assert_eq!(ours, oracle);
    // Every automorphism maps every oracle line onto an oracle line.
    for a in automorphisms() {
        for &l in &oracle {
            let image = (0..64)
                .filter(|c| l >> c & 1 == 1)
                .fold(0u64, |m, c| m | 1 << a.perm[c]);
            assert!(oracle.contains(&image));
        }
    }
}

#[test]
fn forced_wins_match_the_brute_force_on_random_positions() {
    let oracle = Oracle {
        lines: oracle_lines(),
    };
    let mut rng = Rng(0x51_0b1c);
    let (mut checked, mut wins, mut shortest_checked) = (0, 0, 0);
    let mut search = ForcedSearch::new();
    let checker = Checker::new();
    let mut checker_memo = tb::games::qubic::check::ForcedMemo::default();
    for game in 0..1500 {
        let stones = 6 + game % 18;
        let mut x = [false; 64];
        let mut o = [false; 64];
        let mut ok = true;
        for k in 0..stones {
            let empty: Vec<usize> = (0..64).filter(|&c| !x[c] && !o[c]).collect();
            let c = empty[rng.below(empty.len())];
            if k % 2 == 0 {
                x[c] = true
            } else {
                o[c] = true
            }
            if oracle.four(&x) || oracle.four(&o) {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        // The side to move: X after an even number of stones.
        let (me, you) = if stones % 2 == 0 { (x, o) } else { (o, x) };
        let mut budget = 200_000;
        let Some(expected) = oracle.forced(&mut me.clone(), &mut you.clone(), &mut budget) else {
            continue;
        };
        let pack = |b: &[bool; 64]| (0..64).filter(|&c| b[c]).fold(0u64, |m, c| m | 1 << c);
        let got = search.win(pack(&me), pack(&you));
        assert_eq!(
            got.is_some(),
            expected,
            "game {game}: {:?} vs {:?}",
            pack(&me),
            pack(&you)
        );
        // The strategy checker's own search (a third implementation) agrees.
        assert_eq!(
            checker.forced_win(pack(&me), pack(&you), &mut checker_memo),
            expected,
            "checker, game {game}"
        );
        // So does its canonical form (its own group), with the builder's.
        assert_eq!(
            checker.canonical((pack(&x), pack(&o))),
            canonical(pack(&x), pack(&o)).0
        );
        if expected {
            wins += 1;
            // The checker's search bounded by plies (verify's check of a record's
            // plies) finds a win within the shortest's length, none within less.
            let mut budget = 20_000;
            if let Some(Some(shortest)) =
                oracle.shortest(&mut me.clone(), &mut you.clone(), &mut budget)
            {
                let (m, y) = (pack(&me), pack(&you));
                if shortest > 1 {
                    let less = checker.forced_within(m, y, shortest - 2, &mut checker_memo);
                    assert_eq!(less, None, "game {game}: within {}", shortest - 2);
                }
                let within = checker.forced_within(m, y, shortest, &mut checker_memo);
                assert_eq!(within, Some(shortest), "game {game}");
                let line = search.line(m, y).expect("a win").len() as u32;
                assert!(line >= shortest, "game {game}: the builder's line");
                shortest_checked += 1;
            }
            oracle.replay_win(&mut search, me, you);
            // The win's attacking moves, replayed from the position, still win.
            let line = search.line(pack(&me), pack(&you)).expect("a win");
            let attack: Vec<usize> = line.iter().copied().step_by(2).collect();
            assert!(wins_by(pack(&me), pack(&you), &attack));
            // ... and fail when the defender has already taken the first one.
            if attack.len() > 1 {
                let mut you2 = you;
                you2[attack[0]] = true;
                if !oracle.four(&you2) {
                    assert!(!wins_by(pack(&me), pack(&you2), &attack));
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 1000, "{checked} positions checked");
    assert!(wins > 50, "{wins} forced wins among {checked}");
    assert!(
        shortest_checked > 200,
        "{shortest_checked} shortest wins checked"
    );
}

impl Oracle {
    /// The fewest strategic moves (X's moves other than forced blocks) X needs
    /// to win from `(x, o)`, X to move, counting O's replies once per class of
    /// the automorphism group: Some(cost) when at most `bound`, None when more or
    /// not a win; Err when `budget` runs out. Plain recursion over every move.
    fn least(
        &self,
        x: &mut [bool; 64],
        o: &mut [bool; 64],
        bound: u32,
        budget: &mut u64,
    ) -> Result<Option<u32>, ()> {
        if self.four(o) {
            return Ok(None);
        }
        let mut b = 30_000;
        match self.forced(x, o, &mut b) {
            None => return Err(()),
            Some(true) => return Ok(Some(0)),
            Some(false) => {}
        }
        if *budget == 0 {
            return Err(());
        }
        *budget -= 1;
        let theirs = self.winning_cells(o, x);
        if theirs.len() >= 2 || (0..64).all(|c| x[c] || o[c]) {
            return Ok(None);
        }
        let (moves, add): (Vec<usize>, u32) = if theirs.len() == 1 {
            (theirs, 0)
        } else {
            ((0..64).filter(|&c| !x[c] && !o[c]).collect(), 1)
        };
        if add > bound {
            return Ok(None);
        }
        let mut best: Option<u32> = None;
        for m in moves {
            let limit = best.map_or(bound, |b| b - 1) - add;
            x[m] = true;
            let r = self.least_after(x, o, limit, budget);
            x[m] = false;
            if let Some(c) = r? {
                best = Some(add + c);
                if c == 0 {
                    break;
                }
            }
            if best == Some(add) {
                break;
            }
        }
        Ok(best)
    }

    /// O to move: the sum over O's distinct replies (the block when X threatens).
    fn least_after(
        &self,
        x: &mut [bool; 64],
        o: &mut [bool; 64],
        bound: u32,
        budget: &mut u64,
    ) -> Result<Option<u32>, ()> {
        if self.four(x) {
            return Ok(Some(0));
        }
        let mine = self.winning_cells(x, o);
        if mine.len() >= 2 {
            return Ok(Some(0));
        }
        if !self.winning_cells(o, x).is_empty() {
            return Ok(None);
        }
        let replies: Vec<usize> = if mine.len() == 1 {
            mine
        } else {
            (0..64).filter(|&c| !x[c] && !o[c]).collect()
        };
        static CHECKER: std::sync::OnceLock<Checker> = std::sync::OnceLock::new();
        let checker = CHECKER.get_or_init(Checker::new);
        let pack = |b: &[bool; 64]| (0..64).filter(|&c| b[c]).fold(0u64, |m, c| m | 1 << c);
        let mut seen = HashSet::new();
        let mut sum = 0u32;
        for r in replies {
            o[r] = true;
            let class = checker.canonical((pack(x), pack(o)));
            let result = if seen.insert(class) {
                self.least(x, o, bound - sum, budget)
            } else {
                Ok(Some(0))
            };
            o[r] = false;
            match result? {
                Some(c) => sum += c,
                None => return Ok(None),
            }
        }
        Ok(Some(sum))
    }
}

#[test]
fn least_strategic_moves_match_the_brute_force() {
    use tb::games::qubic::position::Position;
    use tb::games::qubic::prover::{Prover, child_classes};
    use tb::games::qubic::shrink::Shrinker;
    use tb::games::qubic::strategy::Strategy;
    let oracle = Oracle {
        lines: oracle_lines(),
    };
    let unpack = |b: u64| {
        let mut a = [false; 64];
        for (c, slot) in a.iter_mut().enumerate() {
            *slot = b >> c & 1 == 1;
        }
        a
    };
    // X-to-move positions of real strategies (small costs), and random positions
    // a few moves off them (won or not).
    let mut positions = Vec::new();
    let start = Position::parse("0-63-21-42-15").unwrap();
    let mut prover = Prover::new(1 << 28);
    for (_, key) in child_classes(canonical(start.x, start.o).0)
        .into_iter()
        .take(12)
    {
        assert!(prover.prove_key(key));
        let strategy = Strategy::extract(&mut prover, key).unwrap();
        positions.extend(strategy.choices.keys().copied());
    }
    let mut rng = Rng(0x5eed_c057);
    for i in 0..positions.len() * 2 {
        let (mut x, mut o) = positions[i / 2];
        for _ in 0..1 + i % 3 {
            let empty: Vec<usize> = (0..64).filter(|&c| (x | o) >> c & 1 == 0).collect();
            x |= 1 << empty[rng.below(empty.len())];
            let empty: Vec<usize> = (0..64).filter(|&c| (x | o) >> c & 1 == 0).collect();
            o |= 1 << empty[rng.below(empty.len())];
        }
        positions.push((x, o));
    }
    let mut shrinker = Shrinker::new(1 << 28);
    let (mut compared, mut costly) = (0, 0);
    for &(x, o) in &positions {
        // The brute force is slow on open boards.
        if (x | o).count_ones() < 10 || oracle.four(&unpack(x)) || oracle.four(&unpack(o)) {
            continue;
        }
        for bound in [1u32, 2] {
            let mut budget = 20_000;
            let Ok(expected) = oracle.least(&mut unpack(x), &mut unpack(o), bound, &mut budget)
            else {
                continue;
            };
            assert_eq!(
                shrinker.least_cost(x, o, bound),
                expected,
                "{x:#x} {o:#x} bound {bound}"
            );
            compared += 1;
            costly += usize::from(expected.is_some_and(|c| c >= 1));
        }
    }
    eprintln!(
        "{compared} compared of {}, {costly} of cost 1 or 2",
        positions.len()
    );
    assert!(compared > 200, "{compared} compared of {}", positions.len());
    assert!(costly > 25, "{costly} positions of cost 1 or 2");
}
