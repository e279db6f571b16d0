//! Qubic positions and their notation (docs/FORMAT.md §5.2): a move list from the
//! empty board (`0-3-60-21`, cells in order of play, X first; seed 002 writes the
//! forcing part with `x`, `0-3-60x4x8`, also accepted) or 64 characters `.`, `X`,
//! `O` by cell number.

use super::geometry::{CELLS, Cells, has_line};
use anyhow::{Result, bail, ensure};
use std::fmt;

/// A position: the cells of X and of O. X moves first, so X is to move when both
/// have placed as many stones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    /// X's cells.
    pub x: Cells,
    /// O's cells.
    pub o: Cells,
}

/// A side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first player.
    X,
    /// The second player.
    O,
}

impl Side {
    /// `X` or `O`.
    pub fn letter(self) -> char {
        match self {
            Side::X => 'X',
            Side::O => 'O',
        }
    }
}

impl Position {
    /// The empty board.
    pub const EMPTY: Position = Position { x: 0, o: 0 };

    /// Empty cells.
    pub fn empty(&self) -> Cells {
        !(self.x | self.o)
    }

    /// The side to move.
    pub fn to_move(&self) -> Side {
        if self.x.count_ones() == self.o.count_ones() {
            Side::X
        } else {
            Side::O
        }
    }

    /// The cells of `side`.
    pub fn cells(&self, side: Side) -> Cells {
        match side {
            Side::X => self.x,
            Side::O => self.o,
        }
    }

    /// Whether `side` has four in a line.
    pub fn has_four(&self, side: Side) -> bool {
        has_line(self.cells(side))
    }

    /// The position after the side to move takes `cell` (which must be empty).
    pub fn play(&self, cell: usize) -> Result<Position> {
        ensure!(
            cell < CELLS,
            "cell {cell} is not on the board (cells are 0..=63)"
        );
        ensure!(self.empty() >> cell & 1 == 1, "cell {cell} is taken");
        let bit = 1u64 << cell;
        Ok(match self.to_move() {
            Side::X => Position {
                x: self.x | bit,
                o: self.o,
            },
            Side::O => Position {
                x: self.x,
                o: self.o | bit,
            },
        })
    }

    /// Reads position text: 64 characters `.`/`X`/`O`, or a move list (cells
    /// separated by `-`, `x` or `,`), the empty list (or `-`) being the empty board.
    /// A game that has ended (four in a line) before its last move is refused.
    pub fn parse(text: &str) -> Result<Position> {
        let text = text.trim();
        if text.chars().count() == CELLS && text.chars().all(|c| matches!(c, '.' | 'X' | 'O')) {
            let mut p = Position::EMPTY;
            for (i, c) in text.chars().enumerate() {
                match c {
                    'X' => p.x |= 1 << i,
                    'O' => p.o |= 1 << i,
                    _ => {}
                }
            }
            let (nx, no) = (p.x.count_ones(), p.o.count_ones());
            ensure!(
                nx == no || nx == no + 1,
                "{nx} X and {no} O: X moves first, so X has as many stones as O or one more"
            );
            ensure!(
                !(p.has_four(Side::X) && p.has_four(Side::O)),
                "both sides have four in a line"
            );
            return Ok(p);
        }
        if text.is_empty() || text == "-" {
            return Ok(Position::EMPTY);
        }
        if text.len() == CELLS {
            bail!("a 64-character position holds only `.`, `X` and `O` (cell 0 first): `{text}`");
        }
        let mut p = Position::EMPTY;
        for (k, word) in text.split(['-', 'x', ',']).enumerate() {
            let word = word.trim();
            let cell: usize = word.parse().map_err(|_| {
                anyhow::anyhow!(
                    "move {}: `{word}` is not a cell number 0..=63 (a position is a move list like 0-3-60-21 or 64 characters . X O)",
                    k + 1
                )
            })?;
            if p.has_four(Side::X) || p.has_four(Side::O) {
                bail!("move {}: the game ended with the move before", k + 1);
            }
            p = p
                .play(cell)
                .map_err(|e| anyhow::anyhow!("move {}: {e}", k + 1))?;
        }
        Ok(p)
    }
}

impl fmt::Display for Position {
    /// The 64-character form.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for c in 0..CELLS {
            let ch = if self.x >> c & 1 == 1 {
                'X'
            } else if self.o >> c & 1 == 1 {
                'O'
            } else {
                '.'
            };
            write!(f, "{ch}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_lists_and_boards_read_the_same() {
        let p = Position::parse("0-3-60-21-15-51-12-63").unwrap();
        assert_eq!(p.x, 1 << 0 | 1 << 60 | 1 << 15 | 1 << 12);
        assert_eq!(p.o, 1 << 3 | 1 << 21 | 1 << 51 | 1 << 63);
        assert_eq!(p.to_move(), Side::X);
        assert_eq!(Position::parse(&p.to_string()).unwrap(), p);
        assert_eq!(Position::parse("0-3-60").unwrap().to_move(), Side::O);
        assert_eq!(Position::parse("0-3-60x4").unwrap().to_move(), Side::X);
        assert_eq!(Position::parse("").unwrap(), Position::EMPTY);
    }

    #[test]
    fn bad_positions_are_clear_errors() {
        for (text, says) in [
            ("0-0", "taken"),
            ("0-64", "not on the board"),
            ("0-a", "not a cell number"),
            ("0-1-4-2-8-3-12-5", "ended"),
            (&"X".repeat(64), "X moves first"),
            (&format!("{}Z", ".".repeat(63)), "only"),
        ] {
            let e = Position::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
