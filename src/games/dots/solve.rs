//! What `tb solve` searches (also `tb.solve` in Python): a position of a board, or
//! the start, with its penalty and transposition table, set up for the search
//! solver without a database.

use super::board::{Board, Lines};
use super::chains::Chains;
use super::notation::{NotationError, ParsedPosition};
use super::search::{SearchOptions, Solver};
use super::spec;
use anyhow::Result;

/// A search to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolveRequest {
    /// The position.
    pub lines: Lines,
    /// Chains marked in the position's Wilson file, played as pseudo-lines.
    pub chains: Chains,
    /// Value of the full board (Wilson's last-move penalty).
    pub penalty: i8,
    /// Transposition table size in bytes.
    pub tt_bytes: u64,
    /// Search threads (1 unless set).
    pub threads: usize,
}

impl SolveRequest {
    /// The position `position` (read with `parse`: `tb solve` lets an argument
    /// name a Wilson file, `tb.solve` takes text only), or the start `start`
    /// (`empty`, `swedish`, `icelandic`, a position or a Wilson file) when there is
    /// none; the penalty given, else the one of the position's (or start's) Wilson
    /// file, else 0; the default table size for its open lines
    /// ([`default_tt_bytes`]).
    pub fn new(
        board: &Board,
        position: Option<&str>,
        parse: fn(&Board, &str) -> Result<ParsedPosition, NotationError>,
        start: &str,
        penalty: Option<i32>,
    ) -> Result<SolveRequest> {
        let start = spec::parse_start(board, start)?;
        let (lines, file_penalty, chains) = match position {
            Some(text) => {
                let p = parse(board, text)?;
                (p.lines, p.penalty, p.chains)
            }
            None => (start.lines, start.penalty, start.chains),
        };
        let penalty = spec::check_penalty(penalty.or(file_penalty).unwrap_or(0))?;
        let open = board.num_lines() as u32 - lines.count_ones();
        Ok(SolveRequest {
            lines,
            chains,
            penalty,
            tt_bytes: default_tt_bytes(open),
            threads: 1,
        })
    }

    /// A solver for the request on `board`.
    pub fn solver(&self, board: Board) -> Solver {
        let mut solver = Solver::new(
            board,
            SearchOptions {
                penalty: self.penalty as i32,
                tt_bytes: self.tt_bytes as usize,
            },
        );
        if !self.chains.is_empty() {
            solver.set_chains(self.chains.clone());
        }
        solver.set_threads(self.threads);
        solver
    }
}

/// The transposition table `tb solve` uses for a position with `open` open lines:
/// 64 MiB up to 24, 256 MiB up to 28, else 1 GiB.
pub fn default_tt_bytes(open: u32) -> u64 {
    match open {
        ..=24 => 64 << 20,
        25..=28 => 256 << 20,
        _ => 1 << 30,
    }
}
