//! Forced-win searches on helper threads, for the prover's expansions: the
//! positions of one expansion are shared out one at a time between the prover's
//! thread and the helpers, all searching with one table of inner positions.
//!
//! An expansion's searches take some 100-200 us in all, less than waking a
//! sleeping thread: a helper spins for the next batch a while before it sleeps,
//! and the prover's thread never waits for a helper to start (a batch is done
//! when its positions are, whoever searched them), only for one to finish the
//! position it took.

use super::geometry::Cells;
use super::threats::ForcedSearch;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most positions in a batch (a position has at most 64 children).
const MOST: usize = 64;

/// How long an idle helper spins for the next batch before it sleeps.
const SPIN: Duration = Duration::from_micros(300);

/// The batch in flight, written by the prover's thread and read by the helpers.
/// `next` holds the batch's number (high 32 bits) and the next position to take
/// (low 32 bits): a helper that takes a position past the batch's end takes
/// nothing, whatever batch it thought it was in.
struct Batch {
    next: AtomicU64,
    len: AtomicU64,
    /// The positions, two words each.
    positions: Vec<AtomicU64>,
    /// Each position's answer: 0 not yet, 1 no win, `2 + cell` a win.
    answers: Vec<AtomicU64>,
    /// Positions searched in this batch.
    done: AtomicU64,
    /// Helpers sleeping (to be woken by the next batch).
    sleeping: AtomicU64,
    stop: AtomicBool,
}

/// The helper threads and the batch they share.
pub struct ForcedHelpers {
    batch: Arc<Batch>,
    threads: Vec<JoinHandle<()>>,
}

impl ForcedHelpers {
    /// `count` helper threads searching with searches sharing `search`'s table.
    pub fn new(search: &ForcedSearch, count: usize) -> std::io::Result<ForcedHelpers> {
        let batch = Arc::new(Batch {
            next: AtomicU64::new(u64::from(u32::MAX)),
            len: AtomicU64::new(0),
            positions: (0..2 * MOST).map(|_| AtomicU64::new(0)).collect(),
            answers: (0..MOST).map(|_| AtomicU64::new(0)).collect(),
            done: AtomicU64::new(0),
            sleeping: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let mut threads = Vec::with_capacity(count);
        for i in 0..count {
            let batch = Arc::clone(&batch);
            let search = search.sharing();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("qubic-forced-{i}"))
                    .spawn(move || helper(&batch, search))?,
            );
        }
        Ok(ForcedHelpers { batch, threads })
    }

    /// X's forced wins (the answer of [`ForcedSearch::win`]) from each of
    /// `positions` (at most 64), searched by `own` (the prover's search) and the
    /// helpers together, in the positions' order.
    pub fn search(
        &mut self,
        own: &mut ForcedSearch,
        positions: &[(Cells, Cells)],
    ) -> Vec<Option<usize>> {
        assert!(positions.len() <= MOST);
        let b = &*self.batch;
        for (i, &(me, you)) in positions.iter().enumerate() {
            b.positions[2 * i].store(me, Ordering::Relaxed);
            b.positions[2 * i + 1].store(you, Ordering::Relaxed);
            b.answers[i].store(0, Ordering::Relaxed);
        }
        b.len.store(positions.len() as u64, Ordering::Relaxed);
        b.done.store(0, Ordering::Relaxed);
        // Publishes the positions (a helper reads them after taking an index)
        // as the next batch.
        let number = (b.next.load(Ordering::Relaxed) >> 32) + 1;
        b.next.store(number << 32, Ordering::SeqCst);
        if b.sleeping.load(Ordering::SeqCst) > 0 {
            for t in &self.threads {
                t.thread().unpark();
            }
        }
        while take_and_search(b, own) {}
        // Positions a helper took: wait until it has searched them.
        while b.done.load(Ordering::Acquire) < positions.len() as u64 {
            std::hint::spin_loop();
        }
        (0..positions.len())
            .map(|i| {
                let a = b.answers[i].load(Ordering::Relaxed);
                debug_assert!(a != 0);
                (a >= 2).then(|| (a - 2) as usize)
            })
            .collect()
    }
}

impl Drop for ForcedHelpers {
    fn drop(&mut self) {
        self.batch.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Takes the next position of the batch in flight and searches it; `false` when
/// none is left. (A helper late from an earlier batch takes from the batch in
/// flight: it reads the positions after taking, and the prover writes the next
/// batch's only once every position of this one is searched.)
fn take_and_search(b: &Batch, search: &mut ForcedSearch) -> bool {
    let taken = b.next.fetch_add(1, Ordering::AcqRel);
    let i = (taken & u64::from(u32::MAX)) as usize;
    if i as u64 >= b.len.load(Ordering::Relaxed) {
        return false;
    }
    let me = b.positions[2 * i].load(Ordering::Relaxed);
    let you = b.positions[2 * i + 1].load(Ordering::Relaxed);
    let answer = search.win_uncached(me, you);
    b.answers[i].store(answer.map_or(1, |c| c as u64 + 2), Ordering::Relaxed);
    b.done.fetch_add(1, Ordering::Release);
    true
}

/// A helper's life: waits for a batch (spinning, then sleeping), takes and
/// searches its positions while there are any, until told to stop.
fn helper(b: &Batch, mut search: ForcedSearch) {
    let mut seen = 0;
    let mut idle_since = Instant::now();
    loop {
        if b.stop.load(Ordering::Relaxed) {
            return;
        }
        let number = b.next.load(Ordering::Acquire) >> 32;
        if number != seen {
            seen = number;
            while take_and_search(b, &mut search) {}
            idle_since = Instant::now();
        } else if idle_since.elapsed() < SPIN {
            std::hint::spin_loop();
        } else {
            b.sleeping.fetch_add(1, Ordering::SeqCst);
            // Checked again after saying so: a batch published in between
            // is not slept through (the prover wakes sleepers after publishing).
            if b.next.load(Ordering::SeqCst) >> 32 == seen && !b.stop.load(Ordering::SeqCst) {
                std::thread::park_timeout(Duration::from_millis(50));
            }
            b.sleeping.fetch_sub(1, Ordering::SeqCst);
            idle_since = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::qubic::geometry::random_positions;

    /// Batches of every size, searched by the prover's search and three
    /// helpers sharing its table (more threads than the test machine's cores,
    /// so they are interrupted mid-search), answer as a search of its own on
    /// one thread; the table cleared half-way, as a thinning does.
    #[test]
    fn batches_answer_as_one_thread_does() {
        let positions = random_positions(4_000, 0x7e1f_e25e_a2c4_0b11);
        let mut own = ForcedSearch::new();
        let mut helpers = ForcedHelpers::new(&own, 3).unwrap();
        let mut alone = ForcedSearch::new();
        let (mut start, mut size, mut wins) = (0, 1, 0);
        while start < positions.len() {
            let batch = &positions[start..(start + size).min(positions.len())];
            let answers = helpers.search(&mut own, batch);
            for (&(x, o), answer) in batch.iter().zip(answers) {
                assert_eq!(answer, alone.win(x, o), "{x:#x} {o:#x}");
                wins += usize::from(answer.is_some());
            }
            if start < positions.len() / 2 && start + size >= positions.len() / 2 {
                own.clear();
            }
            start += size;
            size = size % MOST + 1;
        }
        assert!(wins > 100, "{wins} wins: the positions test little");
        assert!(own.nodes < alone.nodes, "the helpers searched nothing");
    }
}
