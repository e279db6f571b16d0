//! What a probe of a strategy file answers: X's move from a record the probe
//! finds sound (see [`super::trust`]) or from a forced win it searches itself, and
//! for O to move, whether every reply leads to such an answer.

use super::geometry::{automorphisms, canonical};
use super::position::{Position, Side};
use super::stored::{GAME, Record, StrategyFile};
use super::threats::forced_win;
use super::trust::Probing;

impl StrategyFile {
    /// The strategy's move in a position, in the position's own cells, with the
    /// record (None: not a strategic position of the strategy, or its record is not
    /// sound: see [`super::trust`]).
    pub fn lookup(&self, p: Position) -> Option<(usize, Record)> {
        self.sound_record(p, &mut Probing::default())
    }

    /// [`Self::lookup`] with what `probing` has found out so far.
    fn sound_record(&self, p: Position, probing: &mut Probing) -> Option<(usize, Record)> {
        let ((x, o), which) = canonical(p.x, p.o);
        let r = self.blocks.iter().enumerate().find_map(|(i, block)| {
            let r = block.records.get(&(x, o))?;
            probing.sound(self, i, (x, o)).then_some(*r)
        })?;
        let perm = &automorphisms()[which].perm;
        let cell = perm.iter().position(|&c| c == r.cell)?;
        Some((cell, r))
    }

    /// The answer for a position (see [`QubicAnswer`]).
    pub fn probe(&self, p: Position) -> QubicAnswer {
        let mut answer = QubicAnswer {
            position: p,
            result: "unknown",
            cell: None,
            source: None,
            plies: None,
        };
        if p.has_four(Side::X) || p.has_four(Side::O) {
            // The game is over: the side to move has lost (its opponent just won).
            answer.result = "loss";
            answer.plies = Some(0);
            return answer;
        }
        if p.to_move() == Side::O {
            // O to move: X wins when every reply leads to a position X wins (one
            // probing over the replies: they share positions).
            let mut probing = Probing::default();
            let mut worst = 0u32;
            let mut empty = p.empty();
            while empty != 0 {
                let r = empty.trailing_zeros() as usize;
                empty &= empty - 1;
                let after = p.play(r).expect("an empty cell");
                match self.x_answer(after, &mut probing) {
                    Some((_, _, plies)) => worst = worst.max(1 + plies),
                    None => return answer,
                }
            }
            if worst > 0 {
                answer.result = "loss";
                answer.plies = Some(worst);
            }
            return answer;
        }
        if let Some((cell, source, plies)) = self.x_answer(p, &mut Probing::default()) {
            answer.result = "win";
            answer.cell = Some(cell);
            answer.source = Some(source);
            answer.plies = Some(plies);
        }
        answer
    }

    /// X to move: X's winning move, where it comes from, and the plies to X's four.
    fn x_answer(&self, p: Position, probing: &mut Probing) -> Option<(usize, &'static str, u32)> {
        if let Some((cell, r)) = self.sound_record(p, probing) {
            return Some((cell, "strategy", u32::from(r.plies)));
        }
        let (cell, plies) = forced_win(&mut probing.forced, p.x, p.o)?;
        Some((cell, "forced", plies))
    }
}

/// A probe's answer.
#[derive(Debug, Clone)]
pub struct QubicAnswer {
    /// The position asked.
    pub position: Position,
    /// For the side to move: `win`, `loss` or `unknown` (outside the strategy).
    pub result: &'static str,
    /// X's winning move (X to move, `win`).
    pub cell: Option<usize>,
    /// `strategy` or `forced`.
    pub source: Option<&'static str>,
    /// Plies to X's four under the strategy.
    pub plies: Option<u32>,
}

impl QubicAnswer {
    /// The probe JSON object (docs/FORMAT.md §6.3).
    pub fn json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            game: &'a str,
            position: String,
            to_move: String,
            result: &'a str,
            #[serde(rename = "move", skip_serializing_if = "Option::is_none")]
            cell: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            source: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            plies: Option<u32>,
        }
        serde_json::to_string(&Json {
            game: GAME,
            position: self.position.to_string(),
            to_move: self.position.to_move().letter().to_string(),
            result: self.result,
            cell: self.cell,
            source: self.source,
            plies: self.plies,
        })
        .expect("answers serialise")
    }

    /// One line of text.
    pub fn text(&self) -> String {
        let side = self.position.to_move().letter();
        match (self.result, self.cell) {
            ("win", Some(cell)) => format!(
                "{side} to move wins: play {cell} ({}; four in a line in {} plies)",
                self.source.unwrap_or("strategy"),
                self.plies.unwrap_or(0)
            ),
            ("loss", _) if self.plies == Some(0) => format!("{side} to move: the game is over"),
            ("loss", _) => format!(
                "{side} to move loses: X has four in a line within {} plies whatever O plays",
                self.plies.unwrap_or(0)
            ),
            _ => format!("{side} to move: outside the strategy (unknown)"),
        }
    }
}
