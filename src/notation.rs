//! Position text: 0/1 strings, move lists and Wilson input files.
//! (Temporary minimal version; the full module lands from the notation branch.)

use crate::board::{Board, BoardError};

/// Player to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Player {
    /// First player.
    A,
    /// Second player.
    B,
}

/// A parsed position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPosition {
    /// Drawn lines.
    pub lines: u64,
    /// Penalty from a Wilson file.
    pub penalty: Option<i32>,
    /// Player to move from a Wilson file.
    pub to_move: Option<Player>,
    /// Boxes captured by A and B.
    pub captured: [u32; 2],
}

/// Errors reading positions.
#[derive(Debug, thiserror::Error)]
pub enum NotationError {
    /// Bad line name.
    #[error(transparent)]
    Line(#[from] BoardError),
    /// Other.
    #[error("{0}")]
    Other(String),
}

/// Parses position text.
pub fn parse_position(board: &Board, text: &str) -> Result<ParsedPosition, NotationError> {
    let t = text.trim();
    let e = board.num_lines();
    let mut lines = 0u64;
    if !t.is_empty() && t.bytes().all(|b| b == b'0' || b == b'1') {
        if t.len() != e {
            return Err(NotationError::Other(format!("position has {} characters, expected {e}", t.len())));
        }
        for (i, b) in t.bytes().enumerate() {
            if b == b'1' {
                lines |= 1 << i;
            }
        }
    } else if t != "-" {
        for name in t.split([',', ' ']).filter(|s| !s.is_empty()) {
            let l = board.parse_line(name)?;
            if lines >> l & 1 == 1 {
                return Err(NotationError::Other(format!("line {name} is repeated")));
            }
            lines |= 1 << l;
        }
    }
    Ok(ParsedPosition { lines, penalty: None, to_move: None, captured: [0, 0] })
}

/// Parses a position or a file holding one.
pub fn parse_position_arg(board: &Board, arg: &str) -> Result<ParsedPosition, NotationError> {
    parse_position(board, arg)
}

/// Formats a position as a 0/1 string.
pub fn format_position(board: &Board, lines: u64) -> String {
    (0..board.num_lines()).map(|i| if lines >> i & 1 == 1 { '1' } else { '0' }).collect()
}
