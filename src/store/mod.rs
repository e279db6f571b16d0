//! The SQLite store: schema migrations, metadata, layers, blocks and chunks.
//!
//! Fixed rules (docs/FORMAT.md §9): one file per tablebase; schema applied from
//! `schema/NNN_name.sql` and tracked with `PRAGMA user_version`; a block's chunks are
//! written in one transaction together with its row in `blocks`; a layer becomes
//! complete in the transaction that stores its last block, and the blocks and layers
//! no remaining block reads are deleted in those transactions unless they are kept.
//! Values are bytes here; layers and block keys are numbers the game chooses
//! (Dots-and-Boxes: lines drawn and group counts; Morris: table pairs). A chunk's
//! bytes are coded as the game asks ([`codec`]: zstd, or context mixing over the
//! game's contexts), each chunk saying its coding in its first byte.

mod archive;
pub mod checksum;
mod cm;
pub mod codec;
pub mod error;
pub mod hash;
pub mod reader;
pub mod reads;

use anyhow::{Context, Result, bail};
use checksum::{checksum, placed};
pub use error::{Place, StoreError, StoreErrorKind};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Instant;

/// The migrations, in order; migration i brings the file to `user_version` i + 1.
const MIGRATIONS: &[&str] = &[include_str!("../../schema/001_initial.sql")];

/// Schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Most positions per chunk a file may declare (a chunk is decompressed whole).
pub const MAX_CHUNK_POSITIONS: u64 = 1 << 24;

/// Largest value (a chunk's coded bytes, a metadata text) a reader accepts: a
/// chunk of [`MAX_CHUNK_POSITIONS`] values with room for coding overhead.
const MAX_VALUE_BYTES: i32 = 2 * MAX_CHUNK_POSITIONS as i32 + (1 << 20);

/// Status of a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerStatus {
    /// Blocks are being written.
    Building,
    /// Finished, not (yet) deleted.
    Complete,
    /// Finished and kept as part of the opening book.
    Book,
    /// Finished, then deleted once the layer below was complete.
    Pruned,
}

impl LayerStatus {
    /// The text stored in the `layers` table.
    pub fn as_str(self) -> &'static str {
        match self {
            LayerStatus::Building => "building",
            LayerStatus::Complete => "complete",
            LayerStatus::Book => "book",
            LayerStatus::Pruned => "pruned",
        }
    }

    fn parse(s: &str) -> Result<LayerStatus> {
        Ok(match s {
            "building" => LayerStatus::Building,
            "complete" => LayerStatus::Complete,
            "book" => LayerStatus::Book,
            "pruned" => LayerStatus::Pruned,
            other => {
                return Err(StoreError::damaged(
                    Place::File,
                    format!("unknown layer status `{other}`"),
                )
                .into());
            }
        })
    }

    /// Whether the layer's values can be read.
    pub fn readable(self) -> bool {
        matches!(self, LayerStatus::Complete | LayerStatus::Book)
    }
}

/// One row of the `layers` table.
#[derive(Debug, Clone)]
pub struct LayerRow {
    /// The layer (its number is the game's: lines drawn, a table pair).
    pub n: usize,
    /// Status.
    pub status: LayerStatus,
    /// Number of positions.
    pub positions: u64,
    /// Compressed bytes of its chunks.
    pub bytes: u64,
    /// Build time in seconds (sum over its blocks).
    pub seconds: f64,
    /// Value histogram (value -> count), when finished.
    pub histogram: BTreeMap<i8, u64>,
    /// Layer digest (16 hex digits), when finished.
    pub digest: Option<String>,
}

/// The layers of `rows` whose values can be read, ascending.
pub fn readable_layers(
    rows: &BTreeMap<usize, LayerRow>,
) -> impl DoubleEndedIterator<Item = usize> + '_ {
    rows.values().filter(|r| r.status.readable()).map(|r| r.n)
}

/// Where a chunk row says it belongs: (layer, key text, chunk), as stored.
pub type ChunkPlaceRow = (i64, String, i64);

/// One row of the `blocks` table, as stored (numbers not yet checked).
#[derive(Debug, Clone)]
pub struct BlockRow {
    /// Positions it claims.
    pub positions: i64,
    /// Chunks it claims.
    pub chunks: i64,
    /// Coded bytes it claims.
    pub bytes: i64,
    /// Value histogram (`None`: unreadable).
    pub histogram: Option<BTreeMap<i8, u64>>,
    /// Wrapping sum of digest elements.
    pub digest: u64,
}

/// A compressed chunk ready to be stored.
#[derive(Debug, Clone)]
pub struct EncodedChunk {
    /// Number of raw values.
    pub raw_len: usize,
    /// Checksum of the raw values.
    pub checksum: u64,
    /// The coded values ([`codec`]: zstd frame, context mixing or constant).
    pub data: Vec<u8>,
}

impl EncodedChunk {
    /// Codes raw values (`contexts`: see [`codec::encode`]).
    pub fn encode(
        raw: &[i8],
        coding: codec::ChunkCoding,
        contexts: impl FnOnce() -> codec::Contexts,
    ) -> Result<EncodedChunk> {
        Self::encode_with_checksum(raw, checksum(as_bytes(raw)), coding, contexts)
    }

    /// [`EncodedChunk::encode`] given the raw values' [`checksum()`] (computed for
    /// several chunks at once by [`crate::store::checksum::checksums`]).
    pub fn encode_with_checksum(
        raw: &[i8],
        checksum: u64,
        coding: codec::ChunkCoding,
        contexts: impl FnOnce() -> codec::Contexts,
    ) -> Result<EncodedChunk> {
        Ok(EncodedChunk {
            raw_len: raw.len(),
            checksum,
            data: codec::encode(as_bytes(raw), coding, contexts)?,
        })
    }
}

/// Statistics of a finished block, stored with it.
#[derive(Debug, Clone, Default)]
pub struct BlockStats {
    /// Number of positions.
    pub positions: u64,
    /// Compressed bytes.
    pub bytes: u64,
    /// Compute + compress seconds.
    pub seconds: f64,
    /// Value histogram.
    pub histogram: BTreeMap<i8, u64>,
    /// Wrapping sum of digest elements.
    pub digest: u64,
}

impl BlockStats {
    /// Adds another block's statistics (a layer's totals).
    pub fn merge(&mut self, add: &BlockStats) {
        self.positions += add.positions;
        self.bytes += add.bytes;
        self.seconds += add.seconds;
        self.digest = self.digest.wrapping_add(add.digest);
        for (&v, &c) in &add.histogram {
            *self.histogram.entry(v).or_default() += c;
        }
    }
}

/// Values in chunk `chunk` of a block of `size` positions cut into chunks of
/// `chunk_positions` (0 past the block's end).
pub fn chunk_len(size: u64, chunk_positions: u64, chunk: u64) -> usize {
    size.saturating_sub(chunk.saturating_mul(chunk_positions))
        .min(chunk_positions) as usize
}

/// Views `i8` values as bytes.
pub fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
}

/// Values as their bytes, to decode into.
pub fn as_bytes_mut(values: &mut [i8]) -> &mut [u8] {
    // SAFETY: as for `as_bytes`; both types accept every bit pattern.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len()) }
}

/// Block key text: the key's numbers joined with dots (`4.3.3`).
pub fn counts_key(counts: &[u8]) -> String {
    counts
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// SQLite page size of a new file whose chunks hold `chunk_positions` values: a
/// chunk of a few KiB (small chunks make cold probes fast) would leave most of a
/// 4 KiB page empty, while in 64 KiB pages many share one (the 7-stone Morris file
/// in chunks of 8,192: 4.5% over its chunks' bytes instead of 47%); chunks of
/// 65,536 values (10-20 KiB coded) fill 4 KiB overflow pages best (3x4: 5.6%
/// instead of 19%).
pub fn page_bytes(chunk_positions: u64) -> i64 {
    if chunk_positions <= 16384 {
        1 << 16
    } else {
        1 << 12
    }
}

/// Metadata key saying how chunk checksums are computed: `keyed` (of the values
/// and the chunk's place, see [`checksum::chunk_checksum`]); absent in older files
/// (of the values only).
pub const CHUNK_CHECKSUM_KEY: &str = "chunk_checksum";

/// A format this tb does not read: a `format_version` newer than it knows, or a
/// feature key's value it does not know ([`StoreErrorKind::Version`]).
pub fn unknown_format(message: String) -> anyhow::Error {
    StoreError::new(StoreErrorKind::Version, message).into()
}

/// `tb info`'s line on a file's format: its `format_version` and its features
/// (docs/FORMAT.md §9.11), `packed` when the version packs them (a file from before
/// the feature keys): `format 7: value_form=boxes-left loony=false ...`.
pub fn format_line<'a>(
    version: u32,
    packed: bool,
    features: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let features: Vec<String> = features
        .into_iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    let packed = if packed {
        " (legacy, packing the features)"
    } else {
        ""
    };
    format!("format {version}{packed}: {}", features.join(" "))
}

/// Refuses feature keys a file of `version` does not write: in a file of a legacy
/// version, which packs its features, a tb before the keys never wrote them, so
/// they mean tampering. `features` are a game's feature keys, `written` the rows
/// the file has (for the current version every feature key is among them).
pub fn check_no_feature_keys(
    meta: &BTreeMap<String, String>,
    written: &[(&str, String)],
    features: &[(&str, String)],
    version: u32,
) -> Result<()> {
    let stray = features
        .iter()
        .find(|(key, _)| meta.contains_key(*key) && !written.iter().any(|(k, _)| k == key));
    match stray {
        Some((key, _)) => Err(StoreError::damaged(
            Place::Meta(key.to_string()),
            format!("the file's value format {version} is from before the feature keys"),
        )
        .into()),
        None => Ok(()),
    }
}

/// An open tablebase file.
pub struct Store {
    conn: Connection,
    /// What every chunk read from this file must satisfy.
    rules: ChunkRules,
    /// How its reads are bounded and its schema watched.
    reads: reads::Reads,
}

/// Bounds set by [`Store::bound_reads`], lifted when dropped.
#[must_use = "the bounds hold while this lives"]
pub struct BoundReads<'a> {
    store: &'a Store,
    before: (bool, u64),
}

impl Drop for BoundReads<'_> {
    fn drop(&mut self) {
        self.store.reads.restore(self.before);
    }
}

/// What a chunk read from a file must satisfy besides its length and checksum.
#[derive(Debug, Clone)]
pub struct ChunkRules {
    /// Checksums include the chunk's place ([`CHUNK_CHECKSUM_KEY`]).
    keyed: bool,
    /// The values the game allows: a chunk holding another is corrupt.
    pub values: RangeInclusive<i8>,
    /// Context-mixing chunks may occur (not in files of a format before it).
    pub mixing: bool,
    /// Context-mixing chunks with a checksum of their coded bytes
    /// ([`codec::TAG_MIX_CHECKED`]) may occur (not in files of a format before it).
    pub checked_mixing: bool,
    /// Archival chunks ([`codec::TAG_ARCHIVE`]) may occur.
    pub archive: bool,
    /// Fast archival chunks ([`codec::TAG_ARCHIVE_FAST`]) may occur.
    pub archive_fast: bool,
}

impl ChunkRules {
    fn new(keyed: bool) -> ChunkRules {
        ChunkRules {
            keyed,
            values: i8::MIN..=i8::MAX,
            mixing: true,
            checked_mixing: true,
            archive: true,
            archive_fast: true,
        }
    }

    /// Allows exactly the codings of `family` (a chunk of another is corrupt).
    pub fn allow(&mut self, family: codec::Family) {
        use codec::Family::{Archive, ArchiveFast, Mix, MixChecked};
        self.mixing = matches!(family, Mix | MixChecked);
        self.checked_mixing = family == MixChecked;
        self.archive = family == Archive;
        self.archive_fast = family == ArchiveFast;
    }
}

impl Store {
    /// Opens (creating if needed) a file for building, bringing its schema up to
    /// date; a new file gets the page size that suits chunks of `chunk_positions`
    /// ([`page_bytes`]).
    pub fn open_for_build(path: &Path, chunk_positions: u64) -> Result<Store> {
        let conn =
            Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        // Like auto_vacuum, only takes effect on a new file.
        conn.pragma_update(None, "page_size", page_bytes(chunk_positions))?;
        // Pruned layers free many pages; incremental vacuum hands them back (it must
        // be chosen before the first table exists, so only new files get it).
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // Keep the WAL from staying as large as the largest block ever written.
        conn.pragma_update(None, "journal_size_limit", 64i64 << 20)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut store = Store {
            conn,
            rules: ChunkRules::new(true),
            reads: reads::Reads::unwatched(),
        };
        store.migrate()?;
        check_schema(&store.conn).map_err(|e| schema_error(path, e))?;
        store.rules.keyed = match keyed_checksums(&store.conn, path)? {
            Some(keyed) => keyed,
            // A new file (no chunk yet) gets keyed checksums; an older one in the
            // middle of its build keeps its rule.
            None => {
                let empty: bool =
                    store
                        .conn
                        .query_row("SELECT NOT EXISTS (SELECT 1 FROM chunks)", [], |r| r.get(0))?;
                if empty {
                    store.set_meta(&[(CHUNK_CHECKSUM_KEY, "keyed".to_string())])?;
                }
                empty
            }
        };
        Ok(store)
    }

    /// Opens an existing file read-only (probes may run during a build).
    pub fn open_read(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::missing(path).into());
        }
        check_file_path(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = if quiet_wal_file(path) {
            // A WAL-mode file (finished by an older tb) that nobody is writing:
            // read it as immutable, so that no -wal/-shm files appear beside it and
            // read-only media work.
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .with_context(|| format!("cannot open {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        // A downloaded file is untrusted: no writes, no functions or virtual tables
        // called from its schema, no direct edits of schema or shadow tables, cell
        // sizes checked as pages are read.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        conn.pragma_update(None, "query_only", true)?;
        conn.pragma_update(None, "cell_size_check", true)?;
        // No single value (a chunk, a metadata text) may make a reader allocate
        // more than a chunk can legitimately take.
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            MAX_VALUE_BYTES,
        )?;
        // Temporary tables and indices (none of our queries needs them) stay small
        // and in memory, never gigabytes of temporary files.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        let reads = reads::Reads::watch(&mut conn)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| {
                anyhow::Error::new(e).context(StoreError::new(
                    StoreErrorKind::NotATable,
                    format!("{} is not a tablebase file (not SQLite?)", path.display()),
                ))
            })?;
        check_version(version, path)?;
        if version == 0 {
            // No schema at all: an empty or foreign SQLite file.
            return Err(schema_error(
                path,
                anyhow::anyhow!("it has no tablebase schema"),
            ));
        }
        if version < SCHEMA_VERSION {
            return Err(StoreError::new(
                StoreErrorKind::Version,
                format!(
                    "{} has schema version {version}, this tb reads {SCHEMA_VERSION}; open it once with `tb build` to upgrade",
                    path.display()
                ),
            )
            .into());
        }
        reads.watch_schema_from_now(&conn)?;
        check_schema(&conn).map_err(|e| schema_error(path, e))?;
        let keyed = keyed_checksums(&conn, path)?.unwrap_or(false);
        Ok(Store {
            conn,
            rules: ChunkRules::new(keyed),
            reads,
        })
    }

    /// Bounds the reads of this store until the returned guard is dropped: with
    /// `cached_only`, nothing is read (a read fails with [`reads::NotCached`]; a
    /// [`reader::ChunkReader`] answers what it has cached); with a `deadline`, a
    /// statement of a read-only store still running then is interrupted (a
    /// [`StoreErrorKind::Sqlite`] failure).
    pub fn bound_reads(&self, cached_only: bool, deadline: Option<Instant>) -> BoundReads<'_> {
        BoundReads {
            store: self,
            before: self.reads.set(cached_only, deadline),
        }
    }

    /// Checks before a read of data (see [`reads`]): reads on, the file not
    /// refused, its schema as validated or still a tablebase's.
    fn before_read(&self) -> Result<()> {
        self.reads.before_read(&self.conn, |conn| {
            let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if version != SCHEMA_VERSION {
                bail!("schema version {version}, not {SCHEMA_VERSION}");
            }
            check_schema(conn)
        })
    }

    /// A failed statement of a read as an error: what [`reads::classify`] makes
    /// of it, else damage of `place` if it names one, else the SQLite error.
    fn read_failure(&self, error: rusqlite::Error, place: Option<Place>) -> anyhow::Error {
        if let Some(store) = reads::classify(&self.reads, &self.conn, &error) {
            return anyhow::Error::new(error).context(store);
        }
        match place {
            // A tampered row (a value of the wrong type) says which chunk or block.
            Some(place) => {
                anyhow::Error::new(error).context(StoreError::damaged(place, "a bad row"))
            }
            None => error.into(),
        }
    }

    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?;
        check_version(version, Path::new("the file"))?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)
                .with_context(|| format!("schema migration {} failed", i + 1))?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// The rules chunks read from this file must satisfy, for the game to narrow
    /// (by default every value and coding is allowed): a chunk that breaks them is
    /// an error.
    pub fn chunk_rules(&mut self) -> &mut ChunkRules {
        &mut self.rules
    }

    /// The metadata of the tablebase file at `path` (opened read-only), errors
    /// naming the file.
    pub fn meta_of(path: &Path) -> Result<BTreeMap<String, String>> {
        Store::open_read(path)?
            .meta()
            .with_context(|| path.display().to_string())
    }

    /// All metadata.
    pub fn meta(&self) -> Result<BTreeMap<String, String>> {
        let mut stmt = self.conn.prepare("SELECT key, value FROM meta")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Writes metadata keys (one transaction).
    pub fn set_meta(&mut self, entries: &[(&str, String)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        put_meta(&tx, entries)?;
        tx.commit()?;
        Ok(())
    }

    /// Every layer row, by n.
    pub fn layers(&self) -> Result<BTreeMap<usize, LayerRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT n, status, positions, bytes, seconds, histogram, digest FROM layers ORDER BY n",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, f64>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, Option<String>>(6)?,
            ))
        })?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (n, status, positions, bytes, seconds, histogram, digest) = row?;
            // Layer numbers are the games' (each game's layout check names the
            // ones it uses): Morabaraba's wide pairs reach 66,740 (FORMAT §9.4).
            if !(0..=u32::MAX as i64).contains(&n) || positions < 0 || bytes < 0 {
                return Err(StoreError::damaged(
                    Place::File,
                    format!(
                        "the layers table has a row with impossible numbers (layer {n}, {positions} positions, {bytes} bytes)"
                    ),
                )
                .into());
            }
            let histogram = match histogram {
                Some(h) => parse_histogram(&h)
                    .map_err(|e| e.context(StoreError::corrupt(Place::Layer(n as usize))))?,
                None => BTreeMap::new(),
            };
            out.insert(
                n as usize,
                LayerRow {
                    n: n as usize,
                    status: LayerStatus::parse(&status)?,
                    positions: positions as u64,
                    bytes: bytes as u64,
                    seconds,
                    histogram,
                    digest,
                },
            );
        }
        Ok(out)
    }

    /// Every row of the `blocks` table, by (layer, key text); a histogram that does
    /// not parse is `None`.
    pub fn block_rows(&self) -> Result<BTreeMap<(i64, String), BlockRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT n, counts, positions, chunks, bytes, histogram, digest FROM blocks")?;
        let rows = stmt.query_map([], |r| {
            let histogram: String = r.get(5)?;
            Ok((
                (r.get::<_, i64>(0)?, r.get::<_, String>(1)?),
                BlockRow {
                    positions: r.get(2)?,
                    chunks: r.get(3)?,
                    bytes: r.get(4)?,
                    histogram: parse_histogram(&histogram).ok(),
                    digest: r.get::<_, i64>(6)? as u64,
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every chunk row without its data: (layer, key text, chunk) -> (values it
    /// claims, coded bytes).
    pub fn chunk_rows(&self) -> Result<BTreeMap<ChunkPlaceRow, (i64, u64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT n, counts, chunk, raw_len, length(data) FROM chunks")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?, r.get(2)?),
                (r.get(3)?, r.get::<_, i64>(4)? as u64),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Marks layer `n` as building (if it has no row yet).
    pub fn begin_layer(&mut self, n: usize, positions: u64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO layers(n, status, positions) VALUES (?1, 'building', ?2) ON CONFLICT(n) DO NOTHING",
            params![n as i64, positions as i64],
        )?;
        Ok(())
    }

    /// Stats of every finished block of layer `n`, by counts key.
    pub fn finished_blocks(&self, n: usize) -> Result<BTreeMap<String, BlockStats>> {
        let mut stmt = self.conn.prepare(
            "SELECT counts, positions, bytes, seconds, histogram, digest FROM blocks WHERE n = ?1",
        )?;
        let rows = stmt.query_map(params![n as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (key, positions, bytes, seconds, histogram, digest) = row?;
            let histogram = parse_histogram(&histogram).context("corrupt block histogram")?;
            out.insert(
                key,
                BlockStats {
                    positions: positions as u64,
                    bytes: bytes as u64,
                    seconds,
                    histogram,
                    digest: digest as u64,
                },
            );
        }
        Ok(out)
    }

    /// Stores one block (its chunks and its row) in one transaction. The same
    /// transaction deletes the chunks of the blocks in `drops` (layer, key: no
    /// remaining block reads them; their layers are marked pruned so that readers
    /// stop using them) and, with `finish`, publishes layer `n` and deletes the
    /// layers it names.
    pub fn write_block(
        &mut self,
        n: usize,
        counts: &[u8],
        chunks: &[EncodedChunk],
        stats: &BlockStats,
        drops: &[(usize, String)],
        finish: Option<&LayerFinish>,
    ) -> Result<()> {
        let record = BlockRecord {
            chunk_count: chunks.len() as u64,
            drops,
            finish,
            meta_put: &[],
            meta_delete: &[],
        };
        self.record_block(n, counts, chunks, stats, &record)
    }

    /// [`Store::write_block`] for a block computed elsewhere (a shard,
    /// [`crate::retro::shard`]): `chunks` may be empty (its values stay in the
    /// shard) while the block's row says `record.chunk_count`, and catalog rows in
    /// `meta` are written and deleted in the same transaction.
    pub fn record_block(
        &mut self,
        n: usize,
        counts: &[u8],
        chunks: &[EncodedChunk],
        stats: &BlockStats,
        record: &BlockRecord,
    ) -> Result<()> {
        let BlockRecord {
            chunk_count,
            drops,
            finish,
            meta_put,
            meta_delete,
        } = *record;
        let key = counts_key(counts);
        let keyed = self.rules.keyed;
        let tx = self.conn.savepoint()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO chunks(n, counts, chunk, raw_len, checksum, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (i, c) in chunks.iter().enumerate() {
                let place = keyed.then_some((n, key.as_str(), i as u64));
                // Both checksums a chunk may carry are keyed with its place.
                let mut data = std::borrow::Cow::Borrowed(&c.data);
                if codec::decodes_in_part(&data) {
                    codec::place_coded_checksum(data.to_mut(), place);
                }
                insert.execute(params![
                    n as i64,
                    key,
                    i as i64,
                    c.raw_len as i64,
                    placed(c.checksum, place) as i64,
                    data.as_slice()
                ])?;
            }
        }
        put_block_row(&tx, n, &key, chunk_count, stats)?;
        put_meta(&tx, meta_put)?;
        for k in meta_delete {
            tx.execute("DELETE FROM meta WHERE key = ?1", params![k])?;
        }
        {
            // Wilson's disk saving: a block goes as soon as no remaining block needs it.
            let mut delete =
                tx.prepare_cached("DELETE FROM chunks WHERE n = ?1 AND counts = ?2")?;
            let mut prune =
                tx.prepare_cached("UPDATE layers SET status = 'pruned' WHERE n = ?1")?;
            for (layer, key) in drops {
                delete.execute(params![*layer as i64, key])?;
                prune.execute(params![*layer as i64])?;
            }
        }
        if let Some(f) = finish {
            finish_layer(&tx, n, f)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Writes the row of a block whose chunks are not stored (a pruned layer's, when
    /// a file is recoded): it says `chunks` chunks.
    pub fn write_block_row(
        &mut self,
        n: usize,
        counts: &[u8],
        chunks: u64,
        stats: &BlockStats,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        put_block_row(&tx, n, &counts_key(counts), chunks, stats)?;
        tx.commit()?;
        Ok(())
    }

    /// Forgets a finished block (a shard found damaged before its readers ran):
    /// its row, any chunks and the metadata `meta_delete` go, and its layer is
    /// building again, in one transaction.
    pub fn forget_block(&mut self, n: usize, counts: &[u8], meta_delete: &[String]) -> Result<()> {
        let tx = self.conn.transaction()?;
        delete_block(&tx, n, counts)?;
        tx.execute(
            "UPDATE layers SET status = 'building' WHERE n = ?1",
            params![n as i64],
        )?;
        for k in meta_delete {
            tx.execute("DELETE FROM meta WHERE key = ?1", params![k])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Removes blocks `keys` of layer `n` (their rows and chunks) and the
    /// metadata keys `meta_delete`, and writes the metadata `entries`, in one
    /// transaction, the layer's row left as it is: blocks and keys kept only
    /// while a file is built go as the file is declared done.
    pub fn remove_blocks_and_set_meta(
        &mut self,
        n: usize,
        keys: &[Vec<u8>],
        meta_delete: &[String],
        entries: &[(&str, String)],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for counts in keys {
            delete_block(&tx, n, counts)?;
        }
        delete_meta_keys(&tx, meta_delete)?;
        put_meta(&tx, entries)?;
        tx.commit()?;
        Ok(())
    }

    /// Deletes metadata keys (one transaction).
    pub fn delete_meta(&mut self, keys: &[String]) -> Result<()> {
        let tx = self.conn.transaction()?;
        delete_meta_keys(&tx, keys)?;
        tx.commit()?;
        Ok(())
    }

    /// Begins a batch: the writes of [`Store::record_block`] and
    /// [`Store::finish_layer`] until [`Store::commit_batch`] are one transaction
    /// (each call's own a savepoint inside it), so that many small records cost
    /// one commit. Other writes are refused inside a batch.
    pub fn begin_batch(&mut self) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    }

    /// Commits the batch [`Store::begin_batch`] began.
    pub fn commit_batch(&mut self) -> Result<()> {
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Undoes the batch [`Store::begin_batch`] began (nothing of it is written).
    pub fn rollback_batch(&mut self) {
        // Fails only when no batch is open, which leaves nothing to undo.
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    /// Publishes layer `n` on its own (used when every block was stored before a crash).
    pub fn finish_layer(&mut self, n: usize, finish: &LayerFinish) -> Result<()> {
        let tx = self.conn.savepoint()?;
        finish_layer(&tx, n, finish)?;
        tx.commit()?;
        Ok(())
    }

    /// Reads and checks one chunk of a game whose chunks need no contexts
    /// (zstd-coded): its `len` raw values (the length the layout gives it).
    pub fn read_chunk(&self, n: usize, counts: &[u8], chunk: u64, len: usize) -> Result<Vec<i8>> {
        self.read_chunk_with(n, counts, chunk, len, &|_| codec::Contexts::default())
    }

    /// Reads and checks one chunk: its `len` raw values (the length the layout
    /// gives it). `contexts(len)` gives the context-mixing contexts of the chunk
    /// (see [`codec`]). A wrong length, a checksum mismatch, a value the game does
    /// not allow or a bad frame is an error, never wrong values.
    pub fn read_chunk_with(
        &self,
        n: usize,
        counts: &[u8],
        chunk: u64,
        len: usize,
        contexts: &dyn Fn(usize) -> codec::Contexts,
    ) -> Result<Vec<i8>> {
        self.stored_chunk(n, counts, chunk)?.decode(len, contexts)
    }

    /// One stored chunk, still coded (decode it with [`StoredChunk::decode`]); a
    /// missing one is an error.
    pub fn stored_chunk(&self, n: usize, counts: &[u8], chunk: u64) -> Result<StoredChunk> {
        let key = counts_key(counts);
        let place = Place::Chunk {
            layer: n,
            key: key.clone(),
            chunk,
        };
        self.before_read()?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT chunk, raw_len, checksum, data FROM chunks WHERE n = ?1 AND counts = ?2 AND chunk = ?3",
            )
            .map_err(|e| self.read_failure(e, None))?;
        let row = stmt
            .query_row(params![n as i64, key, chunk as i64], |r| {
                StoredChunk::from_row(n, &key, &self.rules, r)
            })
            .optional()
            .map_err(|e| self.read_failure(e, Some(place.clone())))?;
        row.ok_or_else(|| StoreError::damaged(place, "missing from the file").into())
    }

    /// Every stored chunk of a block, still coded, in chunk order (decode them with
    /// [`StoredChunk::decode`], in parallel if you like).
    pub fn block_chunks(&self, n: usize, counts: &[u8]) -> Result<Vec<StoredChunk>> {
        let key = counts_key(counts);
        let place = Place::Block {
            layer: n,
            key: key.clone(),
        };
        self.before_read()?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT chunk, raw_len, checksum, data FROM chunks WHERE n = ?1 AND counts = ?2 ORDER BY chunk",
            )
            .map_err(|e| self.read_failure(e, None))?;
        let rows = stmt
            .query_map(params![n as i64, key], |r| {
                StoredChunk::from_row(n, &key, &self.rules, r)
            })
            .map_err(|e| self.read_failure(e, None))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.read_failure(e, Some(place)))
    }

    /// Returns free pages to the file system, truncates the WAL and leaves WAL mode
    /// (end of a build).
    ///
    /// At the end of a big build most pages are free (pruned layers) and the few
    /// live ones (the book) are scattered: `PRAGMA incremental_vacuum` then moves
    /// pages one by one through the WAL (minutes for a 4 GB 3x5 file), while
    /// `VACUUM` copies only the live pages into a fresh file. So: `VACUUM` when at
    /// least half of the file is free, else the incremental pragma.
    pub fn compact(&mut self) -> Result<()> {
        let pragma = |name: &str| -> Result<i64> {
            Ok(self.conn.pragma_query_value(None, name, |r| r.get(0))?)
        };
        let (pages, free) = (pragma("page_count")?, pragma("freelist_count")?);
        if free * 2 >= pages {
            self.conn.execute_batch("VACUUM")?;
        } else {
            // The pragma frees pages one step (result row) at a time: run it to the end.
            let mut vacuum = self.conn.prepare("PRAGMA incremental_vacuum")?;
            let mut steps = vacuum.query([])?;
            while steps.next()?.is_some() {}
        }
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        // A finished file leaves WAL mode, so that readers (read-only) create no
        // -wal/-shm files beside it and read-only media work. A reader still
        // attached keeps the file in WAL mode; that is harmless.
        let _ = self
            .conn
            .query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()));
        Ok(())
    }

    /// Bytes on disk: the database pages plus the write-ahead log (which holds a
    /// whole block's chunks until the next checkpoint).
    pub fn disk_bytes(&self) -> Result<u64> {
        let wal = self
            .conn
            .path()
            .map(|p| format!("{p}-wal"))
            .and_then(|wal| std::fs::metadata(wal).ok())
            .map_or(0, |m| m.len());
        Ok(self.file_bytes()? + wal)
    }

    /// Total size of the file's pages in bytes.
    pub fn file_bytes(&self) -> Result<u64> {
        let pages: i64 = self
            .conn
            .pragma_query_value(None, "page_count", |r| r.get(0))?;
        let size: i64 = self
            .conn
            .pragma_query_value(None, "page_size", |r| r.get(0))?;
        Ok((pages * size) as u64)
    }
}

/// A chunk row as stored: still coded.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    /// Layer.
    pub n: usize,
    /// Block key (`counts_key`).
    pub key: String,
    /// Chunk number in its block.
    pub chunk: u64,
    /// Values the row says it holds.
    pub raw_len: i64,
    /// Checksum of the raw values.
    pub checksum: u64,
    /// The coded values.
    pub data: Vec<u8>,
    /// What it must satisfy.
    rules: ChunkRules,
}

impl StoredChunk {
    /// A chunk read from a shard file ([`crate::retro::shard`]): its checksums are
    /// of the values (and coded bytes) alone, its place being in the shard's
    /// checked header; `values` are the values the game allows.
    pub fn from_shard(
        n: usize,
        key: &str,
        chunk: u64,
        chunk_data: (i64, u64, Vec<u8>),
        values: RangeInclusive<i8>,
    ) -> StoredChunk {
        let (raw_len, checksum, data) = chunk_data;
        StoredChunk {
            n,
            key: key.to_string(),
            chunk,
            raw_len,
            checksum,
            data,
            rules: ChunkRules {
                values,
                ..ChunkRules::new(false)
            },
        }
    }

    fn from_row(
        n: usize,
        key: &str,
        rules: &ChunkRules,
        r: &rusqlite::Row,
    ) -> rusqlite::Result<StoredChunk> {
        Ok(StoredChunk {
            n,
            rules: rules.clone(),
            key: key.to_string(),
            chunk: r.get::<_, i64>(0)? as u64,
            raw_len: r.get(1)?,
            checksum: r.get::<_, i64>(2)? as u64,
            data: r.get(3)?,
        })
    }

    /// Decodes and checks the values: their number (`expected`, which the layout
    /// gives), the checksum, then that every value is one the game allows.
    /// `contexts(len)` as for [`Store::read_chunk_with`].
    pub fn decode(
        &self,
        expected: usize,
        contexts: impl FnOnce(usize) -> codec::Contexts,
    ) -> Result<Vec<i8>> {
        self.decode_part(expected, expected, contexts)
    }

    /// The first `wanted` values of the chunk (of `expected`), checked as
    /// [`StoredChunk::decode`] checks them all; all of them unless the chunk
    /// [`codec::decodes_in_part`], whose checksum of coded bytes vouches for any
    /// part (the checksum of raw values is checked whenever all are decoded).
    /// What a probe that needs a few values of each chunk asks for.
    pub fn decode_part(
        &self,
        expected: usize,
        wanted: usize,
        contexts: impl FnOnce(usize) -> codec::Contexts,
    ) -> Result<Vec<i8>> {
        let len = self.checked_len(expected, wanted)?;
        let raw = codec::decode(&self.data, len, || contexts(len))
            .map_err(|e| e.context(StoreError::corrupt(self.place())))?;
        if len == expected {
            self.check_raw_sum(checksum(&raw))?;
        }
        let values: Vec<i8> = raw.into_iter().map(|b| b as i8).collect();
        self.check_range(&values)?;
        Ok(values)
    }

    /// All the chunk's values decoded into `out` (of the length its block gives
    /// it), the row's claims and any checksum of coded bytes checked; the values
    /// themselves are checked by [`StoredChunk::check_decoded`] with their
    /// [`checksum()`], which the caller computes (several chunks at once with
    /// [`checksum::checksum_each`]) before anything changes them.
    pub fn decode_into_unchecked(
        &self,
        out: &mut [i8],
        contexts: impl FnOnce(usize) -> codec::Contexts,
    ) -> Result<()> {
        let len = self.checked_len(out.len(), out.len())?;
        codec::decode_into(&self.data, as_bytes_mut(out), || contexts(len))
            .map_err(|e| e.context(StoreError::corrupt(self.place())))
    }

    /// Checks the chunk's values as decoded, whose [`checksum()`] is `sum`: as
    /// [`StoredChunk::decode`] checks them.
    pub fn check_decoded(&self, sum: u64, values: &[i8]) -> Result<()> {
        self.check_raw_sum(sum)?;
        self.check_range(values)
    }

    fn check_raw_sum(&self, sum: u64) -> Result<()> {
        if placed(sum, self.keyed_place()) != self.checksum {
            return Err(self.corrupt("checksum mismatch"));
        }
        Ok(())
    }

    /// Where the chunk is, for errors.
    fn place(&self) -> Place {
        Place::Chunk {
            layer: self.n,
            key: self.key.clone(),
            chunk: self.chunk,
        }
    }

    /// The chunk's place as its checksums are keyed with, in files that key them.
    fn keyed_place(&self) -> Option<checksum::ChunkPlace<'_>> {
        self.rules
            .keyed
            .then_some((self.n, self.key.as_str(), self.chunk))
    }

    fn corrupt(&self, why: &str) -> anyhow::Error {
        StoreError::damaged(self.place(), why).into()
    }

    /// How many of the `expected` values to decode when `wanted` are asked for, once
    /// the row's claims (length, coding) and the coded bytes' checksum are checked:
    /// all unless the coding's checksum of coded bytes vouches for any part.
    fn checked_len(&self, expected: usize, wanted: usize) -> Result<usize> {
        let raw_len = self.raw_len;
        if expected as u64 > MAX_CHUNK_POSITIONS || expected as i64 != raw_len {
            return Err(self.corrupt(&format!(
                "it claims {raw_len} values, its block needs {expected}"
            )));
        }
        let raw_len = raw_len as usize;
        let tag = self.data.first().copied();
        if (!self.rules.mixing && tag == Some(codec::TAG_MIX))
            || (!self.rules.checked_mixing && tag == Some(codec::TAG_MIX_CHECKED))
            || (!self.rules.archive && tag == Some(codec::TAG_ARCHIVE))
            || (!self.rules.archive_fast && tag == Some(codec::TAG_ARCHIVE_FAST))
        {
            return Err(self.corrupt(
                "a context-mixing chunk of a kind that files of this format do not hold",
            ));
        }
        match codec::coded_checksum(&self.data) {
            Some((sum, coded)) => {
                if placed(checksum(coded), self.keyed_place()) != sum {
                    return Err(self.corrupt("checksum of the coded bytes mismatch"));
                }
                Ok(wanted.min(raw_len))
            }
            None => Ok(raw_len),
        }
    }

    /// Every value within what the game allows.
    fn check_range(&self, values: &[i8]) -> Result<()> {
        let allowed = &self.rules.values;
        // min and max in one pass (vectorised), then the rare search for the culprit.
        let (low, high) = values
            .iter()
            .fold((i8::MAX, i8::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let in_range = values.is_empty() || (allowed.contains(&low) && allowed.contains(&high));
        if !in_range && let Some(bad) = values.iter().find(|v| !allowed.contains(v)) {
            return Err(self.corrupt(&format!(
                "it holds the value {bad}, outside what the game allows ({}..={})",
                allowed.start(),
                allowed.end()
            )));
        }
        Ok(())
    }
}

/// What [`Store::record_block`] writes besides the block's chunks and statistics.
#[derive(Debug, Clone, Copy)]
pub struct BlockRecord<'a> {
    /// Chunks the block's row says it has (stored here or not).
    pub chunk_count: u64,
    /// Blocks (layer, key) no later block reads: their chunks are deleted, their
    /// layers marked pruned.
    pub drops: &'a [(usize, String)],
    /// The layer's publication, with its last block.
    pub finish: Option<&'a LayerFinish>,
    /// Metadata rows written in the same transaction.
    pub meta_put: &'a [(String, String)],
    /// Metadata keys deleted in the same transaction.
    pub meta_delete: &'a [String],
}

/// What publishing a layer writes.
#[derive(Debug, Clone)]
pub struct LayerFinish {
    /// Status the finished layer gets: complete or book.
    pub status: LayerStatus,
    /// Totals over the layer's blocks.
    pub stats: BlockStats,
    /// Layers to delete (no remaining block reads them, and they are not kept).
    pub prune: Vec<usize>,
}

/// Reads a histogram stored as a JSON object `{"value": count}`.
fn parse_histogram(text: &str) -> Result<BTreeMap<i8, u64>> {
    Ok(serde_json::from_str(text)?)
}

/// Deletes metadata keys inside a transaction.
fn delete_meta_keys(tx: &rusqlite::Connection, keys: &[String]) -> Result<()> {
    for k in keys {
        tx.execute("DELETE FROM meta WHERE key = ?1", params![k])?;
    }
    Ok(())
}

/// Writes metadata `entries` (new keys added, others replaced) in `tx`.
fn put_meta<K: AsRef<str>>(tx: &rusqlite::Connection, entries: &[(K, String)]) -> Result<()> {
    for (k, v) in entries {
        let k = k.as_ref();
        tx.execute("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", params![k, v])?;
    }
    Ok(())
}

/// Deletes block `counts` of layer `n` in `tx`: its chunks and its row.
fn delete_block(tx: &rusqlite::Connection, n: usize, counts: &[u8]) -> Result<()> {
    let key = counts_key(counts);
    for sql in [
        "DELETE FROM chunks WHERE n = ?1 AND counts = ?2",
        "DELETE FROM blocks WHERE n = ?1 AND counts = ?2",
    ] {
        tx.execute(sql, params![n as i64, key])?;
    }
    Ok(())
}

fn put_block_row(
    tx: &rusqlite::Connection,
    n: usize,
    key: &str,
    chunks: u64,
    stats: &BlockStats,
) -> Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO blocks(n, counts, positions, chunks, bytes, seconds, histogram, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            n as i64,
            key,
            stats.positions as i64,
            chunks as i64,
            stats.bytes as i64,
            stats.seconds,
            serde_json::to_string(&stats.histogram)?,
            stats.digest as i64
        ],
    )?;
    Ok(())
}

fn finish_layer(tx: &rusqlite::Connection, n: usize, f: &LayerFinish) -> Result<()> {
    tx.execute(
        "INSERT INTO layers(n, status, positions, bytes, seconds, histogram, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(n) DO UPDATE SET status = excluded.status, positions = excluded.positions, bytes = excluded.bytes,
         seconds = excluded.seconds, histogram = excluded.histogram, digest = excluded.digest",
        params![
            n as i64,
            f.status.as_str(),
            f.stats.positions as i64,
            f.stats.bytes as i64,
            f.stats.seconds,
            serde_json::to_string(&f.stats.histogram)?,
            checksum::digest_hex(f.stats.digest)
        ],
    )?;
    for &layer in &f.prune {
        tx.execute("DELETE FROM chunks WHERE n = ?1", params![layer as i64])?;
        tx.execute(
            "UPDATE layers SET status = 'pruned' WHERE n = ?1",
            params![layer as i64],
        )?;
    }
    Ok(())
}

/// A schema object of a file: (type, name, table, SQL).
type SchemaObject = (String, String, String, Option<String>);

/// The schema objects of a file, by type and name.
fn schema_objects(conn: &Connection) -> Result<Vec<SchemaObject>> {
    let mut stmt =
        conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The indices SQLite makes for the tables' primary keys that are not row ids (the
/// `sql` of such an index is NULL): (index, table).
const PRIMARY_KEY_INDICES: &[(&str, &str)] = &[
    ("sqlite_autoindex_blocks_1", "blocks"),
    ("sqlite_autoindex_chunks_1", "chunks"),
    ("sqlite_autoindex_meta_1", "meta"),
];

/// The schema objects a file of the current version has, as SQLite lists them once
/// the migrations are applied: each `CREATE TABLE` statement as the migrations
/// write it, and [`PRIMARY_KEY_INDICES`]. Read from the migrations' text, not by
/// applying them to an in-memory database, which took a sixth of a cold probe (a
/// test checks that both give the same).
fn expected_schema() -> &'static [SchemaObject] {
    static EXPECTED: std::sync::OnceLock<Vec<SchemaObject>> = std::sync::OnceLock::new();
    EXPECTED.get_or_init(|| {
        // Statements end with `;` at the end of a line (comments may hold one
        // elsewhere); SQLite keeps a statement's text from `CREATE` to before it.
        let mut statements = Vec::new();
        let mut statement: Vec<&str> = Vec::new();
        for line in MIGRATIONS.iter().flat_map(|migration| migration.lines()) {
            let comment = line.trim_start().starts_with("--");
            if statement.is_empty() && (comment || line.trim().is_empty()) {
                continue;
            }
            match line.trim_end().strip_suffix(';').filter(|_| !comment) {
                Some(end) => {
                    statement.push(end);
                    statements.push(statement.join("\n"));
                    statement.clear();
                }
                None => statement.push(line),
            }
        }
        let tables = statements.into_iter().filter_map(|code| {
            let name = code
                .strip_prefix("CREATE TABLE ")?
                .split_whitespace()
                .next()?;
            Some((
                "table".to_string(),
                name.to_string(),
                name.to_string(),
                Some(code.clone()),
            ))
        });
        let indices = PRIMARY_KEY_INDICES.iter().map(|&(index, table)| {
            (
                "index".to_string(),
                index.to_string(),
                table.to_string(),
                None,
            )
        });
        let mut objects: Vec<SchemaObject> = indices.chain(tables).collect();
        objects.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        objects
    })
}

/// A file's schema must be exactly ours: no views, triggers, extra indices or
/// look-alike tables that could change what a query returns.
fn check_schema(conn: &Connection) -> Result<()> {
    let actual = schema_objects(conn)?;
    let expected = expected_schema();
    if actual.as_slice() != expected {
        let differ: Vec<String> = actual
            .iter()
            .filter(|o| !expected.contains(o))
            .map(|(kind, name, ..)| format!("{kind} `{name}`"))
            .chain(
                expected
                    .iter()
                    .filter(|o| !actual.contains(o))
                    .map(|(kind, name, ..)| format!("no {kind} `{name}` as this tb writes it")),
            )
            .collect();
        bail!(
            "its schema differs from a tablebase's: {}",
            differ.join(", ")
        );
    }
    Ok(())
}

/// A tablebase path must name a regular file (or nothing yet, in a directory that
/// exists): never a device, a directory or a pipe, where SQLite would write its
/// journal and lock files beside it.
pub fn check_file_path(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => bail!("{} is not a regular file", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            match parent.map(std::fs::metadata) {
                None => Ok(()),
                Some(Ok(meta)) if meta.is_dir() => Ok(()),
                Some(_) => bail!(
                    "{} cannot be created: {} is not a directory",
                    path.display(),
                    parent.map_or(String::new(), |p| p.display().to_string())
                ),
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot use {}", path.display())),
    }
}

/// Whether `path` is an SQLite file in WAL mode (header bytes 18-19 are 2) with no
/// `-wal` or `-shm` file beside it: finished, and no connection is writing it.
fn quiet_wal_file(path: &Path) -> bool {
    let mut header = [0u8; 20];
    let read =
        std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header));
    let sidecar = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        Path::new(&name).exists()
    };
    read.is_ok()
        && header.starts_with(b"SQLite format 3\0")
        && header[18] == 2
        && header[19] == 2
        && !sidecar("-wal")
        && !sidecar("-shm")
}

/// A `file:` URI opening `path` immutable (characters special in URIs escaped).
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'%' | b'?' | b'#' | 0x80.. => uri.push_str(&format!("%{byte:02X}")),
            _ => uri.push(*byte as char),
        }
    }
    uri + "?immutable=1"
}

/// The file's chunk checksum rule: `Some(true)` keyed, `None` when it does not say
/// (older files: values only).
fn keyed_checksums(conn: &Connection, path: &Path) -> Result<Option<bool>> {
    let rule: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [CHUNK_CHECKSUM_KEY],
            |r| r.get(0),
        )
        .optional()?;
    match rule.as_deref() {
        None => Ok(None),
        Some("keyed") => Ok(Some(true)),
        Some(other) => Err(StoreError::new(
            StoreErrorKind::Version,
            format!(
                "{}: unknown `{CHUNK_CHECKSUM_KEY}` rule `{other}` (this tb knows `keyed`)",
                path.display()
            ),
        )
        .into()),
    }
}

fn check_version(version: i64, path: &Path) -> Result<()> {
    if version > SCHEMA_VERSION {
        return Err(StoreError::new(
            StoreErrorKind::Version,
            format!(
                "{} has schema version {version}, newer than this tb understands ({SCHEMA_VERSION}); use a newer tb",
                path.display()
            ),
        )
        .into());
    }
    Ok(())
}

/// A schema that is not a tablebase's ([`check_schema`]'s error) as a
/// [`StoreErrorKind::Schema`] failure of the file at `path`.
fn schema_error(path: &Path, error: anyhow::Error) -> anyhow::Error {
    error.context(StoreError::new(
        StoreErrorKind::Schema,
        format!("{} is not a tablebase file of this tb", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_schema_is_what_sqlite_makes_of_the_migrations() {
        let conn = Connection::open_in_memory().expect("an in-memory database");
        for sql in MIGRATIONS {
            conn.execute_batch(sql).expect("the migrations apply");
        }
        let applied = schema_objects(&conn).expect("the schema reads back");
        assert_eq!(expected_schema(), applied.as_slice());
    }

    fn page_size(path: &Path) -> i64 {
        let conn = Connection::open(path).unwrap();
        conn.query_row("PRAGMA page_size", [], |row| row.get(0))
            .unwrap()
    }

    fn page_size_of_new_file(chunk_positions: u64) -> i64 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        drop(Store::open_for_build(&path, chunk_positions).unwrap());
        page_size(&path)
    }

    #[test]
    fn small_chunks_get_large_pages_and_large_chunks_small_ones() {
        assert_eq!(page_size_of_new_file(8192), 1 << 16);
        assert_eq!(page_size_of_new_file(16384), 1 << 16);
        assert_eq!(page_size_of_new_file(65536), 1 << 12);
    }

    /// The layers table takes every layer number a game uses: Morabaraba's pairs
    /// with 10 stones or more are layers 66,536 + 16a + b, past 16 bits (a file
    /// with them was refused as damaged on its first resume).
    #[test]
    fn layer_numbers_past_16_bits_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        let numbers = [0, 65_535, 66_594, 66_740, u32::MAX as usize];
        let mut store = Store::open_for_build(&path, 2048).unwrap();
        for (i, &n) in numbers.iter().enumerate() {
            store.begin_layer(n, i as u64 + 1).unwrap();
        }
        drop(store);
        let layers = Store::open_for_build(&path, 2048)
            .unwrap()
            .layers()
            .unwrap();
        assert_eq!(layers.keys().copied().collect::<Vec<_>>(), numbers);
        assert_eq!(layers[&66_594].positions, 3);
    }

    #[test]
    fn an_existing_file_keeps_its_page_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        drop(Store::open_for_build(&path, 65536).unwrap());
        drop(Store::open_for_build(&path, 8192).unwrap());
        assert_eq!(page_size(&path), 1 << 12);
    }
}
