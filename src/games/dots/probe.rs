//! What a Dots-and-Boxes probe answers ([`Probe`]: the value of a position and of
//! each of its moves, best first, with where the answer came from): the shape the
//! tablebase reader, the search fallback and the exhaustive loony solve answer in,
//! and that the output, `tb play` and the Python module read.

use super::board::Lines;
use super::loony::Loony;
use super::search::SolveResult;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A stored layer of the tablebase.
    Book,
    /// The search solver.
    Search,
}

impl Source {
    /// Name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Book => "book",
            Source::Search => "search",
        }
    }
}

/// The value of one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveValue {
    /// The line drawn.
    pub line: usize,
    /// Its value for the player making it (None when the layer after is not stored).
    pub value: Option<i32>,
    /// Boxes it completes.
    pub boxes: u32,
    /// Who can be forced to make the next loony move after it, seen from the player
    /// making it (loony analysis only).
    pub loony: Option<Loony>,
}

/// A probe's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The position.
    pub position: Lines,
    /// Value for the player to move.
    pub value: i32,
    /// Which store answered.
    pub source: Source,
    /// Every legal move, best first (ties: lower line first); moves whose values
    /// are unknown come last.
    pub moves: Vec<MoveValue>,
    /// Who can be forced to make the next loony move, seen from the player to move
    /// (loony analysis only; see [`super::loony`]).
    pub loony: Option<Loony>,
}

impl Probe {
    /// A search result in the shape of a probe answer.
    pub fn from_search(position: Lines, result: &SolveResult) -> Probe {
        Probe {
            position,
            value: result.value,
            source: Source::Search,
            moves: result
                .moves
                .iter()
                .map(|m| MoveValue {
                    line: m.line,
                    value: Some(m.value),
                    boxes: m.boxes,
                    loony: None,
                })
                .collect(),
            loony: None,
        }
    }
}

/// Best first, ties by lower line; unknown values last.
pub fn sort_moves(moves: &mut [MoveValue]) {
    // Loony flags (all or none) break ties in the order the mover prefers them;
    // lines are distinct, so the order is total. A probe sorts ~30 moves: their
    // packed keys, with each move's index in the low bits, are sorted as plain
    // integers, and the moves then permuted once.
    const MAX: usize = 64;
    if moves.len() <= MAX && sort_valued_moves(moves) {
        return;
    }
    if moves.len() > MAX {
        moves.sort_unstable_by_key(move_order);
        return;
    }
    let mut keys = [0u64; MAX];
    for (i, m) in moves.iter().enumerate() {
        keys[i] = move_order(m) | i as u64;
    }
    let keys = &mut keys[..moves.len()];
    keys.sort_unstable();
    // Place k takes the move at index `keys[k] & 63`: each cycle of the permutation
    // is followed once.
    let mut placed = 0u64;
    for start in 0..moves.len() {
        if placed >> start & 1 == 1 {
            continue;
        }
        let first = moves[start];
        let mut at = start;
        loop {
            placed |= 1 << at;
            let from = (keys[at] & 63) as usize;
            if from == start {
                moves[at] = first;
                break;
            }
            moves[at] = moves[from];
            at = from;
        }
    }
}

/// [`sort_moves`] of at most 64 moves if every one has a value in `i8` range, none
/// a loony flag and every line is below 64 (a probe of a plain file), else false
/// (`moves` untouched): a mask of lines per value and a bit set of the values
/// present, read from the greatest value down. Branch-free where a sort compares.
fn sort_valued_moves(moves: &mut [MoveValue]) -> bool {
    let mut lines_of = [0u64; 256];
    let mut present = [0u64; 4];
    let mut boxes = [0u32; 64];
    for m in moves.iter() {
        let (Some(value @ -128..128), None, 0..64) = (m.value, m.loony, m.line) else {
            return false;
        };
        let slot = (value + 128) as usize;
        lines_of[slot] |= 1 << m.line;
        present[slot / 64] |= 1 << (slot % 64);
        boxes[m.line] = m.boxes;
    }
    let mut slots = moves.iter_mut();
    for word in (0..4).rev() {
        let mut values = present[word];
        while values != 0 {
            let top = 63 - values.leading_zeros() as usize;
            values ^= 1 << top;
            let slot = word * 64 + top;
            let mut lines = lines_of[slot];
            while lines != 0 {
                let line = lines.trailing_zeros() as usize;
                lines &= lines - 1;
                *slots.next().expect("distinct lines") = MoveValue {
                    line,
                    value: Some(slot as i32 - 128),
                    boxes: boxes[line],
                    loony: None,
                };
            }
        }
    }
    debug_assert!(slots.next().is_none(), "distinct lines");
    true
}

/// The key [`sort_moves`] orders by, packed in a `u64` with its low 8 bits clear:
/// known values first, then the greater value, then the better loony flag (none
/// before any), then the lower line.
fn move_order(m: &MoveValue) -> u64 {
    const MID: i64 = 1 << 30;
    let value = m.value.map_or(0, |v| (v as i64).clamp(-MID + 1, MID - 1));
    let loony = m.loony.map_or(0, |l| l as u64 + 1);
    u64::from(m.value.is_none()) << 63
        | ((MID - value) as u64) << 32
        | (3 - loony) << 24
        | (m.line as u64 & 0xffff) << 8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed key orders moves as the plain rule says: known values first,
    /// greater value, better flag (none before any), lower line.
    #[test]
    fn packed_move_order_is_the_rule() {
        let mut next = crate::test_rng::below(0x2545_f491_4f6c_dd1d);
        for _ in 0..2000 {
            // Often all values known and no flags: the fast path of a plain probe.
            let count = 1 + next(64) as usize;
            let loony = next(3) == 0;
            let unknown = next(3) == 0;
            let mut lines: Vec<usize> = (0..64).collect();
            let mut moves: Vec<MoveValue> = (0..count)
                .map(|_| {
                    let line = lines.swap_remove(next(lines.len() as u64) as usize);
                    MoveValue {
                        line,
                        value: (!unknown || next(5) > 0).then(|| next(41) as i32 - 20),
                        boxes: next(3) as u32,
                        loony: loony.then(|| {
                            [Loony::Mover, Loony::Neither, Loony::Opponent][next(3) as usize]
                        }),
                    }
                })
                .collect();
            let mut expected = moves.clone();
            expected.sort_by_key(|m| {
                (
                    m.value.is_none(),
                    std::cmp::Reverse((m.value, m.loony)),
                    m.line,
                )
            });
            sort_moves(&mut moves);
            assert_eq!(moves, expected);
        }
    }
}
