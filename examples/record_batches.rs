//! Benchmark of a distributed build's coordinator: how long recording its blocks
//! takes, one transaction a block against batches of N blocks
//! (`Coordinator::record_many`). Every block task runs first, in this process, so
//! that only the recording is timed.
//!
//!   cargo run --release --example record_batches -- LOCAL.tb BATCH...
//!
//! `LOCAL.tb`: a local build of the game (its identity names the game and the
//! build's options), e.g. `tb build 3x4 --book-lines 4 --db 3x4.tb`; each BATCH is
//! a batch size to time (1: a transaction a block). Prints, per batch size, the
//! blocks, the seconds and the milliseconds a block.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::time::Instant;
use tb::retro::BlockId;
use tb::retro::distributed::{Coordinator, run_block};
use tb::retro::shard::ShardDir;
use tb::store::Store;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        bail!("usage: record_batches LOCAL.tb BATCH...");
    }
    let local = PathBuf::from(&args[0]);
    let kernel = tb::games::kernel_of_identity(&Store::meta_of(&local)?)?;
    let sizes: Vec<usize> = args[1..]
        .iter()
        .map(|a| a.parse().context("a batch size is a number"))
        .collect::<Result<_>>()?;
    for size in sizes {
        let dir = tempfile::tempdir()?;
        let (db, shared) = (dir.path().join("d.tb"), dir.path().join("shared"));
        let shards = ShardDir::new(&shared, kernel.format());
        let mut coordinator = Coordinator::open(&db, kernel, &shared)?;
        let blocks: Vec<BlockId> = coordinator
            .tasks()
            .into_iter()
            .map(|t| BlockId {
                layer: t.layer,
                key: t.key,
            })
            .collect();
        for id in &blocks {
            run_block(kernel, &shards, id)?;
        }
        let started = Instant::now();
        for batch in blocks.chunks(size.max(1)) {
            coordinator.record_many(batch)?;
        }
        let seconds = started.elapsed().as_secs_f64();
        coordinator.finish()?;
        println!(
            "batch {size:>6}: {} blocks recorded in {seconds:.3} s, {:.3} ms a block",
            blocks.len(),
            seconds * 1e3 / blocks.len() as f64
        );
    }
    Ok(())
}
