//! Shard files (docs/FORMAT.md §9.12): one block's chunks outside the SQLite file,
//! for builds whose blocks are computed in other processes or on other machines
//! that share a directory.
//!
//! A shard is `TBSHARD1`, the length of its header (u32, little-endian), the
//! header (JSON: the game's identity hash, the layer, the block key, its
//! positions, chunk size, coded bytes, histogram and digest, and per chunk its
//! value count, the checksum of its values and the length and checksum of its
//! coded bytes), the checksum of the header (u64), then the chunks' coded bytes in
//! order. The chunks are coded and checksummed as `retro::chunks::encode_block`
//! codes them for the SQLite file; their place, which the file keys its
//! checksums with, is in the checked header instead. A shard is written under a
//! temporary name, synced and renamed: a shard at its name is whole unless the
//! storage damaged it, which its checksums tell.

use super::chunks::decode_block;
use super::format::{BlockId, Format};
use crate::store::checksum::{checksum, checksum_each, digest_hex};
use crate::store::{BlockStats, EncodedChunk, StoredChunk, chunk_len, counts_key};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The first bytes of every shard.
pub const MAGIC: &[u8; 8] = b"TBSHARD1";

/// Largest header a reader accepts (a block of 2^32 positions in chunks of 4,096
/// has a header of about 60 MiB).
const MAX_HEADER_BYTES: u32 = 1 << 28;

/// File name suffix of a shard.
const SUFFIX: &str = ".shard";

/// What a shard says about its block (everything but the coded bytes).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardHeader {
    /// [`identity_hash`] of the game's identity.
    pub identity: String,
    /// The block's layer.
    pub layer: usize,
    /// The block's key.
    pub key: Vec<u8>,
    /// Positions in the block.
    pub positions: u64,
    /// Positions per chunk.
    pub chunk_positions: u64,
    /// Coded bytes of all chunks.
    pub bytes: u64,
    /// Seconds the block took (compute and code).
    pub seconds: f64,
    /// Digest of the block's values (wrapping sum of [`Format::digest`]).
    pub digest: u64,
    /// Value histogram.
    pub histogram: BTreeMap<i8, u64>,
    /// The chunks, in order.
    pub chunks: Vec<ShardChunk>,
}

/// One chunk as a shard's header lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardChunk {
    /// Values it holds.
    pub raw_len: u64,
    /// Checksum of its values ([`crate::store::checksum::checksum`], unplaced).
    pub checksum: u64,
    /// Coded bytes.
    pub len: u64,
    /// Checksum of the coded bytes.
    pub data_checksum: u64,
}

impl ShardHeader {
    /// The block's statistics as the store keeps them.
    pub fn stats(&self) -> BlockStats {
        BlockStats {
            positions: self.positions,
            bytes: self.bytes,
            seconds: self.seconds,
            histogram: self.histogram.clone(),
            digest: self.digest,
        }
    }

    /// The block.
    pub fn block(&self) -> BlockId {
        BlockId {
            layer: self.layer,
            key: self.key.clone(),
        }
    }
}

/// Why a shard cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardErrorKind {
    /// No file at its name.
    Missing,
    /// The file is there but damaged, truncated or of another block or game.
    Damaged,
}

/// A shard that cannot be used: which block, where, and why.
#[derive(Debug, Clone)]
pub struct ShardError {
    /// Missing or damaged.
    pub kind: ShardErrorKind,
    /// The block it should hold.
    pub block: BlockId,
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub why: String,
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ShardErrorKind::Missing => "missing",
            ShardErrorKind::Damaged => "damaged",
        };
        write!(
            f,
            "the shard of block {} of layer {} ({}) is {what}: {}",
            counts_key(&self.block.key),
            self.block.layer,
            self.path.display(),
            self.why
        )
    }
}

impl std::error::Error for ShardError {}

impl ShardError {
    /// The shard of block `id` at `path` is unusable (`kind`) because of `why`.
    fn new(kind: ShardErrorKind, id: &BlockId, path: &Path, why: String) -> ShardError {
        ShardError {
            kind,
            block: id.clone(),
            path: path.to_path_buf(),
            why,
        }
    }

    /// Opening or reading the shard of block `id` at `path` failed with `e`:
    /// missing when there is no file, else damaged.
    fn io(id: &BlockId, path: &Path, e: &std::io::Error) -> ShardError {
        if e.kind() == std::io::ErrorKind::NotFound {
            ShardError::new(ShardErrorKind::Missing, id, path, "no such file".into())
        } else {
            ShardError::new(
                ShardErrorKind::Damaged,
                id,
                path,
                format!("cannot read it: {e}"),
            )
        }
    }
}

/// A short hash of a game's identity rows (their order does not matter): shards
/// of different builds never mix, and the directory of a build is named by it.
pub fn identity_hash(identity: &[(&str, String)]) -> String {
    let mut rows: Vec<String> = identity.iter().map(|(k, v)| format!("{k}={v}")).collect();
    rows.sort();
    digest_hex(checksum(rows.join("\n").as_bytes()))
}

/// Where the shards of one build live: `<shared>/<identity hash>/<layer>/<key>.shard`.
#[derive(Debug, Clone)]
pub struct ShardDir {
    root: PathBuf,
    identity: String,
}

impl ShardDir {
    /// The shard directory of `format`'s build under the shared directory `shared`.
    pub fn new(shared: &Path, format: &dyn Format) -> ShardDir {
        ShardDir::for_identity(shared, &format.identity())
    }

    /// The shard directory of the build whose identity rows are `identity` (a game
    /// without a [`Format`], e.g. Qubic's strategies).
    pub fn for_identity(shared: &Path, identity: &[(&str, String)]) -> ShardDir {
        let identity = identity_hash(identity);
        ShardDir {
            root: shared.join(&identity),
            identity,
        }
    }

    /// The build's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The identity hash shards of this build carry.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// A block's shard file.
    pub fn path(&self, id: &BlockId) -> PathBuf {
        self.root
            .join(id.layer.to_string())
            .join(format!("{}{SUFFIX}", counts_key(&id.key)))
    }

    /// Writes a block's shard: a temporary file in the same directory, synced,
    /// renamed over the shard's name, and the directory synced. Returns the file's
    /// size.
    pub fn write(&self, header: &ShardHeader, chunks: &[EncodedChunk]) -> Result<u64> {
        let path = self.path(&header.block());
        let dir = path.parent().expect("a shard path has a directory");
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the shard directory {}", dir.display()))?;
        let json = serde_json::to_vec(header)?;
        let temp = dir.join(format!(
            ".{}.{}.{}.tmp",
            path.file_name().expect("a file name").to_string_lossy(),
            std::process::id(),
            unique()
        ));
        let written = (|| -> Result<u64> {
            let mut file =
                std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&temp)?);
            file.write_all(MAGIC)?;
            file.write_all(&(json.len() as u32).to_le_bytes())?;
            file.write_all(&json)?;
            file.write_all(&checksum(&json).to_le_bytes())?;
            for chunk in chunks {
                file.write_all(&chunk.data)?;
            }
            let file = file.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            Ok(file.metadata()?.len())
        })()
        .with_context(|| format!("cannot write the shard {}", temp.display()));
        let size = match written {
            Ok(size) => size,
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                return Err(e);
            }
        };
        std::fs::rename(&temp, &path)
            .with_context(|| format!("cannot rename {} to {}", temp.display(), path.display()))?;
        // The rename itself is durable once the directory is synced.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(size)
    }

    /// Reads a block's shard whole and checks it: the header's checksum, that it is
    /// the shard of `id` in this build with the layout `format` gives, and every
    /// chunk's coded bytes against their checksum (the values' checksums are checked
    /// as they are decoded, [`Shard::values`]).
    pub fn read(&self, format: &dyn Format, id: &BlockId) -> Result<Shard, ShardError> {
        self.read_laid_out(Some(format), id)
    }

    /// Reads and checks a shard whose block no [`Format`] lays out (a Qubic
    /// strategy's records): its header's checksum, that it is the shard of `id` in
    /// this build, and its coded bytes against their checksums. What the values
    /// hold is the reader's to check.
    pub fn read_opaque(&self, id: &BlockId) -> Result<Shard, ShardError> {
        self.read_laid_out(None, id)
    }

    /// [`ShardDir::read`], the layout checked when `format` gives one.
    fn read_laid_out(
        &self,
        format: Option<&dyn Format>,
        id: &BlockId,
    ) -> Result<Shard, ShardError> {
        let path = self.path(id);
        let error = |kind, why| ShardError::new(kind, id, &path, why);
        let bytes = std::fs::read(&path).map_err(|e| ShardError::io(id, &path, &e))?;
        let (header, data_at) = parse_header(&bytes[..], bytes.len() as u64)
            .and_then(|(header, at)| {
                self.check_header(format, id, &header)?;
                Ok((header, at))
            })
            .map_err(|why| error(ShardErrorKind::Damaged, why))?;
        let mut at = data_at;
        let mut spans = Vec::with_capacity(header.chunks.len());
        for chunk in &header.chunks {
            spans.push(at..at + chunk.len as usize);
            at += chunk.len as usize;
        }
        let coded: Vec<&[u8]> = spans.iter().map(|span| &bytes[span.clone()]).collect();
        let sums = checksum_each(&coded);
        if let Some(c) =
            (header.chunks.iter().zip(sums)).position(|(chunk, sum)| sum != chunk.data_checksum)
        {
            return Err(error(
                ShardErrorKind::Damaged,
                format!("chunk {c}: checksum of the coded bytes mismatch"),
            ));
        }
        Ok(Shard {
            header,
            bytes,
            spans,
            path,
        })
    }

    /// Reads and checks a shard's header only (and that the file is as long as it
    /// says): what the coordinator records, without reading the values.
    pub fn read_header(
        &self,
        format: &dyn Format,
        id: &BlockId,
    ) -> Result<(ShardHeader, u64), ShardError> {
        let path = self.path(id);
        let mut file = std::fs::File::open(&path).map_err(|e| ShardError::io(id, &path, &e))?;
        let damaged = |why| ShardError::new(ShardErrorKind::Damaged, id, &path, why);
        let size = file
            .metadata()
            .map_err(|e| damaged(format!("cannot read it: {e}")))?
            .len();
        let mut start = [0u8; 12];
        file.read_exact(&mut start)
            .map_err(|_| damaged("shorter than a shard's header".into()))?;
        let header_len = u32::from_le_bytes(start[8..12].try_into().expect("4 bytes"));
        if &start[..8] != MAGIC || header_len > MAX_HEADER_BYTES {
            return Err(damaged("not a shard (bad magic or header length)".into()));
        }
        let mut head = start.to_vec();
        head.resize(12 + header_len as usize + 8, 0);
        file.read_exact(&mut head[12..])
            .map_err(|_| damaged("truncated inside its header".into()))?;
        let (header, _) = parse_header(&head, size).map_err(damaged)?;
        self.check_header(Some(format), id, &header)
            .map_err(damaged)?;
        Ok((header, size))
    }

    /// Whether `header` is that of block `id` of this build, as `format` lays it
    /// out (without one, only that its coded bytes add up).
    fn check_header(
        &self,
        format: Option<&dyn Format>,
        id: &BlockId,
        header: &ShardHeader,
    ) -> Result<(), String> {
        if header.identity != self.identity {
            return Err(format!(
                "it belongs to another build (identity {}, this build's is {})",
                header.identity, self.identity
            ));
        }
        if header.layer != id.layer || header.key != id.key {
            return Err(format!(
                "it holds block {} of layer {}",
                counts_key(&header.key),
                header.layer
            ));
        }
        let coded: u64 = header.chunks.iter().map(|c| c.len).sum();
        let Some(format) = format else {
            return if coded == header.bytes {
                Ok(())
            } else {
                Err("its byte count does not add up".into())
            };
        };
        let size = format.block_size(id.layer, &id.key);
        let chunk_positions = format.chunk_positions();
        if header.positions != size || header.chunk_positions != chunk_positions {
            return Err(format!(
                "it has {} positions in chunks of {}, the block {size} in chunks of {chunk_positions}",
                header.positions, header.chunk_positions
            ));
        }
        let chunks = size.div_ceil(chunk_positions);
        if header.chunks.len() as u64 != chunks {
            return Err(format!(
                "it has {} chunks, the block {chunks}",
                header.chunks.len()
            ));
        }
        for (c, chunk) in header.chunks.iter().enumerate() {
            if chunk.raw_len != chunk_len(size, chunk_positions, c as u64) as u64 {
                return Err(format!("chunk {c} claims {} values", chunk.raw_len));
            }
        }
        let counted: u64 = header.histogram.values().sum();
        if counted != size || coded != header.bytes {
            return Err("its histogram or byte count does not add up".into());
        }
        Ok(())
    }

    /// Deletes a block's shard (gone already is fine).
    pub fn remove(&self, id: &BlockId) -> Result<()> {
        let path = self.path(id);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot delete the shard {}", path.display()))
            }
            _ => Ok(()),
        }
    }

    /// Deletes the build's directory with whatever it still holds (temporary files
    /// of killed tasks included).
    pub fn remove_all(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e)
                .with_context(|| format!("cannot delete the shards in {}", self.root.display())),
            _ => Ok(()),
        }
    }
}

/// A number no other temporary file of this process has.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    (NEXT.fetch_add(1, Ordering::Relaxed) << 32) ^ nanos
}

/// The header of a shard whose first bytes are `bytes` and whose file is
/// `file_len` bytes long, and where its chunks' bytes start.
fn parse_header(bytes: &[u8], file_len: u64) -> Result<(ShardHeader, usize), String> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err("not a shard (bad magic)".into());
    }
    let header_len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if header_len > MAX_HEADER_BYTES {
        return Err(format!("a header of {header_len} bytes"));
    }
    let end = 12 + header_len as usize;
    if bytes.len() < end + 8 {
        return Err("truncated inside its header".into());
    }
    let json = &bytes[12..end];
    let sum = u64::from_le_bytes(bytes[end..end + 8].try_into().expect("8 bytes"));
    if checksum(json) != sum {
        return Err("checksum of the header mismatch".into());
    }
    let header: ShardHeader =
        serde_json::from_slice(json).map_err(|e| format!("a malformed header: {e}"))?;
    let data: u64 = header.chunks.iter().map(|c| c.len).sum();
    let expected = (end + 8) as u64 + data;
    if file_len != expected {
        return Err(format!(
            "{file_len} bytes long, its header says {expected} (truncated or extended)"
        ));
    }
    Ok((header, end + 8))
}

/// A shard read whole and checked ([`ShardDir::read`]).
pub struct Shard {
    /// Its header.
    pub header: ShardHeader,
    bytes: Vec<u8>,
    spans: Vec<std::ops::Range<usize>>,
    path: PathBuf,
}

impl Shard {
    /// The block's values as computed, decoded on all cores (each chunk's length,
    /// checksum and values checked as the store checks a chunk).
    pub fn values(&self, format: &dyn Format) -> Result<Vec<i8>> {
        let id = self.header.block();
        let key = counts_key(&id.key);
        let stored: Vec<StoredChunk> = (self.header.chunks.iter().zip(&self.spans))
            .enumerate()
            .map(|(c, (chunk, span))| {
                StoredChunk::from_shard(
                    id.layer,
                    &key,
                    c as u64,
                    (
                        chunk.raw_len as i64,
                        chunk.checksum,
                        self.bytes[span.clone()].to_vec(),
                    ),
                    format.value_range(),
                )
            })
            .collect();
        decode_block(format, &id, &stored)
            .with_context(|| format!("the shard {}", self.path.display()))
    }

    /// The chunks as the store writes them (to merge the block into the file).
    pub fn chunks(&self) -> Vec<EncodedChunk> {
        self.header
            .chunks
            .iter()
            .zip(&self.spans)
            .map(|(chunk, span)| EncodedChunk {
                raw_len: chunk.raw_len as usize,
                checksum: chunk.checksum,
                data: self.bytes[span.clone()].to_vec(),
            })
            .collect()
    }
}

/// The header of the shard of block `id` whose coded chunks (of `chunk_positions`
/// values each, the last maybe fewer) are `chunks` and whose statistics are `stats`.
pub fn header_for(
    dir: &ShardDir,
    chunk_positions: u64,
    id: &BlockId,
    chunks: &[EncodedChunk],
    stats: &BlockStats,
) -> ShardHeader {
    ShardHeader {
        identity: dir.identity().to_string(),
        layer: id.layer,
        key: id.key.clone(),
        positions: stats.positions,
        chunk_positions,
        bytes: stats.bytes,
        seconds: stats.seconds,
        digest: stats.digest,
        histogram: stats.histogram.clone(),
        chunks: chunks
            .iter()
            .map(|c| ShardChunk {
                raw_len: c.raw_len as u64,
                checksum: c.checksum,
                len: c.data.len() as u64,
                data_checksum: checksum(&c.data),
            })
            .collect(),
    }
}
