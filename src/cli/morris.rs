//! `tb build morris`, and probe/export/info/verify on a Morris file.

use anyhow::{Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tb::games::morris::build::{self, MorrisGame, MorrisSpec, Phase, memory_needs};
use tb::games::morris::report::{self, Format};
use tb::games::morris::tablebase::{MorrisTablebase, probe_json, probe_text};
use tb::retro::Game;
use tb::retro::progress;
use tb::units::human_bytes;

/// Bits per position assumed by `--plan` for the disk prediction.
const ASSUMED_BITS_PER_POSITION: f64 = 2.5;

/// `tb build morris --phase`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PhaseChoice {
    /// The moving-phase tables.
    Moving,
    /// The placement tables on top of an existing moving-phase file.
    Placement,
    /// Both.
    All,
}

/// `tb build morris` arguments.
pub struct BuildArgs {
    /// `--stones`.
    pub stones: Option<u8>,
    /// `--phase`.
    pub phase: PhaseChoice,
    /// `--db`.
    pub db: Option<PathBuf>,
    /// `--threads`.
    pub threads: Option<usize>,
    /// `--memory` in bytes.
    pub memory: u64,
    /// `--chunk` (None: the file's when resuming, else the Morris default).
    pub chunk: Option<u64>,
    /// `--quiet`.
    pub quiet: bool,
    /// `--json`.
    pub json: bool,
    /// `--plan`.
    pub plan: bool,
}

/// Builds (or resumes) the Morris tables, or prints the plan.
pub fn build(args: BuildArgs) -> Result<ExitCode> {
    let phase = match args.phase {
        PhaseChoice::Moving => Phase::Moving,
        PhaseChoice::Placement | PhaseChoice::All => Phase::All,
    };
    let stones = args.stones.unwrap_or(9);
    let named = MorrisSpec::new(stones, build::DEFAULT_CHUNK_POSITIONS, phase)?;
    let db = args.db.unwrap_or_else(|| named.default_db());
    let chunk = args.chunk.unwrap_or_else(|| build::chunk_for(&db));
    let spec = MorrisSpec::new(stones, chunk, phase)?;
    if args.plan {
        print_plan(&spec, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.phase == PhaseChoice::Placement && !db.exists() {
        bail!(
            "--phase placement adds to an existing moving-phase file, and {} does not exist (build it with --phase moving, or both with --phase all)",
            db.display()
        );
    }
    let threads = super::threads(args.threads)?;
    let mut progress = progress::for_stderr(args.quiet);
    let summary = build::build(
        build::BuildOptions {
            spec,
            db: db.clone(),
            threads,
            memory: args.memory,
        },
        progress.as_mut(),
    )?;
    let mut stdout = std::io::stdout();
    if args.json {
        let value = super::summary_json(&summary, &summary.run)?;
        writeln!(stdout, "{value}")?;
    } else if args.quiet {
        writeln!(stdout, "{}", db.display())?;
    } else {
        writeln!(
            stdout,
            "morris tables up to {} stones -> {}",
            summary.stones,
            db.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--plan`: the pairs in build order with their sizes, the memory and disk needed.
fn print_plan(spec: &MorrisSpec, json: bool) -> Result<()> {
    let game = MorrisGame::new(spec.clone());
    let layers = game.layers();
    let rows: Vec<(String, u64)> = layers
        .iter()
        .map(|&l| (game.layer_label(l), game.layer_size(l)))
        .collect();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let memory = memory_needs(spec).1;
    let disk = (total as f64 * ASSUMED_BITS_PER_POSITION / 8.0) as u64;
    let mut stdout = std::io::stdout();
    if json {
        let pairs: Vec<serde_json::Value> = rows
            .iter()
            .map(|(label, n)| serde_json::json!({"tables": label, "positions": n}))
            .collect();
        let plan = serde_json::json!({
            "game": "morris",
            "stones": spec.stones,
            "positions": total,
            "predicted_memory_bytes": memory,
            "predicted_disk_bytes": disk,
            "pairs": pairs,
        });
        writeln!(stdout, "{plan}")?;
    } else {
        writeln!(
            stdout,
            "plan for morris up to {} stones: {} table pairs, {total} positions (one per class of the 16 symmetries)",
            spec.stones,
            rows.len()
        )?;
        writeln!(
            stdout,
            "predicted memory {}, predicted disk {} (at {ASSUMED_BITS_PER_POSITION} bits/position)",
            human_bytes(memory),
            human_bytes(disk)
        )?;
        for (label, n) in &rows {
            writeln!(stdout, "  {label:<16} {n:>12}")?;
        }
    }
    Ok(())
}

/// Probes Morris positions from the arguments or stdin.
pub fn probe(tb: &MorrisTablebase, json: bool, positions: Vec<String>) -> Result<ExitCode> {
    super::probe_batch(positions, json, |input, _, out| {
        let position = tb.parse_position(input)?;
        let answer = tb.probe(&position)?;
        if json {
            out.push_str(&probe_json(&position, &answer));
            out.push('\n');
        } else {
            out.push_str(&probe_text(&position, &answer));
        }
        Ok(())
    })
}

/// Exports every stored class.
pub fn export(
    db: &Path,
    csv: bool,
    max_lines: Option<usize>,
    expand: bool,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    super::refuse_dots_export_options(
        max_lines,
        expand,
        "a Morris export lists every stored class",
    )?;
    let tb = MorrisTablebase::open(db)?;
    let format = if csv { Format::Csv } else { Format::Jsonl };
    super::export_to(output.as_deref(), db, |sink| {
        report::export(&tb, format, sink)
    })
}

/// Per-pair statistics.
pub fn info(db: &Path, json: bool) -> Result<ExitCode> {
    let tb = MorrisTablebase::open(db)?;
    let i = report::info(&tb)?;
    super::print_report(
        &i,
        json.then_some(super::JsonStyle::Pretty),
        report::info_text,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Re-hash and one-ply recomputation.
pub fn verify(db: &Path, sample: Option<u64>, search: Option<u64>, json: bool) -> Result<ExitCode> {
    if search.is_some() {
        bail!("--search is a Dots-and-Boxes option (Morris has no search solver)");
    }
    let tb = MorrisTablebase::open(db)?;
    let r = report::verify(&tb, sample)?;
    super::print_report(&r, json.then_some(super::JsonStyle::Line), |r| r.text())?;
    Ok(super::verdict(r.ok()))
}
