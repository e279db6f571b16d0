//! A file checked against its format's layout, which comes from the identity and not
//! from the file: [`check_layers`] (at every open: the layer rows readers rely on;
//! a Dots-and-Boxes tablebase checks [`check_layer_rows`] at open and each layer's
//! [`check_layer_size`] when it first reads the layer),
//! [`check_finished`] (before exporting: every layer there, none half built) and
//! [`Audit`] (`tb verify`: every block and chunk the layout implies is stored with
//! the right lengths and nothing else is, and the histograms, digests, position and
//! byte counts of blocks and layers are those of the values).

use super::chunks::{chunk_stats, load_block};
use super::format::{BlockId, Format};
use crate::store::checksum::digest_hex;
use crate::store::{BlockStats, LayerRow, LayerStatus, Store, counts_key, readable_layers};
use anyhow::{Result, bail};
use std::collections::{BTreeMap, BTreeSet};

/// Most problems an audit lists; past that they are only counted.
const LISTED: usize = 100;

/// Checks the layer rows every reader relies on: each is a layer of the format, a
/// readable one holds the positions the layout gives it, and only kept layers are
/// in the book. A file in the middle of its build passes.
pub fn check_layers(rows: &BTreeMap<usize, LayerRow>, format: &dyn Format) -> Result<()> {
    check_layer_rows(rows, format)?;
    rows.values()
        .filter(|row| row.status.readable())
        .try_for_each(|row| check_layer_size(row, format))
}

/// [`check_layers`] but for the sizes of the readable layers, which a reader that
/// opens a file for a few values checks with [`check_layer_size`] before it first
/// reads a layer (a layer's size needs the layout's tables for its block shapes).
pub fn check_layer_rows(rows: &BTreeMap<usize, LayerRow>, format: &dyn Format) -> Result<()> {
    let layers: BTreeSet<usize> = format.layers().into_iter().collect();
    for row in rows.values() {
        if !layers.contains(&row.n) {
            bail!(
                "the layers table names layer {}, which this tablebase has not",
                row.n
            );
        }
        let label = format.layer_label(row.n);
        if row.status == LayerStatus::Book && !format.keeps(row.n) {
            bail!("{label} is marked as kept in the book, which this tablebase does not keep");
        }
    }
    Ok(())
}

/// Checks that a layer row holds the positions the layout gives its layer.
pub fn check_layer_size(row: &LayerRow, format: &dyn Format) -> Result<()> {
    let size = format.layer_size(row.n);
    if row.positions != size {
        bail!(
            "{} claims {} positions, its layout has {size}",
            format.layer_label(row.n),
            row.positions
        );
    }
    Ok(())
}

/// Readies a store for reading a game's values: its layer rows, checked against
/// the layout ([`check_layers`]), and the format's value range and chunk codings
/// imposed on every chunk read from it.
pub fn prepare_read(store: &mut Store, format: &dyn Format) -> Result<BTreeMap<usize, LayerRow>> {
    let layers = prepare_read_rows(store, format)?;
    check_layers(&layers, format)?;
    Ok(layers)
}

/// [`prepare_read`] with the layer rows checked by [`check_layer_rows`] only: the
/// caller checks each layer's size ([`check_layer_size`]) before reading it.
pub fn prepare_read_rows(
    store: &mut Store,
    format: &dyn Format,
) -> Result<BTreeMap<usize, LayerRow>> {
    let layers = store.layers()?;
    check_layer_rows(&layers, format)?;
    store.chunk_rules().values = format.value_range();
    if let Some(family) = format.chunk_family() {
        store.chunk_rules().allow(family);
    }
    Ok(layers)
}

/// Checks that the build finished: every layer has its row, the kept ones in the
/// book, the others complete or pruned.
pub fn check_finished(rows: &BTreeMap<usize, LayerRow>, format: &dyn Format) -> Result<()> {
    for layer in format.layers() {
        let label = format.layer_label(layer);
        match rows.get(&layer).map(|r| r.status) {
            None => bail!("the file is not finished: {label} was never built"),
            Some(LayerStatus::Building) => {
                bail!("the file is not finished: {label} is still being built")
            }
            Some(status) if format.keeps(layer) && status != LayerStatus::Book => bail!(
                "{label} should be kept in the book, but the file says {}",
                status.as_str()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// "the stored digest does not match the values", for the fields in `wrong`.
fn mismatch(wrong: &[&str]) -> String {
    let verb = if wrong.len() == 1 { "does" } else { "do" };
    format!(
        "the stored {} {verb} not match the values",
        wrong.join(", ")
    )
}

/// Whether the histogram `found` is `expected`, with `expected`'s values mapped
/// by `fold` if given (counts of values that fold together added).
fn same_histogram(
    expected: &BTreeMap<i8, u64>,
    found: &BTreeMap<i8, u64>,
    fold: Option<fn(i8) -> i8>,
) -> bool {
    let Some(fold) = fold else {
        return expected == found;
    };
    let mut folded = BTreeMap::new();
    for (&value, &count) in expected {
        *folded.entry(fold(value)).or_default() += count;
    }
    folded == *found
}

/// Problems found: the first [`LISTED`] and how many in all.
#[derive(Default)]
struct Problems {
    listed: Vec<String>,
    count: u64,
}

impl Problems {
    fn add(&mut self, text: String) {
        self.count += 1;
        if self.listed.len() < LISTED {
            self.listed.push(text);
        }
    }
}

/// A running audit: the catalogue checked at [`Audit::new`], then each readable
/// block's values given to [`Audit::check_block`] (once), then [`Audit::finish`].
pub struct Audit<'g> {
    format: &'g dyn Format,
    layers: BTreeMap<usize, LayerRow>,
    blocks: BTreeMap<(i64, String), crate::store::BlockRow>,
    /// Coded bytes per block, summed over its chunk rows.
    bytes: BTreeMap<(i64, String), u64>,
    /// Totals of the blocks checked so far, per layer.
    totals: BTreeMap<usize, BlockStats>,
    /// Chunks whose values were checked.
    pub chunks: u64,
    /// Layers with blocks checked in a folded form ([`Audit::check_block_folded`]):
    /// their totals are compared folded, without the digest.
    folded: BTreeMap<usize, fn(i8) -> i8>,
    /// Blocks whose digest could not be checked (checked folded).
    unchecked_digests: u64,
    problems: Problems,
}

impl<'g> Audit<'g> {
    /// Reads the catalogue (layer, block and chunk rows, without values) and
    /// checks it against the layout.
    pub fn new(store: &Store, format: &'g dyn Format) -> Result<Audit<'g>> {
        let layers = store.layers()?;
        let blocks = store.block_rows()?;
        let mut problems = Problems::default();
        for check in [check_layers, check_finished] {
            if let Err(e) = check(&layers, format) {
                problems.add(format!("{e:#}"));
            }
        }
        let chunk_positions = format.chunk_positions();
        // Every block row belongs to a block of the layout with its sizes.
        let layout: BTreeMap<(i64, String), u64> = format
            .layers()
            .into_iter()
            .flat_map(|layer| {
                format.blocks(layer).into_iter().map(move |key| {
                    let size = format.block_size(layer, &key);
                    ((layer as i64, counts_key(&key)), size)
                })
            })
            .collect();
        for ((n, key), row) in &blocks {
            let Some(&size) = layout.get(&(*n, key.clone())) else {
                problems.add(format!(
                    "a block row names block {key:?} of layer {n}, which the layout has not"
                ));
                continue;
            };
            let chunks = size.div_ceil(chunk_positions);
            if row.positions != size as i64 || row.chunks != chunks as i64 {
                problems.add(format!(
                    "block {key} of {}: the row says {} positions in {} chunks, the layout {size} in {chunks}",
                    format.layer_label(*n as usize),
                    row.positions,
                    row.chunks
                ));
            }
        }
        // Every chunk row belongs to a readable layer's block, with its length.
        let readable: BTreeSet<i64> = readable_layers(&layers).map(|n| n as i64).collect();
        let mut bytes: BTreeMap<(i64, String), u64> = BTreeMap::new();
        for ((n, key, chunk), (raw_len, coded)) in store.chunk_rows()? {
            let expected = layout.get(&(n, key.clone())).and_then(|&size| {
                let c = u64::try_from(chunk).ok()?;
                (c < size.div_ceil(chunk_positions))
                    .then(|| crate::store::chunk_len(size, chunk_positions, c))
            });
            match expected {
                Some(len) if readable.contains(&n) => {
                    if raw_len != len as i64 {
                        problems.add(format!(
                            "chunk {chunk} of block {key} in layer {n} claims {raw_len} values, its block needs {len}"
                        ));
                    }
                    *bytes.entry((n, key)).or_default() += coded;
                }
                Some(_) => problems.add(format!(
                    "chunk {chunk} of block {key} in layer {n} is stored, but its layer is not readable (left over)"
                )),
                None => problems.add(format!(
                    "chunk {chunk} of block {key:?} in layer {n} is not a chunk of this tablebase"
                )),
            }
        }
        Ok(Audit {
            format,
            layers,
            blocks,
            bytes,
            totals: BTreeMap::new(),
            chunks: 0,
            folded: BTreeMap::new(),
            unchecked_digests: 0,
            problems,
        })
    }

    /// The blocks whose values must be checked: every block of a readable layer.
    pub fn readable_blocks(&self) -> Vec<BlockId> {
        let layers: BTreeSet<usize> = self.format.layers().into_iter().collect();
        readable_layers(&self.layers)
            .filter(|n| layers.contains(n))
            .flat_map(|layer| {
                self.format
                    .blocks(layer)
                    .into_iter()
                    .map(move |key| BlockId { layer, key })
            })
            .collect()
    }

    /// Checks one block's values (or the error reading them) against its row.
    pub fn check_block(&mut self, id: &BlockId, values: Result<&[i8], &anyhow::Error>) {
        self.check(id, values, None);
    }

    /// [`Audit::check_block`] of values read, or with `fold`, of a block as
    /// stored in a form that `fold` makes of the values its row describes (e.g.
    /// every win's byte one mark): its histogram folded the same way and its byte
    /// count, not its digest (which is of the values), for a check that reads the
    /// stored form only.
    pub fn check_block_folded(&mut self, id: &BlockId, stored: &[i8], fold: Option<fn(i8) -> i8>) {
        if let Some(fold) = fold {
            self.folded.insert(id.layer, fold);
            self.unchecked_digests += 1;
        }
        self.check(id, Ok(stored), fold);
    }

    fn check(
        &mut self,
        id: &BlockId,
        values: Result<&[i8], &anyhow::Error>,
        fold: Option<fn(i8) -> i8>,
    ) {
        let size = self.format.block_size(id.layer, &id.key);
        self.chunks += size.div_ceil(self.format.chunk_positions());
        let label = self.format.layer_label(id.layer);
        let values = match values {
            Ok(values) => values,
            Err(e) => return self.problems.add(format!("{e:#}")),
        };
        let place = (id.layer as i64, counts_key(&id.key));
        let mut stats = chunk_stats(self.format, id, 0, values);
        stats.bytes = self.bytes.get(&place).copied().unwrap_or(0);
        self.totals.entry(id.layer).or_default().merge(&stats);
        let key = &place.1;
        let Some(row) = self.blocks.get(&place) else {
            return self
                .problems
                .add(format!("block {key} of {label} has no row"));
        };
        let mut wrong = Vec::new();
        if !row
            .histogram
            .as_ref()
            .is_some_and(|h| same_histogram(h, &stats.histogram, fold))
        {
            wrong.push("histogram");
        }
        if fold.is_none() && row.digest != stats.digest {
            wrong.push("digest");
        }
        if row.bytes != stats.bytes as i64 {
            wrong.push("byte count");
        }
        if !wrong.is_empty() {
            self.problems
                .add(format!("block {key} of {label}: {}", mismatch(&wrong)));
        }
    }

    /// Compares each checked layer's totals with its row: what the audit found.
    pub fn finish(mut self) -> AuditReport {
        for (layer, stats) in &self.totals {
            let Some(row) = self.layers.get(layer) else {
                continue;
            };
            let fold = self.folded.get(layer).copied();
            let mut wrong = Vec::new();
            if row.positions != stats.positions {
                wrong.push("position count");
            }
            if !same_histogram(&row.histogram, &stats.histogram, fold) {
                wrong.push("histogram");
            }
            if fold.is_none() && row.digest.as_deref() != Some(digest_hex(stats.digest).as_str()) {
                wrong.push("digest");
            }
            if row.bytes != stats.bytes {
                wrong.push("byte count");
            }
            if !wrong.is_empty() {
                let label = self.format.layer_label(*layer);
                self.problems.add(format!("{label}: {}", mismatch(&wrong)));
            }
        }
        AuditReport {
            chunks: self.chunks,
            unchecked_digests: self.unchecked_digests,
            problems: self.problems.listed,
            problem_count: self.problems.count,
        }
    }
}

/// What an audit found.
#[derive(Debug, Clone, Default)]
pub struct AuditReport {
    /// Chunks whose values were checked.
    pub chunks: u64,
    /// Blocks checked in a folded form, without their digest.
    pub unchecked_digests: u64,
    /// Problems, one line each (at most `LISTED`).
    pub problems: Vec<String>,
    /// How many problems there were.
    pub problem_count: u64,
}

/// The whole audit, each readable block read once (decoded on all cores).
pub fn audit(store: &Store, format: &dyn Format) -> Result<AuditReport> {
    let mut audit = Audit::new(store, format)?;
    for id in audit.readable_blocks() {
        let values = load_block(store, format, &id);
        audit.check_block(&id, values.as_deref());
    }
    Ok(audit.finish())
}
