//! Nine Men's Morris, moving phase: geometry, notation, symmetry-reduced table
//! indexing and the retrograde solver of the tables (m, o) with 3 <= m, o <= 9.
//!
//! Rules as Gasser: a stone moves to an adjacent empty point, or anywhere when its side
//! has exactly 3 stones; closing a mill captures one opponent stone not in a mill
//! (any stone when all stand in mills); a side with fewer than 3 stones, or to move
//! without a legal move, has lost; whatever retrograde analysis leaves open is a draw.

pub mod build;
pub mod geometry;
pub mod index;
pub mod report;
pub mod rules;
pub mod solve;
pub mod tablebase;
pub mod value;

pub use geometry::{ADJACENT, MILLS, NAMES, POINTS, SYM_PERM, SYMMETRIES};
pub use index::{Table, class_count};
pub use rules::{Move, NotationError, Outcome, Position};
pub use solve::{Probe, Tables, probe, solve_all, solve_pair};
pub use value::Value;
