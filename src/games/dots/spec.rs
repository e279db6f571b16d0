//! What identifies a tablebase: board, start, penalty, group layout, book depth and
//! chunking, and how it is written to (and read from) the `meta` table.

use super::board::{Board, Lines};
use super::chains::Chains;
use super::layout::{Layout, MAX_GROUP_LINES, MAX_GROUPS, split_sizes};
use super::notation;
use crate::store::{MAX_CHUNK_POSITIONS, codec, unknown_format};
use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;

/// The `format_version` of files that name their features in their own keys
/// ([`Spec::features`]: the value form, loony analysis, the chunk coding; chains
/// in `chains`): bumped only for a change those keys cannot express, which a tb
/// that knows this version would misread. Older versions packed the features
/// into the number (the `LEGACY_` versions below, docs/FORMAT.md §9.11); a tb
/// that knows only those refuses this one, as it must: it would not read the keys.
pub const FORMAT_VERSION: u32 = 7;

/// Legacy format: plain values stored as they are.
const LEGACY_PLAIN: u32 = 1;

/// Legacy format of the first loony files: each stored byte is
/// [`super::loony::encode`]'s (value, flag, offers), which a reader of plain
/// values would take for values, so those refuse it; the offer bit stored. Read,
/// never resumed (a resumed loony file of the legacy form is [`LEGACY_LOONY`]).
const LEGACY_LOONY_OFFERS: u32 = 2;

/// Legacy format of loony files whose bytes leave the offer bit out (it follows
/// from the position, and left out the bytes compress better); readers put it
/// back ([`super::loony::SetOffers`]), so they read [`LEGACY_LOONY_OFFERS`] too.
const LEGACY_LOONY: u32 = 3;

/// Legacy format of chain files (`tb build --start FILE` with chain dots): values
/// as in [`LEGACY_PLAIN`], but positions are indexed in unit form
/// ([`Chains::to_units`]), which a reader of the plain game would take for
/// positions, so those refuse it.
const LEGACY_CHAINS: u32 = 4;

/// Legacy format of plain files whose values are stored in the boxes-left form
/// ([`super::boxes_left`]: `B - v` for a value `v` with `B` boxes left).
const LEGACY_BOXES_LEFT: u32 = 5;

/// Legacy format of loony files whose values are stored in the boxes-left form
/// ([`super::loony::FlipLoony`]), offer bits left out as in [`LEGACY_LOONY`].
const LEGACY_LOONY_BOXES_LEFT: u32 = 6;

/// Whether files of legacy format `version` store values in the boxes-left form.
fn legacy_stores_boxes_left(version: u32) -> bool {
    [LEGACY_BOXES_LEFT, LEGACY_LOONY_BOXES_LEFT].contains(&version)
}

/// The `value_form` of values stored as they are (net future boxes).
const NET: &str = "net";

/// The `value_form` of values stored in the boxes-left form.
const BOXES_LEFT: &str = "boxes-left";

/// Default positions per chunk (64 KiB of raw values).
pub const DEFAULT_CHUNK_POSITIONS: u64 = 1 << 16;

/// Largest |penalty| accepted (values must fit an `i8` with every box added).
pub const MAX_PENALTY: i32 = 64;

/// The identity of a tablebase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The board.
    pub board: Board,
    /// How the start was given: `empty`, `swedish`, `icelandic` or `position`.
    pub start_name: String,
    /// Lines drawn at the start.
    pub start: Lines,
    /// Value of the full board (Wilson's last-move penalty).
    pub penalty: i8,
    /// Line groups (global line indices), most significant first.
    pub groups: Vec<Vec<usize>>,
    /// Layers with at most this many lines are kept as the opening book.
    pub book_lines: usize,
    /// Positions per stored chunk.
    pub chunk_positions: u64,
    /// Wilson's symmetry reduction (`--symmetry wilson`).
    pub symmetry: bool,
    /// Fraser's corner reduction (`--corners`).
    pub corners: bool,
    /// Wilson's loony analysis (`--loony`): every stored byte holds the value, who
    /// can be forced to make the next loony move, and whether the position offers
    /// a loony capture ([`super::loony::encode`]).
    pub loony: bool,
    /// Chains played as pseudo-lines (none: the plain game). A chain file stores
    /// positions in unit form ([`Chains::to_units`]): its layers count units, a chain
    /// being one line, and its groups hold each chain's representative.
    pub chains: Chains,
    /// Values stored in the boxes-left form (`value_form` `boxes-left`, what new
    /// plain and loony files get); false for chain files and files of the legacy
    /// formats before it, which stored them as they are.
    pub boxes_left_form: bool,
    /// The file's `format_version` packs its features (files from before the
    /// feature keys, formats 1 to 6, docs/FORMAT.md §9.11): a build
    /// resumed on one keeps its meta as it was. False for every file this tb
    /// creates, which names them in their own keys ([`Spec::features`]).
    pub packed_format: bool,
    /// The chunk codings the file holds (`chunk_coding`): zstd (what builds
    /// write), the fast archival coding (`archive-fast`, what `tb recode --coding
    /// archive` writes) or the first archival coding (`archive`, which it wrote
    /// before).
    pub codings: codec::Family,
}

/// A start as given on the command line.
#[derive(Debug, Clone)]
pub struct Start {
    /// `empty`, `swedish`, `icelandic` or `position`.
    pub name: String,
    /// The lines drawn.
    pub lines: Lines,
    /// A penalty carried by a Wilson file, if any.
    pub penalty: Option<i32>,
    /// Chains marked with dots in a Wilson file.
    pub chains: Chains,
}

/// Parses `--start`: a preset name, a position text, or a file holding one.
pub fn parse_start(board: &Board, text: &str) -> Result<Start> {
    let preset = |name: &str, lines| Start {
        name: name.to_string(),
        lines,
        penalty: None,
        chains: Chains::none(),
    };
    Ok(match text {
        "empty" => preset("empty", 0),
        "swedish" => preset("swedish", board.perimeter()),
        "icelandic" => preset("icelandic", board.top_left_perimeter()),
        _ => {
            let p = notation::parse_position_arg(board, text)
                .with_context(|| format!("bad --start `{text}`"))?;
            Start {
                name: "position".to_string(),
                lines: p.lines,
                penalty: p.penalty,
                chains: p.chains,
            }
        }
    })
}

/// Checks a penalty's range.
pub fn check_penalty(penalty: i32) -> Result<i8> {
    if penalty.unsigned_abs() > MAX_PENALTY as u32 {
        bail!("penalty {penalty} is out of range (-{MAX_PENALTY}..={MAX_PENALTY})");
    }
    Ok(penalty as i8)
}

/// Parses `--groups`: sizes such as `16,15` (consecutive free lines in line order)
/// or explicit line names per group such as `h0.0 h0.1/v0.0 v0.1`.
pub fn parse_groups(board: &Board, start: Lines, text: &str) -> Result<Vec<Vec<usize>>> {
    let free = board.free_lines(start);
    let groups: Vec<Vec<usize>> = if text.contains('/') || text.contains(['h', 'v']) {
        text.split('/')
            .map(|g| {
                g.split([' ', ','])
                    .filter(|s| !s.is_empty())
                    .map(|name| board.parse_line(name).map_err(|e| anyhow!(e)))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?
    } else {
        let sizes = text
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| anyhow!("bad group size `{s}` in --groups `{text}`"))
            })
            .collect::<Result<Vec<_>>>()?;
        if sizes.iter().sum::<usize>() != free.len() {
            bail!(
                "--groups `{text}` adds up to {} lines, but the start leaves {} lines free",
                sizes.iter().sum::<usize>(),
                free.len()
            );
        }
        split_sizes(&free, &sizes)
    };
    check_groups(&free, &groups, &format!("--groups `{text}`"))?;
    Ok(groups)
}

/// Checks that `groups` list every line of `free` exactly once, in at most
/// [`MAX_GROUPS`] groups of 1..=[`MAX_GROUP_LINES`] lines (`what` names them in errors;
/// with no free line, one empty group).
fn check_groups(free: &[usize], groups: &[Vec<usize>], what: &str) -> Result<()> {
    let mut seen: Vec<usize> = groups.iter().flatten().copied().collect();
    seen.sort_unstable();
    if seen != free {
        bail!(
            "{what} must list every free line exactly once ({} free lines)",
            free.len()
        );
    }
    // A start with no free line has one empty group (the automatic layouts make it).
    if let Some(big) = groups
        .iter()
        .find(|g| g.len() > MAX_GROUP_LINES || (g.is_empty() && !free.is_empty()))
    {
        bail!(
            "{what}: every group needs 1..={MAX_GROUP_LINES} lines, one has {}",
            big.len()
        );
    }
    if groups.len() > MAX_GROUPS {
        bail!("{what}: at most {MAX_GROUPS} groups, not {}", groups.len());
    }
    Ok(())
}

/// A free corner pair that `groups` put in different groups, if any (the corner
/// reduction needs both lines of each pair in one group).
pub fn split_corner_pair(
    board: &Board,
    start: Lines,
    groups: &[Vec<usize>],
) -> Option<(usize, usize)> {
    super::orbits::free_corner_pairs(board, start)
        .into_iter()
        .find(|&(a, b)| !groups.iter().any(|g| g.contains(&a) && g.contains(&b)))
}

/// Checks that explicit groups keep both lines of every free corner pair together
/// (`--corners` needs them in one group).
pub fn check_corner_groups(board: &Board, start: Lines, groups: &[Vec<usize>]) -> Result<()> {
    if let Some((a, b)) = split_corner_pair(board, start, groups) {
        bail!(
            "--corners needs both lines of each corner pair in one group, but --groups splits {} and {}",
            board.line_name(a),
            board.line_name(b)
        );
    }
    Ok(())
}

impl Spec {
    /// The layout of this tablebase.
    pub fn layout(&self) -> Layout {
        super::orbits::reduced_layout(
            &self.board,
            self.unit_start(),
            self.groups.clone(),
            self.symmetry,
            self.corners,
        )
    }

    /// The start in unit form (see [`Spec::chains`]; the start itself without
    /// chains): the layout's start, whose free lines the groups hold.
    pub fn unit_start(&self) -> Lines {
        self.start | self.chains.hidden()
    }

    /// Memory of the largest block and its children while the kernel computes it
    /// ([`super::groups::peak_block_bytes`]); a loony build also reads each child
    /// as two keys a byte ([`super::kernel::LoonyChild`]), so it counts 3 bytes.
    pub fn peak_block_bytes(&self, layout: &Layout) -> u64 {
        super::groups::peak_block_bytes(layout) * self.kernel_bytes_per_position()
    }

    /// Bytes per position of a block and its children in the kernel's memory.
    pub fn kernel_bytes_per_position(&self) -> u64 {
        if self.loony { 3 } else { 1 }
    }

    /// The `--symmetry` name of this tablebase's symmetry option.
    pub fn symmetry_name(&self) -> &'static str {
        if self.symmetry { "wilson" } else { "none" }
    }

    /// The `format_version` of the file: [`FORMAT_VERSION`], or the legacy version
    /// that packs the features of a [`Spec::packed_format`] file.
    pub fn format_version(&self) -> u32 {
        if !self.packed_format {
            FORMAT_VERSION
        } else if self.loony && self.boxes_left_form {
            LEGACY_LOONY_BOXES_LEFT
        } else if self.loony {
            LEGACY_LOONY
        } else if !self.chains.is_empty() {
            LEGACY_CHAINS
        } else if self.boxes_left_form {
            LEGACY_BOXES_LEFT
        } else {
            LEGACY_PLAIN
        }
    }

    /// The feature keys: how the stored values are to be read (docs/FORMAT.md
    /// §9.11), written into every file of [`FORMAT_VERSION`] (chains have their
    /// own key, `chains`); for a [`Spec::packed_format`] file what its version
    /// packs (`tb info` shows them).
    pub fn features(&self) -> Vec<(&'static str, String)> {
        let form = if self.boxes_left_form {
            BOXES_LEFT
        } else {
            NET
        };
        vec![
            ("value_form", form.to_string()),
            ("loony", self.loony.to_string()),
            (codec::FAMILY_KEY, self.codings.name().to_string()),
        ]
    }

    /// Takes the stored form of the existing file `meta` describes, so that a
    /// build resumed on it writes what it holds: values in the boxes-left form or
    /// not, and a legacy `format_version` kept as it is. A file that does not say
    /// is left to the identity check.
    pub fn keep_stored_form(&mut self, meta: &BTreeMap<String, String>) {
        match meta
            .get("format_version")
            .and_then(|v| v.parse::<u32>().ok())
        {
            Some(version) if version < FORMAT_VERSION => {
                self.packed_format = true;
                self.boxes_left_form = legacy_stores_boxes_left(version);
            }
            Some(_) => {
                if let Some(form) = meta.get("value_form") {
                    self.boxes_left_form = form == BOXES_LEFT;
                }
            }
            None => {}
        }
    }

    /// The metadata rows that identify the tablebase: the feature keys, or for a
    /// [`Spec::packed_format`] file its legacy rows (`loony` only in loony files).
    pub fn to_meta(&self) -> Vec<(&'static str, String)> {
        let mut meta = vec![
            ("game", "dots-and-boxes".to_string()),
            ("board", self.board.to_string()),
            ("start", self.start_name.clone()),
            (
                "start_position",
                notation::format_position(&self.board, self.start),
            ),
            ("penalty", self.penalty.to_string()),
            (
                "groups",
                serde_json::to_string(&self.groups).expect("groups serialise"),
            ),
            ("book_lines", self.book_lines.to_string()),
            ("chunk_positions", self.chunk_positions.to_string()),
            ("symmetry", self.symmetry_name().to_string()),
            ("corners", self.corners.to_string()),
            ("format_version", self.format_version().to_string()),
        ];
        if !self.packed_format {
            meta.extend(self.features());
        } else if self.loony {
            meta.push(("loony", "true".to_string()));
        }
        if !self.chains.is_empty() {
            let names = self.chains.line_names(&self.board);
            meta.push((
                "chains",
                serde_json::to_string(&names).expect("names serialise"),
            ));
        }
        meta
    }

    /// Reads the identity back from metadata.
    pub fn from_meta(meta: &BTreeMap<String, String>) -> Result<Spec> {
        let get = |k: &str| {
            meta.get(k)
                .ok_or_else(|| anyhow!("the file has no `{k}` metadata (not a finished tb file?)"))
        };
        if get("game")? != "dots-and-boxes" {
            bail!(
                "the file holds the game `{}`, not dots-and-boxes",
                get("game")?
            );
        }
        let version: u32 = get("format_version")?
            .parse()
            .map_err(|_| anyhow!("the file's `format_version` is not a number"))?;
        if version > FORMAT_VERSION {
            return Err(unknown_format(format!(
                "the file's value format {version} is newer than this tb understands ({FORMAT_VERSION})"
            )));
        }
        let packed_format = version < FORMAT_VERSION;
        let loony = match meta.get("loony").map(String::as_str) {
            None if packed_format => false,
            None => bail!("the file has no `loony` metadata"),
            Some("true") => true,
            Some("false") => false,
            Some(other) => bail!("the file has a bad `loony` value `{other}`"),
        };
        let board: Board = get("board")?.parse()?;
        let start = notation::parse_position(&board, get("start_position")?)?.lines;
        let chains = match meta.get("chains") {
            None => Chains::none(),
            Some(text) => chains_from_meta(&board, start, text)?,
        };
        if loony && !chains.is_empty() {
            bail!("the file claims both loony analysis and chains");
        }
        let boxes_left_form = if packed_format {
            legacy_form(version, loony, !chains.is_empty())?
        } else {
            match get("value_form")?.as_str() {
                NET => false,
                BOXES_LEFT if chains.is_empty() => true,
                BOXES_LEFT => bail!("the file claims chains with values in the boxes-left form"),
                other => {
                    return Err(unknown_format(format!(
                        "the file's values are stored in the form `{other}`, unknown to this tb (it reads `{NET}` and `{BOXES_LEFT}`)"
                    )));
                }
            }
        };
        use codec::Family::{Archive, ArchiveFast, Zstd};
        let named = meta.get(codec::FAMILY_KEY);
        let codings = match named.map(|name| codec::Family::parse(name)) {
            None | Some(Some(Zstd)) => Zstd,
            Some(Some(family @ (Archive | ArchiveFast))) if !loony && chains.is_empty() => family,
            Some(_) => {
                return Err(unknown_format(format!(
                    "the file's chunks are coded `{}`, which this tb does not read for Dots-and-Boxes (it reads `{}`, and `{}` or `{}` for plain files)",
                    named.expect("named"),
                    Zstd.name(),
                    ArchiveFast.name(),
                    Archive.name()
                )));
            }
        };
        // Typed and checked against the board: a tampered file must give an error
        // here, not a panic or a wrong answer later.
        let number_in = |k: &str, range: std::ops::RangeInclusive<i64>| -> Result<i64> {
            let text = get(k)?;
            match text.parse::<i64>() {
                Ok(n) if range.contains(&n) => Ok(n),
                _ => bail!(
                    "the file's `{k}` metadata `{text}` is not a number within {}..={}",
                    range.start(),
                    range.end()
                ),
            }
        };
        let max_penalty = i64::from(MAX_PENALTY);
        let penalty = number_in("penalty", -max_penalty..=max_penalty)? as i8;
        let book_lines = number_in("book_lines", 0..=board.num_lines() as i64)? as usize;
        let chunk_positions = number_in("chunk_positions", 1..=MAX_CHUNK_POSITIONS as i64)? as u64;
        let groups: Vec<Vec<usize>> = serde_json::from_str(get("groups")?)
            .map_err(|e| anyhow!("the file's `groups` metadata is malformed: {e}"))?;
        let free = board.free_lines(start | chains.hidden());
        check_groups(&free, &groups, "the file's `groups`")?;
        let corners = match meta.get("corners").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => bail!("the file has a bad `corners` value `{other}`"),
        };
        if corners {
            check_corner_groups(&board, start, &groups)?;
        }
        let start_name = get("start")?;
        match start_name.as_str() {
            "position" => {}
            "empty" | "swedish" | "icelandic" => {
                if parse_start(&board, start_name)?.lines != start {
                    bail!("the file's start `{start_name}` is not its `start_position`");
                }
            }
            other => bail!("the file has an unknown start name `{other}`"),
        }
        let spec = Spec {
            board,
            start_name: start_name.clone(),
            start,
            penalty,
            groups,
            book_lines,
            chunk_positions,
            symmetry: match meta.get("symmetry").map(String::as_str) {
                None | Some("none") => false,
                Some("wilson") => true,
                Some(other) => bail!("the file uses symmetry `{other}`, unknown to this tb"),
            },
            corners,
            loony,
            chains,
            boxes_left_form,
            packed_format,
            codings,
        };
        if !spec.chains.is_empty() && (spec.symmetry || spec.corners) {
            bail!("the file claims chains with a symmetry or corner reduction");
        }
        if loony {
            check_loony_range(&spec.board, spec.penalty as i32)?;
        }
        // What was read must be exactly what this tb writes for it: no value
        // that merely parses (padding, another spelling) is taken on trust.
        // Files from before the reduction keys lack them (and stored every
        // position, which the layer checks hold them to); files of a legacy
        // version lack the feature keys.
        crate::store::check_no_feature_keys(meta, &spec.to_meta(), &spec.features(), version)?;
        for (key, value) in spec.to_meta() {
            match meta.get(key) {
                Some(text) if *text == value => {}
                Some(_) if key == "format_version" => {} // checked above
                None if matches!(key, "corners" | "symmetry") => {}
                Some(text) => bail!(
                    "the file's `{key}` metadata `{text}` is not as this tb writes it (`{value}`)"
                ),
                None => bail!("the file has no `{key}` metadata"),
            }
        }
        Ok(spec)
    }

    /// Default file name: `<board>[-<start>][-p<penalty>][-loony].tb`.
    pub fn default_db_name(board: &Board, start_name: &str, penalty: i32, loony: bool) -> String {
        let mut name = board.to_string();
        if start_name != "empty" {
            name.push('-');
            name.push_str(start_name);
        }
        if penalty != 0 {
            name.push_str(&format!("-p{penalty}"));
        }
        if loony {
            name.push_str("-loony");
        }
        name + ".tb"
    }
}

/// Whether a file of legacy format `version` (with loony analysis, with chains)
/// stores values in the boxes-left form; an error for a version that is not one
/// of such a file: plain files are of format 1 (values as they are) or 5
/// (boxes-left form), loony files of 2 (offer bits stored), 3 or 6 (boxes-left
/// form), chain files of 4.
fn legacy_form(version: u32, loony: bool, chains: bool) -> Result<bool> {
    let (kind, formats): (_, &[u32]) = match (loony, chains) {
        (true, _) => (
            "loony",
            &[LEGACY_LOONY_OFFERS, LEGACY_LOONY, LEGACY_LOONY_BOXES_LEFT],
        ),
        (false, false) => ("plain", &[LEGACY_PLAIN, LEGACY_BOXES_LEFT]),
        (false, true) => ("chain", &[LEGACY_CHAINS]),
    };
    if !formats.contains(&version) {
        bail!("the file's value format {version} is not one of a {kind} file ({formats:?})");
    }
    Ok(legacy_stores_boxes_left(version))
}

/// The chains of a file's `chains` metadata (lists of line names), checked to be
/// exactly the chains that dots on their lines would make in `start`.
fn chains_from_meta(board: &Board, start: Lines, text: &str) -> Result<Chains> {
    let names: Vec<Vec<String>> = serde_json::from_str(text)
        .map_err(|e| anyhow!("the file's `chains` metadata is malformed: {e}"))?;
    let mut masks = Vec::new();
    let mut dotted: Lines = 0;
    for chain in &names {
        let mut mask: Lines = 0;
        for name in chain {
            let line = board
                .parse_line(name)
                .map_err(|e| anyhow!("the file's `chains` metadata: {e}"))?;
            if (dotted | mask) >> line & 1 == 1 {
                bail!("the file's `chains` metadata lists {name} twice");
            }
            mask |= 1 << line;
        }
        dotted |= mask;
        masks.push(mask);
    }
    let chains = Chains::from_dotted(board, start, dotted)
        .map_err(|e| anyhow!("the file's `chains` metadata: {e}"))?;
    masks.sort_unstable_by_key(|m| m.trailing_zeros());
    if chains.masks() != masks || chains.is_empty() {
        bail!("the file's `chains` metadata does not match the chains of its start");
    }
    Ok(chains)
}

/// Refuses loony analysis where a value could fall outside what a loony byte holds
/// ([`super::loony::MIN_VALUE`]..=[`super::loony::MAX_VALUE`]): boards of more than
/// 20 boxes, or a penalty that takes a value past them.
pub fn check_loony_range(board: &Board, penalty: i32) -> Result<()> {
    use super::loony::{MAX_VALUE, MIN_VALUE};
    let boxes = board.num_boxes() as i32;
    if boxes + penalty.abs() > MAX_VALUE.min(-MIN_VALUE) {
        bail!(
            "loony analysis stores values {MIN_VALUE}..={MAX_VALUE}: a board of {boxes} boxes with penalty {penalty} can exceed them"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form this tb reads, in the current format (feature keys) and in the
    /// legacy version that packed it (docs/FORMAT.md §9.11), reads back from its
    /// meta as written; a loony file of legacy format 2 reads as format 3 does.
    #[test]
    fn the_feature_keys_and_legacy_versions_round_trip_through_the_meta() {
        let plain = Spec {
            board: "2x2".parse().unwrap(),
            start_name: "empty".into(),
            start: 0,
            penalty: 0,
            groups: vec![(0..12).collect()],
            book_lines: 12,
            chunk_positions: 1 << 16,
            symmetry: false,
            corners: false,
            loony: false,
            chains: Chains::none(),
            boxes_left_form: true,
            packed_format: false,
            codings: codec::Family::Zstd,
        };
        let meta_of = |spec: &Spec| -> BTreeMap<String, String> {
            (spec.to_meta().into_iter())
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        };
        let forms = [
            (LEGACY_PLAIN, false, false, "net"),
            (LEGACY_LOONY, true, false, "net"),
            (LEGACY_BOXES_LEFT, false, true, "boxes-left"),
            (LEGACY_LOONY_BOXES_LEFT, true, true, "boxes-left"),
        ];
        for (legacy, loony, boxes_left_form, value_form) in forms {
            for packed_format in [true, false] {
                let spec = Spec {
                    loony,
                    boxes_left_form,
                    packed_format,
                    ..plain.clone()
                };
                let meta = meta_of(&spec);
                let version = if packed_format {
                    legacy
                } else {
                    FORMAT_VERSION
                };
                assert_eq!(meta["format_version"], version.to_string());
                let features = spec.features();
                assert_eq!(features[0], ("value_form", value_form.to_string()));
                assert_eq!(features[1], ("loony", loony.to_string()));
                for (key, value) in features {
                    let written = meta.get(key);
                    if packed_format {
                        assert!(written.is_none() || (key == "loony" && loony), "{key}");
                    } else {
                        assert_eq!(written, Some(&value), "{key}");
                    }
                }
                assert_eq!(Spec::from_meta(&meta).unwrap(), spec, "{meta:?}");
            }
        }
        // Archival files name their coding; loony ones cannot be archival, and no
        // Dots-and-Boxes file holds the game-neighbour rule's chunks.
        for (codings, name) in [
            (codec::Family::Archive, "archive"),
            (codec::Family::ArchiveFast, "archive-fast"),
        ] {
            let archive = Spec {
                codings,
                ..plain.clone()
            };
            let mut meta = meta_of(&archive);
            assert_eq!(meta["chunk_coding"], name);
            assert_eq!(Spec::from_meta(&meta).unwrap(), archive);
            meta.insert("loony".into(), "true".into());
            assert!(Spec::from_meta(&meta).is_err());
        }
        let mut meta = meta_of(&plain);
        meta.insert("chunk_coding".into(), "mix-checked".into());
        assert!(Spec::from_meta(&meta).is_err());
        let loony = Spec {
            loony: true,
            boxes_left_form: false,
            packed_format: true,
            ..plain
        };
        let mut meta = meta_of(&loony);
        meta.insert("format_version".into(), LEGACY_LOONY_OFFERS.to_string());
        assert_eq!(Spec::from_meta(&meta).unwrap(), loony);
    }

    #[test]
    fn group_sizes_must_cover_the_free_lines() {
        let b: Board = "2x2".parse().unwrap();
        assert!(parse_groups(&b, 0, "6,6").is_ok());
        assert!(parse_groups(&b, 0, "6,5").is_err());
        assert!(parse_groups(&b, 0, "x").is_err());
        assert!(parse_groups(&b, 0, "12,0").is_err());
    }
}
