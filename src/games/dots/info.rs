//! `tb info`: metadata and per-layer statistics.

use super::loony::Loony;
use super::tablebase::Tablebase;
use crate::units::human_bytes;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything `tb info` reports.
#[derive(Debug, Serialize)]
pub struct InfoReport {
    /// Board, `RxC`.
    pub board: String,
    /// Start name.
    pub start: String,
    /// Start position, 0/1 string.
    pub start_position: String,
    /// Full-board value.
    pub penalty: i8,
    /// Lines on the board.
    pub lines: usize,
    /// Line groups (line indices).
    pub groups: Vec<Vec<usize>>,
    /// Layers with at most this many lines form the book.
    pub book_lines: usize,
    /// Positions per chunk.
    pub chunk_positions: u64,
    /// `none` or `wilson`.
    pub symmetry: String,
    /// Board symmetries in use (1 without symmetry).
    pub symmetries: usize,
    /// Whether corner pairs are reduced.
    pub corners: bool,
    /// Positions over all layers without a reduction, and stored.
    pub raw_positions: u64,
    /// Positions stored over all layers (one per class with a reduction).
    pub stored_positions: u64,
    /// Every metadata key as stored (versions, build parameters).
    pub meta: BTreeMap<String, String>,
    /// The file's `format_version` (docs/FORMAT.md §9.11).
    pub format_version: u32,
    /// Its features (the keys a file of the current format names them in; for an
    /// older file what its format version packs): `value_form`, `loony`,
    /// `chunk_coding`.
    pub features: BTreeMap<&'static str, String>,
    /// Whether the format version packs the features (a file from before the
    /// feature keys).
    pub packed_format: bool,
    /// Whether every layer down to the start is finished.
    pub complete: bool,
    /// Value of the start position, once built.
    pub start_value: Option<i8>,
    /// Chain files (`tb build --start FILE` with chain dots): each chain's lines,
    /// each chain stored as one unit (so layers count units). Absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<Vec<String>>,
    /// Chain files whose units may change values (Wilson's assumption,
    /// `--wilson-chains`): true; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub approximate: bool,
    /// Whether the file holds loony analysis (`tb build --loony`).
    pub loony: bool,
    /// Loony files, once built: who can be forced to make the next loony move
    /// from the start (`"mover"`, `"opponent"`, or null for neither).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::loony::serialize_flag"
    )]
    pub start_loony: Option<Loony>,
    /// Size of the file.
    pub file_bytes: u64,
    /// Largest size the file reached during the build (disk needed).
    pub peak_file_bytes: Option<u64>,
    /// Per layer, by n descending (build order).
    pub layers: Vec<LayerInfo>,
}

/// One layer's statistics.
#[derive(Debug, Serialize)]
pub struct LayerInfo {
    /// Lines drawn.
    pub n: usize,
    /// building, complete, book or pruned.
    pub status: String,
    /// Positions stored for the layer (one per class with a reduction).
    pub positions: u64,
    /// Compressed bytes of its chunks (when stored).
    pub stored_bytes: u64,
    /// Stored bits per position.
    pub bits_per_position: f64,
    /// Seconds spent computing and compressing it.
    pub seconds: f64,
    /// Value -> count.
    pub histogram: BTreeMap<i8, u64>,
    /// Loony files: positions per flag (`mover`, `neither`, `opponent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loony_flags: Option<FlagCounts>,
    /// Digest of its stored positions' values (layout-independent without a
    /// reduction).
    pub digest: Option<String>,
}

/// Gathers the report.
pub fn info(tb: &Tablebase) -> Result<InfoReport> {
    let spec = tb.spec();
    let first = spec.unit_start().count_ones() as usize;
    let layers = tb
        .checked_layers()?
        .values()
        .rev()
        .map(|r| {
            let (histogram, loony_flags) = if spec.loony {
                let (values, flags) = loony_histograms(tb, &r.histogram)?;
                (values, Some(flags))
            } else {
                (r.histogram.clone(), None)
            };
            Ok(LayerInfo {
                n: r.n,
                status: r.status.as_str().to_string(),
                positions: r.positions,
                stored_bytes: r.bytes,
                bits_per_position: r.bytes as f64 * 8.0 / r.positions.max(1) as f64,
                seconds: r.seconds,
                histogram,
                loony_flags,
                digest: r.digest.clone(),
            })
        })
        .collect::<Result<_>>()?;
    let complete = tb.has_layer(first);
    let start_entry = if complete {
        tb.entry(spec.start)?
    } else {
        None
    };
    let meta = tb.store().meta()?;
    // The file's own (a loony file of legacy format 2 reads as 3 is written).
    let format_version = meta
        .get("format_version")
        .and_then(|v| v.parse().ok())
        .unwrap_or(spec.format_version());
    let layout = tb.layout();
    Ok(InfoReport {
        board: spec.board.to_string(),
        start: spec.start_name.clone(),
        start_position: super::notation::format_position(&spec.board, spec.start),
        penalty: spec.penalty,
        lines: spec.board.num_lines(),
        groups: spec.groups.clone(),
        book_lines: spec.book_lines,
        chunk_positions: spec.chunk_positions,
        symmetry: spec.symmetry_name().to_string(),
        symmetries: layout.symmetries(),
        corners: layout.has_corners(),
        raw_positions: layout.raw_positions(),
        stored_positions: (first..=layout.full_layer())
            .map(|n| layout.layer_size(n))
            .sum(),
        peak_file_bytes: meta.get("peak_file_bytes").and_then(|v| v.parse().ok()),
        meta,
        format_version,
        features: spec.features().into_iter().collect(),
        packed_format: spec.packed_format,
        complete,
        start_value: match start_entry {
            Some(entry) if spec.loony => Some(tb.loony_entry(entry)?.0 as i8),
            entry => entry,
        },
        chains: spec.chains.line_names(&spec.board),
        approximate: spec.chains.approximate(&spec.board),
        loony: spec.loony,
        start_loony: match start_entry {
            Some(entry) if spec.loony => Some(tb.loony_entry(entry)?.1),
            _ => None,
        },
        file_bytes: tb.store().file_bytes()?,
        layers,
    })
}

/// Positions per loony flag (`mover`, `neither`, `opponent`).
type FlagCounts = BTreeMap<&'static str, u64>;

/// A loony layer's byte histogram as a histogram of values and one of flags.
fn loony_histograms(
    tb: &Tablebase,
    bytes: &BTreeMap<i8, u64>,
) -> Result<(BTreeMap<i8, u64>, FlagCounts)> {
    let mut values = BTreeMap::new();
    let mut flags = BTreeMap::new();
    for (&byte, &count) in bytes {
        let (value, flag, _) = tb.loony_entry(byte)?;
        *values.entry(value as i8).or_insert(0) += count;
        *flags.entry(flag.json().unwrap_or("neither")).or_insert(0) += count;
    }
    Ok((values, flags))
}

/// Human-readable rendering.
pub fn info_text(r: &InfoReport) -> String {
    let mut s = format!(
        "board {} ({} lines), start {} {}, penalty {}\n",
        r.board, r.lines, r.start, r.start_position, r.penalty
    );
    s += &format!(
        "groups {:?}, book: layers with <= {} lines, {} positions per chunk\n",
        r.groups.iter().map(Vec::len).collect::<Vec<_>>(),
        r.book_lines,
        r.chunk_positions
    );
    s += &format!(
        "symmetry {} ({}), corners {}: {} of {} positions stored ({:.2}x)\n",
        r.symmetry,
        crate::units::counted(r.symmetries, "symmetry", "symmetries"),
        if r.corners { "on" } else { "off" },
        r.stored_positions,
        r.raw_positions,
        r.raw_positions as f64 / r.stored_positions.max(1) as f64
    );
    if !r.chains.is_empty() {
        let chains: Vec<String> = r.chains.iter().map(|c| c.join(" ")).collect();
        s += &format!(
            "chains, each stored as one unit (layers count units): {}\n",
            chains.join(" | ")
        );
        if r.approximate {
            s += "values of the chain game (Wilson's assumption, --wilson-chains): they may differ from the plain game's\n";
        }
    }
    s += &format!(
        "status {}, start value {}, file {} (peak during the build {})\n",
        if r.complete { "complete" } else { "incomplete" },
        r.start_value.map_or("-".to_string(), |v| format!(
            "{v:+}{}",
            r.start_loony.map_or("", Loony::mark)
        )),
        human_bytes(r.file_bytes),
        r.peak_file_bytes.map_or("unknown".to_string(), human_bytes)
    );
    if let Some(v) = r.meta.get("tool_version") {
        s += &format!("built by tb {v}\n");
    }
    let features = r.features.iter().map(|(k, v)| (*k, v.as_str()));
    s += &crate::store::format_line(r.format_version, r.packed_format, features);
    s += "\n";
    s += "    n  status         positions       stored  bits/pos  seconds  digest            values\n";
    for l in &r.layers {
        let hist: Vec<String> = l
            .histogram
            .iter()
            .map(|(v, c)| format!("{v}:{c}"))
            .collect();
        s += &format!(
            "{:>5}  {:<9} {:>14} {:>12} {:>9.3} {:>8.2}  {:<16}  {}\n",
            l.n,
            l.status,
            l.positions,
            human_bytes(l.stored_bytes),
            l.bits_per_position,
            l.seconds,
            l.digest.as_deref().unwrap_or("-"),
            hist.join(" ")
        );
    }
    s
}
