//! `tb build morris` (a Morris file is read through the registry: see `read`).

use super::args::{MorrisBuild, PhaseArg, RulesArg};
use anyhow::{Result, bail};
use std::io::Write;
use std::process::ExitCode;
use tb::games::morris::build::{self, MorrisSpec, Phase, memory_needs};
use tb::games::morris::spec::MorrisFormat;
use tb::games::morris::variant::Rules;
use tb::retro::Format;
use tb::retro::progress;
use tb::units::human_bytes;

/// Bits per position assumed by `--plan` for the disk prediction.
const ASSUMED_BITS_PER_POSITION: f64 = 2.5;

/// Builds (or resumes) the Morris tables, or prints the plan.
pub fn build(args: MorrisBuild) -> Result<ExitCode> {
    let choice = args.phase.unwrap_or(PhaseArg::Moving);
    let phase = match choice {
        PhaseArg::Moving => Phase::Moving,
        PhaseArg::Placement | PhaseArg::All => Phase::All,
    };
    let rules = match args.rules.unwrap_or(RulesArg::Nine) {
        RulesArg::Nine => Rules::Nine,
        RulesArg::Six => Rules::Six,
        RulesArg::SixFlying => Rules::SixFlying,
        RulesArg::Lasker => Rules::Lasker,
        RulesArg::Morabaraba => Rules::Morabaraba,
    };
    let stones = args.stones.unwrap_or(rules.stones());
    let named = MorrisSpec::with_rules(rules, stones, build::DEFAULT_CHUNK_POSITIONS, phase)?;
    let db = args.db.unwrap_or_else(|| named.default_db());
    let chunk = args.chunk.unwrap_or_else(|| build::chunk_for(&db));
    let spec = MorrisSpec::with_rules(rules, stones, chunk, phase)?;
    let common = args.common;
    let memory = super::common::build_memory(
        common.memory.as_deref(),
        tb::sys::default_memory(build::DEFAULT_MEMORY),
        args.plan,
    )?;
    if args.plan {
        print_plan(&spec, common.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if choice == PhaseArg::Placement && !db.exists() {
        bail!(
            "--phase placement adds to an existing moving-phase file, and {} does not exist (build it with --phase moving, or both with --phase all)",
            db.display()
        );
    }
    let threads = super::common::threads(args.threads)?;
    let mut progress = progress::for_stderr(common.quiet);
    let summary = build::build(
        build::BuildOptions {
            spec,
            db: db.clone(),
            threads,
            memory,
        },
        progress.as_mut(),
    )?;
    super::common::print_summary(&summary, &summary.run, &common, &db, || {
        format!(
            "morris tables up to {} stones -> {}",
            summary.stones,
            db.display()
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--plan`: the pairs in build order with their sizes, the memory and disk needed.
fn print_plan(spec: &MorrisSpec, json: bool) -> Result<()> {
    let game = MorrisFormat::new(spec.clone());
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
        // 16 wide as ever; wider for sector pairs (`sectors 3-4 h1-0/4-3 h0-1`).
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(16);
        for (label, n) in &rows {
            writeln!(stdout, "  {label:<w$} {n:>12}")?;
        }
    }
    Ok(())
}
