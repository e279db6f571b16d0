//! Loony analysis of one position by exhaustion ([`solve`]): every position
//! reachable from it, one loony byte each ([`super::loony`]), answered as a probe
//! ([`Probe`]). An oracle for the loony tablebase and the analyst of `tb play`
//! and `tb solve --loony`.

use super::board::{Board, Lines};
use super::loony::{Detector, Loony, decode, encode, key, move_key, unkey};
use super::probe::{MoveValue, Probe, Source};
use anyhow::{Result, bail};

/// Most open lines [`solve`] takes (a byte per position of 2^26).
pub const MAX_EXHAUSTIVE_OPEN: u32 = 26;

/// Loony analysis of `position` on `board` by exhaustion: every position reachable
/// from it, one byte each, from the full board back (the children of a set of drawn
/// lines are supersets, so descending order meets them first). Values, flags and
/// offers as [`super::loony`] defines them; `penalty` is the full board's
/// value.
pub fn solve(board: &Board, position: Lines, penalty: i32) -> Result<Probe> {
    let open: Vec<usize> = (0..board.num_lines())
        .filter(|&l| position >> l & 1 == 0)
        .collect();
    let k = open.len() as u32;
    if k > MAX_EXHAUSTIVE_OPEN {
        bail!(
            "loony analysis by exhaustion takes at most {MAX_EXHAUSTIVE_OPEN} open lines; this position has {k}"
        );
    }
    super::spec::check_loony_range(board, penalty)?;
    let detector = Detector::new(board);
    let completion = board.completion_masks();
    let lines_of = |s: u64| -> Lines {
        let mut lines = position;
        let mut rest = s;
        while rest != 0 {
            lines |= 1 << open[rest.trailing_zeros() as usize];
            rest &= rest - 1;
        }
        lines
    };
    let boxes_of = |lines: Lines, line: usize| -> u32 {
        completion[line]
            .iter()
            .filter(|&&m| m != u64::MAX && lines & m == m)
            .count() as u32
    };
    let all = (1u64 << k) - 1;
    let mut table = vec![0u8; 1usize << k];
    table[all as usize] = encode(penalty, Loony::Neither, false);
    for s in (0..all).rev() {
        let lines = lines_of(s);
        let mut best = i32::MIN;
        let mut free = all & !s;
        while free != 0 {
            let j = free.trailing_zeros() as usize;
            free &= free - 1;
            let child = table[(s | 1 << j) as usize];
            let key = move_key(boxes_of(lines, open[j]), child).expect("bytes this solver wrote");
            best = best.max(key);
        }
        let (value, flag) = unkey(best);
        table[s as usize] = encode(value, flag, detector.offers(lines));
    }
    let (value, flag, _) = decode(table[0]).expect("bytes this solver wrote");
    let mut moves: Vec<MoveValue> = open
        .iter()
        .enumerate()
        .map(|(j, &line)| {
            let boxes = boxes_of(position, line);
            let key = move_key(boxes, table[1 << j]).expect("bytes this solver wrote");
            let (value, flag) = unkey(key);
            MoveValue {
                line,
                value: Some(value),
                boxes,
                loony: Some(flag),
            }
        })
        .collect();
    // Best first by value, then by the flag for the player making the move.
    moves.sort_by_key(|m| {
        let flag = m.loony.unwrap_or(Loony::Neither);
        (std::cmp::Reverse(key(m.value.unwrap_or(0), flag)), m.line)
    });
    Ok(Probe {
        position,
        value,
        source: Source::Search,
        moves,
        loony: Some(flag),
    })
}
