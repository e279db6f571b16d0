//! Dense indexing of the symmetry classes of a table (m, o).
//!
//! A position is a pair (mover set, opponent set). Its class is the orbit under the 16
//! symmetries. The representative: the mover set is mapped to its canonical form (the
//! numerically least image), then among the symmetries doing that (a coset of the
//! canonical set's stabilizer) the least opponent image is taken.
//!
//! Index = offset of the canonical mover set + slot of the opponent set. The slot is the
//! colex rank of the opponent set compressed to the 24 - m free points, except for the
//! few canonical mover sets with a nontrivial stabilizer, where only stabilizer-least
//! opponent sets get slots (a per-set rank -> slot table keeps the index dense).

use std::ops::Range;
use std::sync::OnceLock;

use anyhow::{Result, bail};

use super::geometry::{Board, BoardKind, MAX_POINTS, Morabaraba, Nine, SYMMETRIES, Six, bits};
use crate::store::codec::Neighbours;
use crate::with_board;

/// Smallest stones per side in the moving-phase tables.
pub const MIN_STONES: u8 = 3;
/// Largest number of stones of a side on the nine board.
pub const MAX_STONES: u8 = Nine::MAX_STONES;

/// Side of the square of stone counts a side can have on any board (0..=12:
/// Morabaraba has 12 stones a side).
const COUNTS: usize = 13;

/// A board's indexing: its stone limit, its embedded canonical sets and its caches
/// of mover indices and tables (one static per board).
pub trait Indexed: Board {
    /// Most stones a side has on this board in any rule set.
    const MAX_STONES: u8;

    /// The canonical mover sets kept in the binary (`MoverIndex::embedded`), if
    /// any (computed on first use otherwise: a small board's take milliseconds).
    fn embedded_sets() -> Option<&'static [u8]>;

    /// The board's caches.
    fn caches() -> &'static Caches<Self>;
}

/// Every mover index and table index of one board built so far, and its class
/// counts.
pub struct Caches<B: Indexed> {
    movers: [OnceLock<MoverIndex<B>>; COUNTS],
    tables: [[OnceLock<Table<B>>; COUNTS]; COUNTS],
    counts: OnceLock<[[u64; COUNTS]; COUNTS]>,
}

impl<B: Indexed> Caches<B> {
    /// Empty caches (for a board's static).
    pub const fn new() -> Caches<B> {
        Caches {
            movers: [const { OnceLock::new() }; COUNTS],
            tables: [const { [const { OnceLock::new() }; COUNTS] }; COUNTS],
            counts: OnceLock::new(),
        }
    }
}

impl<B: Indexed> Default for Caches<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl Indexed for Nine {
    const MAX_STONES: u8 = 10;

    fn embedded_sets() -> Option<&'static [u8]> {
        Some(CANONICAL_SETS)
    }

    fn caches() -> &'static Caches<Nine> {
        static CACHES: Caches<Nine> = Caches::new();
        &CACHES
    }
}

impl Indexed for Morabaraba {
    const MAX_STONES: u8 = 12;

    fn embedded_sets() -> Option<&'static [u8]> {
        // The nine board's symmetries, hence its canonical mover sets.
        Some(CANONICAL_SETS)
    }

    fn caches() -> &'static Caches<Morabaraba> {
        static CACHES: Caches<Morabaraba> = Caches::new();
        &CACHES
    }
}

impl Indexed for Six {
    const MAX_STONES: u8 = 6;

    fn embedded_sets() -> Option<&'static [u8]> {
        None
    }

    fn caches() -> &'static Caches<Six> {
        static CACHES: Caches<Six> = Caches::new();
        &CACHES
    }
}

const fn binomials() -> [[u64; 25]; 25] {
    let mut c = [[0u64; 25]; 25];
    let mut n = 0;
    while n < 25 {
        c[n][0] = 1;
        let mut k = 1;
        while k <= n {
            c[n][k] = c[n - 1][k - 1] + if k < n { c[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    c
}

/// `BINOM[n][k]` = C(n, k) for n, k <= 24.
pub static BINOM: [[u64; 25]; 25] = binomials();

const fn rank_bytes() -> [[[u32; 256]; 17]; 3] {
    let mut out = [[[0u32; 256]; 17]; 3];
    let mut j = 0;
    while j < 3 {
        let mut before = 0;
        while before <= 8 * j {
            let mut v = 0;
            while v < 256 {
                let mut r = 0u64;
                let mut k = before + 1;
                let mut b = 0;
                while b < 8 {
                    if v & (1 << b) != 0 {
                        r += BINOM[8 * j + b][k];
                        k += 1;
                    }
                    b += 1;
                }
                out[j][before][v] = r as u32;
                v += 1;
            }
            before += 1;
        }
        j += 1;
    }
    out
}

/// `RANK_BYTES[j][k][v]`: colex rank contribution of byte `j` with value `v` when the
/// lower bytes hold `k` bits (so a 24-bit rank is three lookups).
static RANK_BYTES: [[[u32; 256]; 17]; 3] = rank_bytes();

/// Byte tables of software `pext` (`deposit` false: the bits of `v` at the set
/// positions of `f`, packed low) and `pdep` (true: the low bits of `v` spread onto
/// the set positions of `f`).
const fn scatter_bytes(deposit: bool) -> [[u8; 256]; 256] {
    let mut out = [[0u8; 256]; 256];
    let mut f = 0;
    while f < 256 {
        let mut v = 0;
        while v < 256 {
            let mut r = 0u8;
            let mut k = 0;
            let mut b = 0;
            while b < 8 {
                if f & (1 << b) != 0 {
                    let (from, to) = if deposit { (k, b) } else { (b, k) };
                    if v & (1 << from) != 0 {
                        r |= 1 << to;
                    }
                    k += 1;
                }
                b += 1;
            }
            out[f][v] = r;
            v += 1;
        }
        f += 1;
    }
    out
}

/// `PEXT_BYTES[f][v]`: the bits of `v` at the set positions of `f`, packed low.
static PEXT_BYTES: [[u8; 256]; 256] = scatter_bytes(false);

/// `PDEP_BYTES[f][v]`: the low bits of `v` spread onto the set positions of `f`.
static PDEP_BYTES: [[u8; 256]; 256] = scatter_bytes(true);

const fn pop_bytes() -> [u8; 256] {
    let mut out = [0u8; 256];
    let mut v = 0;
    while v < 256 {
        out[v] = (v as u32).count_ones() as u8;
        v += 1;
    }
    out
}

/// Bits set per byte value: the default x86-64 target has no `popcnt` instruction and
/// the software fallback dominated the index.
static POP: [u8; 256] = pop_bytes();

#[inline(always)]
fn pop8(v: u32) -> u32 {
    POP[v as usize] as u32
}

/// Colex rank of `mask` among the 24-bit masks with the same number of bits
/// (equals its position in increasing numeric order).
#[inline(always)]
pub fn rank24(mask: u32) -> u32 {
    let (b0, b1, b2) = (mask & 0xff, (mask >> 8) & 0xff, mask >> 16);
    let k1 = pop8(b0) as usize;
    let k2 = k1 + pop8(b1) as usize;
    RANK_BYTES[0][0][b0 as usize] + RANK_BYTES[1][k1][b1 as usize] + RANK_BYTES[2][k2][b2 as usize]
}

/// The bits of `set` at the set positions of `free`, packed low (software `pext`).
#[inline(always)]
pub fn compress(free: u32, set: u32) -> u32 {
    let f = [free & 0xff, (free >> 8) & 0xff, free >> 16];
    let n0 = pop8(f[0]);
    let n1 = n0 + pop8(f[1]);
    let c0 = PEXT_BYTES[f[0] as usize][(set & 0xff) as usize] as u32;
    let c1 = PEXT_BYTES[f[1] as usize][((set >> 8) & 0xff) as usize] as u32;
    let c2 = PEXT_BYTES[f[2] as usize][(set >> 16) as usize] as u32;
    c0 | c1 << n0 | c2 << n1
}

/// Inverse of [`compress`]: the low bits of `c` spread onto `free` (software `pdep`).
#[inline(always)]
pub fn deposit(free: u32, c: u32) -> u32 {
    let f = [free & 0xff, (free >> 8) & 0xff, free >> 16];
    let n0 = pop8(f[0]);
    let n1 = n0 + pop8(f[1]);
    let d0 = PDEP_BYTES[f[0] as usize][(c & 0xff) as usize] as u32;
    let d1 = PDEP_BYTES[f[1] as usize][((c >> n0) & 0xff) as usize] as u32;
    let d2 = PDEP_BYTES[f[2] as usize][((c >> n1) & 0xff) as usize] as u32;
    d0 | d1 << 8 | d2 << 16
}

/// Colex rank of `set` (a subset of `free`) with its points renumbered 0.. within `free`.
#[inline(always)]
pub fn rank_in(free: u32, set: u32) -> u32 {
    rank24(compress(free, set))
}

/// The `k`-subset of 0..24 with colex rank `rank` (inverse of [`rank24`]).
pub fn unrank24(k: u32, mut rank: u32) -> u32 {
    let mut out = 0u32;
    let mut c = MAX_POINTS;
    for kk in (1..=k as usize).rev() {
        // Largest c with C(c, kk) <= rank.
        c -= 1;
        while BINOM[c][kk] > rank as u64 {
            c -= 1;
        }
        rank -= BINOM[c][kk] as u32;
        out |= 1 << c;
    }
    out
}

/// Inverse of [`rank_in`]: the `k`-subset of `free` with colex rank `rank`.
#[inline]
pub fn unrank_in(free: u32, k: u32, rank: u32) -> u32 {
    deposit(free, unrank24(k, rank))
}

/// Next larger mask with the same number of bits (Gosper's hack).
#[inline]
pub fn next_combination(x: u32) -> u32 {
    let c = x & x.wrapping_neg();
    let r = x + c;
    // The empty set (placement tables with no stone of a side) is its own successor.
    (((r ^ x) >> 2).checked_div(c).unwrap_or(0)) | r
}

/// Every point a mask can hold (the packed sets of a table are subsets of it).
const UNIVERSE: u32 = (1 << MAX_POINTS) - 1;

/// All `k`-subsets of the points of `full` (`2^n - 1`) in increasing numeric (=
/// colex rank) order.
fn combinations(k: u32, full: u32) -> impl Iterator<Item = u32> {
    let mut cur = if k == 0 { 0 } else { (1u32 << k) - 1 };
    let mut done = false;
    std::iter::from_fn(move || {
        if done || cur > full {
            return None;
        }
        let out = cur;
        if cur == 0 {
            done = true;
        } else {
            cur = next_combination(cur);
        }
        Some(out)
    })
}

/// `inverse[s]`: the symmetry undoing symmetry `s`.
fn inverse_symmetries<B: Board>() -> [usize; SYMMETRIES] {
    std::array::from_fn(|s| {
        (0..SYMMETRIES)
            .find(|&t| {
                (0..B::POINTS).all(|p| B::SYM_PERM[t][B::SYM_PERM[s][p] as usize] as usize == p)
            })
            .expect("the symmetries form a group")
    })
}

/// The canonical mover sets of every size, as [`MoverIndex::build`] finds them,
/// kept in the binary (a test checks them): a cold probe reads its sizes' sets
/// instead of testing up to 1.3 M sets against the 16 symmetries.
static CANONICAL_SETS: &[u8] = include_bytes!("canonical_sets.bin");

/// The largest mover set size [`CANONICAL_SETS`] keeps: Nine Men's Morris's 9 (the
/// 10 of Lasker Morris would add 0.7 MB to the binary for a build that computes
/// them once).
const EMBEDDED_STONES: u8 = 9;

/// The canonical mover sets of one size and how every mover set reaches its own.
pub struct MoverIndex<B: Indexed> {
    /// Number of stones.
    pub m: u8,
    /// Canonical sets (least image under the 16 symmetries), ascending.
    pub canon: Vec<u32>,
    /// Per canonical set, its stabilizer as a bit set of symmetries.
    pub stab: Vec<u16>,
    /// Per mover set (by [`rank24`]): `cid << 4 | s` with `B::transform(s, set) ==
    /// canon[cid]`. Built for the solvers and checks that look up millions of sets
    /// ([`MoverIndex::direct`]); until then a lookup searches `canon` (a cold probe
    /// looks up a few dozen sets and must not wait for 1.3 M entries).
    by_rank: OnceLock<Vec<u32>>,
    /// Lookups answered by search: past [`SEARCHES_BEFORE_TABLE`] (a batch of
    /// probes), the table is built.
    searches: std::sync::atomic::AtomicU32,
    board: std::marker::PhantomData<B>,
}

/// Searched lookups after which a mover index builds its direct table (a few ms of
/// searches; the table then answers each lookup in one read).
const SEARCHES_BEFORE_TABLE: u32 = 20_000;

impl<B: Indexed> MoverIndex<B> {
    /// The canonical sets in increasing order, computed: a set is canonical when no
    /// symmetry maps it lower (what [`CANONICAL_SETS`] keeps for the nine board).
    fn build(m: u8) -> MoverIndex<B> {
        let mut canon = Vec::new();
        let mut stab = Vec::new();
        'sets: for w in combinations(m as u32, B::FULL) {
            let mut st = 1u16;
            for s in 1..SYMMETRIES {
                let image = B::transform(s, w);
                if image < w {
                    continue 'sets;
                }
                st |= u16::from(image == w) << s;
            }
            canon.push(w);
            stab.push(st);
        }
        MoverIndex {
            m,
            canon,
            stab,
            by_rank: OnceLock::new(),
            searches: Default::default(),
            board: std::marker::PhantomData,
        }
    }

    /// The table of every set's class and symmetry: each canonical set's 16 images
    /// fill in its whole orbit. Of several symmetries reaching one image, the least
    /// inverse (the least symmetry mapping the image back) is kept, as
    /// [`MoverIndex::lookup`] chooses without the table.
    fn direct_table(&self) -> Vec<u32> {
        let inverse = inverse_symmetries::<B>();
        let mut by_rank = vec![u32::MAX; BINOM[B::POINTS][self.m as usize] as usize];
        for (cid, (&w, &st)) in self.canon.iter().zip(&self.stab).enumerate() {
            let images: [u32; SYMMETRIES] = std::array::from_fn(|s| B::transform(s, w));
            // Entries are only written, never read: the table is far larger than
            // the caches, and a read would wait for memory.
            for (s, &image) in images.iter().enumerate() {
                let back = if st == 1 {
                    inverse[s] // 16 distinct images
                } else {
                    (0..SYMMETRIES)
                        .filter(|&t| images[t] == image)
                        .map(|t| inverse[t])
                        .min()
                        .expect("s reaches its own image")
                };
                by_rank[rank24(image) as usize] = (cid as u32) << 4 | back as u32;
            }
        }
        by_rank
    }

    /// The table of every set's class, built on first use (a bulk caller asks for
    /// it before its loops; it makes [`MoverIndex::lookup`] one read).
    pub fn direct(&self) -> &[u32] {
        self.by_rank.get_or_init(|| self.direct_table())
    }

    /// The shared index for mover sets of `m` stones (read once from the binary,
    /// or computed for a board without embedded sets).
    pub fn get(m: u8) -> &'static MoverIndex<B> {
        assert!(m <= B::MAX_STONES, "at most {} stones", B::MAX_STONES);
        B::caches().movers[m as usize].get_or_init(|| {
            let kept = B::embedded_sets().filter(|_| m <= EMBEDDED_STONES);
            match kept.and_then(|data| MoverIndex::embedded(data, m)) {
                Some(index) => index,
                None => MoverIndex::build(m),
            }
        })
    }

    /// The index of `m` stones from `data` ([`CANONICAL_SETS`]): per size from 0
    /// up, the number of canonical sets (u32), the sets (u32 each), their
    /// stabilizers (u16 each), little-endian. None when `data` stops before size
    /// `m` (the nine board keeps sizes 0..=[`EMBEDDED_STONES`]; Lasker's 10 is
    /// computed on first use, in a fraction of a second).
    fn embedded(mut data: &[u8], m: u8) -> Option<MoverIndex<B>> {
        let mut take = |n: usize| {
            let (head, rest) = data.split_at_checked(n)?;
            data = rest;
            Some(head)
        };
        for size in 0..=m {
            let count = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
            let canon = take(4 * count)?;
            let stab = take(2 * count)?;
            if size == m {
                return Some(MoverIndex {
                    m,
                    canon: canon
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                        .collect(),
                    stab: stab
                        .chunks_exact(2)
                        .map(|b| u16::from_le_bytes(b.try_into().expect("2 bytes")))
                        .collect(),
                    by_rank: OnceLock::new(),
                    searches: Default::default(),
                    board: std::marker::PhantomData,
                });
            }
        }
        unreachable!("the loop returns at size m")
    }

    /// What [`CANONICAL_SETS`] holds, computed ([`MoverIndex::build`] for every
    /// size up to [`EMBEDDED_STONES`]).
    #[cfg(test)]
    fn canonical_sets_bytes() -> Vec<u8> {
        let mut out = Vec::new();
        for m in 0..=EMBEDDED_STONES.min(B::MAX_STONES) {
            let index = MoverIndex::<B>::build(m);
            out.extend((index.canon.len() as u32).to_le_bytes());
            out.extend(index.canon.iter().flat_map(|w| w.to_le_bytes()));
            out.extend(index.stab.iter().flat_map(|st| st.to_le_bytes()));
        }
        out
    }

    /// `(cid, s)`: the canonical class of `set` and the least symmetry mapping it
    /// there; one read once [`MoverIndex::direct`] was built, else a search.
    #[inline(always)]
    pub fn lookup(&self, set: u32) -> (usize, usize) {
        match self.by_rank.get() {
            Some(by_rank) => {
                let e = by_rank[rank24(set) as usize];
                ((e >> 4) as usize, (e & 15) as usize)
            }
            None => {
                let searched = self
                    .searches
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if searched >= SEARCHES_BEFORE_TABLE {
                    self.direct();
                }
                self.search(set)
            }
        }
    }

    /// [`MoverIndex::lookup`] without the table: the least image (the first
    /// symmetry reaching it) and a binary search for it among the canonical sets.
    fn search(&self, set: u32) -> (usize, usize) {
        let (mut least, mut sym) = (set, 0);
        for s in 1..SYMMETRIES {
            let image = B::transform(s, set);
            if image < least {
                (least, sym) = (image, s);
            }
        }
        let cid = self
            .canon
            .binary_search(&least)
            .expect("a set's least image is canonical");
        (cid, sym)
    }
}

/// `ways[a][b]`: the ways to place `a` mover and `b` opponent stones on the points of
/// `free` (which symmetry `s` maps onto itself) that `s` leaves unchanged, for every
/// `a` and `b` at once: each cycle of `s` is all empty, all mover or all opponent
/// (Burnside's lemma helper).
fn fixed_colourings<B: Board>(s: usize, free: u32) -> [[u64; COUNTS]; COUNTS] {
    let mut ways = [[0u64; COUNTS]; COUNTS];
    ways[0][0] = 1;
    for len in cycle_lengths::<B>(s, free) {
        // Descending, so that each entry adds the counts from before this cycle.
        for a in (0..COUNTS).rev() {
            for b in (0..COUNTS).rev() {
                let mover = if a >= len { ways[a - len][b] } else { 0 };
                let opponent = if b >= len { ways[a][b - len] } else { 0 };
                ways[a][b] += mover + opponent;
            }
        }
    }
    ways
}

/// Number of classes of table (m, o), by Burnside's lemma over the 16 symmetries of
/// the whole board (computed for every table at once on first use, in microseconds,
/// and independent of how [`Table`] enumerates them).
pub fn class_count<B: Indexed>(m: u8, o: u8) -> u64 {
    assert!(
        m <= B::MAX_STONES && o <= B::MAX_STONES,
        "at most {} stones a side",
        B::MAX_STONES
    );
    B::caches().counts.get_or_init(|| {
        let mut sums = [[0u64; COUNTS]; COUNTS];
        for s in 0..SYMMETRIES {
            let fixed = fixed_colourings::<B>(s, B::FULL);
            for (row, fixed_row) in sums.iter_mut().zip(&fixed) {
                for (sum, ways) in row.iter_mut().zip(fixed_row) {
                    *sum += ways;
                }
            }
        }
        sums.map(|row| row.map(|sum| sum / SYMMETRIES as u64))
    })[m as usize][o as usize]
}

/// Number of orbits of the `o`-subsets of `free` under the symmetries of `stab` (a
/// group, as a bit set, mapping `free` onto itself), by Burnside's lemma.
fn orbit_count<B: Board>(free: u32, stab: u16, o: u8) -> u64 {
    let sum: u64 = (0..SYMMETRIES)
        .filter(|s| stab & (1 << s) != 0)
        .map(|s| fixed_subsets::<B>(s, free, o as usize))
        .sum();
    sum / stab.count_ones() as u64
}

/// `fixed_colourings(s, free)[0][o]` from three population counts: the `o`-subsets of
/// `free` (which `s` maps onto itself) that `s` leaves unchanged are the unions of its
/// cycles, and a cycle has 1, 2 or 4 points. (A cold probe builds a table's index,
/// which counts the subsets of each of its thousands of mover sets with a nontrivial
/// stabilizer.)
fn fixed_subsets<B: Board>(s: usize, free: u32, o: usize) -> u64 {
    debug_assert_eq!(B::transform(s, free), free, "s maps free onto itself");
    let [ones, twos, fours] =
        B::CYCLE_POINTS[s].map(|points| (free & points).count_ones() as usize);
    let (twos, fours) = (twos / 2, fours / 4);
    (0..=fours.min(o / 4))
        .flat_map(|in_fours| {
            let rest = o - 4 * in_fours;
            (0..=twos.min(rest / 2)).map(move |in_twos| {
                BINOM[fours][in_fours] * BINOM[twos][in_twos] * BINOM[ones][rest - 2 * in_twos]
            })
        })
        .sum()
}

/// The lengths of the cycles of symmetry `s` on the points of `free` (which it maps
/// onto itself).
fn cycle_lengths<B: Board>(s: usize, free: u32) -> impl Iterator<Item = usize> {
    let perm = &B::SYM_PERM[s];
    let mut seen = 0u32;
    bits(free).filter_map(move |p| {
        if seen & (1 << p) != 0 {
            return None;
        }
        let mut len = 0;
        let mut q = p;
        while seen & (1 << q) == 0 {
            seen |= 1 << q;
            len += 1;
            q = perm[q] as usize;
        }
        Some(len)
    })
}

/// Slots of the opponent sets for a canonical mover set with a nontrivial stabilizer.
struct Special {
    /// Colex rank (within the free points) -> slot, as a bit set of the stored ranks
    /// with counts: 2 bits per rank instead of 32 keeps these in cache.
    map: Box<[RankWord]>,
    /// Slot -> colex rank.
    inv: Box<[u32]>,
}

/// 64 ranks: which are stored, and how many stored ranks precede the word.
#[derive(Clone, Copy, Default)]
struct RankWord {
    bits: u64,
    before: u32,
}

impl Special {
    /// The stored ranks of the `o`-subsets of `free` (`ranks` of them) for a mover
    /// set with symmetries `stab`: the least of each orbit.
    fn build<B: Board>(free: u32, stab: u16, o: u8, ranks: u64) -> Special {
        let syms: Vec<usize> = (1..SYMMETRIES).filter(|s| stab & (1 << s) != 0).collect();
        let mut map = vec![RankWord::default(); (ranks as usize).div_ceil(64)];
        let mut inv = Vec::new();
        for (r, packed) in combinations(o as u32, UNIVERSE)
            .take(ranks as usize)
            .enumerate()
        {
            let word = &mut map[r / 64];
            if r % 64 == 0 {
                word.before = inv.len() as u32;
            }
            let b = deposit(free, packed);
            if syms.iter().all(|&s| B::transform(s, b) >= b) {
                word.bits |= 1 << (r % 64);
                inv.push(r as u32);
            }
        }
        Special {
            map: map.into(),
            inv: inv.into(),
        }
    }

    /// Slot of a stored (stabilizer-least) colex rank.
    #[inline(always)]
    fn slot(&self, rank: u32) -> u32 {
        let w = self.map[(rank / 64) as usize];
        debug_assert_ne!(w.bits & (1 << (rank % 64)), 0);
        w.before + (w.bits & ((1u64 << (rank % 64)) - 1)).count_ones()
    }
}

/// One table (m, o): positions with `m` stones for the side to move and `o` for the
/// opponent, moving phase, one dense index per symmetry class.
///
/// The classes of canonical mover set `cid` (a block) are consecutive indices: `plain`
/// of them for a set with a trivial stabilizer, fewer for the rare sets with a
/// nontrivial one (the specials). A block's offset follows from the specials before
/// it, so building a table only counts the specials' classes; the solvers ask for a
/// per-block array ([`Table::prepare_lookups`]) that makes every lookup one read.
pub struct Table<B: Indexed> {
    /// Stones of the side to move.
    pub m: u8,
    /// Stones of the opponent.
    pub o: u8,
    movers: &'static MoverIndex<B>,
    /// Classes of a block with a trivial stabilizer: C(24 - m, o).
    plain: u64,
    /// The blocks whose mover set has a nontrivial stabilizer, by block; their rows
    /// are built on first use (a cold probe touches one or two of a table's thousands).
    specials: Vec<LazySpecial>,
    size: u64,
    /// What makes the solvers' lookups one read, built by [`Table::prepare_lookups`].
    dense: OnceLock<DenseLookups>,
}

/// A table's per-block lookup arrays (megabytes for the big tables: a cold probe,
/// which finds a few blocks, computes what it needs instead).
struct DenseLookups {
    /// One per canonical mover set, in index order.
    blocks: Vec<Block>,
    /// `block_hint[j]`: the block holding index `j << hint_shift` (a block is found by
    /// a lookup and a step or two instead of a binary search).
    block_hint: Vec<u32>,
    hint_shift: u32,
    /// `packed_sets[r]`: the `o`-subset of the `24 - m` free points with colex rank `r`,
    /// packed low (what [`unrank24`] computes, looked up: the solver turns a random
    /// index into its position for every settled position).
    packed_sets: Vec<u32>,
}

/// A block whose mover set has a nontrivial stabilizer: where it is, and its
/// [`Special`] row, built on first use.
struct LazySpecial {
    /// Its canonical mover set's index.
    cid: u32,
    /// Its first index.
    offset: u64,
    /// Its number of slots (known without building it).
    size: u64,
    built: OnceLock<Special>,
}

/// The indices of one canonical mover set (kept together: one cache line per lookup).
#[derive(Clone, Copy)]
struct Block {
    /// First index.
    offset: u64,
    /// The canonical mover set.
    canon: u32,
    /// Index into `specials`, `u32::MAX` for a trivial stabilizer.
    special: u32,
}

impl<B: Indexed> Table<B> {
    /// Builds the index of table (m, o), `0 <= m, o <= B::MAX_STONES` (10 on the
    /// nine board, for Lasker; the moving phase has 3 or more a side; placement
    /// tables start from the empty board).
    pub fn new(m: u8, o: u8) -> Result<Table<B>> {
        if m > B::MAX_STONES || o > B::MAX_STONES {
            bail!(
                "table {m}-{o}: stones per side must be 0..={}",
                B::MAX_STONES
            );
        }
        let movers = MoverIndex::get(m);
        let plain = BINOM[B::POINTS - m as usize][o as usize];
        let mut specials = Vec::new();
        // What the specials so far hold fewer than `plain` indices each, summed.
        let mut deficit = 0u64;
        for (cid, (&w, &st)) in movers.canon.iter().zip(&movers.stab).enumerate() {
            if st == 1 {
                continue;
            }
            let size = orbit_count::<B>(B::FULL & !w, st, o);
            specials.push(LazySpecial {
                cid: cid as u32,
                offset: cid as u64 * plain - deficit,
                size,
                built: OnceLock::new(),
            });
            deficit += plain - size;
        }
        Ok(Table {
            m,
            o,
            movers,
            plain,
            specials,
            size: movers.canon.len() as u64 * plain - deficit,
            dense: OnceLock::new(),
        })
    }

    /// The lookup arrays (see [`DenseLookups`]), built on first use.
    fn dense(&self) -> &DenseLookups {
        self.dense.get_or_init(|| {
            // Offsets summed block by block (the computed blocks jump to them).
            let mut blocks = Vec::with_capacity(self.blocks());
            let mut specials = self.specials.iter().enumerate().peekable();
            let mut next = 0;
            for (cid, &canon) in self.movers.canon.iter().enumerate() {
                let (special, size) = match specials.next_if(|(_, sp)| sp.cid as usize == cid) {
                    Some((k, sp)) => (k as u32, sp.size),
                    None => (u32::MAX, self.plain),
                };
                blocks.push(Block {
                    offset: next,
                    canon,
                    special,
                });
                next += size;
            }
            // Plain blocks (nearly all) hold `plain` indices: hint at about half of that.
            let hint_shift = (self.plain / 2).max(1).ilog2();
            let mut block_hint = Vec::with_capacity((self.size >> hint_shift) as usize + 1);
            let mut cid = 0;
            for j in 0..=(self.size >> hint_shift) {
                let index = j << hint_shift;
                while cid + 1 < blocks.len() && blocks[cid + 1].offset <= index {
                    cid += 1;
                }
                block_hint.push(cid as u32);
            }
            DenseLookups {
                blocks,
                block_hint,
                hint_shift,
                packed_sets: combinations(self.o as u32, UNIVERSE)
                    .take(self.plain as usize)
                    .collect(),
            }
        })
    }

    /// Makes every lookup of this table one read (see [`MoverIndex::direct`] and
    /// `DenseLookups`): solvers and checks call it before their loops; a probe
    /// does not need it.
    pub fn prepare_lookups(&self) {
        self.movers.direct();
        self.dense();
    }

    /// Block `cid`: one read once [`Table::prepare_lookups`] ran, else computed.
    #[inline(always)]
    fn block(&self, cid: usize) -> Block {
        match self.dense.get() {
            Some(dense) => dense.blocks[cid],
            None => self.computed_block(cid),
        }
    }

    /// Block `cid` from the specials: after the last special before it, plain
    /// blocks follow one another.
    fn computed_block(&self, cid: usize) -> Block {
        let canon = self.movers.canon[cid];
        let k = self.specials.partition_point(|sp| (sp.cid as usize) < cid);
        if let Some(sp) = self.specials.get(k).filter(|sp| sp.cid as usize == cid) {
            return Block {
                offset: sp.offset,
                canon,
                special: k as u32,
            };
        }
        let offset = match k.checked_sub(1).map(|j| &self.specials[j]) {
            None => cid as u64 * self.plain,
            Some(sp) => sp.offset + sp.size + (cid - sp.cid as usize - 1) as u64 * self.plain,
        };
        Block {
            offset,
            canon,
            special: u32::MAX,
        }
    }

    /// The opponent set of colex rank `rank` among the `24 - m` free points, packed low.
    #[inline]
    fn packed_set(&self, rank: u32) -> u32 {
        match self.dense.get() {
            Some(dense) => dense.packed_sets[rank as usize],
            None => unrank24(self.o as u32, rank),
        }
    }

    /// The shared index of table (m, o), built on first use.
    pub fn get(m: u8, o: u8) -> Result<&'static Table<B>> {
        if m > B::MAX_STONES || o > B::MAX_STONES {
            bail!(
                "table {m}-{o}: stones per side must be 0..={}",
                B::MAX_STONES
            );
        }
        // One thread builds a table; others asking for it meanwhile wait for it.
        Ok(B::caches().tables[m as usize][o as usize]
            .get_or_init(|| Table::<B>::new(m, o).expect("stone counts checked above")))
    }

    /// Number of classes (= number of stored values).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Special row `k`, built on first use.
    #[inline]
    fn special(&self, k: u32) -> &Special {
        let lazy = &self.specials[k as usize];
        lazy.built.get_or_init(|| {
            let cid = lazy.cid as usize;
            let free = B::FULL & !self.movers.canon[cid];
            let special = Special::build::<B>(free, self.movers.stab[cid], self.o, self.plain);
            assert_eq!(
                special.inv.len() as u64,
                lazy.size,
                "Burnside count of a row"
            );
            special
        })
    }

    /// Index of the class of (mover set, opponent set). The sets must be disjoint and
    /// of sizes m and o (checked in debug builds only: this is the hot loop).
    #[inline]
    pub fn index(&self, mover: u32, opponent: u32) -> u64 {
        self.index_and_symmetric(mover, opponent).0
    }

    /// [`Table::index`], and whether the position is symmetric (a symmetry other than
    /// the identity maps it onto itself).
    #[inline]
    pub fn index_and_symmetric(&self, mover: u32, opponent: u32) -> (u64, bool) {
        debug_assert_eq!(mover.count_ones(), self.m as u32);
        debug_assert_eq!(opponent.count_ones(), self.o as u32);
        debug_assert_eq!(mover & opponent, 0);
        let (cid, s) = self.movers.lookup(mover);
        let block = self.block(cid);
        let free = !block.canon & B::FULL;
        let mut b = B::transform(s, opponent);
        if block.special == u32::MAX {
            return (block.offset + rank_in(free, b) as u64, false);
        }
        let st = self.movers.stab[cid];
        let b0 = b;
        let mut symmetric = false;
        let mut rest = st & !1;
        while rest != 0 {
            let g = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let img = B::transform(g, b0);
            symmetric |= img == b0;
            b = b.min(img);
        }
        let slot = self.special(block.special).slot(rank_in(free, b));
        (block.offset + slot as u64, symmetric)
    }

    /// The index of (mover, base plus point p) for every point p of `adds` (points
    /// free in both), in increasing p: what a placement by the opponent leads to.
    /// The mover set is canonicalised once for all of them.
    #[inline]
    pub fn for_each_added(&self, mover: u32, base: u32, adds: u32, f: impl FnMut(usize, u64)) {
        self.for_each_added_from(self.movers.lookup(mover), mover, base, adds, f);
    }

    /// Where the class of a mover set is found: the first of three steps of
    /// [`Table::for_each_added`] that a caller handling many positions at once
    /// runs over all of them before the next, so that their cache misses overlap.
    /// Step 1: hint the mover set's entry.
    #[inline(always)]
    pub fn prefetch_mover(&self, mover: u32) {
        crate::sys::prefetch(&self.movers.direct()[rank24(mover) as usize]);
    }

    /// Step 2: the mover set's class and symmetry (after [`Table::prefetch_mover`]),
    /// its block hinted.
    #[inline(always)]
    pub fn locate_mover(&self, mover: u32) -> (usize, usize) {
        let found = self.movers.lookup(mover);
        if let Some(dense) = self.dense.get() {
            crate::sys::prefetch(&dense.blocks[found.0]);
        }
        found
    }

    /// Step 3: [`Table::for_each_added`] with the mover set's class and symmetry
    /// from [`Table::locate_mover`].
    #[inline]
    pub fn for_each_added_from(
        &self,
        (cid, s): (usize, usize),
        mover: u32,
        base: u32,
        adds: u32,
        mut f: impl FnMut(usize, u64),
    ) {
        let block = self.block(cid);
        if block.special != u32::MAX {
            for p in bits(adds) {
                f(p, self.index(mover, base | 1 << p));
            }
            return;
        }
        let free = !block.canon & B::FULL;
        let image = B::transform(s, base);
        let perm = &B::SYM_PERM[s];
        for p in bits(adds) {
            let b = image | 1 << perm[p];
            f(p, block.offset + rank_in(free, b) as u64);
        }
    }

    /// Number of symmetries mapping the position onto itself (1 for most).
    pub fn stabilizer_size(&self, mover: u32, opponent: u32) -> u32 {
        let (cid, s) = self.movers.lookup(mover);
        let st = self.movers.stab[cid];
        if st == 1 {
            return 1;
        }
        let b = B::transform(s, opponent);
        (0..SYMMETRIES)
            .filter(|&g| st & (1 << g) != 0 && B::transform(g, b) == b)
            .count() as u32
    }

    /// Checked [`Table::index`]: errors on wrong sizes or overlapping sets.
    pub fn index_checked(&self, mover: u32, opponent: u32) -> Result<u64> {
        if mover & opponent != 0 || (mover | opponent) & !B::FULL != 0 {
            bail!("overlapping or out-of-board point sets");
        }
        let (m, o) = (mover.count_ones(), opponent.count_ones());
        if (m, o) != (self.m as u32, self.o as u32) {
            bail!(
                "position has {m}-{o} stones, table is {}-{}",
                self.m,
                self.o
            );
        }
        Ok(self.index(mover, opponent))
    }

    /// Number of canonical mover sets (blocks of consecutive indices).
    pub fn blocks(&self) -> usize {
        self.movers.canon.len()
    }

    /// Index range of block `cid`.
    pub fn block_range(&self, cid: usize) -> Range<u64> {
        let block = self.block(cid);
        block.offset..self.end_of(&block)
    }

    /// Where `block` ends: `plain` indices on, fewer for a special.
    #[inline]
    fn end_of(&self, block: &Block) -> u64 {
        block.offset
            + match self.specials.get(block.special as usize) {
                Some(sp) => sp.size,
                None => self.plain,
            }
    }

    /// Canonical mover set of block `cid`.
    pub fn block_mover(&self, cid: usize) -> u32 {
        self.movers.canon[cid]
    }

    /// Opponent set of slot `slot` (0-based within the block) of block `cid`.
    #[inline]
    pub fn block_opponent(&self, cid: usize, slot: u64) -> u32 {
        let block = self.block(cid);
        let rank = if block.special == u32::MAX {
            slot as u32
        } else {
            self.special(block.special).inv[slot as usize]
        };
        deposit(!block.canon & B::FULL, self.packed_set(rank))
    }

    /// Block containing `index`.
    pub fn block_of(&self, index: u64) -> usize {
        let Some(dense) = self.dense.get() else {
            // The last special starting at or before `index`; plain blocks follow it.
            let k = self.specials.partition_point(|sp| sp.offset <= index);
            return match k.checked_sub(1).map(|j| &self.specials[j]) {
                None => (index / self.plain) as usize,
                Some(sp) if index < sp.offset + sp.size => sp.cid as usize,
                Some(sp) => {
                    sp.cid as usize + 1 + ((index - sp.offset - sp.size) / self.plain) as usize
                }
            };
        };
        let mut cid = dense.block_hint[(index >> dense.hint_shift) as usize] as usize;
        while cid + 1 < dense.blocks.len() && dense.blocks[cid + 1].offset <= index {
            cid += 1;
        }
        cid
    }

    /// The representative `(mover, opponent)` of class `index`; panics unless
    /// `index < size` (see [`Table::try_position`]).
    pub fn position(&self, index: u64) -> (u32, u32) {
        assert!(
            index < self.size(),
            "index {index} out of table {}-{}",
            self.m,
            self.o
        );
        let cid = self.block_of(index);
        let block = self.block(cid);
        (block.canon, self.block_opponent(cid, index - block.offset))
    }

    /// [`Table::position`] with an error instead of a panic for a bad index.
    pub fn try_position(&self, index: u64) -> Result<(u32, u32)> {
        if index >= self.size {
            bail!(
                "index {index} out of table {}-{} (size {})",
                self.m,
                self.o,
                self.size
            );
        }
        Ok(self.position(index))
    }

    /// Calls `f(index, mover, opponent)` for every class with an index in `range`,
    /// in index order (stepping the packed opponent set like
    /// [`Table::for_each_in_blocks`], after one unrank at the start).
    pub fn for_each_in_range(&self, range: Range<u64>, mut f: impl FnMut(u64, u32, u32)) {
        if range.start >= range.end {
            return;
        }
        let mut index = range.start;
        let mut cid = self.block_of(index);
        while index < range.end {
            let block = self.block(cid);
            let end = self.end_of(&block).min(range.end);
            let w = block.canon;
            if block.special == u32::MAX {
                let free = !w & B::FULL;
                let mut c = unrank24(self.o as u32, (index - block.offset) as u32);
                for i in index..end {
                    f(i, w, deposit(free, c));
                    c = next_combination(c);
                }
            } else {
                for i in index..end {
                    f(i, w, self.block_opponent(cid, i - block.offset));
                }
            }
            index = end;
            cid += 1;
        }
    }

    /// Appends, for every class in `range`, the back-offsets of its four coding
    /// neighbours (`store::codec`; 0: none): the class with the opponent's highest
    /// stone one free point lower (when that point is free of opponent stones too),
    /// the same with the second highest stone, the same slot one mover set (row)
    /// back, the same with the third highest stone. Offsets are colex rank
    /// differences in a row of a trivial-stabilizer mover set; the rare rows with a
    /// nontrivial stabilizer get none. Part of the file format (version 2).
    pub fn neighbour_offsets(&self, range: Range<u64>, out: &mut Vec<Neighbours>) {
        if range.start >= range.end {
            return;
        }
        let k = self.o as usize;
        if k == 0 {
            // One class per mover set, no opponent stone to move.
            out.extend(range.map(|_| [0, 0, 0, 0]));
            return;
        }
        // Moving the stone at point s (j-th from the top) one point down changes the
        // colex rank (sum over stones, ascending i = 0.., of C(s_i, i + 1)) by
        // C(s - 1, i) with i = k - 1 - j; allowed when point s - 1 is free.
        let lower = |c: u32| -> [u32; 3] {
            let mut rest = c;
            let mut offsets = [0u32; 3];
            for (j, offset) in offsets.iter_mut().enumerate().take(k.min(3)) {
                let s = 31 - rest.leading_zeros();
                rest &= !(1 << s);
                let next = if j + 1 < k {
                    31 - rest.leading_zeros()
                } else {
                    u32::MAX
                };
                // Point s - 1 exists and holds no stone (the next lower stone).
                if s > 0 && (next == u32::MAX || next + 1 < s) {
                    *offset = BINOM[s as usize - 1][k - 1 - j] as u32;
                }
            }
            offsets
        };
        let row = BINOM[B::POINTS - self.m as usize][k] as u32;
        let mut index = range.start;
        let mut cid = self.block_of(index);
        while index < range.end {
            let block = self.block(cid);
            let end = self.end_of(&block).min(range.end);
            if block.special == u32::MAX {
                // The same slot one row back is the same compressed opponent set
                // when that row is plain too.
                let back = if cid > 0 && self.block(cid - 1).special == u32::MAX {
                    row
                } else {
                    0
                };
                let mut c = unrank24(self.o as u32, (index - block.offset) as u32);
                for _ in index..end {
                    let [top, second, third] = lower(c);
                    out.push([top, second, back, third]);
                    c = next_combination(c);
                }
            } else {
                out.extend((index..end).map(|_| [0, 0, 0, 0]));
            }
            index = end;
            cid += 1;
        }
    }

    /// Calls `f(index, mover, opponent)` for every class, in index order.
    pub fn for_each(&self, f: impl FnMut(u64, u32, u32)) {
        self.for_each_in_blocks(0..self.blocks(), f);
    }

    /// Calls `f(index, mover, opponent)` for every class in `range` of blocks, in
    /// index order.
    pub fn for_each_in_blocks(&self, blocks: Range<usize>, mut f: impl FnMut(u64, u32, u32)) {
        for cid in blocks {
            let block = self.block(cid);
            let (w, base) = (block.canon, block.offset);
            let end = self.end_of(&block);
            if block.special == u32::MAX {
                // Consecutive slots are consecutive colex ranks: step the packed set.
                let free = !w & B::FULL;
                let mut c = (1u32 << self.o) - 1;
                for i in base..end {
                    f(i, w, deposit(free, c));
                    c = next_combination(c);
                }
            } else {
                for slot in 0..end - base {
                    f(base + slot, w, self.block_opponent(cid, slot));
                }
            }
        }
    }
}

/// [`class_count`] of the board `board` names.
pub fn class_count_on(board: BoardKind, m: u8, o: u8) -> u64 {
    with_board!(board, B => class_count::<B>(m, o))
}

/// [`Table::size`] of table (m, o) of board `board`.
pub fn table_size(board: BoardKind, m: u8, o: u8) -> Result<u64> {
    with_board!(board, B => Ok(Table::<B>::get(m, o)?.size()))
}

/// [`Table::index_checked`] of table (m, o) of board `board`.
pub fn table_index(board: BoardKind, m: u8, o: u8, mover: u32, opponent: u32) -> Result<u64> {
    with_board!(board, B => Table::<B>::get(m, o)?.index_checked(mover, opponent))
}

/// [`Table::try_position`] of table (m, o) of board `board`.
pub fn table_position(board: BoardKind, m: u8, o: u8, index: u64) -> Result<(u32, u32)> {
    with_board!(board, B => Table::<B>::get(m, o)?.try_position(index))
}

/// [`Table::neighbour_offsets`] of table (m, o) of board `board` (none for a table
/// the board does not have).
pub fn table_neighbours(
    board: BoardKind,
    m: u8,
    o: u8,
    range: Range<u64>,
    out: &mut Vec<Neighbours>,
) {
    with_board!(board, B => {
        if let Ok(table) = Table::<B>::get(m, o) {
            let end = range.end.min(table.size());
            table.neighbour_offsets(range.start.min(end)..end, out);
        }
    })
}

/// [`Table::for_each_in_range`] of table (m, o) of board `board`.
pub fn table_for_each_in_range(
    board: BoardKind,
    m: u8,
    o: u8,
    range: Range<u64>,
    f: impl FnMut(u64, u32, u32),
) -> Result<()> {
    with_board!(board, B => {
        Table::<B>::get(m, o)?.for_each_in_range(range, f);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The board most tests index (the six board's own tests name it).
    type B = Nine;

    /// The canonical sets kept in the binary are those computed now
    /// (`TB_BLESS=1 cargo test --release --lib canonical_sets` rewrites the file).
    #[test]
    fn canonical_sets_in_the_binary_are_current() {
        let computed = MoverIndex::<B>::canonical_sets_bytes();
        if std::env::var_os("TB_BLESS").is_some() {
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/games/morris/canonical_sets.bin"
            );
            std::fs::write(path, &computed).unwrap();
        }
        assert!(computed == CANONICAL_SETS, "rerun with TB_BLESS=1");
        assert!(MoverIndex::<B>::embedded(CANONICAL_SETS, EMBEDDED_STONES + 1).is_none());
        for m in 0..=EMBEDDED_STONES {
            let (kept, built) = (
                MoverIndex::<B>::embedded(CANONICAL_SETS, m).expect("kept"),
                MoverIndex::<B>::build(m),
            );
            assert_eq!((kept.canon, kept.stab), (built.canon, built.stab));
        }
    }

    /// The mover index without its table (a probe's) and with it (a solver's) give
    /// every set the same class and symmetry; the canonical sets are one per orbit.
    #[test]
    fn lookups_with_and_without_the_table_agree() {
        for m in 0..=B::MAX_STONES {
            let searched = MoverIndex::<B>::build(m);
            let direct = MoverIndex::<B>::build(m);
            direct.direct();
            assert_eq!(
                searched.canon.len() as u64,
                orbit_count::<B>(B::FULL, u16::MAX, m)
            );
            // Every set for small m, a sample of the 1.3 M for the largest.
            let step = if m <= 6 { 1 } else { 7 };
            for w in combinations(m as u32, B::FULL).step_by(step) {
                let (cid, s) = searched.lookup(w);
                assert_eq!((cid, s), direct.lookup(w), "{m} stones: {w:#x}");
                assert_eq!(B::transform(s, w), searched.canon[cid]);
                assert!((0..s).all(|t| B::transform(t, w) != searched.canon[cid]));
            }
        }
    }

    #[test]
    fn rank_helpers() {
        for (i, w) in combinations(3, B::FULL).enumerate().take(3000) {
            assert_eq!(rank24(w), i as u32);
        }
        assert_eq!(combinations(3, B::FULL).count() as u64, BINOM[24][3]);
        let free: u32 = 0b1011_0110_1101_0011_1010_1101;
        let n = free.count_ones();
        for r in 0..BINOM[n as usize][4] as u32 {
            let s = unrank_in(free, 4, r);
            assert_eq!(s & !free, 0);
            assert_eq!(s.count_ones(), 4);
            assert_eq!(rank_in(free, s), r);
        }
    }

    /// A cold probe's blocks (computed from the specials, found by binary search)
    /// are the solvers' (offsets summed block by block, found through hints).
    #[test]
    fn blocks_are_the_same_with_and_without_dense_lookups() {
        for (m, o) in [(3, 3), (4, 5), (6, 5), (8, 3), (9, 8)] {
            let t = Table::<B>::new(m, o).unwrap();
            let step = (t.size() / 5000).max(1);
            let indices: Vec<u64> = (0..t.size())
                .step_by(step as usize)
                .chain([t.size() - 1])
                .collect();
            let searched: Vec<usize> = indices.iter().map(|&i| t.block_of(i)).collect();
            let computed: Vec<(u64, u32, u32)> = (0..t.blocks())
                .map(|cid| {
                    let b = t.block(cid);
                    (b.offset, b.canon, b.special)
                })
                .collect();
            assert!(t.dense.get().is_none());
            t.prepare_lookups();
            for (cid, &block) in computed.iter().enumerate() {
                let dense = t.dense().blocks[cid];
                assert_eq!(
                    block,
                    (dense.offset, dense.canon, dense.special),
                    "{m}-{o} block {cid}"
                );
            }
            for (&i, &cid) in indices.iter().zip(&searched) {
                assert_eq!(t.block_of(i), cid, "{m}-{o} index {i}");
                assert!(t.block_range(cid).contains(&i));
            }
        }
    }

    /// The subsets a symmetry fixes, counted from its cycle lengths, agree with the
    /// colourings the class counts sum, for every mover set with a nontrivial
    /// stabilizer and every symmetry in it.
    #[test]
    fn fixed_subsets_agree_with_fixed_colourings() {
        let mut checked = 0;
        for m in 0..=B::MAX_STONES {
            let movers = MoverIndex::<B>::get(m);
            for (&w, &st) in movers
                .canon
                .iter()
                .zip(&movers.stab)
                .filter(|(_, st)| **st != 1)
            {
                let free = B::FULL & !w;
                for s in (0..SYMMETRIES).filter(|s| st & (1 << s) != 0) {
                    let colourings = fixed_colourings::<B>(s, free);
                    for (o, &fixed) in colourings[0].iter().enumerate() {
                        assert_eq!(
                            fixed_subsets::<B>(s, free, o),
                            fixed,
                            "symmetry {s}, free {free:#x}, {o} stones"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// Every neighbour offset leads, in the same row, to the position whose
    /// opponent stone (highest, second, third) sits one free point lower, or one
    /// row back at the same slot; checked through `position` (unranking).
    #[test]
    fn neighbour_offsets_point_at_the_named_positions() {
        for (m, o) in [(3, 3), (4, 3), (3, 5)] {
            let t = Table::<B>::new(m, o).unwrap();
            let mut out = Vec::new();
            t.neighbour_offsets(0..t.size(), &mut out);
            assert_eq!(out.len() as u64, t.size());
            let row = BINOM[B::POINTS - m as usize][o as usize];
            let mut checked = 0;
            for (i, offsets) in out.iter().enumerate() {
                let (mover, opp) = t.position(i as u64);
                let free = !mover & B::FULL;
                let stones: Vec<u32> = (0..24).rev().filter(|p| opp >> p & 1 == 1).collect();
                for (j, &d) in [offsets[0], offsets[1], offsets[3]].iter().enumerate() {
                    if d == 0 {
                        continue;
                    }
                    let (m2, o2) = t.position(i as u64 - d as u64);
                    assert_eq!(m2, mover);
                    // The stone moves to the next lower free point.
                    let s = stones[j];
                    let below = (0..s).rev().find(|p| free >> p & 1 == 1).unwrap();
                    assert_eq!(o2, opp & !(1 << s) | 1 << below, "{m}-{o} index {i}");
                    checked += 1;
                }
                if offsets[2] != 0 {
                    assert_eq!(offsets[2] as u64, row);
                    let (m2, o2) = t.position(i as u64 - row);
                    assert!(m2 < mover);
                    assert_eq!(compress(!m2 & B::FULL, o2), compress(free, opp));
                }
            }
            assert!(checked as u64 > t.size(), "{m}-{o}: {checked}");
        }
    }

    fn check_bijection(m: u8, o: u8) {
        let t = Table::<B>::new(m, o).unwrap();
        assert_eq!(t.size(), class_count::<B>(m, o));
        for i in 0..t.size() {
            let (w, b) = t.position(i);
            assert_eq!(t.index(w, b), i, "{m}-{o} index {i}");
            // Any symmetric image gets the same index.
            let s = (i % 16) as usize;
            assert_eq!(t.index(B::transform(s, w), B::transform(s, b)), i);
        }
    }

    #[test]
    fn bijection_3_3_and_3_4() {
        check_bijection(3, 3);
        check_bijection(3, 4);
        check_bijection(4, 3);
        let t = Table::<B>::get(3, 3).unwrap();
        let mut next = 0;
        t.for_each(|i, w, b| {
            assert_eq!((i, (w, b)), (next, t.position(i)));
            next += 1;
        });
        assert_eq!(next, t.size());
        assert!(t.try_position(t.size()).is_err());
        assert!(t.index_checked(0b111, 0b111000).is_ok());
        assert!(t.index_checked(0b111, 0b1110).is_err());
        assert!(t.index_checked(0b1111, 0b111_0000).is_err());
    }

    #[test]
    fn published_counts() {
        assert_eq!(Table::<B>::new(3, 3).unwrap().size(), 169_626);
        assert_eq!(Table::<B>::new(3, 4).unwrap().size(), 760_398);
        assert_eq!(Table::<B>::new(4, 3).unwrap().size(), 760_398);
        assert_eq!(class_count::<B>(3, 3), 169_626);
        assert_eq!(class_count::<B>(9, 9), 409_106_740);
        let all: u64 = (3..=9)
            .flat_map(|m| (3..=9).map(move |o| class_count::<B>(m, o)))
            .sum();
        assert_eq!(all, 8_904_593_601);
        let small: u64 = (3..=5)
            .flat_map(|m| (3..=5).map(move |o| class_count::<B>(m, o)))
            .sum();
        assert_eq!(small / 100_000, 616, "{small}");
    }

    #[test]
    fn index_sizes_match_burnside_over_the_whole_board() {
        for m in 0..=B::MAX_STONES {
            for o in 0..=B::MAX_STONES {
                let t = Table::<B>::new(m, o).unwrap();
                assert_eq!(t.size(), class_count::<B>(m, o), "{m}-{o}");
                if matches!((m, o), (9, 9) | (8, 5) | (4, 7) | (0, 6)) {
                    // Builds every lazily built row: each checks its enumerated
                    // slots against its own Burnside count.
                    for cid in 0..t.blocks() {
                        t.block_opponent(cid, 0);
                    }
                }
            }
        }
    }

    /// Prints the class count of every table:
    /// `cargo test --release --lib games::morris::index::tests::print_counts -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn print_counts() {
        for m in 3..=9 {
            let row: Vec<String> = (3..=9)
                .map(|o| class_count::<B>(m, o).to_string())
                .collect();
            eprintln!("{m}: {}", row.join(" "));
        }
    }

    /// The six board: its index is a bijection onto the classes, with as many as
    /// Burnside's lemma counts, for every table.
    #[test]
    fn six_board_indexes_every_table() {
        for m in 0..=Six::MAX_STONES {
            for o in 0..=Six::MAX_STONES {
                let t = Table::<Six>::new(m, o).unwrap();
                assert_eq!(t.size(), class_count::<Six>(m, o), "{m}-{o}");
            }
        }
        for (m, o) in [(3, 3), (4, 3), (6, 5), (0, 2)] {
            let t = Table::<Six>::get(m, o).unwrap();
            for i in 0..t.size() {
                let (w, b) = t.position(i);
                assert_eq!((w | b) & !Six::FULL, 0);
                assert_eq!(t.index(w, b), i, "{m}-{o} index {i}");
                let s = (i % 16) as usize;
                assert_eq!(t.index(Six::transform(s, w), Six::transform(s, b)), i);
            }
        }
        // One stone: the corners (8, one orbit: the ring swap joins the squares)
        // and the midpoints.
        assert_eq!(class_count::<Six>(1, 0), 2);
        assert!(Table::<Six>::new(7, 0).is_err());
    }

    #[test]
    fn table_size_matches_burnside_for_9_9() {
        // Building the index (with its stabilizer slot maps) is cheap even for 9-9.
        assert_eq!(Table::<B>::new(9, 9).unwrap().size(), 409_106_740);
    }
}
