//! A winning strategy for X read off a finished proof: for every strategic
//! position (X to move, no forced win by continuous threats yet) the move X plays,
//! chosen among the proven ones for the smallest subtree; every O reply to it
//! leads to a strategic position of the strategy or to a forced win.

use super::geometry::{Cells, canonical};
use super::prover::{Key, Prover, candidate_moves, x_to_move};
use super::threats::PositionMap;
use anyhow::{Result, bail};

/// What the strategy says in one strategic position (canonical).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// X's move (a cell of the canonical position).
    pub cell: u8,
    /// Strategic positions in the subtree below it, this one included, counted as
    /// a tree (a position reached twice counts twice).
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

    /// Strategic positions in the strategy.
    pub fn len(&self) -> usize {
        self.choices.len()
    }

    /// Whether the strategy is empty (X wins by continuous threats at once).
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
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
        if !prover.prove_key(key) {
            bail!("the proof does not cover {key:?}: X does not win there");
        }
        let mut best: Option<Choice> = None;
        let mut moves = candidate_moves(x, o);
        let mut seen: Vec<Key> = Vec::new();
        while moves != 0 {
            let m = moves.trailing_zeros() as u8;
            moves &= moves - 1;
            let child = canonical(x | 1 << m, o).0;
            if seen.contains(&child) || prover.lookup(child).is_none_or(|n| n.pn != 0) {
                continue;
            }
            seen.push(child);
            let size = self.o_node(prover, child, memo)?;
            if best.is_none_or(|b| 1 + size < b.subtree) {
                best = Some(Choice {
                    cell: m,
                    subtree: 1 + size,
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

    /// Marks the strategic positions the chosen moves reach from `key`.
    fn reach(&self, key: Key, reached: &mut PositionMap<()>) {
        let Some(choice) = self.choices.get(&key) else {
            return;
        };
        if reached.insert(key, ()).is_some() {
            return;
        }
        let (x, o) = key;
        let after = canonical(x | 1 << choice.cell, o).0;
        for child in o_replies(after) {
            self.reach(child, reached);
        }
    }
}

/// O's replies in an O-to-move canonical position, as distinct canonical
/// positions.
pub fn o_replies(key: Key) -> Vec<Key> {
    reply_classes(key).into_iter().map(|(_, k)| k).collect()
}

/// O's replies in an O-to-move position, one per class: the cell (in the
/// position's own cells) and the canonical position after it.
pub fn reply_classes((x, o): Key) -> Vec<(u8, Key)> {
    debug_assert!(!x_to_move(x, o));
    let mut out: Vec<(u8, Key)> = Vec::new();
    // X's threat, if there is one, is all O may answer (else X completes it).
    let mut moves: Cells = candidate_moves(x, o);
    while moves != 0 {
        let m = moves.trailing_zeros();
        moves &= moves - 1;
        let child = canonical(x, o | 1 << m).0;
        if !out.iter().any(|&(_, k)| k == child) {
            out.push((m as u8, child));
        }
    }
    out
}
