//! Loony handouts, bounded without search.
//!
//! Let a non-capturing move `x` of position `p` leave the opponent a capture
//! sequence `S` (every line of it completes a box, so the opponent keeps the turn)
//! that takes `T` boxes; write `r` for the position after `S` and `q = p|x`.
//!
//! * **Domino.** `S` ends in two single captures: `l1` completes box `u` only and
//!   gives its neighbour `w` a third side, then `l2`, the last open side of `w`,
//!   completes `w` only. The opponent may play `S` and move on in `r` (`T + V(r)`),
//!   or play `S` but its last two lines and then `l2` instead of `l1` (the
//!   double-dealing move: `u` and `w` keep `l1` open, and `l2` completes nothing),
//!   after which the player who moved `x` takes both boxes with `l1` (rule 1: it
//!   completes both) and moves on in `r` (`T - 2 - (2 + V(r))`). So
//!   `V(q) >= max(T + V(r), T - 4 - V(r)) >= T - 2`, and `x` is worth at most
//!   `2 - T`: a handout of three boxes or more (Berlekamp's loony move) loses at
//!   least a box whatever follows.
//! * **Quad.** `S` ends in single captures of `a` and `b` and a double capture of
//!   `c` and `d`, each capture giving the next box its third side (the end of a
//!   loop, or of a string closed at both ends): `lA` completes `a`, `lB` completes
//!   `b`, `lC` completes `c` and `d`. Drawing `lB` before `lA` completes nothing and
//!   leaves two dominoes, `a b` closed by `lA` and `c d` closed by `lC`, which the
//!   other player takes (rule 1, twice) before moving on in `r`: so
//!   `V(q) >= max(T + V(r), T - 8 - V(r)) >= T - 4`, and `x` is worth at most `4 - T`.
//!
//! The search skips such a move without searching it when a move already searched
//! is worth that much.
//!
//! `S` here takes every box it can reach from the boxes `x` gives a third side,
//! string by string, in both orders of those boxes. With chains as pseudo-lines every
//! line of `S`, and the declining line, must be legal when played, and rule 1 must
//! hold where the other player takes the boxes handed back, as the search applies it
//! ([`Rules::legal_and_forced`]); otherwise there is no bound.
//!
//! A unit test checks the bounds against a brute force of the plain and the chain
//! game; `tests/search_oracle.rs` and `tests/chains_oracle.rs` check the search
//! against brute forces that know nothing of this.

use super::{NO_BOX, Rules};
use crate::games::dots::board::{Lines, boxes_completed_with};

/// One capture of the sequence: the line drawn, the boxes it completed, and the box
/// it was drawn for.
#[derive(Clone, Copy)]
struct Capture {
    line: usize,
    completed: u32,
    for_box: usize,
}

impl Rules {
    /// An upper bound on the worth of the non-capturing move `line` in `position`
    /// (see the module doc), or `None` when the opponent's captures end in neither a
    /// domino nor a quad.
    pub(super) fn handout_bound(&self, position: Lines, line: usize) -> Option<i32> {
        let handed = position | 1 << line;
        let mut starts = [NO_BOX; 2];
        let mut count = 0;
        for b in self.adjacent[line] {
            if b != NO_BOX && (self.boxes[b] & !handed).count_ones() == 1 {
                starts[count] = b;
                count += 1;
            }
        }
        match count {
            0 => None,
            1 => self.bound_after_captures(handed, &starts[..1]),
            // The lower of the two bounds (`None` is no bound).
            _ => match (
                self.bound_after_captures(handed, &starts),
                self.bound_after_captures(handed, &[starts[1], starts[0]]),
            ) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// The bound from the capture sequence that starts at the boxes `starts` (in
    /// this order) and takes every box it reaches, when it ends in a domino or a quad
    /// whose boxes can soundly be handed back (module doc).
    fn bound_after_captures(&self, handed: Lines, starts: &[usize]) -> Option<i32> {
        let open_sides = |state: Lines, b: usize| self.boxes[b] & !state;
        let mut state = handed;
        // Boxes to take, depth first: a string is followed to its end before the
        // next start.
        let mut stack = [NO_BOX; 64];
        let mut depth = 0;
        for &b in starts.iter().rev() {
            stack[depth] = b;
            depth += 1;
        }
        let mut taken = 0;
        let mut last: [Option<Capture>; 3] = [None; 3];
        while depth > 0 {
            depth -= 1;
            let b = stack[depth];
            let open = open_sides(state, b);
            if open.count_ones() != 1 {
                continue; // taken already, together with a neighbour
            }
            let line = open.trailing_zeros() as usize;
            if self.chains.legal(state, 1 << line) == 0 {
                return None;
            }
            let completed = boxes_completed_with(state, self.completion[line]);
            state |= 1 << line;
            taken += completed as i32;
            last = [
                last[1],
                last[2],
                Some(Capture {
                    line,
                    completed,
                    for_box: b,
                }),
            ];
            let [a, c] = self.adjacent[line];
            let across = if a == b { c } else { a };
            if across != NO_BOX && open_sides(state, across).count_ones() == 1 {
                stack[depth] = across;
                depth += 1;
            }
        }
        // Each capture of the ending gave the next box its third side.
        let leads_to =
            |from: &Capture, to: &Capture| self.adjacent[from.line].contains(&to.for_box);
        match last {
            [_, Some(u), Some(w)] if u.completed == 1 && w.completed == 1 && leads_to(&u, &w) => {
                self.hand_back(state, w.line, &[u.line], &[u.line, w.line])
                    .then_some(2 - taken)
            }
            [Some(a), Some(b), Some(c)]
                if (a.completed, b.completed, c.completed) == (1, 1, 2)
                    && leads_to(&a, &b)
                    && leads_to(&b, &c) =>
            {
                self.hand_back(state, b.line, &[a.line, c.line], &[a.line, b.line, c.line])
                    .then_some(4 - taken)
            }
            _ => None,
        }
    }

    /// Whether, in `state` minus the ending's lines `ending` (the position before
    /// them), the opponent may decline with `decline` (legal, completing nothing)
    /// after which each line of `returned` in turn is forced by rule 1 for the other
    /// player.
    fn hand_back(
        &self,
        state: Lines,
        decline: usize,
        returned: &[usize],
        ending: &[usize],
    ) -> bool {
        let before = ending.iter().fold(state, |s, &l| s & !(1 << l));
        if self.chains.legal(before, 1 << decline) == 0
            || boxes_completed_with(before, self.completion[decline]) != 0
        {
            return false;
        }
        let mut position = before | 1 << decline;
        returned.iter().all(|&line| {
            let (_, forced) = self.legal_and_forced(position, self.all & !position, 1 << line);
            position |= 1 << line;
            forced >> line & 1 == 1
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute::brute_force;
    use super::super::{SearchOptions, Solver};
    use crate::games::dots::board::{Board, Lines, boxes_completed_with};
    use crate::games::dots::chains::Chains;

    /// Every bound holds against the brute force, in the plain game and with chains
    /// marked at random, and the bounds are met often (they are not vacuous).
    #[test]
    fn handout_bounds_hold_against_a_brute_force() {
        let mut random = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        let (mut bounds, mut tight) = (0, 0);
        for (spec, trials) in [("2x2", 20), ("2x3", 20), ("3x3", 12)] {
            let board: Board = spec.parse().unwrap();
            let n = board.num_lines();
            for trial in 0..trials {
                // Starts with a third to a half of the lines drawn (none for the first).
                let mut start: Lines = 0;
                if trial > 0 {
                    for _ in 0..n / 3 + random() as usize % (n / 6 + 1) {
                        start |= 1 << (random() % n as u64);
                    }
                }
                let chain_boxes: Lines = random();
                let dotted = (0..board.rows())
                    .flat_map(|r| (0..board.cols()).map(move |c| (r, c)))
                    .enumerate()
                    .filter(|&(i, (r, c))| {
                        chain_boxes >> i & 1 == 1
                            && (board.box_mask(r, c) & start).count_ones() == 2
                    })
                    .fold(0, |d, (_, (r, c))| d | board.box_mask(r, c) & !start);
                let chains = if trial % 2 == 0 {
                    Chains::none()
                } else {
                    Chains::from_dotted(&board, start, dotted).unwrap_or_default()
                };
                let value = brute_force(&board, start, chains.masks());
                let options = SearchOptions {
                    penalty: 0,
                    tt_bytes: 1 << 16,
                };
                let mut solver = Solver::new(board, options);
                solver.set_chains(chains.clone());
                let rules = &solver.rules;
                let all: Lines = (1 << n) - 1;
                for p in (0..=all).filter(|p| p & start == start && random().is_multiple_of(8)) {
                    for x in (0..n).filter(|&x| chains.legal(p, all & !p) >> x & 1 == 1) {
                        if boxes_completed_with(p, rules.completion[x]) > 0 {
                            continue;
                        }
                        if let Some(bound) = rules.handout_bound(p, x) {
                            let worth = -value[(p | 1 << x) as usize] as i32;
                            assert!(
                                worth <= bound,
                                "{spec} position {p:#x} move {x}: worth {worth}, bound {bound}"
                            );
                            bounds += 1;
                            tight += (worth == bound) as u32;
                        }
                    }
                }
            }
        }
        assert!(
            bounds > 1000 && tight > 100,
            "{bounds} bounds, {tight} tight"
        );
    }
}
