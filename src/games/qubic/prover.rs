//! The proof search: depth-first proof-number search (df-pn) over positions in
//! canonical form, X the attacker. An X-to-move position is an OR node (one winning
//! move is enough), an O-to-move position an AND node (every reply must lose).
//! Leaves are settled without search where the rules allow: X to move with a forced
//! win by continuous threats ([`ForcedSearch`]) is won; X unable to stop two O
//! threats, or a full board, is not.
//!
//! Proof and disproof numbers live in a transposition table keyed by the canonical
//! form (the 192 automorphisms), so a position and its images are proven once.

use super::geometry::{Cells, Images, canonical};
pub use super::table::{INFINITE, Numbers, Work};
use super::table::{ProofTable, SLOT_BYTES};
use super::threats::{
    AfterReplies, ForcedSearch, PositionMap, Scan, forced_line_of_image, threats,
};
use std::sync::Arc;

/// The largest proof or disproof number a sum of unsettled children reaches. Sums
/// over a graph count shared positions again and again, and in a long proof they
/// outgrow any bound: a sum that saturated at [`INFINITE`] read as settled, a
/// position neither proven nor disproven came back to the root as "X does not
/// win" (the default Qubic build, reply 21, after 1,090 s in one piece).
const LARGEST_UNSETTLED: u32 = INFINITE - 1;

/// First proof number of an O-to-move position where X would win by continuous
/// threats if O passed (O must find a defence). Measured against 2 and 10/20 on
/// `0-3-60-21`: 1 and 20 took 13 s, 2 and 10 took 19 s.
const PASS_WIN_ESTIMATE: u32 = 1;
/// First proof number of an O-to-move position where X threatens nothing.
const FREE_ESTIMATE: u32 = 20;

/// A canonical position: X's cells, O's cells (the side to move follows from the
/// counts).
pub type Key = (Cells, Cells);

/// Whether X is to move in `(x, o)`.
#[inline]
pub fn x_to_move(x: Cells, o: Cells) -> bool {
    x.count_ones() == o.count_ones()
}

/// The moves worth searching for the side to move in `(x, o)`: the one cell that
/// blocks a single opponent threat, else every empty cell. (Two opponent threats, or
/// an own threat, are settled before moves are asked for.)
pub fn candidate_moves(x: Cells, o: Cells) -> Cells {
    let (me, you) = if x_to_move(x, o) { (x, o) } else { (o, x) };
    let theirs = threats(you, me);
    if theirs != 0 { theirs } else { !(x | o) }
}

/// The children of a position, one per class: the first move (a cell of the
/// position) reaching each distinct canonical position after the candidate moves.
pub fn child_classes(key: Key) -> Vec<(u8, Key)> {
    child_classes_mapped(key)
        .into_iter()
        .map(|(m, child, _)| (m, child))
        .collect()
}

/// [`child_classes`] with, for each child, the automorphism that [`canonical`]
/// gives for the position after the move (its index): the one mapping it to the
/// child.
fn child_classes_mapped((x, o): Key) -> Vec<(u8, Key, usize)> {
    let x_moves = x_to_move(x, o);
    let mut moves = candidate_moves(x, o);
    let mut out: Vec<(u8, Key, usize)> = Vec::with_capacity(moves.count_ones() as usize);
    // One move (a forced block): canonical alone is cheaper than the images.
    let images = (moves.count_ones() > 1).then(|| Images::of(x, o));
    while moves != 0 {
        let m = moves.trailing_zeros() as u8;
        moves &= moves - 1;
        let (child, which) = match &images {
            Some(images) => images.canonical_after(m as usize, x_moves),
            None if x_moves => canonical(x | 1 << m, o),
            None => canonical(x, o | 1 << m),
        };
        if !out.iter().any(|&(_, k, _)| k == child) {
            out.push((m, child, which));
        }
    }
    out
}

/// Bytes a table entry may take: 24 bytes a slot, slots up to 8/3 the entries,
/// and (before the table grew in place) the old slots beside the new while
/// growing. It sets the capacity, and so every proof's course: kept as it was.
const BYTES_PER_ENTRY: u64 = 64;

/// The df-pn prover with its tables.
pub struct Prover {
    table: ProofTable,
    forced: ForcedSearch,
    /// Interior nodes expanded (calls of the search on an unsettled position).
    pub expansions: u64,
    /// Entries the memory allows.
    capacity: usize,
    /// Entries above which the table is thinned: the capacity, or twice what a
    /// thinning kept when the proof's own entries fill more than half of it (else
    /// every expansion would thin the table again, each time in vain); once the
    /// table has been thinned at its bound, `usize::MAX` (thinned there alone,
    /// whatever bound a resumed build sets).
    thin_at: usize,
    /// Times the table was thinned.
    thinnings: u64,
    /// Entries the table may hold at most: a few short of where the largest
    /// table the memory holds would double (see [`Prover::thin`] and
    /// [`Prover::set_table_bound`]).
    most: usize,
    /// Positions dropped at that bound so far (by this process: not
    /// in a checkpoint, since the course does not depend on it).
    pub dropped_at_bound: u64,
    deadline: Option<std::time::Instant>,
    /// Expansions at which the search pauses (see [`Prover::set_pause`]).
    pause_at: Option<u64>,
    /// The deadline passed or the pause came: every search returns at once,
    /// unproven.
    pub aborted: bool,
    /// Where sums of unsettled children stop ([`LARGEST_UNSETTLED`]; smaller in
    /// tests, to reach it).
    sum_cap: u32,
    /// Replies settled by an attack found after another reply (no search of
    /// their own).
    pub sibling_replays: u64,
    /// X's moves with the same least proof number: the last is searched first
    /// (else the first). A second proof so made proves through other moves.
    ties_to_last: bool,
    /// The numbers of the last [`Prover::prove_key`]'s position when it returned
    /// (of a paused proof: how far it is).
    pub last_numbers: Numbers,
    /// Positions other builds proved (`--known`, [`super::known`]) with X's
    /// move in each: settled as won, unsearched.
    known: Option<Arc<PositionMap<u8>>>,
}

/// The counters a prover's course depends on besides its table (see
/// [`super::checkpoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProverState {
    /// Entries the table is thinned to ([`Prover::new`]'s memory).
    pub capacity: usize,
    /// Positions expanded so far.
    pub expansions: u64,
    /// Entries above which the table is thinned next.
    pub thin_at: usize,
    /// Times the table was thinned.
    pub thinnings: u64,
}

impl Prover {
    /// A prover whose tables take about `memory` bytes.
    pub fn new(memory: u64) -> Prover {
        let capacity = (memory / 2 / BYTES_PER_ENTRY).max(1 << 16) as usize;
        let mut prover = Prover {
            table: ProofTable::default(),
            forced: ForcedSearch::new(),
            expansions: 0,
            capacity,
            thin_at: capacity,
            thinnings: 0,
            most: 0,
            dropped_at_bound: 0,
            deadline: None,
            pause_at: None,
            aborted: false,
            sum_cap: LARGEST_UNSETTLED,
            sibling_replays: 0,
            ties_to_last: false,
            last_numbers: Numbers::UNKNOWN,
            known: None,
        };
        prover.set_table_bound(memory);
        prover
    }

    /// A prover that, among X's moves with the same least proof number, searches
    /// the last first: it proves through other moves than [`Prover::new`]'s (the
    /// build's second proofs).
    pub fn with_ties_to_last(memory: u64) -> Prover {
        Prover {
            ties_to_last: true,
            ..Prover::new(memory)
        }
    }

    /// Lets the table grow to the largest that `memory` bytes hold (by default
    /// [`Prover::new`]'s memory) before it drops positions by their work: a build
    /// caps its provers' budget (the same proofs on any budget from the
    /// default up), but a proof whose own positions outgrow it may take its
    /// share of the whole `--memory`.
    pub fn set_table_bound(&mut self, memory: u64) {
        // Never below the capacity's own memory (a table that fits holds more
        // than a third of the memory's bytes in entries, the capacity 1/128).
        self.most = most_entries(memory.max(self.capacity as u64 * 2 * BYTES_PER_ENTRY));
    }

    /// Takes the positions of `known` (canonical, X to move, with X's move in
    /// each: [`super::known::Known::moves`]) as won: settled when first
    /// met, without a search below them (their strategies are the files').
    pub fn set_known(&mut self, known: Option<Arc<PositionMap<u8>>>) {
        self.known = known.filter(|k| !k.is_empty());
    }

    /// X's move in a canonical position of the known strategies, if it is one.
    pub fn known_move(&self, key: Key) -> Option<u8> {
        self.known.as_ref().and_then(|k| k.get(&key).copied())
    }

    /// Gives up at `deadline` (the search then answers "not proven"); `None`:
    /// never. The only way time enters a proof: everything else the prover does
    /// depends on the position and the memory alone.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.aborted = false;
        self.deadline = deadline;
    }

    /// Pauses the search (it answers "not proven", [`Prover::aborted`]) once it
    /// has expanded `expansions` more positions; `None`: never. A pause depends
    /// on the search alone, not on time.
    pub fn set_pause(&mut self, expansions: Option<u64>) {
        self.aborted = false;
        self.pause_at = expansions.map(|e| self.expansions + e);
    }

    /// Whether the deadline has passed.
    pub fn out_of_time(&self) -> bool {
        self.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// The prover's forced-win search (its caches), for other searches of the
    /// same positions: a forced win's answer is a function of the position, so
    /// sharing the caches changes no answer of the prover's.
    pub fn forced_search(&mut self) -> &mut ForcedSearch {
        &mut self.forced
    }

    /// Positions the forced-win searches have visited.
    pub fn forced_nodes(&self) -> u64 {
        self.forced.nodes
    }

    /// Its counters, for a checkpoint.
    pub fn state(&self) -> ProverState {
        ProverState {
            capacity: self.capacity,
            expansions: self.expansions,
            thin_at: self.thin_at,
            thinnings: self.thinnings,
        }
    }

    /// The table's entries with the work below each, for a checkpoint.
    pub fn entries(&self) -> impl Iterator<Item = (Key, Numbers, Work)> + '_ {
        self.table.iter()
    }

    /// Sets its counters to `state` and empties its table, with room for
    /// `entries` (a checkpoint's, [`Prover::insert_entry`]); its caches of forced
    /// wins stay: they answer as the search would.
    pub fn restore(&mut self, state: ProverState, entries: usize) {
        debug_assert_eq!(state.capacity, self.capacity);
        // The old table goes first: the two at once could be gigabytes.
        self.table = ProofTable::default();
        self.table = ProofTable::with_capacity(entries);
        self.expansions = state.expansions;
        self.thin_at = state.thin_at;
        self.thinnings = state.thinnings;
    }

    /// Puts a checkpoint's entry in the table.
    pub fn insert_entry(&mut self, key: Key, numbers: Numbers, work: Work) {
        self.table.insert_with_work(key, numbers, work);
    }

    /// Positions in the table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The numbers the table holds for a canonical position, if any.
    pub fn lookup(&self, key: Key) -> Option<Numbers> {
        self.table.get(&key).copied()
    }

    /// Whether X wins from a canonical position, proving as needed (the table's
    /// answer when it has one). `false` also when the deadline passed
    /// ([`Prover::aborted`]).
    ///
    /// # Panics
    ///
    /// When the search comes back neither aborted nor settled (a bug: with
    /// infinite thresholds only a proof, a disproof or the deadline ends it).
    pub fn prove_key(&mut self, key: Key) -> bool {
        let n = self.search(key, INFINITE, INFINITE);
        self.last_numbers = n;
        assert!(
            self.aborted || n.pn == 0 || n.dn == 0,
            "the proof search stopped unsettled ({n:?})"
        );
        n.pn == 0
    }

    /// [`Prover::prove_key`] of a position searched again from its first
    /// numbers, whatever the table says of it: for a proven position whose
    /// proven children the table no longer holds (the search stops at a
    /// proven position, so it would never prove them again).
    pub fn prove_again(&mut self, key: Key) -> bool {
        self.table.insert(key, Numbers::UNKNOWN);
        self.prove_key(key)
    }

    /// Sets the bound on the table's entries (tests: a bound no memory gives).
    #[cfg(test)]
    pub(super) fn bound_entries(&mut self, most: usize) {
        self.most = most;
    }

    /// The table's slots (tests).
    #[cfg(test)]
    pub(super) fn table_slots(&self) -> usize {
        self.table.slots()
    }

    /// Drops every position of more than `most` stones (tests: a table that
    /// lost what lies past them).
    #[cfg(test)]
    pub(super) fn forget_past(&mut self, most: u32) {
        self.table.retain(|&key, _, _| stones(key) <= most as usize);
    }

    /// Whether X (to move) wins by continuous threats (or has a threat).
    pub fn forced_win(&mut self, x: Cells, o: Cells) -> bool {
        self.forced.win(x, o).is_some()
    }

    /// The numbers of a position before it is searched: settled by the rules or the
    /// forced-win search, else unknown.
    pub fn leaf(&mut self, key: Key) -> Option<Numbers> {
        if let Some(&n) = self.table.get(&key) {
            return Some(n);
        }
        self.settle(key).ok()
    }

    /// A position not in the table settled by the rules or the forced-win
    /// search (and stored), or else the one [`Scan`] of the board (X against O)
    /// it took: everything its first estimate needs.
    fn settle(&mut self, (x, o): Key) -> Result<Numbers, Scan> {
        if self.known_move((x, o)).is_some() {
            self.table.insert((x, o), Numbers::PROVEN);
            return Ok(Numbers::PROVEN);
        }
        let scan = Scan::of(x, o);
        let full = !(x | o) == 0;
        let settled = if x_to_move(x, o) {
            if self.forced.win_scanned(x, o, &scan).is_some() {
                Some(Numbers::PROVEN)
            } else if scan.theirs.count_ones() >= 2 || full {
                Some(Numbers::DISPROVEN)
            } else {
                None
            }
        } else if scan.theirs != 0 || full {
            // O completes a line (or the board is full: a draw).
            Some(Numbers::DISPROVEN)
        } else if scan.mine.count_ones() >= 2 {
            Some(Numbers::PROVEN)
        } else {
            None
        };
        match settled {
            Some(n) => {
                self.table.insert((x, o), n);
                Ok(n)
            }
            None => Err(scan),
        }
    }

    /// The distinct children of a canonical position, canonical. For O to move,
    /// X's forced win if O could pass is replayed after every reply: the replies
    /// it survives are settled here, without a search of their own.
    pub fn children(&mut self, (x, o): Key) -> Vec<Key> {
        let x_moves = x_to_move(x, o);
        // X's forced win if O could pass. Without one, no reply gives X one (an O
        // stone only blocks X's lines and adds O's threats: the same attack works
        // with the stone taken away), so the replies need no forced-win search.
        let pass_win = (!x_moves).then(|| self.forced.line(x, o));
        // X's attacks known to work after some reply (in this position's cells):
        // the one if O could pass, then those found after the replies that broke
        // it. A reply that breaks none of them needs a search of its own.
        let mut attacks: Vec<Vec<usize>> = match &pass_win {
            Some(Some(line)) => vec![line.iter().copied().step_by(2).collect()],
            _ => Vec::new(),
        };
        let no_win_after_reply = matches!(pass_win, Some(None));
        // The threats after each reply, from one scan of this position.
        let after = (!x_moves).then(|| AfterReplies::of(x, o));
        let classes = child_classes_mapped((x, o));
        // Their slots fetched together: the look-ups below and the search's
        // then hit the cache.
        for &(_, child, _) in &classes {
            self.table.prefetch(child);
        }
        for &(m, child, which) in &classes {
            let Some(after) = &after else { break };
            let m = usize::from(m);
            // The child's threats are those after the reply, in other cells.
            let x_threats = after.x_threats_after(m);
            if no_win_after_reply && x_threats == 0 {
                self.forced.note(child.0, child.1, None);
            }
            if attacks.is_empty() || self.table.contains_key(&child) {
                continue;
            }
            if let Some(which) = attacks.iter().position(|attack| after.wins_by(m, attack)) {
                self.sibling_replays += (which > 0) as u64;
                self.table.insert(child, Numbers::PROVEN);
            } else if x_threats == 0
                && let Some(attack) = self.attack_after((child, which))
            {
                // The search its leaf would make, made now: its attack may defeat
                // the replies still to come.
                attacks.push(attack);
                self.table.insert(child, Numbers::PROVEN);
            }
        }
        classes.into_iter().map(|(_, child, _)| child).collect()
    }

    /// X's forced win by continuous threats in a position (X to move, no threat
    /// of X's), searched in its canonical form `image` (the form and the index of
    /// an automorphism giving it, as [`canonical`] gives them; where leaves look
    /// for it), as X's moves in the position's own cells: an attack to replay
    /// after other replies.
    fn attack_after(&mut self, image: (Key, usize)) -> Option<Vec<usize>> {
        let line = forced_line_of_image(&mut self.forced, image)?;
        Some(line.into_iter().step_by(2).collect())
    }

    /// A position's numbers: the table's, or settled as a leaf, or a first
    /// estimate (stored, so it is made once). For O to move the estimate is how
    /// much X threatens: a threat leaves O one reply; a forced win if O could pass
    /// leaves O a few defences; otherwise O has many good replies.
    fn numbers(&mut self, key: Key) -> Numbers {
        if let Some(&n) = self.table.get(&key) {
            return n;
        }
        let scan = match self.settle(key) {
            Ok(n) => return n,
            Err(scan) => scan,
        };
        let (x, o) = key;
        let estimate = if x_to_move(x, o) || scan.mine != 0 {
            Numbers::UNKNOWN
        } else if self.forced.win_scanned(x, o, &scan).is_some() {
            Numbers {
                pn: PASS_WIN_ESTIMATE,
                dn: 1,
            }
        } else {
            Numbers {
                pn: FREE_ESTIMATE,
                dn: 1,
            }
        };
        self.table.insert(key, estimate);
        estimate
    }

    /// df-pn with the 1+epsilon threshold (a quarter) against re-expansion.
    fn search(&mut self, key: Key, th_pn: u32, th_dn: u32) -> Numbers {
        if let Some(n) = self.leaf(key)
            && (n.pn == 0 || n.dn == 0 || n.pn >= th_pn || n.dn >= th_dn)
        {
            return n;
        }
        if self.aborted {
            return Numbers::UNKNOWN;
        }
        if self.pause_at.is_some_and(|p| self.expansions >= p) {
            self.aborted = true;
            return Numbers::UNKNOWN;
        }
        let began = self.expansions;
        // Expansions below this position not yet added to its work.
        let mut counted = began;
        self.expansions += 1;
        if self.expansions & 0xfff == 0 {
            if self.out_of_time() {
                self.aborted = true;
                return Numbers::UNKNOWN;
            }
            self.thin();
        } else if self.table.len() > self.most {
            // At the bound: thinned now, not at the next 4,096th expansion
            // (the table would double first).
            self.thin();
        }
        let or_node = x_to_move(key.0, key.1);
        let children = self.children(key);
        let mut first = true;
        loop {
            // The children's slots, fetched again after a child's search (which
            // may have pushed them out of the cache).
            if !first {
                for &c in &children {
                    self.table.prefetch(c);
                }
            }
            first = false;
            // In the OR node "pn" is the minimum of the children's, "dn" the sum; the
            // AND node the other way round. Work with (min side, sum side).
            let (mut best, mut min, mut second, mut sum, mut best_sum) =
                (0, INFINITE, INFINITE, 0u32, 0);
            for (i, &c) in children.iter().enumerate() {
                let n = self.numbers(c);
                let (m, v) = if or_node { (n.pn, n.dn) } else { (n.dn, n.pn) };
                // (The flag first: the first proofs' hot loop tests one bool more.)
                if m < min || (self.ties_to_last && or_node && m == min && m < INFINITE) {
                    (second, min, best, best_sum) = (min, m, i, v);
                } else if m < second {
                    second = m;
                }
                // A settled child settles the sum; unsettled ones stop below.
                sum = if v >= INFINITE || sum >= INFINITE {
                    INFINITE
                } else {
                    sum.saturating_add(v).min(self.sum_cap)
                };
            }
            let here = if or_node {
                Numbers { pn: min, dn: sum }
            } else {
                Numbers { pn: sum, dn: min }
            };
            let (th_min, th_sum) = if or_node {
                (th_pn, th_dn)
            } else {
                (th_dn, th_pn)
            };
            if min >= th_min || sum >= th_sum || min == 0 || sum == 0 {
                self.table.insert(key, here);
                self.add_work(key, self.expansions - counted);
                return here;
            }
            let child_th_min = th_min.min(second.saturating_add(second / 4).max(second + 1));
            let child_th_sum = (th_sum - sum).saturating_add(best_sum).min(INFINITE);
            let (c_pn, c_dn) = if or_node {
                (child_th_min, child_th_sum)
            } else {
                (child_th_sum, child_th_min)
            };
            self.search(children[best], c_pn, c_dn);
            // The work below it added after each child's search, not only when
            // it returns: else the positions on the way down to the one being
            // expanded (the search's own path) would count none of the search
            // going on below them, the first to go at the bound. At a pause
            // its numbers stay as they were (the next slice finds them as an
            // uninterrupted search would).
            self.add_work(key, self.expansions - counted);
            counted = self.expansions;
            if self.aborted {
                return here;
            }
        }
    }

    /// Adds `expansions` to the work below `key` (if the table holds it),
    /// rounded up or down to what the table's 16 bits hold with the odds that
    /// keep the sum right on average ([`Work::add`]), the dice thrown from the
    /// expansions so far (the course depends on the search alone): rounded
    /// down alone, the many short searches below a position with much work
    /// would never add up.
    fn add_work(&mut self, key: Key, expansions: u64) {
        let dice = crate::store::checksum::mix(self.expansions);
        self.table.add_work(key, expansions, dice);
    }

    /// Keeps the tables within their capacity: the forced-win cache is forgotten
    /// (it is only a cache); the table drops its unsettled positions, then if need
    /// be its disproven ones (the proven ones are the proof read off at the end,
    /// and proven again if missing).
    ///
    /// The proof's own entries may outgrow the capacity: the table is then
    /// thinned when it has doubled, but never past the largest table the
    /// memory holds ([`Prover::most`]: a 13 GB table doubled would take 26).
    /// Thinned there, it drops the positions with the least work below them,
    /// settled or not, to at most half of that ([`Prover::drop_least_work`]).
    /// Below it the course is as it was before the bound.
    fn thin(&mut self) {
        if self.forced.cached() > self.capacity {
            self.forced.clear();
        }
        // (A checkpoint's `thin_at` may lie above the bound.)
        if self.table.len() > self.thin_at.min(self.most) {
            let at_bound = self.table.len() > self.most;
            if at_bound {
                self.drop_least_work(self.most / 2);
            } else {
                self.table.retain(|_, n, _| n.pn == 0 || n.dn == 0);
                if self.table.len() > self.capacity / 4 * 3 {
                    self.table.retain(|_, n, _| n.pn == 0);
                }
            }
            self.table.shrink_to_fit();
            // Once at the bound, thinned there alone: a thinning below it
            // drops every unsettled position, the work kept with them too (a
            // drop can leave far fewer than half the bound, and reply 12 of
            // `0-3-60-21-15` with 16 MiB then went round forever). Not `most`:
            // a resumed build may set another bound.
            self.thin_at = if at_bound {
                usize::MAX
            } else {
                self.capacity.max(self.table.len() * 2).min(self.most)
            };
            self.thinnings += 1;
        }
    }

    /// Drops positions until at most `keep` are left, those with the least
    /// work below them first (the cheapest to search again), and among those
    /// of one class of work ([`Work::class`]) those with the most stones first:
    /// whole groups of (class, stones) at a time. The group of the most work
    /// and the fewest stones is kept in any case.
    ///
    /// Before, the table kept its proven positions alone here, and of those the
    /// fewest stones (the deepest went first, whatever their work): the
    /// 4-line opening's reply 22 then came back every 20 M expansions to the
    /// very same proof and disproof numbers at the root for 100 M expansions,
    /// and reply 12 of `0-3-60-21-15` with 16 MiB stayed at the same numbers
    /// forever. Each drop took the search's numbers below the root with it (the
    /// proof and disproof numbers a subtree had reached, which steer the search
    /// away from it), so it went down the same subtree, to the same bound, again.
    /// Kept by work, a subtree searched long keeps its numbers, unsettled or not
    /// (the work below a position is at least that below any of its children
    /// searched from it: what is kept is mostly the top of the search).
    fn drop_least_work(&mut self, keep: usize) {
        let mut groups = vec![[0usize; 65]; Work::CLASSES];
        for (key, _, work) in self.table.iter() {
            groups[work.class()][stones(key)] += 1;
        }
        if self.table.len() <= keep {
            return;
        }
        // The first group (most work first, fewest stones first) that does
        // not fit: it and every group after it go.
        let mut kept = 0;
        let mut cut = None;
        'classes: for class in (0..Work::CLASSES).rev() {
            for (n, &count) in groups[class].iter().enumerate() {
                if count == 0 {
                    continue;
                }
                if kept > 0 && kept + count > keep {
                    cut = Some((class, n));
                    break 'classes;
                }
                kept += count;
            }
        }
        // (No cut: one group, kept in any case.)
        let Some(cut) = cut else { return };
        let before = self.table.len();
        self.table.retain(|&key, _, work| {
            let class = work.class();
            class > cut.0 || (class == cut.0 && stones(key) < cut.1)
        });
        self.dropped_at_bound += (before - self.table.len()) as u64;
    }
}

/// Stones on the board of a position.
fn stones((x, o): Key) -> usize {
    (x | o).count_ones() as usize
}

/// Entries a prover's table may hold at most with `memory` bytes: its largest
/// table of 24-byte slots (a power of two) that fits, a little short of three
/// quarters full, where it would double (the margin: an expansion inserts a few
/// dozen positions before the bound is looked at).
fn most_entries(memory: u64) -> usize {
    let slots = 1usize << (memory / SLOT_BYTES).max(2).ilog2();
    slots / 4 * 3 - slots / 128
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::games::qubic::position::Position;
    use crate::games::qubic::threats::wins_by;

    /// A start with 35 replies, most proven in a few thousand expansions (the
    /// strategy's tests prove it too).
    pub(in crate::games::qubic) const SMALL_START: &str = "0-63-21-42-15";

    /// Enough expansions for the table to fill (the smallest table) and sums to
    /// reach a low cap, a few seconds of proof: the tests that prove a start's
    /// replies in order stop once past it.
    pub(in crate::games::qubic) const TEST_EXPANSIONS: u64 = 8_000;

    /// A minute from now: a test's deadline, so a bug fails it rather than hangs.
    pub(in crate::games::qubic) fn in_a_minute() -> Option<std::time::Instant> {
        Some(std::time::Instant::now() + std::time::Duration::from_secs(60))
    }

    /// The smallest table: thinned now and then, never in vain at every
    /// expansion (when the proof's own entries outgrow the capacity, the next
    /// thinning waits until the table has doubled), and every reply still proven.
    /// The replies in order until the proof has passed [`TEST_EXPANSIONS`].
    #[test]
    fn a_small_table_thins_rarely_and_still_proves() {
        let start = Position::parse(SMALL_START).unwrap();
        let mut prover = Prover::new(0);
        for (_, child) in child_classes((start.x, start.o)) {
            prover.set_deadline(in_a_minute());
            assert!(prover.prove_key(child), "not proven in a minute");
            if prover.expansions > TEST_EXPANSIONS {
                break;
            }
        }
        assert!(
            prover.thinnings >= 1,
            "the table never filled: the test tests nothing"
        );
        assert!(prover.thinnings < 64, "thinned {} times", prover.thinnings);
    }

    /// At the bound the least work goes first, and among positions of one
    /// class of work those with the most stones, whole groups of (class,
    /// stones) at a time, at most as many kept as asked (unless the first group
    /// alone is more: it stays): the kept entries are checked against a sort
    /// of all of them. Classes grow with the work, at most a quarter apart
    /// within a class, and the work is stored within 1/1,024.
    #[test]
    fn the_least_work_goes_first() {
        for w in (0..200_000u64).chain((1..60).map(|k| 1 << k)) {
            let work = Work::of(w);
            let back = work.expansions();
            let kept = w.min(Work::MOST);
            assert!(back <= kept && kept - back <= kept / 1024, "{w} -> {back}");
            assert!(work.class() < Work::CLASSES);
            assert_eq!(work.class() == 0, back == 0);
            assert_eq!(Work::from_bits(work.bits()), work);
            assert!(Work::of(w + 1).class() >= work.class(), "{w}");
            if (4..Work::MOST / 2).contains(&w) {
                assert!(Work::of(w + w / 4 + 1).class() > work.class(), "{w}");
            }
        }
        // Positions of 1..=12 stones with work spread over many classes.
        let mut prover = Prover::new(0);
        let mut all: Vec<(Key, Work)> = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for n in 0..5_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // X's cells 0..stones, O's the number n in cells 40 on: distinct.
            let key = ((1u64 << (1 + state % 12)) - 1, n << 40);
            let work = Work::of(if n % 5 == 0 {
                0
            } else {
                (state >> 20) % (1 << ((state >> 50) % 30))
            });
            prover.table.insert_with_work(key, Numbers::UNKNOWN, work);
            all.push((key, work));
        }
        // The order of dropping, as a sort: (class, fewer stones) descending.
        let rank = |&(key, work): &(Key, Work)| (work.class(), std::cmp::Reverse(stones(key)));
        all.sort_by_key(|e| std::cmp::Reverse(rank(e)));
        let total = all.len();
        prover.drop_least_work(total);
        assert_eq!(prover.table.len(), total, "all fit: none dropped");
        for keep in [total - 1, total / 2, total / 7, 40] {
            prover.drop_least_work(keep);
            let kept = prover.table.len();
            assert!(kept <= keep && kept > 0, "{kept} kept of {keep}");
            // The kept entries are a prefix of the order, ending at a group's end.
            for (i, entry) in all.iter().enumerate() {
                assert_eq!(
                    prover.table.get(&entry.0).is_some(),
                    i < kept,
                    "entry {i} of {kept} kept"
                );
            }
            assert_ne!(rank(&all[kept - 1]), rank(&all[kept]), "a group cut");
            assert_eq!(prover.dropped_at_bound as usize, total - kept);
        }
        // The first group alone is more than asked: it stays.
        let first = all.iter().take_while(|e| rank(e) == rank(&all[0])).count();
        prover.drop_least_work(0);
        assert_eq!(prover.table.len(), first);
        // A table of one group (no work, one number of stones) keeps it.
        let mut prover = Prover::new(0);
        for n in 0..60u64 {
            prover.table.insert((1, 1 << (2 + n)), Numbers::UNKNOWN);
        }
        prover.drop_least_work(10);
        assert_eq!(prover.table.len(), 60);
    }

    /// A reply whose proof needs a table far past the bound is still proven:
    /// reply 12 of `0-3-60-21-15` (44,300 expansions and 596,000 positions in a
    /// 32 MiB table), bounded to 100,000 positions, in 24,385 expansions. When
    /// the bound kept the proven positions with the fewest stones alone, it
    /// was not proven after 1.1 M expansions (60 s), at bounds of 100,000,
    /// 200,000 and 389,000 positions alike: each drop took the numbers of the
    /// subtree being searched with it, and the search went down it again.
    #[test]
    fn a_proof_far_past_the_bound_is_still_found() {
        let reply = Position::parse("0-3-60-21-15-12").unwrap();
        let mut prover = Prover::new(32 << 20);
        prover.bound_entries(100_000);
        prover.set_pause(Some(200_000));
        assert!(
            prover.prove_key(canonical(reply.x, reply.o).0),
            "not proven in 200,000 expansions"
        );
        assert!(
            prover.dropped_at_bound > 100_000,
            "{} dropped: the test tests nothing",
            prover.dropped_at_bound
        );
    }

    /// Sums that reach their cap stay unsettled: with the cap far below what
    /// the proofs' sums reach, every reply is still proven, none comes back
    /// "not proven" (when a saturated sum read as settled, a long proof ended
    /// with X not winning where X wins), and each answer agrees with a prover
    /// whose sums never reach the cap. The replies in order until the proof has
    /// passed [`TEST_EXPANSIONS`].
    #[test]
    fn saturated_sums_stay_unsettled() {
        let start = Position::parse(SMALL_START).unwrap();
        let mut capped = Prover::new(64 << 20);
        capped.sum_cap = 24;
        let mut plain = Prover::new(64 << 20);
        let mut reached_cap = 0;
        for (_, child) in child_classes((start.x, start.o)) {
            capped.set_deadline(in_a_minute());
            assert!(capped.prove_key(child), "not proven with the cap");
            plain.set_deadline(in_a_minute());
            assert!(plain.prove_key(child), "not proven");
            reached_cap += capped
                .table
                .values()
                .filter(|n| n.pn == capped.sum_cap || n.dn == capped.sum_cap)
                .count();
            if capped.expansions > TEST_EXPANSIONS {
                break;
            }
        }
        assert!(
            reached_cap > 0,
            "no sum reached the cap: the test tests nothing"
        );
    }

    /// Each child's automorphism is the one [`canonical`] gives for the
    /// position after its move (the attack found in the child is mapped back
    /// with it, as [`forced_line`](super::super::threats::forced_line) would).
    #[test]
    fn children_come_with_the_automorphism_canonical_gives() {
        let mut checked = 0;
        for (x, o) in crate::games::qubic::geometry::random_positions(300, 0xc1a5_5e5a_0b5e_0002) {
            let x_moves = x_to_move(x, o);
            for (m, child, which) in child_classes_mapped((x, o)) {
                let after = if x_moves {
                    (x | 1 << m, o)
                } else {
                    (x, o | 1 << m)
                };
                assert_eq!(canonical(after.0, after.1), (child, which));
                checked += usize::from(which != 0);
            }
        }
        assert!(
            checked > 1_000,
            "only {checked} children not canonical already"
        );
    }

    /// An attack found in a reply's canonical form and mapped back wins in the
    /// cells of the position it was asked for (a wrong mapping would only lose
    /// the replays, never prove a child wrongly: `wins_by` checks every move),
    /// and the attacks found after some replies settle others without a search.
    #[test]
    fn attacks_found_after_a_reply_map_back_and_settle_others() {
        let mut prover = Prover::new(64 << 20);
        let mut mapped = 0;
        for (x, o) in crate::games::qubic::geometry::random_positions(3_000, 0x005e_eda7_7ac4) {
            if threats(x, o) != 0 || threats(o, x) != 0 {
                continue;
            }
            if let Some(attack) = prover.attack_after(canonical(x, o)) {
                assert!(wins_by(x, o, &attack), "{x:x} {o:x} {attack:?}");
                mapped += 1;
            }
        }
        assert!(mapped > 200, "only {mapped} attacks: the test tests little");
        // The replays, on the positions two plies below a start: every reply
        // they settle is a forced win of X's (as a plain leaf finds), and some are
        // settled by an attack found after another reply.
        let start = Position::parse("0-3-60-21-15").unwrap();
        let mut replays = Prover::new(64 << 20);
        let mut plain = Prover::new(64 << 20);
        let mut settled = 0;
        for (_, child) in child_classes((start.x, start.o)) {
            for (_, grandchild) in child_classes(child) {
                if !replays.table.contains_key(&grandchild)
                    && !x_to_move(grandchild.0, grandchild.1)
                {
                    for reply in replays.children(grandchild) {
                        if replays.table.get(&reply) == Some(&Numbers::PROVEN) {
                            assert_eq!(plain.leaf(reply), Some(Numbers::PROVEN), "{reply:?}");
                            settled += 1;
                        }
                    }
                }
            }
        }
        assert!(settled > 100, "only {settled} replies settled");
        assert!(
            replays.sibling_replays > 0,
            "no reply settled by another's attack"
        );
    }

    /// A pause comes after the expansions asked for, whatever the time, and the
    /// next slice goes on from the table: the search's course depends on the
    /// search alone (slices of time made it depend on the machine's speed).
    #[test]
    fn a_pause_comes_after_its_expansions_and_the_proof_goes_on() {
        let start = Position::parse(SMALL_START).unwrap();
        // The first reply (in order) whose proof takes several slices.
        let child = child_classes((start.x, start.o))
            .into_iter()
            .map(|(_, child)| child)
            .find(|&child| {
                let mut prover = Prover::new(64 << 20);
                assert!(prover.prove_key(child));
                prover.expansions > 3000
            })
            .expect("no reply takes 3,000 expansions: the test tests nothing");
        let mut prover = Prover::new(64 << 20);
        let mut slices = 0;
        loop {
            prover.set_pause(Some(1000));
            let before = prover.expansions;
            if prover.prove_key(child) {
                break;
            }
            assert!(prover.aborted);
            assert_eq!(prover.expansions, before + 1000);
            slices += 1;
        }
        assert!(
            slices >= 3,
            "proven in {slices} slices: the test tests little"
        );
    }
}
