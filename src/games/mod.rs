//! The games: each folder holds a game's rules, notation, indexing, kernel and probe
//! answers, on top of the generic store ([`crate::store`]) and scheduler
//! ([`crate::retro`]).

pub mod dots;
pub mod morris;
