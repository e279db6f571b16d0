//! Building a Dots-and-Boxes tablebase: the build policy (groups from the memory
//! budget, book depth, budget refusal), the game's side of the generic scheduler
//! ([`DotsKernel`]: the blocks of [`DotsFormat`], each read from the blocks one line
//! further and computed by Wilson's kernel) and the summary of a build.

use super::board::{Board, Lines};
use super::chain_kernel::ChainKernel;
use super::chains::ChainRule;
use super::format::DotsFormat;
use super::groups::{auto_groups, default_book_lines, symmetric_groups};
use super::kernel::{Kernel, LoonyChild};
use super::layout::Layout;
use super::loony::{self, Loony};
use super::spec::{self, Spec};
use crate::retro::build::{Builder, RunOptions, RunSummary};
use crate::retro::chunks::decode_chunk;
use crate::retro::progress::Progress;
use crate::retro::recode::RecodeSummary;
use crate::retro::{self, BlockId, Format, Kernel as _};
use crate::store::codec::Family;
use crate::store::{MAX_CHUNK_POSITIONS, Store, chunk_len};
use crate::units::human_bytes;
use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, OnceLock};

/// What the user asked for, before the policy fills in the defaults.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The board.
    pub board: Board,
    /// `--start`: a preset, a position or a Wilson file.
    pub start: String,
    /// `--penalty` (a Wilson file may carry one too).
    pub penalty: Option<i32>,
    /// `--book-lines`.
    pub book_lines: Option<usize>,
    /// `--memory` in bytes.
    pub memory: u64,
    /// `--groups` text.
    pub groups: Option<String>,
    /// `--chunk`: positions per stored chunk.
    pub chunk: u64,
    /// Wilson's symmetry reduction (`None`: the default, on without chains).
    pub symmetry: Option<bool>,
    /// Fraser's corner reduction (`None`: the default, see [`default_corners`]).
    pub corners: Option<bool>,
    /// Wilson's loony analysis.
    pub loony: bool,
    /// How chains marked in a start file are analysed: exact (only chains that
    /// change no value stored as units) unless Wilson's rule is asked for.
    pub chain_rule: ChainRule,
}

impl BuildRequest {
    /// The spec to build: groups from the budget unless given (unions of line orbits
    /// with a reduction), the default book depth unless given.
    pub fn spec(&self) -> Result<Spec> {
        let board = self.board;
        let mut start = spec::parse_start(&board, &self.start)?;
        start.chains = start.chains.under(&board, self.chain_rule);
        let chains = !start.chains.is_empty();
        if chains && self.loony {
            bail!(
                "--loony analyses the plain game: remove the chain dots, or build without --loony"
            );
        }
        if chains && (self.symmetry == Some(true) || self.corners == Some(true)) {
            bail!(
                "a build with chains stores every position (a symmetry need not keep the chains): leave out --symmetry wilson and --corners"
            );
        }
        // Wilson's reduction by default, except with chains.
        let symmetry = self.symmetry.unwrap_or(!chains);
        let penalty = spec::check_penalty(self.penalty.or(start.penalty).unwrap_or(0))?;
        if self.loony {
            spec::check_loony_range(&board, penalty as i32)?;
        }
        if !(1..=MAX_CHUNK_POSITIONS).contains(&self.chunk) {
            bail!("--chunk must be between 1 and {MAX_CHUNK_POSITIONS}");
        }
        // A loony build's kernel needs 3 bytes a position (see
        // `Spec::peak_block_bytes`): groups chosen for a third of the budget.
        let group_memory = if self.loony {
            self.memory / 3
        } else {
            self.memory
        };
        // Groups hold the free lines of the unit form: with chains, each chain's
        // representative stands for it (see `Spec::chains`).
        let unit_start = start.lines | start.chains.hidden();
        let explicit_groups = match &self.groups {
            Some(text) => Some(spec::parse_groups(&board, unit_start, text)?),
            None => None,
        };
        let corners = self.corners.unwrap_or_else(|| {
            default_corners(
                &board,
                start.lines,
                chains,
                symmetry,
                explicit_groups.as_deref(),
            )
        });
        let groups = match explicit_groups {
            Some(groups) => {
                if corners {
                    spec::check_corner_groups(&board, start.lines, &groups)?;
                }
                groups
            }
            None if symmetry || corners => {
                symmetric_groups(&board, start.lines, group_memory, symmetry, corners)
            }
            None => auto_groups(&board, unit_start, group_memory),
        };
        let mut spec = Spec {
            board,
            start_name: start.name,
            start: start.lines,
            penalty,
            groups,
            book_lines: 0,
            chunk_positions: self.chunk,
            symmetry,
            corners,
            loony: self.loony,
            boxes_left_form: start.chains.is_empty(),
            packed_format: false,
            codings: crate::store::codec::Family::Zstd,
            chains: start.chains,
        };
        spec.book_lines = match self.book_lines {
            Some(k) if k > board.num_lines() => {
                bail!(
                    "--book-lines {k} is more than the board's {} lines",
                    board.num_lines()
                )
            }
            Some(k) => k,
            None => default_book_lines(&spec.layout()),
        };
        Ok(spec)
    }

    /// The spec to build into `db`, `spec` being [`BuildRequest::spec`]: a request
    /// that leaves the corners to the default keeps those of an existing file, so
    /// that a file begun without them (before they were the default) resumes; a
    /// file begun in a value format before the boxes-left form resumes in it.
    pub fn spec_for_file(&self, spec: Spec, db: &Path) -> Result<Spec> {
        if !db.exists() {
            return Ok(spec);
        }
        let Some(meta) = Store::meta_of(db)
            .ok()
            .filter(|meta| meta.get("game").map(String::as_str) == Some("dots-and-boxes"))
        else {
            return Ok(spec);
        };
        // A chain file resumes under the rule that chose its chains.
        if meta.contains_key("chains") && spec.chains.is_empty() {
            bail!(
                "{} stores chains as units (Wilson's assumption): resume it with --wilson-chains, or use another --db",
                db.display()
            );
        }
        // Files from before the key reduced no corners.
        let file_corners = meta.get("corners").map_or(Some(false), |t| t.parse().ok());
        let mut spec = match file_corners {
            Some(corners) if self.corners.is_none() && corners != spec.corners => BuildRequest {
                corners: Some(corners),
                ..self.clone()
            }
            .spec()?,
            _ => spec,
        };
        spec.keep_stored_form(&meta);
        Ok(spec)
    }

    /// The spec a build into `db` runs with, as [`build`] runs it: the request's
    /// ([`BuildRequest::spec_for_file`]), within the memory budget
    /// ([`check_budget`]), and the groups of an existing file unless given.
    pub fn spec_to_build(&self, db: &Path) -> Result<Spec> {
        let mut spec = self.spec_for_file(self.spec()?, db)?;
        check_budget(&spec, self.memory)?;
        if self.groups.is_none()
            && db.exists()
            && let Ok(meta) = Store::meta_of(db)
            && meta.get("game").map(String::as_str) == Some("dots-and-boxes")
            && let Ok(existing) = Spec::from_meta(&meta)
        {
            spec.groups = existing.groups;
        }
        Ok(spec)
    }

    /// The default database file: `<board>[-<start>][-p<penalty>].tb`.
    pub fn default_db(&self, spec: &Spec) -> PathBuf {
        Spec::default_db_name(
            &self.board,
            &spec.start_name,
            spec.penalty as i32,
            spec.loony,
        )
        .into()
    }
}

/// Whether a build without `--corners` or `--no-corners` reduces corners: where
/// they help, that is where a corner box has both perimeter lines free at `start`
/// (a board at least 2 boxes each way), without chains (a build with them stores
/// every position), with the symmetry reduction on (`--symmetry none` means every
/// position stored) and with explicit `groups` keeping each such pair together.
/// They store up to 81/256 of the positions and build about 4x faster on 3x5 and 4x4.
pub fn default_corners(
    board: &Board,
    start: Lines,
    chains: bool,
    symmetry: bool,
    groups: Option<&[Vec<usize>]>,
) -> bool {
    !chains
        && symmetry
        && !super::orbits::free_corner_pairs(board, start).is_empty()
        && groups.is_none_or(|groups| spec::split_corner_pair(board, start, groups).is_none())
}

/// Refuses a build whose largest block plus its children exceed half the budget.
pub fn check_budget(spec: &Spec, memory: u64) -> Result<()> {
    let peak = spec.peak_block_bytes(&spec.layout());
    if peak > memory / 2 {
        bail!(
            "a block of this build and its children need {}, more than half of --memory {} (the other half keeps blocks for later ones); raise --memory to {} or give --groups (see `tb build ... --plan`)",
            human_bytes(peak),
            human_bytes(memory),
            human_bytes(peak * 2)
        );
    }
    Ok(())
}

/// How to run a build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// What to build.
    pub spec: Spec,
    /// Whether the groups were given explicitly (otherwise a resumed build keeps the
    /// file's groups).
    pub groups_explicit: bool,
    /// The SQLite file.
    pub db: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// Memory budget in bytes.
    pub memory: u64,
}

/// What a finished build reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    /// The spec that was built (groups as stored).
    #[serde(skip)]
    pub spec: Spec,
    /// Board, `RxC`.
    pub board: String,
    /// Start name.
    pub start: String,
    /// What the scheduler reports (positions, times, bytes).
    #[serde(flatten)]
    pub run: RunSummary,
    /// Positions of the whole tablebase without a reduction.
    pub raw_positions: u64,
    /// `none` or `wilson`.
    pub symmetry: String,
    /// Board symmetries in use (1 without symmetry).
    pub symmetries: usize,
    /// Whether corner pairs are reduced.
    pub corners: bool,
    /// Value of the start position.
    pub start_value: i8,
    /// Loony builds: who can be forced to make the next loony move from the start
    /// (JSON `"loony"`: `"mover"`, `"opponent"`, or null for neither); absent
    /// otherwise.
    #[serde(
        rename = "loony",
        skip_serializing_if = "Option::is_none",
        serialize_with = "loony::serialize_flag"
    )]
    pub start_loony: Option<Loony>,
}

impl BuildSummary {
    /// The final summary line of a build.
    pub fn text(&self) -> String {
        format!(
            "built {} {}: start value {:+}{}, {}",
            self.board,
            self.start,
            self.start_value,
            self.loony_mark(),
            self.run.text("blocks")
        )
    }

    /// The start's loony mark (`^`, `v`, or nothing; nothing for a plain build).
    pub fn loony_mark(&self) -> &'static str {
        self.start_loony.map_or("", Loony::mark)
    }
}

/// Runs (or resumes) a build.
pub fn build(mut opts: BuildOptions, progress: &mut dyn Progress) -> Result<BuildSummary> {
    let mut builder = Builder::open(&opts.db, opts.spec.chunk_positions)?;
    let meta = builder.meta()?;
    if meta.get("game").map(String::as_str) == Some("dots-and-boxes")
        && let Ok(existing) = Spec::from_meta(&meta)
    {
        // Files from before a key existed (e.g. `symmetry`) get its default written
        // out, so the identity check compares what the file means. The format stays
        // the file's: a file of another format is not resumed.
        let mut filled = existing.to_meta();
        filled.retain(|(key, _)| *key != "format_version");
        builder.set_meta(&filled)?;
        if !opts.groups_explicit {
            // A resumed build keeps the file's groups (the budget may pick others now).
            opts.spec.groups = existing.groups;
        }
    }
    let spec = &opts.spec;
    let layout = spec.layout();
    // The kernel unranks: its tables are made here, once, before the workers start.
    layout.prepare_unranking();
    let completion = spec.board.completion_masks();
    let kernel = DotsKernel::new(spec, &layout, &completion);
    let run = builder.run(
        &kernel,
        RunOptions {
            threads: opts.threads,
            // Half the budget keeps finished blocks for their parents; the other half
            // is the block being computed and its children (the planner sizes
            // blocks for that).
            cache_bytes: opts.memory / 2,
        },
        progress,
    )?;
    let start_entry = {
        let (counts, index) = layout.locate(spec.start);
        let chunk = index / spec.chunk_positions;
        let len = chunk_len(layout.block_size(&counts), spec.chunk_positions, chunk);
        let id = BlockId {
            layer: layout.start_lines(),
            key: counts,
        };
        let stored = builder.store().stored_chunk(id.layer, &id.key, chunk)?;
        let values = decode_chunk(
            kernel.format(),
            &id,
            chunk * spec.chunk_positions,
            len,
            &stored,
        )?;
        values[(index % spec.chunk_positions) as usize]
    };
    let (start_value, start_loony) = if spec.loony {
        let (value, flag, _) = loony::decode(start_entry as u8)
            .context("the start's stored loony byte is not one tb writes")?;
        (value as i8, Some(flag))
    } else {
        (start_entry, None)
    };
    let summary = BuildSummary {
        spec: spec.clone(),
        board: spec.board.to_string(),
        start: spec.start_name.clone(),
        run,
        raw_positions: layout.raw_positions(),
        symmetry: spec.symmetry_name().to_string(),
        symmetries: layout.symmetries(),
        corners: layout.has_corners(),
        start_value,
        start_loony,
    };
    progress.finish(&summary.text());
    Ok(summary)
}

/// A loony child block as the kernel reads it: each byte turned into the keys of
/// the moves into it ([`LoonyChild::of_byte`]).
struct LoonyRead {
    /// The child block (within one build an id always stands for the same bytes,
    /// computed or stored and restored).
    id: BlockId,
    keys: Vec<LoonyChild>,
}

/// The children of the last loony block computed, kept for the next: consecutive
/// blocks of a layer share children (with two groups, (n; a, b) and the next block,
/// (n; a + 1, b - 1), both read (n + 1; a + 1, b)), so most children are converted
/// once instead of once per parent. Those the next block does not read are dropped
/// before it converts its own, so the kernel's peak stays that of one block's
/// children; they live on while the block is encoded and written (2 bytes a child
/// position beside the children themselves, which the scheduler keeps then too; the
/// peak RSS of 4x4+corners+loony did not change: 8761 MiB against 8751).
#[derive(Default)]
struct LoonyReads(Mutex<Vec<LoonyRead>>);

impl LoonyReads {
    /// The children `ids` (as [`retro::Kernel::reads`] lists them) whose bytes are
    /// `inputs`, reusing the last block's conversions.
    fn convert(&self, ids: &[BlockId], inputs: &[&[i8]]) -> Vec<LoonyRead> {
        let mut previous = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        let found: Vec<Option<LoonyRead>> = ids
            .iter()
            .map(|id| {
                let at = previous.iter().position(|r| r.id == *id)?;
                Some(previous.swap_remove(at))
            })
            .collect();
        drop(previous);
        let table: Vec<LoonyChild> = (0..=255u8).map(LoonyChild::of_byte).collect();
        found
            .into_iter()
            .zip(ids.iter().zip(inputs))
            .map(|(found, (id, bytes))| {
                found.unwrap_or_else(|| LoonyRead {
                    id: id.clone(),
                    keys: bytes.par_iter().map(|&b| table[b as u8 as usize]).collect(),
                })
            })
            .collect()
    }

    /// Keeps a block's conversions for the next block.
    fn keep(&self, read: Vec<LoonyRead>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = read;
    }
}

/// Positions per parallel task of the loony bytes' last pass.
const LOONY_TILE: usize = 1 << 16;

/// Dots-and-Boxes as the scheduler builds it ([`crate::retro::Kernel`]): the
/// blocks of its [`DotsFormat`], block (n; c1..cG) read from the blocks one line
/// further in each group that has a free line, and computed by Wilson's kernel
/// ([`super::kernel`]), the chain kernel ([`super::chain_kernel`]) or, in a loony
/// build, Wilson's kernel on move keys turned into loony bytes.
pub struct DotsKernel<'a> {
    format: DotsFormat<'a>,
    completion: &'a [[Lines; 2]],
    /// Built on the first block computed.
    kernel: OnceLock<Kernel<'a>>,
    /// The same for chain tablebases.
    chain_kernel: OnceLock<ChainKernel<'a>>,
    /// The children of the last loony block, as the kernel read them.
    loony_reads: LoonyReads,
}

impl<'a> DotsKernel<'a> {
    /// The kernel of a tablebase (`completion`: the board's completion masks).
    pub fn new(spec: &'a Spec, layout: &'a Layout, completion: &'a [[Lines; 2]]) -> DotsKernel<'a> {
        DotsKernel {
            format: DotsFormat::new(spec, layout),
            completion,
            kernel: OnceLock::new(),
            chain_kernel: OnceLock::new(),
            loony_reads: LoonyReads::default(),
        }
    }

    /// Whether group `g` of block `key` has a free line (a child to read).
    fn has_free_line(&self, key: &[u8], g: usize) -> bool {
        (key[g] as usize) < self.format.layout().groups[g].len()
    }

    /// One entry per group of block `key`, in group order: the next of `items`
    /// (one per group with a free line, in the order [`retro::Kernel::reads`] lists
    /// the children) or `None` for a group without.
    fn per_group<T>(&self, key: &[u8], items: impl IntoIterator<Item = T>) -> Vec<Option<T>> {
        let mut items = items.into_iter();
        (0..key.len())
            .map(|g| {
                self.has_free_line(key, g)
                    .then(|| items.next().expect("one input per open group"))
            })
            .collect()
    }
}

impl retro::Kernel for DotsKernel<'_> {
    fn format(&self) -> &dyn Format {
        &self.format
    }

    fn reads(&self, layer: usize, key: &[u8]) -> Vec<BlockId> {
        (0..key.len())
            .filter(|&g| self.has_free_line(key, g))
            .map(|g| {
                let mut child = key.to_vec();
                child[g] += 1;
                BlockId {
                    layer: layer + 1,
                    key: child,
                }
            })
            .collect()
    }

    fn compute(
        &self,
        layer: usize,
        key: &[u8],
        inputs: &[&[i8]],
        _done: &AtomicU64,
    ) -> Result<Vec<i8>> {
        let children = self.per_group(key, inputs.iter().copied());
        let (spec, layout) = (self.format.spec(), self.format.layout());
        if !spec.chains.is_empty() {
            let kernel = self
                .chain_kernel
                .get_or_init(|| ChainKernel::new(spec, layout, self.completion));
            return Ok(kernel.compute_block(key, &children));
        }
        let kernel = self
            .kernel
            .get_or_init(|| Kernel::new(layout, self.completion, spec.penalty));
        if !spec.loony {
            return Ok(kernel.compute_block(key, &children));
        }
        // Loony: the children's bytes read as move keys, the kernel's best keys
        // turned into bytes with each position's own offer bit.
        let read = self.loony_reads.convert(&self.reads(layer, key), inputs);
        let refs = self.per_group(key, read.iter().map(|r| r.keys.as_slice()));
        let mut entries = kernel.compute_block(key, &refs);
        self.loony_reads.keep(read);
        entries
            .par_chunks_mut(LOONY_TILE)
            .enumerate()
            .for_each(|(t, tile)| {
                let first = (t * LOONY_TILE) as u64;
                self.format
                    .map_with_offers(key, first, tile, loony::EntryOfKey);
            });
        Ok(entries)
    }
}

/// Memory for the blocks kept in memory when `--memory` is not given (capped by
/// the machine's: [`crate::sys::default_memory`]); the groups are chosen for it.
pub const DEFAULT_MEMORY: u64 = 8 << 30;

/// Positions per chunk of a file recoded to the archival coding unless asked
/// otherwise: a cold probe on 4x4+corners then took 1.4-1.6x the zstd file's
/// (65,536 positions: 10x) for 1.30 bits/position stored instead of 1.12
/// (measured with the first archival coding, 0x04).
pub const ARCHIVE_CHUNK_POSITIONS: u64 = 2048;

/// Recodes the finished Dots-and-Boxes file `from` into `out` with chunks of
/// `chunk` positions (default: the source's, or [`ARCHIVE_CHUNK_POSITIONS`] when
/// recoding to the archival coding) in `coding` (default: the source's; zstd or
/// archive) (see [`crate::retro::recode`]).
pub fn recode(
    from: &Path,
    out: &Path,
    chunk: Option<u64>,
    coding: Option<Family>,
    progress: &mut dyn Progress,
) -> Result<RecodeSummary> {
    let source =
        Spec::from_meta(&Store::meta_of(from)?).with_context(|| from.display().to_string())?;
    // `archive` names the archival coding of today (the fast one); a file of the
    // first one keeps it unless asked otherwise.
    let codings = match coding {
        None => source.codings,
        Some(Family::Zstd) => Family::Zstd,
        Some(Family::Archive | Family::ArchiveFast)
            if source.loony || !source.chains.is_empty() =>
        {
            bail!("the archival coding is for plain files (not loony or chain files)")
        }
        Some(Family::Archive | Family::ArchiveFast) => Family::ArchiveFast,
        Some(other) => bail!(
            "Dots-and-Boxes files are coded `zstd` or `archive`, not `{}`",
            other.name()
        ),
    };
    // Archival chunks are small by default: a probe decodes its chunk up to the
    // value it needs, several times slower per value than zstd.
    let archival = |codings: Family| codings != Family::Zstd;
    let chunk = match chunk {
        Some(chunk) => chunk,
        None if archival(codings) && !archival(source.codings) => ARCHIVE_CHUNK_POSITIONS,
        None => source.chunk_positions,
    };
    if !(1..=MAX_CHUNK_POSITIONS).contains(&chunk) {
        bail!("--chunk must be between 1 and {MAX_CHUNK_POSITIONS}");
    }
    // The recoded file stores values in the boxes-left form whatever the source's
    // (recoding is how a file of an older format gets it).
    let target = Spec {
        chunk_positions: chunk,
        boxes_left_form: source.chains.is_empty(),
        packed_format: false,
        codings,
        ..source.clone()
    };
    let layout = source.layout();
    crate::retro::recode::recode(
        &DotsFormat::new(&source, &layout),
        &DotsFormat::new(&target, &layout),
        from,
        out,
        progress,
    )
}
