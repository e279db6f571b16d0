//! What `tb info`, `tb verify` and `tb export` say of a Qubic strategy file.

use super::check::{CheckRun, Checker, Stored};
use super::position::Position;
use super::stored::{OPENING_BLOCK, Record, StrategyFile};
use super::threats::{PositionMap, threats};
use crate::store::codec::FAMILY_KEY;
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::time::Instant;

/// How X's stored move acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveKind {
    /// It blocks O's threat (X has no other move).
    Block,
    /// It makes a threat (O's reply is forced).
    Threat,
    /// Neither: a strategic move in Patashnik's sense.
    Quiet,
}

/// The kind of a record's move.
pub fn move_kind(r: &Record) -> MoveKind {
    let (x, o) = r.key;
    if threats(o, x) != 0 {
        MoveKind::Block
    } else if threats(x | 1 << r.cell, o) != 0 {
        MoveKind::Threat
    } else {
        MoveKind::Quiet
    }
}

/// `tb info` of a strategy file.
#[derive(Debug, Serialize)]
pub struct QubicInfo {
    /// Always `qubic`.
    pub game: &'static str,
    /// Where the strategy starts (O to move).
    pub start: String,
    /// X's first move, when the strategy starts on the empty board.
    pub first_move: Option<u8>,
    /// Positions stored (distinct, canonical; the empty board included).
    pub strategic: usize,
    /// Of which X's move is a strategic one (quiet or a threat; Patashnik's count).
    pub strategic_moves: usize,
    /// Of which X's move is quiet (neither a block nor a threat).
    pub quiet: usize,
    /// Of which X's move makes a threat.
    pub threats: usize,
    /// Of which X's move blocks O's threat.
    pub blocks: usize,
    /// Positions stored, by stones on the board.
    pub by_stones: BTreeMap<u32, usize>,
    /// Strategic moves, by stones on the board.
    pub moves_by_stones: BTreeMap<u32, usize>,
    /// Records per stored block (O's reply classes; 64 is the opening).
    pub blocks_stored: BTreeMap<u8, usize>,
    /// Plies to X's four from the empty board under the strategy.
    pub plies: u8,
    /// The file's `format_version` (docs/FORMAT.md §9.11).
    pub format_version: u32,
    /// Its features: `chunk_coding`.
    pub features: BTreeMap<&'static str, String>,
}

/// Counts of a strategy file.
pub fn info(file: &StrategyFile) -> QubicInfo {
    let mut i = QubicInfo {
        game: super::stored::GAME,
        start: file.start.to_string(),
        first_move: super::stored::first_move(file.start),
        strategic: file.records.len(),
        strategic_moves: 0,
        quiet: 0,
        threats: 0,
        blocks: 0,
        by_stones: BTreeMap::new(),
        moves_by_stones: BTreeMap::new(),
        blocks_stored: file
            .blocks
            .iter()
            .map(|b| (b.key, b.records.len()))
            .collect(),
        plies: 0,
        format_version: super::stored::FORMAT_VERSION,
        features: [(FAMILY_KEY, super::stored::CODINGS.name().to_string())].into(),
    };
    for r in file.records.values() {
        match move_kind(r) {
            MoveKind::Block => i.blocks += 1,
            MoveKind::Threat => i.threats += 1,
            MoveKind::Quiet => i.quiet += 1,
        }
        let stones = (r.key.0 | r.key.1).count_ones();
        *i.by_stones.entry(stones).or_default() += 1;
        let moves = i.moves_by_stones.entry(stones).or_default();
        *moves += usize::from(move_kind(r) != MoveKind::Block);
        if r.key == (0, 0) {
            i.plies = r.plies;
        }
    }
    i.strategic_moves = i.quiet + i.threats;
    i
}

/// `tb info` as text.
pub fn info_text(i: &QubicInfo) -> String {
    let from = match i.first_move {
        Some(cell) => format!(
            "X's first move {cell}, four in a line within {} plies",
            i.plies
        ),
        None => format!("{} (O to move)", i.start),
    };
    let mut s = format!(
        "game: qubic (4x4x4), X wins from {from}\n\
         strategic moves: {} ({} quiet, {} threats); positions stored: {} (with {} forced blocks)\n\
         stones  strategic moves  positions\n",
        i.strategic_moves, i.quiet, i.threats, i.strategic, i.blocks
    );
    for (stones, count) in &i.by_stones {
        let moves = i.moves_by_stones.get(stones).copied().unwrap_or(0);
        s.push_str(&format!("{stones:>6}  {moves:>15}  {count:>9}\n"));
    }
    let features = i.features.iter().map(|(k, v)| (*k, v.as_str()));
    s + &crate::store::format_line(i.format_version, false, features) + "\n"
}

/// What `tb verify` found.
#[derive(Debug, Serialize)]
pub struct QubicVerify {
    /// Strategic positions the checker walked.
    pub strategic: u64,
    /// Fringe positions it proved forced wins itself.
    pub forced: u64,
    /// Gaps found.
    pub gaps: u64,
    /// The first gaps, described.
    pub examples: Vec<String>,
    /// Seconds.
    pub seconds: f64,
}

impl QubicVerify {
    /// Whether the strategy is complete.
    pub fn ok(&self) -> bool {
        self.gaps == 0
    }

    /// As text.
    pub fn text(&self) -> String {
        let mut s = format!(
            "checked {} positions of the strategy and {} forced wins in {:.1} s: {}\n",
            self.strategic,
            self.forced,
            self.seconds,
            if self.ok() {
                "OK, X wins against every defence".to_string()
            } else {
                format!("{} GAPS", self.gaps)
            }
        );
        for e in &self.examples {
            s.push_str(&format!("  {e}\n"));
        }
        s
    }
}

/// Checks every stored record with the independent checker: first the start (the
/// opening's record, or every O reply) leading to the blocks' roots, with the
/// claims their records make; then each block (one O reply's strategy) walked from
/// its root with its own records (blocks may store a shared position differently,
/// each soundly), every record of it reached.
pub fn verify(file: &StrategyFile) -> QubicVerify {
    let t = Instant::now();
    let checker = Checker::new();
    let mut run = CheckRun::default();
    let start = file.start;
    let replies: Vec<_> = file
        .blocks
        .iter()
        .filter(|b| b.key != OPENING_BLOCK)
        // The checker's own canonical form of the start after the reply.
        .map(|b| (checker.canonical((start.x, start.o | 1 << b.key)), b))
        .collect();
    let mut roots: HashMap<(u64, u64), Stored> = replies
        .iter()
        .filter_map(|(root, b)| {
            let r = b.records.get(root)?;
            let (plies, subtree) = (r.plies, r.subtree);
            Some((*root, Stored::Claimed { plies, subtree }))
        })
        .collect();
    match file.blocks.iter().find(|b| b.key == OPENING_BLOCK) {
        Some(opening) => {
            roots.extend(as_moves(&opening.records));
            checker.check(&[(0, 0)], &roots, &mut run);
        }
        None => {
            let replies: Vec<(u64, u64)> = (0..64)
                .filter(|&c| start.empty() >> c & 1 == 1)
                .map(|c| (start.x, start.o | 1 << c))
                .collect();
            checker.check(&replies, &roots, &mut run);
        }
    }
    for (root, block) in replies {
        checker.check(&[root], &as_moves(&block.records), &mut run);
    }
    let r = run.report();
    QubicVerify {
        strategic: r.strategic,
        forced: r.forced,
        gaps: r.gap_count,
        examples: r.gaps,
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// Records as the checker takes them: positions whose moves its walk follows.
fn as_moves(records: &PositionMap<Record>) -> HashMap<(u64, u64), Stored> {
    let stored = |r: &Record| Stored::Move {
        cell: r.cell,
        plies: r.plies,
        subtree: r.subtree,
    };
    records.iter().map(|(&k, r)| (k, stored(r))).collect()
}

/// How `tb export` writes a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// JSON lines `{"position","move","subtree","plies"}`, every stored position.
    Jsonl,
    /// The same as CSV with a header.
    Csv,
    /// In the style of Patashnik's dictionary: only the strategic moves (no forced
    /// blocks), one per line, `X's cells / O's cells : X's move` (cells 0..63
    /// ascending), after a `#` header line.
    Patashnik,
}

/// Writes the strategy's positions (by stones, then position); returns the rows
/// written.
pub fn export(file: &StrategyFile, format: ExportFormat, sink: &mut dyn Write) -> Result<u64> {
    let mut records: Vec<&Record> = file.records.values().collect();
    records.sort_by_key(|r| ((r.key.0 | r.key.1).count_ones(), r.key));
    match format {
        ExportFormat::Csv => writeln!(sink, "position,move,subtree,plies")?,
        ExportFormat::Patashnik => {
            records.retain(|r| move_kind(r) != MoveKind::Block);
            writeln!(
                sink,
                "# {} strategic moves of X from {} (canonical positions; X's cells / O's cells : X's move)",
                records.len(),
                file.start
            )?;
        }
        ExportFormat::Jsonl => {}
    }
    // ("-" for a side with no stones: the empty board's line.)
    let cells = |set: u64| {
        if set == 0 {
            return "-".to_string();
        }
        (0..64)
            .filter(|c| set >> c & 1 == 1)
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for r in &records {
        let position = Position {
            x: r.key.0,
            o: r.key.1,
        };
        match format {
            ExportFormat::Csv => writeln!(sink, "{position},{},{},{}", r.cell, r.subtree, r.plies)?,
            ExportFormat::Jsonl => writeln!(
                sink,
                "{{\"position\":\"{position}\",\"move\":{},\"subtree\":{},\"plies\":{}}}",
                r.cell, r.subtree, r.plies
            )?,
            ExportFormat::Patashnik => {
                writeln!(sink, "{} / {} : {}", cells(r.key.0), cells(r.key.1), r.cell)?
            }
        }
    }
    Ok(records.len() as u64)
}
