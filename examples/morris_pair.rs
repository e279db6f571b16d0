//! Benchmark of the Morris pair solver on one big pair, without rebuilding the pairs
//! below it: reads the pairs its captures lead to from a built file, solves the pair
//! again, checks the result equals the stored values, and prints the time.
//!
//!   cargo run --release --example morris_pair -- FILE A B [THREADS]
//!
//! e.g. `morris_pair target/big-builds/morris.tb 6 7` re-solves tables 6-7 and 7-6.

use anyhow::{Context, Result, bail, ensure};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use tb::games::morris::build::{MorrisKernel, as_u8, pair_layer};
use tb::games::morris::solve::solve_pair_counting;
use tb::games::morris::spec::MorrisSpec;
use tb::retro::chunks::load_block;
use tb::retro::{BlockId, Kernel};
use tb::store::Store;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        bail!("usage: morris_pair FILE A B [THREADS]");
    }
    let path = PathBuf::from(&args[0]);
    let (a, b): (u8, u8) = (args[1].parse()?, args[2].parse()?);
    let (a, b) = (a.min(b), a.max(b));
    if let Some(threads) = args.get(3) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.parse()?)
            .build_global()?;
    }
    let store = Store::open_read(&path)?;
    let spec = MorrisSpec::from_meta(&store.meta()?)?;
    let (rules, board) = (spec.rules, spec.board());
    let kernel = MorrisKernel::new(spec);
    let layer = pair_layer(a, b);
    let key = vec![a, b];
    let started = Instant::now();
    let reads = kernel.reads(layer, &key);
    let inputs: Vec<Vec<i8>> = reads
        .iter()
        .map(|id| load_block(&store, kernel.format(), id))
        .collect::<Result<_>>()
        .context("reading the pairs captures lead to")?;
    let load_seconds = started.elapsed().as_secs_f64();
    let lower = |m: u8, o: u8| -> &[u8] {
        let (x, y) = (m.min(o), m.max(o));
        let i = reads.iter().position(|r| r.key == [x, y]).expect("read");
        let start = MorrisSpec::offset_in_pair(board, m, o).expect("table") as usize;
        let len = tb::games::morris::index::table_size(board, m, o).expect("table") as usize;
        &as_u8(&inputs[i])[start..start + len]
    };
    let started = Instant::now();
    let (first, second) = solve_pair_counting(rules, a, b, lower, &AtomicU64::new(0))?;
    let seconds = started.elapsed().as_secs_f64();
    let positions = (first.len() + second.len()) as u64;
    let stored = load_block(&store, kernel.format(), &BlockId { layer, key })?;
    ensure!(
        stored.len() as u64 == positions,
        "stored pair has {} values",
        stored.len()
    );
    let differ = first
        .iter()
        .chain(&second)
        .zip(as_u8(&stored))
        .filter(|(x, y)| x != y)
        .count();
    ensure!(differ == 0, "{differ} values differ from the stored ones");
    println!(
        "pair {a}-{b}: {positions} positions solved in {seconds:.1} s ({:.2} M positions/s; inputs read in {load_seconds:.1} s); peak RSS {:.2} GiB; equal to the stored values",
        positions as f64 / seconds / 1e6,
        tb::sys::peak_rss_bytes().unwrap_or(0) as f64 / (1u64 << 30) as f64
    );
    Ok(())
}
