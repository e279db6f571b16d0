//! Retrograde analysis, game-generic: the interface a game implements
//! ([`Game`]) and the scheduler that builds, stores, resumes and prunes
//! ([`build`]). Values are one byte per position here; what a byte means belongs to
//! the game.
//!
//! A game's positions are split into **layers**, built in an order the game gives
//! (Dots-and-Boxes: lines drawn, from the full board down; Morris: stone-count
//! pairs, from 3-3 up). A layer is cut into **blocks** (dense arrays of values,
//! keyed inside the layer by a few small numbers); a block is computed from blocks
//! of layers built before it ([`Game::reads`]), by the game's kernel
//! ([`Game::compute`]). The scheduler keeps blocks in memory while a later block
//! reads them (or reloads them from the store), deletes blocks that no remaining
//! block reads unless their layer is kept ([`Game::keeps`]), and publishes each
//! layer in the transaction that stores its last block.

pub mod audit;
pub mod build;
pub mod cache;
pub mod progress;
pub mod recode;
pub mod writer;

use crate::store::codec::{ChunkCoding, Neighbours};
use anyhow::Result;
use std::sync::atomic::AtomicU64;

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

/// What a game supplies to be built by retrograde analysis.
pub trait Game: Sync {
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

    /// The blocks (of layers built earlier) whose values computing this block needs,
    /// in the order [`Game::compute`] receives them.
    fn reads(&self, layer: usize, key: &[u8]) -> Vec<BlockId>;

    /// Computes a block's values from the blocks [`Game::reads`] names (same order).
    /// A kernel that runs long may count the positions it has finished in `done`
    /// (for progress output while the block is computed; never more than the block).
    fn compute(
        &self,
        layer: usize,
        key: &[u8],
        inputs: &[&[i8]],
        done: &AtomicU64,
    ) -> Result<Vec<i8>>;

    /// Whether a finished layer stays in the file (the book) rather than being
    /// deleted once no remaining block reads it.
    fn keeps(&self, layer: usize) -> bool;

    /// Digest contribution of `values`, the values of a block from index `first` on
    /// (a wrapping sum of per-position elements, so chunks can be hashed apart).
    fn digest(&self, layer: usize, key: &[u8], first: u64, values: &[i8]) -> u64;

    /// Positions per stored chunk.
    fn chunk_positions(&self) -> u64;

    /// The values a stored byte may hold (default: any): a chunk holding another
    /// is corrupt.
    fn value_range(&self) -> std::ops::RangeInclusive<i8> {
        i8::MIN..=i8::MAX
    }

    /// How chunks are coded (default: zstd, fast, [`build::ZSTD_LEVEL`]).
    fn chunk_coding(&self) -> ChunkCoding {
        ChunkCoding::Zstd(build::ZSTD_LEVEL)
    }

    /// The values of a chunk (a block's from index `first` on) as the file stores
    /// them: a game may leave out what [`Game::restore`] recomputes from the
    /// positions (default: stored as computed). Histograms and digests are of the
    /// values as computed.
    fn stored_form<'a>(
        &self,
        layer: usize,
        key: &[u8],
        first: u64,
        values: &'a [i8],
    ) -> std::borrow::Cow<'a, [i8]> {
        let _ = (layer, key, first);
        std::borrow::Cow::Borrowed(values)
    }

    /// Undoes [`Game::stored_form`] on the decoded values of a chunk (a block's from
    /// index `first` on): every value as computed again (default: nothing to do).
    fn restore(&self, layer: usize, key: &[u8], first: u64, values: &mut [i8]) {
        let _ = (layer, key, first, values);
    }

    /// The neighbours of the `len` positions of a block from index `first` on, for
    /// [`ChunkCoding::Mix`] (see `store::codec`); part of the game's file format.
    fn chunk_neighbours(
        &self,
        layer: usize,
        key: &[u8],
        first: u64,
        len: usize,
    ) -> Vec<Neighbours> {
        let _ = (layer, key, first, len);
        Vec::new()
    }
}
