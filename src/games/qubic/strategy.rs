//! A winning strategy for X read off a finished proof: for every strategic
//! position (X to move, no forced win by continuous threats yet) the move X plays,
//! chosen among the proven ones for the smallest subtree; every O reply to it
//! leads to a strategic position of the strategy or to a forced win.

use super::geometry::{canonical, has_line};
use super::prover::{Key, Prover, child_classes, x_to_move};
use super::threats::{PositionMap, threats};
use anyhow::{Result, bail};

/// What the strategy says in one strategic position (canonical).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// X's move (a cell of the canonical position).
    pub cell: u8,
    /// Strategic moves in the subtree below it, this one included unless it is a
    /// forced block, counted as a tree (a position reached twice counts twice).
    pub subtree: u64,
}

/// X's strategy: canonical strategic position -> choice.
#[derive(Default)]
pub struct Strategy {
    /// The choices, by canonical position.
    pub choices: PositionMap<Choice>,
}

impl Strategy {
    /// The strategy below a canonical position X wins (X to move): reads the
    /// prover's table, proving again what it has forgotten.
    pub fn extract(prover: &mut Prover, root: Key) -> Result<Strategy> {
        let mut s = Strategy::default();
        let mut memo = PositionMap::default();
        s.x_node(prover, root, &mut memo)?;
        // Keep only what the chosen moves reach.
        let mut reached = PositionMap::default();
        s.reach(root, &mut reached);
        s.choices.retain(|k, _| reached.contains_key(k));
        Ok(s)
    }

    fn x_node(
        &mut self,
        prover: &mut Prover,
        key: Key,
        memo: &mut PositionMap<u64>,
    ) -> Result<u64> {
        if let Some(&size) = memo.get(&key) {
            return Ok(size);
        }
        let (x, o) = key;
        if prover.forced_win(x, o) {
            memo.insert(key, 0);
            return Ok(0);
        }
        // A position another build proved: its file's move (the prover took it
        // as won without a search below it).
        if let Some(cell) = prover.known_move(key) {
            let after = canonical(x | 1 << cell, o).0;
            let below = if has_line(after.0) {
                0
            } else {
                self.o_node(prover, after, memo)?
            };
            let size = u64::from(move_cost(key)) + below;
            let choice = Choice {
                cell,
                subtree: size,
            };
            self.choices.insert(key, choice);
            memo.insert(key, size);
            return Ok(size);
        }
        if !prover.prove_key(key) {
            bail!("the proof does not cover {key:?}: X does not win there");
        }
        let proven_moves = |prover: &Prover| -> Vec<(u8, Key)> {
            child_classes(key)
                .into_iter()
                .filter(|&(_, child)| prover.lookup(child).is_some_and(|n| n.pn == 0))
                .collect()
        };
        let mut moves = proven_moves(prover);
        if moves.is_empty() {
            // Its proven moves were dropped from the table (at the memory's
            // bound): proven again.
            if !prover.prove_again(key) {
                bail!("the proof does not cover {key:?}: X does not win there");
            }
            moves = proven_moves(prover);
        }
        let mut best: Option<Choice> = None;
        for (m, child) in moves {
            let size = u64::from(move_cost(key)) + self.o_node(prover, child, memo)?;
            if best.is_none_or(|b| size < b.subtree) {
                best = Some(Choice {
                    cell: m,
                    subtree: size,
                });
            }
        }
        let Some(choice) = best else {
            bail!("no proven move in {key:?}, which the table says X wins");
        };
        self.choices.insert(key, choice);
        memo.insert(key, choice.subtree);
        Ok(choice.subtree)
    }

    fn o_node(
        &mut self,
        prover: &mut Prover,
        key: Key,
        memo: &mut PositionMap<u64>,
    ) -> Result<u64> {
        let mut total = 0u64;
        for child in o_replies(key) {
            total += self.x_node(prover, child, memo)?;
        }
        Ok(total)
    }

    /// Strategic moves below `key` under this strategy (its choice's tree count;
    /// 0 for a forced win).
    pub fn cost_below(&self, key: Key) -> u64 {
        self.choices.get(&key).map_or(0, |c| c.subtree)
    }

    /// Marks the strategic positions the chosen moves reach from `key`.
    fn reach(&self, key: Key, reached: &mut PositionMap<()>) {
        let Some(choice) = self.choices.get(&key) else {
            return;
        };
        if reached.insert(key, ()).is_some() {
            return;
        }
        for child in replies_after(key, choice.cell) {
            self.reach(child, reached);
        }
    }
}

/// What X's move in an X-to-move position costs the strategy: nothing when it is
/// forced (it blocks O's threat), else one strategic move.
pub fn move_cost((x, o): Key) -> u32 {
    u32::from(threats(o, x) == 0)
}

/// O's replies (distinct, canonical) after X plays `cell` in the X-to-move
/// position `key`; none when the move completes X's four.
pub fn replies_after(key: Key, cell: u8) -> Vec<Key> {
    let after = canonical(key.0 | 1 << cell, key.1).0;
    if has_line(after.0) {
        Vec::new()
    } else {
        o_replies(after)
    }
}

/// O's replies in an O-to-move canonical position, as distinct canonical
/// positions.
pub fn o_replies(key: Key) -> Vec<Key> {
    debug_assert!(!x_to_move(key.0, key.1));
    child_classes(key).into_iter().map(|(_, k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::qubic::position::Position;
    use crate::games::qubic::prover::tests::{SMALL_START, TEST_EXPANSIONS, in_a_minute};
    use crate::games::qubic::table::Numbers;

    /// A table bounded far below what the proofs' own entries need: thinned at
    /// the bound, it drops its smallest proofs and never doubles past
    /// it, and every reply is still proven, its strategy read off what the
    /// table kept (proving again what was dropped). The replies in order until
    /// the proof has passed [`TEST_EXPANSIONS`].
    #[test]
    fn a_table_at_its_bound_drops_its_smallest_proofs() {
        let start = Position::parse(SMALL_START).unwrap();
        let mut bounded = Prover::new(0);
        let largest = 1 << 17;
        bounded.bound_entries(largest / 4 * 3 - largest / 128);
        for (_, child) in child_classes((start.x, start.o)) {
            bounded.set_deadline(in_a_minute());
            assert!(bounded.prove_key(child), "not proven with the bound");
            Strategy::extract(&mut bounded, child).expect("a strategy read off the bounded table");
            assert!(
                bounded.table_slots() <= largest,
                "{} slots",
                bounded.table_slots()
            );
            if bounded.expansions > TEST_EXPANSIONS {
                break;
            }
        }
        assert!(
            bounded.dropped_at_bound > 0,
            "nothing dropped at the bound: the test tests nothing"
        );
    }

    /// A proven position whose proven moves the table lost (everything past
    /// it dropped) still gets its strategy read off: it is proven again.
    #[test]
    fn a_strategy_is_read_off_a_proven_position_that_lost_its_moves() {
        let start = Position::parse(SMALL_START).unwrap();
        let (_, child) = child_classes((start.x, start.o))[0];
        let mut prover = Prover::new(64 << 20);
        assert!(prover.prove_key(child));
        prover.forget_past((child.0 | child.1).count_ones());
        assert_eq!(prover.lookup(child), Some(Numbers::PROVEN));
        let strategy = Strategy::extract(&mut prover, child).expect("a strategy read off");
        assert!(strategy.cost_below(child) > 0);
    }

    /// A prover that breaks ties between X's moves the other way
    /// ([`Prover::with_ties_to_last`]) proves every reply too, through other
    /// moves: the strategies read off the two proofs differ after some reply. The
    /// replies of a small start in order until the proofs have passed 8,000
    /// expansions (a few seconds).
    #[test]
    fn ties_broken_the_other_way_prove_through_other_moves() {
        let start = Position::parse("0-63-21-42-15").unwrap();
        let mut first = Prover::new(64 << 20);
        let mut last = Prover::with_ties_to_last(64 << 20);
        let mut differ = 0;
        for (_, child) in child_classes((start.x, start.o)) {
            // A minute each: a bug fails the test rather than hangs it.
            for prover in [&mut first, &mut last] {
                prover.set_deadline(Some(
                    std::time::Instant::now() + std::time::Duration::from_secs(60),
                ));
                assert!(prover.prove_key(child), "not proven in a minute");
            }
            let moves = |prover: &mut Prover| -> Vec<(Key, u8)> {
                let strategy = Strategy::extract(prover, child).unwrap();
                let mut moves: Vec<(Key, u8)> =
                    strategy.choices.iter().map(|(&k, c)| (k, c.cell)).collect();
                moves.sort();
                moves
            };
            differ += usize::from(moves(&mut first) != moves(&mut last));
            if first.expansions > 8_000 {
                break;
            }
        }
        assert!(differ > 0, "the same strategies after every reply");
    }
}
