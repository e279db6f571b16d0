//! How a chunk's value bytes are stored. Every chunk says its own coding by its first
//! byte, so a file may mix codings and old files (plain zstd frames) stay readable:
//!
//! * `0x28` (the first byte of the zstd magic number): a zstd frame of the values;
//! * [`TAG_MIX`]: the context-mixing coder ([`super::cm`]); its neighbours per
//!   position are the game's, computed again when the chunk is read (so a game's
//!   neighbour rule is part of its file format);
//! * [`TAG_CONSTANT`]: one byte, the value of every position of the chunk.
//!
//! Decoding is bounded by the expected length: no chunk can make a reader allocate
//! more than the values it asked for.

use super::cm;
use anyhow::{Context, Result, bail};

/// How a game wants its chunks coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkCoding {
    /// zstd at this level (fast; what Dots-and-Boxes uses).
    Zstd(i32),
    /// The context-mixing coder, with the game's neighbours.
    Mix,
}

pub use super::cm::Neighbours;

const ZSTD_FIRST_BYTE: u8 = 0x28;
/// First byte of a context-mixing chunk.
pub const TAG_MIX: u8 = 0x01;
/// First byte of a chunk whose values are all equal.
pub const TAG_CONSTANT: u8 = 0x02;

/// Codes one chunk's values; `neighbours` (one per value) are asked for only by
/// [`ChunkCoding::Mix`].
pub fn encode(
    values: &[u8],
    coding: ChunkCoding,
    neighbours: impl FnOnce() -> Vec<Neighbours>,
) -> Result<Vec<u8>> {
    match coding {
        ChunkCoding::Zstd(level) => {
            zstd::bulk::compress(values, level).context("zstd compression failed")
        }
        ChunkCoding::Mix if !values.is_empty() && values.iter().all(|&v| v == values[0]) => {
            Ok(vec![TAG_CONSTANT, values[0]])
        }
        ChunkCoding::Mix => {
            let mut out = vec![TAG_MIX];
            out.extend(cm::encode(values, &neighbours()));
            Ok(out)
        }
    }
}

/// Decodes a chunk of `len` values (any coding); `neighbours` are asked for only
/// by a context-mixing chunk. The result has exactly `len` values or is an error.
pub fn decode(
    data: &[u8],
    len: usize,
    neighbours: impl FnOnce() -> Vec<Neighbours>,
) -> Result<Vec<u8>> {
    let values = match data.first() {
        Some(&ZSTD_FIRST_BYTE) => {
            zstd::bulk::decompress(data, len).context("zstd frame does not decode")?
        }
        Some(&TAG_CONSTANT) if data.len() == 2 => vec![data[1]; len],
        Some(&TAG_MIX) => cm::decode(&data[1..], len, &neighbours()),
        Some(tag) => bail!("unknown chunk coding {tag:#04x}"),
        None => bail!("empty chunk"),
    };
    if values.len() != len {
        bail!("decoded {} values, expected {len}", values.len());
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Vec<Neighbours> {
        Vec::new()
    }

    #[test]
    fn every_coding_round_trips() {
        let values: Vec<u8> = (0..70_000u32).map(|i| (i % 300 / 20) as u8).collect();
        let rows = || vec![[300, 600, 1, 2]; 70_000];
        for coding in [ChunkCoding::Zstd(3), ChunkCoding::Mix] {
            let data = encode(&values, coding, rows).unwrap();
            assert_eq!(
                decode(&data, values.len(), rows).unwrap(),
                values,
                "{coding:?}"
            );
        }
        let constant = encode(&[9; 100], ChunkCoding::Mix, none).unwrap();
        assert_eq!(constant, [TAG_CONSTANT, 9]);
        assert_eq!(decode(&constant, 100, none).unwrap(), [9; 100]);
    }

    #[test]
    fn bad_chunks_are_errors() {
        assert!(decode(&[], 3, none).is_err());
        assert!(decode(&[0x77, 1, 2], 3, none).is_err());
        assert!(decode(&[TAG_CONSTANT, 1, 2], 3, none).is_err());
        // A context-mixing chunk cut short decodes to the asked length (wrong
        // values, which the chunk checksum rejects).
        assert_eq!(decode(&[TAG_MIX], 3, none).unwrap().len(), 3);
        // A zstd frame of more values than asked for is refused, not allocated.
        let big = zstd::bulk::compress(&vec![0u8; 1 << 20], 3).unwrap();
        assert!(decode(&big, 10, none).is_err());
    }
}
