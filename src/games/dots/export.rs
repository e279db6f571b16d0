//! Streams the stored opening book as rows: by number of lines, then block (group
//! counts in lexicographic order), then index inside the block.

use super::layout::Odometer;
use super::notation::format_position;
use super::tablebase::Tablebase;
use crate::retro::BlockId;
use crate::retro::audit::check_finished;
use crate::retro::chunks::decode_chunk;
use crate::store::chunk_len;
use anyhow::{Context, Result};
use std::io::Write;

/// Row formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"position":"...","lines":n,"value":v}` per line (loony files: and
    /// `"loony":"mover"|"opponent"|null`).
    Jsonl,
    /// Header `position,lines,value` (loony files: and `loony`, empty for
    /// neither), then one row per position.
    Csv,
}

/// Writes every stored position with at most `max_lines` lines (with `expand`, every
/// position its class stands for, ascending within the class); returns the row count.
pub fn export(
    tb: &Tablebase,
    format: Format,
    max_lines: Option<usize>,
    expand: bool,
    out: &mut dyn Write,
) -> Result<u64> {
    let file_format = tb.format();
    check_finished(tb.layers(), &file_format)
        .context("resume the build (or get a whole file) before exporting")?;
    let board = tb.board();
    let layout = tb.layout();
    let chunk_positions = tb.spec().chunk_positions;
    let loony = tb.is_loony();
    if format == Format::Csv {
        writeln!(
            out,
            "position,lines,value{}",
            if loony { ",loony" } else { "" }
        )?;
    }
    let mut rows = 0u64;
    let layers: Vec<usize> = tb
        .layers()
        .values()
        .filter(|r| r.status.readable() && max_lines.is_none_or(|k| r.n <= k))
        .map(|r| r.n)
        .collect();
    // Every layer's size first: a damaged file writes no row.
    for &n in &layers {
        tb.check_size(n)?;
    }
    for n in layers {
        for counts in layout.blocks_of_layer(n) {
            let size = layout.block_size(&counts);
            let tables = layout
                .groups
                .iter()
                .zip(&counts)
                .map(|(g, &c)| g.globals(c as usize))
                .collect();
            let mut odo = Odometer::new(tables, 0);
            for chunk in 0..size.div_ceil(chunk_positions) {
                let len = chunk_len(size, chunk_positions, chunk);
                let id = BlockId {
                    layer: n,
                    key: counts.clone(),
                };
                let stored = tb.store().stored_chunk(n, &counts, chunk)?;
                for entry in decode_chunk(&file_format, &id, chunk * chunk_positions, len, &stored)?
                {
                    let (v, flag) = if loony {
                        let (value, flag, _) = tb.loony_entry(entry)?;
                        (value, Some(flag.json()))
                    } else {
                        (entry as i32, None)
                    };
                    let stored = tb.position_of_units(layout.start | odo.mask());
                    let members = match (&layout.reduction, expand) {
                        (Some(_), true) => layout.class_members(stored),
                        _ => vec![stored],
                    };
                    for p in members {
                        let position = format_position(&board, p);
                        // Lines drawn (in a chain file `n` counts units).
                        let n = p.count_ones();
                        match (format, flag) {
                            (Format::Jsonl, None) => writeln!(
                                out,
                                "{{\"position\":\"{position}\",\"lines\":{n},\"value\":{v}}}"
                            )?,
                            (Format::Jsonl, Some(who)) => writeln!(
                                out,
                                "{{\"position\":\"{position}\",\"lines\":{n},\"value\":{v},\"loony\":{}}}",
                                who.map_or("null".to_string(), |w| format!("\"{w}\""))
                            )?,
                            (Format::Csv, None) => writeln!(out, "{position},{n},{v}")?,
                            (Format::Csv, Some(who)) => {
                                writeln!(out, "{position},{n},{v},{}", who.unwrap_or(""))?
                            }
                        }
                        rows += 1;
                    }
                    odo.advance();
                }
            }
        }
    }
    Ok(rows)
}
