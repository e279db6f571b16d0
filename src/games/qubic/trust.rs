//! Which stored records a probe answers from. Reading checks every record's form,
//! but a record forged with valid checksums may claim a win that is none, or plies
//! that are wrong. `tb verify` proves the whole strategy down to the forced wins
//! (seconds to minutes), far too slow for a probe; a probe answers from a record
//! only when two cheap checks pass:
//!
//! * the record is *reached*: the block's strategy leads to it from the block's
//!   root (the start after O's reply, or the empty board), found backwards from the
//!   position: an O stone and an X stone taken back must give a record of the block
//!   whose move leads to it, and so on back to the root;
//! * its claim *holds one level down*: X's move blocks O's threat if O has one,
//!   every O reply leads to a record of the block or to a forced win, and the plies
//!   and the strategic moves below it are exactly what the replies give, computed as
//!   the builder computes them.
//!
//! Any other record is not used: the probe answers as if it were absent (a forced
//! win it finds itself, else `unknown`). A forged record nothing leads to, or one
//! whose plies or sizes do not add up, is never answered from. What only `tb
//! verify` refuses: several records forged together, consistent with each other,
//! whose gap lies further down (the probe checks one level below the position).

use super::geometry::canonical;
use super::prover::Key;
use super::stored::{OPENING_BLOCK, Record, StrategyFile};
use super::strategy::replies_after;
use super::threats::{ForcedSearch, PositionMap, forced_win, threats};

/// What one probe has found out (a position and its replies ask the same
/// questions): the forced-win search with its cache, and the records judged.
pub struct Probing {
    /// The forced-win search.
    pub forced: ForcedSearch,
    /// Per block: records known reached (true) or not.
    reached: Vec<PositionMap<bool>>,
    /// Per block: records known sound (reached, holding one level down) or not.
    sound: Vec<PositionMap<bool>>,
}

impl Default for Probing {
    /// Nothing found out yet; the forced-win search's table of a probe's size.
    fn default() -> Probing {
        Probing {
            forced: ForcedSearch::for_probes(),
            reached: Vec::new(),
            sound: Vec::new(),
        }
    }
}

impl Probing {
    /// Whether the probe may answer from the record of `key` in block `block` of
    /// `file` (see the module).
    pub fn sound(&mut self, file: &StrategyFile, block: usize, key: Key) -> bool {
        if self.sound.len() < file.blocks.len() {
            self.sound
                .resize_with(file.blocks.len(), PositionMap::default);
            self.reached
                .resize_with(file.blocks.len(), PositionMap::default);
        }
        if let Some(&known) = self.sound[block].get(&key) {
            return known;
        }
        let sound = self.reached(file, block, key) && self.holds(file, block, key);
        self.sound[block].insert(key, sound);
        sound
    }

    /// Whether block `block`'s strategy reaches its record of `key`.
    fn reached(&mut self, file: &StrategyFile, block: usize, key: Key) -> bool {
        let b = &file.blocks[block];
        if key == b.root {
            return true;
        }
        let stones = |(x, o): Key| (x | o).count_ones();
        if stones(key) <= stones(b.root) || !b.records.contains_key(&key) {
            return false;
        }
        if let Some(&known) = self.reached[block].get(&key) {
            return known;
        }
        let (x, o) = key;
        let mut tried: Vec<Key> = Vec::new();
        let mut found = false;
        'back: for r in cells(o) {
            // The position after X's last move (O to move), and before it.
            let after = canonical(x, o & !(1 << r)).0;
            if tried.contains(&after) {
                continue;
            }
            tried.push(after);
            for m in cells(after.0) {
                let before = canonical(after.0 & !(1 << m), after.1).0;
                let Some(parent) = b.records.get(&before) else {
                    continue;
                };
                if canonical(before.0 | 1 << parent.cell, before.1).0 == after
                    && self.reached(file, block, before)
                {
                    found = true;
                    break 'back;
                }
            }
        }
        self.reached[block].insert(key, found);
        found
    }

    /// Whether the record of `key` in block `block` holds one level down: its move
    /// stops O's threat, every O reply leads to a record of the block or to a forced
    /// win, and its plies and subtree are those its replies give (as the builder
    /// computes them).
    fn holds(&mut self, file: &StrategyFile, block: usize, key: Key) -> bool {
        let r = file.blocks[block].records[&key];
        let (x, o) = key;
        let theirs = threats(o, x);
        if theirs != 0 && theirs != 1 << r.cell {
            return false;
        }
        // X's move, unless it blocks O's threat, is a strategic move.
        let mut below = u64::from(theirs == 0);
        let mut longest = 0u32;
        for child in replies_after(key, r.cell) {
            let plies = match claim(file, block, child) {
                Some(c) => {
                    below += u64::from(c.subtree);
                    u32::from(c.plies)
                }
                None => match forced_win(&mut self.forced, child.0, child.1) {
                    Some((_, plies)) => plies,
                    None => return false,
                },
            };
            longest = longest.max(1 + plies);
        }
        u32::from(r.plies) == 1 + longest && u64::from(r.subtree) == below.min(u32::MAX.into())
    }
}

/// The record block `block`'s strategy has for `child` (X to move): the block's
/// own, or for the opening's record, the root record of the reply's block.
fn claim(file: &StrategyFile, block: usize, child: Key) -> Option<Record> {
    let b = &file.blocks[block];
    if b.key == OPENING_BLOCK {
        file.blocks
            .iter()
            .find(|other| other.root == child)
            .and_then(|other| other.records.get(&child))
            .copied()
    } else {
        b.records.get(&child).copied()
    }
}

/// The cells of a set, in order.
fn cells(mut set: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let c = set.trailing_zeros() as usize;
            set &= set - 1;
            c
        })
    })
}
