//! Positions, moves, their notation and move generation.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::geometry::{Board, bits};
use super::variant::Rules;
use crate::with_board;

/// Stones per side in the whole game of Nine Men's Morris.
pub const STONES: u8 = 9;

/// The point names of the board of `rules`.
pub fn point_names(rules: Rules) -> &'static [&'static str] {
    with_board!(rules.board(), B => B::NAMES)
}

/// Errors of position and move notation, and illegal moves.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum NotationError {
    /// The board part does not have one character per point.
    #[error("board has {found} characters, expected {expected} (one per point {first} ... {last})")]
    BoardLength {
        /// Characters found.
        found: usize,
        /// Points of the board.
        expected: usize,
        /// The first point's name.
        first: &'static str,
        /// The last point's name.
        last: &'static str,
    },
    /// A board character other than `.`, `W`, `B`.
    #[error("bad character {ch:?} at point {point} (expected '.', 'W' or 'B')")]
    BadCharacter {
        /// The character found.
        ch: char,
        /// Name of the point.
        point: &'static str,
    },
    /// Side to move not `w` or `b`, or a wrong number of fields.
    #[error("bad position {text:?}: expected '<{points} points> w|b [white-hand black-hand]'")]
    Syntax {
        /// The text found.
        text: String,
        /// Points of the board.
        points: usize,
    },
    /// Hand counts that are not numbers 0..=stones.
    #[error("bad stones in hand {text:?}: expected a number 0..={stones}")]
    BadHand {
        /// The text found.
        text: String,
        /// Stones per side of the rules.
        stones: u8,
    },
    /// A side with more stones on the board and in hand together than the rules give.
    #[error("{side} has {count} stones on the board and in hand, at most {stones}")]
    TooManyStones {
        /// `White` or `Black`.
        side: &'static str,
        /// Stones counted.
        count: u32,
        /// Stones per side of the rules.
        stones: u8,
    },
    /// A point name that does not exist.
    #[error("bad point {name:?} (points are {})", points.join(" "))]
    BadPoint {
        /// The name found.
        name: String,
        /// The board's points.
        points: &'static [&'static str],
    },
    /// A move that cannot be parsed.
    #[error("bad move {0:?}: expected d6, d6xd7, a1-a4 or a1-a4xd7")]
    BadMove(String),
    /// A well-formed move that is not legal in the position.
    #[error("illegal move {mv} in position {position}{hint}")]
    Illegal {
        /// The move.
        mv: String,
        /// The position.
        position: String,
        /// What is wrong with its capture, when the same placement or step is legal
        /// with another (`: it closes a mill, so it captures: g1xb6 or g1xd7`), or
        /// empty.
        hint: String,
    },
}

/// A position: the stones of the side to move and of its opponent (masks in point
/// order), the colour to move, the stones still in hand and the rules played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The rules (board, stones, flying).
    pub rules: Rules,
    /// Stones of the side to move.
    pub mover: u32,
    /// Stones of the other side.
    pub opponent: u32,
    /// True if White is to move.
    pub white_to_move: bool,
    /// Stones in hand: `[side to move, opponent]` (both 0 in the moving phase).
    pub hands: [u8; 2],
}

/// A move in the moving phase (`from` -> `to`) or a placement, optionally capturing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Placing a stone from the hand on `to`.
    Place {
        /// Destination point.
        to: u8,
        /// Captured opponent stone, if the placement closes a mill.
        capture: Option<u8>,
    },
    /// Moving (or flying) a stone from `from` to `to`.
    Step {
        /// Origin point.
        from: u8,
        /// Destination point.
        to: u8,
        /// Captured opponent stone, if the move closes a mill.
        capture: Option<u8>,
    },
}

/// What a legal move leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The position after the move, the other side to move.
    Child(Position),
    /// The opponent is left with fewer than 3 stones: the mover has won (`W1`).
    Win,
}

impl Position {
    /// Stones on the board: (side to move, other side), the table the position is in.
    pub fn stones(&self) -> (u8, u8) {
        (
            self.mover.count_ones() as u8,
            self.opponent.count_ones() as u8,
        )
    }

    /// A moving-phase position of Nine Men's Morris with White's and Black's stones
    /// (see [`Position::on`] for other rules).
    pub fn new(white: u32, black: u32, white_to_move: bool) -> Position {
        let (mover, opponent) = if white_to_move {
            (white, black)
        } else {
            (black, white)
        };
        Position {
            rules: Rules::Nine,
            mover,
            opponent,
            white_to_move,
            hands: [0, 0],
        }
    }

    /// The position with `mover`'s stones to move (White's if `white_to_move`) and
    /// `hands` = stones in hand of [side to move, opponent], Nine Men's Morris (see
    /// [`Position::on`] for other rules).
    pub fn with_mover(mover: u32, opponent: u32, white_to_move: bool, hands: [u8; 2]) -> Position {
        Position {
            rules: Rules::Nine,
            mover,
            opponent,
            white_to_move,
            hands,
        }
    }

    /// White's stones.
    pub fn white(&self) -> u32 {
        if self.white_to_move {
            self.mover
        } else {
            self.opponent
        }
    }

    /// Black's stones.
    pub fn black(&self) -> u32 {
        if self.white_to_move {
            self.opponent
        } else {
            self.mover
        }
    }

    /// True once both hands are empty.
    pub fn moving_phase(&self) -> bool {
        self.hands == [0, 0]
    }

    /// The same stones and hands under `rules`.
    pub fn on(self, rules: Rules) -> Position {
        Position { rules, ..self }
    }

    /// The empty board with every stone in hand, White to move.
    pub fn start(rules: Rules) -> Position {
        let n = rules.stones();
        Position::with_mover(0, 0, true, [n, n]).on(rules)
    }

    /// Parses `<24 chars> w|b [white-hand black-hand]` (Nine Men's Morris).
    pub fn parse(text: &str) -> Result<Position, NotationError> {
        Position::parse_in(Rules::Nine, text)
    }

    /// Parses `<a character per point> w|b [white-hand black-hand]` under `rules`.
    pub fn parse_in(rules: Rules, text: &str) -> Result<Position, NotationError> {
        let names = point_names(rules);
        let stones = rules.stones();
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 2 && fields.len() != 4 {
            return Err(NotationError::Syntax {
                text: text.to_string(),
                points: names.len(),
            });
        }
        let board = fields[0];
        let n = board.chars().count();
        if n != names.len() {
            return Err(NotationError::BoardLength {
                found: n,
                expected: names.len(),
                first: names[0],
                last: names[names.len() - 1],
            });
        }
        let (mut white, mut black) = (0u32, 0u32);
        for (p, ch) in board.chars().enumerate() {
            match ch {
                '.' => {}
                'W' => white |= 1 << p,
                'B' => black |= 1 << p,
                _ => {
                    return Err(NotationError::BadCharacter {
                        ch,
                        point: names[p],
                    });
                }
            }
        }
        let white_to_move = match fields[1] {
            "w" => true,
            "b" => false,
            _ => {
                return Err(NotationError::Syntax {
                    text: text.to_string(),
                    points: names.len(),
                });
            }
        };
        let mut hand = [0u8; 2];
        if fields.len() == 4 {
            for (h, f) in hand.iter_mut().zip(&fields[2..]) {
                *h = f
                    .parse::<u8>()
                    .ok()
                    .filter(|&x| x <= stones)
                    .ok_or_else(|| NotationError::BadHand {
                        text: f.to_string(),
                        stones,
                    })?;
            }
        }
        for (side, set, h) in [("White", white, hand[0]), ("Black", black, hand[1])] {
            let count = set.count_ones() + h as u32;
            if count > stones as u32 {
                return Err(NotationError::TooManyStones {
                    side,
                    count,
                    stones,
                });
            }
        }
        let mut pos = Position::new(white, black, white_to_move).on(rules);
        pos.hands = if white_to_move {
            hand
        } else {
            [hand[1], hand[0]]
        };
        Ok(pos)
    }

    /// Stones in hand as `[white, black]`.
    pub fn white_black_hands(&self) -> [u8; 2] {
        if self.white_to_move {
            self.hands
        } else {
            [self.hands[1], self.hands[0]]
        }
    }

    /// The position with the other side to move and the same stones (no move made).
    fn swapped(&self, mover: u32, opponent: u32, hands: [u8; 2]) -> Position {
        Position {
            rules: self.rules,
            mover: opponent,
            opponent: mover,
            white_to_move: !self.white_to_move,
            hands: [hands[1], hands[0]],
        }
    }

    /// True if the side to move has lost: fewer than 3 stones (board and hand), or no
    /// legal move (other than on a full board where that is a draw).
    pub fn is_lost(&self) -> bool {
        !self.is_full_board_draw() && self.legal_moves().is_empty()
    }

    /// True if the placements have filled the board and the rules call that a
    /// draw (Morabaraba): nobody can move, and the game is over, drawn.
    pub fn is_full_board_draw(&self) -> bool {
        self.rules.set().full_board_draw
            && self.moving_phase()
            && (self.mover | self.opponent).count_ones() as usize == point_names(self.rules).len()
    }

    /// Every legal move with its outcome, in a fixed order (by origin, destination,
    /// capture). Empty when the side to move has lost.
    pub fn legal_moves(&self) -> Vec<(Move, Outcome)> {
        with_board!(self.rules.board(), B => self.legal_moves_on::<B>())
    }

    /// [`Position::legal_moves`] on board `B` (the rules' board).
    fn legal_moves_on<B: Board>(&self) -> Vec<(Move, Outcome)> {
        let mut out = Vec::new();
        let (me, opp) = (self.mover, self.opponent);
        let mine = me.count_ones() + self.hands[0] as u32;
        let theirs = opp.count_ones() + self.hands[1] as u32;
        if mine < 3 || theirs < 3 {
            return out;
        }
        let empty = B::FULL & !(me | opp);
        let mut emit = |from: Option<usize>, to: usize, hands: [u8; 2]| {
            let nm = me ^ from.map_or(0, |f| 1 << f) ^ (1 << to);
            let caps = if B::in_mill(nm, to) {
                B::capturable(opp)
            } else {
                0
            };
            let mk = |capture: Option<u8>| match from {
                None => Move::Place {
                    to: to as u8,
                    capture,
                },
                Some(f) => Move::Step {
                    from: f as u8,
                    to: to as u8,
                    capture,
                },
            };
            if caps == 0 {
                out.push((mk(None), Outcome::Child(self.swapped(nm, opp, hands))));
            }
            for c in bits(caps) {
                let no = opp ^ (1 << c);
                let outcome = if no.count_ones() + (hands[1] as u32) < 3 {
                    Outcome::Win
                } else {
                    Outcome::Child(self.swapped(nm, no, hands))
                };
                out.push((mk(Some(c as u8)), outcome));
            }
        };
        if self.hands[0] > 0 {
            let hands = [self.hands[0] - 1, self.hands[1]];
            for to in bits(empty) {
                emit(None, to, hands);
            }
        }
        if self.hands[0] == 0 || self.rules.moving_in_placement() {
            let flying = self.rules.set().flies(me.count_ones(), self.hands[0]);
            for from in bits(me) {
                let targets = if flying {
                    empty
                } else {
                    B::ADJACENT[from] & empty
                };
                for to in bits(targets) {
                    emit(Some(from), to, self.hands);
                }
            }
        }
        out
    }

    /// Plays `mv` if it is legal.
    pub fn play(&self, mv: Move) -> Result<Outcome, NotationError> {
        let legal = self.legal_moves();
        if let Some((_, outcome)) = legal.iter().find(|(m, _)| *m == mv) {
            return Ok(*outcome);
        }
        // The same placement or step with another capture (or none) is legal: say so.
        let same_way: Vec<String> = legal
            .iter()
            .filter(|(m, _)| m.without_capture() == mv.without_capture())
            .map(|(m, _)| m.text(self.rules).to_string())
            .collect();
        let names = point_names(self.rules);
        let hint = match (mv.capture(), same_way.is_empty()) {
            (_, true) => String::new(),
            (None, false) => format!(
                ": it closes a mill, so it captures a stone: {}",
                same_way.join(" or ")
            ),
            (Some(_), false) if same_way.len() == 1 && !same_way[0].contains('x') => {
                format!(
                    ": it closes no mill, so it captures nothing: {}",
                    same_way[0]
                )
            }
            (Some(c), false) => format!(
                ": {} {}; legal: {}",
                names[c as usize],
                if self.opponent >> c & 1 == 1 {
                    "cannot be captured (stones in mills are protected while others are not)"
                } else {
                    "holds no stone of the opponent"
                },
                same_way.join(" or ")
            ),
        };
        Err(NotationError::Illegal {
            mv: mv.text(self.rules).to_string(),
            position: self.to_string(),
            hint,
        })
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w, b) = (self.white(), self.black());
        let board: String = (0..point_names(self.rules).len())
            .map(|p| match (w >> p & 1, b >> p & 1) {
                (1, _) => 'W',
                (_, 1) => 'B',
                _ => '.',
            })
            .collect();
        write!(f, "{board} {}", if self.white_to_move { 'w' } else { 'b' })?;
        if !self.moving_phase() {
            let [hw, hb] = self.white_black_hands();
            write!(f, " {hw} {hb}")?;
        }
        Ok(())
    }
}

impl FromStr for Position {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Position::parse(s)
    }
}

fn parse_point(names: &'static [&'static str], s: &str) -> Result<u8, NotationError> {
    names
        .iter()
        .position(|n| *n == s)
        .map(|p| p as u8)
        .ok_or_else(|| NotationError::BadPoint {
            name: s.to_string(),
            points: names,
        })
}

impl Move {
    /// Parses `d6`, `d6xd7`, `a1-a4`, `a1-a4xd7` (syntax only; see [`Position::play`])
    /// on the nine board.
    pub fn parse(text: &str) -> Result<Move, NotationError> {
        Move::parse_in(Rules::Nine, text)
    }

    /// [`Move::parse`] with the point names of the board of `rules`.
    pub fn parse_in(rules: Rules, text: &str) -> Result<Move, NotationError> {
        let names = point_names(rules);
        let parse_point = |s: &str| parse_point(names, s);
        let bad = || NotationError::BadMove(text.to_string());
        let (main, capture) = match text.split_once('x') {
            Some((main, cap)) => (main, Some(parse_point(cap)?)),
            None => (text, None),
        };
        if main.is_empty() {
            return Err(bad());
        }
        match main.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (parse_point(from)?, parse_point(to)?);
                if from == to {
                    return Err(bad());
                }
                Ok(Move::Step { from, to, capture })
            }
            None => Ok(Move::Place {
                to: parse_point(main)?,
                capture,
            }),
        }
    }

    /// The captured point, if any.
    pub fn capture(&self) -> Option<u8> {
        match *self {
            Move::Place { capture, .. } | Move::Step { capture, .. } => capture,
        }
    }

    /// The same placement or step without its capture.
    pub fn without_capture(&self) -> Move {
        match *self {
            Move::Place { to, .. } => Move::Place { to, capture: None },
            Move::Step { from, to, .. } => Move::Step {
                from,
                to,
                capture: None,
            },
        }
    }
}

impl Move {
    /// The move's text with the point names of the board of `rules` (`d6xd7`).
    pub fn text(self, rules: Rules) -> MoveText {
        MoveText {
            mv: self,
            names: point_names(rules),
        }
    }
}

/// A move with the names of its board's points, for display ([`Move::text`]).
#[derive(Clone, Copy, Debug)]
pub struct MoveText {
    mv: Move,
    names: &'static [&'static str],
}

impl fmt::Display for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |p: u8| self.names[p as usize];
        match self.mv {
            Move::Place { to, .. } => write!(f, "{}", name(to))?,
            Move::Step { from, to, .. } => write!(f, "{}-{}", name(from), name(to))?,
        }
        if let Some(c) = self.mv.capture() {
            write!(f, "x{}", name(c))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::geometry::Nine;
    use super::*;

    fn point_from_name(name: &str) -> Option<usize> {
        Nine::point_from_name(name)
    }

    fn set(names: &str) -> u32 {
        names
            .split_whitespace()
            .map(|n| 1u32 << point_from_name(n).unwrap())
            .fold(0, |a, b| a | b)
    }

    fn pos(white: &str, black: &str, white_to_move: bool) -> Position {
        Position::new(set(white), set(black), white_to_move)
    }

    #[test]
    fn position_round_trips() {
        let p = pos("a1 g7", "g1 d2", true);
        assert_eq!(p.to_string(), "W.B.B..................W w");
        let mut seed = 12345u64;
        for _ in 0..200 {
            let mut board = String::new();
            for _ in 0..Nine::POINTS {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                board.push(match seed >> 62 {
                    0 | 1 => '.',
                    2 => 'W',
                    _ => 'B',
                });
            }
            for side in [" w", " b"] {
                let text = board.clone() + side;
                match Position::parse(&text) {
                    Ok(p) => assert_eq!(p.to_string(), text),
                    Err(e) => assert!(matches!(e, NotationError::TooManyStones { .. })),
                }
            }
        }
        let text = "W.BB...................W w";
        assert_eq!(
            Position::parse(&format!("{text} 0 0")).unwrap().to_string(),
            text
        );
        let p = Position::parse("W.BB...................W b").unwrap();
        assert_eq!(p.mover, set("g1 b2"));
        assert_eq!(p.opponent, set("a1 g7"));
        assert_eq!(p.white(), set("a1 g7"));
        let text = "W....................... b 8 9";
        assert_eq!(Position::parse(text).unwrap().to_string(), text);
        let p = Position::parse("W....................... b 8 9").unwrap();
        assert_eq!(p.hands, [9, 8]);
    }

    #[test]
    fn position_errors() {
        use NotationError::*;
        assert_eq!(
            Position::parse("W..B w"),
            Err(BoardLength {
                found: 4,
                expected: 24,
                first: "a1",
                last: "g7"
            })
        );
        assert_eq!(
            Position::parse("W..B....X............... w"),
            Err(BadCharacter {
                ch: 'X',
                point: "e3"
            })
        );
        assert!(matches!(
            Position::parse("W..B.................... x"),
            Err(Syntax { .. })
        ));
        assert!(matches!(
            Position::parse("W..B.................... w 9"),
            Err(Syntax { .. })
        ));
        assert!(matches!(
            Position::parse("W..B.................... w 10 9"),
            Err(BadHand { .. })
        ));
        assert_eq!(
            Position::parse("WWWWWWWWWW.............. w"),
            Err(TooManyStones {
                side: "White",
                count: 10,
                stones: 9
            })
        );
        assert_eq!(
            Position::parse("WWWW.................... w 6 0"),
            Err(TooManyStones {
                side: "White",
                count: 10,
                stones: 9
            })
        );
    }

    #[test]
    fn illegal_captures_say_what_is_legal() {
        let pos = Position::parse("W.WBB................... w 5 5").unwrap();
        let error = |text: &str| {
            pos.play(Move::parse(text).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(
            error("d1").ends_with("it closes a mill, so it captures a stone: d1xb2 or d1xd2"),
            "{}",
            error("d1")
        );
        assert!(error("d1xa7").contains("a7 holds no stone of the opponent; legal: d1xb2"));
        assert!(error("b6xb2").ends_with("it closes no mill, so it captures nothing: b6"));
        // In a mill while another stone is not: protected.
        let pos = Position::parse("BBBW.W..B............... w 5 5").unwrap();
        let e = pos
            .play(Move::parse("d2xa1").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a1 cannot be captured"), "{e}");
        // Nothing to say about a move that is illegal in every form.
        assert!(error("a1").ends_with("w 5 5"), "{}", error("a1"));
    }

    #[test]
    fn move_round_trips_and_errors() {
        for text in ["d6", "d6xd7", "a1-a4", "a1-a4xd7", "g7-a1xc5"] {
            assert_eq!(
                Move::parse(text).unwrap().text(Rules::Nine).to_string(),
                text
            );
        }
        assert!(matches!(
            Move::parse("d4"),
            Err(NotationError::BadPoint { .. })
        ));
        assert!(matches!(
            Move::parse("a1-a1"),
            Err(NotationError::BadMove(_))
        ));
        assert!(matches!(Move::parse(""), Err(NotationError::BadMove(_))));
        assert!(matches!(
            Move::parse("a1-"),
            Err(NotationError::BadPoint { .. })
        ));
        let p = pos("a1 g1 d2 e5", "b6 d6 f6 a7", true);
        let err = p.play(Move::parse("a1-a4xd7").unwrap()).unwrap_err();
        assert!(err.to_string().contains("illegal move a1-a4xd7"), "{err}");
        assert!(p.play(Move::parse("d2-d1xa7").unwrap()).is_ok());
    }

    #[test]
    fn moves_mills_and_captures() {
        // d2-d1 closes a1 d1 g1; only a7 may be taken, b6 d6 f6 stand in a mill.
        let p = pos("a1 g1 d2 e5", "b6 d6 f6 a7", true);
        let caps: Vec<String> = p
            .legal_moves()
            .iter()
            .filter(|(m, _)| m.capture().is_some())
            .map(|(m, _)| m.text(Rules::Nine).to_string())
            .collect();
        assert_eq!(caps, ["d2-d1xa7"]);
        // When every opponent stone stands in a mill, any may be taken.
        let p = pos("a1 g1 d2 e5", "b6 d6 f6", true);
        assert_eq!(
            p.legal_moves()
                .iter()
                .filter(|(m, _)| m.capture().is_some())
                .count(),
            3
        );
        // Flying: 3 stones move anywhere (18 empty points); d5-d6 closes b6 d6 f6
        // and becomes three captures.
        let p = pos("a1 g1 c3", "d5 b6 f6", false);
        assert_eq!(p.legal_moves().len(), 3 * 18 - 1 + 3);
        // A capture leaving 2 stones wins at once.
        let p = pos("a1 g1 c3", "d5 b6 f6", true);
        let o = p.play(Move::parse("c3-d1xd5").unwrap()).unwrap();
        assert_eq!(o, Outcome::Win);
        // Blocked: every White stone is surrounded; a side with no move has lost.
        let p = pos("a1 g1 g4 g7", "d1 a4 f2 f4 f6 d7", true);
        assert!(p.is_lost());
        let p = pos("a1 d2 d3 c4 b2", "d1 a4 g1 b4 c3 e3 d5 b6", true);
        // a1: d1, a4 black. d2: d1 black, b2 white, f2 empty -> can move, not lost.
        assert!(!p.is_lost());
        let p = pos("a1 g1 a7 g7", "d1 a4 g4 d7 b6 d6", true);
        assert!(p.is_lost());
    }

    /// Six Men's Morris: 16-character boards, its own point names, no flying, the
    /// square sides as mills.
    #[test]
    fn six_positions_and_moves() {
        let six = |text: &str| Position::parse_in(Rules::Six, text);
        let p = six("WWB.B........... w").unwrap();
        assert_eq!(p.to_string(), "WWB.B........... w");
        assert_eq!(p.rules, Rules::Six);
        assert!(matches!(
            six("........................ w"),
            Err(NotationError::BoardLength { expected: 16, .. })
        ));
        assert!(matches!(
            six("................ w 7 6"),
            Err(NotationError::BadHand { stones: 6, .. })
        ));
        let mv = |text: &str| Move::parse_in(Rules::Six, text).unwrap();
        assert_eq!(mv("c1-c2xb2").text(Rules::Six).to_string(), "c1-c2xb2");
        assert!(Move::parse_in(Rules::Six, "d1").is_err());
        // Three stones do not fly: a1 steps to a3 only (c1 is taken), c1 to e1 (c2
        // is Black's), b2 to b3.
        let p = six("WW.WB.......B..B w").unwrap();
        let moves: Vec<String> = p
            .legal_moves()
            .iter()
            .map(|(m, _)| m.text(Rules::Six).to_string())
            .collect();
        assert_eq!(moves, ["a1-a3", "c1-e1", "b2-b3"]);
        // Placing e1 closes a1 c1 e1 and captures.
        let p = six("WW..B.B......... w 4 4").unwrap();
        let captures = p
            .legal_moves()
            .iter()
            .filter(|(m, _)| m.capture().is_some())
            .count();
        assert_eq!(captures, 2);
        assert!(p.play(mv("e1xc2")).is_ok());
        assert!(p.play(mv("e1")).is_err());
    }
}
