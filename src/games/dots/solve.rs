//! What `tb solve` searches (also `tb.solve` in Python): a position of a board, or
//! the start, with its penalty and transposition table, set up for the search
//! solver without a database.

use super::board::{Board, Lines};
use super::chains::{ChainRule, Chains};
use super::notation::{NotationError, ParsedPosition};
use super::proven::{ProvenStore, StoreReport};
use super::search::{Limits, ProgressFn, SearchOptions, SolveResult, Solver, Stopped};
use super::spec;
use anyhow::Result;
use std::path::PathBuf;

/// A search to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolveRequest {
    /// The position.
    pub lines: Lines,
    /// Chains marked in the position's Wilson file.
    pub chains: Chains,
    /// How the marked chains are analysed (exact unless set).
    pub chain_rule: ChainRule,
    /// Value of the full board (Wilson's last-move penalty).
    pub penalty: i8,
    /// Transposition table size in bytes.
    pub tt_bytes: u64,
    /// Search threads (1 unless set).
    pub threads: usize,
    /// Whether the solve follows a principal variation (off unless set).
    pub pv: bool,
    /// Whether the solve gives one best move only, not every move's value (off
    /// unless set; see [`Solver::set_best_move_only`]).
    pub best_only: bool,
    /// Whether moves below the value get an upper bound only (off unless set; see
    /// [`Solver::set_losing_bounds`]).
    pub losing_bounds: bool,
    /// A store of proven positions to start from and add to (none unless set; see
    /// [`super::proven`]).
    pub store: Option<PathBuf>,
    /// The store keeps bounds on positions at most this many lines below the
    /// searched one ([`DEFAULT_STORE_DEPTH`] unless set).
    pub store_depth: u32,
}

/// How many lines below the searched position a store keeps bounds by default:
/// enough for the positions whose subtrees are big, few enough that the store
/// stays a small fraction of the table (empty 3x3: every entry of the top 10 plies).
pub const DEFAULT_STORE_DEPTH: u32 = 10;

/// What [`SolveRequest::run`] gives.
pub struct SolveRun {
    /// The answer, or the bounds proven before a limit stopped the search.
    pub outcome: Result<SolveResult, Stopped>,
    /// Seconds the search took (not counting the store).
    pub seconds: f64,
    /// What the store gave and took, with one.
    pub store: Option<StoreReport>,
}

impl SolveRequest {
    /// The position `position` (read with `parse`: `tb solve` lets an argument
    /// name a Wilson file, `tb.solve` takes text only), or the start `start`
    /// (`empty`, `swedish`, `icelandic`, a position or a Wilson file) when there is
    /// none or it is `start`; the penalty given, else the one of the position's (or start's) Wilson
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
        // `start` names the start, as wherever a position is read.
        let position = position.filter(|p| p.trim() != crate::games::read::START);
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
            chain_rule: ChainRule::Exact,
            penalty,
            tt_bytes: default_tt_bytes(open),
            threads: 1,
            pv: false,
            best_only: false,
            losing_bounds: false,
            store: None,
            store_depth: DEFAULT_STORE_DEPTH,
        })
    }

    /// Runs the search within `limits`: with a store, seeded from it first, and
    /// what the search proved near its root (finished or stopped) added after.
    pub fn run(
        &self,
        board: Board,
        limits: Limits,
        progress: Option<ProgressFn>,
    ) -> Result<SolveRun> {
        let mut store = match &self.store {
            Some(path) => Some(ProvenStore::open(
                path,
                &board,
                self.penalty.into(),
                &self.played_chains(&board),
            )?),
            None => None,
        };
        let mut solver = self.solver(board);
        solver.set_progress(progress);
        let mut loaded = 0;
        if let Some(store) = &store {
            let rows = store.load()?;
            solver.seed(&rows);
            loaded = rows.len();
        }
        let started = std::time::Instant::now();
        let outcome = solver.solve_within(self.lines, limits);
        let seconds = started.elapsed().as_secs_f64();
        let store = match store.as_mut() {
            Some(store) => {
                let min_open = self.open(&board).saturating_sub(self.store_depth);
                let written = store.add(&solver.proven(min_open))?;
                Some(StoreReport {
                    loaded,
                    written,
                    total: store.positions()?,
                })
            }
            None => None,
        };
        Ok(SolveRun {
            outcome,
            seconds,
            store,
        })
    }

    /// Open lines of the position on `board`.
    fn open(&self, board: &Board) -> u32 {
        (board.all_lines() & !self.lines).count_ones()
    }

    /// The chains the search plays as units: the marked ones the rule keeps.
    pub fn played_chains(&self, board: &Board) -> Chains {
        self.chains.under(board, self.chain_rule)
    }

    /// The line `tb solve` prints before its answer when the position marks
    /// chains: how many, which are played as units, and whether the answer is
    /// exact.
    pub fn chains_text(&self, board: &Board) -> Option<String> {
        if self.chains.is_empty() {
            return None;
        }
        let marked = self.chains.masks().len();
        let played = self.played_chains(board);
        let units = played.open_units(self.lines, board.all_lines());
        Some(match self.chain_rule {
            ChainRule::Exact => format!(
                "chains: {marked} marked, analysed exactly: {} played as units (boxes on the edge that nothing else touches), the others as plain lines; {units} {} open (--wilson-chains plays every chain as a unit: Wilson's approximation)",
                played.masks().len(),
                if played.is_empty() { "lines" } else { "units" }
            ),
            ChainRule::Wilson => {
                let lines: u32 = played.masks().iter().map(|c| c.count_ones()).sum();
                format!(
                    "chains as pseudo-lines: {marked} chains of {lines} lines; {units} units open ({})",
                    if played.approximate(board) {
                        "Wilson's assumption: values may differ from the plain game's"
                    } else {
                        "each exact as a unit"
                    }
                )
            }
        })
    }

    /// A solver for the request on `board` (its table no bigger than
    /// [`useful_tt_bytes`]).
    pub fn solver(&self, board: Board) -> Solver {
        let mut solver = Solver::new(
            board,
            SearchOptions {
                penalty: self.penalty as i32,
                tt_bytes: self.tt_bytes.min(useful_tt_bytes(self.open(&board))) as usize,
            },
        );
        let chains = self.played_chains(&board);
        if !chains.is_empty() {
            solver.set_chains(chains);
        }
        solver.set_threads(self.threads);
        solver.set_principal_variation(self.pv);
        solver.set_best_move_only(self.best_only);
        solver.set_losing_bounds(self.losing_bounds);
        solver
    }
}

/// The most transposition table bytes a search of a position with `open` open
/// lines can use: 16 bytes (two 8-byte entries) per position that can arise (at most
/// 2^open); on 5x5 a table has at least 64 MiB (see `search::tt`).
/// A bigger table is cut to this, because it would cost without helping: each page
/// of the table is cleared by the kernel when first written, and a search's stores
/// land all over it (`--tt 8GiB` on empty 3x3 took 24 s, nearly all of it clearing).
pub fn useful_tt_bytes(open: u32) -> u64 {
    if open < 60 { 16 << open } else { u64::MAX }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_never_bigger_than_the_positions_of_the_search() {
        let board = Board::new(3, 3).unwrap();
        let mut request = SolveRequest {
            lines: 0,
            chains: Chains::none(),
            chain_rule: ChainRule::Exact,
            penalty: 0,
            tt_bytes: 8 << 30,
            threads: 1,
            pv: false,
            best_only: false,
            losing_bounds: false,
            store: None,
            store_depth: DEFAULT_STORE_DEPTH,
        };
        // 24 open lines: 2^24 positions, 16 bytes each.
        assert_eq!(request.solver(board).table_bytes(), 256 << 20);
        request.lines = 0xfff;
        assert_eq!(request.solver(board).table_bytes(), 16 << 12);
        request.tt_bytes = 1 << 10;
        assert_eq!(request.solver(board).table_bytes(), 1 << 10);
        assert_eq!(useful_tt_bytes(59), 1 << 63);
        assert_eq!(useful_tt_bytes(60), u64::MAX);
        assert_eq!(useful_tt_bytes(64), u64::MAX);
    }
}
