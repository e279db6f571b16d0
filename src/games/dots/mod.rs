//! Dots-and-Boxes: the board and its notation, Wilson's layered tablebase (line
//! groups, symmetry, corners, the streaming kernel), probing, the search solver, and
//! the reports (`info`, `verify`, `export`, `plan`), and the play program (`play`).
//!
//! Where things are (no module imports another that imports it back:
//! `tests/conventions.rs` checks):
//! * The game: [`board`], [`symmetry`] (board symmetries), [`chains`], [`notation`].
//! * The file format: [`spec`] (what a file holds, its meta rows), [`layout`] with
//!   [`orbits`], [`group_symmetry`] and [`groups`] (where each position is stored),
//!   the stored bytes: [`loony`] (the loony flag and byte), [`boxes_left`],
//!   [`sites`] (what the archival chunk coding sees of a position);
//!   [`format`](mod@format) ([`format::DotsFormat`]: all of it as the generic code reads it).
//! * Reading: [`probe`] (what a probe answers), [`tablebase`] (an open file), and
//!   the reports [`info`], [`verify`], [`export`], [`output`].
//! * Building: [`kernel`] (Wilson's streaming kernel, with [`transpose`]),
//!   [`chain_kernel`], [`build`] ([`build::DotsKernel`]: the kernel the scheduler
//!   runs, the build policy), [`plan`].
//! * Without a table: [`search`] (the search solver), [`solve`] (what `tb solve`
//!   asks it), [`loony_solve`] (loony analysis by exhaustion), [`play`].

pub mod board;
pub mod boxes_left;
pub mod build;
pub mod chain_kernel;
pub mod chains;
pub mod export;
pub mod format;
pub mod group_symmetry;
pub mod groups;
pub mod info;
pub mod kernel;
pub mod layout;
pub mod loony;
pub mod loony_solve;
pub mod notation;
pub mod orbits;
pub mod output;
pub mod plan;
pub mod play;
pub mod probe;
pub mod proven;
pub mod reader;
pub mod search;
pub mod sites;
pub mod solve;
pub mod spec;
pub mod symmetry;
pub mod tablebase;
pub mod transpose;
pub mod verify;
