//! A game's file format as the generic code reads it ([`Format`]): what is in the
//! file (identity, layers, blocks and their sizes, the kept layers) and what a
//! stored block means (value range, digest, chunk size and coding, the stored form
//! and its restoring, chunk contexts). A reader needs only this: it is what the
//! audit, the recoder and [`super::chunks`] take; the builder's
//! [`super::Kernel`] adds how blocks are computed.

use crate::store::codec::{ChunkCoding, Contexts, Family};
use std::borrow::Cow;
use std::ops::RangeInclusive;

/// zstd level of stored chunks (the default [`Format::chunk_coding`]).
pub const ZSTD_LEVEL: i32 = 3;

/// The key of a block inside its layer: a few small numbers (Dots-and-Boxes: the
/// lines drawn per group; Morris: the stone counts of a table pair).
pub type BlockKey = Vec<u8>;

/// A block of a layer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId {
    /// The layer.
    pub layer: usize,
    /// The block's key inside the layer.
    pub key: BlockKey,
}

/// What a game's file holds and what its stored blocks mean: everything a reader,
/// the audit or the recoder needs, nothing of how values are computed.
pub trait Format: Sync {
    /// Metadata rows that identify what is built (game, board, options, format
    /// version): written into a new file; on resume, a file whose rows differ is
    /// refused.
    fn identity(&self) -> Vec<(&'static str, String)>;

    /// Every layer, in build order.
    fn layers(&self) -> Vec<usize>;

    /// How progress output names a layer (`layer 23`, `tables 3-4/4-3`).
    fn layer_label(&self, layer: usize) -> String;

    /// The blocks of a layer, in build order.
    fn blocks(&self, layer: usize) -> Vec<BlockKey>;

    /// Positions (values) in a block.
    fn block_size(&self, layer: usize, key: &[u8]) -> u64;

    /// Whether a finished layer stays in the file (the book) rather than being
    /// deleted once no remaining block reads it: the builder prunes by it, readers
    /// check a layer's status against it.
    fn keeps(&self, layer: usize) -> bool;

    /// Digest contribution of `values`, the values of a block from index `first` on
    /// (a wrapping sum of per-position elements, so chunks can be hashed apart).
    fn digest(&self, layer: usize, key: &[u8], first: u64, values: &[i8]) -> u64;

    /// Positions per stored chunk.
    fn chunk_positions(&self) -> u64;

    /// The values a stored byte may hold (default: any): a chunk holding another
    /// is corrupt.
    fn value_range(&self) -> RangeInclusive<i8> {
        i8::MIN..=i8::MAX
    }

    /// How chunks are coded (default: zstd, fast, [`ZSTD_LEVEL`]).
    fn chunk_coding(&self) -> ChunkCoding {
        ChunkCoding::Zstd(ZSTD_LEVEL)
    }

    /// The chunk codings a file of this format may hold (its `chunk_coding`),
    /// imposed on every chunk read; `None`: the reader imposes them itself.
    fn chunk_family(&self) -> Option<Family> {
        None
    }

    /// The values of a chunk (a block's from index `first` on) as the file stores
    /// them: a game may leave out what [`Format::restore`] recomputes from the
    /// positions (default: stored as computed). Histograms and digests are of the
    /// values as computed.
    fn stored_form<'a>(
        &self,
        layer: usize,
        key: &[u8],
        first: u64,
        values: &'a [i8],
    ) -> Cow<'a, [i8]> {
        let _ = (layer, key, first);
        Cow::Borrowed(values)
    }

    /// Undoes [`Format::stored_form`] on the decoded values of a chunk (a block's
    /// from index `first` on): every value as computed again (default: nothing to
    /// do).
    fn restore(&self, layer: usize, key: &[u8], first: u64, values: &mut [i8]) {
        let _ = (layer, key, first, values);
    }

    /// The contexts of the `len` positions of a block from index `first` on, for
    /// the context-mixing codings (see `store::codec`; default: none).
    fn chunk_contexts(&self, layer: usize, key: &[u8], first: u64, len: usize) -> Contexts {
        let _ = (layer, key, first, len);
        Contexts::default()
    }

    /// Positions of a layer: its blocks' together.
    fn layer_size(&self, layer: usize) -> u64 {
        self.blocks(layer)
            .iter()
            .map(|key| self.block_size(layer, key))
            .sum()
    }
}
