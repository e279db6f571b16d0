//! Dominated string openings: of the sacrifices that open one string, one is searched.
//!
//! In a position `p` of the plain game where no box can be captured, every
//! sacrifice (a line that gives a box its third side) is a line of a *string*: a
//! maximal path `B1 .. Bn` of boxes with exactly two open sides each, whose lines
//! are `l0 .. ln` (`li` between `Bi` and `Bi+1`). Its end line `l0` borders `B1` and
//! either nothing (the edge of the board) or a box `J0` that is not in the string, so
//! has three or four open sides (no box is capturable, and an open line borders it);
//! the same for `ln` and `Jn`; or a closed path, a *loop*. Write
//! `S` for the string's lines and `v = V(p | S)`, the value of the position once
//! they are all drawn. Call the string *clear* unless `J0` and `Jn` are one box
//! with three open sides.
//!
//! **Claim 1 (one box).** If `n = 1`, both lines of the string are worth `-(1 + v)`.
//! *Proof.* Drawing `l1` gives `B1` its third side; `l0` completes it, and gives its
//! other box `J0`, if any, at most its second side (`J0` is not `J1`: two boxes
//! share at most one side), so rule 1 of the search forces the capture:
//! `V(p|l1) = 1 + V(p|S)`. The same holds for `l0`.
//!
//! **Claim 2 (two boxes).** If `n = 2`, `l1` is worth `-(2 + v)` and the ends at
//! most that. *Proof.* Drawing `l1` gives `B1` and `B2` their third sides; `l0`
//! completes `B1` and gives `J0` (which is not `J2`, not being adjacent to both `B1`
//! and `B2`) at most its second side, so rule 1 forces it, and then `l2` likewise:
//! `V(p|l1) = 2 + v`. After `l0` (or `l2`) the opponent may still take both boxes,
//! with `l1` and `l2`, so `V(p|l0) >= 2 + v`.
//!
//! **Claim 3 (three boxes or more).** If `n >= 3` and the string is clear, both end
//! lines are worth `-max(n + v, n - 4 - v)`, and every other line at most that.
//! *Proof.* Let `qj` be `p|l0` after the opponent took `B1 .. Bj` with `l1 .. lj`,
//! so that `Bj+1` has three sides and no other box does. In `qj` the capture
//! `lj+1` completes `Bj+1` only and gives `Bj+2` (if `j + 2 <= n`) its third side,
//! so by rule 2 every move that completes nothing is worse than it, but
//! `y = lj+2`; and `y` is worse too while `j + 3 <= n`, because `y` borders
//! `Bj+3`, which has two sides, whose other open side `lj+3` completes no box (its
//! other box is `Bj+4`, or `Jn`, which has at least three open sides even after
//! `l0` because the string is clear, or nothing). So `V(qj) = 1 + V(qj+1)` for
//! `j <= n - 3`. In `qn-1`, `ln` completes `Bn` and gives `Jn` at most its second
//! side (clear string), so rule 1 gives `V(qn-1) = 1 + v`. In `qn-2`, besides
//! `ln-1` (worth `2 + v`) the opponent may draw `y = ln`, which completes nothing
//! (`Jn` has at least two open sides left), after which `ln-1` completes both
//! `Bn-1` and `Bn` and rule 1 forces it: `y` is worth `-(2 + v)`. So
//! `V(qn-2) = max(2 + v, -2 - v)` and `V(p|l0) = max(n + v, n - 4 - v)`; the same
//! for `ln` by symmetry. After any inner line `li` (`0 < i < n`) the opponent may
//! take the two parts, every box, ending on `p|S` (`n + v`), or, with a part of two
//! boxes or more (`n >= 3`), take everything but that part's last two boxes `Bn-1`
//! and `Bn` (or `B2` and `B1`) and decline with the end line `ln` (`l0`), which
//! completes nothing (clear string), after which the other player takes both with
//! rule 1 (`n - 4 - v`). So `V(p|li) >= V(p|l0)`.
//!
//! **Claim 4 (loops).** Every line of a loop is worth the same. *Proof.* A
//! position's value depends only on which open lines border which unfinished boxes
//! (a line completes a box when it is the box's last open line). Each box of a loop
//! has just its two loop lines open, and each loop line borders two loop boxes, so
//! turning the loop by one box (box `Bi` to `Bi+1`, line `li` to `li+1`, everything
//! else fixed) maps that structure onto itself, and the game after one loop line onto
//! the game after the next.
//!
//! So of a string's lines the search keeps one: either line of one box, the middle
//! line of two, an end line of three or more, any line of a loop (the lowest of
//! those still candidates, so that a symmetric position, which searches the lowest
//! line of each orbit, still searches one: all the kept lines of an orbit's strings
//! are worth the same). A kept move is worth at least as much as each pruned one, so fail-soft
//! alpha-beta returns the same bounds.
//!
//! A unit test checks every pruned move against the kept one with a brute force on
//! random positions where the rule fires; `tests/search_oracle.rs` checks the
//! search, which knows nothing of it, against an independent brute force.

use super::{NO_BOX, Rules};
use crate::games::dots::board::Lines;

impl Rules {
    /// The sacrifices among `sacrifices` that another one kept is worth at least as
    /// much as (module doc). `position` is of the plain game and has no capturable
    /// box; `two_sided` is the mask of its boxes with two open sides.
    pub(super) fn dominated_openings(
        &self,
        position: Lines,
        sacrifices: Lines,
        two_sided: u64,
    ) -> Lines {
        let mut pruned = 0;
        self.for_each_string(position, sacrifices, two_sided, |lines, kept| {
            pruned |= lines & sacrifices & !kept;
        });
        pruned
    }

    /// Calls `f(lines, kept)` for each string of `position` (module doc) that has a
    /// line to keep: its lines, and the one of them among `sacrifices` kept.
    fn for_each_string(
        &self,
        position: Lines,
        sacrifices: Lines,
        mut two_sided: u64,
        mut f: impl FnMut(Lines, Lines),
    ) {
        let open_sides = |b: usize| self.boxes[b] & !position;
        let across = |line: usize, b: usize| {
            let [a, c] = self.adjacent[line];
            if a == b { c } else { a }
        };
        while two_sided != 0 {
            let start = two_sided.trailing_zeros() as usize;
            let sides = open_sides(start);
            let (first, second) = (
                sides.trailing_zeros() as usize,
                63 - sides.leading_zeros() as usize,
            );
            // Walk from `start` through each of its open sides to the string's end:
            // the end line and the box beyond it (`NO_BOX`: the edge).
            let mut lines = sides;
            let mut boxes = 1u32;
            let mut ends = [(0usize, NO_BOX); 2];
            let mut closed = false;
            two_sided &= !(1 << start);
            for (slot, from) in [first, second].into_iter().enumerate() {
                let (mut at, mut line) = (start, from);
                loop {
                    let next = across(line, at);
                    if next == start {
                        closed = true;
                        break;
                    }
                    if next == NO_BOX || two_sided >> next & 1 == 0 {
                        ends[slot] = (line, next);
                        break;
                    }
                    two_sided &= !(1 << next);
                    boxes += 1;
                    let next_sides = open_sides(next);
                    lines |= next_sides;
                    line = (next_sides & !(1 << line)).trailing_zeros() as usize;
                    at = next;
                }
                if closed {
                    break;
                }
            }
            if closed {
                // A loop: its lines are all worth the same (claim 4).
                let candidates = lines & sacrifices;
                if candidates != 0 {
                    f(lines, candidates & candidates.wrapping_neg());
                }
                continue;
            }
            let [(e0, j0), (e1, j1)] = ends;
            let end_lines = 1 << e0 | 1 << e1;
            let clear = j0 != j1 || j0 == NO_BOX || open_sides(j0).count_ones() == 4;
            let candidates = lines & sacrifices;
            let kept = match boxes {
                _ if !clear => 0,
                1 => candidates & candidates.wrapping_neg(),
                2 => candidates & !end_lines,
                _ => {
                    let ends = candidates & end_lines;
                    ends & ends.wrapping_neg()
                }
            };
            if kept != 0 {
                f(lines, kept);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute::brute_force;
    use super::super::{NO_BOX, SearchOptions, Solver};
    use crate::games::dots::board::{Board, Lines};

    /// On random positions without a capturable box, each string's kept line is worth
    /// at least as much as each of its other lines (brute force), as much for a string
    /// of one box; strings of one, two and three boxes or more are met often, and the
    /// end lines of two boxes are often worth less than the middle one (so that
    /// keeping an end fails the test); every line of a loop is worth the same. (Of
    /// three boxes or more, every line was worth the same on these boards.)
    #[test]
    fn a_kept_opening_is_worth_at_least_each_pruned_one() {
        let mut random = crate::test_rng::xorshift(0x5851_f42d_4c95_7f2d);
        // Per string length 1, 2, 3+: strings met; pruned lines worth less than kept.
        let (mut met, mut worse, mut loops) = ([0u32; 3], [0u32; 3], 0);
        for (spec, trials) in [("2x3", 12), ("3x3", 10), ("2x4", 6)] {
            let board: Board = spec.parse().unwrap();
            let n = board.num_lines();
            let all: Lines = (1 << n) - 1;
            let solver = Solver::new(board, SearchOptions::default());
            let rules = &solver.rules;
            for _ in 0..trials {
                let mut start: Lines = 0;
                for _ in 0..n / 4 + random() as usize % (n / 6 + 1) {
                    start |= 1 << (random() % n as u64);
                }
                let value = brute_force(&board, start, &[]);
                for p in (0..=all).filter(|p| p & start == start && random().is_multiple_of(4)) {
                    let (mut two_sided, mut sacrifices, mut capturable) = (0u64, 0, false);
                    for (i, &b) in rules.boxes.iter().enumerate() {
                        match (b & !p).count_ones() {
                            1 => capturable = true,
                            2 => {
                                two_sided |= 1 << i;
                                sacrifices |= b & !p;
                            }
                            _ => {}
                        }
                    }
                    if capturable {
                        continue;
                    }
                    let worth = |x: usize| -i32::from(value[(p | 1 << x) as usize]);
                    rules.for_each_string(p, sacrifices, two_sided, |lines, kept| {
                        let k = kept.trailing_zeros() as usize;
                        // A loop's lines each border two of its two-sided boxes.
                        let closed = (0..n).filter(|&x| lines >> x & 1 == 1).all(|x| {
                            rules.adjacent[x]
                                .iter()
                                .all(|&b| b != NO_BOX && two_sided >> b & 1 == 1)
                        });
                        if closed {
                            loops += 1;
                            for x in (0..n).filter(|&x| lines >> x & 1 == 1) {
                                assert_eq!(worth(k), worth(x), "{spec} {p:#x}: loop {k} {x}");
                            }
                            return;
                        }
                        let size = (lines.count_ones() as usize - 2).min(2);
                        met[size] += 1;
                        for x in (0..n).filter(|&x| lines >> x & 1 == 1 && x != k) {
                            assert!(
                                worth(k) >= worth(x),
                                "{spec} {p:#x}: kept {k} worth {}, pruned {x} worth {}",
                                worth(k),
                                worth(x)
                            );
                            worse[size] += u32::from(worth(k) > worth(x));
                            assert!(size > 0 || worth(k) == worth(x), "{spec} {p:#x}: {k} {x}");
                        }
                    });
                }
            }
        }
        assert!(
            met.iter().all(|&m| m > 1000) && worse[1] > 1000 && loops > 40,
            "strings met {met:?}, pruned lines worth less {worse:?}, loops {loops}"
        );
    }
}
