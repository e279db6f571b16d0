//! Chains as pseudo-lines (Wilson, `../shared/seeds/001_*`, "chains").
//!
//! A *chain* is a string of one or more boxes that have two sides drawn; its lines
//! are the open sides of those boxes. Wilson's analyzer treats each chain of the
//! start position as one pseudo-line, on the assumption that once either player draws
//! a line of the chain, best play fills the rest of that chain (by one player or the
//! other) before any other line is drawn. A position is then one bit per open line
//! outside the chains and one per chain, which is how his 5x5 problem 12.18 (30 open
//! lines and 6 chains of 15 lines) fits 36 bits.
//!
//! Here the assumption is the rule of the game that is analysed: **while a chain is
//! partly drawn, the only legal moves are its open lines.** Which line of the chain
//! is drawn first, who takes which box, and whether the chain player takes all the
//! boxes or hands the last two back (all the cases Wilson's program works out from
//! the boxes around the chain: captures into the chain, extensions, loops) are then
//! decided by the ordinary rules inside the chain, so nothing is approximated beyond
//! the assumption itself. Between chains the game is the usual one.
//!
//! Chains are marked in Wilson files with dots on their lines (and, for the eye, in
//! their boxes), as his diagram of problem 12.18 does: a dotted line is an open line
//! of a chain, and two dotted lines belong to the same chain when they are the open
//! sides of a box whose two other sides are drawn.

use super::board::{Board, Lines};

/// Most lines a chain may have: [`Chains::play_out`] walks every subset of them.
pub const MAX_CHAIN_LINES: usize = 12;

/// The chains of a position: disjoint masks of open lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chains {
    masks: Vec<Lines>,
    /// Every chain line.
    all: Lines,
}

/// Why dotted lines do not make chains.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// A dotted line that no box with two drawn sides joins to a chain.
    #[error(
        "dotted line {0} is not a side of a chain box (a chain runs through boxes whose two other sides are drawn)"
    )]
    Stray(String),
    /// A dotted line that is also drawn.
    #[error("line {0} is both drawn and dotted")]
    Drawn(String),
    /// A chain too long to play out as one unit.
    #[error("the chain through {0} has {1} lines; a chain may have at most {MAX_CHAIN_LINES}")]
    TooLong(String, usize),
    /// Chains given to a command of the plain game; the text says which and how.
    #[error(
        "the position marks chains with dots, but {0} the plain game: remove the chain dots (tb solve reads them: exactly by default, as pseudo-lines with --wilson-chains)"
    )]
    PlainGameOnly(&'static str),
}

impl Chains {
    /// No chains: the plain game.
    pub fn none() -> Chains {
        Chains::default()
    }

    /// Groups the dotted (open) lines of `lines` into chains: two dotted lines are in
    /// one chain when they are the two open sides of a box with two drawn sides.
    /// Every dotted line must be a side of such a box.
    pub fn from_dotted(board: &Board, lines: Lines, dotted: Lines) -> Result<Chains, ChainError> {
        if let Some(line) = first_line(lines & dotted) {
            return Err(ChainError::Drawn(board.line_name(line)));
        }
        // Each chain box joins its two dotted sides, and every chain they touch.
        let mut masks: Vec<Lines> = Vec::new();
        for r in 0..board.rows() {
            for c in 0..board.cols() {
                let sides = board.box_mask(r, c);
                let pair = sides & dotted;
                if (sides & lines).count_ones() == 2 && pair.count_ones() == 2 {
                    let joined = masks
                        .iter()
                        .filter(|&&m| m & pair != 0)
                        .fold(pair, |j, &m| j | m);
                    masks.retain(|&m| m & pair == 0);
                    masks.push(joined);
                }
            }
        }
        if let Some(line) = first_line(dotted & !masks.iter().fold(0, |all, &m| all | m)) {
            return Err(ChainError::Stray(board.line_name(line)));
        }
        Chains::from_masks(board, masks)
    }

    /// Chains from their line masks (disjoint, each at most [`MAX_CHAIN_LINES`]
    /// lines; checked by the caller except for the length).
    pub fn from_masks(board: &Board, mut masks: Vec<Lines>) -> Result<Chains, ChainError> {
        if let Some(&long) = masks
            .iter()
            .find(|m| m.count_ones() as usize > MAX_CHAIN_LINES)
        {
            return Err(ChainError::TooLong(
                board.line_name(long.trailing_zeros() as usize),
                long.count_ones() as usize,
            ));
        }
        masks.sort_unstable_by_key(|m| m.trailing_zeros());
        let all = masks.iter().fold(0, |all, &m| all | m);
        Ok(Chains { masks, all })
    }

    /// An error unless there are no chains: for the commands of the plain game,
    /// `what` saying which (e.g. "a tablebase holds").
    pub fn plain_only(&self, what: &'static str) -> Result<(), ChainError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(ChainError::PlainGameOnly(what))
        }
    }

    /// Whether there are no chains.
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty()
    }

    /// The chains' line masks, in order of their lowest line.
    pub fn masks(&self) -> &[Lines] {
        &self.masks
    }

    /// The names of each chain's lines, chain by chain (as files and JSON list them).
    pub fn line_names(&self, board: &Board) -> Vec<Vec<String>> {
        self.masks.iter().map(|&c| board.line_names(c)).collect()
    }

    /// Every chain line.
    pub fn all(&self) -> Lines {
        self.all
    }

    /// The lines that may be drawn in `position` among `open`: the open lines of the
    /// chain that is partly drawn, if any, else all of `open`.
    #[inline]
    pub fn legal(&self, position: Lines, open: Lines) -> Lines {
        match self.partial(position) {
            Some(chain) => chain & open,
            None => open,
        }
    }

    /// The chain that is partly drawn in `position`, if any.
    #[inline]
    pub fn partial(&self, position: Lines) -> Option<Lines> {
        if self.all & position == 0 {
            return None;
        }
        self.masks.iter().copied().find(|&c| {
            let drawn = c & position;
            drawn != 0 && drawn != c
        })
    }

    /// Each chain's representative: its lowest line. In *unit form* (how a chain
    /// tablebase indexes positions, one bit per unit) a chain's representative stands
    /// for the whole chain and its other lines are always set.
    pub fn representatives(&self) -> Lines {
        self.masks
            .iter()
            .fold(0, |r, &m| r | (m & m.wrapping_neg()))
    }

    /// The chain lines other than the representatives (set in every unit form).
    pub fn hidden(&self) -> Lines {
        self.all & !self.representatives()
    }

    /// The unit form of `position`; `None` when a chain is partly drawn (such a
    /// position is no combination of units).
    #[inline]
    pub fn to_units(&self, position: Lines) -> Option<Lines> {
        if self.partial(position).is_some() {
            return None;
        }
        Some(position | self.hidden())
    }

    /// The position of a unit form: each chain drawn whole when its representative
    /// is set, not at all otherwise.
    #[inline]
    pub fn from_units(&self, units: Lines) -> Lines {
        self.masks
            .iter()
            .filter(|&&c| units & c & c.wrapping_neg() == 0)
            .fold(units, |p, &c| p & !c)
    }

    /// The chain whose representative is `line`, if any.
    #[inline]
    pub fn represented_by(&self, line: usize) -> Option<Lines> {
        if self.all >> line & 1 == 0 {
            return None;
        }
        self.masks
            .iter()
            .copied()
            .find(|&c| c.trailing_zeros() as usize == line)
    }

    /// The value, for the player to move in `position`, of playing `chain` out from
    /// there (some of its lines may be drawn already): the two players draw its open
    /// lines by the ordinary rules (a line completing `k` boxes is worth `k` and
    /// keeps the turn) until it is full, and `after` is the value of `position |
    /// chain` for whoever is to move then. `completes(p, line)` is the number of
    /// boxes `line` completes in `p`.
    pub fn play_out(
        position: Lines,
        chain: Lines,
        after: i32,
        completes: impl Fn(Lines, usize) -> i32,
    ) -> i32 {
        let open = chain & !position;
        let mut buffer = [0usize; MAX_CHAIN_LINES];
        let n = open.count_ones() as usize;
        debug_assert!(n <= MAX_CHAIN_LINES);
        for (slot, line) in buffer
            .iter_mut()
            .zip((0..64).filter(|l| open >> l & 1 == 1))
        {
            *slot = line;
        }
        let lines = &buffer[..n];
        let full = (1usize << n) - 1;
        // value[s]: the value for the player to move once the lines of subset `s`
        // are drawn too; supersets are larger numbers, so a downward sweep has them.
        // Chains are short: a small table on the stack (a chain kernel calls this
        // for every position and chain), a bigger one allocated only when needed.
        let mut small = [0i32; 1 << 4];
        let mut large = Vec::new();
        let value: &mut [i32] = if n <= 4 {
            &mut small[..=full]
        } else {
            large.resize(full + 1, 0);
            &mut large
        };
        value[full] = after;
        for s in (0..full).rev() {
            let drawn = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| s >> i & 1 == 1)
                .fold(position, |p, (_, &l)| p | 1 << l);
            value[s] = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| s >> i & 1 == 0)
                .map(|(i, &l)| {
                    let rest = value[s | 1 << i];
                    match completes(drawn, l) {
                        0 => -rest,
                        k => k + rest,
                    }
                })
                .max()
                .expect("an open chain line");
        }
        value[0]
    }

    /// How many units a position has open: open lines outside the chains plus chains
    /// not yet drawn (Wilson's bits).
    pub fn open_units(&self, position: Lines, all: Lines) -> u32 {
        (all & !position & !self.all).count_ones()
            + self.masks.iter().filter(|&&c| c & position == 0).count() as u32
    }
}

/// How the chains a position marks are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChainRule {
    /// The plain game's values: a chain is played as a unit only where that
    /// provably changes no value ([`Chains::is_exact_unit`]); every other chain's
    /// lines are plain lines. The default.
    #[default]
    Exact,
    /// Wilson's assumption for every chain (while a chain is partly drawn, only its
    /// lines may be drawn): answers the chain game, which may differ from the
    /// plain game's (`--wilson-chains`).
    Wilson,
}

impl ChainRule {
    /// The rule a command asks for: Wilson's with `--wilson-chains`
    /// (`wilson_chains=True`), else exact.
    pub fn asked(wilson_chains: bool) -> ChainRule {
        if wilson_chains {
            ChainRule::Wilson
        } else {
            ChainRule::Exact
        }
    }

    /// The rule's name in JSON (`chain_rule`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChainRule::Exact => "exact",
            ChainRule::Wilson => "wilson",
        }
    }
}

impl Chains {
    /// Whether the chain `mask` may be played as a unit without changing any value
    /// of the plain game, its moves' values included: a chain of one box whose two
    /// open sides are both on the edge of the board (a box that no other box
    /// touches through an open line).
    ///
    /// Why it is exact: let `b` be that box with one of its sides drawn, and `l` the
    /// other. Drawing `l` completes `b` and nothing else, so for any other move `x`:
    /// if `x` completes nothing, `l` then `x` is worth 2 more than `x` (after `x` the
    /// opponent may take `b` with `l` and is where `l`, `x` would have left them);
    /// if `x` completes boxes, it completes the same ones after `l`, and by
    /// induction on the open lines `l` is best after `x`, so `l`, `x` is worth what
    /// `x`, `l` is. So `l` is a best move wherever `b` can be taken, and the chain
    /// rule, which then allows `l` only, keeps every value.
    ///
    /// Why longer chains are not (tests/chains_oracle.rs finds them): the rule
    /// forbids taking a box elsewhere while a chain is partly drawn. A player who
    /// opens a chain while a box hangs elsewhere leaves the taker the choice
    /// between the hanging box and keeping control by handing back the chain's last
    /// boxes, but not both; in the plain game the taker gets both. Even a chain of
    /// three boxes with both ends on the edge changes such a move's value (3x3: the
    /// move is worth -3 in the plain game and -1 under the rule), and a chain with
    /// an end inside the board changes the position's value.
    pub fn is_exact_unit(board: &Board, mask: Lines) -> bool {
        let perimeter = board.perimeter();
        mask.count_ones() == 2 && mask & !perimeter == 0
    }

    /// The chains `rule` plays as units: all of them ([`ChainRule::Wilson`]) or
    /// those proven exact ([`ChainRule::Exact`]).
    pub fn under(&self, board: &Board, rule: ChainRule) -> Chains {
        match rule {
            ChainRule::Wilson => self.clone(),
            ChainRule::Exact => Chains::from_masks(
                board,
                self.masks
                    .iter()
                    .copied()
                    .filter(|&m| Chains::is_exact_unit(board, m))
                    .collect(),
            )
            .expect("a subset of valid chains"),
        }
    }

    /// Whether playing these chains as units may change a value of the plain game
    /// (some chain is not [`Chains::is_exact_unit`]).
    pub fn approximate(&self, board: &Board) -> bool {
        self.masks.iter().any(|&m| !Chains::is_exact_unit(board, m))
    }

    /// The rule under which these chains, played as units, were chosen: exact when
    /// each is exact as a unit, else Wilson's.
    pub fn rule(&self, board: &Board) -> ChainRule {
        if self.approximate(board) {
            ChainRule::Wilson
        } else {
            ChainRule::Exact
        }
    }
}

fn first_line(mask: Lines) -> Option<usize> {
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::super::board::boxes_completed_with;
    use super::*;

    fn board(spec: &str) -> Board {
        spec.parse().unwrap()
    }

    fn mask(b: &Board, names: &[&str]) -> Lines {
        names.iter().map(|n| 1 << b.parse_line(n).unwrap()).sum()
    }

    #[test]
    fn dotted_sides_of_two_sided_boxes_make_chains() {
        let b = board("2x2");
        // Box (0,0) has its top and left drawn; its right and bottom are dotted.
        let lines = mask(&b, &["h0.0", "v0.0"]);
        let dotted = mask(&b, &["v0.1", "h1.0"]);
        let chains = Chains::from_dotted(&b, lines, dotted).unwrap();
        assert_eq!(chains.masks(), &[dotted]);
        // Drawing one of its lines makes it partial: only the other is legal.
        let open = b.all_lines() & !lines;
        let one = lines | mask(&b, &["v0.1"]);
        assert_eq!(chains.legal(one, open & !one), mask(&b, &["h1.0"]));
        assert_eq!(chains.legal(lines, open), open);
        assert_eq!(chains.open_units(lines, b.all_lines()), 12 - 2 - 2 + 1);
    }

    /// A chain of `len` boxes across a 1xN board (tops and bottoms drawn): its
    /// `len + 1` lines are the verticals. `play_out` against a plain recursive
    /// minimax of the same rules, for chains on both sides of the small table.
    #[test]
    fn play_out_matches_a_recursive_minimax() {
        fn minimax(b: &Board, p: Lines, chain: Lines, after: i32) -> i32 {
            let open = chain & !p;
            if open == 0 {
                return after;
            }
            (0..64)
                .filter(|l| open >> l & 1 == 1)
                .map(|l| {
                    let q = p | 1 << l;
                    let closed = (0..b.cols())
                        .filter(|&c| {
                            let m = b.box_mask(0, c);
                            m >> l & 1 == 1 && q & m == m
                        })
                        .count() as i32;
                    let rest = minimax(b, q, chain, after);
                    if closed > 0 { closed + rest } else { -rest }
                })
                .max()
                .unwrap()
        }
        for len in [1, 2, 3, 5, 7] {
            let b = board(&format!("1x{len}"));
            let all = b.all_lines();
            let verticals: Lines = (0..=len)
                .map(|c| 1 << b.parse_line(&format!("v0.{c}")).unwrap())
                .sum();
            let completion = b.completion_masks();
            let completes = |p: Lines, l: usize| boxes_completed_with(p, completion[l]) as i32;
            // From the whole chain open and with one or two of its lines drawn.
            for drawn in [
                0,
                1 << verticals.trailing_zeros(),
                verticals & 0b101 << verticals.trailing_zeros(),
            ] {
                let p = all & !verticals | drawn;
                for after in -3..=3 {
                    assert_eq!(
                        Chains::play_out(p, verticals, after, completes),
                        minimax(&b, p, verticals, after),
                        "1x{len}, drawn {drawn:b}, after {after}"
                    );
                }
            }
        }
    }

    #[test]
    fn stray_and_drawn_dots_are_refused() {
        let b = board("2x2");
        let lines = mask(&b, &["h0.0"]);
        let err = Chains::from_dotted(&b, lines, mask(&b, &["v0.1"])).unwrap_err();
        assert_eq!(err, ChainError::Stray("v0.1".into()));
        let err = Chains::from_dotted(&b, lines, lines).unwrap_err();
        assert_eq!(err, ChainError::Drawn("h0.0".into()));
    }
}
