//! The probe batch loop: positions from the arguments or stdin, answered in
//! batches (on worker threads for stdin), printed in input order, a bad line
//! answered by an error in its place.

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use tb::games::read::ProbeError;

/// Longest line a probe batch reads from stdin.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Where a batch's positions come from.
pub enum Positions {
    /// The command's arguments (which may name files).
    Args(Vec<String>),
    /// One per line on stdin; `explicit` when the user asked for it with `-`
    /// (then a terminal is read too).
    Stdin {
        /// Asked for with `-`.
        explicit: bool,
    },
}

impl Positions {
    /// The positions of a command's arguments: none means stdin, and so does a
    /// lone `-` (as everywhere in Unix).
    pub fn of_args(args: Vec<String>) -> Result<Positions> {
        Ok(match args.as_slice() {
            [] => Positions::Stdin { explicit: false },
            [dash] if dash == "-" => Positions::Stdin { explicit: true },
            _ if args.iter().any(|a| a == "-") => {
                bail!("`-` (read stdin) cannot be given with other positions")
            }
            _ => Positions::Args(args),
        })
    }
}

/// Answers positions from the arguments, or one per line on stdin: `answer(input,
/// from_args, out)` appends the text to print to `out`. A bad position (or a stdin
/// line that is not UTF-8 or longer than [`MAX_LINE_BYTES`]) prints an error (an
/// error object with `--json`) and the batch goes on; the exit code is 1 if any
/// failed. Stdin is answered on `threads` threads (`--threads`, every core if not
/// given): `answerer()` makes each worker's own answering function (its own open
/// file and chunk cache, so the hot path takes no lock); each worker answers a
/// contiguous share of a batch, and the shares are printed in input order, while
/// the next batch is read. Positions given as arguments, or one thread, are
/// answered on the calling thread (one `answerer()`; the system is not asked for
/// its cores, a cold probe's cost).
pub fn probe_batch<A>(
    positions: Positions,
    json: bool,
    threads: Option<usize>,
    answerer: impl Fn() -> Result<A> + Sync,
) -> Result<ExitCode>
where
    A: FnMut(&str, bool, &mut String) -> Result<(), ProbeError>,
{
    let in_order = |positions, answer| {
        answer_batches(
            positions,
            json,
            &mut InOrder {
                answers: Answers::new(json),
                answer,
            },
        )
    };
    if let Positions::Args(_) = positions {
        return in_order(positions, answerer()?);
    }
    let threads = super::common::threads(threads)?;
    if threads <= 1 {
        return in_order(positions, answerer()?);
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

impl<F: FnMut(&str, bool, &mut String) -> Result<(), ProbeError>> BatchAnswerer for InOrder<F> {
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
        answer: &mut impl FnMut(&str, bool, &mut String) -> Result<(), ProbeError>,
    ) {
        let len = self.text.len();
        if let Err(e) = answer(input, from_args, &mut self.text) {
            self.text.truncate(len);
            self.error(input, &e);
        }
    }

    /// Appends the error of an input line (text output: to stderr only, so the
    /// answers on stdout are those of the good lines; `--json` keeps one line
    /// per input).
    fn error(&mut self, input: &str, e: &ProbeError) {
        self.failed += 1;
        if self.json {
            self.text.push_str(&e.json(input));
            self.text.push('\n');
        } else {
            self.notes.push(format!("tb: error: `{input}`: {e}"));
        }
    }

    /// Writes what was added since the last call (errors of text output to
    /// stderr); returns how many of those inputs failed.
    fn write_to(&mut self, out: &mut dyn Write) -> Result<usize> {
        out.write_all(self.text.as_bytes())?;
        self.text.clear();
        for note in self.notes.drain(..) {
            super::common::note(&note);
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
    positions: Positions,
    json: bool,
    answerer: &mut impl BatchAnswerer,
) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = 0;
    // Lines that cannot be read are reported here, in their place.
    let mut unreadable = Answers::new(json);
    let mut inputs = Batch::new(matches!(positions, Positions::Args(_)));
    if let Positions::Stdin { explicit } = positions {
        if !explicit && std::io::stdin().is_terminal() {
            bail!(
                "no positions: give them as arguments, or one per line on stdin (`-` reads a terminal too)"
            );
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
                    unreadable.error(&shown, &ProbeError::Position(e));
                    failed += unreadable.write_to(&mut out)?;
                }
            }
        }
    } else if let Positions::Args(args) = &positions {
        args.iter().for_each(|p| inputs.push(p));
    }
    failed += answerer.submit_read(&mut inputs, &mut out)?;
    failed += answerer.finish(&mut out)?;
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::common::EXIT_FAILURE)
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
