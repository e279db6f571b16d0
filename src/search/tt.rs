//! The transposition table: a bounded, two-way set-associative hash table keyed by
//! canonical positions, holding value bounds with their type.
//!
//! Every entry stores the full 64-bit canonical key, so a hit is never a collision.
//! It holds a lower and an upper bound on the value (equal bounds = exact value), the
//! search depth (number of open lines, plus one so that zero marks an empty slot) and
//! the best move found, in canonical coordinates. A bucket has two slots: the first
//! keeps the deepest entry seen (replace-by-depth), the second takes everything else
//! (always replace), so deep results survive floods of shallow ones.

use crate::board::Lines;

/// "No best move" marker.
pub(crate) const NO_MOVE: u8 = u8::MAX;

/// One table slot (16 bytes).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct Entry {
    /// Canonical position.
    pub key: Lines,
    /// Lower bound on the value.
    pub lower: i16,
    /// Upper bound on the value.
    pub upper: i16,
    /// Open lines + 1; 0 = empty slot.
    pub depth: u8,
    /// Best move in canonical coordinates, or [`NO_MOVE`].
    pub best: u8,
}

/// A bucket of two slots: `[depth-preferred, always-replace]` (32 bytes).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct Bucket([Entry; 2]);

/// The table itself.
#[derive(Debug)]
pub(crate) struct Table {
    buckets: Vec<Bucket>,
    shift: u32,
}

impl Table {
    /// A table of at most `bytes` bytes (a power of two buckets, at least one).
    pub fn new(bytes: usize) -> Table {
        let want = (bytes / std::mem::size_of::<Bucket>()).max(1);
        // Largest power of two not above `want`.
        let count = 1usize << (usize::BITS - 1 - want.leading_zeros());
        Table {
            buckets: vec![Bucket::default(); count],
            shift: 64 - count.trailing_zeros(),
        }
    }

    /// Empties every slot.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
    }

    #[inline]
    fn index(&self, key: Lines) -> usize {
        // Fibonacci hashing; a shift of 64 (one bucket) must not overflow.
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h.checked_shr(self.shift).unwrap_or(0) as usize
    }

    /// The entry for `key`, if present.
    #[inline]
    pub fn probe(&self, key: Lines) -> Option<Entry> {
        let bucket = &self.buckets[self.index(key)];
        bucket
            .0
            .iter()
            .find(|e| e.depth != 0 && e.key == key)
            .copied()
    }

    /// Records bounds `lower..=upper` and the best move for `key`, merging them with
    /// what the table already knows about `key` (both are true bounds of the same
    /// exact value, so the intersection is too).
    #[inline]
    pub fn store(&mut self, key: Lines, depth: u8, lower: i16, upper: i16, best: u8) {
        let index = self.index(key);
        let bucket = &mut self.buckets[index].0;
        for e in bucket.iter_mut() {
            if e.depth != 0 && e.key == key {
                e.lower = e.lower.max(lower);
                e.upper = e.upper.min(upper);
                if best != NO_MOVE {
                    e.best = best;
                }
                return;
            }
        }
        let entry = Entry {
            key,
            lower,
            upper,
            depth,
            best,
        };
        if depth >= bucket[0].depth {
            bucket[1] = bucket[0];
            bucket[0] = entry;
        } else {
            bucket[1] = entry;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_16_bytes_and_buckets_32() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        assert_eq!(std::mem::size_of::<Bucket>(), 32);
    }

    #[test]
    fn store_merges_bounds_and_deep_entries_survive() {
        let mut t = Table::new(32); // one bucket: everything collides
        t.store(7, 10, -3, 5, 1);
        t.store(7, 10, 1, 9, NO_MOVE);
        let e = t.probe(7).unwrap();
        assert_eq!((e.lower, e.upper, e.best), (1, 5, 1));
        t.store(8, 2, 0, 0, 2);
        t.store(9, 3, 0, 0, 3);
        assert!(t.probe(7).is_some(), "the deep entry stays");
        assert!(t.probe(8).is_none(), "the shallow one was replaced");
        assert!(t.probe(9).is_some());
        t.clear();
        assert!(t.probe(7).is_none());
    }

    #[test]
    fn zero_key_is_a_valid_key() {
        let mut t = Table::new(1 << 12);
        assert!(t.probe(0).is_none());
        t.store(0, 25, 2, 2, NO_MOVE);
        assert_eq!(t.probe(0).unwrap().lower, 2);
    }
}
