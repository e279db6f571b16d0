//! Checkpoints of a reply's proof in progress: a proof of hours (the 4-line
//! opening's) is resumed where it was, not begun again, after a kill.
//!
//! Between two slices of a reply's proof the prover's whole course lies in its
//! table and its counters ([`ProverState`]): its caches of forced wins answer
//! as the search would. So the table's entries and the counters, written to a
//! file beside the build's (`<db>.proof-<reply>`, `<db>.proof-<reply>-second`
//! for a second proof) and read back into a new prover, carry the proof on as if
//! it had never stopped: the same expansions, the same proof. A checkpoint is
//! written at most every `every` (10 minutes by default: one of the 4-line
//! opening's tables, 150 M positions, is 3.6 GB), to a temporary file renamed
//! over the last, so a kill leaves the last whole one; the build removes it
//! once the reply is stored, and all of them when the file is finished.
//!
//! A checkpoint is read only for the same reply (its position), the same proof
//! and the same memory budget (the table's capacity: another would thin it at
//! other times); its bytes are checked against the checksum at its end. Any
//! other file is ignored with a message, and the reply proven from its start.
//!
//! The file (docs/FORMAT.md §9.14), little-endian: the magic `TBQUBICPROOF2\0\0\0`; the reply's X
//! and O cells (u64 each); the proof (u32) and the table's capacity (u64); the
//! prover's expansions when the reply's proof began and now, its thinning
//! threshold, its thinnings (u64 each); the entries' count (u64) and each entry
//! (X cells, O cells: u64; proof and disproof numbers: u32; the work below it:
//! u16, [`Work::bits`]); then a checksum (u64) of every word before it. A file
//! of the magic `TBQUBICPROOF1` (before the table kept its work) has no work in
//! its entries: it is read with no work below any of them.

use super::prover::{Key, Prover, ProverState};
use super::table::{Numbers, Work};
use crate::store::checksum::mix;
use anyhow::{Context, Result, bail, ensure};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MAGIC: &[u8; 16] = b"TBQUBICPROOF2\0\0\0";

/// The magic of the checkpoints written before the table kept the work below
/// its entries (still read: a proof of days resumes across that change).
const MAGIC_WITHOUT_WORK: &[u8; 16] = b"TBQUBICPROOF1\0\0\0";

/// Time between two checkpoints of a reply's proof when the build does not say.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(600);

/// The checkpoint file of proof `proof` (0: the first) of reply `reply` of the
/// build whose file is `db`.
pub fn path(db: &Path, reply: u8, proof: u32) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(format!(".proof-{reply}"));
    if proof > 0 {
        name.push("-second");
    }
    PathBuf::from(name)
}

/// The temporary file a checkpoint at `path` is written to.
fn part(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

/// Removes the checkpoint at `path`, if any, and the temporary file of one
/// being written when the build was killed.
pub fn remove(path: &Path) -> Result<()> {
    for path in [path.to_path_buf(), part(path)] {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A reply's proof, checkpointed as it goes.
pub struct Checkpoint {
    path: PathBuf,
    /// The canonical position after the reply (X to move).
    reply: Key,
    proof: u32,
    every: Duration,
    /// When the last checkpoint was written (or the proof began).
    last: Instant,
}

impl Checkpoint {
    /// The checkpoints of proof `proof` of the reply whose position is `reply`,
    /// at `path`, one at most every `every`.
    pub fn new(path: PathBuf, reply: Key, proof: u32, every: Duration) -> Checkpoint {
        Checkpoint {
            path,
            reply,
            proof,
            every,
            last: Instant::now(),
        }
    }

    /// Restores `prover` from the checkpoint, if there is one for this reply
    /// and this prover's capacity: the prover's expansions when the reply's proof
    /// began. Else `None`, the prover untouched, or, where a file failed its
    /// checks once read into the table, with an empty table and its counters as
    /// they were. A file that cannot be used is said in `report` and left alone.
    pub fn resume(&mut self, prover: &mut Prover, report: &mut dyn FnMut(&str)) -> Option<u64> {
        if !self.path.exists() {
            return None;
        }
        let t = Instant::now();
        let before = prover.state();
        let mut touched = false;
        match self.read(prover, &mut touched) {
            Ok((state, began)) => {
                let positions = prover.table_len();
                report(&format!(
                    "resumed from the checkpoint {} ({} expansions into the proof, {positions} positions, read in {:.1} s)",
                    self.path.display(),
                    state.expansions - began,
                    t.elapsed().as_secs_f64()
                ));
                self.last = Instant::now();
                Some(began)
            }
            Err(e) => {
                // What was read is dropped: an empty table is a prover's start.
                if touched {
                    prover.restore(before, 0);
                }
                report(&format!(
                    "the checkpoint {} is not used ({e:#}): the proof begins again",
                    self.path.display()
                ));
                None
            }
        }
    }

    /// Between two slices of the proof (begun at `began` expansions): writes a
    /// checkpoint if the last is `every` old, saying so in `report`.
    pub fn after_slice(&mut self, prover: &Prover, began: u64, report: &mut dyn FnMut(&str)) {
        if self.last.elapsed() >= self.every {
            self.save(prover, began, report);
        }
    }

    /// Writes the checkpoint now, due or not (a proof stopped by the time
    /// limit: the next run goes on from where it stopped), and says so through
    /// `report`.
    pub fn save(&mut self, prover: &Prover, began: u64, report: &mut dyn FnMut(&str)) {
        let t = Instant::now();
        match self.write(prover, began) {
            Ok(()) => report(&format!(
                "checkpoint written ({} positions, {:.1} s)",
                prover.table_len(),
                t.elapsed().as_secs_f64()
            )),
            // A build goes on without its checkpoints (a full disk, say).
            Err(e) => report(&format!("no checkpoint written: {e:#}")),
        }
        self.last = Instant::now();
    }

    /// Writes the checkpoint: a temporary file, synced, renamed over the last
    /// (the temporary file removed if that fails).
    fn write(&self, prover: &Prover, began: u64) -> Result<()> {
        let part = part(&self.path);
        let written = self.write_to(&part, prover, began);
        if written.is_err() {
            let _ = std::fs::remove_file(&part);
        }
        written
    }

    /// [`Checkpoint::write`] through the temporary file `part`.
    fn write_to(&self, part: &Path, prover: &Prover, began: u64) -> Result<()> {
        let file =
            std::fs::File::create(part).with_context(|| format!("creating {}", part.display()))?;
        let mut out = Words::new(BufWriter::with_capacity(1 << 20, file));
        let state = prover.state();
        out.bytes(MAGIC)?;
        out.u64(self.reply.0)?;
        out.u64(self.reply.1)?;
        out.u32(self.proof)?;
        for word in [
            state.capacity as u64,
            began,
            state.expansions,
            state.thin_at as u64,
            state.thinnings,
            prover.table_len() as u64,
        ] {
            out.u64(word)?;
        }
        for ((x, o), n, work) in prover.entries() {
            out.u64(x)?;
            out.u64(o)?;
            out.u32(n.pn)?;
            out.u32(n.dn)?;
            out.u16(work.bits())?;
        }
        let sum = out.sum;
        out.u64(sum)?;
        let file = out.inner.into_inner().context("writing the checkpoint")?;
        file.sync_all()?;
        std::fs::rename(part, &self.path)
            .with_context(|| format!("renaming {} to {}", part.display(), self.path.display()))
    }

    /// Reads the checkpoint into `prover` (its table emptied first, once the
    /// header passes: then `touched`): the prover's state and its expansions
    /// when the reply's proof began. After an error with `touched` the prover
    /// holds part of the file: the caller empties it.
    fn read(&self, prover: &mut Prover, touched: &mut bool) -> Result<(ProverState, u64)> {
        let capacity = prover.state().capacity;
        let file = std::fs::File::open(&self.path)?;
        let size = file.metadata()?.len();
        let mut input = Words::new(BufReader::with_capacity(1 << 20, file));
        let mut magic = [0u8; 16];
        input.read_bytes(&mut magic)?;
        ensure!(
            &magic == MAGIC || &magic == MAGIC_WITHOUT_WORK,
            "not a checkpoint of a Qubic proof"
        );
        let with_work = &magic == MAGIC;
        let reply = (input.read_u64()?, input.read_u64()?);
        ensure!(reply == self.reply, "of another position");
        let proof = input.read_u32()?;
        ensure!(proof == self.proof, "of another proof");
        let saved_capacity = input.read_u64()?;
        ensure!(
            saved_capacity == capacity as u64,
            "of a table of {saved_capacity} positions, this build's holds {capacity} (another --memory)"
        );
        let began = input.read_u64()?;
        let expansions = input.read_u64()?;
        let thin_at = input.read_u64()?;
        let thinnings = input.read_u64()?;
        let count = input.read_u64()?;
        // The header is 84 bytes, each entry 26 (24 without work), the
        // checksum 8.
        let entry_bytes = if with_work { 26 } else { 24 };
        ensure!(
            count
                .checked_mul(entry_bytes)
                .and_then(|b| b.checked_add(92))
                == Some(size),
            "{size} bytes for {count} positions"
        );
        ensure!(began <= expansions, "its proof began after it was written");
        let state = ProverState {
            capacity,
            expansions,
            thin_at: thin_at as usize,
            thinnings,
        };
        *touched = true;
        prover.restore(state, count as usize);
        for _ in 0..count {
            let key = (input.read_u64()?, input.read_u64()?);
            // (No position has a cell both X's and O's; the table's empty slot does.)
            ensure!(key.0 & key.1 == 0, "an entry with a cell both X's and O's");
            let numbers = Numbers {
                pn: input.read_u32()?,
                dn: input.read_u32()?,
            };
            let work = if with_work {
                Work::from_bits(input.read_u16()?)
            } else {
                Work::default()
            };
            prover.insert_entry(key, numbers, work);
        }
        let sum = input.sum;
        if input.read_u64()? != sum {
            bail!("its checksum does not match its bytes");
        }
        Ok((state, began))
    }
}

/// Little-endian words to or from a stream, each folded into a checksum.
struct Words<T> {
    inner: T,
    sum: u64,
}

impl<T> Words<T> {
    fn new(inner: T) -> Words<T> {
        Words { inner, sum: 0 }
    }

    fn fold(&mut self, word: u64) {
        self.sum = mix(self.sum ^ word);
    }
}

impl<W: Write> Words<W> {
    fn bytes(&mut self, bytes: &[u8]) -> Result<()> {
        for &b in bytes {
            self.fold(b.into());
        }
        Ok(self.inner.write_all(bytes)?)
    }

    fn u64(&mut self, word: u64) -> Result<()> {
        self.fold(word);
        Ok(self.inner.write_all(&word.to_le_bytes())?)
    }

    fn u32(&mut self, word: u32) -> Result<()> {
        self.fold(word.into());
        Ok(self.inner.write_all(&word.to_le_bytes())?)
    }

    fn u16(&mut self, word: u16) -> Result<()> {
        self.fold(word.into());
        Ok(self.inner.write_all(&word.to_le_bytes())?)
    }
}

impl<R: Read> Words<R> {
    fn read_bytes(&mut self, out: &mut [u8]) -> Result<()> {
        self.inner.read_exact(out).context("the file ends early")?;
        for &b in out.iter() {
            self.fold(b.into());
        }
        Ok(())
    }

    /// An integer of `N` bytes (zero-extended, as the writer folds it).
    fn read_word<const N: usize>(&mut self) -> Result<u64> {
        let mut bytes = [0u8; 8];
        self.inner
            .read_exact(&mut bytes[..N])
            .context("the file ends early")?;
        let word = u64::from_le_bytes(bytes);
        self.fold(word);
        Ok(word)
    }

    fn read_u64(&mut self) -> Result<u64> {
        self.read_word::<8>()
    }

    fn read_u32(&mut self) -> Result<u32> {
        Ok(self.read_word::<4>()? as u32)
    }

    fn read_u16(&mut self) -> Result<u16> {
        Ok(self.read_word::<2>()? as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply the tests' checkpoints are of.
    const REPLY: Key = (1 << 3, 1 << 9);

    /// A prover with a few entries of every kind, some with work below them.
    fn prover_with_entries() -> Prover {
        let mut prover = Prover::new(1 << 20);
        let entries = [
            ((1, 2), Numbers::PROVEN, Work::of(70_000)),
            ((4, 8), Numbers::DISPROVEN, Work::default()),
            ((16, 32), Numbers { pn: 3, dn: 9 }, Work::of(12)),
            ((64, 128), Numbers::UNKNOWN, Work::of(1 << 33)),
        ];
        for (key, numbers, work) in entries {
            prover.insert_entry(key, numbers, work);
        }
        prover
    }

    fn sorted(prover: &Prover) -> Vec<(Key, u32, u32, Work)> {
        let mut all: Vec<_> = prover
            .entries()
            .map(|(k, n, w)| (k, n.pn, n.dn, w))
            .collect();
        all.sort();
        all
    }

    /// A checkpoint gives back the table's entries with the work below each.
    #[test]
    fn a_checkpoint_keeps_the_work_below_its_entries() {
        let (dir, reply, prover) = (tempfile::tempdir().unwrap(), REPLY, prover_with_entries());
        let path = dir.path().join("t.tb.proof-3");
        let mut checkpoint = Checkpoint::new(path.clone(), reply, 0, Duration::ZERO);
        checkpoint.save(&prover, 0, &mut |_| {});
        let mut back = Prover::new(1 << 20);
        let mut lines = Vec::new();
        let mut checkpoint = Checkpoint::new(path, reply, 0, Duration::ZERO);
        assert_eq!(
            checkpoint.resume(&mut back, &mut |l| lines.push(l.to_string())),
            Some(0),
            "{lines:?}"
        );
        assert_eq!(sorted(&back), sorted(&prover));
    }

    /// A checkpoint written before the table kept its work (`TBQUBICPROOF1`,
    /// 24-byte entries) is still read, with no work below any entry; one with
    /// its length wrong for that layout is not.
    #[test]
    fn a_checkpoint_without_work_is_still_read() {
        let (dir, reply, prover) = (tempfile::tempdir().unwrap(), REPLY, prover_with_entries());
        let path = dir.path().join("t.tb.proof-3");
        let write = |extra: bool| {
            let file = std::fs::File::create(&path).unwrap();
            let mut out = Words::new(BufWriter::new(file));
            out.bytes(MAGIC_WITHOUT_WORK).unwrap();
            out.u64(reply.0).unwrap();
            out.u64(reply.1).unwrap();
            out.u32(0).unwrap();
            let state = prover.state();
            for word in [
                state.capacity as u64,
                0,
                state.expansions,
                state.thin_at as u64,
                state.thinnings,
                prover.table_len() as u64,
            ] {
                out.u64(word).unwrap();
            }
            for ((x, o), n, _) in prover.entries() {
                for word in [x, o] {
                    out.u64(word).unwrap();
                }
                out.u32(n.pn).unwrap();
                out.u32(n.dn).unwrap();
                if extra {
                    out.u16(0).unwrap();
                }
            }
            let sum = out.sum;
            out.u64(sum).unwrap();
            out.inner.into_inner().unwrap().sync_all().unwrap();
        };
        write(false);
        let mut back = Prover::new(1 << 20);
        let mut checkpoint = Checkpoint::new(path.clone(), reply, 0, Duration::ZERO);
        assert_eq!(checkpoint.resume(&mut back, &mut |_| {}), Some(0));
        let without_work: Vec<_> = sorted(&prover)
            .into_iter()
            .map(|(k, pn, dn, _)| (k, pn, dn, Work::default()))
            .collect();
        assert_eq!(sorted(&back), without_work);
        // The old magic with the new entries' length: refused.
        write(true);
        let mut lines = Vec::new();
        let mut back = Prover::new(1 << 20);
        assert_eq!(
            checkpoint.resume(&mut back, &mut |l| lines.push(l.to_string())),
            None
        );
        assert!(lines[0].contains("bytes for 4 positions"), "{lines:?}");
    }
}
