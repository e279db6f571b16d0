//! Position text: 0/1 strings, move lists and Wilson input files.
//!
//! Every place that reads a position accepts three forms (docs/FORMAT.md §3.2):
//! 1. a string of E characters `0`/`1` in line order, `1` = drawn;
//! 2. a move list of line names (`h0.0,v1.2 h2.1`), or a lone `-` for no lines;
//! 3. David Wilson's input file: a first line `penalty [MB GB] [A|B]` followed by an
//!    ASCII grid of `+` dots, `-` / `|` lines and `A` / `B` captured boxes.
//!
//! Output is form 1 ([`format_position`]) or a Wilson file ([`format_wilson`]).

use std::path::Path;

use super::board::{Board, BoardError, Lines};
use super::chains::{ChainError, Chains};

/// A player as written in Wilson's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Player {
    /// Player `A`.
    A,
    /// Player `B`.
    B,
}

impl Player {
    /// Index into [`ParsedPosition::captured`].
    pub fn index(self) -> usize {
        match self {
            Player::A => 0,
            Player::B => 1,
        }
    }

    /// The other player.
    pub fn other(self) -> Player {
        match self {
            Player::A => Player::B,
            Player::B => Player::A,
        }
    }

    /// `A` or `B`.
    pub fn letter(self) -> char {
        match self {
            Player::A => 'A',
            Player::B => 'B',
        }
    }
}

/// A position read by [`parse_position`], with what Wilson's files add to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPosition {
    /// Drawn lines, bit `i` = line `i` in the board's line order.
    pub lines: Lines,
    /// The last-move penalty from a Wilson file's first line.
    pub penalty: Option<i32>,
    /// The player to move from a Wilson file's first line.
    pub to_move: Option<Player>,
    /// Boxes marked `A` (index 0) and `B` (index 1) in a Wilson grid.
    pub captured: [u32; 2],
    /// Chains marked with dots in a Wilson grid (none in the other forms).
    pub chains: Chains,
}

impl ParsedPosition {
    /// A position with lines only (forms 1 and 2).
    pub fn from_lines(lines: Lines) -> ParsedPosition {
        ParsedPosition {
            lines,
            penalty: None,
            to_move: None,
            captured: [0, 0],
            chains: Chains::none(),
        }
    }
}

/// Errors in position text. Indices are 0-based character indices into the text;
/// `line:column` positions in Wilson files are 1-based.
#[derive(Debug, thiserror::Error)]
pub enum NotationError {
    /// Nothing but whitespace.
    #[error("the position text is empty")]
    Empty,
    /// Two commas (or a leading/trailing comma) with no line name between them.
    #[error("move list, index {index}: empty item between commas (a typo?)")]
    EmptyMove {
        /// Character index of the comma that ends the empty item.
        index: usize,
    },
    /// A 0/1 string of the wrong length.
    #[error("the 0/1 position has {found} characters but the {board} board has {expected} lines")]
    Length {
        /// Characters given.
        found: usize,
        /// Lines of the board.
        expected: usize,
        /// The board, as text.
        board: String,
    },
    /// A 0/1 string with another character.
    #[error("the 0/1 position has {found:?} at index {index}; only 0 and 1 are allowed")]
    BadChar {
        /// The offending character.
        found: char,
        /// Its index in the text.
        index: usize,
    },
    /// A move list entry that is not a line of the board.
    #[error("move list, index {index}: {error}")]
    UnknownLine {
        /// Index of the entry in the text.
        index: usize,
        /// The board's explanation, which names the entry.
        error: BoardError,
    },
    /// A line given twice in a move list.
    #[error("move list: line {name} is given twice (at index {first} and {second})")]
    RepeatedLine {
        /// The line's canonical name.
        name: String,
        /// Index of its first occurrence.
        first: usize,
        /// Index of its second occurrence.
        second: usize,
    },
    /// A malformed first line of a Wilson file.
    #[error(
        "Wilson file, line {line}:{column}: {message} (the first line is `penalty [MB GB] [A|B]`)"
    )]
    Header {
        /// Line number.
        line: usize,
        /// Column number.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A character that has no meaning where it stands in a Wilson grid.
    #[error("Wilson grid, line {line}:{column}: unexpected {found:?}, expected {expected}")]
    GridChar {
        /// Line number.
        line: usize,
        /// Column number.
        column: usize,
        /// The offending character.
        found: char,
        /// What may stand there.
        expected: &'static str,
    },
    /// A Wilson grid whose dot rows or dot columns do not line up.
    #[error("Wilson grid, line {line}:{column}: {message}")]
    GridShape {
        /// Line number.
        line: usize,
        /// Column number.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A Wilson grid of another size than the board.
    #[error("the Wilson grid is {grid} boxes but the board is {board}")]
    GridSize {
        /// The grid's size, `RxC` in boxes.
        grid: String,
        /// The board, as text.
        board: String,
    },
    /// A box marked as captured whose sides are not all drawn.
    #[error(
        "Wilson grid, line {line}:{column}: box ({row},{col}) is marked {player:?} but its lines {missing} are not drawn"
    )]
    Capture {
        /// Line number of the mark.
        line: usize,
        /// Column number of the mark.
        column: usize,
        /// The player named by the mark.
        player: Player,
        /// Box row.
        row: usize,
        /// Box column.
        col: usize,
        /// Names of the undrawn sides.
        missing: String,
    },
    /// Dots in a Wilson grid that do not mark chains.
    #[error("Wilson grid: {0}")]
    Chain(#[from] ChainError),
    /// A position file that cannot be read.
    #[error("cannot read position file `{path}`: {error}")]
    ReadFile {
        /// The path as given.
        path: String,
        /// Why it failed.
        error: std::io::Error,
    },
    /// An error in the content of a position file.
    #[error("position file `{path}`: {error}")]
    InFile {
        /// The path as given.
        path: String,
        /// The error in its content.
        error: Box<NotationError>,
    },
}

/// Parses position text in any of the three forms (see the module docs).
///
/// Text of more than one line (after trimming) is a Wilson file unless it starts
/// with a line name (a move list may span lines); one-line text starting with a
/// digit is a 0/1 string; anything else is a move list.
pub fn parse_position(board: &Board, text: &str) -> Result<ParsedPosition, NotationError> {
    let trimmed = text.trim();
    // Indices in messages count from the start of the untrimmed text.
    let lead = text.chars().take_while(|c| c.is_whitespace()).count();
    if trimmed.is_empty() {
        Err(NotationError::Empty)
    } else if trimmed.contains('\n') && !trimmed.starts_with(['h', 'v']) {
        parse_wilson(board, text)
    } else if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        // Line names start with h/v, so a leading digit means form 1; a stray
        // character then gets a precise "which character at which index" error.
        parse_bits(board, trimmed, lead).map(ParsedPosition::from_lines)
    } else {
        parse_moves(board, trimmed, lead).map(ParsedPosition::from_lines)
    }
}

/// Parses a command-line position: the content of the file `arg` if such a path
/// exists, otherwise `arg` itself as position text.
pub fn parse_position_arg(board: &Board, arg: &str) -> Result<ParsedPosition, NotationError> {
    let path = Path::new(arg);
    if !path.exists() {
        return parse_position(board, arg);
    }
    let read_error = |error| NotationError::ReadFile {
        path: arg.to_string(),
        error,
    };
    // Only a regular file of sensible size: never a device or a pipe that reads
    // forever.
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_file() || meta.len() > MAX_POSITION_FILE_BYTES {
        return Err(read_error(std::io::Error::other(format!(
            "not a regular file of at most {MAX_POSITION_FILE_BYTES} bytes"
        ))));
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    parse_position(board, &text).map_err(|error| NotationError::InFile {
        path: arg.to_string(),
        error: Box::new(error),
    })
}

/// Largest position file read (a Wilson file of the biggest board is a few KiB).
pub const MAX_POSITION_FILE_BYTES: u64 = 1 << 20;

/// Formats `lines` as form 1: E characters `0`/`1` in line order.
pub fn format_position(board: &Board, lines: Lines) -> String {
    (0..board.num_lines())
        .map(|i| if lines >> i & 1 == 1 { '1' } else { '0' })
        .collect()
}

/// Formats `lines` as a Wilson file (penalty line, then the grid in Wilson's style:
/// `+-----+` for drawn horizontals and three text rows per box row with `|`).
pub fn format_wilson(board: &Board, lines: Lines, penalty: i32) -> String {
    let drawn = |line: usize| lines >> line & 1 == 1;
    let mut out = format!("{penalty}\n");
    for r in 0..=board.rows() {
        let mut dots = String::from("+");
        for c in 0..board.cols() {
            dots.push_str(if drawn(board.h(r, c)) {
                "-----"
            } else {
                "     "
            });
            dots.push('+');
        }
        out.push_str(&dots);
        out.push('\n');
        if r == board.rows() {
            break;
        }
        let mut text = String::new();
        for c in 0..=board.cols() {
            text.push(if drawn(board.v(r, c)) { '|' } else { ' ' });
            text.push_str("     ");
        }
        for _ in 0..3 {
            out.push_str(text.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Form 1: a 0/1 string of exactly E characters.
fn parse_bits(board: &Board, s: &str, lead: usize) -> Result<Lines, NotationError> {
    if let Some((i, found)) = s.chars().enumerate().find(|&(_, c)| c != '0' && c != '1') {
        return Err(NotationError::BadChar {
            found,
            index: lead + i,
        });
    }
    // All ASCII from here on, so bytes are characters.
    if s.len() != board.num_lines() {
        return Err(NotationError::Length {
            found: s.len(),
            expected: board.num_lines(),
            board: board.to_string(),
        });
    }
    Ok(s.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'1')
        .fold(0, |m, (i, _)| m | 1 << i))
}

/// Form 2: line names separated by commas and/or whitespace, or a lone `-`.
fn parse_moves(board: &Board, s: &str, lead: usize) -> Result<Lines, NotationError> {
    if s == "-" {
        return Ok(0);
    }
    // A trailing comma is harmless; an empty item elsewhere is likely a typo.
    let items: Vec<&str> = s.split(',').collect();
    let mut offset = 0;
    for (i, item) in items.iter().enumerate() {
        if item.trim().is_empty() && i + 1 < items.len() {
            return Err(NotationError::EmptyMove {
                index: lead + s[..offset + item.len()].chars().count(),
            });
        }
        offset += item.len() + 1;
    }
    let mut seen: Vec<Option<usize>> = vec![None; board.num_lines()];
    let mut lines = 0;
    for (i, name) in tokens(s, |c| c == ',' || c.is_whitespace()) {
        let index = lead + i;
        let line = board
            .parse_line(name)
            .map_err(|error| NotationError::UnknownLine { index, error })?;
        if let Some(first) = seen[line] {
            return Err(NotationError::RepeatedLine {
                name: board.line_name(line),
                first,
                second: index,
            });
        }
        seen[line] = Some(index);
        lines |= 1 << line;
    }
    Ok(lines)
}

/// The maximal runs of non-separator characters, each with its character index.
fn tokens(s: &str, is_sep: impl Fn(char) -> bool) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (char index, byte index)
    for (ci, (bi, ch)) in s.char_indices().enumerate() {
        if is_sep(ch) {
            if let Some((c0, b0)) = start.take() {
                out.push((c0, &s[b0..bi]));
            }
        } else if start.is_none() {
            start = Some((ci, bi));
        }
    }
    if let Some((c0, b0)) = start {
        out.push((c0, &s[b0..]));
    }
    out
}

/// One line of a Wilson file. Characters past its end read as spaces, because
/// editors trim trailing spaces.
struct Row {
    /// 1-based line number in the file.
    number: usize,
    chars: Vec<char>,
}

impl Row {
    fn is_blank(&self) -> bool {
        self.chars.iter().all(|c| c.is_whitespace())
    }

    fn is_dot_row(&self) -> bool {
        self.chars.contains(&'+')
    }

    fn dots(&self) -> Vec<usize> {
        (0..self.chars.len())
            .filter(|&i| self.chars[i] == '+')
            .collect()
    }

    /// 1-based column of the first non-blank character (for "this line" errors).
    fn first_column(&self) -> usize {
        self.chars
            .iter()
            .position(|c| !c.is_whitespace())
            .unwrap_or(0)
            + 1
    }

    fn shape_error(&self, column: usize, message: String) -> NotationError {
        NotationError::GridShape {
            line: self.number,
            column,
            message,
        }
    }
}

/// Form 3: a Wilson file.
fn parse_wilson(board: &Board, text: &str) -> Result<ParsedPosition, NotationError> {
    let rows: Vec<Row> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| Row {
            number: i + 1,
            chars: l.strip_suffix('\r').unwrap_or(l).chars().collect(),
        })
        .collect();
    // Drop blank lines around the file, keeping the original line numbers.
    let start = rows.iter().position(|r| !r.is_blank()).unwrap_or(0);
    let end = rows
        .iter()
        .rposition(|r| !r.is_blank())
        .map_or(0, |e| e + 1);
    let Some((header, rest)) = rows.get(start..end).and_then(|r| r.split_first()) else {
        return Err(NotationError::Empty);
    };
    let (penalty, to_move) = parse_header(header)?;
    let grid_start = rest.iter().position(|r| !r.is_blank()).unwrap_or(0);
    let grid = Grid::split(header, &rest[grid_start..])?;
    grid.check_size(board)?;
    let (lines, dotted) = grid.read_lines(board)?;
    let captured = grid.read_captures(board, lines)?;
    let chains = Chains::from_dotted(board, lines, dotted)?;
    Ok(ParsedPosition {
        lines,
        penalty: Some(penalty),
        to_move,
        captured,
        chains,
    })
}

/// The first line of a Wilson file: `penalty [MB GB] [A|B]`.
fn parse_header(row: &Row) -> Result<(i32, Option<Player>), NotationError> {
    let text: String = row.chars.iter().collect();
    let toks = tokens(&text, char::is_whitespace);
    let error = |&(i, _): &(usize, &str), message: String| NotationError::Header {
        line: row.number,
        column: i + 1,
        message,
    };
    let Some((first, rest)) = toks.split_first() else {
        return Err(error(&(0, ""), "missing penalty".into()));
    };
    let penalty = first.1.parse::<i32>().map_err(|_| {
        error(
            first,
            format!("the penalty `{}` is not an integer", first.1),
        )
    })?;
    let (numbers, to_move) = match rest.split_last() {
        Some(((_, "A"), numbers)) => (numbers, Some(Player::A)),
        Some(((_, "B"), numbers)) => (numbers, Some(Player::B)),
        _ => (rest, None),
    };
    match numbers {
        [] => {}
        [one] => {
            let msg = format!("`{}` must be A/B or the first of two integers MB GB", one.1);
            return Err(error(one, msg));
        }
        [mb, gb] => {
            // Wilson's memory and disk sizes: checked, then ignored.
            for (what, tok) in [("memory MB", mb), ("disk GB", gb)] {
                if tok.1.parse::<u64>().is_err() {
                    let msg = format!("{what} `{}` is not a non-negative integer", tok.1);
                    return Err(error(tok, msg));
                }
            }
        }
        [_, _, extra, ..] => return Err(error(extra, format!("unexpected `{}`", extra.1))),
    }
    Ok((penalty, to_move))
}

/// Where a character column lies relative to the dot columns.
#[derive(Clone, Copy)]
enum Column {
    /// On dot column `j`.
    Dot(usize),
    /// Strictly between dot columns `j` and `j + 1`.
    Between(usize),
    /// Left of the first or right of the last dot.
    Outside,
}

/// A Wilson grid split into dot rows and the text rows between them.
struct Grid<'a> {
    /// 0-based character columns of the dots, from the first dot row.
    dot_cols: Vec<usize>,
    dot_rows: Vec<&'a Row>,
    /// `box_rows[r]` = the text rows between dot rows `r` and `r + 1`.
    box_rows: Vec<&'a [Row]>,
}

impl<'a> Grid<'a> {
    /// Finds the dot rows and checks that they all have the same dot columns.
    fn split(header: &Row, rows: &'a [Row]) -> Result<Grid<'a>, NotationError> {
        let Some(first) = rows.first() else {
            let message = "the grid is missing after the first line".to_string();
            return Err(header.shape_error(header.chars.len() + 1, message));
        };
        if !first.is_dot_row() {
            let message = "expected the grid's first dot row (`+` at each dot)".to_string();
            return Err(first.shape_error(first.first_column(), message));
        }
        let dot_cols = first.dots();
        if let Some(w) = dot_cols.windows(2).find(|w| w[1] == w[0] + 1) {
            let message = "adjacent dots leave no room for a line".to_string();
            return Err(first.shape_error(w[1] + 1, message));
        }
        let mut grid = Grid {
            dot_cols,
            dot_rows: vec![first],
            box_rows: Vec::new(),
        };
        let mut text_start = 1;
        for (i, row) in rows.iter().enumerate().skip(1) {
            if !row.is_dot_row() {
                continue;
            }
            grid.check_dot_columns(first, row)?;
            if text_start == i {
                let message = format!(
                    "no text rows between this dot row and line {}",
                    rows[i - 1].number
                );
                return Err(row.shape_error(1, message));
            }
            grid.box_rows.push(&rows[text_start..i]);
            grid.dot_rows.push(row);
            text_start = i + 1;
        }
        if let Some(row) = rows.get(text_start) {
            let message = "the grid must end with a dot row".to_string();
            return Err(row.shape_error(row.first_column(), message));
        }
        Ok(grid)
    }

    /// Every dot row must have `+` exactly in the first dot row's columns.
    fn check_dot_columns(&self, first: &Row, row: &Row) -> Result<(), NotationError> {
        let dots = row.dots();
        if dots == self.dot_cols {
            return Ok(());
        }
        // The first column where the two rows disagree.
        let n = dots.len().min(self.dot_cols.len());
        let col = match dots.iter().zip(&self.dot_cols).position(|(a, b)| a != b) {
            Some(k) => dots[k].min(self.dot_cols[k]),
            None => *dots.get(n).or(self.dot_cols.get(n)).unwrap_or(&0),
        };
        let message = if row.chars.get(col) == Some(&'+') {
            format!(
                "unexpected `+`: the first dot row (line {}) has no dot in this column",
                first.number
            )
        } else {
            format!(
                "expected `+` here, as in the first dot row (line {})",
                first.number
            )
        };
        Err(row.shape_error(col + 1, message))
    }

    /// The grid must be (R+1) dot rows of (C+1) dots.
    fn check_size(&self, board: &Board) -> Result<(), NotationError> {
        let (rows, cols) = (self.dot_rows.len() - 1, self.dot_cols.len() - 1);
        if (rows, cols) == (board.rows(), board.cols()) {
            Ok(())
        } else {
            Err(NotationError::GridSize {
                grid: format!("{rows}x{cols}"),
                board: board.to_string(),
            })
        }
    }

    fn column(&self, col: usize) -> Column {
        match self.dot_cols.binary_search(&col) {
            Ok(j) => Column::Dot(j),
            Err(k) if k == 0 || k == self.dot_cols.len() => Column::Outside,
            Err(k) => Column::Between(k - 1),
        }
    }

    /// Reads the drawn lines and the dotted ones (chain lines), rejecting any
    /// character without a meaning.
    fn read_lines(&self, board: &Board) -> Result<(Lines, Lines), NotationError> {
        let (mut lines, mut dotted) = (0, 0);
        for (r, row) in self.dot_rows.iter().enumerate() {
            for (col, &ch) in row.chars.iter().enumerate() {
                match (self.column(col), ch) {
                    (Column::Between(c), '.') => dotted |= 1 << board.h(r, c),
                    (Column::Dot(_), '+') | (_, ' ' | '.') => {}
                    (Column::Between(c), '-') => lines |= 1 << board.h(r, c),
                    (kind, _) => return Err(grid_char(row, col, ch, kind, true)),
                }
            }
        }
        for (r, text_rows) in self.box_rows.iter().enumerate() {
            for row in text_rows.iter() {
                for (col, &ch) in row.chars.iter().enumerate() {
                    match (self.column(col), ch) {
                        // A vertical line counts as drawn if any of its rows shows it.
                        (Column::Dot(c), '|') => lines |= 1 << board.v(r, c),
                        (Column::Dot(c), '.') => dotted |= 1 << board.v(r, c),
                        (Column::Between(_), 'A' | 'B') | (_, ' ' | '.') => {}
                        (kind, _) => return Err(grid_char(row, col, ch, kind, false)),
                    }
                }
            }
        }
        Ok((lines, dotted))
    }

    /// Counts the `A`/`B` boxes; each must be complete and marked by one player.
    fn read_captures(&self, board: &Board, lines: Lines) -> Result<[u32; 2], NotationError> {
        let mut marks: Vec<Option<Player>> = vec![None; board.num_boxes()];
        let mut captured = [0, 0];
        for (r, text_rows) in self.box_rows.iter().enumerate() {
            for row in text_rows.iter() {
                for (col, &ch) in row.chars.iter().enumerate() {
                    let (Column::Between(c), Some(player)) = (self.column(col), player_of(ch))
                    else {
                        continue;
                    };
                    let mark = &mut marks[r * board.cols() + c];
                    match *mark {
                        Some(p) if p == player => continue,
                        Some(p) => {
                            let message =
                                format!("box ({r},{c}) is marked both {p:?} and {player:?}");
                            return Err(row.shape_error(col + 1, message));
                        }
                        None => *mark = Some(player),
                    }
                    check_complete(board, lines, row, col, player, (r, c))?;
                    captured[player.index()] += 1;
                }
            }
        }
        Ok(captured)
    }
}

fn player_of(ch: char) -> Option<Player> {
    match ch {
        'A' => Some(Player::A),
        'B' => Some(Player::B),
        _ => None,
    }
}

/// A captured box must have all four sides drawn.
fn check_complete(
    board: &Board,
    lines: Lines,
    row: &Row,
    col: usize,
    player: Player,
    (r, c): (usize, usize),
) -> Result<(), NotationError> {
    let missing = board.line_names(board.box_mask(r, c) & !lines);
    if missing.is_empty() {
        return Ok(());
    }
    Err(NotationError::Capture {
        line: row.number,
        column: col + 1,
        player,
        row: r,
        col: c,
        missing: missing.join(", "),
    })
}

fn grid_char(row: &Row, col: usize, found: char, kind: Column, dot_row: bool) -> NotationError {
    let expected = match (kind, dot_row) {
        (Column::Between(_), true) => "`-`, space or `.` between two dots",
        (Column::Dot(_), false) => "`|`, space or `.` below a dot",
        (Column::Between(_), false) => "`A`, `B`, space or `.` inside a box",
        _ => "space or `.` outside the grid",
    };
    NotationError::GridChar {
        line: row.number,
        column: col + 1,
        found,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn board(spec: &str) -> Board {
        spec.parse().unwrap()
    }

    fn moves(b: &Board, names: &str) -> Lines {
        names
            .split_whitespace()
            .fold(0, |m, n| m | 1 << b.parse_line(n).unwrap())
    }

    fn err(b: &Board, text: &str) -> NotationError {
        parse_position(b, text).unwrap_err()
    }

    /// The example from Wilson's own files, on a 5x5 board.
    const WILSON_5X5: &str = r"0
+     +     +  .  +     +     +
            |  .  |
            |  .  |
            |  .  |
+     +  .  +  .  +     +     +
      |  .  |  .
      |  .  |  ....
      |  .  |
+     +  .  +-----+-----+-----+
      |  .  |
      |  .  |  ..........
      |  .  |  .
+     +  .  +  .  +-----+  .  +
            |           |  .
            |     ....  |  ....
            |        .  |
+     +     +  .  +  .  +-----+
            |  .
            |  ....
            |
+     +     +-----+     +     +
";

    #[test]
    fn wilson_example_grid() {
        let b = board("5x5");
        // Read off by hand: dots at columns 0, 6, 12, 18, 24, 30.
        let expected = moves(
            &b,
            "h2.2 h2.3 h2.4 h3.3 h4.4 h5.2 \
             v0.2 v0.3 v1.1 v1.2 v2.1 v2.2 v3.2 v3.4 v4.2",
        );
        let p = parse_position(&b, WILSON_5X5).unwrap();
        // The dotted chains, read off by hand too: 15 lines in 6 chains.
        let mut chains: Vec<Lines> = [
            "h0.2 h1.2 v1.3",
            "h1.1 h2.1 h3.1",
            "v2.3 v2.4 h3.2",
            "h3.4 v3.5",
            "v3.3 h4.3",
            "h4.2 v4.3",
        ]
        .iter()
        .map(|names| moves(&b, names))
        .collect();
        chains.sort_unstable();
        let mut read = p.chains.masks().to_vec();
        read.sort_unstable();
        assert_eq!(read, chains);
        assert_eq!(p.chains.open_units(p.lines, b.all_lines()), 36);
        assert_eq!(
            p,
            ParsedPosition {
                lines: expected,
                penalty: Some(0),
                to_move: None,
                captured: [0, 0],
                chains: p.chains.clone(),
            }
        );
    }

    #[test]
    fn zero_one_string() {
        let b = board("1x1");
        assert_eq!(parse_position(&b, " 1001\n").unwrap().lines, 0b1001);
        let e = err(&b, "100");
        assert!(
            matches!(
                e,
                NotationError::Length {
                    found: 3,
                    expected: 4,
                    ..
                }
            ),
            "{e}"
        );
        let e = err(&b, "  10x1");
        assert!(
            matches!(
                e,
                NotationError::BadChar {
                    found: 'x',
                    index: 4
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("index 4"), "{e}");
        let e = err(&b, "10011");
        assert!(e.to_string().contains("5 characters") && e.to_string().contains("4 lines"));
    }

    #[test]
    fn move_list() {
        let b = board("2x2");
        let want = moves(&b, "h0.0 v1.2 h2.1");
        for text in ["h0.0,v1.2,h2.1", "v1.2 h0.0, h2.1", " h2.1 ,\tv1.2\nh0.0"] {
            assert_eq!(
                parse_position(&b, text).unwrap(),
                ParsedPosition::from_lines(want)
            );
        }
        assert_eq!(parse_position(&b, " - ").unwrap().lines, 0);
    }

    #[test]
    fn move_list_errors() {
        let b = board("2x2");
        let e = err(&b, "h0.0, h3.0");
        assert!(
            matches!(e, NotationError::UnknownLine { index: 6, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("`h3.0`"), "{e}");
        let e = err(&b, "h0.0 - v0.0");
        assert!(e.to_string().contains("`-`"), "{e}");
        let e = err(&b, "h0.1,v0.0 h0.1");
        assert!(
            matches!(&e, NotationError::RepeatedLine { name, first: 0, second: 10 } if name == "h0.1"),
            "{e}"
        );
        assert!(matches!(err(&b, " \n\t "), NotationError::Empty));
    }

    #[test]
    fn wilson_header_fields() {
        let b = board("1x1");
        let grid = "+ +\n\n+ +\n";
        let p = parse_position(&b, &format!("-1 512 2 B\n{grid}")).unwrap();
        assert_eq!(
            (p.penalty, p.to_move, p.lines),
            (Some(-1), Some(Player::B), 0)
        );
        let p = parse_position(&b, &format!("3 A\n{grid}")).unwrap();
        assert_eq!((p.penalty, p.to_move), (Some(3), Some(Player::A)));
        let p = parse_position(&b, &format!("0 100 10\n{grid}")).unwrap();
        assert_eq!((p.penalty, p.to_move), (Some(0), None));
    }

    #[test]
    fn wilson_header_errors() {
        let b = board("1x1");
        let grid = "+ +\n\n+ +\n";
        for (header, column) in [
            ("x", 1),
            ("1.5", 1),
            ("0 512", 3),
            ("0 x 5", 3),
            ("0 5 -1 A", 5),
            ("0 1 2 A B", 7),
            ("0 C", 3),
        ] {
            let e = err(&b, &format!("{header}\n{grid}"));
            assert!(
                matches!(e, NotationError::Header { line: 1, column: c, .. } if c == column),
                "{header}: {e}"
            );
        }
    }

    /// Asserts a grid error at `line:column` for `grid` (which follows a `0` line).
    fn grid_error(b: &Board, grid: &str, line: usize, column: usize) -> NotationError {
        let e = err(b, &format!("0\n{grid}"));
        let text = e.to_string();
        assert!(text.contains(&format!("line {line}:{column}:")), "{text}");
        e
    }

    #[test]
    fn wilson_grid_characters() {
        let b = board("1x1");
        let e = grid_error(&b, "+--x--+\n|     |\n+-----+", 2, 4);
        assert!(
            matches!(e, NotationError::GridChar { found: 'x', .. }),
            "{e}"
        );
        let e = grid_error(&b, "+-----+\n|  a  |\n+-----+", 3, 4);
        assert!(
            matches!(e, NotationError::GridChar { found: 'a', .. }),
            "{e}"
        );
        let e = grid_error(&b, "+-----+\n-     |\n+-----+", 3, 1);
        assert!(
            matches!(e, NotationError::GridChar { found: '-', .. }),
            "{e}"
        );
        let e = grid_error(&b, "+-----+ -\n|     |\n+-----+", 2, 9);
        assert!(
            matches!(e, NotationError::GridChar { found: '-', .. }),
            "{e}"
        );
        let e = grid_error(&b, "+-----+\n|     | A\n+-----+", 3, 9);
        assert!(
            matches!(e, NotationError::GridChar { found: 'A', .. }),
            "{e}"
        );
    }

    #[test]
    fn wilson_grid_shape() {
        let b = board("1x2");
        // A dot row whose dots are not in the first dot row's columns.
        let e = grid_error(&b, "+   +   +\n\n+   +  +", 4, 8);
        assert!(e.to_string().contains("unexpected `+`"), "{e}");
        let e = grid_error(&b, "+   +   +\n\n+   +", 4, 9);
        assert!(e.to_string().contains("expected `+`"), "{e}");
        // Missing text rows, a grid not starting or ending with a dot row, adjacent dots.
        grid_error(&b, "+   +   +\n+   +   +", 3, 1);
        grid_error(&b, "  |\n+   +   +\n\n+   +   +", 2, 3);
        grid_error(&b, "+   +   +\n\n+   +   +\n |", 5, 2);
        grid_error(&b, "+   ++\n\n+   ++", 2, 6);
    }

    #[test]
    fn wilson_grid_size() {
        let e = err(&board("2x2"), "0\n+ + + +\n\n+ + + +");
        assert!(
            matches!(&e, NotationError::GridSize { grid, board } if grid == "1x3" && board == "2x2")
        );
        assert!(
            e.to_string().contains("1x3") && e.to_string().contains("2x2"),
            "{e}"
        );
    }

    #[test]
    fn wilson_captures() {
        let b = board("1x3");
        let text = "0\n+-----+-----+-----+\n|  A  |  B  |\n|  A  |     |\n+-----+-----+-----+\n";
        let p = parse_position(&b, text).unwrap();
        assert_eq!(p.captured, [1, 1]);
        assert_eq!(p.lines, b.all_lines() & !(1 << b.v(0, 3)));
        // Box (0,2) lacks its right side.
        let bad = text.replace("|  B  |\n", "|  B  |  B\n");
        let e = err(&b, &bad);
        assert!(
            matches!(&e, NotationError::Capture { line: 3, column: 16, player: Player::B, row: 0, col: 2, missing }
                if missing == "v0.3"),
            "{e}"
        );
        let both = text.replace("|  A  |     |", "|  B  |     |");
        let e = grid_error(&b, both.trim_start_matches("0\n"), 4, 4);
        assert!(e.to_string().contains("both A and B"), "{e}");
    }

    #[test]
    fn wilson_tolerates_crlf_trimmed_lines_and_surrounding_blank_lines() {
        let b = board("2x1");
        let text = "\n\n0 B\r\n\r\n+-----+\r\n|\r\n\r\n+     +\r\n\r\n      |\r\n+-----+\r\n\n";
        let p = parse_position(&b, text).unwrap();
        assert_eq!(p.lines, moves(&b, "h0.0 h2.0 v0.0 v1.1"));
        assert_eq!(p.to_move, Some(Player::B));
        // Line numbers count from the top of the untrimmed text.
        let e = err(&b, &text.replace("|\r\n\r\n+     +", "|\r\n\r\n+  ?  +"));
        assert!(e.to_string().contains("line 8:4"), "{e}");
    }

    #[test]
    fn format_wilson_uses_wilsons_style() {
        let b = board("1x2");
        let text = format_wilson(&b, moves(&b, "h0.0 v0.0 v0.2 h1.1"), -1);
        assert_eq!(
            text,
            "-1\n+-----+     +\n|           |\n|           |\n|           |\n+     +-----+\n"
        );
    }

    #[test]
    fn position_arg_reads_files() {
        let b = board("1x1");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pos.txt");
        std::fs::write(&file, "h0.0 v0.1\n").unwrap();
        let path = file.to_str().unwrap();
        assert_eq!(
            parse_position_arg(&b, path).unwrap().lines,
            moves(&b, "h0.0 v0.1")
        );
        assert_eq!(parse_position_arg(&b, "1100").unwrap().lines, 0b0011);
        std::fs::write(&file, "h0.0 h0.0").unwrap();
        let e = parse_position_arg(&b, path).unwrap_err();
        assert!(
            matches!(e, NotationError::InFile { .. }) && e.to_string().contains(path),
            "{e}"
        );
        // A directory, a device and a file too big are refused before reading.
        let big = dir.path().join("big.txt");
        std::fs::write(&big, vec![b' '; MAX_POSITION_FILE_BYTES as usize + 1]).unwrap();
        for bad in [
            dir.path().to_str().unwrap(),
            "/dev/zero",
            big.to_str().unwrap(),
        ] {
            let e = parse_position_arg(&b, bad).unwrap_err();
            assert!(
                matches!(e, NotationError::ReadFile { .. }) && e.to_string().contains(bad),
                "{e}"
            );
        }
    }

    /// A board up to 5x5 and a random set of its lines.
    fn board_and_lines() -> impl Strategy<Value = (Board, Lines)> {
        (1..=5usize, 1..=5usize, any::<u64>()).prop_map(|(r, c, bits)| {
            let b = Board::new(r, c).unwrap();
            (b, bits & b.all_lines())
        })
    }

    proptest! {
        #[test]
        fn zero_one_round_trip((b, lines) in board_and_lines()) {
            let text = format_position(&b, lines);
            prop_assert_eq!(parse_position(&b, &text).unwrap(), ParsedPosition::from_lines(lines));
        }

        #[test]
        fn move_list_round_trip(
            (b, lines) in board_and_lines(),
            order in Just((0..64usize).collect::<Vec<_>>()).prop_shuffle(),
            seps in proptest::collection::vec(prop_oneof![Just(","), Just(" "), Just(", "), Just("\n")], 64),
        ) {
            let names: Vec<String> = order
                .into_iter()
                .filter(|&l| l < b.num_lines() && lines >> l & 1 == 1)
                .map(|l| b.line_name(l))
                .collect();
            let mut text = String::new();
            for (name, sep) in names.iter().zip(&seps) {
                text.push_str(name);
                text.push_str(sep);
            }
            if names.is_empty() {
                text.push('-');
            }
            prop_assert_eq!(parse_position(&b, &text).unwrap(), ParsedPosition::from_lines(lines));
        }

        #[test]
        fn wilson_round_trip((b, lines) in board_and_lines(), penalty in any::<i32>()) {
            let text = format_wilson(&b, lines, penalty);
            let want = ParsedPosition { penalty: Some(penalty), ..ParsedPosition::from_lines(lines) };
            prop_assert_eq!(parse_position(&b, &text).unwrap(), want);
        }

        #[test]
        fn never_panics(text in "[-+|. AB01hv,\n\r0-9x]{0,80}", r in 1..=5usize, c in 1..=5usize) {
            let _ = parse_position(&Board::new(r, c).unwrap(), &text);
        }

        #[test]
        fn never_panics_on_any_string(text in any::<String>()) {
            let _ = parse_position(&Board::new(3, 3).unwrap(), &text);
            let _ = parse_position(&Board::new(3, 3).unwrap(), &format!("0\n{text}"));
        }

        #[test]
        fn never_panics_on_mangled_grids((b, lines) in board_and_lines(), pos in any::<prop::sample::Index>(), ch in "[-+|. ABx\n]") {
            let mut chars: Vec<char> = format_wilson(&b, lines, 0).chars().collect();
            let i = pos.index(chars.len());
            chars[i] = ch.chars().next().unwrap();
            let _ = parse_position(&b, &chars.into_iter().collect::<String>());
        }
    }
}
