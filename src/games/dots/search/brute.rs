//! A brute force for the search's unit tests: plain minimax over every position,
//! sharing nothing with the search but the board's geometry.

use crate::games::dots::board::{Board, Lines};

/// Values of every position that contains `start`, by plain minimax over the
/// chain game (`chains` empty: the plain game), indexed by position.
pub(super) fn brute_force(board: &Board, start: Lines, chains: &[Lines]) -> Vec<i8> {
    let n = board.num_lines();
    let boxes: Vec<Lines> = (0..board.rows())
        .flat_map(|r| (0..board.cols()).map(move |c| board.box_mask(r, c)))
        .collect();
    let all: Lines = (1 << n) - 1;
    let mut value = vec![0i8; 1 << n];
    for p in (0..=all).rev().filter(|p| p & start == start) {
        let open = all & !p;
        let partial = chains
            .iter()
            .find(|&&c| c & p != 0 && c & p != c)
            .map_or(open, |&c| c & open);
        let mut best = if open == 0 { 0 } else { i8::MIN };
        for m in (0..n).filter(|&m| partial >> m & 1 == 1) {
            let q = p | 1 << m;
            let made = boxes
                .iter()
                .filter(|&&b| b >> m & 1 == 1 && q & b == b)
                .count() as i8;
            let v = if made > 0 {
                made + value[q as usize]
            } else {
                -value[q as usize]
            };
            best = best.max(v);
        }
        value[p as usize] = best;
    }
    value
}
