//! Command handlers shared by the games (the probe batch loop, error objects, the
//! export sink) and the Morris commands; `main.rs` holds the argument definitions
//! and the Dots-and-Boxes handlers. Parsing and printing only: the work is in the
//! library.

pub mod morris;
pub mod qubic;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::io::{BufRead, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// The JSON object for an input line that could not be answered.
pub use tb::games::probe_error_json as error_json;

/// Prints a report as JSON (pretty or on one line) or as its text.
pub fn print_report<T: Serialize>(
    report: &T,
    json: Option<JsonStyle>,
    text: impl FnOnce(&T) -> String,
) -> Result<()> {
    let mut stdout = std::io::stdout();
    match json {
        Some(JsonStyle::Pretty) => writeln!(stdout, "{}", serde_json::to_string_pretty(report)?)?,
        Some(JsonStyle::Line) => writeln!(stdout, "{}", serde_json::to_string(report)?)?,
        None => write!(stdout, "{}", text(report))?,
    }
    Ok(())
}

/// How [`print_report`] writes JSON.
#[derive(Debug, Clone, Copy)]
pub enum JsonStyle {
    /// Indented (`tb info --json`).
    Pretty,
    /// One line (`tb verify --json`).
    Line,
}

/// Exit code of a check: success, or failure when it found something.
pub fn verdict(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAILURE)
    }
}

/// Refuses the first option given among `flags` (name, given) with "<name> <why>".
pub fn refuse_given(flags: &[(&str, bool)], why: &str) -> Result<()> {
    if let Some((flag, _)) = flags.iter().find(|(_, given)| *given) {
        bail!("{flag} {why}");
    }
    Ok(())
}

/// Refuses the Dots-and-Boxes export options for a game whose export lists
/// every stored entry (`what` names them).
pub fn refuse_dots_export_options(
    max_lines: Option<usize>,
    expand: bool,
    what: &str,
) -> Result<()> {
    if max_lines.is_some() || expand {
        bail!("--max-lines and --expand are Dots-and-Boxes options; {what}");
    }
    Ok(())
}

/// Longest line a probe batch reads from stdin.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Answers positions from the arguments, or one per line on stdin: `answer(input,
/// from_args)` gives the text to print. A bad position (or a stdin line that is
/// not UTF-8 or longer than [`MAX_LINE_BYTES`]) prints an error (an error object
/// with `--json`) and the batch goes on; the exit code is 1 if any failed.
pub fn probe_batch(
    positions: Vec<String>,
    json: bool,
    mut answer: impl FnMut(&str, bool) -> Result<String>,
) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = 0usize;
    let mut report = |input: &str, answered: Result<String>, out: &mut dyn Write| -> Result<()> {
        match answered {
            Ok(text) => out.write_all(text.as_bytes())?,
            Err(e) => {
                failed += 1;
                if json {
                    writeln!(out, "{}", error_json(input, &e))?;
                } else {
                    crate::note(&format!("tb: error: `{input}`: {e:#}"));
                }
            }
        }
        Ok(())
    };
    if positions.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no positions: give them as arguments or one per line on stdin");
        }
        let mut stdin = std::io::stdin().lock();
        while let Some(line) = read_line(&mut stdin)? {
            match line {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => {
                    let input = text.trim();
                    report(input, answer(input, false), &mut out)?;
                }
                Err((shown, e)) => report(&shown, Err(e), &mut out)?,
            }
        }
    } else {
        for p in &positions {
            report(p, answer(p, true), &mut out)?;
        }
    }
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAILURE)
    })
}

/// A line of stdin read as text, or why it cannot be (with the start of the
/// line, lossily decoded, to name it); `None` at the end of input.
type StdinLine = Option<std::result::Result<String, (String, anyhow::Error)>>;

/// Reads one line of at most [`MAX_LINE_BYTES`] (a longer one is skipped to its
/// end and reported).
fn read_line(input: &mut impl BufRead) -> Result<StdinLine> {
    let mut bytes = Vec::new();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let n = std::io::Read::take(&mut *input, limit)
        .read_until(b'\n', &mut bytes)
        .context("cannot read stdin")?;
    if n == 0 {
        return Ok(None);
    }
    let shown = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]);
        text.trim_end().to_string()
    };
    if bytes.len() > MAX_LINE_BYTES && !bytes.ends_with(b"\n") {
        // Skip the rest of the line without keeping it.
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let n = std::io::Read::take(&mut *input, limit)
                .read_until(b'\n', &mut rest)
                .context("cannot read stdin")?;
            if n == 0 || rest.ends_with(b"\n") {
                break;
            }
        }
        let e = anyhow::anyhow!("the line is longer than {MAX_LINE_BYTES} bytes");
        return Ok(Some(Err((shown(&bytes) + "...", e))));
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => Err((
            shown(e.as_bytes()),
            anyhow::anyhow!("the line is not UTF-8 text"),
        )),
    }))
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
            crate::note(&format!("tb: exported {rows} positions"));
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
