//! Benchmark of the chunk codings on a built Morris pair: bits/position and
//! throughput of zstd level 3 and of context mixing, every chunk decoded and
//! compared.
//!
//!   cargo run --release --example chunk_coding -- FILE A B [CHUNKS]
//!
//! CHUNKS (default: all) samples that many chunks evenly over the pair; the
//! environment variable CHUNK=N sets the chunk size (default: the file's).

use anyhow::{Result, bail, ensure};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;
use tb::games::morris::build::pair_layer;
use tb::games::morris::spec::{MorrisFormat, MorrisSpec};
use tb::retro::chunks::load_block;
use tb::retro::{BlockId, Format};
use tb::store::codec::{self, ChunkCoding};
use tb::store::{Store, as_bytes};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        bail!("usage: chunk_coding FILE A B [CHUNKS]");
    }
    let path = PathBuf::from(&args[0]);
    let (a, b): (u8, u8) = (args[1].parse()?, args[2].parse()?);
    let (a, b) = (a.min(b), a.max(b));
    let store = Store::open_read(&path)?;
    let spec = MorrisSpec::from_meta(&store.meta()?)?;
    let format = MorrisFormat::new(spec.clone());
    let (layer, key) = (pair_layer(a, b), vec![a, b]);
    let values = load_block(
        &store,
        &format,
        &BlockId {
            layer,
            key: key.clone(),
        },
    )?;
    let bytes = as_bytes(&values);
    // CHUNK=N codes chunks of N positions instead of the file's (what smaller
    // chunks would cost in size, and gain in decoding time per chunk).
    let cp = match std::env::var("CHUNK") {
        Ok(n) => n.parse()?,
        Err(_) => spec.chunk_positions as usize,
    };
    let chunks = bytes.len().div_ceil(cp);
    let wanted: usize = args
        .get(3)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(chunks);
    let step = (chunks / wanted.max(1)).max(1);
    let picks: Vec<usize> = (0..chunks).step_by(step).collect();
    let positions: usize = picks.iter().map(|&c| cp.min(bytes.len() - c * cp)).sum();
    println!(
        "pair {a}-{b}: {positions} of {} positions, {} chunks, {} threads",
        bytes.len(),
        picks.len(),
        rayon::current_num_threads()
    );
    if let Ok(dump) = std::env::var("DUMP") {
        // The sampled chunks' raw values, for offline analysis.
        let raw: Vec<u8> = picks
            .iter()
            .flat_map(|&c| {
                bytes[c * cp..((c + 1) * cp).min(bytes.len())]
                    .iter()
                    .copied()
            })
            .collect();
        std::fs::write(dump, raw)?;
    }
    // Build the table indices before timing (probes and builds have them already).
    let started = Instant::now();
    let all: usize = picks
        .par_iter()
        .map(|&c| {
            format
                .chunk_contexts(layer, &key, (c * cp) as u64, cp.min(bytes.len() - c * cp))
                .neighbours
                .len()
        })
        .sum();
    println!(
        "  neighbours of {all} positions: {:.3} s (table indices built on first use)",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    picks.par_iter().for_each(|&c| {
        format.chunk_contexts(layer, &key, (c * cp) as u64, cp.min(bytes.len() - c * cp));
    });
    println!(
        "  neighbours again: {:.1} M positions/s",
        positions as f64 / started.elapsed().as_secs_f64() / 1e6
    );
    for name in ["zstd3", "mix"] {
        let coding = match name {
            "zstd3" => ChunkCoding::Zstd(3),
            _ => format.chunk_coding(),
        };
        let range = |c: usize| c * cp..((c + 1) * cp).min(bytes.len());
        let neighbours =
            |c: usize| format.chunk_contexts(layer, &key, (c * cp) as u64, range(c).len());
        let started = Instant::now();
        let coded: Vec<Vec<u8>> = picks
            .par_iter()
            .map(|&c| codec::encode(&bytes[range(c)], coding, || neighbours(c)))
            .collect::<Result<_>>()?;
        let encode_s = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let ok = picks.par_iter().zip(&coded).all(|(&c, data)| {
            let raw = &bytes[range(c)];
            codec::decode(data, raw.len(), || neighbours(c)).is_ok_and(|v| v == raw)
        });
        let decode_s = started.elapsed().as_secs_f64();
        ensure!(ok, "{name}: a chunk did not decode to its values");
        let total: usize = coded.iter().map(Vec::len).sum();
        println!(
            "  {name:6} {:.3} bits/position; encode {:.1} M positions/s, decode {:.1} M/s",
            8.0 * total as f64 / positions as f64,
            positions as f64 / encode_s / 1e6,
            positions as f64 / decode_s / 1e6
        );
    }
    Ok(())
}
