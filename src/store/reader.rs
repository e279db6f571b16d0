//! Reading values back: an open store plus a cache of decompressed chunks, so that a
//! warm batch of probes decompresses each chunk once (twice at most for a chunk
//! that can be decoded in part: first the part a probe needs, then whole when a
//! later read goes past it). Game-generic: a block is
//! named by its layer and a packed key the game chooses (any `u128` that identifies
//! the block inside its layer), and unpacked only when a chunk must be read.
//!
//! The readers of one file in one process (the threads of a `tb probe` batch, the
//! pool of a table in `tb serve` and the Python module) may share what they decode
//! ([`SharedChunks`]): each keeps its own cache, read without a lock, and a chunk
//! it does not hold is looked up among those the others decoded before it is
//! decoded again. An archival chunk costs about ten times a zstd one to decode, and
//! a batch on two threads decoded every chunk twice without it.

use super::Store;
use super::codec::Contexts;
use super::error::{Place, StoreError, StoreErrorKind};
use super::hash::KeyHash;
use super::reads::NotCached;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Decompressed values kept per reader, and in the cache its file's readers share
/// ([`SharedChunks`]): a warm batch should not decompress a chunk twice while the
/// stored layers it touches fit. The values are shared, not copied: a chunk held
/// by several readers' caches and the shared one takes its memory once, so the
/// readers of a file hold at most this much each and this much besides, and as
/// long as they read the same chunks, little more than this in all. (A 4x4+corners
/// book is 28 MB of values; Morris probes of one game touch a few hundred chunks.)
pub const CACHE_BYTES: u64 = 256 << 20;

/// (layer, packed block key, chunk number).
type ChunkKey = (u32, u128, u64);

/// A cached chunk's values: all of them, or (`whole` false) the first few, as much
/// as a probe needed (see [`ChunkReader::preload`]).
#[derive(Clone)]
struct Cached {
    /// A slice behind one pointer, not an `Arc<Vec>`: its pointer and length sit in
    /// the map's bucket, one memory read less before a warm probe's value.
    values: Arc<[i8]>,
    whole: bool,
}

impl Cached {
    /// Whether the value at `offset` is here (or, for a whole chunk, whether the
    /// chunk answers for it: [`at`] reports a chunk too short for its block).
    fn answers(&self, offset: usize) -> bool {
        self.whole || offset < self.values.len()
    }
}

#[derive(Default)]
struct ChunkCache {
    chunks: HashMap<ChunkKey, Cached, KeyHash>,
    order: VecDeque<ChunkKey>,
    /// Chunks that failed to read, with why: read (and reported as found) once,
    /// then refused at once.
    bad: HashMap<ChunkKey, StoreError, KeyHash>,
}

impl ChunkCache {
    /// Caches a chunk's values (replacing a part cached before unless `cached`
    /// is a shorter part), evicting the oldest chunk when `capacity` are held.
    fn insert(&mut self, chunk_key: ChunkKey, cached: Cached, capacity: usize) {
        if let Some(old) = self.chunks.get_mut(&chunk_key) {
            // Already in the eviction order.
            if cached.whole || cached.values.len() > old.values.len() {
                *old = cached;
            }
            return;
        }
        if self.order.len() >= capacity
            && let Some(old) = self.order.pop_front()
        {
            self.chunks.remove(&old);
        }
        self.order.push_back(chunk_key);
        self.chunks.insert(chunk_key, cached);
    }
}

/// Decoded chunks shared by the readers of one file ([`ChunkReader::share`]):
/// cheap to clone (every clone is the same cache), bounded like a reader's own
/// ([`CACHE_BYTES`]). Only for readers of the same file: chunks are known by
/// their place in it.
#[derive(Clone, Default)]
pub struct SharedChunks(Arc<Mutex<ChunkCache>>);

impl SharedChunks {
    /// An empty cache.
    pub fn new() -> SharedChunks {
        SharedChunks::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ChunkCache> {
        // A panic under the lock leaves whole entries: the cache stays usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The chunk, if held and answering for `offset` (`None`: any part).
    fn get(&self, chunk_key: ChunkKey, offset: Option<usize>) -> Option<Cached> {
        let cache = self.lock();
        let cached = cache.chunks.get(&chunk_key)?;
        offset
            .is_none_or(|offset| cached.answers(offset))
            .then(|| cached.clone())
    }
}

/// The context-mixing contexts of a chunk: `(layer, block key, first index,
/// length)` to one entry per value (see [`super::codec`]).
pub type ContextFn = Box<dyn Fn(usize, &[u8], u64, usize) -> Contexts + Send + Sync>;

/// The value at `offset` of a chunk; a chunk shorter than its layout says (a
/// tampered file) is an error, never a panic.
#[inline]
fn at(values: &[i8], offset: usize, (layer, _, chunk): ChunkKey) -> anyhow::Result<i8> {
    match values.get(offset) {
        Some(&v) => Ok(v),
        None => Err(StoreError::damaged(
            Place::Layer(layer as usize),
            format!(
                "chunk {chunk} holds {} values, too few for its block",
                values.len()
            ),
        )
        .into()),
    }
}

/// An open store with a chunk cache (FIFO eviction, [`CACHE_BYTES`] of values),
/// and the cache of other readers of its file if it shares theirs.
pub struct ChunkReader {
    store: Store,
    decoder: Decoder,
    cache: RefCell<ChunkCache>,
    shared: Option<SharedChunks>,
}

/// What turns a stored chunk into values (apart from the reader's cache and
/// connection, so that several threads can decode at once).
struct Decoder {
    chunk_positions: u64,
    contexts: ContextFn,
}

impl ChunkReader {
    /// Reads `store`, whose chunks hold `chunk_positions` values each and need no
    /// contexts.
    pub fn new(store: Store, chunk_positions: u64) -> ChunkReader {
        Self::with_contexts(
            store,
            chunk_positions,
            Box::new(|_, _, _, _| Contexts::default()),
        )
    }

    /// Reads `store`, whose context-mixing chunks have the game's `contexts`.
    pub fn with_contexts(store: Store, chunk_positions: u64, contexts: ContextFn) -> ChunkReader {
        ChunkReader {
            store,
            decoder: Decoder {
                chunk_positions,
                contexts,
            },
            cache: RefCell::new(ChunkCache::default()),
            shared: None,
        }
    }

    /// Shares decoded chunks with the other readers of the file given `shared`:
    /// a chunk one of them decoded is not decoded again by another (while the
    /// shared cache holds it). The caller vouches that they read the same file.
    pub fn share(&mut self, shared: &SharedChunks) {
        self.shared = Some(shared.clone());
    }

    /// The chunk holding `index` of block `packed` of `layer`, and the offset in it.
    #[inline]
    fn place(&self, layer: usize, packed: u128, index: u64) -> (ChunkKey, usize) {
        let chunk_positions = self.decoder.chunk_positions;
        // Chunks are a power of two unless asked otherwise: no division then.
        let (chunk, offset) = if chunk_positions.is_power_of_two() {
            let shift = chunk_positions.trailing_zeros();
            (index >> shift, index & (chunk_positions - 1))
        } else {
            (index / chunk_positions, index % chunk_positions)
        };
        ((layer as u32, packed, chunk), offset as usize)
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The value at `index` of the block `packed` of `layer`; `block` gives the
    /// block's key and its number of positions (from the layout, not the file; called
    /// only when the chunk is not cached). A missing or corrupt chunk is an error
    /// (a [`StoreError`]), never a value; with the store's reads off
    /// ([`Store::bound_reads`]), a chunk not cached is a [`NotCached`] error.
    #[inline]
    pub fn value(
        &self,
        layer: usize,
        packed: u128,
        index: u64,
        block: impl FnOnce() -> (Vec<u8>, u64),
    ) -> anyhow::Result<i8> {
        let (chunk_key, offset) = self.place(layer, packed, index);
        if let Some(cached) = self.cache.borrow().chunks.get(&chunk_key)
            && cached.answers(offset)
        {
            return at(&cached.values, offset, chunk_key);
        }
        if let Some(error) = self.cache.borrow().bad.get(&chunk_key) {
            return Err(error.clone().into());
        }
        // Another reader may have decoded it (memory only: also with reads off).
        if let Some(cached) = self
            .shared
            .as_ref()
            .and_then(|s| s.get(chunk_key, Some(offset)))
        {
            let value = at(&cached.values, offset, chunk_key);
            self.insert_local(chunk_key, cached);
            return value;
        }
        if self.store.reads.cached_only() {
            return Err(NotCached.into());
        }
        let (key, size) = block();
        match self.load(chunk_key, &key, size) {
            Ok(cached) => {
                let value = at(&cached.values, offset, chunk_key);
                self.insert(chunk_key, cached);
                value
            }
            Err(e) => {
                let (layer, _, chunk) = chunk_key;
                let place = Place::Chunk {
                    layer: layer as usize,
                    key: super::counts_key(&key),
                    chunk,
                };
                let error = StoreError::or_damaged(&e, place);
                // Damage stays; a read that failed otherwise (stopped at its
                // deadline, an I/O error) may succeed next time.
                if error.kind == StoreErrorKind::Damaged {
                    self.cache.borrow_mut().bad.insert(chunk_key, error.clone());
                }
                Err(error.into())
            }
        }
    }

    /// [`ChunkReader::value`] of every `(packed, index)` of `places` in `layer`, into
    /// `out` (as long as `places`). One cache lookup per value: the cached values
    /// are found and their reads hinted first, then read, so that the scattered
    /// memory reads overlap; the others (chunks not cached, or too short) are then
    /// read one by one by [`ChunkReader::value`].
    pub fn values(
        &self,
        layer: usize,
        places: &[(u128, u64)],
        out: &mut [i8],
        block: impl Fn(u128) -> (Vec<u8>, u64),
    ) -> anyhow::Result<()> {
        assert_eq!(places.len(), out.len(), "one output per place");
        const BATCH: usize = 64;
        for (places, out) in places.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let mut missing = 0u64;
            {
                let cache = self.cache.borrow();
                let mut found: [&i8; BATCH] = [&0; BATCH];
                for (k, &(packed, index)) in places.iter().enumerate() {
                    let (chunk_key, offset) = self.place(layer, packed, index);
                    match cache
                        .chunks
                        .get(&chunk_key)
                        .and_then(|c| c.values.get(offset))
                    {
                        Some(value) => {
                            crate::sys::prefetch(value);
                            found[k] = value;
                        }
                        None => missing |= 1 << k,
                    }
                }
                for (k, slot) in out.iter_mut().enumerate() {
                    if missing >> k & 1 == 0 {
                        *slot = *found[k];
                    }
                }
            }
            while missing != 0 {
                let k = missing.trailing_zeros() as usize;
                missing &= missing - 1;
                let (packed, index) = places[k];
                out[k] = self.value(layer, packed, index, || block(packed))?;
            }
        }
        Ok(())
    }

    /// Decodes, on all cores, the chunks holding the values a caller is about to read
    /// one by one with [`ChunkReader::value`] (a cold probe reads a dozen chunks, and
    /// decoding dominates it). `wanted`: (layer, packed key, index); `block(layer,
    /// packed)` gives the block's key and positions, asked only for chunks not
    /// cached. A chunk that can be decoded in part is decoded up to the last value
    /// wanted of it (half of it on average), and decoded whole when a later call
    /// wants more. Only a hint: chunks that fail to read are left for
    /// [`ChunkReader::value`] to report; nothing at all with the store's reads
    /// off.
    pub fn preload(
        &self,
        wanted: impl IntoIterator<Item = (usize, u128, u64)>,
        block: impl Fn(usize, u128) -> (Vec<u8>, u64),
    ) {
        use rayon::prelude::*;
        if self.store.reads.cached_only() {
            return;
        }
        // (chunk, block key, block size, values wanted: None for all of them).
        let mut jobs: Vec<(ChunkKey, Vec<u8>, u64, Option<usize>)> = Vec::new();
        {
            let cache = self.cache.borrow();
            for (layer, packed, index) in wanted {
                let (chunk_key, offset) = self.place(layer, packed, index);
                if let Some(job) = jobs.iter_mut().find(|job| job.0 == chunk_key) {
                    job.3 = job.3.map(|n| n.max(offset + 1));
                    continue;
                }
                let cached = cache.chunks.get(&chunk_key);
                if cache.bad.contains_key(&chunk_key) || cached.is_some_and(|c| c.answers(offset)) {
                    continue;
                }
                let (key, size) = block(layer, packed);
                // A part cached already was too short: this time the whole chunk.
                let part = cached.is_none().then_some(offset + 1);
                jobs.push((chunk_key, key, size, part));
            }
        }
        // What another reader decoded already, whole or far enough.
        if let Some(shared) = &self.shared {
            jobs.retain(
                |(chunk_key, _, _, part)| match shared.get(*chunk_key, *part) {
                    Some(cached) => {
                        self.insert_local(*chunk_key, cached);
                        false
                    }
                    None => true,
                },
            );
        }
        if jobs.is_empty() {
            return;
        }
        let stored: Vec<_> = jobs
            .into_iter()
            .filter_map(|(chunk_key, key, size, part)| {
                let (layer, _, chunk) = chunk_key;
                let chunk_row = self.store.stored_chunk(layer as usize, &key, chunk).ok()?;
                Some((chunk_key, key, size, part, chunk_row))
            })
            .collect();
        let decoder = &self.decoder;
        let decoded: Vec<(ChunkKey, Cached)> = stored
            .par_iter()
            .filter_map(|(chunk_key, key, size, part, chunk_row)| {
                let cached = decoder
                    .decode(*chunk_key, key, *size, *part, chunk_row)
                    .ok()?;
                Some((*chunk_key, cached))
            })
            .collect();
        for (chunk_key, cached) in decoded {
            self.insert(chunk_key, cached);
        }
    }

    /// Reads and decodes whole a chunk of a block of `size` positions that is not
    /// cached (or only in part).
    fn load(&self, chunk_key: ChunkKey, key: &[u8], size: u64) -> anyhow::Result<Cached> {
        let (layer, _, chunk) = chunk_key;
        let stored = self.store.stored_chunk(layer as usize, key, chunk)?;
        self.decoder.decode(chunk_key, key, size, None, &stored)
    }

    /// Chunks a cache holds: [`CACHE_BYTES`] of values (at least 16 chunks).
    fn capacity(&self) -> usize {
        (CACHE_BYTES / self.decoder.chunk_positions).max(16) as usize
    }

    /// Caches a chunk's values just decoded, here and in the shared cache.
    fn insert(&self, chunk_key: ChunkKey, cached: Cached) {
        if let Some(shared) = &self.shared {
            shared
                .lock()
                .insert(chunk_key, cached.clone(), self.capacity());
        }
        self.insert_local(chunk_key, cached);
    }

    /// Caches a chunk's values in this reader's cache only (replacing a shorter
    /// part cached before), evicting the oldest chunk when full.
    fn insert_local(&self, chunk_key: ChunkKey, cached: Cached) {
        let capacity = self.capacity();
        self.cache.borrow_mut().insert(chunk_key, cached, capacity);
    }
}

impl Decoder {
    /// The values of a stored chunk of a block of `size` positions: the first
    /// `part` of them at least (see [`super::StoredChunk::decode_part`]), or all.
    fn decode(
        &self,
        chunk_key: ChunkKey,
        key: &[u8],
        size: u64,
        part: Option<usize>,
        stored: &super::StoredChunk,
    ) -> anyhow::Result<Cached> {
        let (layer, _, chunk) = chunk_key;
        let first = chunk * self.chunk_positions;
        if first >= size {
            anyhow::bail!(
                "chunk {chunk} lies beyond its block of layer {layer} ({size} positions)"
            );
        }
        let len = super::chunk_len(size, self.chunk_positions, chunk);
        let values = stored.decode_part(len, part.unwrap_or(len), |len| {
            (self.contexts)(layer as usize, key, first, len)
        })?;
        Ok(Cached {
            whole: values.len() == len,
            values: values.into(),
        })
    }
}
