//! `tb verify`: the file's audit (every block and chunk its layout implies, each
//! chunk read once against its checksum, histograms, digests and counts against the
//! values; [`crate::retro::audit`]), then stored values recomputed one ply deep from
//! the layer above (independently of the kernel: plain per-position lookups); in a
//! loony file the whole stored byte (value, flag, offer bit).

use super::board::Lines;
use super::layout::Counts;
use super::notation::format_position;
use super::tablebase::Tablebase;
use crate::retro::audit::audit;
use crate::store::readable_layers;
use anyhow::Result;
use serde_json::{Value, json};

/// Most problems listed in a report.
const MAX_LISTED: usize = 20;

/// What verify found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Chunks read and checked.
    pub chunks: u64,
    /// Problems of the file: bad or missing chunks, blocks or layers, metadata that
    /// differs from the values (at most 100 listed).
    pub bad_chunks: Vec<String>,
    /// How many problems there were.
    pub problem_count: u64,
    /// Positions whose value was recomputed.
    pub recomputed: u64,
    /// Positions whose stored value differs from the recomputation.
    pub mismatches: Vec<String>,
    /// Number of mismatches (the list is capped).
    pub mismatch_count: u64,
    /// Stored positions compared with the search solver.
    pub searched: u64,
}

impl VerifyReport {
    /// No problem found.
    pub fn ok(&self) -> bool {
        self.problem_count == 0 && self.mismatch_count == 0
    }

    /// JSON rendering.
    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok(),
            "chunks": self.chunks,
            "bad_chunks": self.bad_chunks,
            "problem_count": self.problem_count,
            "recomputed": self.recomputed,
            "mismatch_count": self.mismatch_count,
            "mismatches": self.mismatches,
            "searched": self.searched,
        })
    }

    /// Text rendering.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{} chunks checked, {} problems; {} positions recomputed, {} compared with search, {} mismatches\n",
            self.chunks, self.problem_count, self.recomputed, self.searched, self.mismatch_count
        );
        for b in &self.bad_chunks {
            s += &format!("problem: {b}\n");
        }
        for m in &self.mismatches {
            s += &format!("mismatch: {m}\n");
        }
        s += if self.ok() { "OK\n" } else { "FAILED\n" };
        s
    }
}

/// Verifies a tablebase; `sample` limits the recomputation to N random positions
/// per layer (all positions when `None`); `search` more random stored positions are
/// compared with the search solver.
pub fn verify(tb: &Tablebase, sample: Option<u64>, search: u64) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let layout = tb.layout();
    let readable: Vec<usize> = readable_layers(tb.layers()).collect();
    let audit = audit(tb.store(), &tb.format())?;
    report.chunks = audit.chunks;
    report.bad_chunks = audit.problems;
    report.problem_count = audit.problem_count;
    if !report.ok() {
        // A damaged file: its values are not worth recomputing.
        return Ok(report);
    }
    let full = layout.full_layer();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for &n in &readable {
        if n < full && !tb.has_layer(n + 1) {
            continue;
        }
        let blocks = layout.blocks_of_layer(n);
        let size = layout.layer_size(n);
        match sample {
            Some(count) if count < size => {
                for _ in 0..count {
                    let position =
                        position_of_layer_index(tb, &blocks, next_random(&mut rng) % size);
                    check_position(tb, position, &mut report);
                }
            }
            _ => {
                for counts in &blocks {
                    let mut positions = Vec::new();
                    layout.visit(counts, 0, layout.block_size(counts) as usize, |p| {
                        positions.push(tb.position_of_units(p))
                    });
                    for p in positions {
                        check_position(tb, p, &mut report);
                    }
                }
            }
        }
    }
    cross_check_search(tb, search, &mut rng, &mut report);
    Ok(report)
}

/// Compares `count` random stored positions (spread over the stored layers, those
/// with the fewest open lines first) with the search solver.
fn cross_check_search(tb: &Tablebase, count: u64, rng: &mut u64, report: &mut VerifyReport) {
    let layout = tb.layout();
    let readable: Vec<usize> = readable_layers(tb.layers()).rev().collect();
    if readable.is_empty() || count == 0 {
        return;
    }
    for i in 0..count {
        let n = readable[i as usize % readable.len()];
        let blocks = layout.blocks_of_layer(n);
        let position =
            position_of_layer_index(tb, &blocks, next_random(rng) % layout.layer_size(n));
        let Ok(Some(stored)) = tb.value(position) else {
            continue;
        };
        report.searched += 1;
        let searched = tb.search_value(position);
        if searched != stored as i32 {
            report.mismatch_count += 1;
            if report.mismatches.len() < MAX_LISTED {
                report.mismatches.push(format!(
                    "{} stored {stored}, search says {searched}",
                    format_position(&tb.board(), position)
                ));
            }
        }
    }
}

/// Compares one stored entry with its one-ply recomputation.
fn check_position(tb: &Tablebase, position: Lines, report: &mut VerifyReport) {
    report.recomputed += 1;
    // A failing read was already reported as a bad chunk.
    let (Ok(stored), Ok(expected)) = (tb.entry(position), recompute(tb, position)) else {
        return;
    };
    if stored != Some(expected) {
        report.mismatch_count += 1;
        if report.mismatches.len() < MAX_LISTED {
            report.mismatches.push(format!(
                "{} stored {}, recomputed {}",
                format_position(&tb.board(), position),
                stored.map_or("nothing".to_string(), |e| entry_text(tb, e)),
                entry_text(tb, expected)
            ));
        }
    }
}

/// A stored entry for messages: the value, or a loony byte's value, flag mark and
/// offer bit.
fn entry_text(tb: &Tablebase, entry: i8) -> String {
    if !tb.is_loony() {
        return entry.to_string();
    }
    match tb.loony_entry(entry) {
        Ok((value, flag, offers)) => format!(
            "{value}{}{}",
            flag.mark(),
            if offers {
                " (offers a loony capture)"
            } else {
                ""
            }
        ),
        Err(_) => format!("byte {}", entry as u8),
    }
}

/// The entry of a position from its children's stored entries: the best move's
/// value (penalty when full), in a loony file with its flag and the position's
/// offer bit.
fn recompute(tb: &Tablebase, position: Lines) -> Result<i8> {
    use super::loony;
    let board = tb.board();
    let mut best: Option<i32> = None;
    let legal = tb.legal_moves(position);
    for line in (0..board.num_lines()).filter(|&l| legal >> l & 1 == 1) {
        let child = tb
            .entry(position | 1 << line)?
            .ok_or_else(|| anyhow::anyhow!("child layer missing"))?;
        let boxes = tb.boxes_completed(position, line);
        let v = if tb.is_loony() {
            tb.loony_entry(child)?;
            loony::move_key(boxes, child as u8).expect("a checked byte")
        } else {
            super::board::move_value(boxes, child as i32)
        };
        best = Some(best.map_or(v, |b| b.max(v)));
    }
    let penalty = tb.spec().penalty as i32;
    if tb.is_loony() {
        let key = best.unwrap_or(loony::key(penalty, loony::Loony::Neither));
        let offers = loony::Detector::new(&board).offers(position);
        return Ok(loony::entry_of_key(key as i8, offers) as i8);
    }
    Ok(best.unwrap_or(penalty) as i8)
}

/// The position at `index` of a layer whose blocks are `blocks`, in block order.
fn position_of_layer_index(tb: &Tablebase, blocks: &[Counts], mut index: u64) -> Lines {
    let layout = tb.layout();
    for counts in blocks {
        let size = layout.block_size(counts);
        if index < size {
            return tb.position_of_units(layout.position_at(counts, index));
        }
        index -= size;
    }
    unreachable!("index beyond the layer")
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
