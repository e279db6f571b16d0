//! Reports on a Morris file: `info` (per table pair: positions, wins, losses,
//! draws, longest win and loss, bytes, time), `export` (one row per stored class)
//! and `verify` (re-hash every chunk, recompute values one ply deep).

use super::geometry::BoardKind;
use super::index::table_size;
use super::rules::Position;
use super::sector::Sector;
use super::solve::{marked_wins, verify_marked_table, verify_table};
use super::spec::{
    MorrisSpec, Phase, hands_of, layer_pair, pair_layer, placement_layer, sector_layer, table_label,
};
use super::tablebase::MorrisTablebase;
use super::value::{Value, mark_win};
use super::variant::Rules;
use crate::retro::audit::{Audit, check_finished};
use crate::retro::cache::BlockCache;
use crate::retro::chunks::load_block;
use crate::retro::{BlockId, Format as _};
use crate::units::human_bytes;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

/// One table pair in `info`.
#[derive(Debug, Clone, Serialize)]
pub struct PairInfo {
    /// `3-4/4-3` (or `3-3`).
    pub tables: String,
    /// Layer number in the file (`10 a + b`).
    pub layer: usize,
    /// `book` when finished (every Morris table is kept), else `building`.
    pub status: String,
    /// Positions (symmetry classes) of both tables.
    pub positions: u64,
    /// Positions won by the side to move.
    pub wins: u64,
    /// Positions lost by the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Longest win (plies), if any.
    pub longest_win: Option<u8>,
    /// Longest loss (plies), if any.
    pub longest_loss: Option<u8>,
    /// Compressed bytes.
    pub bytes: u64,
    /// Stored bits per position.
    pub bits_per_position: f64,
    /// Build seconds (kernel and compression).
    pub seconds: f64,
    /// Layer digest.
    pub digest: Option<String>,
}

/// `tb info` on a Morris file.
#[derive(Debug, Clone, Serialize)]
pub struct Info {
    /// `morris`.
    pub game: &'static str,
    /// `moving`, or `all` with the placement tables (rows `h1`..`h18`: the tables
    /// with that many stones in hand).
    pub phase: &'static str,
    /// Rules recorded in the file.
    pub rules: String,
    /// Largest stone count per side.
    pub stones: u8,
    /// Positions per chunk.
    pub chunk_positions: u64,
    /// The file's `format_version` (docs/FORMAT.md §9.11).
    pub format_version: u32,
    /// Its features (the keys a file of the current format names them in; for an
    /// older file what its format version packs): `chunk_coding`.
    pub features: BTreeMap<&'static str, String>,
    /// Whether the format version packs the features (a file from before the
    /// feature keys).
    pub packed_format: bool,
    /// File size in bytes.
    pub file_bytes: u64,
    /// Every pair in build order.
    pub pairs: Vec<PairInfo>,
    /// Totals over the finished pairs.
    pub total: PairInfo,
}

/// Gathers `info`.
pub fn info(tb: &MorrisTablebase) -> Result<Info> {
    let meta = tb.store().meta()?;
    let mut pairs = Vec::new();
    let empty = PairInfo {
        tables: "all".to_string(),
        layer: 0,
        status: String::new(),
        positions: 0,
        wins: 0,
        losses: 0,
        draws: 0,
        longest_win: None,
        longest_loss: None,
        bytes: 0,
        bits_per_position: 0.0,
        seconds: 0.0,
        digest: None,
    };
    let mut total = empty.clone();
    let format = tb.format();
    for layer in format.layers() {
        let name = table_label(layer);
        let Some(row) = tb.layers().get(&layer) else {
            pairs.push(PairInfo {
                tables: name,
                layer,
                status: "missing".to_string(),
                positions: format.layer_size(layer),
                ..empty.clone()
            });
            continue;
        };
        let mut p = PairInfo {
            tables: name,
            layer,
            status: row.status.as_str().to_string(),
            positions: row.positions,
            wins: 0,
            losses: 0,
            draws: 0,
            longest_win: None,
            longest_loss: None,
            bytes: row.bytes,
            bits_per_position: row.bytes as f64 * 8.0 / row.positions.max(1) as f64,
            seconds: row.seconds,
            digest: row.digest.clone(),
        };
        for (&byte, &count) in &row.histogram {
            match Value::from_byte(byte as u8) {
                Value::Win(w) => {
                    p.wins += count;
                    p.longest_win = p.longest_win.max(Some(w));
                }
                Value::Loss(l) => {
                    p.losses += count;
                    p.longest_loss = p.longest_loss.max(Some(l));
                }
                Value::Draw => p.draws += count,
            }
        }
        if row.status.readable() {
            total.positions += p.positions;
            total.wins += p.wins;
            total.losses += p.losses;
            total.draws += p.draws;
            total.longest_win = total.longest_win.max(p.longest_win);
            total.longest_loss = total.longest_loss.max(p.longest_loss);
            total.bytes += p.bytes;
            total.seconds += p.seconds;
        }
        pairs.push(p);
    }
    total.bits_per_position = total.bytes as f64 * 8.0 / total.positions.max(1) as f64;
    Ok(Info {
        game: "morris",
        phase: tb.spec().phase.as_str(),
        rules: meta.get("rules").cloned().unwrap_or_default(),
        stones: tb.spec().stones,
        chunk_positions: tb.spec().chunk_positions,
        format_version: tb.spec().format_version(),
        features: tb.spec().features().into_iter().collect(),
        packed_format: tb.spec().packed_format,
        file_bytes: tb.store().file_bytes()?,
        pairs,
        total,
    })
}

/// `info` as text.
pub fn info_text(i: &Info) -> String {
    let mut out = format!(
        "morris ({}), tables with 3 to {} stones a side; file {}, chunks of {} positions\nrules: {}\n{}\n",
        match (i.phase, i.rules.starts_with("lasker")) {
            ("all", true) =>
                "every sector from the empty board: rows m-o hA-B hold the positions with m stones of the side to move and o of the other on the board, A and B in hand, each with its swap",
            ("all", false) =>
                "moving phase, and placement from the empty board: rows hN hold the positions with N stones in hand",
            _ => "moving phase",
        },
        i.stones,
        human_bytes(i.file_bytes),
        i.chunk_positions,
        i.rules,
        crate::store::format_line(
            i.format_version,
            i.packed_format,
            i.features.iter().map(|(k, v)| (*k, v.as_str()))
        )
    );
    // The label column: 9 wide as ever, wider for sector pairs (`3-4 h1-0/4-3 h0-1`).
    let w = i
        .pairs
        .iter()
        .map(|p| p.tables.len())
        .max()
        .unwrap_or(0)
        .max(9);
    out.push_str(&format!(
        "{:>w$} {:>8} {:>12} {:>12} {:>12} {:>11} {:>6} {:>6} {:>10} {:>9} {:>8}\n",
        "tables",
        "status",
        "positions",
        "wins",
        "losses",
        "draws",
        "max W",
        "max L",
        "bytes",
        "bits/pos",
        "seconds"
    ));
    for p in i.pairs.iter().chain(std::iter::once(&i.total)) {
        let plies = |v: Option<u8>| v.map_or("-".to_string(), |p| p.to_string());
        out.push_str(&format!(
            "{:>w$} {:>8} {:>12} {:>12} {:>12} {:>11} {:>6} {:>6} {:>10} {:>9.3} {:>8.2}\n",
            p.tables,
            p.status,
            p.positions,
            p.wins,
            p.losses,
            p.draws,
            plies(p.longest_win),
            plies(p.longest_loss),
            human_bytes(p.bytes),
            p.bits_per_position,
            p.seconds
        ));
    }
    out
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
}

/// Writes one row per stored class (its representative with the side to move as
/// White), table pair by pair in build order, (a, b) before (b, a), index order.
/// Returns the number of rows.
pub fn export(tb: &MorrisTablebase, format: Format, out: &mut dyn Write) -> Result<u64> {
    if format == Format::Csv {
        writeln!(out, "position,table,value")?;
    }
    let mut rows = 0;
    let file_format = tb.format();
    check_finished(tb.layers(), &file_format)
        .context("resume the build (or get a whole file) before exporting")?;
    for h in tb.spec().placement_hands() {
        for (m, o) in tb.spec().placement_tables(h) {
            let id = BlockId {
                layer: placement_layer(h),
                key: vec![m, o],
            };
            let values = load_block(tb.store(), &file_format, &id)?;
            let (hm, ho) = hands_of(h);
            for (index, &byte) in values.iter().enumerate() {
                let position = tb.placement_representative(h, m, o, index as u64)?;
                let sector = Sector::new(m, o, hm, ho);
                let value = Value::from_byte(tb.with_distance(sector, index as u64, byte as u8)?);
                write_row(out, format, &position, (m, o), value)?;
                rows += 1;
            }
        }
    }
    for sector in tb.spec().sector_pairs() {
        let id = BlockId {
            layer: sector_layer(sector),
            key: vec![sector.m, sector.o, sector.hm, sector.ho],
        };
        let values = load_block(tb.store(), &file_format, &id)?;
        let mut at = 0usize;
        for s in sector.pair() {
            for index in 0..table_size(tb.spec().board(), s.m, s.o)? {
                let position = tb.sector_representative(s, index)?;
                let value = Value::from_byte(tb.with_distance(s, index, values[at] as u8)?);
                at += 1;
                write_row(out, format, &position, (s.m, s.o), value)?;
                rows += 1;
            }
        }
    }
    for (layer, _) in tb.pairs() {
        let (a, b) = layer_pair(layer);
        let id = BlockId {
            layer,
            key: vec![a, b],
        };
        let values = load_block(tb.store(), &file_format, &id)?;
        let mut at = 0usize;
        for (m, o) in MorrisSpec::tables_of_pair(a, b) {
            for index in 0..table_size(tb.spec().board(), m, o)? {
                let position = tb.representative(m, o, index)?;
                let sector = Sector::new(m, o, 0, 0);
                let value = Value::from_byte(tb.with_distance(sector, index, values[at] as u8)?);
                at += 1;
                write_row(out, format, &position, (m, o), value)?;
                rows += 1;
            }
        }
    }
    Ok(rows)
}

/// The sector pairs of a file of rules that move during placement (Lasker), in
/// build order: each read once (checked against the catalogue) and recomputed from
/// its moves, whose children are in the pair or in the pairs it exits to (kept in
/// memory until no later pair exits to them).
fn verify_sectors(
    tb: &MorrisTablebase,
    sample: Option<u64>,
    audit: &mut Audit,
    report: &mut VerifyReport,
) -> Result<()> {
    let pairs = tb.spec().sector_pairs();
    if pairs.is_empty() {
        return Ok(());
    }
    let format = tb.format();
    let (rules, board) = (tb.spec().rules, tb.spec().board());
    let id = |s: Sector| BlockId {
        layer: sector_layer(s),
        key: vec![s.m, s.o, s.hm, s.ho],
    };
    // The last pair (in build order) that reads each pair: evicted after it.
    let mut last_reader: BTreeMap<Sector, usize> = BTreeMap::new();
    for (k, s) in pairs.iter().enumerate() {
        for e in s.exit_pairs() {
            last_reader.insert(e, k);
        }
    }
    let mut cache = BlockCache::new(u64::MAX);
    for (k, &sector) in pairs.iter().enumerate() {
        let readable = tb
            .layers()
            .get(&sector_layer(sector))
            .is_some_and(|r| r.status.readable());
        // (The audit reports a pair that is missing or not finished.)
        if readable {
            let own = id(sector);
            let loaded = cache.get_or_load(&own, || load_block(tb.store(), &format, &own));
            match &loaded {
                Ok(values) => audit.check_block(&own, Ok(values)),
                Err(e) => audit.check_block(&own, Err(e)),
            }
            if loaded.is_ok() {
                let mut blocks = BTreeMap::new();
                for s in std::iter::once(sector).chain(sector.exit_pairs()) {
                    // (A pair that does not load was reported when it was checked.)
                    if let Ok(values) =
                        cache.get_or_load(&id(s), || load_block(tb.store(), &format, &id(s)))
                    {
                        blocks.insert(s, values);
                    }
                }
                let lookup = |s: Sector, index: u64| -> Result<u8> {
                    let values = blocks
                        .get(&s.canonical())
                        .with_context(|| format!("sector {} is not readable", s.label()))?;
                    let at = MorrisSpec::offset_in_sector_pair(board, s)? + index;
                    values
                        .get(at as usize)
                        .map(|&v| v as u8)
                        .with_context(|| format!("sector {} has no class {index}", s.label()))
                };
                for s in sector.pair() {
                    let size = table_size(board, s.m, s.o)?;
                    let step = sample.map_or(1, |n| (size / n.max(1)).max(1));
                    match verify_table(rules, s, step, lookup) {
                        Ok(n) => report.recomputed += n,
                        Err(e) => report.error(format!("{e:#}")),
                    }
                }
            }
        }
        for s in std::iter::once(sector).chain(sector.exit_pairs()) {
            if last_reader.get(&s).is_none_or(|&last| last <= k) {
                cache.evict(&id(s));
            }
        }
    }
    Ok(())
}

/// One export row: the position, its table and its value.
fn write_row(
    out: &mut dyn Write,
    format: Format,
    position: &Position,
    (m, o): (u8, u8),
    value: Value,
) -> Result<()> {
    match format {
        Format::Jsonl => writeln!(
            out,
            "{{\"position\":\"{position}\",\"table\":\"{m}-{o}\",\"value\":\"{value}\"}}"
        )?,
        Format::Csv => writeln!(out, "{position},{m}-{o},{value}")?,
    }
    Ok(())
}

/// What `verify` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// Chunks read and checked against their checksums.
    pub chunks: u64,
    /// Positions whose value was recomputed from their moves.
    pub recomputed: u64,
    /// Blocks checked as stored, without their digest: a sampled check of a file
    /// that marks wins (the digests are of every win's distance).
    pub unchecked_digests: u64,
    /// Problems, one line each.
    pub errors: Vec<String>,
}

impl VerifyReport {
    /// True when nothing was wrong.
    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// As text.
    pub fn text(&self) -> String {
        let mut out = format!(
            "verified {} chunks, recomputed {} positions one ply deep: {}\n",
            self.chunks,
            self.recomputed,
            if self.ok() { "OK" } else { "ERRORS" }
        );
        if self.unchecked_digests > 0 {
            out.push_str(&format!(
                "  {} blocks store their wins without distance: their histograms were checked \
                 as stored, their digests not (that needs every win's distance: run without \
                 --sample)\n",
                self.unchecked_digests
            ));
        }
        for e in &self.errors {
            out.push_str(&format!("  {e}\n"));
        }
        out
    }
}

/// Most problems listed one by one; past that only counted.
const LISTED_ERRORS: usize = 100;

impl VerifyReport {
    fn error(&mut self, e: String) {
        if self.errors.len() < LISTED_ERRORS {
            self.errors.push(e);
        } else if self.errors.len() == LISTED_ERRORS {
            self.errors.push("(more errors not listed)".to_string());
        }
    }
}

/// A table's values: its block's and its range there (a pair's block holds two).
type TableValues = (Arc<Vec<i8>>, Range<usize>);

/// Moving-phase pairs' values by pair `(a, b)`, `a <= b`.
type PairValues = [((u8, u8), Arc<Vec<i8>>)];

/// The value byte of class `index` of a moving-phase table, read from `blocks`.
fn pairs_lookup(
    board: BoardKind,
    blocks: &PairValues,
) -> impl Fn(Sector, u64) -> Result<u8> + Sync {
    move |sector: Sector, index: u64| {
        let (m, o) = (sector.m, sector.o);
        let pair = (m.min(o), m.max(o));
        let (_, values) = blocks
            .iter()
            .find(|(p, _)| *p == pair)
            .with_context(|| format!("table {m}-{o} is not readable"))?;
        let at = MorrisSpec::offset_in_pair(board, m, o)? + index;
        values
            .get(at as usize)
            .map(|&v| v as u8)
            .with_context(|| format!("table {m}-{o} has no class {index}"))
    }
}

/// The value byte of class `index` of a placement table with `h` stones in hand
/// (read from `layers[0]`), `h - 1` (from `layers[1]`) or `h - 2` (`layers[2]`).
fn placement_lookup<'a>(
    h: u8,
    layers: [&'a BTreeMap<(u8, u8), TableValues>; 3],
) -> impl Fn(Sector, u64) -> Result<u8> + Sync + 'a {
    move |sector: Sector, index: u64| {
        let (hands, m, o) = (sector.hm + sector.ho, sector.m, sector.o);
        let (values, range) = (h.checked_sub(hands))
            .and_then(|below| layers.get(below as usize))
            .and_then(|tables| tables.get(&(m, o)))
            .with_context(|| format!("table {m}-{o} with {hands} in hand is not readable"))?;
        values[range.clone()]
            .get(index as usize)
            .map(|&v| v as u8)
            .with_context(|| format!("table {m}-{o} with {hands} in hand has no class {index}"))
    }
}

/// Pair `(a, b)`'s values as computed, from `stored`, its block as the file stores
/// it: in a file that marks wins, every win with its distance again (from the
/// position's moves, into the pair and into the pairs its captures lead to, whose
/// values `captures` holds).
fn with_win_distances(
    spec: &MorrisSpec,
    (a, b): (u8, u8),
    stored: Vec<i8>,
    captures: &PairValues,
) -> Result<Vec<i8>> {
    if !spec.marks_wins {
        return Ok(stored);
    }
    let board = spec.board();
    let own = Arc::new(stored);
    let wins = {
        let mut blocks = vec![((a, b), own.clone())];
        blocks.extend(captures.iter().cloned());
        let lookup = pairs_lookup(board, &blocks);
        let mut wins = Vec::new();
        for (m, o) in MorrisSpec::tables_of_pair(a, b) {
            let start = MorrisSpec::offset_in_pair(board, m, o)? as usize;
            let len = table_size(board, m, o)? as usize;
            let table = &own[start..start + len];
            let found = marked_wins(spec.rules, Sector::new(m, o, 0, 0), table, &lookup)?;
            wins.push((start, found));
        }
        wins
    };
    let mut values = Arc::try_unwrap(own).unwrap_or_else(|shared| (*shared).clone());
    for (start, found) in wins {
        put_wins(&mut values[start..], found);
    }
    Ok(values)
}

/// Writes the wins [`marked_wins`] found (class, value byte) into their table's
/// `values`.
fn put_wins(values: &mut [i8], found: Vec<(u64, u8)>) {
    for (class, byte) in found {
        values[class as usize] = byte as i8;
    }
}

/// A value byte as a file that marks wins stores it ([`mark_win`]).
fn fold_win(byte: i8) -> i8 {
    mark_win(byte as u8) as i8
}

/// [`verify_table`], reading through `lookup`; with `marked`, `lookup` reads a
/// file that marks wins as stored ([`verify_marked_table`]: each win a child
/// holds gets its distance back, from moves that reach two layers down, so
/// `lookup` must hold them).
fn verify_classes(
    rules: Rules,
    sector: Sector,
    step: u64,
    lookup: impl Fn(Sector, u64) -> Result<u8> + Sync,
    marked: bool,
) -> Result<u64> {
    if marked {
        verify_marked_table(rules, sector, step, lookup)
    } else {
        verify_table(rules, sector, step, lookup)
    }
}

/// Re-reads every pair (every chunk against its checksum, the pair against its
/// layer digest; a corrupt chunk is reported, never read as values) and recomputes
/// positions one ply deep from their moves, on all cores: every class, or `sample`
/// evenly spaced classes per table. A wrong value cannot pass a full check (it would
/// need a wrong child closer to the end of the game, down to a contradiction).
pub fn verify(tb: &MorrisTablebase, sample: Option<u64>) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let format = tb.format();
    let (rules, board) = (tb.spec().rules, tb.spec().board());
    // The catalogue first; then each pair's values, read once below, against it.
    let mut audit = Audit::new(tb.store(), &format)?;
    // A sampled check of a file that marks wins restores only the wins the sampled
    // positions read (its blocks are checked in their stored form, not against
    // their digests, which need every win's distance).
    let sampled_marks = tb.spec().marks_wins && sample.is_some();
    let stored_form = sampled_marks.then_some(fold_win as fn(i8) -> i8);
    // Each pair is read (decoded) once: kept while pairs with one more stone, whose
    // captures lead to it, are checked.
    let mut cache = BlockCache::new(u64::MAX);
    let pair_id = |layer: usize| {
        let (a, b) = layer_pair(layer);
        BlockId {
            layer,
            key: vec![a, b],
        }
    };
    let load = |cache: &mut BlockCache, layer: usize| {
        let id = pair_id(layer);
        cache.get_or_load(&id, || load_block(tb.store(), &format, &id))
    };
    for (layer, row) in tb.pairs() {
        let (a, b) = layer_pair(layer);
        // Pairs are checked by total stones: those two below this pair's total are
        // read by no later pair (three below when wins are restored as read: a
        // capture's win reads its own captures).
        // The placement tables read them all at the end: then they stay.
        let window = if sampled_marks { 3 } else { 2 };
        for (x, y) in tb.spec().pairs() {
            if x + y + window == a + b && tb.spec().phase == Phase::Moving {
                cache.evict(&pair_id(pair_layer(x, y)));
            }
        }
        // (The audit reports a pair that is missing or not finished.)
        if !row.is_some_and(|r| r.status.readable()) {
            continue;
        }
        // The pairs its captures lead to (checked before it, so with every win's
        // distance): as value bytes by table.
        let mut captures = Vec::new();
        for (x, y) in MorrisSpec::capture_pairs(a, b) {
            // (A pair that does not load was reported when it was checked.)
            if let Ok(values) = load(&mut cache, pair_layer(x, y)) {
                captures.push(((x, y), values));
            }
        }
        let id = pair_id(layer);
        let loaded = cache.get_or_load(&id, || {
            let stored = load_block(tb.store(), &format, &id)?;
            if sampled_marks {
                return Ok(stored);
            }
            with_win_distances(tb.spec(), (a, b), stored, &captures)
        });
        let own = match loaded {
            Ok(values) => {
                audit.check_block_folded(&id, &values, stored_form);
                values
            }
            Err(e) => {
                audit.check_block(&id, Err(&e));
                continue;
            }
        };
        let mut blocks = vec![((a, b), own)];
        if sampled_marks {
            // The captures' own captures, which their wins read.
            for &((x, y), _) in &captures {
                for (p, q) in MorrisSpec::capture_pairs(x, y) {
                    let known = captures
                        .iter()
                        .chain(&blocks)
                        .any(|(pair, _)| *pair == (p, q));
                    if !known && let Ok(values) = load(&mut cache, pair_layer(p, q)) {
                        blocks.push(((p, q), values));
                    }
                }
            }
        }
        blocks.extend(captures);
        let lookup = pairs_lookup(board, &blocks);
        for (m, o) in MorrisSpec::tables_of_pair(a, b) {
            let size = table_size(board, m, o)?;
            let step = sample.map_or(1, |n| (size / n.max(1)).max(1));
            match verify_classes(rules, Sector::new(m, o, 0, 0), step, &lookup, sampled_marks) {
                Ok(n) => report.recomputed += n,
                Err(e) => report.error(format!("{e:#}")),
            }
        }
    }
    // The placement tables, by stones in hand: each read once, checked against the
    // catalogue and recomputed from its moves, whose children are in the layer
    // below (at 1 in hand, the moving-phase pairs).
    let mut below: BTreeMap<(u8, u8), TableValues> = BTreeMap::new();
    // Two layers below: read only when wins are restored as read (a child's win
    // reads its own children).
    let mut below2: BTreeMap<(u8, u8), TableValues> = BTreeMap::new();
    for h in tb.spec().placement_hands() {
        let layer = placement_layer(h);
        let mut current = BTreeMap::new();
        if tb.layers().get(&layer).is_some_and(|r| r.status.readable()) {
            for (m, o) in tb.spec().placement_tables(h) {
                let id = BlockId {
                    layer,
                    key: vec![m, o],
                };
                // (Checked against the catalogue below, once every win has its
                // distance.)
                match load_block(tb.store(), &format, &id) {
                    Ok(values) => {
                        let all = 0..values.len();
                        current.insert((m, o), (Arc::new(values), all));
                    }
                    Err(e) => audit.check_block(&id, Err(&e)),
                }
            }
        }
        if h == 1 {
            // The moving-phase tables the last placements lead to (still in the
            // cache: a file with placement tables keeps every pair there).
            for (a, b) in tb.spec().pairs() {
                if let Ok(values) = load(&mut cache, pair_layer(a, b)) {
                    for (m, o) in MorrisSpec::tables_of_pair(a, b) {
                        let start = MorrisSpec::offset_in_pair(board, m, o)? as usize;
                        let len = table_size(board, m, o)? as usize;
                        below.insert((m, o), (values.clone(), start..start + len));
                    }
                }
            }
            cache = BlockCache::new(0);
        }
        let (hm, ho) = hands_of(h);
        if tb.spec().marks_wins && !sampled_marks {
            // Every win's distance again, from its moves (into this layer and the
            // one below, which has them already).
            let wins: Vec<_> = {
                let lookup = placement_lookup(h, [&current, &below, &below2]);
                (current.iter())
                    .map(|(&(m, o), (values, _))| {
                        let sector = Sector::new(m, o, hm, ho);
                        ((m, o), marked_wins(rules, sector, values, &lookup))
                    })
                    .collect()
            };
            for ((m, o), found) in wins {
                let (values, _) = current.get_mut(&(m, o)).expect("a table of the layer");
                match found {
                    Ok(found) => put_wins(&mut Arc::make_mut(values)[..], found),
                    Err(e) => report.error(format!("{e:#}")),
                }
            }
        }
        for (&(m, o), (values, _)) in &current {
            let id = BlockId {
                layer,
                key: vec![m, o],
            };
            audit.check_block_folded(&id, values, stored_form);
        }
        let lookup = placement_lookup(h, [&current, &below, &below2]);
        for &(m, o) in current.keys() {
            let size = table_size(board, m, o)?;
            let step = sample.map_or(1, |n| (size / n.max(1)).max(1));
            match verify_classes(
                rules,
                Sector::new(m, o, hm, ho),
                step,
                &lookup,
                sampled_marks,
            ) {
                Ok(n) => report.recomputed += n,
                Err(e) => report.error(format!("{e:#}")),
            }
        }
        drop(lookup);
        below2 = std::mem::replace(&mut below, current);
        if !sampled_marks {
            below2.clear();
        }
    }
    verify_sectors(tb, sample, &mut audit, &mut report)?;
    let found = audit.finish();
    report.chunks = found.chunks;
    report.unchecked_digests = found.unchecked_digests;
    for problem in found.problems {
        report.error(problem);
    }
    if found.problem_count > LISTED_ERRORS as u64 {
        report.error(format!(
            "{} problems of the file in all",
            found.problem_count
        ));
    }
    Ok(report)
}
