//! Counts the positions of a Morris game reachable from the empty board, to compare
//! with published counts (which count raw positions, where a `tb` file stores one
//! value per symmetry class of each table, reachable or not):
//!
//!   cargo run --release --example morris_reachable -- six   (or six-flying)
//!
//! A breadth-first search over symmetry classes, each with the colour to move (a
//! board's symmetric images are reachable when it is, its colour swap need not
//! be). Prints the reachable classes, the raw positions they stand for (board,
//! side to move and hands; each class counted 16 / |stabilizer| times), and the
//! distinct boards (white and black stones only) among them.

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use tb::games::morris::geometry::{Board, BoardKind, SYMMETRIES, Six};
use tb::games::morris::index::Table;
use tb::games::morris::rules::{Move, Outcome, Position};
use tb::games::morris::variant::Rules;

fn main() -> Result<()> {
    let rules: Rules = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "six".into())
        .parse()?;
    if rules.board() != BoardKind::Six {
        bail!("only the six board is small enough for this count");
    }
    // Key: hands, stones, class index, colour to move.
    let key = |p: &Position| -> Result<u64> {
        let (m, o) = p.stones();
        let index = Table::<Six>::get(m, o)?.index(p.mover, p.opponent);
        Ok(
            ((p.hands[0] as u64 * 16 + p.hands[1] as u64) * 16 + m as u64) << 40
                | (o as u64) << 36
                | index << 1
                | u64::from(p.white_to_move),
        )
    };
    let start = Position::start(rules);
    let mut seen: HashMap<u64, Position> = HashMap::from([(key(&start)?, start)]);
    let mut frontier = vec![start];
    // The positions a winning capture leaves (the game over, the loser with 2
    // stones): not stored by tb, but some counts include them.
    let mut ended: HashMap<u64, Position> = HashMap::new();
    while let Some(p) = frontier.pop() {
        for (mv, outcome) in p.legal_moves() {
            match outcome {
                Outcome::Child(c) => {
                    if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(key(&c)?) {
                        e.insert(c);
                        frontier.push(c);
                    }
                }
                Outcome::Win => {
                    let end = after_win(&p, mv);
                    ended.insert(key(&end)?, end);
                }
            }
        }
    }
    let raw_of = |p: &Position| -> Result<u64> {
        let (m, o) = p.stones();
        let stab = Table::<Six>::get(m, o)?.stabilizer_size(p.mover, p.opponent);
        Ok(SYMMETRIES as u64 / stab as u64)
    };
    let mut raw_ended = 0;
    for p in ended.values() {
        raw_ended += raw_of(p)?;
    }
    let mut raw = 0u64;
    let mut boards: HashSet<(u32, u32)> = HashSet::new();
    let mut board_positions = 0u64;
    for p in seen.values() {
        raw += raw_of(p)?;
        // The board's class: its least image, counted once with its orbit size.
        let (w, b) = (p.white(), p.black());
        let images: Vec<(u32, u32)> = (0..SYMMETRIES)
            .map(|s| (Six::transform(s, w), Six::transform(s, b)))
            .collect();
        let least = *images.iter().min().expect("16 images");
        if boards.insert(least) {
            let distinct: HashSet<&(u32, u32)> = images.iter().collect();
            board_positions += distinct.len() as u64;
        }
    }
    println!(
        "{rules}: {} reachable classes (with the colour to move), {raw} raw positions (board, side to move, hands), {board_positions} distinct boards ({} classes)",
        seen.len(),
        boards.len()
    );
    println!(
        "and {raw_ended} raw positions a winning capture ends the game in ({} classes)",
        ended.len()
    );
    Ok(())
}

/// The position a winning move of `p` leaves: the loser to move (with 2 stones).
fn after_win(p: &Position, mv: Move) -> Position {
    let (to, from, capture) = match mv {
        Move::Place { to, capture } => (to, None, capture),
        Move::Step { from, to, capture } => (to, Some(from), capture),
    };
    let mover = p.mover & !from.map_or(0, |f| 1 << f) | 1 << to;
    let opponent = p.opponent & !capture.map_or(0, |c| 1 << c);
    let hands = [
        p.hands[1],
        p.hands[0].saturating_sub(u8::from(from.is_none())),
    ];
    Position::with_mover(opponent, mover, !p.white_to_move, hands).on(p.rules)
}
