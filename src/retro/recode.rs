//! Recoding a finished tablebase file into chunks of another size (game-generic):
//! every stored block is decoded, checked against its row (histogram and digest)
//! and coded again as the target format says (its chunk size, coding and
//! neighbours); layer and block rows and metadata are carried over. Smaller chunks
//! make a cold probe decode less, larger ones compress better: a file built with
//! one size can be served with another without building it again.
//!
//! The new file is written as `<out>.partial`, one block per transaction, and
//! renamed to `<out>` when whole: a killed recode resumes with the blocks not yet
//! written.

use super::audit::{check_finished, prepare_read};
use super::build::BuildLock;
use super::chunks::{decode_chunk, encode_block};
use super::format::{BlockId, Format};
use super::progress::Progress;
use crate::store::{
    BlockStats, LayerFinish, LayerRow, Store, chunk_len, counts_key, readable_layers,
};
use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Old chunks decoded at a time (their values are in memory together).
const DECODE_BATCH_VALUES: u64 = 1 << 24;

/// What a recode did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecodeSummary {
    /// Positions in the blocks that hold values.
    pub positions: u64,
    /// Blocks recoded (those with values), resumed ones included.
    pub blocks: u64,
    /// Blocks a previous, interrupted run had already written.
    pub resumed_blocks: u64,
    /// Positions per chunk before and after.
    pub chunk_positions_before: u64,
    /// Positions per chunk after.
    pub chunk_positions_after: u64,
    /// Coded bytes of the value chunks before.
    pub bytes_before: u64,
    /// Coded bytes of the value chunks after.
    pub bytes_after: u64,
    /// Wall seconds of this run.
    pub seconds: f64,
}

impl RecodeSummary {
    /// The summary line.
    pub fn text(&self) -> String {
        let bits = |bytes: u64| 8.0 * bytes as f64 / self.positions.max(1) as f64;
        format!(
            "recoded {} positions in {} blocks ({} resumed) from chunks of {} to {}: {:.3} -> {:.3} bits/position in {:.1} s",
            self.positions,
            self.blocks,
            self.resumed_blocks,
            self.chunk_positions_before,
            self.chunk_positions_after,
            bits(self.bytes_before),
            bits(self.bytes_after),
            self.seconds
        )
    }
}

/// `<out>.partial`, where a recode writes until the file is whole.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Recodes the finished file `from` (holding `source`'s tablebase) into `out`
/// with `target`'s chunking (the same game and positions: only chunk size and
/// coding may differ). `out` must not exist; an interrupted run's
/// `<out>.partial` is resumed.
pub fn recode(
    source: &dyn Format,
    target: &dyn Format,
    from: &Path,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<RecodeSummary> {
    let started = Instant::now();
    ensure!(
        source.layers() == target.layers(),
        "the target's layers differ from the source's"
    );
    crate::store::check_file_path(out)?;
    if out.exists() {
        bail!("{} exists already: recode writes a new file", out.display());
    }
    let mut input = Store::open_read(from)?;
    let in_file = |e: anyhow::Error| e.context(from.display().to_string());
    let layers = prepare_read(&mut input, source).map_err(in_file)?;
    check_finished(&layers, source).map_err(in_file)?;
    let meta = input.meta().map_err(in_file)?;

    let partial = partial_path(out);
    let _lock = BuildLock::acquire(&partial)?;
    let mut output = Store::open_for_build(&partial, target.chunk_positions())?;
    let identity = target.identity();
    let old_meta = output.meta()?;
    if !old_meta.contains_key("game") {
        // A new file: the source's metadata with the target's identity.
        let mut rows: Vec<(&str, String)> = meta
            .iter()
            .filter(|(k, _)| {
                k.as_str() != crate::store::CHUNK_CHECKSUM_KEY
                    && !identity.iter().any(|(key, _)| key == k)
            })
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        rows.extend(identity.iter().map(|(k, v)| (*k, v.clone())));
        output.set_meta(&rows)?;
    } else {
        for (key, value) in &identity {
            ensure!(
                old_meta.get(*key) == Some(value),
                "{} is another recode's work (its `{key}` differs); delete it to start over",
                partial.display()
            );
        }
    }

    let readable: Vec<usize> = readable_layers(&layers).collect();
    let total: u64 = readable.iter().map(|&n| source.layer_size(n)).sum();
    let mut summary = RecodeSummary {
        positions: total,
        blocks: 0,
        resumed_blocks: 0,
        chunk_positions_before: source.chunk_positions(),
        chunk_positions_after: target.chunk_positions(),
        bytes_before: 0,
        bytes_after: 0,
        seconds: 0.0,
    };
    let mut done_positions = 0;
    let written: BTreeMap<usize, BTreeMap<String, BlockStats>> = layers
        .keys()
        .map(|&n| Ok((n, output.finished_blocks(n)?)))
        .collect::<Result<_>>()?;
    for (n, blocks) in &written {
        if readable.contains(n) {
            done_positions += blocks.values().map(|b| b.positions).sum::<u64>();
        }
    }
    progress.start(total, done_positions);

    for (&n, row) in &layers {
        let rows = input.finished_blocks(n).map_err(in_file)?;
        let is_readable = readable.contains(&n);
        let label = source.layer_label(n);
        let mut totals = BlockStats::default();
        if is_readable {
            let positions = source.layer_size(n);
            let done = written[&n].values().map(|b| b.positions).sum();
            progress.start_layer(&label, positions, done);
        }
        // A readable layer: every block of the layout (each must have its row); a
        // pruned one: the rows it has.
        let keys: Vec<String> = if is_readable {
            source.blocks(n).iter().map(|k| counts_key(k)).collect()
        } else {
            rows.keys().cloned().collect()
        };
        for key_text in &keys {
            let old = rows
                .get(key_text)
                .with_context(|| format!("block {key_text} of {label} has no row"))
                .map_err(in_file)?;
            summary.bytes_before += if is_readable { old.bytes } else { 0 };
            if let Some(stats) = written[&n].get(key_text) {
                totals.merge(stats);
                summary.blocks += u64::from(is_readable);
                summary.resumed_blocks += u64::from(is_readable);
                continue;
            }
            let key = parse_key(key_text).map_err(in_file)?;
            let stats = if is_readable {
                let stats = recode_block(source, target, &input, &mut output, n, &key, old)
                    .with_context(|| format!("block {key_text} of {label}"))
                    .map_err(in_file)?;
                summary.blocks += 1;
                progress.advance(stats.positions);
                stats
            } else {
                // A pruned layer keeps its block rows (their chunks are gone).
                let chunks = old.positions.div_ceil(target.chunk_positions());
                output.write_block_row(n, &key, chunks, old)?;
                old.clone()
            };
            totals.merge(&stats);
        }
        let stats = layer_stats(row, &totals, is_readable).map_err(in_file)?;
        output.finish_layer(
            n,
            &LayerFinish {
                status: row.status,
                stats,
                prune: Vec::new(),
            },
        )?;
        if is_readable {
            progress.finish_layer(&label, &totals);
        }
        summary.bytes_after += if is_readable { totals.bytes } else { 0 };
    }
    drop(output);
    std::fs::rename(&partial, out)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), out.display()))?;
    // The partial file's lock has nothing left to guard (held until the return).
    let _ = std::fs::remove_file(super::build::lock_path(&partial));
    summary.seconds = started.elapsed().as_secs_f64();
    progress.finish(&summary.text());
    Ok(summary)
}

/// Decodes one block of the source in batches of old chunks, checks its values
/// against the block's row, and writes it coded for the target.
fn recode_block(
    source: &dyn Format,
    target: &dyn Format,
    input: &Store,
    output: &mut Store,
    n: usize,
    key: &[u8],
    old: &BlockStats,
) -> Result<BlockStats> {
    let size = source.block_size(n, key);
    ensure!(
        size == old.positions,
        "the row says {} positions, the layout {size}",
        old.positions
    );
    let (old_chunk, new_chunk) = (source.chunk_positions(), target.chunk_positions());
    let id = BlockId {
        layer: n,
        key: key.to_vec(),
    };
    let batch_chunks = (DECODE_BATCH_VALUES / old_chunk).max(1);
    let mut pending: Vec<i8> = Vec::new();
    // Block index of `pending[0]` (a multiple of the new chunk size).
    let mut pending_first = 0u64;
    let mut chunks = Vec::new();
    let mut stats = BlockStats::default();
    let old_chunks = size.div_ceil(old_chunk);
    let mut next = 0u64;
    while next < old_chunks {
        let upto = (next + batch_chunks).min(old_chunks);
        let stored = (next..upto)
            .map(|c| input.stored_chunk(n, key, c))
            .collect::<Result<Vec<_>>>()?;
        let decoded = stored
            .par_iter()
            .map(|chunk| {
                let first = chunk.chunk * old_chunk;
                let len = chunk_len(size, old_chunk, chunk.chunk);
                decode_chunk(source, &id, first, len, chunk)
            })
            .collect::<Result<Vec<_>>>()?;
        for values in decoded {
            pending.extend_from_slice(&values);
        }
        next = upto;
        // Code the whole new chunks gathered (all that is left at the end).
        let whole = if next == old_chunks {
            pending.len()
        } else {
            pending.len() / new_chunk as usize * new_chunk as usize
        };
        let (coded, part) = encode_block(target, &id, pending_first, &pending[..whole])?;
        chunks.extend(coded);
        stats.merge(&part);
        pending.drain(..whole);
        pending_first += whole as u64;
    }
    ensure!(
        stats.histogram == old.histogram && stats.digest == old.digest,
        "the values decoded do not match the block's histogram and digest"
    );
    stats.seconds = old.seconds;
    output.write_block(n, key, &chunks, &stats, &[], None)?;
    Ok(stats)
}

/// The layer row to write: the source's, with the new coded bytes for a layer
/// whose values are stored.
fn layer_stats(row: &LayerRow, blocks: &BlockStats, readable: bool) -> Result<BlockStats> {
    let digest = match &row.digest {
        Some(hex) => u64::from_str_radix(hex, 16).context("bad layer digest")?,
        None => 0,
    };
    Ok(BlockStats {
        positions: row.positions,
        bytes: if readable { blocks.bytes } else { row.bytes },
        seconds: row.seconds,
        histogram: row.histogram.clone(),
        digest,
    })
}

/// A block key from its text (`4.3.3`).
fn parse_key(text: &str) -> Result<Vec<u8>> {
    let key = if text.is_empty() {
        Vec::new()
    } else {
        text.split('.')
            .map(|part| part.parse::<u8>())
            .collect::<Result<Vec<u8>, _>>()
            .with_context(|| format!("bad block key {text:?}"))?
    };
    ensure!(counts_key(&key) == text, "bad block key {text:?}");
    Ok(key)
}
