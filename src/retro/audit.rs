//! A file checked against its game's layout, which comes from the identity and not
//! from the file: [`check_layers`] (at every open: the layer rows readers rely on),
//! [`check_finished`] (before exporting: every layer there, none half built) and
//! [`Audit`] (`tb verify`: every block and chunk the layout implies is stored with
//! the right lengths and nothing else is, and the histograms, digests, position and
//! byte counts of blocks and layers are those of the values).

use super::build::load_block;
use super::{BlockId, Game};
use crate::store::checksum::digest_hex;
use crate::store::{BlockStats, LayerRow, LayerStatus, Store, counts_key};
use anyhow::{Result, bail};
use std::collections::{BTreeMap, BTreeSet};

/// Most problems an audit lists; past that they are only counted.
const LISTED: usize = 100;

/// Positions of a layer, from the layout.
fn layer_size(game: &dyn Game, layer: usize) -> u64 {
    game.blocks(layer)
        .iter()
        .map(|key| game.block_size(layer, key))
        .sum()
}

/// Checks the layer rows every reader relies on: each is a layer of the game, a
/// readable one holds the positions the layout gives it, and only kept layers are
/// in the book. A file in the middle of its build passes.
pub fn check_layers(rows: &BTreeMap<usize, LayerRow>, game: &dyn Game) -> Result<()> {
    let layers: BTreeSet<usize> = game.layers().into_iter().collect();
    for row in rows.values() {
        if !layers.contains(&row.n) {
            bail!(
                "the layers table names layer {}, which this tablebase has not",
                row.n
            );
        }
        let label = game.layer_label(row.n);
        if row.status == LayerStatus::Book && !game.keeps(row.n) {
            bail!("{label} is marked as kept in the book, which this tablebase does not keep");
        }
        if row.status.readable() && row.positions != layer_size(game, row.n) {
            bail!(
                "{label} claims {} positions, its layout has {}",
                row.positions,
                layer_size(game, row.n)
            );
        }
    }
    Ok(())
}

/// Checks that the build finished: every layer has its row, the kept ones in the
/// book, the others complete or pruned.
pub fn check_finished(rows: &BTreeMap<usize, LayerRow>, game: &dyn Game) -> Result<()> {
    for layer in game.layers() {
        let label = game.layer_label(layer);
        match rows.get(&layer).map(|r| r.status) {
            None => bail!("the file is not finished: {label} was never built"),
            Some(LayerStatus::Building) => {
                bail!("the file is not finished: {label} is still being built")
            }
            Some(status) if game.keeps(layer) && status != LayerStatus::Book => bail!(
                "{label} should be kept in the book, but the file says {}",
                status.as_str()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// The histogram and digest of `values`, the values of block `id` from index
/// `first` on (what the builder stores and the audit recomputes).
pub fn chunk_stats(game: &dyn Game, id: &BlockId, first: u64, values: &[i8]) -> BlockStats {
    let mut counts = [0u64; 256];
    for &v in values {
        counts[v as u8 as usize] += 1;
    }
    BlockStats {
        positions: values.len() as u64,
        histogram: (0..256)
            .filter(|&b| counts[b] > 0)
            .map(|b| (b as u8 as i8, counts[b]))
            .collect(),
        digest: game.digest(id.layer, &id.key, first, values),
        ..BlockStats::default()
    }
}

/// "the stored digest does not match the values", for the fields in `wrong`.
fn mismatch(wrong: &[&str]) -> String {
    let verb = if wrong.len() == 1 { "does" } else { "do" };
    format!(
        "the stored {} {verb} not match the values",
        wrong.join(", ")
    )
}

/// A running audit: the catalogue checked at [`Audit::new`], then each readable
/// block's values given to [`Audit::check_block`] (once), then [`Audit::finish`].
pub struct Audit<'g> {
    game: &'g dyn Game,
    layers: BTreeMap<usize, LayerRow>,
    blocks: BTreeMap<(i64, String), crate::store::BlockRow>,
    /// Coded bytes per block, summed over its chunk rows.
    bytes: BTreeMap<(i64, String), u64>,
    /// Totals of the blocks checked so far, per layer.
    totals: BTreeMap<usize, BlockStats>,
    /// Chunks whose values were checked.
    pub chunks: u64,
    problems: Vec<String>,
    problem_count: u64,
}

impl<'g> Audit<'g> {
    /// Reads the catalogue (layer, block and chunk rows, without values) and
    /// checks it against the layout.
    pub fn new(store: &Store, game: &'g dyn Game) -> Result<Audit<'g>> {
        let layers = store.layers()?;
        let mut audit = Audit {
            game,
            blocks: store.block_rows()?,
            bytes: BTreeMap::new(),
            totals: BTreeMap::new(),
            chunks: 0,
            problems: Vec::new(),
            problem_count: 0,
            layers,
        };
        for check in [check_layers, check_finished] {
            if let Err(e) = check(&audit.layers, game) {
                audit.problem(format!("{e:#}"));
            }
        }
        let chunk_positions = game.chunk_positions();
        // Every block row belongs to a block of the layout with its sizes.
        let layout: BTreeMap<(i64, String), u64> = game
            .layers()
            .into_iter()
            .flat_map(|layer| {
                game.blocks(layer).into_iter().map(move |key| {
                    let size = game.block_size(layer, &key);
                    ((layer as i64, counts_key(&key)), size)
                })
            })
            .collect();
        let rows: Vec<_> = audit
            .blocks
            .iter()
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        for ((n, key), row) in rows {
            let Some(&size) = layout.get(&(n, key.clone())) else {
                audit.problem(format!(
                    "a block row names block {key:?} of layer {n}, which the layout has not"
                ));
                continue;
            };
            let chunks = size.div_ceil(chunk_positions);
            if row.positions != size as i64 || row.chunks != chunks as i64 {
                audit.problem(format!(
                    "block {key} of {}: the row says {} positions in {} chunks, the layout {size} in {chunks}",
                    game.layer_label(n as usize),
                    row.positions,
                    row.chunks
                ));
            }
        }
        // Every chunk row belongs to a readable layer's block, with its length.
        let readable: BTreeSet<i64> = audit
            .layers
            .values()
            .filter(|r| r.status.readable())
            .map(|r| r.n as i64)
            .collect();
        for ((n, key, chunk), (raw_len, bytes)) in store.chunk_rows()? {
            let expected = layout.get(&(n, key.clone())).and_then(|&size| {
                let c = u64::try_from(chunk).ok()?;
                (c < size.div_ceil(chunk_positions))
                    .then(|| crate::store::chunk_len(size, chunk_positions, c))
            });
            match expected {
                Some(len) if readable.contains(&n) => {
                    if raw_len != len as i64 {
                        audit.problem(format!(
                            "chunk {chunk} of block {key} in layer {n} claims {raw_len} values, its block needs {len}"
                        ));
                    }
                    *audit.bytes.entry((n, key)).or_default() += bytes;
                }
                Some(_) => audit.problem(format!(
                    "chunk {chunk} of block {key} in layer {n} is stored, but its layer is not readable (left over)"
                )),
                None => audit.problem(format!(
                    "chunk {chunk} of block {key:?} in layer {n} is not a chunk of this tablebase"
                )),
            }
        }
        Ok(audit)
    }

    /// The blocks whose values must be checked: every block of a readable layer.
    pub fn readable_blocks(&self) -> Vec<BlockId> {
        self.layers
            .values()
            .filter(|r| r.status.readable() && self.game.layers().contains(&r.n))
            .flat_map(|r| {
                self.game
                    .blocks(r.n)
                    .into_iter()
                    .map(move |key| BlockId { layer: r.n, key })
            })
            .collect()
    }

    /// Checks one block's values (or the error reading them) against its row.
    pub fn check_block(&mut self, id: &BlockId, values: Result<&[i8], &anyhow::Error>) {
        let size = self.game.block_size(id.layer, &id.key);
        self.chunks += size.div_ceil(self.game.chunk_positions());
        let key = counts_key(&id.key);
        let label = self.game.layer_label(id.layer);
        let values = match values {
            Ok(values) => values,
            Err(e) => return self.problem(format!("{e:#}")),
        };
        let mut stats = chunk_stats(self.game, id, 0, values);
        stats.bytes = self
            .bytes
            .get(&(id.layer as i64, key.clone()))
            .copied()
            .unwrap_or(0);
        self.totals.entry(id.layer).or_default().merge(&stats);
        let Some(row) = self.blocks.get(&(id.layer as i64, key.clone())) else {
            return self.problem(format!("block {key} of {label} has no row"));
        };
        let mut wrong = Vec::new();
        if row.histogram.as_ref() != Some(&stats.histogram) {
            wrong.push("histogram");
        }
        if row.digest != stats.digest {
            wrong.push("digest");
        }
        if row.bytes != stats.bytes as i64 {
            wrong.push("byte count");
        }
        if !wrong.is_empty() {
            self.problem(format!("block {key} of {label}: {}", mismatch(&wrong)));
        }
    }

    /// Compares each checked layer's totals with its row: what the audit found.
    pub fn finish(mut self) -> AuditReport {
        let totals = std::mem::take(&mut self.totals);
        for (layer, stats) in totals {
            let Some(row) = self.layers.get(&layer).cloned() else {
                continue;
            };
            let mut wrong = Vec::new();
            if row.positions != stats.positions {
                wrong.push("position count");
            }
            if row.histogram != stats.histogram {
                wrong.push("histogram");
            }
            if row.digest.as_deref() != Some(digest_hex(stats.digest).as_str()) {
                wrong.push("digest");
            }
            if row.bytes != stats.bytes {
                wrong.push("byte count");
            }
            if !wrong.is_empty() {
                let label = self.game.layer_label(layer);
                self.problem(format!("{label}: {}", mismatch(&wrong)));
            }
        }
        AuditReport {
            chunks: self.chunks,
            problems: self.problems,
            problem_count: self.problem_count,
        }
    }

    fn problem(&mut self, text: String) {
        self.problem_count += 1;
        if self.problems.len() < LISTED {
            self.problems.push(text);
        }
    }
}

/// What an audit found.
#[derive(Debug, Clone, Default)]
pub struct AuditReport {
    /// Chunks whose values were checked.
    pub chunks: u64,
    /// Problems, one line each (at most [`LISTED`]).
    pub problems: Vec<String>,
    /// How many problems there were.
    pub problem_count: u64,
}

/// The whole audit, each readable block read once (decoded on all cores).
pub fn audit(store: &Store, game: &dyn Game) -> Result<AuditReport> {
    let mut audit = Audit::new(store, game)?;
    for id in audit.readable_blocks() {
        let values = load_block(store, game, &id);
        audit.check_block(&id, values.as_deref());
    }
    Ok(audit.finish())
}
