//! Forced wins: the side to move wins by *continuous threats* when it can keep
//! making threats (three of its stones in a line whose fourth cell is empty), each
//! of which the opponent must block, until it has two threats at once (or four in
//! a line). Seed 002 calls this a forced win: `0-3-60-21-15-51-12-63` and then X
//! plays `4x8x5x10x20x40x28x44x24x16x36x52x48`.
//!
//! The rules of the search, for the attacker `me` to move against `you`:
//! * `me` has a threat: it wins at once.
//! * `you` has two threats: `me` cannot stop both (and does not win at once): no.
//! * `you` has one threat: `me` must block it, and the block must threaten.
//! * otherwise `me` may play any cell that makes a threat. Two threats win (`you`,
//!   without a threat of its own, blocks one); one threat forces `you` to block it,
//!   and the search goes on from there (the block may give `you` a threat).

use super::geometry::{CELLS, Cells, automorphisms, canonical, has_line, lines};
use crate::store::hash::KeyHash;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Empty cells that complete a line of three of `own` (none of `other` on it).
#[inline]
pub fn threats(own: Cells, other: Cells) -> Cells {
    empty_cells_of_lines_with(own, other, 3)
}

/// Empty cells on a line with two of `own` and none of `other`: the cells where
/// `own` makes a threat.
#[inline]
pub fn threat_makers(own: Cells, other: Cells) -> Cells {
    empty_cells_of_lines_with(own, other, 2)
}

/// The empty cells of the lines holding `count` of `own` and none of `other`.
#[inline]
fn empty_cells_of_lines_with(own: Cells, other: Cells, count: u32) -> Cells {
    let mut out = 0;
    for &l in lines() {
        if other & l == 0 && (own & l).count_ones() == count {
            out |= l & !own;
        }
    }
    out
}

/// The lines through each cell (4 or 7), padded with empty sets.
fn cell_lines() -> &'static [[Cells; 7]; CELLS] {
    static TABLE: OnceLock<[[Cells; 7]; CELLS]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = [[0; 7]; CELLS];
        for (c, slot) in out.iter_mut().enumerate() {
            let through = lines().iter().filter(|&&l| l >> c & 1 == 1);
            for (k, &l) in through.enumerate() {
                slot[k] = l;
            }
        }
        out
    })
}

/// The threats of `own` on the lines through `cell` (a cell `own` just took): the
/// only threats a move can add.
#[inline]
fn threats_through(cell: usize, own: Cells, other: Cells) -> Cells {
    let mut out = 0;
    for &l in &cell_lines()[cell] {
        if other & l == 0 && (own & l).count_ones() == 3 {
            out |= l & !own;
        }
    }
    out
}

/// Whether `me` (to move) wins against `you` by playing the cells of `attack` in
/// order, each a threat `you` must block (the block is then forced), until two
/// threats or four in a line: a forced win found in one position, replayed in
/// another (the defender's extra stone may have broken it).
pub fn wins_by(mut me: Cells, mut you: Cells, attack: &[usize]) -> bool {
    for &m in attack {
        if threats(me, you) != 0 {
            return true;
        }
        let theirs = threats(you, me);
        if (me | you) >> m & 1 == 1 || theirs.count_ones() >= 2 || (theirs != 0 && theirs != 1 << m)
        {
            return false;
        }
        me |= 1 << m;
        let made = threats(me, you);
        match made.count_ones() {
            0 => return false,
            1 => you |= made,
            _ => return true,
        }
    }
    threats(me, you) != 0
}

/// A hash map keyed by positions `(x, o)`.
pub type PositionMap<V> = HashMap<(Cells, Cells), V, KeyHash>;

/// A search for forced wins with a cache of the positions settled.
#[derive(Default)]
pub struct ForcedSearch {
    settled: PositionMap<Option<u8>>,
    /// Positions searched.
    pub nodes: u64,
}

impl ForcedSearch {
    /// A search with an empty cache.
    pub fn new() -> ForcedSearch {
        ForcedSearch::default()
    }

    /// Positions in the cache.
    pub fn cached(&self) -> usize {
        self.settled.len()
    }

    /// Records that `me` (to move) has no forced win against `you`, known without
    /// a search (see the prover: an extra stone of `you` never creates one).
    pub fn note_no_win(&mut self, me: Cells, you: Cells) {
        self.settled.insert((me, you), None);
    }

    /// Forgets the cache.
    pub fn clear(&mut self) {
        self.settled.clear();
    }

    /// A first move of a forced win of `me` (to move) against `you`, if there is
    /// one (the completing cell when `me` has a threat).
    pub fn win(&mut self, me: Cells, you: Cells) -> Option<usize> {
        self.nodes += 1;
        let mine = threats(me, you);
        if mine != 0 {
            return Some(mine.trailing_zeros() as usize);
        }
        self.without_own_threat(me, you, threats(you, me))
    }

    /// [`Self::win`] where `me` has no threat and `theirs` are `you`'s threats.
    fn without_own_threat(&mut self, me: Cells, you: Cells, theirs: Cells) -> Option<usize> {
        if let Some(&known) = self.settled.get(&(me, you)) {
            return known.map(usize::from);
        }
        let found = self.search(me, you, theirs);
        self.settled.insert((me, you), found.map(|c| c as u8));
        found
    }

    fn search(&mut self, me: Cells, you: Cells, theirs: Cells) -> Option<usize> {
        if theirs.count_ones() >= 2 {
            return None;
        }
        let mut candidates = threat_makers(me, you);
        if theirs != 0 {
            candidates &= theirs;
        }
        while candidates != 0 {
            let m = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let me2 = me | 1 << m;
            // `me` had no threat, so every threat now is on a line through `m`; `m`
            // took `you`'s one threat cell if there was one.
            let made = threats_through(m, me2, you);
            match made.count_ones() {
                0 => {}
                1 => {
                    self.nodes += 1;
                    let block = made.trailing_zeros() as usize;
                    let you2 = you | made;
                    let theirs2 = threats_through(block, you2, me2);
                    if self.without_own_threat(me2, you2, theirs2).is_some() {
                        return Some(m);
                    }
                }
                _ => return Some(m),
            }
        }
        None
    }

    /// The forced win of `me` against `you` as moves in order (`me`, then `you`'s
    /// forced block, ...), ending with `me`'s four in a line; `None` without one.
    pub fn line(&mut self, mut me: Cells, mut you: Cells) -> Option<Vec<usize>> {
        let mut out = Vec::new();
        loop {
            let m = self.win(me, you)?;
            out.push(m);
            me |= 1 << m;
            if has_line(me) {
                return Some(out);
            }
            // The defender blocks the attacker's threat (the least one of two).
            let block = threats(me, you).trailing_zeros() as usize;
            out.push(block);
            you |= 1 << block;
        }
    }
}

/// X's forced win by continuous threats from `(x, o)` (X to move), searched in
/// the position's canonical form (so that every image of a position gets the
/// same line, mapped back) with `search` (its cache): its first move (in the
/// position's own cells) and its plies to X's four when O blocks every threat.
pub fn forced_win(search: &mut ForcedSearch, x: Cells, o: Cells) -> Option<(usize, u32)> {
    let ((cx, co), which) = canonical(x, o);
    let line = search.line(cx, co)?;
    let perm = &automorphisms()[which].perm;
    let cell = perm.iter().position(|&c| c as usize == line[0])?;
    Some((cell, line.len() as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::qubic::position::Position;

    #[test]
    fn the_seed_example_is_a_forced_win() {
        let p = Position::parse("0-3-60-21-15-51-12-63").unwrap();
        let mut s = ForcedSearch::new();
        assert!(s.win(p.x, p.o).is_some());
        let line = s.line(p.x, p.o).unwrap();
        assert_eq!(line.len() % 2, 1);
        // The seed's sequence is one: every X move threatens, O's moves block.
        let seed = [4, 8, 5, 10, 20, 40, 28, 44, 24, 16, 36, 52, 48];
        let (mut x, mut o) = (p.x, p.o);
        for pair in seed.chunks(2) {
            x |= 1 << pair[0];
            let t = threats(x, o);
            if let [_, block] = pair {
                // One threat, blocked; or (36) a double threat, one blocked.
                assert_ne!(t & 1 << block, 0, "X {} forces O to {block}", pair[0]);
                o |= 1 << block;
            } else {
                assert!(has_line(x) || t.count_ones() >= 2);
            }
        }
    }
}
