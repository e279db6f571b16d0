//! Strategies proven by other builds, given to a build (`tb build qubic --known
//! FILE`): a proof too big for one run is split into smaller ones (X's move in a
//! hard position, then one build from the position after it, each O reply a
//! block of its own), and the finished pieces are used by the build of the whole.
//! Each file is checked by the independent walk of `tb verify` when it is read,
//! so a forged or damaged file is refused, not believed; the prover then takes
//! every strategic position of the files as won (no search below it), and the
//! strategy read off the proof plays the files' moves there. The file built is
//! self-contained: it stores those positions as its own.

use super::report;
use super::stored::StrategyFile;
use super::threats::PositionMap;
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::sync::Arc;

/// The strategic positions (canonical, X to move) of checked strategy files,
/// each with X's move there.
#[derive(Default)]
pub struct Known {
    moves: PositionMap<u8>,
}

/// What [`Known::load`] read from one file.
#[derive(Debug, Clone)]
pub struct KnownFile {
    /// The file.
    pub path: PathBuf,
    /// Its start (O to move), 64 characters.
    pub start: String,
    /// Its strategic positions.
    pub positions: usize,
    /// Strategic positions the check walked.
    pub checked: u64,
    /// Seconds of the check.
    pub seconds: f64,
}

impl Known {
    /// Reads finished strategy files, each checked whole by the independent
    /// walk (`tb verify`'s): an error names the first file that is not a
    /// complete, sound strategy. A position in several files keeps the first
    /// file's move (each file's is a winning one).
    pub fn load(paths: &[PathBuf]) -> Result<(Known, Vec<KnownFile>)> {
        let mut known = Known::default();
        let mut read = Vec::new();
        for path in paths {
            let file = StrategyFile::open(path)?;
            let check = report::verify(&file);
            if !check.ok() {
                bail!(
                    "{}: the strategy has {} gaps ({}): not used as known",
                    path.display(),
                    check.gaps,
                    check.examples.join("; ")
                );
            }
            for (&key, record) in &file.records {
                known.moves.entry(key).or_insert(record.cell);
            }
            read.push(KnownFile {
                path: path.clone(),
                start: file.start.to_string(),
                positions: file.records.len(),
                checked: check.strategic,
                seconds: check.seconds,
            });
        }
        Ok((known, read))
    }

    /// The positions with X's move in each, for the provers
    /// ([`super::prover::Prover::set_known`]); `None` when there are none.
    pub fn moves(self) -> Option<Arc<PositionMap<u8>>> {
        (!self.moves.is_empty()).then(|| Arc::new(self.moves))
    }
}
