//! What identifies a tablebase: board, start, penalty, group layout, book depth and
//! chunking, and how it is written to (and read from) the `meta` table.

use super::board::{Board, Lines};
use super::chains::Chains;
use super::layout::{Layout, MAX_GROUP_LINES, MAX_GROUPS, split_sizes};
use super::notation;
use crate::store::MAX_CHUNK_POSITIONS;
use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;

/// Format version of the stored values (bump when their meaning changes).
pub const FORMAT_VERSION: u32 = 1;

/// Format version of loony files: each stored byte is [`super::loony::encode`]'s
/// (value, flag, offers), which a reader of version 1 would take for values, so
/// those refuse it. Version 2 stored the offer bit; version 3 stores it clear (it
/// follows from the position, and left out the bytes compress better), and readers
/// put it back ([`super::loony::SetOffers`]): they read both.
pub const LOONY_FORMAT_VERSION: u32 = 3;

/// The oldest loony format this tb reads.
const OLDEST_LOONY_FORMAT_VERSION: u32 = 2;

/// Format version of chain files (`tb build --start FILE` with chain dots): values
/// as in version 1, but positions are indexed in unit form ([`Chains::to_units`]),
/// which a reader of the plain game would take for positions, so those refuse it.
pub const CHAINS_FORMAT_VERSION: u32 = 4;

/// Format version of plain files whose values are stored in the boxes-left form
/// ([`super::boxes_left`]: `B - v` for a value `v` with `B` boxes left), which a
/// reader of version 1 would take for values, so those refuse it.
pub const BOXES_LEFT_FORMAT_VERSION: u32 = 5;

/// Format version of loony files whose values are stored in the boxes-left form
/// ([`super::loony::FlipLoony`]), offer bits left out as in version 3.
pub const LOONY_BOXES_LEFT_FORMAT_VERSION: u32 = 6;

/// Whether files of value format `version` store values in the boxes-left form.
pub fn stores_boxes_left(version: u32) -> bool {
    [BOXES_LEFT_FORMAT_VERSION, LOONY_BOXES_LEFT_FORMAT_VERSION].contains(&version)
}

/// The newest format version this tb reads.
const NEWEST_FORMAT_VERSION: u32 = LOONY_BOXES_LEFT_FORMAT_VERSION;

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
    /// Values stored in the boxes-left form (formats 5 and 6, what new plain and
    /// loony files get); false for files of older formats, which stored them as
    /// they are, and for chain files.
    pub boxes_left_form: bool,
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

    /// The format version of the stored values.
    pub fn format_version(&self) -> u32 {
        if self.loony && self.boxes_left_form {
            LOONY_BOXES_LEFT_FORMAT_VERSION
        } else if self.loony {
            LOONY_FORMAT_VERSION
        } else if !self.chains.is_empty() {
            CHAINS_FORMAT_VERSION
        } else if self.boxes_left_form {
            BOXES_LEFT_FORMAT_VERSION
        } else {
            FORMAT_VERSION
        }
    }

    /// The metadata rows that identify the tablebase (`loony` only in loony files,
    /// so plain files stay as they were).
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
        if self.loony {
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
        let version: u32 = get("format_version")?.parse()?;
        if version > NEWEST_FORMAT_VERSION {
            bail!(
                "the file's value format {version} is newer than this tb understands ({NEWEST_FORMAT_VERSION})"
            );
        }
        let loony = match meta.get("loony").map(String::as_str) {
            None => false,
            Some("true") => true,
            Some(other) => bail!("the file has a bad `loony` value `{other}`"),
        };
        let board: Board = get("board")?.parse()?;
        let start = notation::parse_position(&board, get("start_position")?)?.lines;
        let chains = match meta.get("chains") {
            None => Chains::none(),
            Some(text) => chains_from_meta(&board, start, text)?,
        };
        // Plain files are of format 1 (values as they are) or 5 (boxes-left form);
        // loony files of 2 (offer bits stored), 3 or 6 (boxes-left form); chain
        // files of 4.
        let (kind, formats): (_, &[u32]) = match (loony, chains.is_empty()) {
            (true, true) => (
                "loony",
                &[
                    OLDEST_LOONY_FORMAT_VERSION,
                    LOONY_FORMAT_VERSION,
                    LOONY_BOXES_LEFT_FORMAT_VERSION,
                ],
            ),
            (false, true) => ("plain", &[FORMAT_VERSION, BOXES_LEFT_FORMAT_VERSION]),
            (false, false) => ("chain", &[CHAINS_FORMAT_VERSION]),
            (true, false) => bail!("the file claims both loony analysis and chains"),
        };
        if !formats.contains(&version) {
            bail!("the file's value format {version} is not one of a {kind} file ({formats:?})");
        }
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
            boxes_left_form: stores_boxes_left(version),
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
        // position, which the layer checks hold them to).
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

    #[test]
    fn group_sizes_must_cover_the_free_lines() {
        let b: Board = "2x2".parse().unwrap();
        assert!(parse_groups(&b, 0, "6,6").is_ok());
        assert!(parse_groups(&b, 0, "6,5").is_err());
        assert!(parse_groups(&b, 0, "x").is_err());
        assert!(parse_groups(&b, 0, "12,0").is_err());
    }
}
