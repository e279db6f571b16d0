//! The Qubic commands: build a winning strategy, probe it, describe, check and
//! export it (the work is in `tb::games::qubic`).

use anyhow::{Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tb::games::qubic::build::{self, BuildOptions};
use tb::games::qubic::position::Position;
use tb::games::qubic::report;
use tb::games::qubic::stored::StrategyFile;

/// What `tb build qubic` was given.
pub struct BuildArgs {
    /// --db.
    pub db: Option<PathBuf>,
    /// --first.
    pub first: Option<u8>,
    /// --start.
    pub start: Option<String>,
    /// --memory, in bytes.
    pub memory: u64,
    /// --time-limit, in seconds.
    pub time_limit: Option<f64>,
    /// --shrink.
    pub shrink: u32,
}

/// `tb build qubic`.
pub fn build(args: BuildArgs, quiet: bool, json: bool) -> Result<ExitCode> {
    let BuildArgs {
        db,
        first,
        start,
        memory,
        time_limit,
        shrink,
    } = args;
    let (start, default_name) = match (first, start) {
        (Some(_), Some(_)) => bail!("give --first or --start, not both"),
        (_, Some(text)) => {
            let name: String = text
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            (Position::parse(&text)?, format!("qubic-from-{name}.tb"))
        }
        (first, None) => {
            let first = first.unwrap_or(0);
            if first >= 64 {
                bail!("--first {first}: cells are 0..=63");
            }
            let name = if first == 0 {
                "qubic.tb".to_string()
            } else {
                format!("qubic-{first}.tb")
            };
            (Position::EMPTY.play(first as usize)?, name)
        }
    };
    let options = BuildOptions {
        path: db.unwrap_or_else(|| PathBuf::from(default_name)),
        start,
        memory,
        time_limit,
        shrink,
    };
    let summary = build::build(&options, &mut |line| {
        if !quiet {
            crate::note(&format!("qubic: {line}"));
        }
    })?;
    let mut stdout = std::io::stdout();
    if json {
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
            "not finished: {proven} O replies proven, the others not within the time limit ({:.1} s); run again to go on -> {}",
            summary.seconds, summary.path
        )?;
    }
    Ok(super::verdict(summary.complete))
}

/// `tb probe` on a strategy file.
pub fn probe(file: &StrategyFile, json: bool, positions: Vec<String>) -> Result<ExitCode> {
    super::probe_batch(positions, json, |input, _, out| {
        let answer = file.probe(Position::parse(input)?);
        out.push_str(&if json { answer.json() } else { answer.text() });
        out.push('\n');
        Ok(())
    })
}

/// `tb info`.
pub fn info(db: &Path, json: bool) -> Result<ExitCode> {
    let i = report::info(&StrategyFile::open(db)?);
    super::print_report(
        &i,
        json.then_some(super::JsonStyle::Pretty),
        report::info_text,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `tb verify`: the independent checker over the whole strategy.
pub fn verify(db: &Path, sample: Option<u64>, search: Option<u64>, json: bool) -> Result<ExitCode> {
    if sample.is_some() || search.is_some() {
        bail!("--sample and --search do not apply to a Qubic strategy (it is checked whole)");
    }
    let r = report::verify(&StrategyFile::open(db)?);
    super::print_report(&r, json.then_some(super::JsonStyle::Line), |r| r.text())?;
    Ok(super::verdict(r.ok()))
}

/// `tb export`.
pub fn export(
    db: &Path,
    format: report::ExportFormat,
    max_lines: Option<usize>,
    expand: bool,
    output: Option<PathBuf>,
) -> Result<ExitCode> {
    super::refuse_dots_export_options(
        max_lines,
        expand,
        "a Qubic export lists every strategic position",
    )?;
    let file = StrategyFile::open(db)?;
    super::export_to(output.as_deref(), db, |sink| {
        report::export(&file, format, sink)
    })
}
