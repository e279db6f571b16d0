//! Building the Morris tables through the generic scheduler: layer = a pair of
//! tables {(a, b), (b, a)} (a <= b), one block holding both (they are solved
//! together: non-capturing moves cycle between them), built in order of total
//! stones so that the tables captures lead to are stored first. Every table is kept.

use super::index::{MIN_STONES, Table, class_count};
use super::solve::solve_pair_counting;
pub use super::spec::{MorrisSpec, layer_pair, pair_label, pair_layer};
use crate::retro::build::{Builder, RunOptions, RunSummary};
use crate::retro::progress::Progress;
use crate::retro::{BlockId, BlockKey, Game};
use crate::store::checksum::digest_element;
use crate::store::codec::{ChunkCoding, Neighbours};
use crate::units::human_bytes;
use anyhow::{Context, Result, bail, ensure};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

/// Morris as the scheduler sees it.
pub struct MorrisGame {
    spec: MorrisSpec,
}

impl MorrisGame {
    /// The game for a spec (builds the table indices on first use).
    pub fn new(spec: MorrisSpec) -> MorrisGame {
        MorrisGame { spec }
    }
}

/// The table a position of (m, o) leads to by capturing, when it exists.
fn capture_pair(m: u8, o: u8) -> Option<(u8, u8)> {
    (o > MIN_STONES).then(|| ((o - 1).min(m), (o - 1).max(m)))
}

impl Game for MorrisGame {
    fn identity(&self) -> Vec<(&'static str, String)> {
        self.spec.to_meta()
    }

    fn layers(&self) -> Vec<usize> {
        self.spec
            .pairs()
            .into_iter()
            .map(|(a, b)| pair_layer(a, b))
            .collect()
    }

    fn layer_label(&self, layer: usize) -> String {
        let (a, b) = layer_pair(layer);
        let plural = if a == b { "" } else { "s" };
        format!("table{plural} {}", pair_label(layer))
    }

    fn blocks(&self, layer: usize) -> Vec<BlockKey> {
        let (a, b) = layer_pair(layer);
        vec![vec![a, b]]
    }

    fn block_size(&self, layer: usize, _key: &[u8]) -> u64 {
        let (a, b) = layer_pair(layer);
        MorrisSpec::pair_size(a, b)
    }

    fn reads(&self, layer: usize, _key: &[u8]) -> Vec<BlockId> {
        let (a, b) = layer_pair(layer);
        let mut pairs: Vec<(u8, u8)> = MorrisSpec::tables_of_pair(a, b)
            .into_iter()
            .filter_map(|(m, o)| capture_pair(m, o))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
            .into_iter()
            .map(|(x, y)| BlockId {
                layer: pair_layer(x, y),
                key: vec![x, y],
            })
            .collect()
    }

    fn compute(
        &self,
        layer: usize,
        key: &[u8],
        inputs: &[&[i8]],
        done: &AtomicU64,
    ) -> Result<Vec<i8>> {
        let (a, b) = layer_pair(layer);
        let reads = self.reads(layer, key);
        // The solver slices the pairs it reads by the index's sizes, the scheduler
        // sized the blocks by class counts: they must agree.
        for r in &reads {
            for (m, o) in MorrisSpec::tables_of_pair(r.key[0], r.key[1]) {
                ensure!(
                    Table::get(m, o)?.size() == class_count(m, o),
                    "table {m}-{o}: index size and class count differ"
                );
            }
        }
        // Table (m, o) of a lower pair: a slice of that pair's block.
        let lower = |m: u8, o: u8| -> &[u8] {
            let (x, y) = (m.min(o), m.max(o));
            let i = reads
                .iter()
                .position(|r| r.key == [x, y])
                .expect("captures lead to a pair this block reads");
            let block = as_u8(inputs[i]);
            let start = MorrisSpec::offset_in_pair(m, o).expect("valid table") as usize;
            let len = Table::get(m, o).expect("valid table").size() as usize;
            &block[start..start + len]
        };
        let (first, second) =
            solve_pair_counting(a, b, lower, done).with_context(|| format!("solving {a}-{b}"))?;
        // The store keeps bytes as i8; Morris bytes are 0..=255 codes. Huge pages: the
        // block stays cached for the pairs that look up captures in it at random.
        let mut values = crate::sys::huge_vec(first.len() + second.len());
        values.extend(first.iter().chain(&second).map(|&v| v as i8));
        Ok(values)
    }

    fn keeps(&self, _layer: usize) -> bool {
        true
    }

    fn digest(&self, layer: usize, _key: &[u8], first: u64, values: &[i8]) -> u64 {
        let (a, b) = layer_pair(layer);
        let mut digest = 0u64;
        let mut index = first;
        for (m, o) in MorrisSpec::tables_of_pair(a, b) {
            let table = Table::get(m, o).expect("valid table");
            let start = MorrisSpec::offset_in_pair(m, o).expect("valid table");
            let end = start + table.size();
            let upto = end.min(first + values.len() as u64);
            if index < upto {
                table.for_each_in_range(index - start..upto - start, |i, mover, opponent| {
                    // Table id above the two 24-bit sets: the same sets in two tables differ.
                    let key = u64::from(mover)
                        | u64::from(opponent) << 24
                        | (10 * m as u64 + o as u64) << 48;
                    let v = values[(start + i - first) as usize];
                    digest = digest.wrapping_add(digest_element(key, v));
                });
                index = upto;
            }
        }
        digest
    }

    fn chunk_positions(&self) -> u64 {
        self.spec.chunk_positions
    }

    /// Context mixing: 21-25% smaller than zstd on Morris values.
    fn chunk_coding(&self) -> ChunkCoding {
        ChunkCoding::Mix
    }

    fn chunk_neighbours(
        &self,
        layer: usize,
        _key: &[u8],
        first: u64,
        len: usize,
    ) -> Vec<Neighbours> {
        MorrisSpec::pair_neighbours(layer, first, len)
    }
}

/// Views stored `i8` values as Morris value bytes.
pub fn as_u8(values: &[i8]) -> &[u8] {
    crate::store::as_bytes(values)
}

/// How to run a Morris build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// What to build.
    pub spec: MorrisSpec,
    /// The SQLite file.
    pub db: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// Memory budget in bytes.
    pub memory: u64,
}

/// What a finished Morris build reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    /// `morris`.
    pub game: &'static str,
    /// Stones per side of the largest tables.
    pub stones: u8,
    /// What the scheduler reports.
    #[serde(flatten)]
    pub run: RunSummary,
}

impl BuildSummary {
    /// The final summary line.
    pub fn text(&self) -> String {
        format!(
            "built morris up to {} stones: {}",
            self.stones,
            self.run.text("table pairs")
        )
    }
}

/// Bytes per position of the pair being solved: value, move counter and best-exit
/// bytes, bucket entries (4 bytes), the result.
const WORK_BYTES_PER_POSITION: u64 = 9;

/// Memory a build needs: (the largest pair's working arrays, the largest working
/// arrays plus the pairs they read).
pub fn memory_needs(spec: &MorrisSpec) -> (u64, u64) {
    let game = MorrisGame::new(spec.clone());
    let (mut work, mut peak) = (0, 0);
    for layer in game.layers() {
        let own = WORK_BYTES_PER_POSITION * game.block_size(layer, &[]);
        let inputs: u64 = game
            .reads(layer, &[])
            .iter()
            .map(|r| game.block_size(r.layer, &r.key))
            .sum();
        work = work.max(own);
        peak = peak.max(own + inputs);
    }
    (work, peak)
}

/// Runs (or resumes) a Morris build.
pub fn build(opts: BuildOptions, progress: &mut dyn Progress) -> Result<BuildSummary> {
    let (work, peak) = memory_needs(&opts.spec);
    if peak > opts.memory {
        bail!(
            "the largest table pair needs about {} but --memory is {}; raise --memory or lower --stones",
            human_bytes(peak),
            human_bytes(opts.memory)
        );
    }
    let mut builder = Builder::open(&opts.db)?;
    let game = MorrisGame::new(opts.spec.clone());
    let run = builder.run(
        &game,
        RunOptions {
            threads: opts.threads,
            // What the largest pair's working arrays leave: finished pairs stay in
            // memory for the pairs that read them.
            cache_bytes: opts.memory - work,
        },
        progress,
    )?;
    let summary = BuildSummary {
        game: "morris",
        stones: opts.spec.stones,
        run,
    };
    progress.finish(&summary.text());
    Ok(summary)
}
