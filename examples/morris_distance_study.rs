//! What a Morris file's archival chunks would weigh if a value's distance were
//! left out where a probe can recompute it one ply further (issue 46's Morris
//! size target). A win's distance is one more than the shortest loss among the
//! position's children (`W<p>`, p = 1 + min q over moves to an `L<q>`, 1 for a
//! move that wins at once), so a file that stores every loss and draw exactly
//! needs only the mark "won" for a won position. A loss's distance is likewise one
//! more than the longest win among its children (every move leads to a win for the
//! opponent; `L0` has no move), so the roles may be swapped: the study codes both
//! ways.
//!
//!   cargo run --release --example morris_distance_study -- FILE [EVERY]
//!
//! Files of format 5 (`tb recode --coding archive`) store the first way
//! (`MorrisSpec::marks_wins`); this study measured the choice on built files.
//!
//! Samples every EVERY-th stored chunk (default 16) of every block, decodes it
//! and codes it with the archival coder (the file's sites; a constant chunk in
//! two bytes) as
//! stored, with every win's byte replaced by one mark, with every loss's
//! replaced, and with both (win/draw/loss only: the floor of any distance
//! coding); prints bits/position per kind of layer.

use anyhow::{Result, bail};
use rayon::prelude::*;
use std::path::PathBuf;
use tb::games::morris::spec::{MorrisFormat, MorrisSpec, layer_hands, layer_sector};
use tb::games::morris::value::{WIN_MARK, mark_win};
use tb::retro::chunks::decode_chunk;
use tb::retro::{BlockId, Format};
use tb::store::codec::{self, ChunkCoding};
use tb::store::{Store, as_bytes, chunk_len};

/// The value byte every loss becomes (`L0`'s byte).
const LOSS_MARK: u8 = 1;

/// Coded bytes of one sampled chunk in each variant, and its value counts.
#[derive(Default, Clone, Copy)]
struct Sizes {
    positions: u64,
    wins: u64,
    losses: u64,
    bytes: [u64; 4],
}

impl Sizes {
    fn add(&mut self, other: &Sizes) {
        self.positions += other.positions;
        self.wins += other.wins;
        self.losses += other.losses;
        for (a, b) in self.bytes.iter_mut().zip(other.bytes) {
            *a += b;
        }
    }
}

const VARIANTS: [&str; 4] = ["as stored", "wins marked", "losses marked", "both (WDL)"];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().map(PathBuf::from) else {
        bail!("usage: morris_distance_study FILE [EVERY]");
    };
    let every: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(16);
    let store = Store::open_read(&path)?;
    let spec = MorrisSpec::from_meta(&store.meta()?)?;
    let board = spec.board();
    let format = MorrisFormat::new(spec.clone());
    let cp = format.chunk_positions();
    let mut kinds: Vec<(&str, Sizes)> = vec![
        ("moving", Sizes::default()),
        ("placement", Sizes::default()),
    ];
    for layer in format.layers() {
        let placement = layer_hands(layer).is_some() || layer_sector(layer).is_some();
        let mut layer_sizes = Sizes::default();
        for key in format.blocks(layer) {
            let size = format.block_size(layer, &key);
            let id = BlockId {
                layer,
                key: key.clone(),
            };
            let picks: Vec<u64> = (0..size.div_ceil(cp)).step_by(every as usize).collect();
            // SQLite reads on this thread, the coding on all.
            let stored = picks
                .iter()
                .map(|&c| store.stored_chunk(layer, &key, c).map(|chunk| (c, chunk)))
                .collect::<Result<Vec<_>>>()?;
            let sizes = stored
                .par_iter()
                .map(|(c, chunk)| -> Result<Sizes> {
                    let c = *c;
                    let (first, len) = (c * cp, chunk_len(size, cp, c) as usize);
                    let values = decode_chunk(&format, &id, first, len, chunk)?;
                    let bytes = as_bytes(&values).to_vec();
                    let sites = MorrisSpec::block_sites(board, layer, &key, first, len);
                    let is_win = |v: u8| mark_win(v) == WIN_MARK;
                    let is_loss = |v: u8| v % 2 == 1;
                    let marked = |wins: bool, losses: bool| -> Vec<u8> {
                        bytes
                            .iter()
                            .map(|&v| match v {
                                v if wins && is_win(v) => WIN_MARK,
                                v if losses && is_loss(v) => LOSS_MARK,
                                v => v,
                            })
                            .collect()
                    };
                    let variants = [
                        bytes.clone(),
                        marked(true, false),
                        marked(false, true),
                        marked(true, true),
                    ];
                    let mut out = Sizes {
                        positions: len as u64,
                        wins: bytes.iter().filter(|&&v| is_win(v)).count() as u64,
                        losses: bytes.iter().filter(|&&v| is_loss(v)).count() as u64,
                        ..Sizes::default()
                    };
                    for (slot, values) in out.bytes.iter_mut().zip(&variants) {
                        let coded =
                            codec::encode(values, ChunkCoding::Archive, || sites.clone().into())?;
                        *slot = coded.len() as u64;
                    }
                    Ok(out)
                })
                .collect::<Result<Vec<_>>>()?;
            for s in &sizes {
                layer_sizes.add(s);
            }
        }
        let bits = |b: u64| 8.0 * b as f64 / layer_sizes.positions.max(1) as f64;
        println!(
            "{:28} {:>11} sampled, wins {:5.1}%, losses {:5.1}%: {:.3} / {:.3} / {:.3} / {:.3} bits",
            format.layer_label(layer),
            layer_sizes.positions,
            100.0 * layer_sizes.wins as f64 / layer_sizes.positions.max(1) as f64,
            100.0 * layer_sizes.losses as f64 / layer_sizes.positions.max(1) as f64,
            bits(layer_sizes.bytes[0]),
            bits(layer_sizes.bytes[1]),
            bits(layer_sizes.bytes[2]),
            bits(layer_sizes.bytes[3]),
        );
        kinds[usize::from(placement)].1.add(&layer_sizes);
    }
    let mut all = Sizes::default();
    for (name, s) in &kinds {
        all.add(s);
        print_kind(name, s);
    }
    print_kind("all", &all);
    Ok(())
}

fn print_kind(name: &str, s: &Sizes) {
    let bits = |b: u64| 8.0 * b as f64 / s.positions.max(1) as f64;
    let cells: Vec<String> = VARIANTS
        .iter()
        .zip(s.bytes)
        .map(|(v, b)| format!("{v} {:.3}", bits(b)))
        .collect();
    println!(
        "{name}: {} positions sampled; {}",
        s.positions,
        cells.join(", ")
    );
}
