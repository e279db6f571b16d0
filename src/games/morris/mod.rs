//! Morris: Nine Men's Morris, Six Men's Morris on its own board and Lasker Morris,
//! as rule sets ([`variant`]): geometry, notation, symmetry-reduced table indexing
//! and the retrograde solver of the tables (m, o) with 3 <= m, o <= stones, then
//! the placement back to the empty board (for Lasker, whose placement has cycles,
//! the same retrograde solver over [`sector`] pairs).
//!
//! Rules as Gasser: a stone moves to an adjacent empty point, or anywhere when its side
//! has exactly 3 stones (where the rule set lets it fly); a move whose destination ends up in a complete mill of the
//! mover captures one opponent stone not standing in a mill (any stone when all stand
//! in mills); a side with fewer than 3 stones, or to move without a legal move, has
//! lost; whatever retrograde analysis leaves open is a draw.
//!
//! * [`variant`]: [`Rules`] names a standard rule set (`nine`, `six`, `lasker`,
//!   `six-flying`), [`RuleSet`] holds its data (board, stones, flying, ...).
//! * [`geometry`]: a [`Board`] per board ([`Nine`], [`Six`]): points in algebraic
//!   order, adjacency, mills, the 16 symmetries (fast [`Board::transform`] of a
//!   mask), all computed at compile time; the engine is monomorphised per board.
//! * [`rules`]: [`Position`] (mover/opponent masks, colour to move, hands) and
//!   [`Move`] with parsing and display, [`Position::legal_moves`] with each move's
//!   [`Outcome`] (child position or immediate win).
//! * [`sector`]: [`Sector`] (stones on the board and in hand of both sides), its
//!   pair, its exits and the order pairs are solved in (rules that move during
//!   placement).
//! * [`value`]: [`Value`] (`W<p>`, `L<p>`, `D`), its byte (`0` = draw, else plies + 1)
//!   and best-first order.
//! * [`index`]: [`Table`] (m, o): dense index of the symmetry classes
//!   ([`Table::size`], [`Table::index`], [`Table::position`], block iteration) and
//!   [`class_count`] from the index structures alone.
//! * [`solve`]: [`solve_pair`] (retrograde analysis of (m, o) and (o, m) given the
//!   tables with fewer stones; [`solve_sector_pair`] the same for a sector pair),
//!   [`solve_all`], [`probe`] and [`verify_table`].
//! * [`spec`]: what a file holds ([`spec::MorrisSpec`], its meta rows, layer
//!   numbers of table pairs); [`build`]: [`spec::MorrisFormat`], Morris as the
//!   generic scheduler sees it (a layer per table pair), and the build; [`tablebase`]: reading a built file and probing it; [`report`]:
//!   `info`, `export` and `verify`; [`play`]: `tb play` on a Morris file.
//!
//! Masks are 24-bit (16-bit on the six board), bit `i` = point `i`. Tables are relative to the side to move: a
//! position with Black to move is the colour-swapped position with White to move.

pub mod build;
pub mod geometry;
pub mod index;
pub mod placement;
pub mod play;
pub mod reader;
pub mod report;
pub mod rules;
pub mod sector;
pub mod solve;
pub mod spec;
pub mod tablebase;
pub mod value;
pub mod variant;

pub use geometry::{Board, BoardKind, Nine, SYMMETRIES, Six};
pub use index::{Table, class_count};
pub use rules::{Move, NotationError, Outcome, Position};
pub use sector::Sector;
pub use solve::{
    Chances, Probe, Stats, Tables, position_value, probe, solve_all, solve_pair, solve_sector_pair,
    verify_table,
};
pub use value::Value;
pub use variant::{RuleSet, Rules};
