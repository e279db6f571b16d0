//! A winning strategy in a tablebase file: layer 0 holds one block per O reply to
//! X's first move (key: the reply's cell in the canonical position after X's first
//! move) and block `64` for the empty board; each block is one chunk of
//! fixed-size records, one per strategic position, sorted by position. Reading
//! checks every record's form (a damaged file is an error, never a wrong move); a
//! record forged with valid checksums is caught by `tb verify`, and a probe answers
//! only from records it finds sound on the way (see [`super::trust`]).

use super::geometry::{CELLS, canonical};
use super::position::{Position, Side};
use super::prover::{Key, child_classes, x_to_move};
use super::threats::PositionMap;
use crate::store::codec::{FAMILY_KEY, Family};
use crate::store::{BlockStats, EncodedChunk, LayerStatus, Store, checksum, codec, unknown_format};
use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use std::path::Path;

/// Bytes of one record: X's cells, O's cells (little-endian), X's move, the
/// strategic positions below (u32), the plies to X's four under the strategy.
pub const RECORD_BYTES: usize = 8 + 8 + 1 + 4 + 1;
/// The block key of the empty board's record.
pub const OPENING_BLOCK: u8 = 64;
/// While a file is built with a second proof of each reply (`--proofs 2`), the
/// second proof of reply `r` is block `SECOND_PROOF_BLOCKS + r`; the blocks go
/// when the file is finished (a finished file never holds them).
pub const SECOND_PROOF_BLOCKS: u8 = 128;
/// The `game` metadata of a Qubic file.
pub const GAME: &str = "qubic";
/// The `format_version` this reader reads (it has never packed features: bumped
/// only for a change the feature keys cannot express, docs/FORMAT.md §9.11).
pub const FORMAT_VERSION: u32 = 1;
/// The chunk codings of a strategy file (its `chunk_coding` metadata; files from
/// before the key hold the same).
pub const CODINGS: Family = Family::Zstd;
/// The `rules` metadata.
pub const RULES: &str = "4x4x4, 76 lines of four, X first";

/// One strategic position of the strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The canonical position (X to move).
    pub key: Key,
    /// X's move, a cell of the canonical position.
    pub cell: u8,
    /// Strategic positions in the subtree below, this one included (as a tree).
    pub subtree: u32,
    /// Plies until X's four in a line under the strategy against any defence.
    pub plies: u8,
}

/// Records as bytes, sorted by position.
pub fn encode_records(records: &mut [Record]) -> Vec<u8> {
    records.sort_by_key(|r| r.key);
    let mut out = Vec::with_capacity(records.len() * RECORD_BYTES);
    for r in records.iter() {
        out.extend_from_slice(&r.key.0.to_le_bytes());
        out.extend_from_slice(&r.key.1.to_le_bytes());
        out.push(r.cell);
        out.extend_from_slice(&r.subtree.to_le_bytes());
        out.push(r.plies);
    }
    out
}

/// Reads records, checking each: a whole number of records, disjoint cells, X to
/// move, canonical, the move on an empty cell, plies that fit the empty cells, and
/// one record per position in order.
pub fn decode_records(bytes: &[u8]) -> Result<Vec<Record>> {
    decode_records_with(bytes, |_| false)
}

/// [`decode_records`], leaving out the canonical-form check (the costly one) for
/// positions `checked` says were checked already.
fn decode_records_with(bytes: &[u8], checked: impl Fn(Key) -> bool + Sync) -> Result<Vec<Record>> {
    ensure!(
        bytes.len().is_multiple_of(RECORD_BYTES),
        "a strategy block of {} bytes is not a whole number of {RECORD_BYTES}-byte records",
        bytes.len()
    );
    let mut out = Vec::with_capacity(bytes.len() / RECORD_BYTES);
    for r in bytes.chunks_exact(RECORD_BYTES) {
        let x = u64::from_le_bytes(r[0..8].try_into().expect("8 bytes"));
        let o = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
        let record = Record {
            key: (x, o),
            cell: r[16],
            subtree: u32::from_le_bytes(r[17..21].try_into().expect("4 bytes")),
            plies: r[21],
        };
        let empty = !(x | o);
        ensure!(
            x & o == 0 && x_to_move(x, o),
            "a strategy record holds an impossible position (X {x:#x}, O {o:#x})"
        );
        ensure!(
            (record.cell as usize) < CELLS && empty >> record.cell & 1 == 1,
            "a strategy record's move {} is not an empty cell",
            record.cell
        );
        ensure!(
            record.plies >= 1 && u32::from(record.plies) <= empty.count_ones(),
            "a strategy record's plies ({}) do not fit the board",
            record.plies
        );
        out.push(record);
    }
    // (A second record of a position would go unread, and so unchecked.)
    ensure!(
        out.windows(2).all(|w| w[0].key < w[1].key),
        "a strategy block's records are not one per position in order"
    );
    // The canonical-form check, on both cores.
    ensure!(
        out.par_iter()
            .all(|r| checked(r.key) || canonical(r.key.0, r.key.1).0 == r.key),
        "a strategy record's position is not in canonical form"
    );
    Ok(out)
}

/// Stores one block of records (its own transaction: a block is whole or absent).
pub fn write_block(store: &mut Store, key: u8, records: &mut [Record], seconds: f64) -> Result<()> {
    let (chunk, stats) = encode_block(records, seconds)?;
    store_block(store, key, chunk, &stats)
}

/// A block of records as the file stores it: its one chunk (the records sorted
/// and coded) and its row's statistics.
pub fn encode_block(records: &mut [Record], seconds: f64) -> Result<(EncodedChunk, BlockStats)> {
    let bytes = encode_records(records);
    let raw: Vec<i8> = bytes.iter().map(|&b| b as i8).collect();
    let chunk = EncodedChunk::encode(&raw, codec::ChunkCoding::Zstd(19), codec::Contexts::default)?;
    let stats = BlockStats {
        positions: records.len() as u64,
        bytes: chunk.data.len() as u64,
        seconds,
        histogram: Default::default(),
        digest: chunk.checksum,
    };
    Ok((chunk, stats))
}

/// Stores block `key` coded by [`encode_block`] (its own transaction).
pub fn store_block(
    store: &mut Store,
    key: u8,
    chunk: EncodedChunk,
    stats: &BlockStats,
) -> Result<()> {
    store.write_block(0, &[key], &[chunk], stats, &[], None)
}

/// The bytes a block of `records` records takes, checked against a sane bound.
pub fn block_bytes(records: u64) -> Result<usize> {
    usize::try_from(records)
        .ok()
        .and_then(|p| p.checked_mul(RECORD_BYTES))
        .filter(|&l| l <= 64 << 20)
        .context("the block claims a bad size")
}

/// Reads and checks the records of block `key`, which claims `records` of them.
pub fn read_block(store: &Store, key: u8, records: i64) -> Result<Vec<Record>> {
    decode_records(&read_block_bytes(store, key, records)?.0)
}

/// The raw bytes of block `key`, which claims `records` records (its chunk's
/// length and checksum checked), and the chunk's coded size.
fn read_block_bytes(store: &Store, key: u8, records: i64) -> Result<(Vec<u8>, usize)> {
    // A negative count is as bad as a huge one.
    let len = block_bytes(u64::try_from(records).unwrap_or(u64::MAX))?;
    let chunk = store.stored_chunk(0, &[key], 0)?;
    let raw = chunk.decode(len, |_| codec::Contexts::default())?;
    Ok((raw.iter().map(|&v| v as u8).collect(), chunk.data.len()))
}

/// One stored block: one O reply's strategy, or the opening's record.
#[derive(Debug, Clone)]
pub struct StoredBlock {
    /// The block key: O's reply (a cell of the start), or [`OPENING_BLOCK`].
    pub key: u8,
    /// Where the block's strategy starts (canonical, X to move): the start after
    /// O's reply, or the empty board.
    pub root: Key,
    /// Its records, by position.
    pub records: PositionMap<Record>,
}

/// Every block of a finished strategy file, checked against its rows: one block
/// per O reply to the start (named by the reply's cell) and the opening's when the
/// start is X's first move, no other; each one chunk whose row, and the block and
/// layer rows, agree with what is stored. Returns every record (by position, the
/// first block's where several hold one) and the blocks.
fn read_blocks(store: &Store, start: Position) -> Result<(PositionMap<Record>, Vec<StoredBlock>)> {
    let mut expected: Vec<String> = child_classes((start.x, start.o))
        .iter()
        .map(|(reply, _)| reply.to_string())
        .collect();
    if first_move(start).is_some() {
        expected.push(OPENING_BLOCK.to_string());
    }
    expected.sort();
    let rows = store.block_rows()?;
    let mut keys: Vec<String> = rows.keys().map(|(_, k)| k.clone()).collect();
    keys.sort();
    ensure!(
        rows.keys().all(|(n, _)| *n == 0) && keys == expected,
        "the blocks are not one per O reply to the start"
    );
    let chunks = store.chunk_rows()?;
    ensure!(
        chunks.len() == rows.len()
            && chunks
                .keys()
                .all(|(n, key, c)| *n == 0 && *c == 0 && rows.contains_key(&(0, key.clone()))),
        "the chunks are not one per block"
    );
    let mut records = PositionMap::default();
    let mut blocks = Vec::new();
    let mut totals = BlockStats::default();
    for ((_, key), row) in &rows {
        let block: u8 = key.parse().context("a block key")?;
        let (bytes, coded) = read_block_bytes(store, block, row.positions)
            .with_context(|| format!("block {key}"))?;
        // The block's digest is its chunk's checksum before it is keyed to its place.
        let digest = checksum::checksum(&bytes);
        ensure!(
            row.chunks == 1
                && row.bytes == coded as i64
                && row.digest == digest
                && row.histogram.as_ref().is_some_and(|h| h.is_empty()),
            "block {key}: its row does not match its chunk"
        );
        // (Blocks share positions: each is checked canonical once.)
        let decoded = decode_records_with(&bytes, |k| records.contains_key(&k))
            .with_context(|| format!("block {key}"))?;
        totals.merge(&BlockStats {
            positions: decoded.len() as u64,
            bytes: coded as u64,
            seconds: 0.0,
            histogram: Default::default(),
            digest,
        });
        let root = if block == OPENING_BLOCK {
            (0, 0)
        } else {
            canonical(start.x, start.o | 1 << block).0
        };
        let mut own = PositionMap::default();
        for r in decoded {
            records.entry(r.key).or_insert(r);
            own.insert(r.key, r);
        }
        blocks.push(StoredBlock {
            key: block,
            root,
            records: own,
        });
    }
    let layers = store.layers()?;
    let layer = layers.get(&0);
    ensure!(
        layers.len() == 1
            && layer.is_some_and(|l| l.status == LayerStatus::Complete
                && l.positions == totals.positions
                && l.bytes == totals.bytes
                && l.histogram.is_empty()
                && l.digest.as_deref() == Some(checksum::digest_hex(totals.digest).as_str())),
        "the layer row does not match the blocks"
    );
    Ok((records, blocks))
}

/// X's first move when `start` is one X stone on the empty board.
pub fn first_move(start: Position) -> Option<u8> {
    (start.o == 0 && start.x.count_ones() == 1).then(|| start.x.trailing_zeros() as u8)
}

/// A strategy file open for probes and checks.
pub struct StrategyFile {
    /// Where the strategy starts (O to move).
    pub start: Position,
    /// Every record, by position. A position stored in several blocks (reached
    /// after several O replies) has the first block's record here: the blocks'
    /// strategies may differ there, each sound on its own.
    pub records: PositionMap<Record>,
    /// The blocks (O's reply classes, and the opening), each one strategy.
    pub blocks: Vec<StoredBlock>,
}

impl StrategyFile {
    /// Opens a finished strategy file.
    pub fn open(path: &Path) -> Result<StrategyFile> {
        Self::from_store(path, Store::open_read(path)?)
    }

    /// Reads the strategy of an open store.
    pub fn from_store(path: &Path, store: Store) -> Result<StrategyFile> {
        let meta = store.meta()?;
        ensure!(
            meta.get("game").map(String::as_str) == Some(GAME),
            "{} is not a Qubic strategy file",
            path.display()
        );
        ensure!(
            meta.get("status").map(String::as_str) == Some("complete"),
            "{}: the strategy is not finished (run tb build qubic again to go on)",
            path.display()
        );
        ensure!(
            meta.get("format_version") == Some(&FORMAT_VERSION.to_string()),
            "{}: not a strategy file of format version {FORMAT_VERSION}",
            path.display()
        );
        if let Some(name) = meta.get(FAMILY_KEY).filter(|&name| name != CODINGS.name()) {
            return Err(unknown_format(format!(
                "{}: the strategy's chunks are coded `{name}`, unknown to this tb (it reads `{}`)",
                path.display(),
                CODINGS.name()
            )));
        }
        ensure!(
            meta.get("rules").map(String::as_str) == Some(RULES),
            "{}: the rules metadata is not `{RULES}`",
            path.display()
        );
        // The start exactly as the builder writes it (64 characters, O to move).
        let start = meta
            .get("start")
            .and_then(|v| Position::parse(v).ok().filter(|p| p.to_string() == *v))
            .filter(|p| p.to_move() == Side::O)
            .with_context(|| format!("{}: no valid start metadata", path.display()))?;
        let (records, blocks) = read_blocks(&store, start)
            .with_context(|| format!("{}: the strategy's blocks", path.display()))?;
        if let Some(first) = first_move(start) {
            match records.get(&(0, 0)) {
                Some(r) if r.cell == first => {}
                _ => bail!(
                    "{}: the strategy has no opening move {first}",
                    path.display()
                ),
            }
        }
        Ok(StrategyFile {
            start,
            records,
            blocks,
        })
    }
}
