//! Loony handouts, bounded without search.
//!
//! Let a non-capturing move `x` of position `p` leave the opponent a capture
//! sequence `S` (every line of it completes a box, so the opponent keeps the turn)
//! that takes `T` boxes and ends in two single captures along a *domino*: line `l1`
//! completes box `u` only and gives its neighbour `w` a third side, then `l2`, the
//! last open side of `w`, completes `w` only. Write `r` for the position after `S`.
//! The opponent may then
//!
//! * play `S` and move on in `r`: `T + V(r)`, or
//! * play `S` but its last two lines, then `l2` instead of `l1` (the double-dealing
//!   move: `u` and `w` keep `l1` open, and `l2` completes nothing), after which the
//!   player who moved `x` takes both boxes with `l1` (rule 1: it completes both) and
//!   moves on in `r`: `T - 2 - (2 + V(r))`.
//!
//! So `V(q) >= max(T + V(r), T - 4 - V(r)) >= T - 2` where `q = p|x`, and `x` is
//! worth at most `2 - T`: a handout of three boxes or more (Berlekamp's loony move)
//! loses at least a box whatever follows. The search skips such a move without
//! searching it when a move already searched is worth that much.
//!
//! `S` here takes every box it can reach from the boxes `x` gives a third side,
//! string by string; it is tried in both orders of those boxes, and it counts only
//! when its last two captures form a domino. With chains as pseudo-lines every line
//! of `S`, and `l2`, must be legal when played, and rule 1 must hold for `l1` where
//! the search applies it ([`Rules::legal_and_forced`]); otherwise there is no bound.
//!
//! `tests/search_oracle.rs` and `tests/chains_oracle.rs` check the search against
//! brute forces that know nothing of this.

use super::{NO_BOX, Rules};
use crate::games::dots::board::{Lines, boxes_completed_with};

/// One capture of the sequence: the line drawn, the boxes it completed, and the box
/// it was drawn for.
#[derive(Clone, Copy)]
struct Capture {
    line: usize,
    completed: u32,
    taken: usize,
}

impl Rules {
    /// An upper bound on the worth of the non-capturing move `line` in `position`
    /// (see the module doc), or `None` when no domino ends the opponent's captures.
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
        let taken = match count {
            0 => None,
            1 => self.taken_before_domino(handed, &starts[..1]),
            _ => self
                .taken_before_domino(handed, &starts)
                .max(self.taken_before_domino(handed, &[starts[1], starts[0]])),
        };
        taken.map(|t| 2 - t)
    }

    /// Boxes `T` of the capture sequence that starts at the boxes `starts` (in this
    /// order) and takes every box it reaches, when its last two captures form a
    /// domino and the double-dealing move there is sound (module doc).
    fn taken_before_domino(&self, handed: Lines, starts: &[usize]) -> Option<i32> {
        let open_sides = |state: Lines, b: usize| self.boxes[b] & !state;
        let legal = |state: Lines, line: usize| {
            self.chains
                .partial(state)
                .is_none_or(|chain| chain >> line & 1 == 1)
        };
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
        let mut last: [Option<Capture>; 2] = [None, None];
        while depth > 0 {
            depth -= 1;
            let b = stack[depth];
            let open = open_sides(state, b);
            if open.count_ones() != 1 {
                continue; // taken already, together with a neighbour
            }
            let line = open.trailing_zeros() as usize;
            if !legal(state, line) {
                return None;
            }
            let completed = boxes_completed_with(state, self.completion[line]);
            state |= 1 << line;
            taken += completed as i32;
            last = [
                last[1],
                Some(Capture {
                    line,
                    completed,
                    taken: b,
                }),
            ];
            let [a, c] = self.adjacent[line];
            let across = if a == b { c } else { a };
            if across != NO_BOX && open_sides(state, across).count_ones() == 1 {
                stack[depth] = across;
                depth += 1;
            }
        }
        let [Some(first), Some(second)] = last else {
            return None;
        };
        let (l1, l2, w) = (first.line, second.line, second.taken);
        if first.completed != 1 || second.completed != 1 || !self.adjacent[l1].contains(&w) {
            return None;
        }
        // Before the domino: the double-dealing move `l2` must be legal and complete
        // nothing, and then `l1` must be forced by rule 1.
        let before = state & !(1 << l1 | 1 << l2);
        if !legal(before, l2) || boxes_completed_with(before, self.completion[l2]) != 0 {
            return None;
        }
        let dealt = before | 1 << l2;
        let (_, forced) = self.legal_and_forced(dealt, self.all & !dealt, 1 << l1);
        (forced >> l1 & 1 == 1).then_some(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SearchOptions, Solver};
    use crate::games::dots::board::{Board, Lines, boxes_completed_with};
    use crate::games::dots::chains::Chains;

    /// Values of every position that contains `start`, by plain minimax over the
    /// chain game (`chains` empty: the plain game), indexed by position.
    fn brute_force(board: &Board, start: Lines, chains: &[Lines]) -> Vec<i8> {
        let n = board.num_lines();
        let boxes: Vec<Lines> = (0..board.rows())
            .flat_map(|r| (0..board.cols()).map(move |c| board.box_mask(r, c)))
            .collect();
        let all: Lines = (1 << n) - 1;
        let mut value = vec![0i8; 1 << n];
        for p in (0..=all).rev().filter(|p| p & start == start) {
            let open = all & !p;
            let partial = chains
                .iter()
                .find(|&&c| c & p != 0 && c & p != c)
                .map_or(open, |&c| c & open);
            let mut best = if open == 0 { 0 } else { i8::MIN };
            for m in (0..n).filter(|&m| partial >> m & 1 == 1) {
                let q = p | 1 << m;
                let made = boxes
                    .iter()
                    .filter(|&&b| b >> m & 1 == 1 && q & b == b)
                    .count() as i8;
                let v = if made > 0 {
                    made + value[q as usize]
                } else {
                    -value[q as usize]
                };
                best = best.max(v);
            }
            value[p as usize] = best;
        }
        value
    }

    /// Every bound holds against the brute force, in the plain game and with chains
    /// marked at random, and the bounds are met often (they are not vacuous).
    #[test]
    fn handout_bounds_hold_against_a_brute_force() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
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
                for p in (0..=all).filter(|p| p & start == start && random() % 8 == 0) {
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
