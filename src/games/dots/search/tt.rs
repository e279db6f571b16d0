//! The transposition table: a bounded, two-way set-associative hash table keyed by
//! canonical positions, holding value bounds with their type.
//!
//! Every entry stores the full 64-bit canonical key, so a hit is never a collision.
//! It holds a lower and an upper bound on the value (equal bounds = exact value), the
//! search depth (number of open lines, plus one so that zero marks an empty slot) and
//! the best move found, in canonical coordinates. A bucket (32 bytes) has two slots: the first
//! keeps the deepest entry seen (replace-by-depth), the second takes everything else
//! (always replace), so deep results survive floods of shallow ones.

use crate::games::dots::board::Lines;
use std::sync::atomic::{AtomicU64, Ordering};

/// "No best move" marker.
pub(crate) const NO_MOVE: u8 = u8::MAX;

/// One table slot, unpacked. In the table a slot is two `u64`s: the key, and the
/// data `lower | upper << 16 | depth << 32 | best << 40` (bounds as 16-bit two's
/// complement), so that an all-zero slot is empty and a zeroed allocation is a
/// valid empty table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

impl Entry {
    #[inline]
    fn unpack(key: u64, data: u64) -> Entry {
        Entry {
            key,
            lower: data as u16 as i16,
            upper: (data >> 16) as u16 as i16,
            depth: (data >> 32) as u8,
            best: (data >> 40) as u8,
        }
    }

    #[inline]
    fn pack(&self) -> u64 {
        u64::from(self.lower as u16)
            | u64::from(self.upper as u16) << 16
            | u64::from(self.depth) << 32
            | u64::from(self.best) << 40
    }
}

/// Words per bucket: two slots `[key0, data0, key1, data1]` (32 bytes); slot 0 is
/// depth-preferred, slot 1 always replaced.
const BUCKET: usize = 4;

/// Bit of a bucket's `data0` word that locks the bucket (entries use bits 0..48).
const LOCK: u64 = 1 << 63;

/// The table itself: a flat vector of words whose buckets start at a multiple of
/// 32 bytes (so that no bucket straddles a cache line).
///
/// Several search threads share one table (lazy SMP). A bucket is read and written
/// only under its lock, a bit of its first data word taken with one
/// compare-and-swap, so no thread ever sees half of another's write: with full keys
/// and no torn entries a hit is always the position's own bounds.
pub(crate) struct Table {
    words: Vec<AtomicU64>,
    /// Index of the first word of bucket 0.
    offset: usize,
    shift: u32,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("buckets", &((self.words.len() - BUCKET) / BUCKET))
            .finish()
    }
}

/// A locked bucket: its four words as they were, released (with `data0` as given
/// to [`Locked::release`]) when done.
struct Locked<'a> {
    words: &'a [AtomicU64],
    read: [u64; BUCKET],
}

impl Locked<'_> {
    /// Unlocks the bucket unchanged.
    fn unlock(self) {
        self.words[1].store(self.read[1], Ordering::Release);
    }

    /// Writes the bucket and unlocks it (the first data word last, as the unlock).
    fn release(self, new: [u64; BUCKET]) {
        self.words[0].store(new[0], Ordering::Relaxed);
        self.words[2].store(new[2], Ordering::Relaxed);
        self.words[3].store(new[3], Ordering::Relaxed);
        self.words[1].store(new[1] & !LOCK, Ordering::Release);
    }
}

impl Table {
    /// A table of at most `bytes` bytes (a power of two buckets, at least one).
    /// The memory is allocated zeroed, so pages are only touched when used.
    pub fn new(bytes: usize) -> Table {
        let want = (bytes / (8 * BUCKET)).max(1);
        // Largest power of two not above `want`.
        let count = 1usize << (usize::BITS - 1 - want.leading_zeros());
        // `vec![0; n]` allocates zeroed memory; one spare bucket for alignment.
        let words = zeroed_atomics(BUCKET * (count + 1));
        let misalign = (words.as_ptr() as usize / 8) % BUCKET;
        Table {
            words,
            offset: (BUCKET - misalign) % BUCKET,
            shift: 64 - count.trailing_zeros(),
        }
    }

    /// Bytes of the table's buckets.
    pub fn bytes(&self) -> usize {
        (1usize << (64 - self.shift)) * BUCKET * 8
    }

    /// Empties every slot.
    pub fn clear(&mut self) {
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
    }

    #[inline]
    fn index(&self, key: Lines) -> usize {
        // Fibonacci hashing; a shift of 64 (one bucket) must not overflow.
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.offset + BUCKET * h.checked_shr(self.shift).unwrap_or(0) as usize
    }

    /// Starts fetching the bucket of `key` into the caches, for a probe soon after.
    #[inline]
    pub fn prefetch(&self, key: Lines) {
        crate::sys::prefetch(&self.words[self.index(key)]);
    }

    /// Locks the bucket of `key` and reads it.
    #[inline]
    fn lock(&self, key: Lines) -> Locked<'_> {
        self.lock_at(self.index(key))
    }

    /// Locks the bucket whose first word is `i` and reads it.
    #[inline]
    fn lock_at(&self, i: usize) -> Locked<'_> {
        let words = &self.words[i..i + BUCKET];
        let data0 = loop {
            let d = words[1].load(Ordering::Relaxed);
            if d & LOCK == 0
                && words[1]
                    .compare_exchange_weak(d, d | LOCK, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                break d;
            }
            std::hint::spin_loop();
        };
        let read = [
            words[0].load(Ordering::Relaxed),
            data0,
            words[2].load(Ordering::Relaxed),
            words[3].load(Ordering::Relaxed),
        ];
        Locked { words, read }
    }

    /// The entry for `key`, if present.
    #[inline]
    pub fn probe(&self, key: Lines) -> Option<Entry> {
        let bucket = self.lock(key);
        let b = bucket.read;
        bucket.unlock();
        (0..2)
            .map(|i| Entry::unpack(b[2 * i], b[2 * i + 1]))
            .find(|e| e.depth != 0 && e.key == key)
    }

    /// Records bounds `lower..=upper` and the best move for `key`, merging them with
    /// what the table already knows about `key` (both are true bounds of the same
    /// exact value, so the intersection is too).
    #[inline]
    pub fn store(&self, key: Lines, depth: u8, lower: i16, upper: i16, best: u8) {
        debug_assert!(depth != 0);
        let bucket = self.lock(key);
        let mut b = bucket.read;
        for i in 0..2 {
            let mut e = Entry::unpack(b[2 * i], b[2 * i + 1]);
            if e.depth != 0 && e.key == key {
                e.lower = e.lower.max(lower);
                e.upper = e.upper.min(upper);
                if best != NO_MOVE {
                    e.best = best;
                }
                b[2 * i + 1] = e.pack();
                bucket.release(b);
                return;
            }
        }
        let data = Entry {
            key,
            lower,
            upper,
            depth,
            best,
        }
        .pack();
        if depth >= (b[1] >> 32) as u8 {
            b[2] = b[0];
            b[3] = b[1];
            b[0] = key;
            b[1] = data;
        } else {
            b[2] = key;
            b[3] = data;
        }
        bucket.release(b);
    }

    /// Every entry of at least `min_depth` (open lines + 1), read bucket by bucket
    /// under each bucket's lock, so each entry is whole.
    pub fn entries(&self, min_depth: u8) -> Vec<Entry> {
        let buckets = 1usize << (64 - self.shift);
        let mut out = Vec::new();
        for b in 0..buckets {
            let bucket = self.lock_at(self.offset + BUCKET * b);
            let read = bucket.read;
            bucket.unlock();
            out.extend(
                (0..2)
                    .map(|i| Entry::unpack(read[2 * i], read[2 * i + 1]))
                    .filter(|e| e.depth != 0 && e.depth >= min_depth),
            );
        }
        out
    }
}

/// `n` zeroed atomic words from a zeroed allocation (pages untouched until used).
fn zeroed_atomics(n: usize) -> Vec<AtomicU64> {
    const _: () = assert!(
        std::mem::size_of::<AtomicU64>() == std::mem::size_of::<u64>()
            && std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>()
    );
    let mut words = std::mem::ManuallyDrop::new(vec![0u64; n]);
    // Probes land at random across gigabytes: on 4 KiB pages nearly each one would
    // also miss the TLB. The pages are still untouched, so the advice takes effect.
    crate::sys::advise_huge_pages(words.as_ptr().cast(), n * 8);
    let (ptr, len, capacity) = (words.as_mut_ptr(), words.len(), words.capacity());
    // SAFETY: `AtomicU64` has the size, alignment and bit validity of `u64` (checked
    // above), so the allocation of a `Vec<u64>` is one of a `Vec<AtomicU64>` with the
    // same length and capacity; `words` is not used or dropped again.
    unsafe { Vec::from_raw_parts(ptr.cast::<AtomicU64>(), len, capacity) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_32_bytes_and_entries_round_trip() {
        let t = Table::new(1 << 10);
        assert_eq!(t.words[t.offset..].as_ptr() as usize % 32, 0);
        assert_eq!(t.words.len(), BUCKET * (1 + (1 << 10) / 32));
        for (lower, upper, depth, best) in [(-1000, 1000, 65, NO_MOVE), (-3, -3, 1, 0)] {
            let e = Entry {
                key: 42,
                lower,
                upper,
                depth,
                best,
            };
            assert_eq!(Entry::unpack(42, e.pack()), e);
        }
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
    fn entries_lists_the_deep_enough_entries() {
        let t = Table::new(1 << 12);
        t.store(5, 30, -2, 4, 1);
        t.store(6, 10, 0, 0, NO_MOVE);
        t.store(0, 31, 3, 3, 2);
        let mut deep: Vec<(Lines, i16, i16)> = t
            .entries(20)
            .into_iter()
            .map(|e| (e.key, e.lower, e.upper))
            .collect();
        deep.sort_unstable();
        assert_eq!(deep, [(0, 3, 3), (5, -2, 4)]);
        assert_eq!(t.entries(1).len(), 3);
    }

    #[test]
    fn zero_key_is_a_valid_key() {
        let t = Table::new(1 << 12);
        assert!(t.probe(0).is_none());
        t.store(0, 25, 2, 2, NO_MOVE);
        assert_eq!(t.probe(0).unwrap().lower, 2);
    }

    /// Threads writing and reading one small table at once (every key collides
    /// with many): a hit is always whole, the bounds of its own key and never
    /// another's half-written entry.
    #[test]
    fn concurrent_entries_are_never_torn() {
        let t = Table::new(32 * 64);
        let bound = |key: u64| (key % 2000) as i16 - 1000;
        std::thread::scope(|scope| {
            for thread in 0..4u64 {
                let t = &t;
                scope.spawn(move || {
                    let mut key = thread;
                    for _ in 0..1_000_000 {
                        key = key
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let k = (key >> 40) % 512;
                        t.store(k, (k % 60 + 1) as u8, bound(k), bound(k), (k % 64) as u8);
                        if let Some(e) = t.probe(k ^ 1) {
                            assert_eq!(
                                (e.key, e.lower, e.upper),
                                (k ^ 1, bound(k ^ 1), bound(k ^ 1))
                            );
                            assert_eq!(e.best, ((k ^ 1) % 64) as u8);
                        }
                    }
                });
            }
        });
    }
}
