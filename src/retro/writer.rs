//! The store written on a thread of its own: a block's chunks go into SQLite while
//! the next block is computed, so no core waits on the write. Writes keep their
//! order (a killed build still resumes after the last committed block), and any
//! other use of the store first waits for the writes queued before it.

use crate::store::{BlockStats, EncodedChunk, LayerFinish, Store};
use anyhow::{Result, anyhow};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::Scope;
use std::time::Instant;

/// One block's write: its chunks and statistics, the blocks deleted in the same
/// transaction, and the layer it publishes, if it is the layer's last block.
pub struct BlockWrite {
    /// The block's layer.
    pub layer: usize,
    /// The block's key.
    pub key: Vec<u8>,
    /// Its encoded chunks, in order.
    pub chunks: Vec<EncodedChunk>,
    /// Its statistics.
    pub stats: BlockStats,
    /// Blocks (layer, key) no later block reads.
    pub drops: Vec<(usize, String)>,
    /// The layer's publication, with the last block.
    pub finish: Option<LayerFinish>,
}

/// The store behind a writer thread, with at most one block write in flight.
pub struct BlockWriter<'s> {
    store: &'s Mutex<&'s mut Store>,
    jobs: SyncSender<BlockWrite>,
    written: Receiver<(Result<u64>, f64)>,
    in_flight: usize,
    peak_disk_bytes: u64,
    /// Seconds the writer thread spent writing, summed over the blocks received.
    write_seconds: f64,
    /// Seconds the caller waited for writes.
    wait_seconds: f64,
}

impl<'s> BlockWriter<'s> {
    /// Starts the writer thread in `scope`; `peak_disk_bytes` is the largest file
    /// size seen so far (by earlier runs).
    pub fn start<'scope>(
        scope: &'scope Scope<'scope, '_>,
        store: &'s Mutex<&'s mut Store>,
        peak_disk_bytes: u64,
    ) -> BlockWriter<'s>
    where
        's: 'scope,
    {
        // One queued job besides the one being written: `write` waits for the
        // previous write anyway, so memory holds at most two blocks' chunks.
        let (jobs, queue) = sync_channel::<BlockWrite>(1);
        let (done, written) = sync_channel::<(Result<u64>, f64)>(1);
        scope.spawn(move || {
            for job in queue {
                let started = Instant::now();
                let mut store = lock(store);
                let result = store
                    .write_block(
                        job.layer,
                        &job.key,
                        &job.chunks,
                        &job.stats,
                        &job.drops,
                        job.finish.as_ref(),
                    )
                    .and_then(|()| store.disk_bytes());
                drop(store);
                if done
                    .send((result, started.elapsed().as_secs_f64()))
                    .is_err()
                {
                    break; // the scheduler stopped
                }
            }
        });
        BlockWriter {
            store,
            jobs,
            written,
            in_flight: 0,
            peak_disk_bytes,
            write_seconds: 0.0,
            wait_seconds: 0.0,
        }
    }

    /// Queues a block's write once the previous one is committed (its error, if
    /// any, is returned here).
    pub fn write(&mut self, job: BlockWrite) -> Result<()> {
        self.wait()?;
        self.jobs
            .send(job)
            .map_err(|_| anyhow!("the block writer thread stopped"))?;
        self.in_flight += 1;
        Ok(())
    }

    /// The store, once every queued write is committed.
    pub fn store(&mut self) -> Result<MutexGuard<'_, &'s mut Store>> {
        self.wait()?;
        Ok(lock(self.store))
    }

    /// The largest file size (database plus write-ahead log) after any write.
    pub fn peak_disk_bytes(&mut self) -> Result<u64> {
        self.wait()?;
        Ok(self.peak_disk_bytes)
    }

    /// Seconds spent writing (on the writer thread) and waiting for writes (on the
    /// caller's), once every queued write is committed.
    pub fn seconds(&mut self) -> Result<(f64, f64)> {
        self.wait()?;
        Ok((self.write_seconds, self.wait_seconds))
    }

    /// Waits for the writes in flight.
    fn wait(&mut self) -> Result<()> {
        let started = Instant::now();
        while self.in_flight > 0 {
            let (written, seconds) = self
                .written
                .recv()
                .map_err(|_| anyhow!("the block writer thread stopped"))?;
            self.in_flight -= 1;
            self.write_seconds += seconds;
            self.peak_disk_bytes = self.peak_disk_bytes.max(written?);
        }
        self.wait_seconds += started.elapsed().as_secs_f64();
        Ok(())
    }
}

/// The store, whoever panicked while holding it last (a panic ends the build anyway).
fn lock<'a, 's>(store: &'a Mutex<&'s mut Store>) -> MutexGuard<'a, &'s mut Store> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
}
