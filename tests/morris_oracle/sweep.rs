//! A sweep solver over explicit positions with stones in hand, for rule sets
//! whose placement phase the board-specific oracles do not cover: positions are
//! enumerated per class of the 16 symmetries, then decided by ply (d = 1, 2, ...:
//! won in d plies when a move reaches a position lost in d - 1, lost in d when
//! every move reaches a position won in fewer; what is left is drawn). The rules
//! (move generator, symmetries, which hands occur) come from the caller, so the
//! same solver serves Lasker Morris (moves during placement, cycles) and
//! Morabaraba (its own board).

use std::collections::HashMap;

use super::{ALL, POINT_NAMES, Val, bits, position_text};

/// What the solver needs of a rule set.
pub struct Rules<'a> {
    /// The least image of (mover, opponent) under the symmetries, packed as
    /// `mover << 24 | opponent`.
    pub canonical: &'a dyn Fn(u32, u32) -> u64,
    /// The moves of a position: `None` for one that wins at once, else the next
    /// position as the other side sees it (its stones first, its hand first).
    pub successors: &'a dyn Fn(Sweep) -> Vec<Option<Sweep>>,
    /// Which hands ([side to move, other side]) occur in the game.
    pub hands_ok: &'a dyn Fn([u32; 2]) -> bool,
    /// Positions without moves that are drawn, not lost.
    pub drawn: &'a dyn Fn(Sweep) -> bool,
}

/// A position: (mover, opponent, [mover's hand, opponent's hand]).
pub type Sweep = (u32, u32, [u32; 2]);

/// Every k-subset of the points of `within`.
pub fn subsets(k: u32, within: u32) -> Vec<u32> {
    let mut out = vec![0u32];
    for p in bits(within) {
        let more: Vec<u32> = out
            .iter()
            .filter(|s| s.count_ones() < k)
            .map(|s| s | 1 << p)
            .collect();
        out.extend(more);
    }
    out.retain(|s| s.count_ones() == k);
    out
}

/// 2 x stones in hand + stones on the board, both sides: every move that is not
/// a plain slide (a placement, a capture) lowers it, a slide keeps it.
pub fn weight(me: u32, you: u32, hands: [u32; 2]) -> u32 {
    2 * (hands[0] + hands[1]) + me.count_ones() + you.count_ones()
}

/// The game with `stones` a side from the positions of weight `from` up (a set
/// every move from which stays in it or leaves to a lower weight), one position
/// per class of the 16 symmetries (its least image, `canonical` packing mover and
/// opponent as `mover << 24 | opponent`), with the hands `hands_ok` accepts: the
/// positions and their values. `successors` gives a position's moves (`None`: a
/// win at once, else the next position as the other side sees it); a move to a
/// lower weight reads that position's value from `below`; `drawn` marks the
/// positions without moves the rules call a draw (a full board).
pub fn solve(
    rules: &Rules<'_>,
    stones: u32,
    from: u32,
    below: impl Fn(Sweep) -> Val,
) -> Vec<(Sweep, Val)> {
    let Rules {
        canonical,
        successors,
        hands_ok,
        drawn,
    } = rules;
    let mut positions: Vec<Sweep> = Vec::new();
    let mut number: HashMap<(u64, [u32; 2]), u32> = HashMap::new();
    for m in 0..=stones {
        for o in 0..=stones {
            for hm in 0..=stones - m {
                for ho in 0..=stones - o {
                    if m + hm < 3
                        || o + ho < 3
                        || 2 * (hm + ho) + m + o < from
                        || !hands_ok([hm, ho])
                    {
                        continue;
                    }
                    for me in subsets(m, ALL) {
                        for you in subsets(o, ALL & !me) {
                            let key = canonical(me, you);
                            number.entry((key, [hm, ho])).or_insert_with(|| {
                                positions.push(((key >> 24) as u32, key as u32 & ALL, [hm, ho]));
                                positions.len() as u32 - 1
                            });
                        }
                    }
                }
            }
        }
    }
    // Per position: its children in the set (by number), the values of those
    // below it, and whether a move wins at once.
    let mut inside: Vec<Vec<u32>> = Vec::with_capacity(positions.len());
    let mut outside: Vec<Vec<Val>> = Vec::with_capacity(positions.len());
    let mut wins_now = vec![false; positions.len()];
    for (i, &(me, you, hands)) in positions.iter().enumerate() {
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        for child in successors((me, you, hands)) {
            match child {
                None => wins_now[i] = true,
                Some((a, b, h)) if weight(a, b, h) >= from => {
                    ins.push(number[&(canonical(a, b), h)]);
                }
                Some(c) => outs.push(below(c)),
            }
        }
        inside.push(ins);
        outside.push(outs);
    }
    // Sweeps by ply, until two in a row decide nothing and no value from below
    // can decide anything any more.
    let longest_below = outside
        .iter()
        .flatten()
        .map(|v| match v {
            Val::Win(p) | Val::Loss(p) => *p,
            Val::Draw => 0,
        })
        .max()
        .unwrap_or(0);
    let mut value: Vec<Option<Val>> = vec![None; positions.len()];
    let mut open: Vec<usize> = (0..positions.len()).collect();
    let mut quiet = 0;
    let mut d = 0;
    while quiet < 2 || d <= longest_below + 1 {
        let mut decided = Vec::new();
        open.retain(|&i| {
            let v = if d % 2 == 1 {
                let wins = (d == 1 && wins_now[i])
                    || inside[i]
                        .iter()
                        .any(|&c| value[c as usize] == Some(Val::Loss(d - 1)))
                    || outside[i].contains(&Val::Loss(d - 1));
                wins.then_some(Val::Win(d))
            } else {
                let all_won = !wins_now[i]
                    && !drawn(positions[i])
                    && inside[i]
                        .iter()
                        .all(|&c| matches!(value[c as usize], Some(Val::Win(_))))
                    && outside[i]
                        .iter()
                        .all(|v| matches!(v, Val::Win(p) if *p < d));
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

/// The position text of docs/FORMAT.md §4: a character per point, the side to
/// move, the hands of White and Black.
pub fn text((me, you, hands): Sweep, white: bool) -> String {
    let (hw, hb) = if white {
        (hands[0], hands[1])
    } else {
        (hands[1], hands[0])
    };
    format!("{} {hw} {hb}", position_text(me, you, white))
}

/// Compares every position of `solved` with what the file under test says
/// (`file_value` of a position text), for each colour to move `colours` gives
/// (values are relative to the side to move); fails listing the first
/// differences. Returns how many positions were won, lost and drawn.
pub fn compare(
    solved: &[(Sweep, Val)],
    colours: impl Fn(Sweep) -> &'static [bool],
    file_value: impl Fn(&str) -> String,
) -> [usize; 3] {
    let mut wrong = Vec::new();
    let mut seen = [0usize; 3];
    for &(pos, v) in solved {
        seen[match v {
            Val::Win(_) => 0,
            Val::Loss(_) => 1,
            Val::Draw => 2,
        }] += 1;
        for &white in colours(pos) {
            let text = text(pos, white);
            let got = file_value(&text);
            if got != v.to_string() && wrong.len() < 10 {
                wrong.push(format!("{text}: tb {got}, oracle {v}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    seen
}

/// Checks `tb probe --json`'s answer for the start (the empty board, `stones` in
/// each hand, White to move) against `solved`: the position text, its value, and
/// each of the 24 first placements' value (the child as `canonical` gives it).
pub fn check_start(
    answer: &serde_json::Value,
    stones: u32,
    solved: &HashMap<Sweep, Val>,
    canonical: impl Fn(u32, u32) -> u64,
) {
    assert_eq!(
        answer["position"],
        format!("........................ w {stones} {stones}")
    );
    assert_eq!(
        answer["value"],
        solved[&(0, 0, [stones, stones])].to_string()
    );
    let moves = answer["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 24);
    for mv in moves {
        let name = mv["move"].as_str().unwrap();
        let p = POINT_NAMES.iter().position(|n| *n == name).unwrap();
        let key = canonical(0, 1 << p);
        let child = ((key >> 24) as u32, key as u32 & ALL, [stones, stones - 1]);
        assert_eq!(
            mv["value"],
            Val::from_child(solved[&child]).to_string(),
            "{name}"
        );
    }
}
