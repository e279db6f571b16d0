//! What the command handlers share: printing, exit codes, the export sink, the
//! numeric flags and the search progress line. A leaf: it calls no handler.

use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// Exit code for runtime failures (usage errors exit with 2 through clap).
pub const EXIT_FAILURE: u8 = 1;

/// Writes a line to stderr; a closed or full stderr is ignored (never a panic:
/// the exit code still tells what happened).
pub fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Writes a line to stdout, failing (instead of panicking) when stdout is closed.
pub fn print_line(line: impl std::fmt::Display) -> Result<()> {
    writeln!(std::io::stdout(), "{line}")?;
    Ok(())
}

/// Writes text to stdout, failing (instead of panicking) when stdout is closed.
pub fn print(text: impl std::fmt::Display) -> Result<()> {
    write!(std::io::stdout(), "{text}")?;
    Ok(())
}

/// Exit code of a check: success, or failure when it found something.
pub fn verdict(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}

/// A build's summary as scripts and people want it: one JSON object with
/// `--json` (with the rates derived from its run), the file alone with
/// `--quiet`, else `text`.
pub fn print_summary(
    summary: &impl Serialize,
    run: &tb::retro::build::RunSummary,
    common: &super::args::BuildCommon,
    db: &Path,
    text: impl FnOnce() -> String,
) -> Result<()> {
    if common.json {
        print_line(summary_json(summary, run)?)
    } else if common.quiet {
        // Scripts still learn where the result went.
        print_line(db.display())
    } else {
        print_line(text())
    }
}

/// Writes an export of `db` to `output` (stdout when `None`) through a large
/// buffer; `write` returns the number of rows, reported on stderr for a file.
///
/// A regular output file is written under a temporary name beside it and renamed
/// at the end, so a failed or interrupted export never leaves a partial file under
/// its name; the database itself (or any other name for it) is refused.
pub fn export_to(
    output: Option<&Path>,
    db: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<u64>,
) -> Result<ExitCode> {
    let Some(path) = output else {
        let mut sink = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        write(&mut sink)?;
        sink.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    if same_file(path, db) {
        bail!(
            "-o {} is the tablebase being exported; choose another file",
            path.display()
        );
    }
    // Devices and pipes (/dev/stdout, a FIFO) are written directly.
    let regular = std::fs::metadata(path).map_or(true, |m| m.is_file());
    let target = if regular {
        let name = path.file_name().context("-o needs a file name")?;
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".partial-{}", std::process::id()));
        path.with_file_name(tmp)
    } else {
        path.to_path_buf()
    };
    let written = (|| -> Result<u64> {
        let file = std::fs::File::create(&target)
            .with_context(|| format!("cannot create {}", target.display()))?;
        let mut sink = BufWriter::with_capacity(1 << 20, file);
        let rows = write(&mut sink)?;
        sink.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| if regular { f.sync_all() } else { Ok(()) })
            .with_context(|| format!("cannot write {}", target.display()))?;
        if regular {
            std::fs::rename(&target, path)
                .with_context(|| format!("cannot rename the export to {}", path.display()))?;
        }
        Ok(rows)
    })();
    match written {
        Ok(rows) => {
            note(&format!("tb: exported {rows} positions"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if regular {
                let _ = std::fs::remove_file(&target);
            }
            Err(e)
        }
    }
}

/// Whether `a` and `b` name the same existing file (same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// `--threads`, defaulting to every core; 0 and more than [`tb::sys::MAX_THREADS`] are
/// refused.
pub fn threads(given: Option<usize>) -> Result<usize> {
    let threads =
        given.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    tb::sys::check_threads("--threads", threads)
}

/// A memory flag: the given size (checked against the machine) or the default.
pub fn memory(flag: &str, given: Option<&str>, default: u64) -> Result<u64> {
    match given {
        Some(text) => tb::units::parse_memory(flag, text),
        None => Ok(default),
    }
}

/// The `--memory` budget of a build, or of its `--plan`: a plan may be for a
/// bigger machine than this one, so only a build is held to this machine's memory.
pub fn build_memory(given: Option<&str>, default: u64, plan: bool) -> Result<u64> {
    match given {
        Some(text) if plan => tb::units::parse_size(text).context("bad --memory"),
        _ => memory("--memory", given, default),
    }
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

/// A progress line for long searches on a terminal (`None` when stderr is not
/// one): nodes, time and the bounds on the value proven so far.
pub fn search_progress() -> Option<tb::games::dots::search::ProgressFn> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    Some(Box::new(|s: &tb::games::dots::search::SearchStatus| {
        let _ = write!(
            std::io::stderr(),
            "\r\x1b[Ksearching: {:.1} M nodes, {:.0} s, value in {}..={}",
            s.nodes as f64 / 1e6,
            s.seconds,
            s.lower,
            s.upper
        );
    }))
}

/// Clears the progress line of [`search_progress`].
pub fn end_search_progress() {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
}
