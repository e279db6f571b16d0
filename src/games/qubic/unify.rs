//! One strategy for the whole file. Each O reply's block is a winning strategy of
//! its own, shrunk as a tree, and blocks proven apart (the chains of replies, each
//! with its own table) reach different positions; the file's count is of distinct
//! positions. Here every position some block holds gets one move: one the blocks
//! give there, or any move whose every O reply leads to a position some block holds
//! or to a forced win (a "free" move: it costs nothing new, and it often lets a
//! whole subtree go). The moves are chosen so that the strategic positions reached
//! from all the replies are fewest ([`Union::choose`]: a greedy descent, then an
//! annealing walk over random switches; reference counts make a switch cost only
//! the positions it adds or drops). A build with two proofs of each reply hands
//! both proofs' blocks here: the second proof's moves are alternatives. Any such
//! choice is sound: every move leads to held positions (each with a move of its
//! own) or to forced wins.

use super::prover::{Key, child_classes};
use super::stored::Record;
use super::strategy::{Choice, Strategy, move_cost, replies_after};
use super::threats::{ForcedSearch, PositionMap};
use rayon::prelude::*;

/// The blocks' strategies (each a root and its records) with one move per
/// position, the strategic positions they reach together made fewest (see the
/// module's doc), in the order of the blocks.
pub fn unify(blocks: &[(Key, &[Record])]) -> (Vec<Strategy>, Unified) {
    let mut union = Union::of(blocks);
    let before = Reached::new(&union).strategic;
    let free_moves = union.add_free_moves();
    let (chosen, after) = union.choose();
    let stats = Unified {
        before,
        free_moves,
        after,
    };
    (union.strategies(&chosen), stats)
}

/// What [`unify`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Unified {
    /// Distinct strategic positions the blocks reach together, each position on
    /// the first block's move.
    pub before: usize,
    /// Moves found that cost nothing new (see [`Union::add_free_moves`]).
    pub free_moves: usize,
    /// Distinct strategic positions reached after.
    pub after: usize,
}

/// The positions of several blocks and the moves they give there.
pub struct Union {
    /// Every position held by a block, fewest stones first (then by position).
    keys: Vec<Key>,
    /// Per position: whether X's move there is strategic (not a forced block).
    strategic: Vec<bool>,
    /// Per position: the moves the blocks give (distinct, in block order), each
    /// with the held positions after O's replies to it.
    moves: Vec<Vec<(u8, Vec<usize>)>>,
    /// The block roots (positions after O's reply), as indices; none for a root
    /// held by no block (a forced win).
    roots: Vec<Option<usize>>,
    /// Index of each held position.
    index: PositionMap<usize>,
}

impl Union {
    /// The union of `blocks`: each a root and its records.
    pub fn of(blocks: &[(Key, &[Record])]) -> Union {
        let mut keys: Vec<Key> = blocks
            .iter()
            .flat_map(|(_, records)| records.iter().map(|r| r.key))
            .collect();
        keys.sort_by_key(|&(x, o)| ((x | o).count_ones(), x, o));
        keys.dedup();
        let index: PositionMap<usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut moves: Vec<Vec<(u8, Vec<usize>)>> = vec![Vec::new(); keys.len()];
        for (_, records) in blocks {
            for r in records.iter() {
                let options = &mut moves[index[&r.key]];
                if options.iter().any(|&(cell, _)| cell == r.cell) {
                    continue;
                }
                // Replies leading to positions no block holds end in forced wins.
                let children = replies_after(r.key, r.cell)
                    .into_iter()
                    .filter_map(|child| index.get(&child).copied())
                    .collect();
                options.push((r.cell, children));
            }
        }
        Union {
            strategic: keys.iter().map(|&k| move_cost(k) == 1).collect(),
            roots: blocks
                .iter()
                .map(|(root, _)| index.get(root).copied())
                .collect(),
            keys,
            moves,
            index,
        }
    }

    /// Adds, in every strategic position held, each move no block gives there
    /// whose every O reply leads to a held position or to a forced win for X: moves
    /// that cost nothing new. Returns how many.
    pub fn add_free_moves(&mut self) -> usize {
        let found: Vec<Vec<(u8, Vec<usize>)>> = (0..self.keys.len())
            .into_par_iter()
            .map_init(ForcedSearch::new, |forced, i| self.free_moves(i, forced))
            .collect();
        let mut added = 0;
        for (moves, free) in self.moves.iter_mut().zip(found) {
            added += free.len();
            moves.extend(free);
        }
        added
    }

    /// The free moves of position `i` (see [`Union::add_free_moves`]), its forced
    /// wins searched with `forced`.
    fn free_moves(&self, i: usize, forced: &mut ForcedSearch) -> Vec<(u8, Vec<usize>)> {
        let mut free = Vec::new();
        // A forced block is X's only move.
        if !self.strategic[i] {
            return free;
        }
        let key = self.keys[i];
        'moves: for (cell, _) in child_classes(key) {
            if self.moves[i].iter().any(|&(c, _)| c == cell) {
                continue;
            }
            let mut children = Vec::new();
            for child in replies_after(key, cell) {
                match self.index.get(&child) {
                    Some(&j) => children.push(j),
                    // Whether X wins by force is all that counts here (not the line).
                    None if forced.win(child.0, child.1).is_some() => {}
                    None => continue 'moves,
                }
            }
            free.push((cell, children));
        }
        free
    }

    /// The choice of move per position that the search ends in (indices into the
    /// moves each position has), and the strategic positions it reaches: the
    /// better of two searches, one from the first block's moves (so never worse
    /// than the blocks as they are) and one from the moves with the least subtree
    /// counted as a tree (the first such on a tie). Each search is a
    /// greedy descent (positions with most stones first, a switch kept when the
    /// count falls, until none does), then an annealing walk over random switches
    /// (a fixed seed: the same blocks give the same strategy) that also takes a
    /// switch adding `d` positions with probability `exp(-d / t)`, the temperature
    /// `t` falling from 20 (`WALK_TEMPERATURE`) to 0: a second proof's subtree
    /// replaces the first's only through switches that add before they drop.
    /// Measured on the corner opening's blocks of two builds (4 and 2 GiB
    /// tables): a walk that never adds ended at 2,541 or 2,654 strategic
    /// positions depending on the blocks' order, the annealing at 2,535 from
    /// either start; the build with two proofs of each reply goes from 3,137 to
    /// 2,474.
    pub fn choose(&self) -> (Vec<u8>, usize) {
        let first_moves = self.search_from(vec![0; self.keys.len()]);
        let least_trees = self.search_from(self.least_trees());
        if least_trees.1 < first_moves.1 {
            least_trees
        } else {
            first_moves
        }
    }

    /// Per position, the move whose subtree, counted as a tree, is least (the
    /// first such).
    fn least_trees(&self) -> Vec<u8> {
        let mut cost: Vec<u64> = vec![0; self.keys.len()];
        let mut chosen = vec![0u8; self.keys.len()];
        // A position's children have more stones: they come later in `keys`.
        for i in (0..self.keys.len()).rev() {
            let mut least = u64::MAX;
            for (k, (_, children)) in self.moves[i].iter().enumerate() {
                let below: u64 = children.iter().map(|&c| cost[c]).sum();
                if below < least {
                    (least, chosen[i]) = (below, k as u8);
                }
            }
            cost[i] = least + u64::from(self.strategic[i]);
        }
        chosen
    }

    /// [`Union::choose`]'s search from the moves `start`.
    fn search_from(&self, start: Vec<u8>) -> (Vec<u8>, usize) {
        let mut graph = Reached::with(self, start);
        loop {
            let mut improved = false;
            for i in (0..self.keys.len()).rev() {
                if self.moves[i].len() < 2 || graph.refs[i] == 0 {
                    continue;
                }
                let current = graph.chosen[i];
                for alternative in 0..self.moves[i].len() as u8 {
                    if alternative == current {
                        continue;
                    }
                    let before = graph.strategic;
                    graph.switch(self, i, alternative);
                    if graph.strategic < before {
                        improved = true;
                        break;
                    }
                    graph.switch(self, i, current);
                }
            }
            if !improved {
                break;
            }
        }
        let choices: Vec<usize> = (0..self.keys.len())
            .filter(|&i| self.moves[i].len() > 1)
            .collect();
        let mut best = (graph.chosen.clone(), graph.strategic);
        if choices.is_empty() {
            return best;
        }
        let mut random = Xorshift(0x9E37_79B9_7F4A_7C15);
        for step in 0..WALK_STEPS {
            let r = random.next();
            let i = choices[(r % choices.len() as u64) as usize];
            let to = ((r >> 32) % self.moves[i].len() as u64) as u8;
            let current = graph.chosen[i];
            if graph.refs[i] == 0 || to == current {
                continue;
            }
            let before = graph.strategic;
            graph.switch(self, i, to);
            if graph.strategic > before {
                let temperature =
                    WALK_TEMPERATURE * (1.0 - f64::from(step) / f64::from(WALK_STEPS));
                let added = (graph.strategic - before) as f64;
                if random.unit() >= (-added / temperature).exp() {
                    graph.switch(self, i, current);
                }
            } else if graph.strategic < best.1 {
                best = (graph.chosen.clone(), graph.strategic);
            }
        }
        best
    }

    /// The strategy below each root (in the order of the blocks) when every
    /// position plays its `chosen` move: the positions it reaches from there, each
    /// with its subtree counted as a tree.
    pub fn strategies(&self, chosen: &[u8]) -> Vec<Strategy> {
        let mut subtree: Vec<Option<u64>> = vec![None; self.keys.len()];
        self.roots
            .iter()
            .map(|&root| {
                let mut strategy = Strategy::default();
                let mut stack: Vec<usize> = root.into_iter().collect();
                while let Some(i) = stack.pop() {
                    if strategy.choices.contains_key(&self.keys[i]) {
                        continue;
                    }
                    let (cell, children) = &self.moves[i][chosen[i] as usize];
                    strategy.choices.insert(
                        self.keys[i],
                        Choice {
                            cell: *cell,
                            subtree: self.subtree(i, chosen, &mut subtree),
                        },
                    );
                    stack.extend(children);
                }
                strategy
            })
            .collect()
    }

    /// Strategic moves below position `i` under `chosen`, as a tree (memoised in
    /// `memo`).
    fn subtree(&self, i: usize, chosen: &[u8], memo: &mut [Option<u64>]) -> u64 {
        if let Some(s) = memo[i] {
            return s;
        }
        let children = &self.moves[i][chosen[i] as usize].1;
        let s = u64::from(self.strategic[i])
            + children
                .iter()
                .map(|&c| self.subtree(c, chosen, memo))
                .sum::<u64>();
        memo[i] = Some(s);
        s
    }
}

/// Steps of each of [`Union::choose`]'s walks (a step costs the positions a
/// switch adds or drops: on the corner opening with two proofs of each reply, 5
/// million take about 2 s; 2 million ended 3 positions higher, 10 million no
/// lower).
const WALK_STEPS: u32 = 5_000_000;

/// The walk's starting temperature, in strategic positions: at first a switch
/// that adds 20 is taken with probability 1/e (10, 20 and 40 ended alike on the
/// corner opening).
const WALK_TEMPERATURE: f64 = 20.0;

/// A xorshift generator: the walk's steps, the same on every run.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The positions a choice of moves reaches from the roots, kept by reference
/// counts so that a switch of one move costs only the positions it adds or drops.
struct Reached {
    /// Per position: the index of its chosen move.
    chosen: Vec<u8>,
    /// Per position: reached parents (a root has one more); reached when not 0.
    refs: Vec<u32>,
    /// Strategic positions reached.
    strategic: usize,
}

impl Reached {
    /// Every position on its first move, the roots' descendants counted.
    fn new(union: &Union) -> Reached {
        Self::with(union, vec![0; union.keys.len()])
    }

    /// Every position on its `chosen` move, the roots' descendants counted.
    fn with(union: &Union, chosen: Vec<u8>) -> Reached {
        let mut graph = Reached {
            chosen,
            refs: vec![0; union.keys.len()],
            strategic: 0,
        };
        for &root in union.roots.iter().flatten() {
            graph.add(union, root);
        }
        graph
    }

    /// One more reached parent for `i`: a position reached anew reaches its
    /// chosen move's children.
    fn add(&mut self, union: &Union, i: usize) {
        let mut stack = vec![i];
        while let Some(j) = stack.pop() {
            self.refs[j] += 1;
            if self.refs[j] == 1 {
                self.strategic += usize::from(union.strategic[j]);
                stack.extend(&union.moves[j][self.chosen[j] as usize].1);
            }
        }
    }

    /// One reached parent less for `i`: a position no longer reached drops its
    /// chosen move's children.
    fn drop(&mut self, union: &Union, i: usize) {
        let mut stack = vec![i];
        while let Some(j) = stack.pop() {
            self.refs[j] -= 1;
            if self.refs[j] == 0 {
                self.strategic -= usize::from(union.strategic[j]);
                stack.extend(&union.moves[j][self.chosen[j] as usize].1);
            }
        }
    }

    /// Position `i` plays its `to`th move: the new move's children are reached
    /// first, so that those both moves share are never dropped on the way.
    fn switch(&mut self, union: &Union, i: usize, to: u8) {
        let from = std::mem::replace(&mut self.chosen[i], to);
        if self.refs[i] == 0 || from == to {
            return;
        }
        for &c in &union.moves[i][to as usize].1 {
            self.add(union, c);
        }
        for &c in &union.moves[i][from as usize].1 {
            self.drop(union, c);
        }
    }
}
