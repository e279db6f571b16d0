//! `tb play`: a game of Dots-and-Boxes against perfect play, as Wilson's play
//! program shows it: the board with every open line's value written in its place
//! (net future boxes for the player who draws it), the score and whose turn it is.
//! A person types line names; `best` plays a best move, `undo`/`redo` walk the
//! game, and one side may be played by the program itself (the commands and the
//! loop are every game's: [`crate::games::play`]).
//!
//! Values come from a tablebase (the book, its search fallback beyond it) or, with
//! no tablebase, from the search solver ([`Analyst`]).

use super::board::{Board, Lines};
use super::loony::Loony;
use super::notation::{self, ParsedPosition, Player};
use super::probe::Probe;
use super::search::{Limits, Solver};
use super::solve::SolveRequest;
use super::tablebase::Tablebase;
use crate::games::play::{Seat, Setup};
use anyhow::{Result, bail};
use std::collections::HashMap;

/// Where move values come from.
pub enum Analyst {
    /// A tablebase: its stored layers, and its search fallback beyond them.
    Book(Box<Tablebase>),
    /// The search solver, each search within `limits`.
    Search {
        /// The solver (its transposition table is kept between moves).
        solver: Box<Solver>,
        /// Bounds of each search.
        limits: Limits,
    },
    /// Loony analysis by exhaustion ([`super::loony_solve::solve`]): values with loony
    /// marks.
    Loony {
        /// The board.
        board: Board,
        /// Value of the full board.
        penalty: i32,
    },
}

impl Analyst {
    /// Value of `lines` and of every move, best first.
    pub fn probe(&mut self, lines: Lines) -> Result<Probe> {
        match self {
            Analyst::Book(table) => table.probe(lines),
            Analyst::Search { solver, limits } => {
                let result = solver.solve_within(lines, *limits)?;
                Ok(Probe::from_search(lines, &result))
            }
            Analyst::Loony { board, penalty } => super::loony_solve::solve(board, lines, *penalty),
        }
    }
}

/// One move of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Played {
    /// The line drawn.
    pub line: usize,
    /// Who drew it.
    pub player: Player,
    /// Boxes it completed (the same player moves again when there are any).
    pub boxes: u32,
}

/// A game in progress: the start position, the moves played and the moves undone
/// (for redo).
pub struct Match {
    board: Board,
    start: Lines,
    first: Player,
    start_scores: [u32; 2],
    played: Vec<Played>,
    undone: Vec<Played>,
}

impl Match {
    /// A game from `start` (its player to move and captured boxes when a Wilson
    /// file gives them; else A to move, no boxes).
    pub fn new(board: Board, start: &ParsedPosition) -> Match {
        Match {
            board,
            start: start.lines,
            first: start.to_move.unwrap_or(Player::A),
            start_scores: start.captured,
            played: Vec::new(),
            undone: Vec::new(),
        }
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The lines drawn now.
    pub fn lines(&self) -> Lines {
        self.played
            .iter()
            .fold(self.start, |lines, p| lines | 1 << p.line)
    }

    /// The player to move.
    pub fn to_move(&self) -> Player {
        self.played.last().map_or(self.first, |p| {
            if p.boxes > 0 {
                p.player
            } else {
                p.player.other()
            }
        })
    }

    /// Boxes of A and B (those of the start position included).
    pub fn scores(&self) -> [u32; 2] {
        let mut scores = self.start_scores;
        for p in &self.played {
            scores[p.player.index()] += p.boxes;
        }
        scores
    }

    /// Whether every line is drawn.
    pub fn over(&self) -> bool {
        self.lines() == self.board.all_lines()
    }

    /// The moves played, in order.
    pub fn played(&self) -> &[Played] {
        &self.played
    }

    /// Who completed each box during the game (row-major; `None`: not complete, or
    /// complete in the start position).
    pub fn owners(&self) -> Vec<Option<Player>> {
        let (rows, cols) = (self.board.rows(), self.board.cols());
        let mut owners = vec![None; rows * cols];
        let mut lines = self.start;
        for p in &self.played {
            lines |= 1 << p.line;
            for (r, c) in self.board.boxes_of_line(p.line) {
                let mask = self.board.box_mask(r, c);
                if lines & mask == mask {
                    owners[r * cols + c] = Some(p.player);
                }
            }
        }
        owners
    }

    /// Draws `line` for the player to move; forgets the moves undone.
    pub fn play(&mut self, line: usize) -> Result<Played> {
        let lines = self.lines();
        if line >= self.board.num_lines() {
            bail!("no line {line} on a {} board", self.board);
        }
        if lines >> line & 1 == 1 {
            bail!("{} is drawn already", self.board.line_name(line));
        }
        let played = Played {
            line,
            player: self.to_move(),
            boxes: self.board.boxes_completed(lines, line),
        };
        self.played.push(played);
        self.undone.clear();
        Ok(played)
    }

    /// Takes back the last move.
    pub fn undo(&mut self) -> Option<Played> {
        let last = self.played.pop()?;
        self.undone.push(last);
        Some(last)
    }

    /// Plays the last move taken back again.
    pub fn redo(&mut self) -> Option<Played> {
        let next = self.undone.pop()?;
        self.played.push(next);
        Some(next)
    }
}

/// Width of a box on screen (a horizontal line is one less).
const CELL: usize = 6;
/// Columns before the first dot: a row label and room for a value left of it.
const MARGIN: usize = 5;

/// A value as text: `+2`, `-1`, `0`; `?` when unknown; with its loony mark
/// (`0^`, `-2v`) when analysed.
fn value_text(value: Option<i32>, loony: Option<Loony>) -> String {
    let mark = loony.map_or("", Loony::mark);
    match value {
        Some(v) if v > 0 => format!("+{v}{mark}"),
        Some(v) => format!("{v}{mark}"),
        None => "?".to_string(),
    }
}

/// ANSI colours for a terminal.
struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.on && !text.trim().is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// The board of `game` as text: dots, drawn lines, the owner of every box
/// completed during the game (`#` for boxes complete at the start), and each open
/// line's value for the player who draws it (from `probe`, when known; best moves
/// in green when `color`). Row labels name the lines: `h<r>` rows hold the
/// horizontal lines `h<r>.<c>` (c above the board), `v<r>` rows the vertical ones
/// `v<r>.<c>` (c below the board).
pub fn render(game: &Match, probe: Option<&Probe>, color: bool) -> String {
    let board = game.board;
    let (rows, cols) = (board.rows(), board.cols());
    let lines = game.lines();
    let owners = game.owners();
    let paint = Paint { on: color };
    let values: HashMap<usize, (Option<i32>, Option<Loony>)> = probe
        .map(|p| {
            p.moves
                .iter()
                .map(|m| (m.line, (m.value, m.loony)))
                .collect()
        })
        .unwrap_or_default();
    // Best: the first move's value (and loony flag, when analysed).
    let best = probe
        .and_then(|p| p.moves.first().map(|m| (m.value, m.loony)))
        .filter(|b| b.0.is_some() && probe.is_some_and(|p| p.position == lines));
    // The text of open line `line`, padded to `width`, painted.
    let open_text = |line: usize, width: usize| -> String {
        let (value, loony) = values.get(&line).copied().unwrap_or((None, None));
        let text = format!("{:^width$}", value_text(value, loony));
        if value.is_some() && Some((value, loony)) == best {
            paint.wrap("1;32", &text)
        } else {
            paint.wrap("2", &text)
        }
    };
    let drawn = |line: usize| lines >> line & 1 == 1;
    let dot_x = |c: usize| MARGIN + CELL * c;
    let mut out = String::new();
    // Column numbers of the horizontal lines, over the middle of each.
    let mut header = " ".repeat(MARGIN);
    for c in 0..cols {
        header.push_str(&format!("{:^w$}", c, w = CELL));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for r in 0..=rows {
        // A row of dots and horizontal lines.
        let mut row = format!("{:<w$}", format!("h{r}"), w = MARGIN);
        for c in 0..cols {
            row.push('+');
            let line = board.h(r, c);
            if drawn(line) {
                row.push_str(&"-".repeat(CELL - 1));
            } else {
                row.push_str(&open_text(line, CELL - 1));
            }
        }
        row.push('+');
        out.push_str(&row);
        out.push('\n');
        if r == rows {
            break;
        }
        // A row of vertical lines and box interiors: a value is three characters
        // centred on its dot column, so it starts one to the left.
        let mut row = format!("{:<w$}", format!("v{r}"), w = MARGIN - 1);
        for c in 0..=cols {
            let line = board.v(r, c);
            if drawn(line) {
                row.push_str(" | ");
            } else {
                row.push_str(&open_text(line, 3));
            }
            if c < cols {
                let mask = board.box_mask(r, c);
                let owner = match owners[r * cols + c] {
                    Some(p) => p.letter(),
                    None if lines & mask == mask => '#',
                    None => ' ',
                };
                row.push_str(&format!(" {owner} "));
            }
        }
        debug_assert!(row.len() >= dot_x(cols));
        out.push_str(row.trim_end());
        out.push('\n');
    }
    // Column numbers of the vertical lines, under each dot.
    let mut footer = String::new();
    for c in 0..=cols {
        let x = dot_x(c);
        while footer.len() < x {
            footer.push(' ');
        }
        footer.push_str(&c.to_string());
    }
    out.push_str(&footer);
    out.push('\n');
    out
}

/// The line under the board: score, whose turn, the position's value and the best
/// moves (or the game's result).
pub fn status(game: &Match, probe: Option<&Result<Probe>>) -> String {
    let [a, b] = game.scores();
    let mut out = format!("A {a}  B {b}");
    if game.over() {
        let result = match a.cmp(&b) {
            std::cmp::Ordering::Greater => "A wins",
            std::cmp::Ordering::Less => "B wins",
            std::cmp::Ordering::Equal => "a tie",
        };
        out.push_str(&format!("  ·  game over: {result}"));
        return out;
    }
    let mover = game.to_move();
    out.push_str(&format!("  ·  {} to move", mover.letter()));
    match probe {
        Some(Ok(p)) => {
            let best: Vec<String> = p
                .moves
                .iter()
                .filter(|m| {
                    m.value.is_some() && (m.value, m.loony) == (p.moves[0].value, p.moves[0].loony)
                })
                .map(|m| game.board.line_name(m.line))
                .collect();
            out.push_str(&format!(
                "  ·  value {} ({})  ·  best: {}",
                value_text(Some(p.value), p.loony),
                p.source.as_str(),
                best.join(" ")
            ));
        }
        Some(Err(e)) => out.push_str(&format!("  ·  no values: {e:#}")),
        None => {}
    }
    out
}

/// Commands of the loop, as `help` lists them.
pub const HELP: &str = "commands: a line name (h<row>.<col>, v<row>.<col>) draws it; best plays a best move; undo, redo; quit (or end of input)";

/// A game session: the game, where its values come from, and which side (if
/// any) the program plays.
pub struct Session {
    /// The game.
    pub game: Match,
    /// The source of values.
    pub analyst: Analyst,
    /// The side the program plays.
    pub computer: Option<Player>,
    probes: HashMap<Lines, Probe>,
}

impl Session {
    /// A session of `game` with values from `analyst`, the program playing
    /// `computer`.
    pub fn new(game: Match, analyst: Analyst, computer: Option<Player>) -> Session {
        Session {
            game,
            analyst,
            computer,
            probes: HashMap::new(),
        }
    }

    /// The probe of the position now (cached: undo and redo do not search again).
    pub fn probe(&mut self) -> Result<Probe> {
        let lines = self.game.lines();
        if let Some(p) = self.probes.get(&lines) {
            return Ok(p.clone());
        }
        let p = self.analyst.probe(lines)?;
        self.probes.insert(lines, p.clone());
        Ok(p)
    }

    /// A best move of the position now.
    fn best_line(&mut self) -> Result<usize> {
        if self.game.over() {
            bail!("the game is over");
        }
        let probe = self.probe()?;
        match probe.moves.first() {
            Some(m) if m.value.is_some() => Ok(m.line),
            _ => bail!("no move value is known here"),
        }
    }
}

impl crate::games::play::Session for Session {
    fn screen(&mut self, color: bool) -> String {
        let probe = if self.game.over() {
            None
        } else {
            Some(self.probe())
        };
        let shown = probe.as_ref().and_then(|p| p.as_ref().ok());
        format!(
            "{}{}\n",
            render(&self.game, shown, color),
            status(&self.game, probe.as_ref())
        )
    }

    fn computer_to_move(&self) -> bool {
        !self.game.over() && self.computer == Some(self.game.to_move())
    }

    fn best_move(&mut self) -> Result<String> {
        let line = self.best_line()?;
        Ok(self.game.board.line_name(line))
    }

    fn play(&mut self, name: &str, who: &str, note: &str) -> Result<String> {
        let line = match self.game.board.parse_line(name) {
            Ok(line) => line,
            Err(e) => bail!("{e}; {HELP}"),
        };
        if self.game.over() {
            bail!("the game is over (undo to take moves back, quit to leave)");
        }
        let p = self.game.play(line)?;
        Ok(format!(
            "{}{who} plays {}{note}",
            p.player.letter(),
            self.game.board.line_name(line)
        ))
    }

    fn take_back(&mut self) -> Option<String> {
        let p = self.game.undo()?;
        Some(self.game.board.line_name(p.line))
    }

    fn replay(&mut self) -> Option<String> {
        let p = self.game.redo()?;
        Some(self.game.board.line_name(p.line))
    }

    fn help(&self) -> &'static str {
        HELP
    }
}

/// The Dots-and-Boxes session `setup` describes.
pub fn open(setup: &Setup) -> Result<Session> {
    let computer = setup.computer.map(|seat| match seat {
        Seat::First => Player::A,
        Seat::Second => Player::B,
    });
    let parse = |board: &Board, text: &str| -> Result<ParsedPosition> {
        let parsed = notation::parse_position_arg(board, text)?;
        parsed.chains.plain_only("tb play plays")?;
        Ok(parsed)
    };
    let (analyst, board, start) = match setup.db {
        Some(_) if setup.loony => {
            bail!(
                "--loony analyses positions by itself (loony tablebases are not built yet): leave out --db"
            );
        }
        Some(path) => {
            let mut table = Tablebase::open(path)?;
            let board = table.board();
            if let Some(text) = setup.board
                && text.parse::<Board>()? != board
            {
                bail!("the tablebase is of the {board} board, not {text}");
            }
            if setup.penalty.is_some() {
                bail!("--penalty is the table's own with --db (it was built with one)");
            }
            let start = match setup.position {
                Some(text) => parse(&board, text)?,
                None => ParsedPosition::from_lines(table.start()),
            };
            if start.lines & table.start() != table.start() {
                bail!(
                    "the position lacks lines of this tablebase's start position, so it is not in it"
                );
            }
            table.set_search_bounds(setup.limits);
            (Analyst::Book(Box::new(table)), board, start)
        }
        None => {
            let Some(text) = setup.board else {
                bail!("give a board (e.g. tb play 3x3) or a tablebase (--db FILE)");
            };
            let board: Board = text.parse()?;
            let request = SolveRequest::new(
                &board,
                setup.position,
                notation::parse_position_arg,
                "empty",
                setup.penalty,
            )?;
            let start = match setup.position {
                Some(text) => parse(&board, text)?,
                None => ParsedPosition::from_lines(request.lines),
            };
            let analyst = if setup.loony {
                let open = board.num_lines() as u32 - start.lines.count_ones();
                if open > super::loony_solve::MAX_EXHAUSTIVE_OPEN {
                    bail!(
                        "--loony analyses by exhaustion, at most {} open lines; this start has {open}",
                        super::loony_solve::MAX_EXHAUSTIVE_OPEN
                    );
                }
                Analyst::Loony {
                    board,
                    penalty: request.penalty as i32,
                }
            } else {
                Analyst::Search {
                    solver: Box::new(request.solver(board)),
                    limits: setup.limits,
                }
            };
            (analyst, board, start)
        }
    };
    Ok(Session::new(Match::new(board, &start), analyst, computer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::search::SearchOptions;
    use crate::games::play::{Session as _, Step};

    fn session(rows: usize, cols: usize, computer: Option<Player>) -> Session {
        let board = Board::new(rows, cols).unwrap();
        let start = ParsedPosition::from_lines(0);
        let solver = Solver::new(
            board,
            SearchOptions {
                penalty: 0,
                tt_bytes: 1 << 20,
            },
        );
        let analyst = Analyst::Search {
            solver: Box::new(solver),
            limits: Limits::default(),
        };
        Session::new(Match::new(board, &start), analyst, computer)
    }

    #[test]
    fn turns_scores_and_owners_follow_the_rules() {
        let mut s = session(1, 1, None);
        for name in ["h0.0", "h1.0", "v0.0"] {
            assert!(matches!(s.command(name), Step::Shown(_)));
        }
        // A, B, A drew; B completes the box with the fourth line and stays on move.
        assert_eq!(s.game.to_move(), Player::B);
        assert!(matches!(s.command("v0.1"), Step::Shown(_)));
        assert!(s.game.over());
        assert_eq!(s.game.scores(), [0, 1]);
        assert_eq!(s.game.owners(), vec![Some(Player::B)]);
        assert!(matches!(s.command("h0.0"), Step::Refused(_)));
        assert!(matches!(s.command("undo"), Step::Shown(_)));
        assert_eq!(s.game.scores(), [0, 0]);
        assert!(matches!(s.command("redo"), Step::Shown(_)));
        assert!(matches!(s.command("redo"), Step::Refused(_)));
        assert_eq!(s.command("quit"), Step::Quit);
    }

    #[test]
    fn the_computer_answers_and_undo_goes_back_to_the_person() {
        let mut s = session(1, 2, Some(Player::B));
        assert!(matches!(s.command("h0.0"), Step::Shown(_)));
        assert_eq!(s.game.to_move(), Player::A);
        let n = s.game.played().len();
        assert!(n >= 2);
        assert!(matches!(s.command("undo"), Step::Shown(_)));
        assert!(s.game.played().is_empty());
        assert!(matches!(s.command("redo"), Step::Shown(_)));
        assert_eq!(s.game.played().len(), n);
    }

    #[test]
    fn the_board_shows_every_open_value_and_the_lines_drawn() {
        let mut s = session(1, 1, None);
        s.command("h0.0");
        let screen = s.screen(false);
        assert!(screen.contains("+-----+"), "{screen}");
        let probe = s.probe().unwrap();
        assert_eq!(probe.moves.len(), 3);
        for m in &probe.moves {
            assert!(screen.contains(&value_text(m.value, m.loony)), "{screen}");
        }
        assert!(screen.contains("B to move"), "{screen}");
    }
}
