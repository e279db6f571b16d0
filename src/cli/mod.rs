//! Command handlers shared by the games (the probe batch loop, error objects, the
//! export sink) and the Morris commands; `main.rs` holds the argument definitions
//! and the Dots-and-Boxes handlers. Parsing and printing only: the work is in the
//! library.

pub mod morris;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::io::{BufRead, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// The JSON object for an input line that could not be answered.
pub fn error_json(input: &str, error: &anyhow::Error) -> String {
    #[derive(Serialize)]
    struct ErrorJson<'a> {
        input: &'a str,
        error: String,
    }
    let object = ErrorJson {
        input,
        error: format!("{error:#}"),
    };
    serde_json::to_string(&object).expect("errors serialise")
}

/// Answers positions from the arguments, or one per line on stdin: `answer(input,
/// from_args)` gives the text to print. A bad position prints an error (an error
/// object with `--json`) and the batch goes on; the exit code is 1 if any failed.
pub fn probe_batch(
    positions: Vec<String>,
    json: bool,
    mut answer: impl FnMut(&str, bool) -> Result<String>,
) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = 0usize;
    let mut one = |input: &str, from_args: bool, out: &mut dyn Write| -> Result<()> {
        match answer(input, from_args) {
            Ok(text) => out.write_all(text.as_bytes())?,
            Err(e) => {
                failed += 1;
                if json {
                    writeln!(out, "{}", error_json(input, &e))?;
                } else {
                    eprintln!("tb: error: `{input}`: {e:#}");
                }
            }
        }
        Ok(())
    };
    if positions.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no positions: give them as arguments or one per line on stdin");
        }
        for line in std::io::stdin().lock().lines() {
            let line = line.context("cannot read stdin")?;
            if !line.trim().is_empty() {
                one(line.trim(), false, &mut out)?;
            }
        }
    } else {
        for p in &positions {
            one(p, true, &mut out)?;
        }
    }
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAILURE)
    })
}

/// Writes an export to `output` (stdout when `None`) through a large buffer;
/// `write` returns the number of rows, reported on stderr for a file.
pub fn export_to(
    output: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<u64>,
) -> Result<ExitCode> {
    let sink: Box<dyn Write> = match output {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut sink = BufWriter::with_capacity(1 << 20, sink);
    let rows = write(&mut sink)?;
    sink.flush()?;
    if output.is_some() {
        eprintln!("tb: exported {rows} positions");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--threads`, defaulting to every core; 0 is refused.
pub fn threads(given: Option<usize>) -> Result<usize> {
    let threads =
        given.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    Ok(threads)
}

/// A build summary as JSON, with the rates derived from its run.
pub fn summary_json(
    summary: &impl Serialize,
    run: &tb::retro::build::RunSummary,
) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(summary)?;
    value["positions_per_second"] = run.positions_per_second().into();
    value["bits_per_position"] = run.bits_per_position().into();
    Ok(value)
}
