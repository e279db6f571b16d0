//! Second proofs (`tb build qubic --proofs`): how many proofs of each O reply a
//! build makes, and with `auto` which chains' second proofs the unifying uses.
//!
//! A second proof, by a prover that breaks ties between X's moves the other way
//! ([`super::prover::Prover::with_ties_to_last`]), proves through other moves: the
//! unifying then has more moves to choose from. With `auto` a chain's second
//! proof is kept when its two proofs take fewer df-pn expansions than the longest
//! chain's first proof ([`kept_second_proofs`]): on as many cores as chains, the
//! chains done first prove themselves again while the longest is still proven,
//! so the second proofs cost little wall time. The decision counts expansions,
//! not seconds, so it is the same on any machine and number of threads; the
//! counts are kept in the file's metadata ([`expansions_key`],
//! [`given_up_key`]) for a resumed build, and removed when the file is finished.

use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many proofs of each reply a build makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proofs {
    /// One proof of each reply.
    One,
    /// Two proofs of each reply, every second proof kept.
    Two,
    /// A second proof of each chain, kept where it fits beside the longest
    /// chain's first proof ([`kept_second_proofs`]).
    Auto,
}

impl std::str::FromStr for Proofs {
    type Err = anyhow::Error;

    /// "1", "2" or "auto".
    fn from_str(text: &str) -> Result<Proofs> {
        match text {
            "1" => Ok(Proofs::One),
            "2" => Ok(Proofs::Two),
            "auto" => Ok(Proofs::Auto),
            _ => bail!("--proofs {text}: 1, 2 or auto"),
        }
    }
}

impl Proofs {
    /// The most proofs of a reply the build makes (and stores): 1 or 2.
    pub fn max_per_reply(self) -> u32 {
        if self == Proofs::One { 1 } else { 2 }
    }
}

/// The metadata key of the expansions proof block `block` took (written before
/// the block: a key whose block was never stored is stale, never read).
pub fn expansions_key(block: u8) -> String {
    format!("expansions {block}")
}

/// The metadata key that marks the second proof of the chain whose first reply
/// is `first_reply` given up (it could not be kept).
pub fn given_up_key(first_reply: u8) -> String {
    format!("second proof given up {first_reply}")
}

/// Whether metadata key `key` is one of the build's own ([`expansions_key`],
/// [`given_up_key`]): finishing the file removes them.
pub fn is_build_key(key: &str) -> bool {
    key.starts_with("expansions ") || key.starts_with("second proof given up ")
}

/// The expansions of each proof block the metadata counts, by block.
pub fn block_expansions(meta: &BTreeMap<String, String>) -> BTreeMap<u8, u64> {
    meta.iter()
        .filter_map(|(key, value)| {
            let block = key.strip_prefix("expansions ")?.parse().ok()?;
            Some((block, value.parse().ok()?))
        })
        .collect()
}

/// The longest of the chains' first proofs (`first`, expansions each): what
/// a chain's two proofs must stay below.
pub fn longest(first: &[u64]) -> u64 {
    first.iter().copied().max().unwrap_or(0)
}

/// For each chain, whether its second proof is kept, given the expansions each
/// chain's first proof took (`first`) and its second proof took (`second`;
/// `None` unless every reply of it is proven and counted): kept when the two
/// together took fewer than the longest first proof (never the longest chain's
/// own).
pub fn kept_second_proofs(first: &[u64], second: &[Option<u64>]) -> Vec<bool> {
    let longest = longest(first);
    first
        .iter()
        .zip(second)
        .map(|(&f, s)| s.is_some_and(|s| f.saturating_add(s) < longest))
        .collect()
}

/// What a free worker does next ([`JobQueue::take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Begins job `j`.
    Take(usize),
    /// Waits: the jobs left are second proofs of chains still proven the
    /// first time.
    Wait,
    /// Stops: every job is begun.
    Done,
}

/// The proofs a build still makes, as its workers take them: each one's chain
/// and proof (0: the first), whether it is begun, and per chain whether its
/// first proof is made. First proofs come first, in order. With `auto`
/// (`only_made_chains`), a chain's second proof begins once its first proof is
/// made: a chain still proven may turn out the longest, whose second proof is
/// never kept, and the second prover's table would grow beside the first's (a
/// 4-line opening's chain, proven twice at once, held 13.8 GB). With two proofs
/// every second proof is kept: the first left.
#[derive(Debug)]
pub struct JobQueue {
    jobs: Vec<(usize, u32)>,
    taken: Vec<bool>,
    first_done: Vec<bool>,
    only_made_chains: bool,
}

impl JobQueue {
    /// `jobs` (chain, proof) to make, none begun; `first_done` per chain.
    pub fn new(jobs: Vec<(usize, u32)>, first_done: Vec<bool>, only_made_chains: bool) -> Self {
        let taken = vec![false; jobs.len()];
        JobQueue {
            jobs,
            taken,
            first_done,
            only_made_chains,
        }
    }

    /// What a free worker does next (a job it takes is begun).
    pub fn take(&mut self) -> Next {
        let mut left = (0..self.jobs.len()).filter(|&j| !self.taken[j]).peekable();
        if left.peek().is_none() {
            return Next::Done;
        }
        let (jobs, first_done) = (&self.jobs, &self.first_done);
        match left.find(|&j| jobs[j].1 == 0 || !self.only_made_chains || first_done[jobs[j].0]) {
            Some(j) => {
                self.taken[j] = true;
                Next::Take(j)
            }
            None => Next::Wait,
        }
    }

    /// Chain `chain`'s first proof is made (or its worker is done with it).
    pub fn first_made(&mut self, chain: usize) {
        self.first_done[chain] = true;
    }
}

/// What the workers of a build with `auto` know of the chains' expansions, kept
/// up by the thread that stores the proofs: a second proof is given up as soon
/// as it cannot be kept. (The decision itself, [`kept_second_proofs`], is made on
/// the stored counts; these counts only ever lag behind them, so giving up never
/// drops a second proof the decision would keep.)
pub struct SecondBudget {
    /// The longest chain's first proof, once every first proof is stored
    /// (`u64::MAX` before).
    longest_first: AtomicU64,
    /// Per chain: the expansions of its proofs stored so far (first and second).
    spent: Vec<AtomicU64>,
}

impl SecondBudget {
    /// Chains that have spent `spent` expansions; `longest_first` once known.
    pub fn new(spent: &[u64], longest_first: Option<u64>) -> SecondBudget {
        SecondBudget {
            longest_first: AtomicU64::new(longest_first.unwrap_or(u64::MAX)),
            spent: spent.iter().map(|&s| AtomicU64::new(s)).collect(),
        }
    }

    /// Chain `chain`'s proof of a reply is stored: it took `expansions`.
    pub fn add(&self, chain: usize, expansions: u64) {
        self.spent[chain].fetch_add(expansions, Ordering::Relaxed);
    }

    /// Every first proof is stored: the longest took `expansions`.
    pub fn set_longest_first(&self, expansions: u64) {
        self.longest_first.store(expansions, Ordering::Relaxed);
    }

    /// Whether chain `chain`'s second proof, `running` expansions into a reply
    /// not stored yet, can no longer be kept.
    pub fn exceeded(&self, chain: usize, running: u64) -> bool {
        let longest = self.longest_first.load(Ordering::Relaxed);
        longest != u64::MAX
            && self.spent[chain]
                .load(Ordering::Relaxed)
                .saturating_add(running)
                >= longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First proofs first; with `auto` a chain's second proof only once its
    /// first is made; never a job taken.
    #[test]
    fn a_chains_second_proof_waits_for_its_first_with_auto() {
        let jobs = vec![(0, 0), (1, 0), (0, 1), (1, 1)];
        let queue = |taken: [bool; 4], first_done: [bool; 2], auto: bool| {
            let mut queue = JobQueue::new(jobs.clone(), first_done.to_vec(), auto);
            queue.taken = taken.to_vec();
            queue
        };
        // Chain 1 proven, chain 0 still being proven.
        let taken = [true, true, false, false];
        assert_eq!(queue(taken, [false, true], true).take(), Next::Take(3));
        assert_eq!(queue(taken, [false, true], false).take(), Next::Take(2));
        assert_eq!(queue(taken, [true, true], true).take(), Next::Take(2));
        // No chain made yet: with auto the worker waits, with two proofs it works.
        assert_eq!(queue(taken, [false, false], true).take(), Next::Wait);
        assert_eq!(queue(taken, [false, false], false).take(), Next::Take(2));
        assert_eq!(
            queue([true, true, false, true], [false, true], true).take(),
            Next::Wait
        );
        // A first proof left comes before any second proof.
        let taken = [true, false, false, false];
        assert_eq!(queue(taken, [true, false], true).take(), Next::Take(1));
        assert_eq!(queue([true; 4], [false, false], true).take(), Next::Done);
    }

    /// A chain's second proof is kept when its two proofs take fewer expansions
    /// than the longest first proof, and only then.
    #[test]
    fn second_proofs_are_kept_where_both_fit_below_the_longest_first() {
        assert_eq!(
            kept_second_proofs(
                &[100, 60, 40, 90, 50],
                &[Some(0), Some(39), Some(61), None, Some(50)]
            ),
            [false, true, false, false, false]
        );
        assert_eq!(kept_second_proofs(&[5], &[Some(0)]), [false]);
        assert!(kept_second_proofs(&[], &[]).is_empty());
    }

    /// The budget gives up exactly where the decision would not keep: never
    /// before the longest first proof is known, and then from the count on
    /// where [`kept_second_proofs`] says no.
    #[test]
    fn the_budget_gives_up_where_the_decision_would_not_keep() {
        let budget = SecondBudget::new(&[40, 100], None);
        assert!(!budget.exceeded(0, 1_000));
        budget.set_longest_first(100);
        assert!(budget.exceeded(1, 0), "the longest chain's own");
        for running in [0, 59, 60, 61] {
            let kept = kept_second_proofs(&[40, 100], &[Some(running), None])[0];
            assert_eq!(budget.exceeded(0, running), !kept, "{running}");
        }
        budget.add(0, 30);
        assert!(budget.exceeded(0, 30) && !budget.exceeded(0, 29));
    }

    #[test]
    fn proofs_parse_and_bad_values_are_named() {
        assert_eq!("auto".parse::<Proofs>().unwrap(), Proofs::Auto);
        assert_eq!("2".parse::<Proofs>().unwrap().max_per_reply(), 2);
        let error = "3".parse::<Proofs>().unwrap_err().to_string();
        assert!(error.contains("1, 2 or auto"), "{error}");
    }

    #[test]
    fn block_counts_are_read_from_their_keys_only() {
        let meta: BTreeMap<String, String> = [
            (expansions_key(3), "17".to_string()),
            (expansions_key(131), "5".to_string()),
            (given_up_key(3), "1".to_string()),
            ("status".to_string(), "building".to_string()),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            block_expansions(&meta),
            [(3, 17), (131, 5)].into_iter().collect()
        );
        let build_keys: Vec<&String> = meta.keys().filter(|k| is_build_key(k)).collect();
        assert_eq!(build_keys.len(), 3);
    }
}
