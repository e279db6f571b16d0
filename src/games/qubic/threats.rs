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
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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

/// In one pass over the lines: the threats of `me` against `you`, those of `you`
/// against `me`, and `me`'s threat makers ([`threats`] both ways and
/// [`threat_makers`]).
#[inline]
fn threats_both_and_makers(me: Cells, you: Cells) -> (Cells, Cells, Cells) {
    let (mut mine, mut theirs, mut makers) = (0, 0, 0);
    for &l in lines() {
        if you & l == 0 {
            add_threat_or_makers(l & !me, &mut mine, &mut makers);
        } else if me & l == 0 {
            let rest = l & !you;
            if holds_cells(rest, 1) {
                theirs |= rest;
            }
        }
    }
    (mine, theirs, makers)
}

/// `rest`, the cells of a line without the other side's stones that `own` does
/// not hold, added to `threats` if it is one cell (three of `own`: a threat) or
/// to `makers` if it is two (a threat maker's line).
#[inline]
fn add_threat_or_makers(rest: Cells, threats: &mut Cells, makers: &mut Cells) {
    if holds_cells(rest, 1) {
        *threats |= rest;
    } else if holds_cells(rest, 2) {
        *makers |= rest;
    }
}

/// Whether `set` has at most two cells.
#[inline]
fn at_most_two(set: Cells) -> bool {
    let less_one = set & set.wrapping_sub(1);
    less_one & less_one.wrapping_sub(1) == 0
}

/// The empty cells of the lines holding `count` (2 or 3) of `own` and none of
/// `other`.
#[inline]
fn empty_cells_of_lines_with(own: Cells, other: Cells, count: u32) -> Cells {
    let mut out = 0;
    for &l in lines() {
        let rest = l & !own;
        if other & l == 0 && holds_cells(rest, 4 - count) {
            out |= rest;
        }
    }
    out
}

/// Whether `set` has exactly `count` (1 or 2) cells, without a population count
/// (the generic x86-64 target has no instruction for it, and this is the
/// threat search's inner loop).
#[inline]
fn holds_cells(set: Cells, count: u32) -> bool {
    let less_one = set & set.wrapping_sub(1);
    match count {
        1 => set != 0 && less_one == 0,
        _ => less_one != 0 && less_one & (less_one - 1) == 0,
    }
}

/// The lines through each cell (4 or 7).
#[inline]
fn lines_through(cell: usize) -> &'static [Cells] {
    /// Each cell's lines, padded with empty sets, and how many there are.
    type Table = ([[Cells; 7]; CELLS], [u8; CELLS]);
    static TABLE: OnceLock<Table> = OnceLock::new();
    let (lines_of, count) = TABLE.get_or_init(|| {
        let mut out = ([[0; 7]; CELLS], [0; CELLS]);
        for c in 0..CELLS {
            let through = lines().iter().filter(|&&l| l >> c & 1 == 1);
            for (k, &l) in through.enumerate() {
                out.0[c][k] = l;
                out.1[c] += 1;
            }
        }
        out
    });
    &lines_of[cell][..usize::from(count[cell])]
}

/// The threats of `own` on the lines through `cell` (a cell `own` just took): the
/// only threats a move can add.
#[inline]
fn threats_through(cell: usize, own: Cells, other: Cells) -> Cells {
    threats_and_makers_through(cell, own, other).0
}

/// On the lines through `cell` with none of `other`: the empty cells of those
/// holding three of `own` (threats) and of those holding two (threat makers), in
/// one pass over the lines.
#[inline]
fn threats_and_makers_through(cell: usize, own: Cells, other: Cells) -> (Cells, Cells) {
    let (mut made, mut makers) = (0, 0);
    for &l in lines_through(cell) {
        if other & l == 0 {
            add_threat_or_makers(l & !own, &mut made, &mut makers);
        }
    }
    (made, makers)
}

/// Whether `me` (to move) wins against `you` by playing the cells of `attack` in
/// order, each a threat `you` must block (the block is then forced), until two
/// threats or four in a line: a forced win found in one position, replayed in
/// another (the defender's extra stone may have broken it).
pub fn wins_by(me: Cells, you: Cells, attack: &[usize]) -> bool {
    let scan = Scan::of(me, you);
    replays(me, you, scan.mine, scan.theirs, attack)
}

/// [`wins_by`] where `mine` and `theirs` are the threats of `me` and of `you`.
fn replays(
    mut me: Cells,
    mut you: Cells,
    mine: Cells,
    mut theirs: Cells,
    attack: &[usize],
) -> bool {
    if mine != 0 {
        return true;
    }
    // The threats are followed move by move: a stone only adds its owner's
    // threats on the lines through it, and takes its own cell from the other
    // side's (a threat line's one empty cell is the only cell it can block).
    for &m in attack {
        if (me | you) >> m & 1 == 1 || (theirs != 0 && theirs != 1 << m) {
            return false;
        }
        me |= 1 << m;
        theirs &= !(1 << m);
        let made = threats_through(m, me, you);
        if made == 0 {
            return false;
        }
        if made & (made - 1) != 0 {
            return true;
        }
        you |= made;
        theirs |= threats_through(made.trailing_zeros() as usize, you, me);
    }
    false
}

/// What one pass over the lines tells the side to move, `me`, against `you`:
/// the threats of each side and the threat makers of `me`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scan {
    /// The threats of `me` (cells where it completes a line).
    pub mine: Cells,
    /// The threats of `you`.
    pub theirs: Cells,
    /// The cells where `me` makes a threat.
    pub makers: Cells,
}

impl Scan {
    /// The scan of `me` (to move) against `you`.
    #[inline]
    pub fn of(me: Cells, you: Cells) -> Scan {
        let (mine, theirs, makers) = threats_both_and_makers(me, you);
        Scan {
            mine,
            theirs,
            makers,
        }
    }
}

/// A position with O to move, scanned once, and what each of O's replies
/// leaves of the threats: an attack of X's is replayed after every reply
/// ([`wins_by`]) without a scan of the whole board per reply (a reply only
/// takes its own cell from X's threats and adds O's on the lines through it).
pub struct AfterReplies {
    x: Cells,
    o: Cells,
    /// The scan of X against O before the reply.
    before: Scan,
}

impl AfterReplies {
    /// The position `(x, o)`, O to move.
    pub fn of(x: Cells, o: Cells) -> AfterReplies {
        AfterReplies {
            x,
            o,
            before: Scan::of(x, o),
        }
    }

    /// X's threats after O's reply on `reply` ([`threats`] of X then).
    #[inline]
    pub fn x_threats_after(&self, reply: usize) -> Cells {
        self.before.mine & !(1 << reply)
    }

    /// Whether X wins by `attack` after O's reply on `reply`: [`wins_by`] in
    /// `(x, o | 1 << reply)`, the same answer.
    pub fn wins_by(&self, reply: usize, attack: &[usize]) -> bool {
        let o = self.o | 1 << reply;
        // Only a line through the reply can have become O's threat; the reply
        // no longer is one (O's four there ends the game before any attack).
        let theirs = (self.before.theirs & !(1 << reply)) | threats_through(reply, o, self.x);
        replays(self.x, o, self.x_threats_after(reply), theirs, attack)
    }
}

/// A hash map keyed by positions `(x, o)`.
pub type PositionMap<V> = HashMap<(Cells, Cells), V, KeyHash>;

/// Buckets of a build's table of positions inside forced-win searches: 32 MiB,
/// a million positions.
const BUILD_BUCKETS: usize = 1 << 19;

/// Buckets of a probe's table: 256 KiB. A probe searches a few positions; a table
/// of the build's size cost it more to allocate and fill (13,700 page faults)
/// than its searches.
const PROBE_BUCKETS: usize = 1 << 12;

/// A search for forced wins with a cache of the positions settled: the positions
/// asked for ([`ForcedSearch::win`]) in a map, the positions inside their searches
/// in a table of fixed size where a position takes a slot of the bucket of its
/// hash (a position lost is searched again: the answer is the same, only the
/// time differs). The searches' inner positions are most of the positions met,
/// and a map of them all grew to gigabytes, every look-up a miss of the
/// processor's caches.
pub struct ForcedSearch {
    settled: PositionMap<Option<u8>>,
    /// The inner positions, allocated at the first search; shared with the
    /// searches made by [`ForcedSearch::sharing`] (other threads' searches).
    inner: std::sync::Arc<OnceLock<InnerTable>>,
    /// Buckets of the inner table (a power of two).
    buckets: usize,
    /// Positions searched.
    pub nodes: u64,
}

/// Positions a bucket of the inner table holds.
const WAYS: usize = 2;

/// A bucket of the inner table: [`WAYS`] slots of three words `[me, you, tag]`
/// in one cache line (read from memory at once), the last position written
/// first. The tag is the hash's high bits above the answer (0 for an empty slot,
/// 1 for no win, `2 + cell` for a win starting at `cell`).
#[repr(C, align(64))]
#[derive(Default)]
struct Bucket {
    words: [AtomicU64; 8],
}

/// The table of positions inside forced-win searches, a bucket per hash. Threads
/// read and write it without locks: a slot read while another thread writes it
/// mixes two positions, and its tag (44 bits of the hash) then does not match: a
/// miss.
struct InnerTable {
    buckets: Vec<Bucket>,
}

impl InnerTable {
    /// An empty table of `buckets` buckets (a power of two, at most 2^20), on
    /// huge pages where the system has them (the table is read at random: with
    /// small pages nearly every look-up also missed the TLB).
    fn new(buckets: usize) -> InnerTable {
        debug_assert!(buckets.is_power_of_two() && buckets <= 1 << 20);
        let mut table: Vec<Bucket> = crate::sys::huge_vec(buckets);
        table.resize_with(buckets, Bucket::default);
        InnerTable { buckets: table }
    }

    /// The bucket of `(me, you)` and the tag bits above the answer.
    #[inline]
    fn bucket(&self, me: Cells, you: Cells) -> (&Bucket, u64) {
        let h = me.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ you.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let h = h ^ h >> 29;
        let bucket = &self.buckets[h as usize & (self.buckets.len() - 1)];
        (bucket, h >> 20 << 8)
    }

    /// Asks the processor to fetch the bucket of `(me, you)`, about to be looked
    /// up: the look-ups of a node's children then wait for memory together.
    #[inline]
    fn prefetch(&self, me: Cells, you: Cells) {
        crate::sys::prefetch(self.bucket(me, you).0);
    }

    /// Whether slot `slot` of `w` holds `(me, you)` (tag `tag`): its answer word.
    #[inline]
    fn holds(w: &[AtomicU64; 8], slot: usize, me: Cells, you: Cells, tag: u64) -> Option<u64> {
        let answer = w[3 * slot + 2].load(Relaxed);
        (answer & !0xFF == tag
            && answer & 0xFF != 0
            && w[3 * slot].load(Relaxed) == me
            && w[3 * slot + 1].load(Relaxed) == you)
            .then_some(answer)
    }

    /// The answer stored for `(me, you)`, if its bucket holds it.
    #[inline]
    fn get(&self, me: Cells, you: Cells) -> Option<Option<usize>> {
        let (bucket, tag) = self.bucket(me, you);
        let answer = (0..WAYS).find_map(|slot| Self::holds(&bucket.words, slot, me, you, tag))?;
        Some((answer & 0xFF).checked_sub(2).map(|c| c as usize))
    }

    /// Stores the answer for `(me, you)` in the first slot of its bucket; the
    /// position there moves to the second (unless it is this one), the second's
    /// is dropped.
    #[inline]
    fn put(&self, me: Cells, you: Cells, answer: Option<usize>) {
        let (bucket, tag) = self.bucket(me, you);
        let w = &bucket.words;
        if Self::holds(w, 0, me, you, tag).is_none() {
            for k in 0..3 {
                w[3 + k].store(w[k].load(Relaxed), Relaxed);
            }
        }
        w[0].store(me, Relaxed);
        w[1].store(you, Relaxed);
        w[2].store(tag | answer.map_or(1, |c| c as u64 + 2), Relaxed);
    }

    fn clear(&self) {
        for bucket in &self.buckets {
            for w in &bucket.words {
                w.store(0, Relaxed);
            }
        }
    }
}

/// A threat of the attacker's in [`ForcedSearch::search`], to search below.
#[derive(Clone, Copy)]
struct Kid {
    /// The cell played.
    cell: u8,
    /// Whether the position after the block is looked up in the inner table.
    looked_up: bool,
    /// The threat's cell (the defender's block).
    made: Cells,
    /// The threat makers after the block (see `makers` of [`ForcedSearch::search`]).
    makers: Cells,
}

impl Default for ForcedSearch {
    /// [`ForcedSearch::new`].
    fn default() -> ForcedSearch {
        ForcedSearch::new()
    }
}

impl ForcedSearch {
    /// A search with an empty cache, its inner table of a build's size.
    pub fn new() -> ForcedSearch {
        ForcedSearch::with_buckets(BUILD_BUCKETS)
    }

    /// A search with an empty cache and a table of inner positions of a probe's
    /// size (a few hundred KiB): for the few searches of a probe, which a
    /// build-sized table cost more to allocate than they took.
    pub fn for_probes() -> ForcedSearch {
        ForcedSearch::with_buckets(PROBE_BUCKETS)
    }

    /// A search with an empty cache and an inner table of `buckets` buckets.
    fn with_buckets(buckets: usize) -> ForcedSearch {
        ForcedSearch {
            settled: PositionMap::default(),
            inner: std::sync::Arc::default(),
            buckets,
            nodes: 0,
        }
    }

    /// The table of inner positions, allocated at the first call.
    #[inline]
    fn inner(&self) -> &InnerTable {
        self.inner.get_or_init(|| InnerTable::new(self.buckets))
    }

    /// Positions in the cache.
    pub fn cached(&self) -> usize {
        self.settled.len()
    }

    /// Forgets the cache.
    pub fn clear(&mut self) {
        self.settled.clear();
        if let Some(inner) = self.inner.get() {
            inner.clear();
        }
    }

    /// A first move of a forced win of `me` (to move) against `you`, if there is
    /// one (the completing cell when `me` has a threat).
    pub fn win(&mut self, me: Cells, you: Cells) -> Option<usize> {
        // A position in the cache has no threat of `me` (only those are kept):
        // its answer is had without the scan.
        if let Some(&known) = self.settled.get(&(me, you)) {
            self.nodes += 1;
            return known.map(usize::from);
        }
        let scan = Scan::of(me, you);
        self.nodes += 1;
        if scan.mine != 0 {
            return Some(scan.mine.trailing_zeros() as usize);
        }
        // Not in the cache (just looked): searched without a second look.
        self.search_and_keep(me, you, &scan)
    }

    /// [`Self::win`] of `me` against `you` whose [`Scan`] is `scan` (made by
    /// the caller for its own use too).
    pub fn win_scanned(&mut self, me: Cells, you: Cells, scan: &Scan) -> Option<usize> {
        self.nodes += 1;
        if scan.mine != 0 {
            return Some(scan.mine.trailing_zeros() as usize);
        }
        self.without_own_threat(me, you, scan)
    }

    /// A search for another thread sharing this one's table of inner positions
    /// (its own cache of the positions asked for starts empty).
    pub fn sharing(&self) -> ForcedSearch {
        ForcedSearch {
            settled: PositionMap::default(),
            inner: std::sync::Arc::clone(&self.inner),
            buckets: self.buckets,
            nodes: 0,
        }
    }

    /// Whether the cache holds the answer of [`Self::win`] for `me` against `you`.
    pub fn knows(&self, me: Cells, you: Cells) -> bool {
        self.settled.contains_key(&(me, you))
    }

    /// Stores `answer`, the answer of [`Self::win`] for `me` (without a threat)
    /// against `you` found by another search or known without one (the answer
    /// is a function of the position alone, so any search finds the same).
    pub fn note(&mut self, me: Cells, you: Cells, answer: Option<usize>) {
        self.settled.insert((me, you), answer.map(|c| c as u8));
    }

    /// [`Self::win`] where `me` has no threat (`scan` is the position's).
    fn without_own_threat(&mut self, me: Cells, you: Cells, scan: &Scan) -> Option<usize> {
        if let Some(&known) = self.settled.get(&(me, you)) {
            return known.map(usize::from);
        }
        self.search_and_keep(me, you, scan)
    }

    /// [`Self::without_own_threat`] of a position not in the cache: its answer
    /// searched (or found in the inner table) and kept in the cache.
    fn search_and_keep(&mut self, me: Cells, you: Cells, scan: &Scan) -> Option<usize> {
        let found = self.inner_win(me, you, scan.theirs, scan.makers);
        self.settled.insert((me, you), found.map(|c| c as u8));
        found
    }

    /// [`Self::without_own_threat`] inside a search: cached in the inner table.
    /// `makers` holds every empty cell where `me` makes a threat (and may hold
    /// others: they are tried and make none).
    fn inner_win(&mut self, me: Cells, you: Cells, theirs: Cells, makers: Cells) -> Option<usize> {
        if let Some(known) = self.inner().get(me, you) {
            return known;
        }
        let found = self.search(me, you, theirs, makers);
        self.inner().put(me, you, found);
        found
    }

    /// The search of [`Self::inner_win`], in the same order whatever `makers`
    /// holds beyond the threat makers (cells in increasing order): the least
    /// cell that wins.
    fn search(&mut self, me: Cells, you: Cells, theirs: Cells, makers: Cells) -> Option<usize> {
        if theirs & theirs.wrapping_sub(1) != 0 {
            return None;
        }
        let mut candidates = makers;
        if theirs != 0 {
            candidates &= theirs;
        }
        // First the threats themselves, in order, up to the first double threat
        // (a win: only a lesser cell can be the answer instead), the table
        // buckets of the positions after them fetched; then the searches below
        // them, in order, their look-ups waiting for memory together.
        let mut kids = [const { std::mem::MaybeUninit::<Kid>::uninit() }; CELLS];
        let mut count = 0;
        let mut double = None;
        while candidates != 0 {
            let m = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let me2 = me | 1 << m;
            // `me` had no threat, so every threat now is on a line through `m`; `m`
            // took `you`'s one threat cell if there was one.
            let (made, new_makers) = threats_and_makers_through(m, me2, you);
            if made == 0 {
                continue;
            }
            if made & (made - 1) != 0 {
                double = Some(m);
                break;
            }
            // A line where `me` makes a threat now held two of `me` and none of
            // `you` before (a maker then) or passes through `m`. Of the lines
            // through `m`, only the threat's holds the block (two lines meet in
            // one cell at most), and it holds three of `me`: the makers through
            // `m` are the same against `you` as against `you | made`.
            let makers2 = (makers | new_makers) & !(me2 | you | made);
            // A position with two threat makers or fewer is searched again rather
            // than looked up: its search is a few steps, cheaper than a table slot
            // out of the processor's caches, and it keeps its slot for a bigger one.
            let looked_up = !at_most_two(makers2);
            if looked_up {
                self.inner().prefetch(me2, you | made);
            }
            kids[count].write(Kid {
                cell: m as u8,
                looked_up,
                made,
                makers: makers2,
            });
            count += 1;
        }
        for kid in &kids[..count] {
            // SAFETY: the loop above wrote the first `count` kids.
            let kid = unsafe { kid.assume_init_read() };
            self.nodes += 1;
            let m = usize::from(kid.cell);
            let (me2, you2) = (me | 1 << m, you | kid.made);
            let theirs2 = threats_through(kid.made.trailing_zeros() as usize, you2, me2);
            let below = if kid.looked_up {
                self.inner_win(me2, you2, theirs2, kid.makers)
            } else {
                self.search(me2, you2, theirs2, kid.makers)
            };
            if below.is_some() {
                return Some(m);
            }
        }
        double
    }

    /// The forced win of `me` against `you` as moves in order (`me`, then `you`'s
    /// forced block, ...), ending with `me`'s four in a line; `None` without one.
    ///
    /// Each move after the first is [`Self::win`]'s answer in the position it is
    /// played in, had from the inner search with the threats followed move by
    /// move (as the search follows them) rather than from a scan of the board and
    /// the cache per move: the positions of a line are not asked for, so they are
    /// not kept in the cache either.
    pub fn line(&mut self, me: Cells, you: Cells) -> Option<Vec<usize>> {
        let first = self.win(me, you)?;
        let mut out = vec![first];
        if has_line(me | 1 << first) {
            return Some(out);
        }
        // `me` has no threat (else `first` completed a line): every threat it
        // makes from here on is on a line through its last move.
        let mut makers = Scan::of(me, you).makers;
        let (mut me, mut you, mut m) = (me | 1 << first, you, first);
        loop {
            let (made, new_makers) = threats_and_makers_through(m, me, you);
            debug_assert_ne!(made, 0, "a winning move makes a threat");
            // The defender blocks the attacker's threat (the least one of two).
            let block = made.trailing_zeros() as usize;
            out.push(block);
            you |= 1 << block;
            let rest = made & !(1 << block);
            if rest != 0 {
                // Two threats: the attacker completes the least one left.
                out.push(rest.trailing_zeros() as usize);
                return Some(out);
            }
            // The block takes the defender's only threat cell if it had one
            // (the attacker's move was there), and makes its threats.
            let theirs = threats_through(block, you, me);
            makers = (makers | new_makers) & !(me | you);
            m = self.inner_win(me, you, theirs, makers)?;
            out.push(m);
            me |= 1 << m;
        }
    }
}

/// X's forced win by continuous threats from `(x, o)` (X to move), searched in
/// the position's canonical form (so that every image of a position gets the
/// same line, mapped back) with `search` (its cache): its first move (in the
/// position's own cells) and its plies to X's four when O blocks every threat.
pub fn forced_win(search: &mut ForcedSearch, x: Cells, o: Cells) -> Option<(usize, u32)> {
    let line = forced_line(search, x, o)?;
    Some((line[0], line.len() as u32))
}

/// X's forced win from `(x, o)` (X to move) as [`ForcedSearch::line`] gives it,
/// searched in the canonical form and mapped back to the position's own cells.
pub fn forced_line(search: &mut ForcedSearch, x: Cells, o: Cells) -> Option<Vec<usize>> {
    forced_line_of_image(search, canonical(x, o))
}

/// [`forced_line`] of a position whose canonical form and automorphism (its
/// index) [`canonical`] gave as `image`.
pub fn forced_line_of_image(
    search: &mut ForcedSearch,
    ((cx, co), which): ((Cells, Cells), usize),
) -> Option<Vec<usize>> {
    let line = search.line(cx, co)?;
    let mut cell_of_image = [0; CELLS];
    for (cell, &image) in automorphisms()[which].perm.iter().enumerate() {
        cell_of_image[image as usize] = cell;
    }
    Some(line.into_iter().map(|c| cell_of_image[c]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::qubic::geometry::random_positions;
    use crate::games::qubic::position::Position;

    /// [`wins_by`] as it was: every threat counted afresh at every step.
    fn wins_by_recounting(mut me: Cells, mut you: Cells, attack: &[usize]) -> bool {
        for &m in attack {
            if threats(me, you) != 0 {
                return true;
            }
            let theirs = threats(you, me);
            if (me | you) >> m & 1 == 1
                || theirs.count_ones() >= 2
                || (theirs != 0 && theirs != 1 << m)
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

    /// The threats and threat makers by line counts, as they were counted.
    #[test]
    fn threats_without_a_population_count_are_the_counted_ones() {
        for (x, o) in random_positions(20_000, 0x5eed_0f74_123b_00aa) {
            for (own, other) in [(x, o), (o, x)] {
                for count in [2, 3] {
                    let counted = lines()
                        .iter()
                        .filter(|&&l| other & l == 0 && (own & l).count_ones() == count)
                        .fold(0, |s, &l| s | l & !own);
                    assert_eq!(empty_cells_of_lines_with(own, other, count), counted);
                }
            }
        }
    }

    /// The step-by-step [`wins_by`] answers as the recounting one, for attacks
    /// found in random positions replayed in others (the prover's use) and for
    /// random cell lists.
    #[test]
    fn wins_by_agrees_with_recounting_every_threat() {
        let positions = random_positions(3_000, 0x0b5e_55ed_da7a_5eed);
        let mut search = ForcedSearch::new();
        let mut wins = 0;
        for (i, &(x, o)) in positions.iter().enumerate() {
            let attack: Vec<usize> = match search.line(x, o) {
                Some(line) => {
                    wins += 1;
                    line.iter().copied().step_by(2).collect()
                }
                None => (0..6)
                    .map(|k| (x.wrapping_mul(k + 7) % 64) as usize)
                    .collect(),
            };
            for &(px, po) in &positions[i.saturating_sub(3)..=i] {
                for extra in [0, 1u64 << (i % 64)] {
                    let po = po | (extra & !px);
                    assert_eq!(
                        wins_by(px, po, &attack),
                        wins_by_recounting(px, po, &attack),
                        "{px:x} {po:x} {attack:?}"
                    );
                }
            }
        }
        assert!(wins > 100, "only {wins} forced wins: the test tests little");
    }

    /// The threats after an O reply, and the attacks replayed after it, from one
    /// scan of the position before it: the answers of a scan after the reply.
    #[test]
    fn replies_replayed_from_one_scan_answer_as_a_scan_after_each() {
        let positions = random_positions(2_000, 0x0a47_e5ca_0ce5_0001);
        let mut search = ForcedSearch::new();
        let mut wins = 0;
        for (i, &(x, o)) in positions.iter().enumerate() {
            // An attack found in another position (mostly broken here) and one
            // found in this position with O's stone taken away (mostly intact).
            let (px, po) = positions[(i + 1) % positions.len()];
            let mut attacks: Vec<Vec<usize>> = Vec::new();
            for (ax, ao) in [(px, po), (x, o & o.wrapping_sub(1))] {
                if let Some(line) = search.line(ax, ao) {
                    attacks.push(line.iter().copied().step_by(2).collect());
                }
            }
            let after = AfterReplies::of(x, o);
            let mut empty = !(x | o);
            while empty != 0 {
                let reply = empty.trailing_zeros() as usize;
                empty &= empty - 1;
                let o2 = o | 1 << reply;
                assert_eq!(after.x_threats_after(reply), threats(x, o2));
                for attack in &attacks {
                    let replayed = after.wins_by(reply, attack);
                    assert_eq!(replayed, wins_by(x, o2, attack), "{x:x} {o2:x} {attack:?}");
                    wins += usize::from(replayed);
                }
            }
        }
        assert!(wins > 1_000, "only {wins} wins: the test tests little");
    }

    /// The one-pass scan of the whole board (threats both ways and threat
    /// makers) against the lines counted one by one, and the two-cell test
    /// against a population count.
    #[test]
    fn threats_both_ways_and_makers_in_one_pass_are_the_counted_ones() {
        let counted = |own: Cells, other: Cells, count: u32| {
            lines()
                .iter()
                .filter(|&&l| other & l == 0 && (own & l).count_ones() == count)
                .fold(0, |s, &l| s | l & !own)
        };
        for (x, o) in random_positions(20_000, 0x0e9a_55b0_7a11_11e5) {
            for (me, you) in [(x, o), (o, x)] {
                assert_eq!(
                    threats_both_and_makers(me, you),
                    (
                        counted(me, you, 3),
                        counted(you, me, 3),
                        counted(me, you, 2)
                    )
                );
                for set in [me, you, me & you.rotate_left(7), me & me >> 9 & you >> 3] {
                    assert_eq!(at_most_two(set), set.count_ones() <= 2, "{set:x}");
                }
            }
        }
    }

    /// A bucket holds the last two positions written to it, the last first,
    /// against a model of the same: random positions of one bucket (a table of
    /// one) written and read at random.
    #[test]
    fn a_bucket_keeps_its_last_two_positions() {
        let table = InnerTable::new(1);
        let positions = random_positions(12, 0xb0c4_e7a1_55ed_0003);
        let mut model: Vec<((Cells, Cells), Option<usize>)> = Vec::new();
        let mut seed = 0x1234_5678_9abc_def0u64;
        let (mut hits, mut misses) = (0, 0);
        for step in 0..5_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let (me, you) = positions[(seed >> 33) as usize % positions.len()];
            if step % 3 == 0 {
                let answer = ((seed >> 20) % 65).checked_sub(1).map(|c| c as usize);
                table.put(me, you, answer);
                model.retain(|&(p, _)| p != (me, you));
                model.insert(0, ((me, you), answer));
                model.truncate(WAYS);
            } else {
                let expected = model
                    .iter()
                    .find(|&&(p, _)| p == (me, you))
                    .map(|&(_, a)| a);
                assert_eq!(table.get(me, you), expected, "step {step}");
                if expected.is_some() {
                    hits += 1
                } else {
                    misses += 1
                }
            }
        }
        assert!(hits > 100 && misses > 100, "{hits} hits, {misses} misses");
    }

    /// The one-pass scan of the lines through a cell against the lines counted
    /// one by one, on random positions and every cell.
    #[test]
    fn threats_and_makers_through_a_cell_are_the_counted_ones() {
        for (x, o) in random_positions(2_000, 0x7e55_11ce_0b5e_0001) {
            for (own, other) in [(x, o), (o, x)] {
                for cell in 0..CELLS {
                    let counted = |count| {
                        lines()
                            .iter()
                            .filter(|&&l| l >> cell & 1 == 1)
                            .filter(|&&l| other & l == 0 && (own & l).count_ones() == count)
                            .fold(0, |s, &l| s | l & !own)
                    };
                    assert_eq!(
                        threats_and_makers_through(cell, own, other),
                        (counted(3), counted(2))
                    );
                }
            }
        }
    }

    /// [`ForcedSearch::win`] answers the least cell that wins by continuous
    /// threats, by the independent checker's plain recursion (`check.rs`): the
    /// completing cell with a threat, else the least threat (or block) after which
    /// the checker finds the win; no win where the checker finds none. Random
    /// positions, each asked twice (the second answer from the caches).
    #[test]
    fn forced_wins_are_the_least_winning_threats_by_the_checker() {
        forced_wins_are_the_checkers(ForcedSearch::new(), 4_000);
    }

    /// The same with a table of four buckets, where positions are dropped
    /// all the time (each is searched again: the same answers).
    #[test]
    fn forced_wins_with_a_tiny_table_are_the_checkers() {
        forced_wins_are_the_checkers(ForcedSearch::with_buckets(4), 2_000);
    }

    /// [`ForcedSearch::win`] of `search` against the checker on `count` random
    /// positions (see [`forced_wins_are_the_least_winning_threats_by_the_checker`]).
    fn forced_wins_are_the_checkers(mut search: ForcedSearch, count: usize) {
        let checker = crate::games::qubic::check::Checker::new();
        let mut memo = crate::games::qubic::check::ForcedMemo::default();
        let (mut wins, mut later_wins) = (0, 0);
        for (x, o) in random_positions(count, 0x0f0c_ed51_5ea7_c4ed) {
            if has_line(x) || has_line(o) {
                continue;
            }
            for (me, you) in [(x, o), (o, x)] {
                let expected = if threats(me, you) != 0 {
                    Some(threats(me, you).trailing_zeros() as usize)
                } else if threats(you, me).count_ones() >= 2 {
                    None
                } else {
                    (0..CELLS).filter(|&c| (me | you) >> c & 1 == 0).find(|&c| {
                        let theirs = threats(you, me);
                        let me2 = me | 1 << c;
                        let made = threats(me2, you);
                        (theirs == 0 || theirs == 1 << c)
                            && made != 0
                            && (made.count_ones() >= 2
                                || checker.forced_win(me2, you | made, &mut memo))
                    })
                };
                for _ in 0..2 {
                    assert_eq!(search.win(me, you), expected, "{me:x} {you:x}");
                }
                wins += expected.is_some() as usize;
                later_wins +=
                    expected.is_some_and(|c| c > (!(me | you)).trailing_zeros() as usize) as usize;
            }
        }
        assert!(
            wins > count / 8 && later_wins > count / 40,
            "{wins} wins, {later_wins} not on the first cell"
        );
    }

    /// [`ForcedSearch::line`] as it was: [`ForcedSearch::win`] asked afresh in
    /// every position of the line, the block found by a scan.
    fn line_by_wins(
        search: &mut ForcedSearch,
        mut me: Cells,
        mut you: Cells,
    ) -> Option<Vec<usize>> {
        let mut out = Vec::new();
        loop {
            let m = search.win(me, you)?;
            out.push(m);
            me |= 1 << m;
            if has_line(me) {
                return Some(out);
            }
            let block = threats(me, you).trailing_zeros() as usize;
            out.push(block);
            you |= 1 << block;
        }
    }

    /// The line followed move by move is the one of [`ForcedSearch::win`] asked
    /// in every position, with a build's table and with one of four buckets
    /// (positions dropped all the time), each position asked twice.
    #[test]
    fn lines_followed_move_by_move_are_those_of_wins_asked_at_every_move() {
        let mut lines_found = 0;
        for buckets in [BUILD_BUCKETS, 4] {
            let (mut search, mut reference) =
                (ForcedSearch::with_buckets(buckets), ForcedSearch::new());
            for (x, o) in random_positions(3_000, 0x11e5_f0a1_10e5_0002) {
                if has_line(x) || has_line(o) {
                    continue;
                }
                for (me, you) in [(x, o), (o, x)] {
                    let expected = line_by_wins(&mut reference, me, you);
                    for _ in 0..2 {
                        assert_eq!(search.line(me, you), expected, "{me:x} {you:x}");
                    }
                    lines_found += expected.is_some_and(|l| l.len() >= 5) as usize;
                }
            }
        }
        assert!(
            lines_found > 300,
            "only {lines_found} lines of three threats or more"
        );
    }

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
