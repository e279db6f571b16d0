//! `tb play` on a Morris file: the board drawn in the terminal, the stones in hand,
//! whose turn it is, the value, and every legal move with its value and (among the
//! moves of the position's own value) the tie-break: how many of the opponent's
//! replies go wrong ([`super::solve::Chances`]). The program, when it plays a side,
//! plays the first move the probe lists: a best move, and among equal values the
//! one that gives the opponent the most chances to go wrong.

use super::geometry::Board;
use super::rules::{Move, Outcome, Position, point_names};
use super::solve::Probe;
use super::spec::Phase;
use super::tablebase::{MorrisTablebase, value_words};
use super::value::Value;
use super::variant::Rules;
use crate::games::dots::search::Limits;
use crate::games::play::{Seat, Session, Setup};
use anyhow::{Result, bail};
use std::collections::HashMap;

/// Commands of the loop, as `help` lists them.
pub const HELP: &str = "commands: a move (a placement d1, a step d1-d2 or a flight, with a capture xa4: d1xa4, d2-d1xa4) plays it; best plays a best move; undo, redo; quit (or end of input)";

/// One move of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Played {
    /// The move.
    pub mv: Move,
    /// Whether White played it.
    pub white: bool,
    /// The position after it; `None` when it won the game (the other side was left
    /// with 2 stones).
    pub after: Option<Position>,
}

/// A game in progress: the start, the moves played and the moves undone (for redo).
pub struct Match {
    start: Position,
    played: Vec<Played>,
    undone: Vec<Move>,
}

impl Match {
    /// A game from `start`.
    pub fn new(start: Position) -> Match {
        Match {
            start,
            played: Vec::new(),
            undone: Vec::new(),
        }
    }

    /// The position now; `None` once a move has won the game.
    pub fn now(&self) -> Option<Position> {
        match self.played.last() {
            Some(p) => p.after,
            None => Some(self.start),
        }
    }

    /// Why the game is over (who won), if it is.
    pub fn over(&self) -> Option<String> {
        let name = |white: bool| if white { "White" } else { "Black" };
        match self.now() {
            None => {
                let last = self.played.last().expect("a move ended the game");
                Some(format!(
                    "{} wins: {} is left with 2 stones",
                    name(last.white),
                    name(!last.white)
                ))
            }
            Some(p) if p.is_full_board_draw() => {
                Some("a draw: the board is full (the rules call that a draw)".to_string())
            }
            Some(p) if p.is_lost() => Some(format!(
                "{} wins: {} cannot move",
                name(!p.white_to_move),
                name(p.white_to_move)
            )),
            Some(_) => None,
        }
    }

    /// Plays `mv` (legal in the position now); forgets what was undone.
    pub fn play(&mut self, mv: Move) -> Result<Played> {
        let played = self.push(mv)?;
        self.undone.clear();
        Ok(played)
    }

    fn push(&mut self, mv: Move) -> Result<Played> {
        if let Some(why) = self.over() {
            bail!("the game is over ({why}; undo to take moves back, quit to leave)");
        }
        let now = self.now().expect("the game is not over");
        let after = match now.play(mv)? {
            Outcome::Child(next) => Some(next),
            Outcome::Win => None,
        };
        let played = Played {
            mv,
            white: now.white_to_move,
            after,
        };
        self.played.push(played);
        Ok(played)
    }

    /// Takes the last move back.
    pub fn undo(&mut self) -> Option<Played> {
        let last = self.played.pop()?;
        self.undone.push(last.mv);
        Some(last)
    }

    /// Plays the last move taken back again.
    pub fn redo(&mut self) -> Option<Played> {
        let mv = self.undone.pop()?;
        self.push(mv).ok()
    }

    /// The moves played, in order.
    pub fn played(&self) -> &[Played] {
        &self.played
    }
}

/// The board as text: the lines of the board, `W` and `B` on the points with stones,
/// `.` on the empty ones, ranks on the left and files below (the point names).
pub fn render(position: &Position, color: bool) -> String {
    let names = point_names(position.rules);
    let at = |name: &str| {
        let mut chars = name.chars();
        let file = chars.next().expect("a file letter") as usize - 'a' as usize;
        let rank: usize = chars.as_str().parse().expect("a rank number");
        (file, rank)
    };
    let spots: Vec<(usize, usize)> = names.iter().map(|n| at(n)).collect();
    let files = spots.iter().map(|s| s.0).max().unwrap_or(0) + 1;
    let ranks = spots.iter().map(|s| s.1).max().unwrap_or(1);
    let (width, height) = (4 * (files - 1) + 1, 2 * (ranks - 1) + 1);
    let mut grid = vec![vec![' '; width]; height];
    let cell = |(file, rank): (usize, usize)| (4 * file, 2 * (ranks - rank));
    let adjacent = adjacency(position.rules);
    for (p, &from) in spots.iter().enumerate() {
        for (q, &to) in spots.iter().enumerate().skip(p + 1) {
            if adjacent[p] >> q & 1 == 0 {
                continue;
            }
            let ((x0, y0), (x1, y1)) = (cell(from), cell(to));
            if y0 == y1 {
                for cell in &mut grid[y0][x0.min(x1) + 1..x0.max(x1)] {
                    *cell = '-';
                }
            } else if x0 == x1 {
                for row in &mut grid[y0.min(y1) + 1..y0.max(y1)] {
                    row[x0] = '|';
                }
            } else {
                // A diagonal (Morabaraba's, between neighbouring rings): one slash
                // halfway, leaning the way the line goes on screen.
                let rising = (x1 > x0) == (y1 < y0);
                grid[(y0 + y1) / 2][(x0 + x1) / 2] = if rising { '/' } else { '\\' };
            }
        }
    }
    let (white, black) = (position.white(), position.black());
    let mut stones = vec![vec![None; width]; height];
    for (p, &spot) in spots.iter().enumerate() {
        let (x, y) = cell(spot);
        let stone = match (white >> p & 1, black >> p & 1) {
            (1, _) => 'W',
            (_, 1) => 'B',
            _ => '.',
        };
        grid[y][x] = stone;
        stones[y][x] = Some(stone);
    }
    let mut out = String::new();
    for (y, row) in grid.iter().enumerate() {
        let label = if y % 2 == 0 {
            format!("{:>2}  ", ranks - y / 2)
        } else {
            "    ".to_string()
        };
        out.push_str(&label);
        for (x, &c) in row.iter().enumerate() {
            match (color, stones[y][x]) {
                (true, Some('W')) => out.push_str("\x1b[1;37mW\x1b[0m"),
                (true, Some('B')) => out.push_str("\x1b[1;34mB\x1b[0m"),
                _ => out.push(c),
            }
        }
        out.push('\n');
    }
    out.push_str("    ");
    for file in 0..files {
        out.push((b'a' + file as u8) as char);
        if file + 1 < files {
            out.push_str("   ");
        }
    }
    out.push('\n');
    out
}

/// `ADJACENT` of the rules' board, by point.
fn adjacency(rules: Rules) -> Vec<u32> {
    crate::with_board!(rules.board(), B => B::ADJACENT[..B::POINTS].to_vec())
}

/// The status lines under the board: stones in hand, the side to move, the value,
/// and every move grouped by value (best first; `k/n` after a move: k of the
/// opponent's n replies go wrong).
pub fn status(position: &Position, probe: Option<&Result<Probe>>) -> String {
    let [white_hand, black_hand] = position.white_black_hands();
    let side = if position.white_to_move {
        "White"
    } else {
        "Black"
    };
    let mut out = if position.moving_phase() {
        format!("{side} to move")
    } else {
        format!("in hand: White {white_hand}, Black {black_hand}  ·  {side} to move")
    };
    match probe {
        Some(Ok(p)) => {
            out.push_str(&format!(
                "  ·  value {} ({})\n",
                p.value,
                value_words(side, p.value)
            ));
            let mut groups: Vec<(Value, Vec<String>)> = Vec::new();
            for (i, (mv, v)) in p.moves.iter().enumerate() {
                let mut text = mv.text(position.rules).to_string();
                if let Some(Some(c)) = p.chances.get(i) {
                    text.push_str(&format!(" {}/{}", c.errors, c.replies));
                }
                match groups.last_mut() {
                    Some((value, names)) if value == v => names.push(text),
                    _ => groups.push((*v, vec![text])),
                }
            }
            for (value, names) in groups {
                out.push_str(&format!(
                    "  {:<4} {}\n",
                    value.to_string(),
                    names.join("  ")
                ));
            }
            if p.chances.iter().any(Option::is_some) {
                let other = if position.white_to_move {
                    "Black"
                } else {
                    "White"
                };
                out.push_str(&format!(
                    "  (k/n: k of {other}'s n replies go wrong; the first listed is the program's choice)\n"
                ));
            }
        }
        Some(Err(e)) => out.push_str(&format!("  ·  no values: {e:#}\n")),
        None => out.push('\n'),
    }
    out
}

/// A game against a Morris file, the program playing `computer` (White or Black)
/// if any.
pub struct MorrisSession {
    table: MorrisTablebase,
    game: Match,
    /// The colour the program plays: `Some(true)` White.
    computer: Option<bool>,
    probes: HashMap<Position, Probe>,
}

impl MorrisSession {
    /// A session from `start` on `table`.
    pub fn new(table: MorrisTablebase, start: Position, computer: Option<bool>) -> MorrisSession {
        MorrisSession {
            table,
            game: Match::new(start),
            computer,
            probes: HashMap::new(),
        }
    }

    /// The game.
    pub fn game(&self) -> &Match {
        &self.game
    }

    /// The probe of the position now (cached: undo and redo read nothing again).
    pub fn probe(&mut self) -> Result<Probe> {
        let Some(position) = self.game.now() else {
            bail!("the game is over");
        };
        if let Some(p) = self.probes.get(&position) {
            return Ok(p.clone());
        }
        let p = self.table.probe(&position)?;
        self.probes.insert(position, p.clone());
        Ok(p)
    }

    fn name(&self, mv: Move) -> String {
        mv.text(self.table.spec().rules).to_string()
    }
}

impl Session for MorrisSession {
    fn screen(&mut self, color: bool) -> String {
        match self.game.now() {
            Some(position) => {
                let probe =
                    (!position.is_lost() && !position.is_full_board_draw()).then(|| self.probe());
                let mut out = render(&position, color);
                out.push_str(&status(&position, probe.as_ref()));
                if let Some(why) = self.game.over() {
                    out.push_str(&format!("game over: {why}\n"));
                }
                out
            }
            None => {
                // The winning capture left no position: draw the board before it
                // with the captured stone gone, and say who won.
                let last = *self.game.played().last().expect("a move ended the game");
                let before = match self.game.played().len() {
                    1 => self.game.start,
                    n => self.game.played()[n - 2]
                        .after
                        .expect("an earlier position"),
                };
                let mut out = render(&after_win(&before, last.mv), color);
                out.push_str(&format!(
                    "game over: {}\n",
                    self.game.over().expect("a move ended the game")
                ));
                out
            }
        }
    }

    fn computer_to_move(&self) -> bool {
        self.game
            .now()
            .is_some_and(|p| !p.is_lost() && self.computer == Some(p.white_to_move))
    }

    /// The first move the probe lists: a best move, ties broken for the most
    /// chances of the opponent to go wrong.
    fn best_move(&mut self) -> Result<String> {
        if let Some(why) = self.game.over() {
            bail!("the game is over ({why})");
        }
        match self.probe()?.moves.first() {
            Some((mv, _)) => Ok(self.name(*mv)),
            None => bail!("there is no legal move"),
        }
    }

    fn play(&mut self, name: &str, who: &str, note: &str) -> Result<String> {
        let mv = match Move::parse_in(self.table.spec().rules, name) {
            Ok(mv) => mv,
            Err(e) => bail!("{e}; {HELP}"),
        };
        let played = self.game.play(mv)?;
        let side = if played.white { "White" } else { "Black" };
        let mut said = format!("{side}{who} plays {}{note}", self.name(mv));
        if let Some(why) = self.game.over() {
            said.push_str(&format!(": {why}"));
        }
        Ok(said)
    }

    fn take_back(&mut self) -> Option<String> {
        let played = self.game.undo()?;
        Some(self.name(played.mv))
    }

    fn replay(&mut self) -> Option<String> {
        let played = self.game.redo()?;
        Some(self.name(played.mv))
    }

    fn help(&self) -> &'static str {
        HELP
    }
}

/// The stones after a winning move from `before` (which leaves no position to
/// probe): the mover's stone placed or moved, the captured stone gone.
fn after_win(before: &Position, mv: Move) -> Position {
    let (to, from, capture) = match mv {
        Move::Place { to, capture } => (to, None, capture),
        Move::Step { from, to, capture } => (to, Some(from), capture),
    };
    let mut mover = before.mover | 1 << to;
    if let Some(from) = from {
        mover &= !(1 << from);
    }
    let opponent = capture.map_or(before.opponent, |c| before.opponent & !(1 << c));
    let mut hands = before.hands;
    if from.is_none() {
        hands[0] = hands[0].saturating_sub(1);
    }
    Position {
        mover: opponent,
        opponent: mover,
        white_to_move: !before.white_to_move,
        hands: [hands[1], hands[0]],
        ..*before
    }
}

/// The session `setup` describes on the Morris file `setup.db` (Dots-and-Boxes
/// options refused by name).
pub fn open(setup: &Setup) -> Result<MorrisSession> {
    let path = setup.db.expect("a Morris session reads a file");
    let refused = [
        (setup.board.is_some(), "a board size"),
        (setup.penalty.is_some(), "--penalty"),
        (setup.loony, "--loony"),
        (
            setup.limits != Limits::default(),
            "--max-nodes or --time-limit",
        ),
    ];
    if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
        bail!(
            "{what} is for Dots-and-Boxes; {} is a Morris file (tb play --db FILE [POSITION] [--computer W|B])",
            path.display()
        );
    }
    let table = MorrisTablebase::open(path)?;
    let start = match setup.position {
        Some(text) => table.parse_position(text)?,
        None if table.spec().phase == Phase::All => table.parse_position(&start_text(&table))?,
        None => bail!(
            "{} holds the moving phase only (built without --phase all): give a position to start from",
            path.display()
        ),
    };
    let computer = setup.computer.map(|seat| seat == Seat::First);
    Ok(MorrisSession::new(table, start, computer))
}

/// The empty board with every stone in hand, White to move, as position text.
fn start_text(table: &MorrisTablebase) -> String {
    let spec = table.spec();
    let points = point_names(spec.rules).len();
    format!("{} w {} {}", ".".repeat(points), spec.stones, spec.stones)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_morabaraba_board_shows_its_diagonals() {
        // Four diagonals of two segments, one slash each; the nine board has none.
        let board = render(&Position::start(Rules::Morabaraba), false);
        let slashes = board.matches('/').count() + board.matches('\\').count();
        assert_eq!(slashes, 8, "{board}");
        let nine = render(&Position::start(Rules::Nine), false);
        assert!(!nine.contains('/') && !nine.contains('\\'), "{nine}");
    }
}
