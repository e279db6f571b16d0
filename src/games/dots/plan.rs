//! `tb build --plan`: what a build will do, without doing it: groups, blocks per
//! layer, largest block, predicted peak memory, disk and time.

use super::spec::Spec;
use serde::Serialize;

/// Stored bits per position assumed for disk predictions (3x4 measures 1.85,
/// 2x5 2.26: see the README's benchmark table).
pub const ASSUMED_BITS_PER_POSITION: f64 = 2.5;

/// Stored positions per second per core assumed for time predictions: 4x4 with
/// corners measured 148 M/s on 2 cores (162 M/s since, with the boxes-left form:
/// the README's benchmark table); 3x5 goes faster, so bigger boards are predicted
/// from the biggest.
pub const ASSUMED_POSITIONS_PER_CORE_SECOND: f64 = 74e6;

/// A build plan.
#[derive(Debug, Serialize)]
pub struct Plan {
    /// Board, `RxC`.
    pub board: String,
    /// Lines free at the start.
    pub free_lines: usize,
    /// Line names per group.
    pub groups: Vec<Vec<String>>,
    /// Layers with at most this many lines are kept.
    pub book_lines: usize,
    /// Per layer, from the full board down to the start.
    pub layers: Vec<LayerPlan>,
    /// `none` or `wilson`.
    pub symmetry: String,
    /// Board symmetries in use (1: none; they must map every group onto itself).
    pub symmetries: usize,
    /// Whether corner pairs are reduced.
    pub corners: bool,
    /// Positions over all layers without any reduction.
    pub raw_positions: u64,
    /// Positions stored over all layers.
    pub total_positions: u64,
    /// Bytes of the largest block plus the child blocks it needs.
    pub peak_block_bytes: u64,
    /// Predicted peak memory for values: the largest block and its children, plus the
    /// blocks kept between layers (each side capped at a quarter of the budget).
    pub predicted_memory_bytes: u64,
    /// Predicted peak disk: the two largest consecutive layers plus the book, at
    /// [`ASSUMED_BITS_PER_POSITION`].
    pub predicted_disk_bytes: u64,
    /// Predicted size of the finished file (the book).
    pub predicted_book_bytes: u64,
    /// The `--memory` budget planned for.
    pub memory_bytes: u64,
    /// This machine's memory (null when unknown): a plan whose budget exceeds it is
    /// for a bigger machine, and a build here is refused.
    pub machine_memory_bytes: Option<u64>,
    /// Worker threads the prediction assumes (one per core).
    pub threads: usize,
    /// Predicted wall time: every stored position at
    /// [`ASSUMED_POSITIONS_PER_CORE_SECOND`] per thread.
    pub predicted_seconds: f64,
}

/// One layer of a plan.
#[derive(Debug, Serialize)]
pub struct LayerPlan {
    /// Lines drawn.
    pub n: usize,
    /// Positions.
    pub positions: u64,
    /// Blocks.
    pub blocks: u64,
    /// Positions of its largest block.
    pub largest_block: u64,
}

fn stored_bytes(positions: u64) -> u64 {
    (positions as f64 * ASSUMED_BITS_PER_POSITION / 8.0).ceil() as u64
}

/// Plans a build of `spec` within `memory` bytes on `threads` cores.
pub fn plan(spec: &Spec, memory: u64, threads: usize) -> Plan {
    let layout = spec.layout();
    let first = layout.start_lines();
    let full = layout.full_layer();
    let layers: Vec<LayerPlan> = (first..=full)
        .rev()
        .map(|n| {
            let (blocks, largest_block) = layout.layer_blocks_summary(n);
            LayerPlan {
                n,
                positions: layout.layer_size(n),
                blocks,
                largest_block,
            }
        })
        .collect();
    let size = |n: usize| layers.iter().find(|l| l.n == n).map_or(0, |l| l.positions);
    let peak_block_bytes = spec.peak_block_bytes(&layout);
    let kept = (first..full)
        .map(|n| size(n).min(memory / 4) + size(n + 1).min(memory / 4))
        .max()
        .unwrap_or(0);
    let book: u64 = (first..=full.min(spec.book_lines))
        .map(|n| stored_bytes(size(n)))
        .sum();
    let busiest = (first..full)
        .map(|n| stored_bytes(size(n)) + stored_bytes(size(n + 1)))
        .max()
        .unwrap_or(0);
    let total_positions: u64 = layers.iter().map(|l| l.positions).sum();
    Plan {
        board: spec.board.to_string(),
        free_lines: layout.free_lines(),
        groups: spec
            .groups
            .iter()
            .map(|g| g.iter().map(|&l| spec.board.line_name(l)).collect())
            .collect(),
        book_lines: spec.book_lines,
        symmetry: spec.symmetry_name().to_string(),
        symmetries: layout.symmetries(),
        corners: layout.has_corners(),
        raw_positions: layout.raw_positions(),
        total_positions,
        layers,
        peak_block_bytes,
        predicted_memory_bytes: peak_block_bytes + kept,
        predicted_disk_bytes: busiest + book,
        predicted_book_bytes: book,
        memory_bytes: memory,
        machine_memory_bytes: crate::sys::total_memory_bytes(),
        threads,
        predicted_seconds: total_positions as f64
            / (ASSUMED_POSITIONS_PER_CORE_SECOND * threads.max(1) as f64),
    }
}

/// Human-readable plan.
pub fn plan_text(p: &Plan) -> String {
    use crate::units::human_bytes;
    let mut s = format!(
        "plan for {}: {} free lines, {} positions, book <= {} lines\n",
        p.board, p.free_lines, p.total_positions, p.book_lines
    );
    s += &format!(
        "symmetry {} ({}), corners {}: {:.2}x fewer positions than all {}\n",
        p.symmetry,
        crate::units::counted(p.symmetries, "symmetry", "symmetries"),
        if p.corners { "on" } else { "off" },
        p.raw_positions as f64 / p.total_positions.max(1) as f64,
        p.raw_positions
    );
    for (i, g) in p.groups.iter().enumerate() {
        s += &format!("group {} ({} lines): {}\n", i + 1, g.len(), g.join(" "));
    }
    s += &format!(
        "largest block + children {}, predicted memory {}, predicted peak disk {} (at {ASSUMED_BITS_PER_POSITION} bits/position), book {}\n",
        human_bytes(p.peak_block_bytes),
        human_bytes(p.predicted_memory_bytes),
        human_bytes(p.predicted_disk_bytes),
        human_bytes(p.predicted_book_bytes)
    );
    if let Some(machine) = p.machine_memory_bytes.filter(|&m| p.memory_bytes > m) {
        s += &format!(
            "--memory {} is more than this machine's {}: a plan for a bigger machine (a build here is refused)\n",
            human_bytes(p.memory_bytes),
            human_bytes(machine)
        );
    }
    s += &format!(
        "predicted time {} on {} cores (at {:.0} M stored positions/s per core, as 4x4+corners measured)\n",
        crate::units::human_seconds(p.predicted_seconds),
        p.threads,
        ASSUMED_POSITIONS_PER_CORE_SECOND / 1e6
    );
    s += "    n      positions  blocks  largest block\n";
    for l in &p.layers {
        s += &format!(
            "{:>5} {:>14} {:>7} {:>14}\n",
            l.n, l.positions, l.blocks, l.largest_block
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::board::Board;
    use crate::games::dots::groups::symmetric_groups;
    use crate::games::dots::groups::{auto_groups, default_book_lines, peak_block_bytes};

    #[test]
    fn plans_for_every_board_up_to_5x5_fit_their_budget() {
        for rows in 1..=5 {
            for cols in 1..=5 {
                let board = Board::new(rows, cols).unwrap();
                for memory in [256u64 << 20, 1 << 30, 8 << 30] {
                    for (symmetry, corners) in [(false, false), (true, false), (true, true)] {
                        let groups = if symmetry || corners {
                            symmetric_groups(&board, 0, memory, symmetry, corners)
                        } else {
                            auto_groups(&board, 0, memory)
                        };
                        let what = format!("{board} {memory} {symmetry} {corners}");
                        let mut lines: Vec<usize> = groups.iter().flatten().copied().collect();
                        lines.sort_unstable();
                        assert_eq!(lines, (0..board.num_lines()).collect::<Vec<_>>(), "{what}");
                        assert!(
                            groups.iter().all(|g| !g.is_empty() && g.len() <= 16),
                            "{what}"
                        );
                        let mut spec = Spec {
                            board,
                            start_name: "empty".into(),
                            start: 0,
                            penalty: 0,
                            groups,
                            book_lines: 0,
                            chunk_positions: 1 << 16,
                            symmetry,
                            corners,
                            loony: false,
                            chains: Default::default(),
                            boxes_left_form: true,
                            packed_format: false,
                        };
                        spec.book_lines = default_book_lines(&spec.layout());
                        let p = plan(&spec, memory, 2);
                        // Up to 40 lines (4x4) every budget fits; bigger boards need
                        // more memory.
                        if board.num_lines() <= 40 {
                            assert!(
                                p.peak_block_bytes <= memory / 4,
                                "{what}: {}",
                                p.peak_block_bytes
                            );
                            assert!(p.predicted_memory_bytes <= memory, "{what}");
                        }
                        assert_eq!(p.peak_block_bytes, peak_block_bytes(&spec.layout()));
                        assert_eq!(p.raw_positions, 1u64 << board.num_lines());
                        if symmetry || corners {
                            assert!(p.total_positions <= p.raw_positions, "{what}");
                        } else {
                            assert_eq!(p.total_positions, p.raw_positions, "{what}");
                        }
                    }
                }
            }
        }
    }
}
