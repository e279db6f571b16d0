//! Rule sets as data: which board, how many stones, flying, moving during
//! placement and what a full board means, for each standard Morris variant
//! ([`Rules`] names one, [`RuleSet`] holds its data).
//!
//! The engine is monomorphised per board ([`super::geometry::Board`]): a rule set
//! names its board, and the code that builds or reads a file dispatches on it once
//! ([`with_board!`](crate::with_board)); the other rules are runtime values read
//! outside the hot loops.

use std::fmt;
use std::str::FromStr;

use anyhow::{Result, bail};

use super::geometry::BoardKind;

/// A standard rule set, by name (`--rules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rules {
    /// Nine Men's Morris as Gasser: the default, and what every file without a
    /// rule-set name holds.
    #[default]
    Nine,
    /// Six Men's Morris: 16 points, 8 mills, 6 stones a side, no flying.
    Six,
    /// Six Men's Morris with flying at 3 stones (a common house rule).
    SixFlying,
    /// Lasker Morris: the nine board, 10 stones a side, and a side with stones in
    /// hand may slide a stone instead of placing one (as Malom plays it).
    Lasker,
    /// Morabaraba: the nine board plus the four corner diagonals (20 mills), 12
    /// stones a side, flying at 3, a full board a draw (as Malom).
    Morabaraba,
}

/// What a side with 3 stones may do in the moving phase, and other differences
/// between the variants, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// The name (`--rules`, FORMAT.md).
    pub name: &'static str,
    /// The board.
    pub board: BoardKind,
    /// Stones per side in the whole game.
    pub stones: u8,
    /// A side with exactly 3 stones may move a stone to any empty point (with
    /// [`RuleSet::moving_in_placement`]: 3 on the board and in hand together, see
    /// [`RuleSet::flies`]).
    pub flying: bool,
    /// During placement a side may move a stone instead of placing one (Lasker).
    pub moving_in_placement: bool,
    /// A full board at the end of placement is a draw (Morabaraba); false where the
    /// board cannot fill up (fewer stones than points).
    pub full_board_draw: bool,
    /// The file's `rules` meta value (docs/FORMAT.md §4): fixed per rule set.
    pub meta: &'static str,
}

/// Nine Men's Morris (the `rules` text of every nine file since format 1).
const NINE: RuleSet = RuleSet {
    name: "nine",
    board: BoardKind::Nine,
    stones: 9,
    flying: true,
    moving_in_placement: false,
    full_board_draw: false,
    meta: "gasser: 24 points, 16 mills, flying at 3 stones, one capture per move closing mills, stones in mills protected unless all are, fewer than 3 stones or no legal move loses, undecided is a draw",
};

/// Six Men's Morris, the usual rules (no flying).
const SIX: RuleSet = RuleSet {
    name: "six",
    board: BoardKind::Six,
    stones: 6,
    flying: false,
    moving_in_placement: false,
    full_board_draw: false,
    meta: "six: 16 points, 8 mills, 6 stones, no flying, one capture per move closing mills, stones in mills protected unless all are, fewer than 3 stones or no legal move loses, undecided is a draw",
};

/// Six Men's Morris with flying.
const SIX_FLYING: RuleSet = RuleSet {
    name: "six-flying",
    flying: true,
    meta: "six-flying: 16 points, 8 mills, 6 stones, flying at 3 stones, one capture per move closing mills, stones in mills protected unless all are, fewer than 3 stones or no legal move loses, undecided is a draw",
    ..SIX
};

/// Lasker Morris as Malom (Gevay and Danner 2016) defines it: the nine board and
/// mills, 10 stones, a side with stones in hand places or slides one of its stones
/// on the board (none to slide before it has placed one), and flies when it has 3
/// stones on the board and in hand together.
const LASKER: RuleSet = RuleSet {
    name: "lasker",
    board: BoardKind::Nine,
    stones: 10,
    flying: true,
    moving_in_placement: true,
    full_board_draw: false,
    meta: "lasker: 24 points, 16 mills, 10 stones, a side with stones in hand places one or moves one on the board, flying at 3 stones on the board and in hand, one capture per move closing mills, stones in mills protected unless all are, fewer than 3 stones or no legal move loses, undecided is a draw",
};

/// Morabaraba as Malom (Gevay and Danner 2016) defines it: Nine Men's Morris's
/// rules on the board with the four corner diagonals (lines and mills), 12 stones
/// a side, and a board filled by the placements (12 stones each, none captured) a
/// draw.
const MORABARABA: RuleSet = RuleSet {
    name: "morabaraba",
    board: BoardKind::Morabaraba,
    stones: 12,
    flying: true,
    moving_in_placement: false,
    full_board_draw: true,
    meta: "morabaraba: 24 points, 20 mills (the nine board's and the 4 corner diagonals), 12 stones, flying at 3 stones, one capture per move closing mills, stones in mills protected unless all are, a full board after placement is a draw, fewer than 3 stones or no legal move loses, undecided is a draw",
};

impl RuleSet {
    /// Whether a side with `on_board` stones on the board and `in_hand` in hand
    /// moves a stone to any empty point: with flying, when it has 3 stones; while it
    /// still places (only where the rules let it move then) its hand counts too, as
    /// in Malom's Lasker Morris.
    pub fn flies(&self, on_board: u32, in_hand: u8) -> bool {
        self.flying
            && if self.moving_in_placement {
                on_board + u32::from(in_hand) == 3
            } else {
                in_hand == 0 && on_board == 3
            }
    }
}

impl Rules {
    /// Every standard rule set.
    pub const ALL: [Rules; 5] = [
        Rules::Nine,
        Rules::Six,
        Rules::SixFlying,
        Rules::Lasker,
        Rules::Morabaraba,
    ];

    /// The rule set's data.
    pub const fn set(self) -> &'static RuleSet {
        match self {
            Rules::Nine => &NINE,
            Rules::Six => &SIX,
            Rules::SixFlying => &SIX_FLYING,
            Rules::Lasker => &LASKER,
            Rules::Morabaraba => &MORABARABA,
        }
    }

    /// Its name (`nine`, `six`).
    pub fn name(self) -> &'static str {
        self.set().name
    }

    /// The rule set a file's `rules` meta value names.
    pub fn from_meta(text: &str) -> Result<Rules> {
        match Rules::ALL.into_iter().find(|r| r.set().meta == text) {
            Some(rules) => Ok(rules),
            None => bail!(
                "the file was built with rules this tb does not know: {text} (it knows {})",
                Rules::ALL.map(Rules::name).join(", ")
            ),
        }
    }

    /// Stones per side in the whole game.
    pub fn stones(self) -> u8 {
        self.set().stones
    }

    /// Whether a side with 3 stones flies.
    pub fn flying(self) -> bool {
        self.set().flying
    }

    /// Whether a side with stones in hand may move a stone instead of placing one
    /// (Lasker): the hands of the two sides are then independent.
    pub fn moving_in_placement(self) -> bool {
        self.set().moving_in_placement
    }

    /// The board.
    pub fn board(self) -> BoardKind {
        self.set().board
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Rules> {
        match Rules::ALL.into_iter().find(|r| r.name() == s) {
            Some(rules) => Ok(rules),
            None => bail!(
                "unknown rule set {s:?} (known: {})",
                Rules::ALL.map(Rules::name).join(", ")
            ),
        }
    }
}

/// Runs `$body` with `$B` the [`Board`](super::geometry::Board) type of board
/// `$kind` (a [`BoardKind`]): the one place a runtime board becomes a type.
#[macro_export]
macro_rules! with_board {
    ($kind:expr, $B:ident => $body:expr) => {
        match $kind {
            $crate::games::morris::geometry::BoardKind::Nine => {
                type $B = $crate::games::morris::geometry::Nine;
                $body
            }
            $crate::games::morris::geometry::BoardKind::Six => {
                type $B = $crate::games::morris::geometry::Six;
                $body
            }
            $crate::games::morris::geometry::BoardKind::Morabaraba => {
                type $B = $crate::games::morris::geometry::Morabaraba;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_meta_round_trip() {
        for rules in Rules::ALL {
            assert_eq!(rules.name().parse::<Rules>().unwrap(), rules);
            assert_eq!(Rules::from_meta(rules.set().meta).unwrap(), rules);
        }
        assert!("ten".parse::<Rules>().is_err());
        assert!(Rules::from_meta("other").is_err());
        assert_eq!(Rules::default(), Rules::Nine);
    }
}
