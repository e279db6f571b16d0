//! Making a strategy smaller: an exact branch-and-bound search for the fewest
//! strategic moves below a position, run on every position of a strategy whose
//! subtree is small enough, children first.
//!
//! The cost of a position is the number of strategic moves X makes below it (a tree
//! count): a forced win costs nothing; X's forced block of O's threat costs what the
//! position after it costs; any other X move costs one plus the sum over O's replies
//! (distinct up to the 192 automorphisms). df-pn proves the first winning move it
//! finds, and the strategy read off the proof can only choose among those; the
//! search here looks at every move, so a subtree of cost `c` is replaced whenever
//! some move does it in less. The search is exact below a bound: it returns the
//! least cost when that is at most the bound, else a lower bound above it, and keeps
//! both in its tables so that a later, larger bound starts from them.

use super::geometry::{Cells, canonical, has_line};
use super::prover::{Key, candidate_moves, child_classes};
use super::strategy::{Choice, Strategy, move_cost, replies_after};
use super::threats::{AfterReplies, ForcedSearch, PositionMap, Scan, threats};

/// A cost too large to matter: the position is not won (or the search gave up).
const INFINITE: u32 = u32::MAX / 4;

/// Bytes a forced-win cache entry may take (as the prover counts them).
const BYTES_PER_ENTRY: u64 = 64;

/// What the search knows of a position's cost.
#[derive(Debug, Clone, Copy)]
struct Known {
    /// The least cost (exact) or a lower bound of it.
    cost: u32,
    exact: bool,
    /// X to move, exact: the move that achieves the cost ([`SETTLED`] for a
    /// position the rules or a forced win settle); a lower bound: the move that
    /// came closest.
    cell: u8,
}

/// The `cell` of a position settled without a move of the strategy.
const SETTLED: u8 = u8::MAX;

/// The branch-and-bound search with its tables.
pub struct Shrinker {
    forced: ForcedSearch,
    x_known: PositionMap<Known>,
    o_known: PositionMap<Known>,
    /// Positions searched (interior nodes, both sides).
    pub nodes: u64,
    /// The node count at which the current search gives up.
    give_up_at: u64,
    gave_up: bool,
    /// Entries the forced-win cache may hold (its own), or gain (one lent to a
    /// shrink).
    capacity: usize,
    /// Entries above which the forced-win cache is forgotten (see `capacity`).
    clear_above: usize,
}

/// What [`Shrinker::shrink`] did.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShrinkStats {
    /// Strategic moves below the root before and after (tree counts).
    pub cost_before: u64,
    pub cost_after: u64,
    /// Positions whose move was replaced by a cheaper one.
    pub replaced: u64,
    /// Positions where the search ran out of its node budget.
    pub gave_up: u64,
    /// Nodes searched.
    pub nodes: u64,
}

/// One shrinking pass over a strategy: its settings and what it has done.
struct Pass {
    max_bound: u32,
    budget: u64,
    /// The move chosen at each position of the strategy walked so far.
    improved: PositionMap<Choice>,
    /// Their costs (tree counts of strategic moves).
    costs: PositionMap<u64>,
    stats: ShrinkStats,
}

impl Shrinker {
    /// A search whose forced-win cache takes about `memory` bytes at most (its own
    /// tables are small: the positions it searches).
    pub fn new(memory: u64) -> Shrinker {
        let capacity = (memory / BYTES_PER_ENTRY).max(1 << 16) as usize;
        Shrinker {
            forced: ForcedSearch::new(),
            x_known: PositionMap::default(),
            o_known: PositionMap::default(),
            nodes: 0,
            give_up_at: u64::MAX,
            gave_up: false,
            capacity,
            clear_above: capacity,
        }
    }

    /// A smaller strategy below `root` (X to move, covered by `strategy`): every
    /// strategic position whose cost, once its children are shrunk, is at most
    /// `max_bound + 1` is searched exactly for a cheaper move, with at most `budget`
    /// nodes each. Its forced-win searches are made with `forced` (the prover's,
    /// whose caches know most positions of the strategy: a forced win's answer is
    /// the position's, so the caches change no answer, only the time; a cache of
    /// its own searched them all again, a fifth of a build), which may gain up to
    /// the shrinker's capacity of entries.
    pub fn shrink(
        &mut self,
        strategy: &Strategy,
        root: Key,
        max_bound: u32,
        budget: u64,
        forced: &mut ForcedSearch,
    ) -> (Strategy, ShrinkStats) {
        std::mem::swap(&mut self.forced, forced);
        self.clear_above = self.forced.cached().saturating_add(self.capacity);
        let shrunk = self.shrink_with_own(strategy, root, max_bound, budget);
        self.clear_above = self.capacity;
        std::mem::swap(&mut self.forced, forced);
        shrunk
    }

    /// [`Shrinker::shrink`] with the forced-win search it holds.
    fn shrink_with_own(
        &mut self,
        strategy: &Strategy,
        root: Key,
        max_bound: u32,
        budget: u64,
    ) -> (Strategy, ShrinkStats) {
        let mut pass = Pass {
            max_bound,
            budget,
            improved: PositionMap::default(),
            costs: PositionMap::default(),
            stats: ShrinkStats::default(),
        };
        let nodes_before = self.nodes;
        pass.stats.cost_before = strategy.cost_below(root);
        self.improve(strategy, root, &mut pass);
        let mut out = Strategy::default();
        let mut stats = pass.stats;
        stats.cost_after =
            self.read_out(root, &pass.improved, &mut out, &mut PositionMap::default());
        stats.nodes = self.nodes - nodes_before;
        (out, stats)
    }

    /// The least number of strategic moves X needs below a position (X to move)
    /// when it is at most `bound`; None when it needs more (or X does not win).
    pub fn least_cost(&mut self, x: Cells, o: Cells, bound: u32) -> Option<u32> {
        let key = canonical(x, o).0;
        let cost = self.x_cost(key, bound);
        (cost <= bound).then_some(cost)
    }

    /// Children first: the cost of `key` under the strategy with its subtrees
    /// shrunk, then an exact search for a cheaper move when the cost is small.
    fn improve(&mut self, strategy: &Strategy, key: Key, pass: &mut Pass) -> u64 {
        if let Some(&c) = pass.costs.get(&key) {
            return c;
        }
        let Some(choice) = strategy.choices.get(&key).copied() else {
            // A fringe position: a forced win.
            pass.costs.insert(key, 0);
            return 0;
        };
        let mut cost = u64::from(move_cost(key));
        for child in replies_after(key, choice.cell) {
            cost += self.improve(strategy, child, pass);
        }
        let mut chosen = Choice {
            cell: choice.cell,
            subtree: cost,
        };
        // A block has no alternative; a cost of one is the least a strategic move has.
        if move_cost(key) == 1 && cost > 1 {
            let bound = (cost - 1).min(u64::from(pass.max_bound)) as u32;
            self.gave_up = false;
            self.give_up_at = self.nodes + pass.budget;
            let found = self.x_cost(key, bound);
            if self.gave_up {
                pass.stats.gave_up += 1;
            } else if found <= bound {
                let known = self.x_known[&key];
                chosen = Choice {
                    cell: known.cell,
                    subtree: u64::from(found),
                };
                pass.stats.replaced += 1;
            }
            self.give_up_at = u64::MAX;
            self.gave_up = false;
        }
        pass.improved.insert(key, chosen);
        pass.costs.insert(key, chosen.subtree);
        chosen.subtree
    }

    /// The final strategy from `key` down: the improved choices, and below a
    /// replaced move the exact search's. Returns the cost (tree count).
    fn read_out(
        &mut self,
        key: Key,
        improved: &PositionMap<Choice>,
        out: &mut Strategy,
        memo: &mut PositionMap<u64>,
    ) -> u64 {
        if let Some(&c) = memo.get(&key) {
            return c;
        }
        let cell = match improved.get(&key) {
            Some(c) => Some(c.cell),
            // Below a replaced move every position was searched exactly; the rest
            // are forced wins.
            None => self
                .x_known
                .get(&key)
                .filter(|k| k.exact && k.cell != SETTLED)
                .map(|k| k.cell),
        };
        let Some(cell) = cell else {
            memo.insert(key, 0);
            return 0;
        };
        let mut cost = u64::from(move_cost(key));
        for child in replies_after(key, cell) {
            cost += self.read_out(child, improved, out, memo);
        }
        out.choices.insert(
            key,
            Choice {
                cell,
                subtree: cost,
            },
        );
        memo.insert(key, cost);
        cost
    }

    /// The least cost of an X-to-move position when it is at most `bound`, else a
    /// lower bound above `bound`.
    fn x_cost(&mut self, key: Key, bound: u32) -> u32 {
        if let Some(k) = self.x_known.get(&key)
            && (k.exact || k.cost > bound)
        {
            return k.cost;
        }
        if let Some(c) = self.x_settled(key) {
            return c;
        }
        if self.out_of_budget() {
            return bound + 1;
        }
        let add = move_cost(key);
        if add > bound {
            return add;
        }
        let mut moves = child_classes(key);
        // A move that worked before (a lower bound's search) first.
        if let Some(k) = self.x_known.get(&key)
            && let Some(i) = moves.iter().position(|&(m, _)| m == k.cell)
        {
            moves.swap(0, i);
        }
        // The best move so far, and (while none is within the bound) the move that
        // failed by least: it is tried first when the position is searched again.
        let (mut best, mut best_cell) = (INFINITE, 0u8);
        let (mut least_failed, mut hint) = (INFINITE, 0u8);
        for (m, child) in moves {
            let limit = bound.min(best.saturating_sub(1)) - add;
            let c = self.o_cost(child, m, key, limit);
            if self.gave_up {
                return bound + 1;
            }
            if c <= limit {
                (best, best_cell) = (add + c, m);
                if c == 0 {
                    break;
                }
            } else if add.saturating_add(c) < least_failed {
                (least_failed, hint) = (add.saturating_add(c), m);
            }
        }
        let known = if best <= bound {
            Known {
                cost: best,
                exact: true,
                cell: best_cell,
            }
        } else {
            Known {
                cost: least_failed.min(INFINITE),
                exact: false,
                cell: hint,
            }
        };
        self.x_known.insert(key, known);
        known.cost
    }

    /// The cost of an X-to-move position the rules settle (a forced win: 0; a lost
    /// or drawn one: infinite), remembered; None when it needs a search.
    fn x_settled(&mut self, (x, o): Key) -> Option<u32> {
        let cost = if has_line(o) {
            INFINITE
        } else {
            // Scanned only here: a position O has already won needs no scan.
            let scan = Scan::of(x, o);
            if self.forced.win_scanned(x, o, &scan).is_some() {
                0
            } else if scan.theirs.count_ones() >= 2 || !(x | o) == 0 {
                INFINITE
            } else {
                return None;
            }
        };
        self.x_known.insert(
            (x, o),
            Known {
                cost,
                exact: true,
                cell: SETTLED,
            },
        );
        Some(cost)
    }

    /// The least cost of an O-to-move position (the sum over O's replies) when at
    /// most `bound`, else a lower bound above it. `m` and `parent` are X's move and
    /// the position it was played in (for replaying X's attack).
    fn o_cost(&mut self, key: Key, m: u8, parent: Key, bound: u32) -> u32 {
        if let Some(k) = self.o_known.get(&key)
            && (k.exact || k.cost > bound)
        {
            return k.cost;
        }
        let (x, o) = key;
        if has_line(x) || threats(x, o).count_ones() >= 2 {
            return self.remember_o(key, 0, true);
        }
        if threats(o, x) != 0 {
            // O completes a line.
            return self.remember_o(key, INFINITE, true);
        }
        if self.out_of_budget() {
            return bound + 1;
        }
        // X's forced win if O could pass, in the parent's cells (the replies are
        // played there too, so the attack replays without mapping).
        let (px, po) = (parent.0 | 1 << m, parent.1);
        let attack: Vec<usize> = self
            .forced
            .line(px, po)
            .map(|line| line.into_iter().step_by(2).collect())
            .unwrap_or_default();
        let no_pass_win = attack.is_empty();
        // O's replies, those on X's attack first: the others mostly leave it intact,
        // so X wins by force after them and they cost nothing. Lower bounds are
        // summed over distinct replies as they come, and the search stops as soon
        // as the sum passes the bound.
        let candidates = candidate_moves(px, po);
        let on_attack = attack.iter().fold(0u64, |s, &c| s | 1 << c) & candidates;
        let after = AfterReplies::of(px, po);
        let mut children: Vec<(Key, u32)> = Vec::new();
        let mut rest = 0u32;
        for set in [on_attack, candidates & !on_attack] {
            let mut set = set;
            while set != 0 {
                let r = set.trailing_zeros() as usize;
                set &= set - 1;
                if !no_pass_win && after.wins_by(r, &attack) {
                    continue;
                }
                let child = canonical(px, po | 1 << r).0;
                if children.iter().any(|&(k, _)| k == child) {
                    continue;
                }
                let (lower, exact) = if let Some(k) = self.x_known.get(&child) {
                    (k.cost, k.exact)
                } else {
                    if no_pass_win && after.x_threats_after(r) == 0 {
                        // An O stone never gives X a forced win (see the prover).
                        self.forced.note(child.0, child.1, None);
                    }
                    match self.x_settled(child) {
                        Some(c) => (c, true),
                        None => (move_cost(child), false),
                    }
                };
                if lower == 0 && exact {
                    continue;
                }
                children.push((child, lower));
                rest = rest.saturating_add(lower).min(INFINITE);
                if rest > bound {
                    return self.remember_o(key, rest, false);
                }
            }
        }
        // The dearest-looking replies first: they are the likeliest to break the
        // bound.
        children.sort_by_key(|c| std::cmp::Reverse(c.1));
        let mut sum = 0u32;
        for (child, lower) in children {
            rest -= lower;
            let limit = bound - sum - rest;
            let c = self.x_cost(child, limit);
            if self.gave_up {
                return bound + 1;
            }
            if c > limit {
                let lb = sum.saturating_add(c).saturating_add(rest).min(INFINITE);
                return self.remember_o(key, lb, false);
            }
            sum += c;
        }
        self.remember_o(key, sum, true)
    }

    /// Remembers an O-to-move position's cost (exact, or a lower bound) and
    /// returns it.
    fn remember_o(&mut self, key: Key, cost: u32, exact: bool) -> u32 {
        self.o_known.insert(
            key,
            Known {
                cost,
                exact,
                cell: 0,
            },
        );
        cost
    }

    /// Counts a node; false while the node budget lasts. Keeps the forced-win cache
    /// within its capacity (it is only a cache).
    fn out_of_budget(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 0xfff == 0 && self.forced.cached() > self.clear_above {
            self.forced.clear();
        }
        if self.nodes >= self.give_up_at {
            self.gave_up = true;
        }
        self.gave_up
    }
}
