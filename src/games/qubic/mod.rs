//! Qubic (4x4x4 tic-tac-toe, seed 002): the board, its 76 lines and 192
//! automorphisms ([`geometry`]), positions and their notation ([`position`]), and
//! forced wins by continuous threats ([`threats`]), the ground the search for a
//! near-minimal winning strategy stands on: the proof search ([`prover`], its
//! [`table`]), the strategy
//! read off it ([`strategy`], [`shrink`]), the replies' strategies made one
//! ([`unify`]) and the build ([`build`], its second proofs [`second`], its proofs'
//! checkpoints [`checkpoint`], and the strategies of other builds it uses
//! [`known`]).

pub mod answer;
pub mod build;
pub mod check;
pub mod checkpoint;
pub mod geometry;
pub mod known;
pub mod position;
pub mod prover;
pub mod reader;
pub mod report;
pub mod second;
pub mod shrink;
pub mod stored;
pub mod strategy;
pub mod table;
pub mod tasks;
pub mod threats;
pub mod trust;
pub mod unify;
