//! The independent checker of a winning strategy (`tb verify` on a Qubic file). It
//! shares no code with the search: its lines come from pairs of cells, its 192
//! automorphisms from closing five generators under composition (applied cell by
//! cell), and its forced-win search is a plain recursion over line counts. It
//! walks the strategy from the start: at every strategic position X's stored move
//! must be legal (and block O's threat if O has one), every O reply to it must lead
//! to a strategic position of the strategy or to a position the checker itself
//! proves X wins by continuous threats. Anything else is a gap, reported.

use std::collections::{HashMap, HashSet};

/// A position: X's cells, O's cells.
type Pair = (u64, u64);

/// What a check found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// Strategic positions (canonical) the walk visited.
    pub strategic: u64,
    /// Positions confirmed as forced wins (canonical).
    pub forced: u64,
    /// Gaps, described (the first hundred).
    pub gaps: Vec<String>,
    /// Gaps in all.
    pub gap_count: u64,
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

    /// Whether `me` (to move) wins against `you` by continuous threats: complete a
    /// line, or make a threat (blocking `you`'s one threat if it has one) that
    /// `you` must answer, until two threats stand.
    pub fn forced_win(&self, me: u64, you: u64, memo: &mut HashMap<Pair, bool>) -> bool {
        if !self.completions(me, you).is_empty() {
            return true;
        }
        if let Some(&known) = memo.get(&(me, you)) {
            return known;
        }
        let theirs = self.completions(you, me);
        let won = if theirs.len() >= 2 {
            false
        } else {
            let empty = !(me | you);
            let cells: Vec<usize> = match theirs.first() {
                Some(&c) => vec![c],
                None => (0..64).filter(|&c| empty >> c & 1 == 1).collect(),
            };
            cells.into_iter().any(|c| {
                // Only a move on a line with two of `me` and none of `you` threatens.
                if !self.lines_of_cell[c].iter().any(|&l| {
                    let line = &self.lines[l];
                    line.iter().filter(|&&d| me >> d & 1 == 1).count() == 2
                        && line.iter().all(|&d| you >> d & 1 == 0)
                }) {
                    return false;
                }
                let me2 = me | 1 << c;
                let made = self.completions(me2, you);
                match made.len() {
                    0 => false,
                    1 => self.forced_win(me2, you | 1 << made[0], memo),
                    _ => true,
                }
            })
        };
        memo.insert((me, you), won);
        won
    }

    /// Walks the strategy from `starts` (X to move), `choice` giving X's stored
    /// move in a canonical position.
    pub fn check(&self, starts: &[Pair], choice: &dyn Fn(Pair) -> Option<u8>) -> CheckReport {
        let mut report = CheckReport::default();
        let mut seen: HashSet<Pair> = HashSet::new();
        let mut memo: HashMap<Pair, bool> = HashMap::new();
        let mut stack = starts.to_vec();
        while let Some(position) = stack.pop() {
            let (x, o) = self.canonical(position);
            if !seen.insert((x, o)) {
                continue;
            }
            let mut gap = |what: String| {
                report.gap_count += 1;
                if report.gaps.len() < 100 {
                    report.gaps.push(what);
                }
            };
            let Some(cell) = choice((x, o)) else {
                if self.forced_win(x, o, &mut memo) {
                    report.forced += 1;
                } else {
                    gap(format!(
                        "{}: no move stored and no forced win",
                        text((x, o))
                    ));
                }
                continue;
            };
            report.strategic += 1;
            let cell = cell as usize;
            if cell >= 64 || (x | o) >> cell & 1 == 1 {
                gap(format!(
                    "{}: stored move {cell} is not an empty cell",
                    text((x, o))
                ));
                continue;
            }
            let o_threats = self.completions(o, x);
            if !o_threats.is_empty() && o_threats != [cell] {
                gap(format!(
                    "{}: O threatens {o_threats:?} and the stored move {cell} does not stop it",
                    text((x, o))
                ));
                continue;
            }
            let x2 = x | 1 << cell;
            if self
                .lines
                .iter()
                .any(|l| l.iter().all(|&c| x2 >> c & 1 == 1))
            {
                continue;
            }
            for r in 0..64 {
                if (x2 | o) >> r & 1 == 0 {
                    stack.push((x2, o | 1 << r));
                }
            }
        }
        report
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
