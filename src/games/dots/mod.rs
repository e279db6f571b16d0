//! Dots-and-Boxes: the board and its notation, Wilson's layered tablebase (line
//! groups, symmetry, corners, the streaming kernel), probing, the search solver, and
//! the reports (`info`, `verify`, `export`, `plan`), and the play program (`play`).

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
pub mod notation;
pub mod orbits;
pub mod output;
pub mod plan;
pub mod play;
pub mod search;
pub mod solve;
pub mod spec;
pub mod tablebase;
pub mod transpose;
pub mod verify;
