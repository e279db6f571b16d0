//! What a game supplies to be built ([`Kernel`]): its file format, which blocks
//! each block is computed from, and the computation.

use super::format::{BlockId, Format};
use anyhow::Result;
use std::sync::atomic::AtomicU64;

/// A game as the scheduler ([`super::build`]) builds it: the blocks of its
/// [`Format`], each computed from blocks of layers built before it.
pub trait Kernel: Sync {
    /// The file format the computed values are stored in.
    fn format(&self) -> &dyn Format;

    /// The blocks (of layers built earlier) whose values computing this block needs,
    /// in the order [`Kernel::compute`] receives them.
    fn reads(&self, layer: usize, key: &[u8]) -> Vec<BlockId>;

    /// Computes a block's values from the blocks [`Kernel::reads`] names (same
    /// order), as computed (before [`Format::stored_form`]).
    /// A kernel that runs long may count the positions it has finished in `done`
    /// (for progress output while the block is computed; never more than the block).
    fn compute(
        &self,
        layer: usize,
        key: &[u8],
        inputs: &[&[i8]],
        done: &AtomicU64,
    ) -> Result<Vec<i8>>;
}
