//! The Dots-and-Boxes board: dimensions, the fixed line order, line names and the
//! box geometry used to detect completed boxes.
//!
//! Line order (fixed by docs/FORMAT.md §3.1): horizontal lines first, row-major
//! (`h<r>.<c>`, index `r*C + c`), then vertical lines row-major (`v<r>.<c>`, index
//! `(R+1)*C + r*(C+1) + c`). A position is a `u64` whose bit `i` is set when line `i`
//! is drawn.

use std::fmt;
use std::str::FromStr;

/// Largest number of lines a board may have (one `u64` per position).
pub const MAX_LINES: usize = 64;

/// A set of drawn lines, bit `i` = line `i`.
pub type Lines = u64;

/// A rectangular Dots-and-Boxes board measured in boxes (`3x5` = 3 rows, 5 columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    rows: usize,
    cols: usize,
}

/// Errors in board specifications and line names.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoardError {
    /// The text is not of the form `RxC`.
    #[error("board `{0}` is not of the form RxC (for example 3x5)")]
    Syntax(String),
    /// A dimension is zero.
    #[error("board `{0}` has a zero dimension")]
    Empty(String),
    /// Too many lines for a 64-bit position.
    #[error("board {rows}x{cols} has {lines} lines; at most {max} are supported")]
    TooBig {
        /// Box rows.
        rows: usize,
        /// Box columns.
        cols: usize,
        /// Its number of lines.
        lines: usize,
        /// The limit.
        max: usize,
    },
    /// A line name that does not exist on this board.
    #[error(
        "`{name}` is not a line of the {board} board (lines are h<r>.<c> with r <= {rows}, c < {cols} and v<r>.<c> with r < {rows}, c <= {cols})"
    )]
    UnknownLine {
        /// The name as given.
        name: String,
        /// The board, as text.
        board: String,
        /// Box rows.
        rows: usize,
        /// Box columns.
        cols: usize,
    },
}

impl Board {
    /// A board of `rows` x `cols` boxes; fails if it is empty or has more than 64 lines.
    pub fn new(rows: usize, cols: usize) -> Result<Board, BoardError> {
        if rows == 0 || cols == 0 {
            return Err(BoardError::Empty(format!("{rows}x{cols}")));
        }
        let lines = (rows + 1) * cols + rows * (cols + 1);
        if lines > MAX_LINES {
            return Err(BoardError::TooBig {
                rows,
                cols,
                lines,
                max: MAX_LINES,
            });
        }
        Ok(Board { rows, cols })
    }

    /// Box rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Box columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The lines not drawn in `start`, in line order.
    pub fn free_lines(&self, start: Lines) -> Vec<usize> {
        (0..self.num_lines())
            .filter(|&l| start >> l & 1 == 0)
            .collect()
    }

    /// Number of lines E = (R+1)C + R(C+1).
    pub fn num_lines(&self) -> usize {
        (self.rows + 1) * self.cols + self.rows * (self.cols + 1)
    }

    /// Number of boxes R*C.
    pub fn num_boxes(&self) -> usize {
        self.rows * self.cols
    }

    /// Mask with every line of the board set.
    pub fn all_lines(&self) -> Lines {
        if self.num_lines() == 64 {
            u64::MAX
        } else {
            (1u64 << self.num_lines()) - 1
        }
    }

    /// Index of horizontal line `h<r>.<c>` (r in 0..=R, c in 0..C).
    pub fn h(&self, r: usize, c: usize) -> usize {
        debug_assert!(r <= self.rows && c < self.cols);
        r * self.cols + c
    }

    /// Index of vertical line `v<r>.<c>` (r in 0..R, c in 0..=C).
    pub fn v(&self, r: usize, c: usize) -> usize {
        debug_assert!(r < self.rows && c <= self.cols);
        (self.rows + 1) * self.cols + r * (self.cols + 1) + c
    }

    /// The four lines of box (r, c): top, bottom, left, right.
    pub fn box_lines(&self, r: usize, c: usize) -> [usize; 4] {
        [
            self.h(r, c),
            self.h(r + 1, c),
            self.v(r, c),
            self.v(r, c + 1),
        ]
    }

    /// Mask of the four lines of box (r, c).
    pub fn box_mask(&self, r: usize, c: usize) -> Lines {
        self.box_lines(r, c).iter().fold(0, |m, &l| m | 1 << l)
    }

    /// The boxes (row, col) that line `line` borders: one on the edge, two inside.
    pub fn boxes_of_line(&self, line: usize) -> Vec<(usize, usize)> {
        let hcount = (self.rows + 1) * self.cols;
        let mut out = Vec::with_capacity(2);
        if line < hcount {
            let (r, c) = (line / self.cols, line % self.cols);
            if r > 0 {
                out.push((r - 1, c));
            }
            if r < self.rows {
                out.push((r, c));
            }
        } else {
            let i = line - hcount;
            let (r, c) = (i / (self.cols + 1), i % (self.cols + 1));
            if c > 0 {
                out.push((r, c - 1));
            }
            if c < self.cols {
                out.push((r, c));
            }
        }
        out
    }

    /// For each line, the masks of the other three lines of each box it borders.
    /// A missing box (edge line) gets `u64::MAX`, which can never be a subset of a
    /// position that lacks the line itself. Drawing line `l` into position `p`
    /// (without `l`) completes `(p & m == m)` boxes for each of its two masks `m`.
    pub fn completion_masks(&self) -> Vec<[Lines; 2]> {
        (0..self.num_lines())
            .map(|l| {
                let mut masks = [u64::MAX; 2];
                for (slot, (r, c)) in self.boxes_of_line(l).into_iter().enumerate() {
                    masks[slot] = self.box_mask(r, c) & !(1u64 << l);
                }
                masks
            })
            .collect()
    }

    /// Number of boxes that drawing `line` completes in `position` (which must not
    /// contain `line`). Hot paths use [`boxes_completed_with`] and precomputed masks.
    pub fn boxes_completed(&self, position: Lines, line: usize) -> u32 {
        let masks = self
            .boxes_of_line(line)
            .into_iter()
            .map(|(r, c)| self.box_mask(r, c) & !(1u64 << line));
        masks.filter(|&m| position & m == m).count() as u32
    }

    /// Mask of the perimeter lines.
    pub fn perimeter(&self) -> Lines {
        let mut m = 0u64;
        for c in 0..self.cols {
            m |= 1 << self.h(0, c) | 1 << self.h(self.rows, c);
        }
        for r in 0..self.rows {
            m |= 1 << self.v(r, 0) | 1 << self.v(r, self.cols);
        }
        m
    }

    /// The corner pairs (Fraser): for each corner box, its two lines on the
    /// perimeter, lower line first. Each touches only that box, so swapping them
    /// maps the game onto itself. Empty for boards one box wide, whose corner boxes
    /// have three perimeter lines.
    pub fn corner_pairs(&self) -> Vec<(usize, usize)> {
        if self.rows < 2 || self.cols < 2 {
            return Vec::new();
        }
        let (r, c) = (self.rows, self.cols);
        vec![
            (self.h(0, 0), self.v(0, 0)),
            (self.h(0, c - 1), self.v(0, c)),
            (self.h(r, 0), self.v(r - 1, 0)),
            (self.h(r, c - 1), self.v(r - 1, c)),
        ]
    }

    /// Mask of the top and left perimeter lines (the Icelandic start).
    pub fn top_left_perimeter(&self) -> Lines {
        let mut m = 0u64;
        for c in 0..self.cols {
            m |= 1 << self.h(0, c);
        }
        for r in 0..self.rows {
            m |= 1 << self.v(r, 0);
        }
        m
    }

    /// Name of a line: `h<r>.<c>` or `v<r>.<c>`.
    pub fn line_name(&self, line: usize) -> String {
        let hcount = (self.rows + 1) * self.cols;
        if line < hcount {
            format!("h{}.{}", line / self.cols, line % self.cols)
        } else {
            let i = line - hcount;
            format!("v{}.{}", i / (self.cols + 1), i % (self.cols + 1))
        }
    }

    /// Names of the lines in `mask`, in line order.
    pub fn line_names(&self, mask: Lines) -> Vec<String> {
        (0..self.num_lines())
            .filter(|&l| mask >> l & 1 == 1)
            .map(|l| self.line_name(l))
            .collect()
    }

    /// Parses a line name `h<r>.<c>` / `v<r>.<c>` into its index.
    pub fn parse_line(&self, name: &str) -> Result<usize, BoardError> {
        let unknown = || BoardError::UnknownLine {
            name: name.to_string(),
            board: self.to_string(),
            rows: self.rows,
            cols: self.cols,
        };
        let mut chars = name.chars();
        let kind = chars.next().ok_or_else(unknown)?;
        let (r, c) = chars.as_str().split_once('.').ok_or_else(unknown)?;
        let digits = |s: &str| -> Option<usize> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                s.parse().ok()
            }
        };
        let (r, c) = (
            digits(r).ok_or_else(unknown)?,
            digits(c).ok_or_else(unknown)?,
        );
        match kind {
            'h' if r <= self.rows && c < self.cols => Ok(self.h(r, c)),
            'v' if r < self.rows && c <= self.cols => Ok(self.v(r, c)),
            _ => Err(unknown()),
        }
    }
}

/// Value of a move for the player making it: `boxes + V(child)` when it completes
/// boxes (the same player moves again), `-V(child)` otherwise.
#[inline]
pub fn move_value(boxes: u32, child: i32) -> i32 {
    if boxes > 0 {
        boxes as i32 + child
    } else {
        -child
    }
}

/// [`move_value`] on stored `i8` values, for the kernel's streaming loops (wrapping,
/// so it vectorises; stored values never come near the `i8` limits).
#[inline(always)]
pub fn move_value_i8(boxes: i8, child: i8) -> i8 {
    if boxes == 0 {
        child.wrapping_neg()
    } else {
        child.wrapping_add(boxes)
    }
}

/// Boxes completed by a line whose [`Board::completion_masks`] entry is `masks`.
#[inline]
pub fn boxes_completed_with(position: Lines, masks: [Lines; 2]) -> u32 {
    masks.iter().filter(|&&m| position & m == m).count() as u32
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

impl FromStr for Board {
    type Err = BoardError;

    fn from_str(s: &str) -> Result<Board, BoardError> {
        let syntax = || BoardError::Syntax(s.to_string());
        let (r, c) = s.trim().split_once(['x', 'X']).ok_or_else(syntax)?;
        let num = |t: &str| -> Result<usize, BoardError> {
            if t.is_empty() || t.len() > 3 || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            t.parse().map_err(|_| syntax())
        };
        let (rows, cols) = (num(r)?, num(c)?);
        if rows == 0 || cols == 0 {
            return Err(BoardError::Empty(s.to_string()));
        }
        Board::new(rows, cols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_follow_the_formula() {
        for (spec, lines) in [
            ("1x1", 4),
            ("2x2", 12),
            ("3x3", 24),
            ("3x5", 38),
            ("4x4", 40),
        ] {
            assert_eq!(spec.parse::<Board>().unwrap().num_lines(), lines, "{spec}");
        }
    }

    #[test]
    fn too_big_and_malformed_boards_are_rejected() {
        assert!(matches!(
            "6x6".parse::<Board>(),
            Err(BoardError::TooBig { .. })
        ));
        assert!("5x5".parse::<Board>().is_ok()); // 60 lines
        for bad in ["", "3", "3x", "x3", "0x3", "3x-1", "a x b", "3x3x3"] {
            assert!(bad.parse::<Board>().is_err(), "{bad}");
        }
    }

    #[test]
    fn line_names_round_trip_on_every_small_board() {
        for rows in 1..=4 {
            for cols in 1..=4 {
                let b = Board::new(rows, cols).unwrap();
                for l in 0..b.num_lines() {
                    assert_eq!(b.parse_line(&b.line_name(l)).unwrap(), l);
                }
            }
        }
    }

    #[test]
    fn every_box_has_four_distinct_lines_and_each_line_borders_one_or_two_boxes() {
        let b = Board::new(3, 4).unwrap();
        let mut borders = vec![0; b.num_lines()];
        for r in 0..3 {
            for c in 0..4 {
                assert_eq!(b.box_mask(r, c).count_ones(), 4);
                for l in b.box_lines(r, c) {
                    borders[l] += 1;
                }
            }
        }
        for (l, n) in borders.iter().enumerate() {
            assert_eq!(*n, b.boxes_of_line(l).len(), "line {}", b.line_name(l));
        }
        assert_eq!(b.perimeter().count_ones(), 14);
    }
}
