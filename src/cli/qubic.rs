//! `tb build qubic` (a strategy file is read through the registry: see `read`).

use super::args::QubicBuild;
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tb::games::qubic::build::{self, BuildOptions};

/// `tb build qubic`.
pub fn build(args: QubicBuild) -> Result<ExitCode> {
    let common = args.common;
    let (start, default_name) = build::start_of(args.first, args.start.as_deref())?;
    let options = BuildOptions {
        path: args.db.unwrap_or_else(|| PathBuf::from(default_name)),
        start,
        memory: super::common::memory(
            "--memory",
            common.memory.as_deref(),
            tb::sys::default_memory(build::DEFAULT_MEMORY),
        )?,
        time_limit: args.time_limit.map(|t| t.as_secs_f64()),
        shrink: args.shrink.unwrap_or(3),
        // Every core unless asked (the build uses at most as many as it has
        // chains of replies to prove side by side).
        threads: super::common::threads(args.threads)?,
        proofs: args
            .proofs
            .unwrap_or(tb::games::qubic::second::Proofs::Auto),
        checkpoint_every: args
            .checkpoint_every
            .unwrap_or(tb::games::qubic::checkpoint::DEFAULT_EVERY),
        known: args.known,
    };
    let quiet = common.quiet;
    let summary = build::build(&options, &mut |line| {
        if !quiet {
            super::common::note(&format!("qubic: {line}"));
        }
    })?;
    let mut stdout = std::io::stdout();
    if common.json {
        writeln!(stdout, "{}", serde_json::to_string(&summary)?)?;
    } else if summary.complete {
        writeln!(
            stdout,
            "X wins from {} (O to move): {} strategic moves ({} positions with forced blocks), {} O replies, {:.1} s -> {}",
            summary.start,
            summary.strategic_moves,
            summary.strategic,
            summary.replies.len(),
            summary.seconds,
            summary.path
        )?;
    } else {
        let proven = summary.replies.iter().filter(|r| r.proven).count();
        writeln!(
            stdout,
            "not finished: {proven} O replies proven, the others (or their second proofs) not within the time limit ({:.1} s); run again to go on -> {}",
            summary.seconds, summary.path
        )?;
    }
    Ok(super::common::verdict(summary.complete))
}
