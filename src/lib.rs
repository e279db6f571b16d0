//! `tb`: an embedded, SQLite-backed endgame tablebase builder.
//!
//! The first game is Dots-and-Boxes, analysed the way David Wilson did it: layer by
//! layer from the full board back to the start, values = net future boxes for the
//! player to move, stored as zstd-compressed blocks in one SQLite file.

pub mod board;
pub mod build;
pub mod checksum;
pub mod export;
pub mod games;
pub mod info;
pub mod kernel;
pub mod layout;
pub mod notation;
pub mod orbits;
pub mod output;
pub mod plan;
pub mod progress;
pub mod search;
pub mod spec;
pub mod store;
pub mod sys;
pub mod tablebase;
pub mod verify;
