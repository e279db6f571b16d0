//! Building the Morris tables through the generic scheduler: layer = a pair of
//! tables {(a, b), (b, a)} (a <= b), one block holding both (they are solved
//! together: non-capturing moves cycle between them), built in order of total
//! stones so that the tables captures lead to are stored first. Then, for a file of
//! both phases, the placement layers by stones in hand, 1 up to the empty board's
//! 2N, one block per table (m, o) of stones on the board ([`super::placement`]).
//! Every table is kept.

use super::index::{class_count_on, table_size};
use super::placement::{child_tables, solve_placement_table};
use super::sector::Sector;
use super::solve::{solve_pair_counting, solve_sector_pair};
pub use super::spec::{
    DEFAULT_CHUNK_POSITIONS, MorrisSpec, Phase, layer_hands, layer_pair, layer_sector, pair_label,
    pair_layer, placement_label, placement_layer, sector_layer,
};
use super::spec::{FORMAT_VERSION, MorrisFormat, format_version};
use super::variant::Rules;
use crate::retro::build::{Builder, RunOptions, RunSummary, built_blocks};
use crate::retro::progress::Progress;
use crate::retro::recode::RecodeSummary;
use crate::retro::{BlockId, Format, Kernel};
use crate::store::Store;
use crate::store::codec::{FAMILY_KEY, Family};
use crate::units::human_bytes;
use anyhow::{Context, Result, bail, ensure};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

/// Morris as the scheduler builds it: the blocks of its [`MorrisFormat`], a pair
/// read from the pairs its captures lead to and solved with [`solve_pair_counting`],
/// a placement table from the tables its placements lead to.
pub struct MorrisKernel {
    format: MorrisFormat,
}

impl MorrisKernel {
    /// The kernel for a spec (builds the table indices on first use).
    pub fn new(spec: MorrisSpec) -> MorrisKernel {
        MorrisKernel {
            format: MorrisFormat::new(spec),
        }
    }
}

impl Kernel for MorrisKernel {
    fn format(&self) -> &dyn Format {
        &self.format
    }

    fn reads(&self, layer: usize, key: &[u8]) -> Vec<BlockId> {
        if let Some(sector) = layer_sector(layer) {
            return sector
                .exit_pairs()
                .into_iter()
                .map(|s| BlockId {
                    layer: sector_layer(s),
                    key: vec![s.m, s.o, s.hm, s.ho],
                })
                .collect();
        }
        if let Some(h) = layer_hands(layer) {
            return child_tables(h, key[0], key[1])
                .into_iter()
                .map(|(m, o)| child_block(h - 1, m, o))
                .collect();
        }
        let (a, b) = layer_pair(layer);
        MorrisSpec::capture_pairs(a, b)
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
        let spec = self.format.spec();
        let (rules, board) = (spec.rules, spec.board());
        if let Some(sector) = layer_sector(layer) {
            return self.compute_sectors(sector, layer, key, inputs, done);
        }
        if let Some(h) = layer_hands(layer) {
            let (m, o) = (key[0], key[1]);
            let children = child_tables(h, m, o);
            // Child table (m', o'): the block it is, or its slice of a pair's block.
            let child = |cm: u8, co: u8| -> &[u8] {
                let i = children
                    .iter()
                    .position(|&t| t == (cm, co))
                    .expect("a child table this block reads");
                let block = as_u8(inputs[i]);
                if h > 1 {
                    return block;
                }
                let start =
                    MorrisSpec::offset_in_pair(board, cm, co).expect("valid table") as usize;
                let len = table_size(board, cm, co).expect("valid table") as usize;
                &block[start..start + len]
            };
            let values = solve_placement_table(rules, h, m, o, child, done)
                .with_context(|| format!("solving table {m}-{o} with {h} in hand"))?;
            // SAFETY: i8 has the size, alignment and bit validity of u8 (the store
            // keeps bytes as i8); no copy keeps the huge pages.
            return Ok(unsafe { crate::sys::reinterpret(values) });
        }
        let (a, b) = layer_pair(layer);
        let reads = self.reads(layer, key);
        // The solver slices the pairs it reads by the index's sizes, the scheduler
        // sized the blocks by class counts: they must agree.
        for r in &reads {
            for (m, o) in MorrisSpec::tables_of_pair(r.key[0], r.key[1]) {
                ensure!(
                    table_size(board, m, o)? == class_count_on(board, m, o),
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
            let start = MorrisSpec::offset_in_pair(board, m, o).expect("valid table") as usize;
            let len = table_size(board, m, o).expect("valid table") as usize;
            &block[start..start + len]
        };
        let (first, second) = solve_pair_counting(rules, a, b, lower, done)
            .with_context(|| format!("solving {a}-{b}"))?;
        // The store keeps bytes as i8; Morris bytes are 0..=255 codes. Huge pages: the
        // block stays cached for the pairs that look up captures in it at random.
        let mut values = crate::sys::huge_vec(first.len() + second.len());
        values.extend(first.iter().chain(&second).map(|&v| v as i8));
        Ok(values)
    }
}

impl MorrisKernel {
    /// The values of the sector pair of `sector` (layer `layer`, block `key`) from
    /// the sector pairs its moves leave it for (`inputs`, as [`Kernel::reads`]
    /// lists them).
    fn compute_sectors(
        &self,
        sector: Sector,
        layer: usize,
        key: &[u8],
        inputs: &[&[i8]],
        done: &AtomicU64,
    ) -> Result<Vec<i8>> {
        let spec = self.format.spec();
        let board = spec.board();
        let reads = self.reads(layer, key);
        // An exit sector: its slice of its pair's block.
        let exits = |s: Sector| -> &[u8] {
            let first = s.canonical();
            let i = reads
                .iter()
                .position(|r| r.key == [first.m, first.o, first.hm, first.ho])
                .expect("an exit pair this block reads");
            let start = MorrisSpec::offset_in_sector_pair(board, s).expect("valid table") as usize;
            let len = table_size(board, s.m, s.o).expect("valid table") as usize;
            &as_u8(inputs[i])[start..start + len]
        };
        let (first, second) = solve_sector_pair(spec.rules, sector, exits, done)
            .with_context(|| format!("solving sectors {}", pair_label(layer)))?;
        let mut values = crate::sys::huge_vec(first.len() + second.len());
        values.extend(first.iter().chain(&second).map(|&v| v as i8));
        Ok(values)
    }
}

/// The block holding child table (m, o) of the layer with `h` in hand: a placement
/// table, or at `h = 0` the moving-phase pair holding it.
fn child_block(h: u8, m: u8, o: u8) -> BlockId {
    if h == 0 {
        BlockId {
            layer: pair_layer(m, o),
            key: vec![m.min(o), m.max(o)],
        }
    } else {
        BlockId {
            layer: placement_layer(h),
            key: vec![m, o],
        }
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
    /// The rule set (`nine`, `six`).
    pub rules: &'static str,
    /// Stones per side of the largest tables.
    pub stones: u8,
    /// What the scheduler reports.
    #[serde(flatten)]
    pub run: RunSummary,
}

impl BuildSummary {
    /// The final summary line.
    pub fn text(&self) -> String {
        let rules = match self.rules {
            "nine" => String::new(),
            other => format!(" ({other} rules)"),
        };
        format!(
            "built morris{rules} up to {} stones: {}",
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
    memory_needs_of(spec, |_, _| true)
}

/// [`memory_needs`] over the blocks for which `left(layer, key)` holds: a resumed
/// build needs only what its blocks still to build need.
fn memory_needs_of(spec: &MorrisSpec, left: impl Fn(usize, &[u8]) -> bool) -> (u64, u64) {
    let kernel = MorrisKernel::new(spec.clone());
    let game = kernel.format();
    let (mut work, mut peak) = (0, 0);
    for layer in game.layers() {
        for key in game.blocks(layer) {
            if !left(layer, &key) {
                continue;
            }
            // A placement table needs its values only, a pair its working arrays.
            let per_position = if layer_hands(layer).is_some() {
                1
            } else {
                WORK_BYTES_PER_POSITION
            };
            let own = per_position * game.block_size(layer, &key);
            let inputs: u64 = kernel
                .reads(layer, &key)
                .iter()
                .map(|r| game.block_size(r.layer, &r.key))
                .sum();
            work = work.max(own);
            peak = peak.max(own + inputs);
        }
    }
    (work, peak)
}

/// Memory for the pair being solved and the blocks kept when `--memory` is not
/// given (capped by the machine's: [`crate::sys::default_memory`]).
pub const DEFAULT_MEMORY: u64 = 16 << 30;

/// Positions per chunk for a build of `db` without `--chunk`: the file's own when
/// it exists (a resumed build keeps it), else [`DEFAULT_CHUNK_POSITIONS`].
pub fn chunk_for(db: &Path) -> u64 {
    db.exists()
        .then(|| Store::meta_of(db).ok())
        .flatten()
        .and_then(|meta| meta.get("chunk_positions")?.parse().ok())
        .unwrap_or(DEFAULT_CHUNK_POSITIONS)
}

/// The spec to build into an existing file: the one asked for, carried over to
/// the file when only these differ:
/// * its `phase` is `moving` and the build adds the placement tables: the phase
///   becomes `all` (the moving tables are kept, the placement tables added);
/// * its format is a legacy one that may hold the chunks this tb writes: 3 stays 3,
///   and 2 (context-mixing chunks without a checksum of their coded bytes) becomes 3,
///   whose readers read both kinds of chunk (the old ones whole), so that a build
///   begun by an older tb resumes and the file stays readable by it.
///
/// Any other difference is left for the builder to refuse (the file unchanged).
fn adopt_older_file(builder: &mut Builder, spec: &MorrisSpec) -> Result<MorrisSpec> {
    let meta = builder.store().meta()?;
    let format = format_version(&meta).ok();
    let phase = meta.get("phase").map(String::as_str);
    let others_match = spec
        .to_meta()
        .iter()
        .filter(|(key, _)| !matches!(*key, "phase" | "format_version" | FAMILY_KEY))
        .all(|(key, value)| meta.get(*key) == Some(value));
    let phase_ok = phase == Some(spec.phase.as_str())
        || (spec.phase == Phase::All && phase == Some(Phase::Moving.as_str()));
    let packed_format = match format {
        Some(2 | 3) => true,
        Some(FORMAT_VERSION)
            if meta.get(FAMILY_KEY).map(String::as_str) == Some(spec.codings.name()) =>
        {
            false
        }
        _ => return Ok(spec.clone()),
    };
    if !(others_match && phase_ok) {
        return Ok(spec.clone());
    }
    let adopted = MorrisSpec {
        packed_format,
        ..spec.clone()
    };
    builder.set_meta(&[
        ("phase", adopted.phase.as_str().to_string()),
        ("format_version", adopted.format_version().to_string()),
    ])?;
    Ok(adopted)
}

/// Refuses to build `rules` into an existing Morris file of other rules, naming
/// both (the generic check only says that the `rules` texts differ).
fn refuse_other_rules(db: &Path, rules: Rules) -> Result<()> {
    let Some(meta) = db.exists().then(|| Store::meta_of(db).ok()).flatten() else {
        return Ok(());
    };
    let Some(text) = meta
        .get("rules")
        .filter(|_| meta.get("game").map(String::as_str) == Some("morris"))
    else {
        return Ok(());
    };
    match Rules::from_meta(text) {
        Ok(theirs) if theirs == rules => Ok(()),
        Ok(theirs) => bail!(
            "{} holds Morris with the {theirs} rules, and this build asks for {rules}: rerun with --rules {theirs} to resume it, or use another --db",
            db.display()
        ),
        Err(e) => Err(e.context(db.display().to_string())),
    }
}

/// Refuses a build whose blocks not yet `done` need more than `memory`, else returns
/// the largest working arrays among them.
fn check_memory(spec: &MorrisSpec, memory: u64, done: &HashSet<BlockId>) -> Result<u64> {
    let (work, peak) = memory_needs_of(spec, |layer, key| {
        !done.contains(&BlockId {
            layer,
            key: key.to_vec(),
        })
    });
    if peak > memory {
        bail!(
            "the largest table pair{} needs about {} but --memory is {}; raise --memory or lower --stones",
            if done.is_empty() {
                ""
            } else {
                " left to build"
            },
            human_bytes(peak),
            human_bytes(memory)
        );
    }
    Ok(work)
}

/// Runs (or resumes) a Morris build.
pub fn build(opts: BuildOptions, progress: &mut dyn Progress) -> Result<BuildSummary> {
    // Checked before the file is opened to build (which may write to it, a refused
    // build must not). A resumed build is held to what its blocks still to build
    // need, so a file half built with more memory goes on with less; a file that
    // cannot be read here is held to the whole build (opening it says what is wrong).
    let done = if opts.db.exists() {
        Store::open_read(&opts.db)
            .and_then(|store| built_blocks(&store, &MorrisFormat::new(opts.spec.clone())))
            .unwrap_or_default()
    } else {
        HashSet::new()
    };
    let work = check_memory(&opts.spec, opts.memory, &done)?;
    refuse_other_rules(&opts.db, opts.spec.rules)?;
    let mut builder = Builder::open(&opts.db, opts.spec.chunk_positions)?;
    let spec = adopt_older_file(&mut builder, &opts.spec)?;
    let kernel = MorrisKernel::new(spec);
    let run = builder.run(
        &kernel,
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
        rules: opts.spec.rules.name(),
        stones: opts.spec.stones,
        run,
    };
    progress.finish(&summary.text());
    Ok(summary)
}

/// Positions per chunk of an archival file that marks wins, unless asked
/// otherwise: a cold probe decodes, up to the value it needs, the chunks of its
/// won children's children. On the 7-stone complete file, chunks of 1,024 made
/// cold probes 1.7x the build's file's (2,048: 2.4x) for 12.8% more bytes (1.221
/// bits/position against 1.082).
pub const MARKED_CHUNK_POSITIONS: u64 = 1024;

/// Recodes the finished Morris file `from` into `out` with chunks of `chunk`
/// positions (default: the source's; [`MARKED_CHUNK_POSITIONS`] for an archival
/// file that marks wins), in the coding of new Morris files (see
/// [`crate::retro::recode`]): `coding`, if given, must be that one.
pub fn recode(
    from: &Path,
    out: &Path,
    chunk: Option<u64>,
    coding: Option<Family>,
    progress: &mut dyn Progress,
) -> Result<RecodeSummary> {
    let meta = MorrisSpec::from_meta(&Store::meta_of(from)?)
        .with_context(|| from.display().to_string())?;
    // Its wins' distances are not in its chunks: the readers recompute them one
    // at a time, and a recode would need every one.
    ensure!(
        !meta.marks_wins,
        "{} stores its wins without their distance (an archival file): recode the file it was made from",
        from.display()
    );
    // (Not for rules that move during placement, whose sector files verify
    // reads another way: their archival files keep every distance.)
    let marks_wins = coding == Some(Family::Archive) && !meta.rules.moving_in_placement();
    let default_chunk = if marks_wins {
        MARKED_CHUNK_POSITIONS
    } else {
        meta.chunk_positions
    };
    let mut target = MorrisSpec::with_rules(
        meta.rules,
        meta.stones,
        chunk.unwrap_or(default_chunk),
        meta.phase,
    )?;
    // The context-mixing coding of new files (the default), the archival one
    // (`--coding archive`: smaller, slower to code and decode, and its wins
    // stored without their distance, which the readers recompute one ply
    // further: about half the bytes again), or zstd (larger, fast: what a
    // comparison of codings wants).
    let mix = target.codings;
    let allowed = [mix, Family::Archive, Family::Zstd];
    target.codings = match coding {
        None if meta.codings == Family::Archive => Family::Archive,
        None => mix,
        Some(coding) if allowed.contains(&coding) => coding,
        Some(coding) => bail!(
            "Morris files are recoded to `{}`, `{}` or `{}`, not `{}`",
            allowed[0].name(),
            allowed[1].name(),
            allowed[2].name(),
            coding.name()
        ),
    };
    target.marks_wins = marks_wins;
    crate::retro::recode::recode(
        &MorrisFormat::new(meta),
        &MorrisFormat::new(target),
        from,
        out,
        progress,
    )
}
