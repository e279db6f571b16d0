//! Simple loony endgames, valued without search.
//!
//! A position is a *simple loony endgame* when every unfinished box has exactly two
//! open sides. Its open lines then fall apart into independent components: *chains*
//! (strings of `n >= 1` boxes whose two end lines lie on the edge of the board) and
//! *loops* (closed strings of `n >= 4` boxes). Every move gives the opponent a box,
//! and the value follows from the lengths alone (Berlekamp, *The Dots-and-Boxes
//! Game*, "simple loony endgames"). Write `V(S)` for the value of the set of
//! components `S` (the penalty when `S` is empty) and `v = V(S - c)` when the player to
//! move opens `c`:
//!
//! * a chain of 1 or 2 boxes: the opponent takes it (rule 1; a chain of 2 is opened
//!   in its middle, the hard-hearted handout, which leaves the opponent no other
//!   choice), so opening it is worth `-(n + v)`;
//! * a chain of `n >= 3` boxes opened at an end: by rules 1 and 2 the opponent either
//!   takes all of it and moves on (`n + v`) or takes all but the last two and hands
//!   them back with the end line (`n - 2 - (2 + v)`), so opening it is worth
//!   `-max(n + v, n - 4 - v)`. Opened anywhere else it leaves the opponent both of
//!   these choices (take one side, and the other side, of two boxes or more, up to
//!   its last two) and more, so it is worth no more;
//! * a loop of `n` boxes (all its lines are alike): the opponent takes all or all but
//!   four, handing back two pairs, so opening it is worth `-max(n + v, n - 8 - v)`.
//!
//! `V(S)` is the best of these over the kinds of component in `S`, computed with a
//! memo over the counts of each kind.
//!
//! With chains as pseudo-lines (Wilson's rule: while a chain is partly drawn only its
//! lines may be drawn) the taker of a component may instead open an undrawn chain, so
//! the formula is used only where that cannot happen: when no chain line is open,
//! or when every component is a whole chain (then each component, once opened, must
//! be played out before anything else, as the formula assumes).
//!
//! `tests/search_oracle.rs` and `tests/chains_oracle.rs` check the search, which
//! returns these values at such positions, against brute forces that know nothing of
//! them.

use super::{NO_BOX, Rules, lines_of};
use crate::games::dots::board::Lines;

/// One component of a simple loony endgame: its number of boxes and whether it is a
/// loop.
type Component = (u8, bool);

impl Rules {
    /// The exact value of `position` when it is a simple loony endgame the formula
    /// covers (see the module doc), else `None`. Every unfinished box of `position`
    /// must have exactly two open sides.
    pub(super) fn simple_endgame_value(&self, position: Lines) -> Option<i32> {
        let chain_lines = self.chains.all() & !position;
        let mut components = [(0u8, false); 64];
        let mut count = 0;
        let mut seen = 0u64;
        for start in 0..self.boxes.len() {
            if seen >> start & 1 == 1 || self.boxes[start] & !position == 0 {
                continue;
            }
            // Walk the component: each of its boxes has two open sides.
            let (mut boxes, mut lines) = (0u8, 0 as Lines);
            let mut stack = [0usize; 64];
            let mut depth = 1;
            stack[0] = start;
            seen |= 1 << start;
            while depth > 0 {
                depth -= 1;
                let b = stack[depth];
                boxes += 1;
                let open = self.boxes[b] & !position;
                debug_assert_eq!(open.count_ones(), 2, "box {b} is not two-sided");
                lines |= open;
                for line in lines_of(open) {
                    for next in self.adjacent[line] {
                        if next != NO_BOX && seen >> next & 1 == 0 {
                            seen |= 1 << next;
                            stack[depth] = next;
                            depth += 1;
                        }
                    }
                }
            }
            // While a chain line is open, every component must be a whole chain.
            if chain_lines != 0 && !self.chains.masks().contains(&lines) {
                return None;
            }
            // A string of n boxes has n + 1 open lines, a loop n.
            components[count] = (boxes, lines.count_ones() == u32::from(boxes));
            count += 1;
        }
        Some(value_of_components(&mut components[..count], self.penalty))
    }
}

/// `V(S)` of the module doc for the components `S` (reordered) and the full board's
/// value `penalty`.
fn value_of_components(components: &mut [Component], penalty: i32) -> i32 {
    components.sort_unstable();
    // Distinct kinds with their counts; the memo is indexed by the counts left, in
    // mixed radix.
    let mut kinds: Vec<(Component, usize)> = Vec::new();
    for &c in components.iter() {
        match kinds.last_mut() {
            Some((k, n)) if *k == c => *n += 1,
            _ => kinds.push((c, 1)),
        }
    }
    let mut radix = Vec::with_capacity(kinds.len());
    let mut size = 1;
    for &(_, n) in &kinds {
        radix.push(size);
        size *= n + 1;
    }
    let mut memo = vec![None; size];
    memo[0] = Some(penalty);
    let full = size - 1;
    value_of_counts(full, &kinds, &radix, &mut memo)
}

/// `V` of the components left at memo index `index` (see [`value_of_components`]).
fn value_of_counts(
    index: usize,
    kinds: &[(Component, usize)],
    radix: &[usize],
    memo: &mut [Option<i32>],
) -> i32 {
    if let Some(v) = memo[index] {
        return v;
    }
    let mut best = i32::MIN;
    for (i, &((boxes, is_loop), total)) in kinds.iter().enumerate() {
        // No component of this kind left.
        if (index / radix[i]).is_multiple_of(total + 1) {
            continue;
        }
        let v = value_of_counts(index - radix[i], kinds, radix, memo);
        let n = i32::from(boxes);
        let taken = n + v;
        let opened = match (is_loop, boxes) {
            (true, _) => -taken.max(n - 8 - v),
            (false, 1 | 2) => -taken,
            (false, _) => -taken.max(n - 4 - v),
        };
        best = best.max(opened);
    }
    memo[index] = Some(best);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_formula_on_hand_worked_sets() {
        // One chain of 3: the opponent takes all 3.
        assert_eq!(value_of_components(&mut [(3, false)], 0), -3);
        // Chains of 3 and 3: opening one, the opponent keeps control by handing back
        // two (3 - 4 - v with v = -3 after: 2), or takes all (3 + -3 = 0): 2.
        assert_eq!(value_of_components(&mut [(3, false), (3, false)], 0), -2);
        // A loop of 4 alone: the opponent takes all four.
        assert_eq!(value_of_components(&mut [(4, true)], 0), -4);
        // A single box then a chain of 3: open the box (-(1 + -3) = 2).
        assert_eq!(value_of_components(&mut [(1, false), (3, false)], 0), 2);
        // The empty set is worth the penalty.
        assert_eq!(value_of_components(&mut [], -5), -5);
    }
}
