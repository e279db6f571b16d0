//! The prover's table of proof and disproof numbers: open addressing with linear
//! probing in one array of 24-byte slots (the position and its two numbers), so
//! that a look-up is one cache line nearly always, and a slot can be fetched
//! ahead of its look-up ([`ProofTable::prefetch`]): an expansion fetches all its
//! children's slots at once instead of missing the cache on each in turn. A map
//! behind a hasher was a quarter of a build (a miss per look-up, one at a time).
//!
//! It answers as a map does (the prover's course does not depend on it): the
//! same entries whatever the order of insertions.
//!
//! Beside each slot the table keeps the work spent below its position (the
//! expansions of the searches below it, [`ProofTable::add_work`]), in an
//! array of its own: written after each search of a child, read when a table
//! at its bound chooses what to drop (the least work first, the cheapest to
//! redo).

use super::geometry::Cells;

/// A canonical position: X's cells, O's cells (the prover's key).
type Key = (Cells, Cells);

/// "Infinite" proof or disproof number: the position is disproven or proven.
pub const INFINITE: u32 = u32::MAX / 4;

/// Proof and disproof numbers of a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbers {
    /// Leaves still to prove (0: X wins).
    pub pn: u32,
    /// Leaves still to disprove (0: X does not win).
    pub dn: u32,
}

impl Numbers {
    pub(super) const PROVEN: Numbers = Numbers {
        pn: 0,
        dn: INFINITE,
    };
    pub(super) const DISPROVEN: Numbers = Numbers {
        pn: INFINITE,
        dn: 0,
    };
    pub(super) const UNKNOWN: Numbers = Numbers { pn: 1, dn: 1 };
}

/// No position: X and O on every cell.
const EMPTY: Key = (!0, !0);

/// One slot: a position (or [`EMPTY`]) and its numbers.
#[derive(Clone, Copy)]
struct Slot {
    key: Key,
    numbers: Numbers,
}

const FREE: Slot = Slot {
    key: EMPTY,
    numbers: Numbers { pn: 0, dn: 0 },
};

/// Bytes of a slot: a table of `n` slots takes `n` times this, and its work
/// 2 bytes a slot more (1/12 of it: a build bounds its tables at three quarters
/// of its memory, so the work fits in the quarter left, and the tables are as
/// large as they were before they kept it).
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

/// Work (expansions) in 16 bits: an 11-bit mantissa and a 5-bit exponent,
/// `mantissa << exponent`, exact below 2,048 and within 1/1,024 above (up to
/// 2^42, where it stops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Work(u16);

impl Work {
    const MANTISSA_BITS: u32 = 11;
    /// The largest work it holds.
    pub const MOST: u64 = ((1 << Self::MANTISSA_BITS) - 1) << 31;

    /// The encoding of `expansions` (rounded down).
    pub fn of(expansions: u64) -> Work {
        let w = expansions.min(Self::MOST);
        let bits = 64 - w.leading_zeros();
        let exponent = bits.saturating_sub(Self::MANTISSA_BITS);
        Work(((exponent << Self::MANTISSA_BITS) as u16) | (w >> exponent) as u16)
    }

    /// `self` and `expansions` more, rounded to what 16 bits hold: down, or
    /// up to the next work it holds when `dice` (any number, a fair throw)
    /// modulo the step between the two falls below what rounding down would
    /// lose, so that sums of many small works come out right on average.
    pub fn add(self, expansions: u64, dice: u64) -> Work {
        let sum = self.expansions().saturating_add(expansions).min(Self::MOST);
        let down = Work::of(sum);
        let lost = sum - down.expansions();
        let step = 1u64 << (down.0 >> Self::MANTISSA_BITS);
        if lost > dice % step {
            Work::of(down.expansions() + step)
        } else {
            down
        }
    }

    /// The expansions it stands for.
    pub fn expansions(self) -> u64 {
        let mantissa = u64::from(self.0) & ((1 << Self::MANTISSA_BITS) - 1);
        mantissa << (self.0 >> Self::MANTISSA_BITS)
    }

    /// Its 16 bits (a checkpoint's).
    pub fn bits(self) -> u16 {
        self.0
    }

    /// The work of 16 bits [`Work::bits`] gave.
    pub fn from_bits(bits: u16) -> Work {
        Work(bits)
    }

    /// Classes of works ([`Work::class`]).
    pub const CLASSES: usize = 1 + 4 * 43;

    /// A class of works: 0 for none (a position never expanded: its first
    /// estimate, or settled as a leaf), then four classes a power of two,
    /// larger works in higher classes.
    pub fn class(self) -> usize {
        let w = self.expansions();
        if w == 0 {
            return 0;
        }
        let log = w.ilog2();
        let below = if log >= 2 {
            (w >> (log - 2)) & 3
        } else {
            (w << (2 - log)) & 3
        };
        1 + 4 * log as usize + below as usize
    }
}

/// Fewest slots of a table.
const MIN_SLOTS: usize = 1 << 10;

/// Positions -> numbers.
pub struct ProofTable {
    slots: Vec<Slot>,
    /// The work below each slot's position (0 for a free slot).
    work: Vec<Work>,
    /// `slots.len() - 1` (a power of two less one).
    mask: usize,
    /// Entries.
    len: usize,
}

impl Default for ProofTable {
    fn default() -> Self {
        ProofTable::with_slots(MIN_SLOTS)
    }
}

/// The slot where a position's probe starts, in a table of `mask + 1` slots.
#[inline]
fn home(key: Key, mask: usize) -> usize {
    let h = (key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.1.rotate_left(29))
        .wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (h >> 32) as usize & mask
}

impl ProofTable {
    fn with_slots(slots: usize) -> ProofTable {
        ProofTable {
            slots: vec![FREE; slots],
            work: vec![Work::default(); slots],
            mask: slots - 1,
            len: 0,
        }
    }

    /// An empty table with room for `entries` entries without growing: entries
    /// read in another table's slot order must go into one this big (into a
    /// smaller one growing as they come, the first of them fill its slots in
    /// order and the rest probe past them: 9.7 M entries had not gone in after 9
    /// minutes).
    pub fn with_capacity(entries: usize) -> ProofTable {
        ProofTable::with_slots((entries / 3 * 4 + 1).next_power_of_two().max(MIN_SLOTS))
    }

    /// Slots (entries it holds before it doubles: three quarters of them).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot holding `key`, or the free slot where it would go.
    #[inline]
    fn find(&self, key: Key) -> usize {
        let mut i = home(key, self.mask);
        loop {
            let k = self.slots[i].key;
            if k == key || k == EMPTY {
                return i;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Fetches the slot where a look-up of `key` starts into the cache.
    #[inline]
    pub fn prefetch(&self, key: Key) {
        crate::sys::prefetch(&self.slots[home(key, self.mask)]);
    }

    /// The numbers of `key`, if any.
    #[inline]
    pub fn get(&self, key: &Key) -> Option<&Numbers> {
        let slot = &self.slots[self.find(*key)];
        (slot.key != EMPTY).then_some(&slot.numbers)
    }

    /// Whether the table holds `key`.
    #[inline]
    pub fn contains_key(&self, key: &Key) -> bool {
        self.get(key).is_some()
    }

    /// Sets the numbers of `key`.
    pub fn insert(&mut self, key: Key, numbers: Numbers) {
        self.put(key, numbers);
    }

    /// [`ProofTable::insert`], giving the slot `key` is in.
    fn put(&mut self, key: Key, numbers: Numbers) -> usize {
        let i = self.find(key);
        if self.slots[i].key == EMPTY {
            // At most three quarters full (probes stay short).
            if (self.len + 1) * 4 > self.slots.len() * 3 {
                self.double();
                return self.put(key, numbers);
            }
            self.len += 1;
        }
        self.slots[i] = Slot { key, numbers };
        i
    }

    /// Adds `expansions` to the work below `key`, if the table holds it
    /// ([`Work::add`] with `dice`).
    pub fn add_work(&mut self, key: Key, expansions: u64, dice: u64) {
        let i = self.find(key);
        if self.slots[i].key == key {
            self.work[i] = self.work[i].add(expansions, dice);
        }
    }

    /// Sets the numbers of `key` and the work below it (a checkpoint's entry).
    pub fn insert_with_work(&mut self, key: Key, numbers: Numbers, work: Work) {
        let i = self.put(key, numbers);
        self.work[i] = work;
    }

    /// Doubles the table in place: the array grows where it lies (a large
    /// block is remapped, not copied), and the entries move within it. A new
    /// array beside the old held both at once, half as much again as the
    /// doubled table: 19 GB at the peak of a 13 GB table.
    fn double(&mut self) {
        let old = self.slots.len();
        self.slots.reserve_exact(old);
        self.slots.resize(old * 2, FREE);
        self.work.reserve_exact(old);
        self.work.resize(old * 2, Work::default());
        self.mask = old * 2 - 1;
        let start = self.free_slot(old);
        self.put_back(old, start);
    }

    /// The first free slot of the first `old` slots.
    fn free_slot(&self, old: usize) -> usize {
        (0..old)
            .find(|&i| self.slots[i].key == EMPTY)
            .expect("a table is at most three quarters full")
    }

    /// Takes the entries of the first `old` slots out and puts them back, in
    /// the order of their slots from just past `start`, a slot that was free
    /// before any change (so that no run of full slots is cut at the start; a
    /// slot freed by `retain` may lie inside a run, and starting there lost
    /// entries): after a doubling (an entry's new home is its old one or that
    /// plus `old`) or after entries were freed.
    ///
    /// Put back in that order, an entry never lands past its slot (or past its
    /// slot plus `old`, in a doubled table's upper half, whose entries are the
    /// old table's less some, moved up): so the run from its home to it
    /// crosses only slots already done, which are never freed again, and every
    /// entry is findable at the end.
    fn put_back(&mut self, old: usize, start: usize) {
        for step in 1..old {
            let i = (start + step) & (old - 1);
            let slot = self.slots[i];
            if slot.key != EMPTY {
                let work = std::mem::take(&mut self.work[i]);
                self.slots[i] = FREE;
                let j = self.find(slot.key);
                self.slots[j] = slot;
                self.work[j] = work;
            }
        }
    }

    /// Keeps the entries `keep` accepts (given each one's position, numbers
    /// and work), in place.
    pub fn retain(&mut self, mut keep: impl FnMut(&Key, &Numbers, Work) -> bool) {
        let start = self.free_slot(self.slots.len());
        for (slot, work) in self.slots.iter_mut().zip(self.work.iter_mut()) {
            if slot.key != EMPTY && !keep(&slot.key, &slot.numbers, *work) {
                *slot = FREE;
                *work = Work::default();
                self.len -= 1;
            }
        }
        self.put_back(self.slots.len(), start);
    }

    /// The fewest slots for the entries (at most half full). The entries are
    /// copied out (into a list of their own size) and the array shrinks where
    /// it lies: a smaller array beside it held half as much again.
    pub fn shrink_to_fit(&mut self) {
        let slots = (self.len * 2).next_power_of_two().max(MIN_SLOTS);
        if slots < self.slots.len() {
            // Two lists, not one of pairs (32 bytes a pair with its padding).
            let (entries, works): (Vec<Slot>, Vec<Work>) = self
                .slots
                .iter()
                .zip(&self.work)
                .filter(|(s, _)| s.key != EMPTY)
                .map(|(&s, &w)| (s, w))
                .unzip();
            self.slots.truncate(slots);
            self.slots.shrink_to_fit();
            self.slots.fill(FREE);
            self.work.truncate(slots);
            self.work.shrink_to_fit();
            self.work.fill(Work::default());
            self.mask = slots - 1;
            for (slot, work) in entries.into_iter().zip(works) {
                let i = self.find(slot.key);
                self.slots[i] = slot;
                self.work[i] = work;
            }
        }
    }

    /// Every entry with the work below it.
    pub fn iter(&self) -> impl Iterator<Item = (Key, Numbers, Work)> + '_ {
        self.slots
            .iter()
            .zip(&self.work)
            .filter(|(s, _)| s.key != EMPTY)
            .map(|(s, &w)| (s.key, s.numbers, w))
    }

    /// Every entry's numbers.
    pub fn values(&self) -> impl Iterator<Item = &Numbers> {
        self.slots
            .iter()
            .filter(|s| s.key != EMPTY)
            .map(|s| &s.numbers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::qubic::threats::PositionMap;

    /// Entries freed by `retain` inside a run of full slots that wraps around
    /// the end of the table leave every other entry findable (when the entries
    /// were put back from the first slot free after the freeing, one inside
    /// the run, an entry of the run was lost).
    #[test]
    fn retain_keeps_entries_of_a_run_that_wraps_around() {
        let n = MIN_SLOTS;
        let with_home = |h: usize, skip: usize| {
            (0u64..)
                .map(|x| (x, 5))
                .filter(|&k| home(k, n - 1) == h)
                .nth(skip)
                .unwrap()
        };
        // Slot n-5 free; the run n-4..=n-1, 0..=2: A, B (home n-4), C (n-2),
        // D (n-1), F (n-3) at 0, X (1) at 1, E (n-2) at 2.
        let (a, b) = (with_home(n - 4, 0), with_home(n - 4, 1));
        let (c, d, f) = (
            with_home(n - 2, 0),
            with_home(n - 1, 0),
            with_home(n - 3, 0),
        );
        let (x, e) = (with_home(1, 0), with_home(n - 2, 1));
        let mut table = ProofTable::default();
        for key in [a, b, c, d, f, x, e] {
            table.insert(key, Numbers::PROVEN);
        }
        assert_eq!(table.find(f), 0);
        assert_eq!(table.find(e), 2);
        table.retain(|&k, _, _| k != a && k != x);
        assert_eq!(table.len(), 5);
        for key in [b, c, d, f, e] {
            assert_eq!(table.get(&key), Some(&Numbers::PROVEN), "{key:?} lost");
        }
    }

    /// Doubling in place keeps every entry findable where runs of full slots
    /// cross the end of the table, before and after doubling: entries are
    /// chosen whose homes fill the last slots of the table and of its double,
    /// so that their runs wrap around to the first slots.
    #[test]
    fn doubling_keeps_entries_whose_runs_wrap_around() {
        let small = MIN_SLOTS;
        let mut keys: Vec<Key> = Vec::new();
        // Homes in the last 8 slots of the doubled table (the last 8 of the
        // table too), and in the 8 slots before the old end (which become the
        // lower half's last 8): more than 8 of each, so both runs overflow.
        let mut near_end = 0;
        let mut below_middle = 0;
        for x in 0u64.. {
            let key = (x, 1);
            let h = home(key, 2 * small - 1);
            if h >= 2 * small - 8 && near_end < 40 {
                near_end += 1;
                keys.push(key);
            } else if (small - 8..small).contains(&h) && below_middle < 40 {
                below_middle += 1;
                keys.push(key);
            }
            if near_end == 40 && below_middle == 40 {
                break;
            }
        }
        // Then any keys, up to the doubling and past it.
        keys.extend((0..small as u64).map(|x| (x, 2)));
        let mut table = ProofTable::default();
        for (n, &key) in keys.iter().enumerate() {
            table.insert(
                key,
                Numbers {
                    pn: n as u32,
                    dn: 1,
                },
            );
        }
        assert!(table.slots.len() > small, "the table never doubled");
        assert_eq!(table.len(), keys.len());
        for (n, key) in keys.iter().enumerate() {
            assert_eq!(
                table.get(key),
                Some(&Numbers {
                    pn: n as u32,
                    dn: 1
                })
            );
        }
        assert_eq!(table.get(&(7, 7)), None);
    }

    /// Many small works added to a large one add up (rounded down alone,
    /// each would be lost), right within a few percent, and a sum never
    /// passes what the 16 bits hold.
    #[test]
    fn small_works_add_up() {
        let start = 1u64 << 20;
        let mut work = Work::of(start);
        for i in 0..100_000u64 {
            work = work.add(1, crate::store::checksum::mix(i));
        }
        let got = work.expansions() as f64;
        let want = (start + 100_000) as f64;
        assert!((got / want - 1.0).abs() < 0.03, "{got} for {want}");
        assert_eq!(Work::of(start).add(0, 7), Work::of(start));
        assert_eq!(
            Work::of(Work::MOST).add(u64::MAX, 1).expansions(),
            Work::MOST
        );
    }

    /// The table answers as a map does through inserts, overwrites, growth,
    /// retains and shrinking.
    #[test]
    fn the_table_answers_as_a_map() {
        let mut table = ProofTable::default();
        let mut map: PositionMap<Numbers> = PositionMap::default();
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..6 {
            for _ in 0..20_000 {
                // Few distinct keys, so that overwrites happen.
                let r = next();
                let key = (r % 50_000, (r >> 20) % 3);
                let numbers = Numbers {
                    pn: (r >> 40) as u32 % 4,
                    dn: (r >> 50) as u32 % 4,
                };
                table.insert(key, numbers);
                map.insert(key, numbers);
            }
            assert_eq!(table.len(), map.len());
            for key in map.keys().chain([(7, 7), (60_000, 1)].iter()) {
                assert_eq!(table.get(key), map.get(key));
            }
            let keep = |_: &Key, n: &Numbers| n.pn == 0 || n.dn == round % 4;
            table.retain(|k, n, _| keep(k, n));
            map.retain(|k, n| keep(k, n));
            table.shrink_to_fit();
            assert_eq!(table.len(), map.len());
            for key in map.keys() {
                assert_eq!(table.get(key), map.get(key));
            }
        }
        let mut values: Vec<(u32, u32)> = table.values().map(|n| (n.pn, n.dn)).collect();
        let mut expected: Vec<(u32, u32)> = map.values().map(|n| (n.pn, n.dn)).collect();
        values.sort();
        expected.sort();
        assert_eq!(values, expected);
    }
}
