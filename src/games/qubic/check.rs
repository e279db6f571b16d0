//! The independent checker of a winning strategy (`tb verify` on a Qubic file). It
//! shares no code with the search: its lines come from pairs of cells, its 192
//! automorphisms from closing five generators under composition (applied cell by
//! cell), and its forced-win search is a plain recursion over line counts. It
//! walks a strategy from its start: at every stored position X's move must be
//! legal (and block O's threat if O has one), and every O reply to it must lead to
//! a stored position whose claim is at most the plies left (the record's plies
//! less X's move and the reply), or to a position the checker itself proves X wins
//! by continuous threats within them; the strategic moves a record claims below
//! must be its own move's plus its replies'. A stored position the walk never
//! reaches is a gap too: nothing stored goes unchecked. Every gap is reported.

use std::collections::{HashMap, HashSet};

/// A position: X's cells, O's cells.
type Pair = (u64, u64);

/// What a strategy stores for a canonical position (X to move).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A record of the strategy walked: X's move and what the record claims: X's
    /// four within `plies` plies against any defence, and `subtree` strategic moves
    /// below (a tree count, X's move included unless it blocks O's threat).
    Move {
        /// X's move.
        cell: u8,
        /// Plies to X's four it claims.
        plies: u8,
        /// Strategic moves below it claims.
        subtree: u32,
    },
    /// A position whose record another walk checks: only its claims count here
    /// (the walk does not go below it).
    Claimed {
        /// Plies to X's four it claims.
        plies: u8,
        /// Strategic moves below it claims.
        subtree: u32,
    },
}

impl Stored {
    fn claims(self) -> (u8, u32) {
        match self {
            Stored::Move { plies, subtree, .. } | Stored::Claimed { plies, subtree } => {
                (plies, subtree)
            }
        }
    }
}

/// What a check found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// Strategic positions (canonical, distinct) the walks checked.
    pub strategic: u64,
    /// Positions confirmed as forced wins (canonical, distinct).
    pub forced: u64,
    /// Gaps, described (the first hundred).
    pub gaps: Vec<String>,
    /// Gaps in all.
    pub gap_count: u64,
}

impl CheckReport {
    fn gap(&mut self, what: String) {
        self.gap_count += 1;
        if self.gaps.len() < 100 {
            self.gaps.push(what);
        }
    }
}

/// A budget of plies that bounds nothing (a game has at most 64).
const UNBOUNDED: u32 = 64;

/// What the forced-win search knows of a position (attacker to move).
#[derive(Debug, Clone, Copy, Default)]
struct ForcedKnown {
    /// The length of a win found, in plies.
    win: Option<u32>,
    /// No win within this many plies.
    fails_within: u32,
}

/// The forced-win search's memory, per (attacker, defender).
#[derive(Default)]
pub struct ForcedMemo(HashMap<Pair, ForcedKnown>);

/// The state of a check over several walks (one per stored block): the forced
/// wins found so far, and the positions counted.
#[derive(Default)]
pub struct CheckRun {
    memo: ForcedMemo,
    strategic: HashSet<Pair>,
    fringe: HashSet<Pair>,
    report: CheckReport,
}

impl CheckRun {
    /// What the walks found.
    pub fn report(self) -> CheckReport {
        CheckReport {
            strategic: self.strategic.len() as u64,
            forced: self.fringe.len() as u64,
            ..self.report
        }
    }
}

/// The checker's own board knowledge.
pub struct Checker {
    lines: Vec<[usize; 4]>,
    lines_of_cell: Vec<Vec<usize>>,
    perms: Vec<[u8; 64]>,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

impl Checker {
    /// Builds the lines and the automorphism group from scratch.
    pub fn new() -> Checker {
        let lines = lines_from_pairs();
        let mut lines_of_cell = vec![Vec::new(); 64];
        for (i, l) in lines.iter().enumerate() {
            for &c in l {
                lines_of_cell[c].push(i);
            }
        }
        let perms = group_by_closure(&lines);
        Checker {
            lines,
            lines_of_cell,
            perms,
        }
    }

    /// Lines of the board (76 when it is right).
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Automorphisms found (192 when it is right).
    pub fn group_order(&self) -> usize {
        self.perms.len()
    }

    fn image(&self, p: &[u8; 64], set: u64) -> u64 {
        let mut out = 0;
        let mut rest = set;
        while rest != 0 {
            let c = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            out |= 1u64 << p[c];
        }
        out
    }

    /// The least image of a position under the group.
    pub fn canonical(&self, (x, o): Pair) -> Pair {
        self.perms
            .iter()
            .map(|p| (self.image(p, x), self.image(p, o)))
            .min()
            .expect("the identity")
    }

    /// Empty cells completing a line of three of `own` with no `other` on it.
    fn completions(&self, own: u64, other: u64) -> Vec<usize> {
        let mut out = Vec::new();
        for l in &self.lines {
            let mine = l.iter().filter(|&&c| own >> c & 1 == 1).count();
            let theirs = l.iter().filter(|&&c| other >> c & 1 == 1).count();
            if mine == 3 && theirs == 0 {
                let c = *l
                    .iter()
                    .find(|&&c| own >> c & 1 == 0)
                    .expect("an empty cell");
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// Whether `me` (to move) wins against `you` by continuous threats.
    pub fn forced_win(&self, me: u64, you: u64, memo: &mut ForcedMemo) -> bool {
        self.forced_within(me, you, UNBOUNDED, memo).is_some()
    }

    /// A win of `me` (to move) against `you` by continuous threats within `budget`
    /// plies up to `me`'s four, if there is one: its length. `me` completes a line
    /// (1 ply), or makes a threat (blocking `you`'s one threat if it has one) that
    /// `you` must block, until two threats stand (then a block and the four: 3).
    /// Not always the shortest win: the first found within the budget.
    pub fn forced_within(
        &self,
        me: u64,
        you: u64,
        budget: u32,
        memo: &mut ForcedMemo,
    ) -> Option<u32> {
        if !self.completions(me, you).is_empty() {
            return (budget >= 1).then_some(1);
        }
        let known = memo.0.get(&(me, you)).copied().unwrap_or_default();
        if let Some(win) = known.win.filter(|&w| w <= budget) {
            return Some(win);
        }
        if budget <= known.fails_within {
            return None;
        }
        let theirs = self.completions(you, me);
        let mut found = None;
        if theirs.len() < 2 && budget >= 3 {
            let empty = !(me | you);
            let cells: Vec<usize> = match theirs.first() {
                Some(&c) => vec![c],
                None => (0..64).filter(|&c| empty >> c & 1 == 1).collect(),
            };
            found = cells.into_iter().find_map(|c| {
                // Only a move on a line with two of `me` and none of `you` threatens.
                if !self.lines_of_cell[c].iter().any(|&l| {
                    let line = &self.lines[l];
                    line.iter().filter(|&&d| me >> d & 1 == 1).count() == 2
                        && line.iter().all(|&d| you >> d & 1 == 0)
                }) {
                    return None;
                }
                let me2 = me | 1 << c;
                let made = self.completions(me2, you);
                match made.len() {
                    0 => None,
                    1 => self
                        .forced_within(me2, you | 1 << made[0], budget - 2, memo)
                        .map(|p| p + 2),
                    _ => Some(3),
                }
            });
        }
        let entry = memo.0.entry((me, you)).or_default();
        match found {
            Some(len) => entry.win = Some(entry.win.map_or(len, |w| w.min(len))),
            None => entry.fails_within = entry.fails_within.max(budget),
        }
        found
    }

    /// Walks a strategy from `starts` (X to move; positions in any form) through
    /// the moves of `stored` (canonical positions), adding what it finds to `run`.
    /// Every [`Stored::Move`] of `stored` must be reached.
    pub fn check(&self, starts: &[Pair], stored: &HashMap<Pair, Stored>, run: &mut CheckRun) {
        // Positions this walk has checked: records, and the fringe's forced wins.
        let mut seen: HashSet<Pair> = HashSet::new();
        let mut stack: Vec<Pair> = starts.iter().map(|&p| self.canonical(p)).collect();
        while let Some(key) = stack.pop() {
            if !seen.insert(key) {
                continue;
            }
            match stored.get(&key) {
                Some(&Stored::Move {
                    cell,
                    plies,
                    subtree,
                }) => {
                    run.strategic.insert(key);
                    let below =
                        self.check_record(key, (cell, plies, subtree), stored, &mut seen, run);
                    stack.extend(below);
                }
                Some(Stored::Claimed { .. }) => {}
                None => {
                    if self.fringe(key, UNBOUNDED, run).is_none() {
                        run.report
                            .gap(format!("{}: no move stored and no forced win", text(key)));
                    }
                }
            }
        }
        let mut unreached: Vec<Pair> = stored
            .iter()
            .filter(|(k, s)| matches!(s, Stored::Move { .. }) && !seen.contains(k))
            .map(|(&k, _)| k)
            .collect();
        unreached.sort();
        for k in unreached {
            run.report.gap(format!(
                "{}: stored, but the strategy never reaches it from the start",
                text(k)
            ));
        }
    }

    /// X's forced win within `budget` plies from a fringe position (counted when
    /// there is one).
    fn fringe(&self, key: Pair, budget: u32, run: &mut CheckRun) -> Option<u32> {
        let plies = self.forced_within(key.0, key.1, budget, &mut run.memo);
        if plies.is_some() {
            run.fringe.insert(key);
        }
        plies
    }

    /// Checks one record (`key`, canonical; its move, plies and subtree) against
    /// its replies: gaps go to `run`, fringe replies are proven here (once per
    /// walk: `seen`). Returns the replies whose records are still to be walked.
    fn check_record(
        &self,
        key: Pair,
        (cell, plies, subtree): (u8, u8, u32),
        stored: &HashMap<Pair, Stored>,
        seen: &mut HashSet<Pair>,
        run: &mut CheckRun,
    ) -> Vec<Pair> {
        let (x, o) = key;
        let cell = cell as usize;
        if cell >= 64 || (x | o) >> cell & 1 == 1 {
            run.report.gap(format!(
                "{}: stored move {cell} is not an empty cell",
                text(key)
            ));
            return Vec::new();
        }
        let o_threats = self.completions(o, x);
        if !o_threats.is_empty() && o_threats != [cell] {
            run.report.gap(format!(
                "{}: O threatens {o_threats:?} and the stored move {cell} does not stop it",
                text(key)
            ));
            return Vec::new();
        }
        // A move that blocks O's threat is forced: only a free choice counts.
        let own = u64::from(o_threats.is_empty());
        let x2 = x | 1 << cell;
        let mut replies: Vec<Pair> = Vec::new();
        if !self
            .lines
            .iter()
            .any(|l| l.iter().all(|&c| x2 >> c & 1 == 1))
        {
            for r in 0..64 {
                if (x2 | o) >> r & 1 == 0 {
                    let child = self.canonical((x2, o | 1 << r));
                    if !replies.contains(&child) {
                        replies.push(child);
                    }
                }
            }
        }
        // Every reply must leave X's four within the plies claimed, less X's move
        // and the reply: the reply's own claim, or a forced win found within them.
        let budget = u32::from(plies).saturating_sub(2);
        let (mut below, mut slower, mut walk) = (own, None, Vec::new());
        for &child in &replies {
            match stored.get(&child) {
                Some(&s) => {
                    let (p, t) = s.claims();
                    below += u64::from(t);
                    if matches!(s, Stored::Move { .. }) {
                        walk.push(child);
                    }
                    if u32::from(p) > budget {
                        slower.get_or_insert(child);
                    }
                }
                None => {
                    let first = seen.insert(child);
                    if self.fringe(child, budget, run).is_some() {
                        continue;
                    }
                    if self.fringe(child, UNBOUNDED, run).is_some() {
                        slower.get_or_insert(child);
                    } else if first {
                        run.report
                            .gap(format!("{}: no move stored and no forced win", text(child)));
                    }
                }
            }
        }
        if let Some(child) = slower {
            run.report.gap(format!(
                "{}: claims X's four within {plies} plies, but after the reply to {} X needs more",
                text(key),
                text(child)
            ));
        }
        let below = below.min(u64::from(u32::MAX));
        if u64::from(subtree) != below {
            run.report.gap(format!(
                "{}: claims {subtree} strategic moves below, its move and replies make {below}",
                text(key)
            ));
        }
        walk
    }
}

/// The 64-character text of a position.
fn text((x, o): Pair) -> String {
    (0..64)
        .map(|c| {
            if x >> c & 1 == 1 {
                'X'
            } else if o >> c & 1 == 1 {
                'O'
            } else {
                '.'
            }
        })
        .collect()
}

/// Every line through two cells `a < b` whose coordinates step by -1, 0 or 1
/// between neighbours: from `a`, repeat `b - a` (as a vector) until four cells.
fn lines_from_pairs() -> Vec<[usize; 4]> {
    let xyz = |c: usize| [(c % 4) as i32, (c / 4 % 4) as i32, (c / 16) as i32];
    let mut out: HashSet<[usize; 4]> = HashSet::new();
    for a in 0..64 {
        for b in a + 1..64 {
            let (pa, pb) = (xyz(a), xyz(b));
            let step = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]];
            if step.iter().any(|s| s.abs() > 1) {
                continue;
            }
            let cells: Option<Vec<usize>> = (0..4)
                .map(|k| {
                    let q = [
                        pa[0] + k * step[0],
                        pa[1] + k * step[1],
                        pa[2] + k * step[2],
                    ];
                    q.iter()
                        .all(|v| (0..4).contains(v))
                        .then(|| (q[0] + 4 * q[1] + 16 * q[2]) as usize)
                })
                .collect();
            if let Some(mut cells) = cells {
                cells.sort();
                out.insert([cells[0], cells[1], cells[2], cells[3]]);
            }
        }
    }
    let mut lines: Vec<[usize; 4]> = out.into_iter().collect();
    lines.sort();
    lines
}

/// The automorphism group: closure of five generators (two coordinate swaps, a
/// reflection, and the two inner maps applied to every coordinate), each checked
/// to map lines onto lines.
fn group_by_closure(lines: &[[usize; 4]]) -> Vec<[u8; 64]> {
    let map = |f: &dyn Fn([usize; 3]) -> [usize; 3]| -> [u8; 64] {
        std::array::from_fn(|c| {
            let q = f([c % 4, c / 4 % 4, c / 16]);
            (q[0] + 4 * q[1] + 16 * q[2]) as u8
        })
    };
    let swap_inner = |v: usize| [0, 2, 1, 3][v];
    let pair_inner = |v: usize| [1, 0, 3, 2][v];
    let generators = [
        map(&|[a, b, c]| [b, a, c]),
        map(&|[a, b, c]| [a, c, b]),
        map(&|[a, b, c]| [3 - a, b, c]),
        map(&|[a, b, c]| [swap_inner(a), swap_inner(b), swap_inner(c)]),
        map(&|[a, b, c]| [pair_inner(a), pair_inner(b), pair_inner(c)]),
    ];
    let line_set: HashSet<[usize; 4]> = lines.iter().copied().collect();
    for g in &generators {
        for l in lines {
            let mut image = l.map(|c| g[c] as usize);
            image.sort();
            assert!(line_set.contains(&image), "a generator breaks a line");
        }
    }
    let identity: [u8; 64] = std::array::from_fn(|c| c as u8);
    let mut group: Vec<[u8; 64]> = vec![identity];
    let mut known: HashSet<[u8; 64]> = group.iter().copied().collect();
    let mut i = 0;
    while i < group.len() {
        let p = group[i];
        for g in &generators {
            let composed: [u8; 64] = std::array::from_fn(|c| g[p[c] as usize]);
            if known.insert(composed) {
                group.push(composed);
            }
        }
        i += 1;
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checker_finds_76_lines_and_192_automorphisms() {
        let c = Checker::new();
        assert_eq!(c.line_count(), 76);
        assert_eq!(c.group_order(), 192);
    }
}
