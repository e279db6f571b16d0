//! A block's values and the chunks the store keeps of it, as the game's
//! [`Format`] says: encoded (stored form, checksum, coding, with the block's
//! histogram and digest) by the builder and the recoder, decoded and restored by
//! every reader of whole blocks.

use super::format::{BlockId, Format};
use crate::store::checksum::checksum_each;
use crate::store::{BlockStats, EncodedChunk, Store, StoredChunk, as_bytes, counts_key};
use anyhow::{Result, bail};
use rayon::prelude::*;
use std::borrow::Cow;

/// Reads a whole block back from the store, decoding its chunks on all cores; each
/// chunk must hold exactly the values the layout gives it.
pub fn load_block(store: &Store, format: &dyn Format, id: &BlockId) -> Result<Vec<i8>> {
    let size = format.block_size(id.layer, &id.key) as usize;
    let chunk_positions = format.chunk_positions() as usize;
    let stored = store.block_chunks(id.layer, &id.key)?;
    let chunks = size.div_ceil(chunk_positions);
    if let Some(missing) = (0..chunks).find(|&c| stored.get(c).is_none_or(|s| s.chunk != c as u64))
    {
        bail!(
            "chunk {missing} of block {} in layer {} is missing from the file",
            counts_key(&id.key),
            id.layer
        );
    }
    if stored.len() != chunks {
        bail!(
            "block {} of layer {} has {} chunks, expected {chunks}",
            counts_key(&id.key),
            id.layer,
            stored.len()
        );
    }
    decode_block(format, id, &stored)
}

/// The values of block `id` from its chunks (all of them, in order; each must hold
/// what the layout gives it), decoded on all cores straight into the block's
/// buffer and restored, the raw values' checksums of `CHECKSUM_LANES` chunks at
/// a time computed together ([`checksum_each`]).
pub fn decode_block(format: &dyn Format, id: &BlockId, chunks: &[StoredChunk]) -> Result<Vec<i8>> {
    let size = format.block_size(id.layer, &id.key) as usize;
    let chunk_positions = format.chunk_positions() as usize;
    debug_assert_eq!(chunks.len(), size.div_ceil(chunk_positions));
    // Big blocks are read at random by the blocks computed from them.
    let mut values = crate::sys::huge_filled(size, 0i8);
    values
        .par_chunks_mut(CHECKSUM_LANES * chunk_positions)
        .zip(chunks.par_chunks(CHECKSUM_LANES))
        .enumerate()
        .try_for_each(|(g, (out, group))| -> Result<()> {
            let first = g * CHECKSUM_LANES * chunk_positions;
            let mut outs: Vec<&mut [i8]> = out.chunks_mut(chunk_positions).collect();
            for (c, (out, chunk)) in outs.iter_mut().zip(group).enumerate() {
                let at = (first + c * chunk_positions) as u64;
                chunk.decode_into_unchecked(out, |len| {
                    format.chunk_contexts(id.layer, &id.key, at, len)
                })?;
            }
            let raw: Vec<&[u8]> = outs.iter().map(|o| as_bytes(o)).collect();
            for ((chunk, sum), out) in group.iter().zip(checksum_each(&raw)).zip(&outs) {
                chunk.check_decoded(sum, out)?;
            }
            for (c, out) in outs.into_iter().enumerate() {
                format.restore(id.layer, &id.key, (first + c * chunk_positions) as u64, out);
            }
            Ok(())
        })?;
    Ok(values)
}

/// The `len` values of a stored chunk of block `id` (its first is `first`),
/// decoded and restored to what the game computed ([`Format::restore`]).
pub fn decode_chunk(
    format: &dyn Format,
    id: &BlockId,
    first: u64,
    len: usize,
    chunk: &StoredChunk,
) -> Result<Vec<i8>> {
    let contexts = |len| format.chunk_contexts(id.layer, &id.key, first, len);
    let mut values = chunk.decode(len, contexts)?;
    format.restore(id.layer, &id.key, first, &mut values);
    Ok(values)
}

/// The histogram and digest of `values`, the values of block `id` from index
/// `first` on (what the builder stores with a block and the audit recomputes).
pub fn chunk_stats(format: &dyn Format, id: &BlockId, first: u64, values: &[i8]) -> BlockStats {
    // Four tables in turn: runs of equal values would otherwise wait on one
    // counter's previous increment.
    let mut tables = [[0u64; 256]; 4];
    let mut quads = values.chunks_exact(4);
    for quad in &mut quads {
        for (table, &v) in tables.iter_mut().zip(quad) {
            table[v as u8 as usize] += 1;
        }
    }
    for &v in quads.remainder() {
        tables[0][v as u8 as usize] += 1;
    }
    let count = |b: usize| tables.iter().map(|t| t[b]).sum::<u64>();
    BlockStats {
        positions: values.len() as u64,
        histogram: (0..256)
            .filter(|&b| count(b) > 0)
            .map(|b| (b as u8 as i8, count(b)))
            .collect(),
        digest: format.digest(id.layer, &id.key, first, values),
        ..BlockStats::default()
    }
}

/// Chunks whose raw-value checksums are computed together (see [`checksum_each`]).
const CHECKSUM_LANES: usize = 4;

/// Compresses a block's chunks in parallel and gathers its histogram and digest:
/// `values` are the block's from index `first` on (a multiple of the chunk size).
pub(crate) fn encode_block(
    format: &dyn Format,
    block: &BlockId,
    first: u64,
    values: &[i8],
) -> Result<(Vec<EncodedChunk>, BlockStats)> {
    let chunk_positions = format.chunk_positions() as usize;
    debug_assert_eq!(first % chunk_positions as u64, 0);
    let parts: Vec<Vec<(EncodedChunk, BlockStats)>> = values
        .par_chunks(CHECKSUM_LANES * chunk_positions)
        .enumerate()
        .map(|(g, group)| {
            let first_of = |k: usize| first + ((g * CHECKSUM_LANES + k) * chunk_positions) as u64;
            let raws: Vec<&[i8]> = group.chunks(chunk_positions).collect();
            let stored: Vec<Cow<[i8]>> = (raws.iter().enumerate())
                .map(|(k, raw)| format.stored_form(block.layer, &block.key, first_of(k), raw))
                .collect();
            let sums = checksum_each(&stored.iter().map(|s| as_bytes(s)).collect::<Vec<_>>());
            (raws.iter().zip(&stored).zip(sums).enumerate())
                .map(|(k, ((raw, stored), sum))| {
                    let first = first_of(k);
                    let stats = chunk_stats(format, block, first, raw);
                    let contexts =
                        || format.chunk_contexts(block.layer, &block.key, first, raw.len());
                    let chunk = EncodedChunk::encode_with_checksum(
                        stored,
                        sum,
                        format.chunk_coding(),
                        contexts,
                    )?;
                    Ok((chunk, stats))
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;
    let parts: Vec<(EncodedChunk, BlockStats)> = parts.into_iter().flatten().collect();
    let mut stats = BlockStats::default();
    let mut chunks = Vec::with_capacity(parts.len());
    for (chunk, part) in parts {
        stats.bytes += chunk.data.len() as u64;
        stats.merge(&part);
        chunks.push(chunk);
    }
    Ok((chunks, stats))
}
