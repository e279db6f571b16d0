//! Retrograde analysis, game-generic. Values are one byte per position here; what a
//! byte means belongs to the game.
//!
//! A game's positions are split into **layers**, built in an order the game gives
//! (Dots-and-Boxes: lines drawn, from the full board down; Morris: stone-count
//! pairs, from 3-3 up). A layer is cut into **blocks** (dense arrays of values,
//! keyed inside the layer by a few small numbers).
//!
//! * [`format`](mod@format): [`Format`], a game's file format (its layers, blocks and sizes,
//!   what a stored byte means, how chunks are coded): all a reader needs.
//! * [`chunks`]: a block's values to and from the chunks the store keeps.
//! * [`kernel`]: [`Kernel`], what a game adds to be built: which blocks of layers
//!   built before a block it reads ([`Kernel::reads`]) and how it computes the
//!   block from them ([`Kernel::compute`]).
//! * [`build`]: the scheduler. It keeps blocks in memory while a later block
//!   reads them (or reloads them from the store), deletes blocks that no remaining
//!   block reads unless their layer is kept ([`Format::keeps`]), and publishes each
//!   layer in the transaction that stores its last block; [`cache`], [`writer`] and
//!   [`progress`] serve it.
//! * [`shard`] and [`distributed`]: a block as a task for another process (its
//!   inputs and output in shard files on shared storage) and the coordinator that
//!   records finished blocks in the file, for builds beyond one machine.
//! * [`audit`] checks a file against its format, [`recode`] stores it again with
//!   other chunks.
//!
//! The values themselves are in [`crate::store`] (one SQLite file).

pub mod audit;
pub mod build;
pub mod cache;
pub mod chunks;
pub mod distributed;
pub mod format;
pub mod input_cache;
pub mod kernel;
pub mod progress;
pub mod recode;
pub mod shard;
pub mod writer;

pub use format::{BlockId, BlockKey, Format};
pub use kernel::Kernel;
