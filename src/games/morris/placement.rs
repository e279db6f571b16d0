//! The placement phase: positions with stones still in hand, solved forward from
//! the moving-phase tables. Every placement lowers the stones in hand by one, so
//! there are no cycles: the layer with `h` stones in hand (both sides together) is
//! computed from the layer with `h - 1` (for `h = 1`, the moving-phase tables at
//! the transition), each position as the best of its children, one pass.
//!
//! Within a layer the side to move and both hands are fixed ([`hands_of`]); a
//! block is one table (m, o) of stones on the board, indexed by the same symmetry
//! classes as the moving phase ([`Table`]).

use super::geometry::{FULL, bits, capturable, in_mill};
use super::index::{MIN_STONES, Table};
use super::spec::hands_of;
use super::value::{Value, goodness_byte, parent_byte};
use anyhow::{Result, anyhow};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Positions per parallel work item (and progress step).
const SLICE: u64 = 1 << 14;

/// The child tables of table (m, o) with `h` in hand: the table each placement
/// leads to, (o, m + 1), and each capture, (o - 1, m + 1), for the side then to
/// move. A child whose mover is left with fewer than 3 stones (board and hand) has
/// lost and is not looked up; at `h = 1` the children are moving-phase tables.
/// Empty when the side to move has lost already.
pub fn child_tables(h: u8, m: u8, o: u8) -> Vec<(u8, u8)> {
    let (hm, ho) = hands_of(h);
    if m + hm < MIN_STONES {
        return Vec::new();
    }
    let mut out = Vec::new();
    for child_mover in [Some(o), o.checked_sub(1)].into_iter().flatten() {
        if child_mover + ho >= MIN_STONES {
            out.push((child_mover, m + 1));
        }
    }
    out
}

/// Computes the values of table (m, o) with `h` stones in hand. `child(m', o')`
/// gives the value bytes of child table (m', o') (one of [`child_tables`]); `done`
/// counts finished positions.
pub fn solve_placement_table<'a>(
    h: u8,
    m: u8,
    o: u8,
    child: impl Fn(u8, u8) -> &'a [u8] + Sync,
    done: &AtomicU64,
) -> Result<Vec<u8>> {
    let table = Table::get(m, o)?;
    let (hm, ho) = hands_of(h);
    let size = table.size();
    let mut values = vec![0u8; size as usize];
    if m + hm < MIN_STONES {
        // Fewer than 3 stones on the board and in hand: lost.
        values.fill(Value::Loss(0).to_byte());
        done.fetch_add(size, Ordering::Relaxed);
        return Ok(values);
    }
    // The child tables, looked up once: [no capture, capture] by the child mover's
    // stone count o or o - 1.
    let lookup = |child_mover: u8| -> Option<(&'static Table, &'a [u8])> {
        (child_mover + ho >= MIN_STONES).then(|| {
            let t = Table::get(child_mover, m + 1).expect("child tables exist");
            (t, child(child_mover, m + 1))
        })
    };
    let plain = lookup(o);
    let captured = o.checked_sub(1).and_then(lookup);
    let lost = Value::Loss(0).to_byte();
    values
        .par_chunks_mut(SLICE as usize)
        .enumerate()
        .try_for_each(|(k, out)| -> Result<()> {
            let first = k as u64 * SLICE;
            let mut failure = None;
            table.for_each_in_range(first..first + out.len() as u64, |i, mover, opponent| {
                let empty = FULL & !(mover | opponent);
                let mut best: Option<u8> = None;
                let mut consider =
                    |after: u32, child_mover: u32, tables: Option<(&Table, &[u8])>| {
                        // The child's side to move is our opponent.
                        let byte = match tables {
                            None => lost,
                            Some((t, bytes)) => bytes[t.index(child_mover, after) as usize],
                        };
                        match parent_byte(byte) {
                            Some(v) if best.is_none_or(|b| goodness_byte(v) > goodness_byte(b)) => {
                                best = Some(v)
                            }
                            Some(_) => {}
                            None => failure = Some(anyhow!("a value longer than a byte holds")),
                        }
                    };
                for p in bits(empty) {
                    let after = mover | 1 << p;
                    let caps = if in_mill(after, p) {
                        capturable(opponent)
                    } else {
                        0
                    };
                    if caps == 0 {
                        consider(after, opponent, plain);
                    }
                    for c in bits(caps) {
                        consider(after, opponent & !(1 << c), captured);
                    }
                }
                // A board with stones in hand always has an empty point.
                out[(i - first) as usize] = best.unwrap_or(lost);
            });
            done.fetch_add(out.len() as u64, Ordering::Relaxed);
            failure.map_or(Ok(()), Err)
        })?;
    Ok(values)
}
