//! The transposition table: a bounded, eight-way set-associative hash table keyed by
//! canonical positions, holding value bounds, one 64-bit word per entry and no locks.
//!
//! A key (a position of `L` lines, so below `2^L`) is hashed by multiplying it by an
//! odd constant modulo `2^L`, which is a bijection: the top bits of the hash choose
//! the bucket and the entry keeps the rest, so the key is recovered exactly from the
//! bucket and the entry and a hit is never a collision. An entry holds a lower and
//! an upper bound on the value (equal bounds = exact value) and the best move found,
//! in canonical coordinates; the depth (open lines) is the key's. A bucket (64
//! bytes, one cache line) has eight slots: four keep the deepest entries seen
//! (replace-by-depth), the other four the latest of the rest, oldest out first, so
//! deep results survive floods of shallow ones. (Four slots of 32 bytes, three by
//! depth and one always replaced, searched 3.7% more nodes on empty 4x4 with 1 GiB,
//! and 13.5% more on a 4x4 middle game with 16 MiB: a probe reads one cache line
//! either way.)
//!
//! Several search threads share one table (lazy SMP). Each entry is one atomic word,
//! read and written whole, so no thread ever sees half of another's entry; two
//! threads storing into one bucket at once may lose one of the two entries (or keep
//! a key twice), and every entry is still a true bound of its own key's value.

use crate::games::dots::board::Lines;
use std::sync::atomic::{AtomicU64, Ordering};

/// "No best move" marker.
pub(crate) const NO_MOVE: u8 = u8::MAX;

/// One table entry, unpacked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Canonical position.
    pub key: Lines,
    /// Lower bound on the value.
    pub lower: i16,
    /// Upper bound on the value.
    pub upper: i16,
    /// Open lines + 1.
    pub depth: u8,
    /// Best move in canonical coordinates, or [`NO_MOVE`].
    pub best: u8,
}

/// Slots per bucket (64 bytes: one cache line).
const BUCKET: usize = 8;
/// Slots `0..DEPTH_SLOTS` keep the deepest entries; the others are a queue of the
/// latest entries stored (slot `DEPTH_SLOTS` the newest).
const DEPTH_SLOTS: usize = 4;

/// Bits of an entry's word that hold the rest of the key's hash: the bucket's bits
/// and these make `L`, so a board of `L` lines needs at least `2^(L - REST_BITS)`
/// buckets (64 MiB for 5x5's 60 lines).
const REST_BITS: u32 = 40;
/// A bound beyond what an entry holds: the lower bound `i8::MIN` and the upper bound
/// `i8::MAX` stand for no bound.
const UNBOUNDED: i16 = 30_000;
/// The best move's field (7 bits): [`NO_MOVE`] is stored as this.
const NO_MOVE_FIELD: u64 = 0x7f;
/// Set in every occupied slot (an all-zero word is empty).
const OCCUPIED: u64 = 1 << 63;

/// The hash multiplier (odd: a bijection modulo any power of two).
const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// The table itself: a flat vector of words whose buckets start at a multiple of
/// 64 bytes (so that each bucket is one cache line).
pub(crate) struct Table {
    words: Vec<AtomicU64>,
    /// Index of the first word of bucket 0.
    offset: usize,
    /// Lines of the board (`L`): keys are below `2^L`.
    lines: u32,
    /// log2 of the number of buckets (at most `L`, at least `L - REST_BITS`).
    bucket_bits: u32,
    /// The inverse of [`MULTIPLIER`] modulo `2^64`.
    inverse: u64,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("buckets", &(1usize << self.bucket_bits))
            .finish()
    }
}

/// An `i16` bound in an entry's 8 bits: a lower bound below what fits is stored as no
/// bound, one above as the highest (a weaker bound still holds); likewise upper.
fn encode_lower(lower: i16) -> u64 {
    u64::from(lower.clamp(i8::MIN.into(), i8::MAX.into()) as i8 as u8)
}

fn encode_upper(upper: i16) -> u64 {
    let u = if upper >= i16::from(i8::MAX) {
        i8::MAX
    } else {
        upper.max(i16::from(i8::MIN) + 1) as i8
    };
    u64::from(u as u8)
}

fn decode_lower(field: u64) -> i16 {
    match field as u8 as i8 {
        i8::MIN => -UNBOUNDED,
        l => l.into(),
    }
}

fn decode_upper(field: u64) -> i16 {
    match field as u8 as i8 {
        i8::MAX => UNBOUNDED,
        u => u.into(),
    }
}

impl Table {
    /// A table of at most `bytes` bytes (a power of two buckets, at least one, and at
    /// least `2^(lines - 40)`: see [`REST_BITS`]) for positions of `lines` lines.
    /// The memory is allocated zeroed, so pages are only touched when used.
    pub fn new(bytes: usize, lines: u32) -> Table {
        assert!(lines <= 64);
        let want = (bytes / (8 * BUCKET)).max(1);
        // Largest power of two not above `want`, within the bounds above.
        let bucket_bits = (usize::BITS - 1 - want.leading_zeros())
            .min(lines)
            .max(lines.saturating_sub(REST_BITS));
        let count = 1usize << bucket_bits;
        // `vec![0; n]` allocates zeroed memory; one spare bucket for alignment.
        let words = zeroed_atomics(BUCKET * (count + 1));
        let misalign = (words.as_ptr() as usize / 8) % BUCKET;
        let mut inverse = MULTIPLIER;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(MULTIPLIER.wrapping_mul(inverse)));
        }
        debug_assert_eq!(MULTIPLIER.wrapping_mul(inverse), 1);
        Table {
            words,
            offset: (BUCKET - misalign) % BUCKET,
            lines,
            bucket_bits,
            inverse,
        }
    }

    /// Bytes of the table's buckets.
    pub fn bytes(&self) -> usize {
        (1usize << self.bucket_bits) * BUCKET * 8
    }

    /// Empties every slot.
    pub fn clear(&mut self) {
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
    }

    /// Bits of the hash kept in an entry.
    #[inline]
    fn rest_bits(&self) -> u32 {
        self.lines - self.bucket_bits
    }

    /// The first word of `key`'s bucket, and the rest of its hash.
    #[inline]
    fn place(&self, key: Lines) -> (usize, u64) {
        debug_assert!(
            key.checked_shr(self.lines).unwrap_or(0) == 0,
            "key {key:#x}"
        );
        let mask = u64::MAX.checked_shr(64 - self.lines).unwrap_or(0);
        let h = key.wrapping_mul(MULTIPLIER) & mask;
        let rest_bits = self.rest_bits();
        let bucket = h.checked_shr(rest_bits).unwrap_or(0) as usize;
        let rest = h & !u64::MAX.checked_shl(rest_bits).unwrap_or(0);
        (self.offset + BUCKET * bucket, rest)
    }

    /// The entry a slot's word holds, in the bucket whose first word is `at`.
    #[inline]
    fn unpack(&self, at: usize, word: u64) -> Entry {
        let rest_bits = self.rest_bits();
        let bucket = ((at - self.offset) / BUCKET) as u64;
        let h = bucket.checked_shl(rest_bits).unwrap_or(0) | word & ((1u64 << REST_BITS) - 1);
        let mask = u64::MAX.checked_shr(64 - self.lines).unwrap_or(0);
        let key = h.wrapping_mul(self.inverse) & mask;
        let best = (word >> 56) & NO_MOVE_FIELD;
        Entry {
            key,
            lower: decode_lower(word >> 40 & 0xff),
            upper: decode_upper(word >> 48 & 0xff),
            depth: (self.lines - key.count_ones() + 1) as u8,
            best: if best == NO_MOVE_FIELD {
                NO_MOVE
            } else {
                best as u8
            },
        }
    }

    /// A slot's word for `key` (whose rest of hash is `rest`).
    #[inline]
    fn pack(rest: u64, lower: i16, upper: i16, best: u8) -> u64 {
        let best = if best == NO_MOVE {
            NO_MOVE_FIELD
        } else {
            u64::from(best) & NO_MOVE_FIELD
        };
        OCCUPIED | rest | encode_lower(lower) << 40 | encode_upper(upper) << 48 | best << 56
    }

    /// Whether a slot's word holds the key whose rest of hash is `rest`.
    #[inline]
    fn holds(word: u64, rest: u64) -> bool {
        word & (OCCUPIED | ((1u64 << REST_BITS) - 1)) == OCCUPIED | rest
    }

    /// Starts fetching the bucket of `key` into the caches, for a probe soon after.
    #[inline]
    pub fn prefetch(&self, key: Lines) {
        crate::sys::prefetch(&self.words[self.place(key).0]);
    }

    /// The entry for `key`, if present.
    #[inline]
    pub fn probe(&self, key: Lines) -> Option<Entry> {
        let (at, rest) = self.place(key);
        let bucket = &self.words[at..at + BUCKET];
        bucket.iter().find_map(|w| {
            let word = w.load(Ordering::Relaxed);
            Self::holds(word, rest).then(|| self.unpack(at, word))
        })
    }

    /// Records bounds `lower..=upper` and the best move for `key`, merging them with
    /// what the table already knows about `key` (both are true bounds of the same
    /// exact value, so the intersection is too).
    #[inline]
    pub fn store(&self, key: Lines, lower: i16, upper: i16, best: u8) {
        let (at, rest) = self.place(key);
        let bucket = &self.words[at..at + BUCKET];
        let read: [u64; BUCKET] = std::array::from_fn(|i| bucket[i].load(Ordering::Relaxed));
        if let Some(i) = read.iter().position(|&w| Self::holds(w, rest)) {
            let e = self.unpack(at, read[i]);
            let best = if best == NO_MOVE { e.best } else { best };
            let word = Self::pack(rest, e.lower.max(lower), e.upper.min(upper), best);
            bucket[i].store(word, Ordering::Relaxed);
            return;
        }
        let word = Self::pack(rest, lower, upper, best);
        // Open lines of each depth-preferred slot (an empty one: none, taken first).
        let open = |w: u64| {
            if w & OCCUPIED == 0 {
                -1
            } else {
                i32::from(self.unpack(at, w).depth)
            }
        };
        let (shallowest, least) = (0..DEPTH_SLOTS)
            .map(|i| (i, open(read[i])))
            .min_by_key(|&(_, d)| d)
            .expect("a bucket has depth-preferred slots");
        let depth = (self.lines - key.count_ones() + 1) as i32;
        let recent = |word: u64| {
            // The queue of latest entries: each moves one slot down, the oldest out.
            for i in (DEPTH_SLOTS + 1..BUCKET).rev() {
                bucket[i].store(read[i - 1], Ordering::Relaxed);
            }
            bucket[DEPTH_SLOTS].store(word, Ordering::Relaxed);
        };
        if depth >= least {
            if read[shallowest] & OCCUPIED != 0 {
                recent(read[shallowest]);
            }
            bucket[shallowest].store(word, Ordering::Relaxed);
        } else {
            recent(word);
        }
    }

    /// Every entry of at least `min_depth` (open lines + 1).
    pub fn entries(&self, min_depth: u8) -> Vec<Entry> {
        let buckets = 1usize << self.bucket_bits;
        let mut out = Vec::new();
        for b in 0..buckets {
            let at = self.offset + BUCKET * b;
            out.extend(
                self.words[at..at + BUCKET]
                    .iter()
                    .map(|w| w.load(Ordering::Relaxed))
                    .filter(|w| w & OCCUPIED != 0)
                    .map(|w| self.unpack(at, w))
                    .filter(|e| e.depth >= min_depth),
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
    fn buckets_are_64_bytes_and_entries_round_trip() {
        let t = Table::new(1 << 10, 24);
        assert_eq!(t.words[t.offset..].as_ptr() as usize % 64, 0);
        assert_eq!(t.words.len(), BUCKET * (1 + (1 << 10) / 64));
        for (key, lower, upper, best) in [
            (42, -100, 100, NO_MOVE),
            (0xff_ffff, -3, -3, 0),
            (0, 127, 126, 23),
            (5, -127, -127, 63),
        ] {
            t.store(key, lower, upper, best);
            let e = t.probe(key).unwrap();
            assert_eq!((e.key, e.lower, e.upper, e.best), (key, lower, upper, best));
            assert_eq!(e.depth as u32, 24 - key.count_ones() + 1);
        }
    }

    /// Bounds beyond what an entry holds are stored weaker, never stronger.
    #[test]
    fn bounds_out_of_range_are_weakened() {
        for (lower, upper) in [(-1000, 1000), (200, 300), (-300, -200), (-128, 127)] {
            let t = Table::new(1 << 10, 20);
            t.store(9, lower, upper, NO_MOVE);
            let e = t.probe(9).unwrap();
            assert!(
                e.lower <= lower && e.upper >= upper,
                "{lower} {upper}: {e:?}"
            );
        }
    }

    #[test]
    fn store_merges_bounds_and_deep_entries_survive() {
        let mut t = Table::new(64, 20); // one bucket: everything collides
        t.store(7, -3, 5, 1);
        t.store(7, 1, 9, NO_MOVE);
        let e = t.probe(7).unwrap();
        assert_eq!((e.lower, e.upper, e.best), (1, 5, 1));
        // Deep entries (few lines drawn) and shallow ones (many).
        for deep in [0b1, 0b10, 0b100] {
            t.store(deep, 0, 0, 2);
        }
        let shallow = [0xfff, 0xffe, 0xffd, 0xffb, 0xff7, 0xfef];
        for key in shallow {
            t.store(key, 0, 0, 4);
        }
        for deep in [7, 0b1, 0b10, 0b100] {
            assert!(t.probe(deep).is_some(), "the deep entry {deep} stays");
        }
        // The queue keeps the latest four, in the order stored.
        for (i, key) in shallow.into_iter().enumerate() {
            assert_eq!(t.probe(key).is_some(), i >= 2, "{key:#x}");
        }
        let newest = |t: &Table| {
            let word = t.words[t.offset + DEPTH_SLOTS].load(Ordering::Relaxed);
            t.unpack(t.offset, word).key
        };
        assert_eq!(newest(&t), 0xfef);
        // A deeper entry takes a depth slot; the shallowest there joins the queue.
        t.store(0, 1, 1, NO_MOVE);
        assert!(t.probe(0).is_some());
        assert_eq!(
            newest(&t),
            7,
            "the shallowest deep entry moved to the queue"
        );
        assert!(t.probe(0xffd).is_none(), "the oldest of the queue fell out");
        t.clear();
        assert!(t.probe(7).is_none());
    }

    /// Keys are recovered from their bucket and entry: on a table of many buckets and
    /// on one of the fewest (where the entry keeps 40 bits), every stored key comes
    /// back as itself and no other key hits.
    #[test]
    fn keys_are_exact() {
        for (bytes, lines) in [(1 << 16, 24), (64, 40), (0, 60), (1 << 30, 60)] {
            let t = Table::new(bytes, lines);
            let mask = u64::MAX >> (64 - lines);
            let mut x: u64 = 0x1234_5678_9abc_def1;
            let mut keys = Vec::new();
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = x & mask;
                t.store(key, 1, 1, NO_MOVE);
                keys.push(key);
            }
            for e in t.entries(0) {
                assert!(keys.contains(&e.key));
                assert_eq!(t.probe(e.key).unwrap().key, e.key);
            }
            for &k in &keys {
                if let Some(e) = t.probe(k) {
                    assert_eq!(e.key, k);
                }
                if let Some(e) = t.probe(k ^ 1) {
                    assert_eq!(e.key, k ^ 1);
                    assert!(keys.contains(&(k ^ 1)));
                }
            }
        }
        assert!(Table::new(0, 60).bytes() >= 64 << 20);
    }

    #[test]
    fn entries_lists_the_deep_enough_entries() {
        let t = Table::new(1 << 12, 40);
        t.store(5, -2, 4, 1); // 38 open lines: depth 39
        t.store((1 << 30) - 1, 0, 0, NO_MOVE); // 10 open: depth 11
        t.store(0, 3, 3, 2); // depth 41
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
        let t = Table::new(1 << 12, 30);
        assert!(t.probe(0).is_none());
        t.store(0, 2, 2, NO_MOVE);
        assert_eq!(t.probe(0).unwrap().lower, 2);
    }

    /// Threads writing and reading one small table at once (every key collides
    /// with many): a hit is always whole, the bounds of its own key and never
    /// another's.
    #[test]
    fn concurrent_entries_are_never_torn() {
        let t = Table::new(64 * 32, 20);
        let bound = |key: u64| (key % 200) as i16 - 100;
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
                        t.store(k, bound(k), bound(k), (k % 64) as u8);
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
