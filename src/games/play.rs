//! `tb play`, for every game that has it: a person (or a script) plays against the
//! table, one command a line. A game's session ([`Session`]) knows its board, its
//! moves and where their values come from; this module holds what is the same for
//! all: the commands (`best`, `undo`, `redo`, `help`, `quit`, else a move's name)
//! and the loop that shows the screen and reads them ([`run`]).

use crate::games::dots::search::Limits;
use anyhow::Result;
use std::io::{BufRead, Write};
use std::path::Path;

/// What one command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The game changed (or is shown again); the text says how, if at all.
    Shown(String),
    /// The command could not be done; the text says why.
    Refused(String),
    /// The session ends.
    Quit,
}

/// The side the program plays (`tb play --computer`): the one who moves first
/// from the game's start (Dots-and-Boxes' A, Morris' White) or the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seat {
    /// The side that moves first from the start.
    First,
    /// The other side.
    Second,
}

/// Where a session starts (`tb play`'s arguments): a table file of any game, or
/// a Dots-and-Boxes board whose values come from the search solver.
pub struct Setup<'a> {
    /// A table to take values from (Dots-and-Boxes: its search fallback beyond the
    /// book).
    pub db: Option<&'a Path>,
    /// Dots-and-Boxes: the board (`RxC`); with `db`, it must be the table's.
    pub board: Option<&'a str>,
    /// The start position in the game's notation [default: the table's start, or
    /// the empty board].
    pub position: Option<&'a str>,
    /// Dots-and-Boxes without a table: the value of the full board.
    pub penalty: Option<i32>,
    /// Dots-and-Boxes: bounds of every search.
    pub limits: Limits,
    /// The side the program plays.
    pub computer: Option<Seat>,
    /// Dots-and-Boxes: loony analysis (values with loony marks; by exhaustion,
    /// small positions).
    pub loony: bool,
}

/// A game in progress against a table, as the loop drives it: the game's own
/// part (its board, notation and values); the commands, the program's answers
/// and undo/redo walking back to the person's turn are the same for every game
/// (the provided methods).
pub trait Session {
    /// The board and status line of the position now (`color`: for a terminal).
    fn screen(&mut self, color: bool) -> String;
    /// Whether the program is to move (it plays a side, the game is not over, and
    /// it is that side's turn).
    fn computer_to_move(&self) -> bool;
    /// A best move of the position now, by name (the first the values list).
    fn best_move(&mut self) -> Result<String>;
    /// Plays the move named `name` in the position now and says so: `"{side}{who}
    /// plays {name}{note}"` (and the end of the game if it ends).
    fn play(&mut self, name: &str, who: &str, note: &str) -> Result<String>;
    /// Takes the last move back; its name, `None` at the start.
    fn take_back(&mut self) -> Option<String>;
    /// Plays the last move taken back again; its name, `None` when there is none.
    fn replay(&mut self) -> Option<String>;
    /// The commands, as `help` lists them.
    fn help(&self) -> &'static str;

    /// Lets the program play its side until it is the person's turn or the game
    /// ends; says what it played (empty when nothing).
    fn computer_moves(&mut self) -> Result<String> {
        let mut said = Vec::new();
        while self.computer_to_move() {
            let name = self.best_move()?;
            said.push(self.play(&name, " (computer)", "")?);
        }
        Ok(said.join("; "))
    }

    /// The person's move `name`, then the program's answer.
    fn play_and_answer(&mut self, name: &str, note: &str) -> Result<String> {
        let said = self.play(name, "", note)?;
        let reply = self.computer_moves();
        Ok(said_with_reply(said, reply))
    }

    /// One undo (`back`) or redo, then more while the program is to move: back to
    /// the person's turn. Says which moves went.
    fn walk(&mut self, back: bool) -> Result<String> {
        let step = |s: &mut Self| if back { s.take_back() } else { s.replay() };
        let (done, none) = if back {
            ("took back", "nothing to undo")
        } else {
            ("replayed", "nothing to redo")
        };
        let Some(first) = step(self) else {
            anyhow::bail!("{none}");
        };
        let mut names = vec![first];
        while self.computer_to_move()
            && let Some(name) = step(self)
        {
            names.push(name);
        }
        Ok(format!("{done} {}", names.join(", ")))
    }

    /// Runs one command.
    fn command(&mut self, text: &str) -> Step {
        let text = text.trim();
        let result = match text {
            "" => Ok(String::new()),
            "quit" | "q" | "exit" => return Step::Quit,
            "help" | "?" => Ok(self.help().to_string()),
            "undo" | "u" => self.walk(true),
            "redo" | "r" => self.walk(false),
            "best" | "b" => self
                .best_move()
                .and_then(|name| self.play_and_answer(&name, " (a best move)")),
            name => self.play_and_answer(name, ""),
        };
        match result {
            Ok(text) => Step::Shown(text),
            Err(e) => Step::Refused(format!("{e:#}")),
        }
    }
}

/// What a move and the program's answer to it say together.
fn said_with_reply(said: String, reply: Result<String>) -> String {
    match reply {
        Ok(r) if r.is_empty() => said,
        Ok(r) => format!("{said}; {r}"),
        Err(e) => format!("{said}; the computer cannot move: {e:#}"),
    }
}

/// Runs a session on `input` (commands, one per line) and `out`. In a terminal
/// (`terminal`) the screen is redrawn in place with colours and a prompt;
/// otherwise each board follows the last. Ends at `quit` or the end of input.
pub fn run(
    session: &mut dyn Session,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    terminal: bool,
) -> Result<()> {
    let mut message = session
        .computer_moves()
        .unwrap_or_else(|e| format!("{e:#}"));
    let mut shown = true;
    loop {
        if terminal {
            // Home, clear, then the whole screen again.
            write!(out, "\x1b[H\x1b[2J")?;
        }
        if shown || terminal {
            write!(out, "{}", session.screen(terminal))?;
        }
        if !message.is_empty() {
            writeln!(out, "{message}")?;
        }
        if terminal {
            write!(out, "> ")?;
        }
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            if terminal {
                writeln!(out)?;
            }
            return Ok(());
        }
        match session.command(&line) {
            Step::Quit => return Ok(()),
            Step::Shown(text) => {
                message = text;
                shown = true;
            }
            Step::Refused(why) => {
                message = why;
                shown = false;
            }
        }
    }
}
