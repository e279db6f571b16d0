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
/// from_args, out)` appends the text to print to `out`. A bad position (or a stdin
/// line that is not UTF-8 or longer than [`MAX_LINE_BYTES`]) prints an error (an
/// error object with `--json`) and the batch goes on; the exit code is 1 if any
/// failed.
pub fn probe_batch(
    positions: Vec<String>,
    json: bool,
    answer: impl FnMut(&str, bool, &mut String) -> Result<()>,
) -> Result<ExitCode> {
    answer_batches(
        positions,
        json,
        &mut InOrder {
            answers: Answers::new(json),
            answer,
        },
    )
}

/// [`probe_batch`] of stdin on `threads` threads (`--threads`, every core if not
/// given): `answerer()` makes each worker's own answering function (its own open
/// file and chunk cache, so the hot path takes no lock); each worker answers a
/// contiguous share of a batch, and the shares are printed in input order, while
/// the next batch is read. Positions given as arguments, or one thread, are
/// answered on the calling thread (one `answerer()`; the system is not asked for
/// its cores, a cold probe's cost).
pub fn probe_batch_parallel<A>(
    positions: Vec<String>,
    json: bool,
    threads: Option<usize>,
    answerer: impl Fn() -> Result<A> + Sync,
) -> Result<ExitCode>
where
    A: FnMut(&str, bool, &mut String) -> Result<()>,
{
    if !positions.is_empty() {
        return probe_batch(positions, json, answerer()?);
    }
    let threads = self::threads(threads)?;
    if threads <= 1 {
        return probe_batch(positions, json, answerer()?);
    }
    std::thread::scope(|scope| {
        let mut pool = Workers {
            workers: Vec::new(),
            spare: Vec::new(),
            in_flight: None,
            json,
        };
        for _ in 0..threads {
            let (to_worker, inbox) = std::sync::mpsc::channel::<Share>();
            let (reply, answered) = std::sync::mpsc::channel::<Result<Answers>>();
            let answerer = &answerer;
            scope.spawn(move || {
                let mut answer = match answerer() {
                    Ok(answer) => answer,
                    Err(e) => return drop(reply.send(Err(e))),
                };
                for (batch, range, mut answers) in inbox {
                    for i in range {
                        answers.add(batch.line(i), batch.from_args, &mut answer);
                    }
                    if reply.send(Ok(answers)).is_err() {
                        return;
                    }
                }
            });
            pool.workers.push((to_worker, answered));
        }
        answer_batches(positions, json, &mut pool)
    })
}

/// How [`answer_batches`] gets batches answered and written in input order.
trait BatchAnswerer {
    /// Starts answering `batch`; may write the answers of batches submitted
    /// before it. Returns how many of the answers it wrote are errors.
    fn submit(&mut self, batch: Inputs, out: &mut dyn Write) -> Result<usize>;
    /// Writes every answer not written yet; returns how many of them are errors.
    fn finish(&mut self, out: &mut dyn Write) -> Result<usize>;

    /// [`BatchAnswerer::submit`] of the inputs read so far (taken), if any.
    fn submit_read(&mut self, inputs: &mut Batch, out: &mut dyn Write) -> Result<usize> {
        if inputs.is_empty() {
            return Ok(0);
        }
        let batch = std::mem::replace(inputs, Batch::new(inputs.from_args));
        self.submit(Inputs::new(batch), out)
    }
}

/// Answers on the calling thread, each written while it is in the cache.
struct InOrder<F> {
    answers: Answers,
    answer: F,
}

impl<F: FnMut(&str, bool, &mut String) -> Result<()>> BatchAnswerer for InOrder<F> {
    fn submit(&mut self, batch: Inputs, out: &mut dyn Write) -> Result<usize> {
        let mut failed = 0;
        for i in 0..batch.len() {
            self.answers
                .add(batch.line(i), batch.from_args, &mut self.answer);
            failed += self.answers.write_to(out)?;
        }
        Ok(failed)
    }

    fn finish(&mut self, _: &mut dyn Write) -> Result<usize> {
        Ok(0)
    }
}

/// A worker's share of a batch: the batch, its range of it, and a buffer for the
/// answers (which comes back with them).
type Share = (Inputs, std::ops::Range<usize>, Answers);

/// Worker threads answering contiguous shares of a batch. One batch is in flight
/// while the next is read: [`BatchAnswerer::submit`] hands out the new batch
/// before it collects the one before, so the workers need not wait for stdin.
struct Workers {
    /// Per worker: where its shares go, and where its answers come back (in the
    /// order of the shares).
    workers: Vec<(
        std::sync::mpsc::Sender<Share>,
        std::sync::mpsc::Receiver<Result<Answers>>,
    )>,
    /// Answer buffers back from the workers, for the next shares.
    spare: Vec<Answers>,
    /// How many workers have a share of the batch in flight.
    in_flight: Option<usize>,
    json: bool,
}

impl Workers {
    /// Writes the answers of the batch in flight, if any.
    fn collect(&mut self, out: &mut dyn Write) -> Result<usize> {
        let mut failed = 0;
        for k in 0..self.in_flight.take().unwrap_or(0) {
            let mut answers = self.answer_of(k)?;
            failed += answers.write_to(out)?;
            self.spare.push(answers);
        }
        Ok(failed)
    }

    /// The next answers of worker `k`, or the error that stopped it.
    fn answer_of(&self, k: usize) -> Result<Answers> {
        match self.workers[k].1.recv() {
            Ok(answers) => answers,
            Err(_) => bail!("a probe worker stopped"),
        }
    }
}

impl BatchAnswerer for Workers {
    fn submit(&mut self, batch: Inputs, out: &mut dyn Write) -> Result<usize> {
        let share = batch.len().div_ceil(self.workers.len());
        let mut asked = 0;
        for k in 0..self.workers.len() {
            let range = k * share..((k + 1) * share).min(batch.len());
            if range.is_empty() {
                break;
            }
            let buffer = self.spare.pop().unwrap_or_else(|| Answers::new(self.json));
            if self.workers[k]
                .0
                .send((batch.clone(), range, buffer))
                .is_err()
            {
                // A worker that could not open the file said why and stopped.
                return Err(self
                    .answer_of(k)
                    .err()
                    .unwrap_or_else(|| anyhow::anyhow!("a probe worker stopped")));
            }
            asked += 1;
        }
        let failed = self.collect(out)?;
        self.in_flight = Some(asked);
        Ok(failed)
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<usize> {
        self.collect(out)
    }
}

/// Answers (and errors) in print order, as one text, with the failures counted.
struct Answers {
    json: bool,
    text: String,
    /// Errors of text output (they go to stderr).
    notes: Vec<String>,
    failed: usize,
}

impl Answers {
    fn new(json: bool) -> Answers {
        Answers {
            json,
            text: String::new(),
            notes: Vec::new(),
            failed: 0,
        }
    }

    /// Appends the answer to `input`, or its error.
    fn add(
        &mut self,
        input: &str,
        from_args: bool,
        answer: &mut impl FnMut(&str, bool, &mut String) -> Result<()>,
    ) {
        let len = self.text.len();
        if let Err(e) = answer(input, from_args, &mut self.text) {
            self.text.truncate(len);
            self.error(input, &e);
        }
    }

    /// Appends the error of an input line.
    fn error(&mut self, input: &str, e: &anyhow::Error) {
        self.failed += 1;
        if self.json {
            self.text.push_str(&error_json(input, e));
            self.text.push('\n');
        } else {
            self.notes.push(format!("tb: error: `{input}`: {e:#}"));
        }
    }

    /// Writes what was added since the last call (errors of text output to
    /// stderr); returns how many of those inputs failed.
    fn write_to(&mut self, out: &mut dyn Write) -> Result<usize> {
        out.write_all(self.text.as_bytes())?;
        self.text.clear();
        for note in self.notes.drain(..) {
            crate::note(&note);
        }
        Ok(std::mem::take(&mut self.failed))
    }
}

/// The inputs of a batch, shared with the workers.
type Inputs = std::sync::Arc<Batch>;

/// Input lines (trimmed) in one buffer: one allocation per batch, not per line.
struct Batch {
    text: String,
    /// Where each line ends in `text`.
    ends: Vec<usize>,
    /// Whether the lines are arguments (which may name files) or stdin lines.
    from_args: bool,
}

impl Batch {
    fn new(from_args: bool) -> Batch {
        Batch {
            text: String::new(),
            ends: Vec::new(),
            from_args,
        }
    }

    fn push(&mut self, line: &str) {
        self.text.push_str(line);
        self.ends.push(self.text.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Line `i`.
    fn line(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// Positions answered together by [`answer_batches`] at most (a batch also ends
/// where stdin has no further complete line yet, so that a script that writes a
/// line and waits for its answer gets it, and before a line that cannot be read).
/// Small enough that a worker's share of the answers stays in its cache (a 3x4
/// answer is ~1.2 KB of JSON): a warm 3x4 batch took a median 0.224 s with 1,024,
/// 0.236 s with 2,048 and 0.255 s with 8,192 (ten runs each, alternating).
const BATCH_LINES: usize = 1024;

/// The loop of [`probe_batch`]: inputs in batches of at most [`BATCH_LINES`],
/// handed to `answerer`; every answer is written and the output flushed before a
/// read of stdin that may wait (and at the end). Returns the exit code: 1 if any
/// failed.
fn answer_batches(
    positions: Vec<String>,
    json: bool,
    answerer: &mut impl BatchAnswerer,
) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = 0;
    // Lines that cannot be read are reported here, in their place.
    let mut unreadable = Answers::new(json);
    let mut inputs = Batch::new(!positions.is_empty());
    if positions.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no positions: give them as arguments or one per line on stdin");
        }
        let mut stdin = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
        let mut line = Vec::new();
        loop {
            let more_buffered = stdin.buffer().contains(&b'\n');
            if inputs.len() == BATCH_LINES || !more_buffered {
                failed += answerer.submit_read(&mut inputs, &mut out)?;
            }
            if !more_buffered {
                // Before a read that may wait for the writer, every answer is out.
                failed += answerer.finish(&mut out)?;
                out.flush()?;
            }
            match read_line(&mut stdin, &mut line)? {
                None => break,
                Some(Ok(text)) if text.trim().is_empty() => {}
                Some(Ok(text)) => inputs.push(text.trim()),
                Some(Err((shown, e))) => {
                    failed += answerer.submit_read(&mut inputs, &mut out)?;
                    failed += answerer.finish(&mut out)?;
                    unreadable.error(&shown, &e);
                    failed += unreadable.write_to(&mut out)?;
                }
            }
        }
    } else {
        positions.iter().for_each(|p| inputs.push(p));
    }
    failed += answerer.submit_read(&mut inputs, &mut out)?;
    failed += answerer.finish(&mut out)?;
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAILURE)
    })
}

/// A line of stdin read as text, or why it cannot be (with the start of the
/// line, lossily decoded, to name it); `None` at the end of input.
type StdinLine<'a> = Option<std::result::Result<&'a str, (String, anyhow::Error)>>;

/// Reads one line of at most [`MAX_LINE_BYTES`] into `bytes` (a longer one is
/// skipped to its end and reported).
fn read_line<'a>(input: &mut impl BufRead, bytes: &'a mut Vec<u8>) -> Result<StdinLine<'a>> {
    bytes.clear();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let n = std::io::Read::take(&mut *input, limit)
        .read_until(b'\n', bytes)
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
        return Ok(Some(Err((shown(bytes) + "...", e))));
    }
    Ok(Some(match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => Err((shown(bytes), anyhow::anyhow!("the line is not UTF-8 text"))),
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
