//! How a chunk's value bytes are stored. Every chunk says its own coding by its first
//! byte, so a file may mix codings and old files (plain zstd frames) stay readable:
//!
//! * `0x28` (the first byte of the zstd magic number): a zstd frame of the values;
//! * [`TAG_MIX`]: the context-mixing coder (`store::cm`); its neighbours per
//!   position are the game's, computed again when the chunk is read (so a game's
//!   neighbour rule is part of its file format);
//! * [`TAG_MIX_CHECKED`]: the same, after 8 bytes holding the checksum of the coded
//!   bytes that follow (keyed with the chunk's place when the store writes it).
//!   The decoder works value by value, so a reader that needs only the values up
//!   to some index can stop there: the chunk's checksum of raw values needs all of
//!   them, this one only the coded bytes. It is what [`encode`] writes for
//!   [`ChunkCoding::Mix`];
//! * [`TAG_CONSTANT`]: one byte, the value of every position of the chunk;
//! * [`TAG_ARCHIVE`]: the archival coder (`store::archive`), after the same
//!   8-byte checksum of its coded bytes as [`TAG_MIX_CHECKED`]; its sites per
//!   position are the game's, computed again when the chunk is read. What
//!   [`encode`] writes for [`ChunkCoding::Archive`] (`tb recode --coding archive`
//!   of a Morris file);
//! * [`TAG_ARCHIVE_FAST`]: the fast archival coder (`store::archive`, one model
//!   over a row offset and a feature per position), after the same checksum. What
//!   [`encode`] writes for [`ChunkCoding::ArchiveFast`] (`tb recode --coding
//!   archive` of a Dots-and-Boxes file).
//!
//! Decoding is bounded by the expected length: no chunk can make a reader allocate
//! more than the values it asked for.

use super::{archive, cm};
use anyhow::{Context, Result, bail};
use std::cell::RefCell;

/// How a game wants its chunks coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkCoding {
    /// zstd at this level (fast; what Dots-and-Boxes uses).
    Zstd(i32),
    /// The context-mixing coder, with the game's neighbours.
    Mix,
    /// The archival coder, with the game's sites (slow; written by `tb recode`).
    Archive,
    /// The fast archival coder, with the game's row features (written by `tb
    /// recode`).
    ArchiveFast,
}

pub use super::archive::{RowFeatures, Site};
pub use super::cm::Neighbours;

/// What a game tells the context-mixing codings about each position of a chunk:
/// its neighbours ([`ChunkCoding::Mix`]), its sites ([`ChunkCoding::Archive`]) or
/// its row features ([`ChunkCoding::ArchiveFast`]); a game gives what its codings
/// use (nothing for zstd).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contexts {
    /// One entry per position, or none.
    pub neighbours: Vec<Neighbours>,
    /// One entry per position, or none.
    pub sites: Vec<Site>,
    /// The chunk's row offset and one feature per position, or none.
    pub rows: RowFeatures,
}

impl From<Vec<Neighbours>> for Contexts {
    fn from(neighbours: Vec<Neighbours>) -> Contexts {
        Contexts {
            neighbours,
            ..Contexts::default()
        }
    }
}

impl From<Vec<Site>> for Contexts {
    fn from(sites: Vec<Site>) -> Contexts {
        Contexts {
            sites,
            ..Contexts::default()
        }
    }
}

impl From<RowFeatures> for Contexts {
    fn from(rows: RowFeatures) -> Contexts {
        Contexts {
            rows,
            ..Contexts::default()
        }
    }
}

/// The metadata key naming a file's [`Family`].
pub const FAMILY_KEY: &str = "chunk_coding";

/// The chunk codings a file may hold, as its `chunk_coding` metadata names them
/// (docs/FORMAT.md §9.6): each family also allows zstd, a context-mixing family
/// the one before it, and constant chunks ([`TAG_CONSTANT`]) are allowed in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// zstd frames.
    Zstd,
    /// Context mixing without a checksum of the coded bytes ([`TAG_MIX`]).
    Mix,
    /// Context mixing with that checksum ([`TAG_MIX_CHECKED`]).
    MixChecked,
    /// The archival coder ([`TAG_ARCHIVE`]) besides zstd (no other context
    /// mixing): what `tb recode --coding archive` writes for Morris files (and
    /// wrote for Dots-and-Boxes files before [`Family::ArchiveFast`]).
    Archive,
    /// The fast archival coder ([`TAG_ARCHIVE_FAST`]) besides zstd (no other
    /// context mixing): what `tb recode --coding archive` writes for
    /// Dots-and-Boxes files.
    ArchiveFast,
}

impl Family {
    /// Every family, oldest first.
    pub const ALL: [Family; 5] = [
        Family::Zstd,
        Family::Mix,
        Family::MixChecked,
        Family::Archive,
        Family::ArchiveFast,
    ];

    /// The metadata value.
    pub fn name(self) -> &'static str {
        match self {
            Family::Zstd => "zstd",
            Family::Mix => "mix",
            Family::MixChecked => "mix-checked",
            Family::Archive => "archive",
            Family::ArchiveFast => "archive-fast",
        }
    }

    /// The family of a metadata value, if this tb knows it.
    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }
}

const ZSTD_FIRST_BYTE: u8 = 0x28;
/// First byte of a context-mixing chunk.
pub const TAG_MIX: u8 = 0x01;
/// First byte of a chunk whose values are all equal.
pub const TAG_CONSTANT: u8 = 0x02;
/// First byte of a context-mixing chunk that carries the checksum of its coded
/// bytes (so that it can be decoded in part).
pub const TAG_MIX_CHECKED: u8 = 0x03;
/// First byte of an archival chunk (`store::archive`), which carries the
/// checksum of its coded bytes as [`TAG_MIX_CHECKED`] does.
pub const TAG_ARCHIVE: u8 = 0x04;
/// First byte of a fast archival chunk (`store::archive`), which carries the
/// checksum of its coded bytes as [`TAG_MIX_CHECKED`] does.
pub const TAG_ARCHIVE_FAST: u8 = 0x05;
/// Bytes before a [`TAG_MIX_CHECKED`], [`TAG_ARCHIVE`] or [`TAG_ARCHIVE_FAST`]
/// chunk's coded values: the tag and the checksum.
const CHECKED_HEADER: usize = 9;

/// Codes one chunk's values; `contexts` (one per value) are asked for only by
/// the context-mixing codings.
pub fn encode(
    values: &[u8],
    coding: ChunkCoding,
    contexts: impl FnOnce() -> Contexts,
) -> Result<Vec<u8>> {
    let constant = !values.is_empty() && values.iter().all(|&v| v == values[0]);
    let (tag, coded) = match coding {
        ChunkCoding::Zstd(level) => return compress_zstd(values, level),
        _ if constant => return Ok(vec![TAG_CONSTANT, values[0]]),
        ChunkCoding::Mix => (TAG_MIX_CHECKED, cm::encode(values, &contexts().neighbours)),
        ChunkCoding::Archive => (TAG_ARCHIVE, archive::encode(values, &contexts().sites)),
        ChunkCoding::ArchiveFast => (
            TAG_ARCHIVE_FAST,
            archive::encode_fast(values, &contexts().rows),
        ),
    };
    let mut out = Vec::with_capacity(CHECKED_HEADER + coded.len());
    out.push(tag);
    out.extend(super::checksum::checksum(&coded).to_le_bytes());
    out.extend(coded);
    Ok(out)
}

/// A zstd frame of `values` at `level`, from this thread's compression context:
/// a new context per chunk cost the build about 2% (its tables allocated and
/// cleared each time).
fn compress_zstd(values: &[u8], level: i32) -> Result<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
            const { RefCell::new(None) };
    }
    COMPRESSOR
        .with_borrow_mut(|slot| {
            if slot.as_ref().is_none_or(|(l, _)| *l != level) {
                *slot = Some((level, zstd::bulk::Compressor::new(level)?));
            }
            let (_, compressor) = slot.as_mut().expect("set above");
            compressor.compress(values)
        })
        .context("zstd compression failed")
}

/// The values of a zstd frame (at most `len`), from this thread's decompression
/// context: a new context per chunk cost a distributed build's tasks, which decode
/// every input they read, about 1% of their time (its tables allocated each time).
fn decompress_zstd(data: &[u8], len: usize) -> Result<Vec<u8>> {
    with_decompressor(|d| d.decompress(data, len))
}

/// Runs `decode` with this thread's zstd decompression context.
fn with_decompressor<T>(
    decode: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<T>,
) -> Result<T> {
    thread_local! {
        static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { RefCell::new(None) };
    }
    DECOMPRESSOR
        .with_borrow_mut(|slot| {
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new()?);
            }
            decode(slot.as_mut().expect("set above"))
        })
        .context("zstd frame does not decode")
}

/// The `out.len()` values of a chunk decoded straight into `out` (what [`decode`]
/// gives, without a buffer of its own for the zstd and constant codings: a
/// distributed build's tasks decode every input block whole).
pub fn decode_into(data: &[u8], out: &mut [u8], contexts: impl FnOnce() -> Contexts) -> Result<()> {
    match data {
        [ZSTD_FIRST_BYTE, ..] => {
            let written = with_decompressor(|d| d.decompress_to_buffer(data, out))?;
            if written != out.len() {
                bail!("decoded {written} values, expected {}", out.len());
            }
        }
        [TAG_CONSTANT, value] => out.fill(*value),
        _ => out.copy_from_slice(&decode(data, out.len(), contexts)?),
    }
    Ok(())
}

/// A [`TAG_MIX_CHECKED`], [`TAG_ARCHIVE`] or [`TAG_ARCHIVE_FAST`] chunk's stored
/// checksum and the coded bytes it covers; `None` for a chunk of another coding (or too short to hold a
/// checksum).
pub fn coded_checksum(data: &[u8]) -> Option<(u64, &[u8])> {
    match data {
        [TAG_MIX_CHECKED | TAG_ARCHIVE | TAG_ARCHIVE_FAST, rest @ ..]
            if rest.len() >= CHECKED_HEADER - 1 =>
        {
            let (sum, coded) = rest.split_at(CHECKED_HEADER - 1);
            Some((u64::from_le_bytes(sum.try_into().ok()?), coded))
        }
        _ => None,
    }
}

/// Keys a chunk's checksum of coded bytes ([`coded_checksum`]) with its place (as
/// the store does when it writes the chunk; the inverse of itself). Other chunks
/// are left as they are.
pub fn place_coded_checksum(data: &mut [u8], place: Option<super::checksum::ChunkPlace>) {
    if let Some((sum, _)) = coded_checksum(data) {
        let keyed = super::checksum::placed(sum, place);
        data[1..CHECKED_HEADER].copy_from_slice(&keyed.to_le_bytes());
    }
}

/// Whether the chunk can be decoded in part ([`decode`] with fewer values than it
/// holds): its coding stops anywhere and a checksum covers its coded bytes.
pub fn decodes_in_part(data: &[u8]) -> bool {
    coded_checksum(data).is_some()
}

/// Decodes a chunk of `len` values (any coding); `contexts` are asked for only
/// by a context-mixing chunk. The result has exactly `len` values or is an error.
/// A chunk that [`decodes_in_part`] may be asked for its first `len` values only.
pub fn decode(data: &[u8], len: usize, contexts: impl FnOnce() -> Contexts) -> Result<Vec<u8>> {
    let values = match data.first() {
        Some(&ZSTD_FIRST_BYTE) => decompress_zstd(data, len)?,
        Some(&TAG_CONSTANT) if data.len() == 2 => vec![data[1]; len],
        Some(&TAG_MIX) => cm::decode(&data[1..], len, &contexts().neighbours),
        Some(&TAG_MIX_CHECKED) => match coded_checksum(data) {
            Some((_, coded)) => cm::decode(coded, len, &contexts().neighbours),
            None => bail!("context-mixing chunk too short for its checksum"),
        },
        Some(&TAG_ARCHIVE) => match coded_checksum(data) {
            Some((_, coded)) => archive::decode(coded, len, &contexts().sites),
            None => bail!("archival chunk too short for its checksum"),
        },
        Some(&TAG_ARCHIVE_FAST) => match coded_checksum(data) {
            Some((_, coded)) => archive::decode_fast(coded, len, &contexts().rows),
            None => bail!("fast archival chunk too short for its checksum"),
        },
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

    fn none() -> Contexts {
        Contexts::default()
    }

    #[test]
    fn every_coding_round_trips() {
        let values: Vec<u8> = (0..70_000u32).map(|i| (i % 300 / 20) as u8).collect();
        let rows = || Contexts {
            neighbours: vec![[300, 600, 1, 2]; 70_000],
            sites: vec![
                Site {
                    back: [300, 600, 1, 2],
                    feature: 3
                };
                70_000
            ],
            rows: RowFeatures {
                row: 300,
                features: vec![3; 70_000],
            },
        };
        let codings = [
            ChunkCoding::Zstd(3),
            ChunkCoding::Mix,
            ChunkCoding::Archive,
            ChunkCoding::ArchiveFast,
        ];
        for coding in codings {
            let data = encode(&values, coding, rows).unwrap();
            assert_eq!(
                decode(&data, values.len(), rows).unwrap(),
                values,
                "{coding:?}"
            );
        }
        for coding in &codings[1..] {
            assert_eq!(encode(&[9; 100], *coding, none).unwrap(), [TAG_CONSTANT, 9]);
        }
        // Each context-mixing coding says its tag and decodes only with its own
        // contexts.
        let tags = [TAG_MIX_CHECKED, TAG_ARCHIVE, TAG_ARCHIVE_FAST];
        for (coding, tag) in codings[1..].iter().zip(tags) {
            let data = encode(&values, *coding, rows).unwrap();
            assert_eq!(data[0], tag);
            assert!(decodes_in_part(&data));
            assert_ne!(decode(&data, values.len(), none).unwrap(), values);
        }
        let constant = [TAG_CONSTANT, 9];
        assert_eq!(decode(&constant, 100, none).unwrap(), [9; 100]);
    }

    #[test]
    fn checked_chunks_decode_in_part_and_carry_their_checksum() {
        let values: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 13 / 3) as u8).collect();
        let rows = |len: usize| Contexts::from(vec![[300, 600, 1, 2]; len]);
        let mut data = encode(&values, ChunkCoding::Mix, || rows(values.len())).unwrap();
        assert_eq!(data[0], TAG_MIX_CHECKED);
        assert!(decodes_in_part(&data));
        // Any prefix decodes to the values' prefix.
        for len in [1, 17, 2500, 4999, 5000] {
            assert_eq!(decode(&data, len, || rows(len)).unwrap(), values[..len]);
        }
        // The stored checksum is of the coded bytes, and keying it is its own inverse.
        let (sum, coded) = coded_checksum(&data).unwrap();
        assert_eq!(sum, crate::store::checksum::checksum(coded));
        let place = Some((3, "3.4", 7));
        place_coded_checksum(&mut data, place);
        let (keyed, _) = coded_checksum(&data).unwrap();
        assert_eq!(keyed, crate::store::checksum::placed(sum, place));
        assert_ne!(keyed, sum);
        place_coded_checksum(&mut data, place);
        assert_eq!(coded_checksum(&data).unwrap().0, sum);
        // Other codings have no such checksum; a cut header is an error.
        assert!(!decodes_in_part(
            &encode(&values, ChunkCoding::Zstd(3), none).unwrap()
        ));
        assert!(!decodes_in_part(&[TAG_CONSTANT, 1]));
        assert!(decode(&data[..5], 3, || rows(3)).is_err());
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
