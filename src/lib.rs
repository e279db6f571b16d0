//! `tb`: an embedded, SQLite-backed endgame tablebase builder.
//!
//! The core is game-generic: [`store`] (one SQLite file: meta, layers, blocks, zstd
//! chunks with checksums) and [`retro`] (the interface a game implements and the
//! scheduler that builds, resumes and prunes). The games live in [`games`]:
//! Dots-and-Boxes analysed the way David Wilson did it (layer by layer from the
//! full board back to the start, values = net future boxes for the player to move),
//! and Nine Men's Morris after Gasser (moving-phase tables per stone counts, solved
//! from 3-3 up, values = plies to the end of the game). [`serve`] answers probes
//! over HTTP.

pub mod games;
pub mod retro;
pub mod serve;
pub mod store;
pub mod sys;
#[cfg(test)]
mod test_rng;
pub mod units;
