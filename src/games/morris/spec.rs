//! What a Morris tablebase holds: the stone limit, the rules and format recorded in
//! its meta, how table pairs are numbered as layers, and the file format as the
//! generic code reads it ([`MorrisFormat`]), which readers and the builder share.

use super::geometry::BoardKind;
use super::index::{
    MIN_STONES, class_count_on, table_for_each_in_range, table_neighbours, table_size,
};
use super::sector::Sector;
use super::variant::Rules;
use crate::retro::{BlockKey, Format};
use crate::store::checksum::digest_element;
use crate::store::codec::{ChunkCoding, Contexts, FAMILY_KEY, Family, Neighbours, Site};
use crate::store::{MAX_CHUNK_POSITIONS, unknown_format};
use crate::with_board;
use anyhow::{Context, Result, bail, ensure};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The `format_version` of Morris files that name their chunk codings in their
/// own key (`chunk_coding`, [`MorrisSpec::codings`]): value bytes are 0 = draw,
/// else plies + 1. Bumped only for a change that key cannot express. Older
/// versions packed the coding into the number (docs/FORMAT.md §9.11): 1 zstd
/// chunks; 2 also context-mixing chunks (`store::codec`), which a tb that knows
/// only 1 cannot read; 3 also context-mixing chunks with a checksum of their coded
/// bytes (`codec::TAG_MIX_CHECKED`), so that a probe decodes a chunk only up to the
/// last value it needs. A tb that knows only those refuses this version, as it
/// must: it would not read the key.
pub const FORMAT_VERSION: u32 = 4;

/// The `format_version` of Morris files whose wins are stored without their
/// distance ([`MorrisSpec::marks_wins`], feature key [`VALUE_FORM_KEY`]): every
/// won position's byte is [`super::value::WIN_MARK`], its distance recomputed one
/// ply further by the readers. A tb that knows only [`FORMAT_VERSION`] refuses
/// these files, as it must: it would read every win as a win in one ply. Files
/// that store every distance stay [`FORMAT_VERSION`].
pub const MARKED_FORMAT_VERSION: u32 = 5;

/// The feature key of [`MARKED_FORMAT_VERSION`] files: `value_form` =
/// [`WINS_MARKED`].
pub const VALUE_FORM_KEY: &str = "value_form";

/// The [`VALUE_FORM_KEY`] value of a file whose wins are marked.
pub const WINS_MARKED: &str = "wins-marked";

/// The legacy `format_version`s and the chunk codings each packs.
const LEGACY_FORMATS: [(u32, Family); 3] =
    [(1, Family::Zstd), (2, Family::Mix), (3, Family::MixChecked)];

/// Positions per stored chunk of a new file. A cold probe decodes a chunk for each
/// of the position's moves (up to some 40 in the big tables), at 4-7 M values/s
/// per core for context mixing, so the chunk size sets its time. Measured on pair
/// 6-6 (one thread): chunks of 8,192 store 1.341 bits/position and decode in
/// 1.2-1.9 ms, chunks of 4,096 1.459 bits (+9%) in 0.66-0.73 ms, chunks of 2,048
/// 1.598 bits (+19%) with little time saved (the per-chunk costs). On the full
/// nine-stone file the hardest probes (8-9 stones, many captures, children in some
/// 30 chunks) are what count: in chunks of 2,048 the slowest of 40 such cold probes
/// took 11-20 ms (2026-11-27), in chunks of 4,096 25-31 ms (2026-11-26), for 7% more
/// bytes (2.923 against 2.736 bits/position).
pub const DEFAULT_CHUNK_POSITIONS: u64 = 2048;

/// The rules recorded in a Nine Men's Morris file's meta (docs/FORMAT.md §4, §9.3;
/// each rule set's in [`super::variant::RuleSet::meta`]).
pub const RULES: &str = Rules::Nine.set().meta;

/// Which phases of the game a Morris file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The moving-phase tables (m, o), 3 <= m, o <= stones.
    Moving,
    /// The moving-phase tables and the placement tables, back to the empty board.
    All,
}

impl Phase {
    /// The meta value (`phase`).
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Moving => "moving",
            Phase::All => "all",
        }
    }
}

/// What a Morris tablebase holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MorrisSpec {
    /// The rule set (meta `rules`).
    pub rules: Rules,
    /// Stones per side: tables (m, o) with 3 <= m, o <= `stones`, and with
    /// [`Phase::All`] the placement tables of the game with `stones` in each hand.
    pub stones: u8,
    /// Positions per stored chunk.
    pub chunk_positions: u64,
    /// The phases held.
    pub phase: Phase,
    /// The chunk codings the file may hold (what a new file gets:
    /// [`Family::MixChecked`]).
    pub codings: Family,
    /// The file's `format_version` packs its codings (files from before the
    /// `chunk_coding` key, formats 1 to 3): a build resumed on one keeps its meta
    /// so. False for every file this tb creates.
    pub packed_format: bool,
    /// Every won position is stored as [`super::value::WIN_MARK`], not with its
    /// distance (files of [`MARKED_FORMAT_VERSION`], written by `tb recode
    /// --coding archive`): a win's distance is one more than its shortest losing
    /// child's, which is stored, so a reader recomputes it one ply further
    /// (about half the bytes of an archival file). Builds write every distance.
    pub marks_wins: bool,
}

/// First layer number of the placement tables: layer `PLACEMENT_LAYERS + h` holds
/// the positions with `h` stones in hand in all (both sides), one block per table
/// (m, o) of stones on the board (side to move, opponent). Moving-phase layers are
/// the pairs `10 a + b` <= 99.
pub const PLACEMENT_LAYERS: usize = 100;

/// The placement layer of the positions with `h` stones in hand in all.
pub fn placement_layer(h: u8) -> usize {
    PLACEMENT_LAYERS + h as usize
}

/// The stones in hand of a placement layer, or None for a moving-phase or sector
/// layer.
pub fn layer_hands(layer: usize) -> Option<u8> {
    (PLACEMENT_LAYERS < layer && layer < SECTOR_LAYERS).then(|| (layer - PLACEMENT_LAYERS) as u8)
}

/// First layer number of the sector pairs of the rule sets that move during
/// placement (Lasker): layer `SECTOR_LAYERS + code` holds the pair of the canonical
/// sector (m, o, hm, ho) ([`super::sector`]), code = ((16 m + o) 16 + hm) 16 + ho,
/// one block holding the sector and its swap. Their files have no other layers.
pub const SECTOR_LAYERS: usize = 1000;

/// The layer of the sector pair holding `sector`.
pub fn sector_layer(sector: Sector) -> usize {
    SECTOR_LAYERS + sector_code(sector.canonical()) as usize
}

/// ((16 m + o) 16 + hm) 16 + ho: a sector in 16 bits (counts up to 15).
fn sector_code(s: Sector) -> u64 {
    ((u64::from(s.m) * 16 + u64::from(s.o)) * 16 + u64::from(s.hm)) * 16 + u64::from(s.ho)
}

/// The canonical sector of a sector layer, or None for another layer.
pub fn layer_sector(layer: usize) -> Option<Sector> {
    let code = layer.checked_sub(SECTOR_LAYERS).filter(|&c| c < 1 << 16)?;
    let digit = |k: usize| (code >> (4 * k) & 15) as u8;
    Some(Sector::new(digit(3), digit(2), digit(1), digit(0)))
}

/// Stones in hand (side to move, opponent) when `h` are in hand in all: White
/// places first, so White moves with as many in hand as Black, Black with one more.
pub fn hands_of(h: u8) -> (u8, u8) {
    (h.div_ceil(2), h / 2)
}

/// `placement, 17 in hand`.
pub fn placement_label(h: u8) -> String {
    format!("placement, {h} in hand")
}

/// The `format_version` of a Morris file's meta, checked to be one this tb reads.
pub fn format_version(meta: &BTreeMap<String, String>) -> Result<u32> {
    let version: u32 = meta
        .get("format_version")
        .context("the file has no `format_version` metadata")?
        .parse()
        .context("bad `format_version` metadata")?;
    if version > MARKED_FORMAT_VERSION {
        return Err(unknown_format(format!(
            "the file's value format {version} is newer than this tb understands ({MARKED_FORMAT_VERSION})"
        )));
    }
    if version == 0 {
        bail!("the file's value format 0 does not exist (formats 1..={MARKED_FORMAT_VERSION})");
    }
    Ok(version)
}

/// First layer number of the moving-phase pairs {a, b} with b >= 10 (Morabaraba's
/// 10 to 12 stones a side): layer `WIDE_PAIR_LAYERS + 16 a + b`, past every sector
/// layer (`10 a + b` would run into the placement layers).
pub const WIDE_PAIR_LAYERS: usize = SECTOR_LAYERS + (1 << 16);

/// The layer number of the pair {a, b}: `10 a + b` with a <= b (`34` = 3-4/4-3)
/// while b <= 9, else `WIDE_PAIR_LAYERS + 16 a + b`.
pub fn pair_layer(m: u8, o: u8) -> usize {
    let (a, b) = (usize::from(m.min(o)), usize::from(m.max(o)));
    if b < 10 {
        10 * a + b
    } else {
        WIDE_PAIR_LAYERS + 16 * a + b
    }
}

/// `3-3`, or `3-4/4-3` for a pair of two tables; for a sector pair `3-4 h1-0`,
/// or `3-4 h1-0/4-3 h0-1`.
pub fn pair_label(layer: usize) -> String {
    if let Some(s) = layer_sector(layer) {
        return s
            .pair()
            .into_iter()
            .map(Sector::label)
            .collect::<Vec<_>>()
            .join("/");
    }
    let (a, b) = layer_pair(layer);
    if a == b {
        format!("{a}-{b}")
    } else {
        format!("{a}-{b}/{b}-{a}")
    }
}

/// How `tb info` and `tb serve` name a layer's tables: the pair (`3-4/4-3`), or
/// the placement tables with h stones in hand (`h17`).
pub fn table_label(layer: usize) -> String {
    match layer_hands(layer) {
        Some(h) => format!("h{h}"),
        None => pair_label(layer),
    }
}

/// The pair {a, b} (a <= b) of a layer number ([`pair_layer`]).
pub fn layer_pair(layer: usize) -> (u8, u8) {
    match layer.checked_sub(WIDE_PAIR_LAYERS) {
        Some(code) => ((code / 16) as u8, (code % 16) as u8),
        None => ((layer / 10) as u8, (layer % 10) as u8),
    }
}

/// Calls `each(m, o, local, table_start)` for every table of `tables` (one after
/// the other in a block, in that order) holding some of the block's indices
/// `first..first + len`: `local` those indices as the table's own, `table_start`
/// the table's first index in the block. Stops at a table of no known size.
fn for_each_table_part(
    board: BoardKind,
    tables: &[(u8, u8)],
    first: u64,
    len: usize,
    mut each: impl FnMut(u8, u8, std::ops::Range<u64>, u64),
) {
    let end = first + len as u64;
    let mut start = 0;
    for &(m, o) in tables {
        let Ok(size) = table_size(board, m, o) else {
            break;
        };
        let range = first.max(start)..end.min(start + size);
        if range.start < range.end {
            each(m, o, range.start - start..range.end - start, start);
        }
        start += size;
    }
}

impl MorrisSpec {
    /// Nine Men's Morris up to `stones` a side; checks the stone limit.
    pub fn new(stones: u8, chunk_positions: u64, phase: Phase) -> Result<MorrisSpec> {
        MorrisSpec::with_rules(Rules::Nine, stones, chunk_positions, phase)
    }

    /// The game of `rules` up to `stones` a side; checks the stone limit.
    pub fn with_rules(
        rules: Rules,
        stones: u8,
        chunk_positions: u64,
        phase: Phase,
    ) -> Result<MorrisSpec> {
        let max = rules.stones();
        ensure!(
            (MIN_STONES..=max).contains(&stones),
            "--stones must be between {MIN_STONES} and {max} for the {rules} rules, not {stones}"
        );
        ensure!(
            (1..=MAX_CHUNK_POSITIONS).contains(&chunk_positions),
            "--chunk must be between 1 and {MAX_CHUNK_POSITIONS}"
        );
        Ok(MorrisSpec {
            rules,
            stones,
            chunk_positions,
            phase,
            codings: Family::MixChecked,
            packed_format: false,
            marks_wins: false,
        })
    }

    /// The file's `format_version`: [`FORMAT_VERSION`], or the legacy version that
    /// packs the codings of a [`MorrisSpec::packed_format`] file.
    pub fn format_version(&self) -> u32 {
        if self.marks_wins {
            return MARKED_FORMAT_VERSION;
        }
        if !self.packed_format {
            return FORMAT_VERSION;
        }
        LEGACY_FORMATS
            .iter()
            .find(|&&(_, codings)| codings == self.codings)
            .map_or(FORMAT_VERSION, |&(version, _)| version)
    }

    /// The feature keys (docs/FORMAT.md §9.11): written into every file of
    /// [`FORMAT_VERSION`]; for a [`MorrisSpec::packed_format`] file what its
    /// version packs (`tb info` shows them).
    pub fn features(&self) -> Vec<(&'static str, String)> {
        let mut keys = vec![(FAMILY_KEY, self.codings.name().to_string())];
        if self.marks_wins {
            keys.push((VALUE_FORM_KEY, WINS_MARKED.to_string()));
        }
        keys
    }

    /// The default file: `morris.tb`, or `morris-<N>.tb` below nine stones; for
    /// other rules `morris-<rules>.tb`, `morris-<rules>-<N>.tb`.
    pub fn default_db(&self) -> PathBuf {
        let name = match self.rules {
            Rules::Nine => "morris".to_string(),
            rules => format!("morris-{rules}"),
        };
        if self.stones == self.rules.stones() {
            format!("{name}.tb").into()
        } else {
            format!("{name}-{}.tb", self.stones).into()
        }
    }

    /// The board of the rules.
    pub fn board(&self) -> BoardKind {
        self.rules.board()
    }

    /// Metadata rows identifying the tablebase: the feature keys, or for a
    /// [`MorrisSpec::packed_format`] file its legacy rows.
    pub fn to_meta(&self) -> Vec<(&'static str, String)> {
        let mut meta = vec![
            ("game", "morris".to_string()),
            ("rules", self.rules.set().meta.to_string()),
            ("phase", self.phase.as_str().to_string()),
            ("stones", self.stones.to_string()),
            ("chunk_positions", self.chunk_positions.to_string()),
            ("format_version", self.format_version().to_string()),
        ];
        if !self.packed_format {
            meta.extend(self.features());
        }
        meta
    }

    /// Reads the identity back from a file's metadata.
    pub fn from_meta(meta: &BTreeMap<String, String>) -> Result<MorrisSpec> {
        let get = |k: &str| {
            meta.get(k)
                .with_context(|| format!("the file has no `{k}` metadata"))
        };
        if get("game")? != "morris" {
            bail!("the file holds the game `{}`, not morris", get("game")?);
        }
        let version = format_version(meta)?;
        let legacy = LEGACY_FORMATS.iter().find(|&&(v, _)| v == version);
        let packed_format = legacy.is_some();
        let codings = if let Some(&(_, codings)) = legacy {
            codings
        } else {
            let name = get(FAMILY_KEY)?;
            match Family::parse(name) {
                // The fast archival coding's contexts are Dots-and-Boxes rows.
                Some(family) if family != Family::ArchiveFast => family,
                _ => {
                    return Err(unknown_format(format!(
                        "the file's chunks are coded `{name}`, unknown to this tb"
                    )));
                }
            }
        };
        let rules = Rules::from_meta(get("rules")?)?;
        let phase = match get("phase")?.as_str() {
            "moving" => Phase::Moving,
            "all" => Phase::All,
            other => bail!("the file holds the `{other}` phase, this tb reads `moving` and `all`"),
        };
        let stones: u8 = get("stones")?.parse().context("bad `stones` metadata")?;
        let chunk: u64 = get("chunk_positions")?
            .parse()
            .context("bad `chunk_positions` metadata")?;
        let marks_wins = version == MARKED_FORMAT_VERSION;
        if marks_wins && get(VALUE_FORM_KEY)? != WINS_MARKED {
            return Err(unknown_format(format!(
                "the file's values are stored as `{}`, unknown to this tb",
                get(VALUE_FORM_KEY)?
            )));
        }
        let spec = MorrisSpec {
            codings,
            packed_format,
            marks_wins,
            ..MorrisSpec::with_rules(rules, stones, chunk, phase).context("bad metadata")?
        };
        if !marks_wins && meta.contains_key(VALUE_FORM_KEY) {
            return Err(crate::store::StoreError::damaged(
                crate::store::Place::Meta(VALUE_FORM_KEY.to_string()),
                format!("a file of value format {version} has no `{VALUE_FORM_KEY}`"),
            )
            .into());
        }
        // Exactly what this tb writes (the format version was checked above).
        crate::store::check_no_feature_keys(meta, &spec.to_meta(), &spec.features(), version)?;
        for (key, value) in spec.to_meta() {
            if key != "format_version" && get(key)? != &value {
                bail!(
                    "the file's `{key}` metadata `{}` is not as this tb writes it (`{value}`)",
                    get(key)?
                );
            }
        }
        Ok(spec)
    }

    /// The sector pairs (canonical sectors) in build order, for the rules that
    /// move during placement (none for the others): the moving phase's (both
    /// hands empty), and with [`Phase::All`] every sector with stones in hand.
    pub fn sector_pairs(&self) -> Vec<Sector> {
        if !self.rules.moving_in_placement() {
            return Vec::new();
        }
        Sector::all_pairs(self.stones, self.phase == Phase::All)
    }

    /// The pairs {a, b} (a <= b) in build order: by total stones, then a. None
    /// for the rules that move during placement (their moving-phase pairs are
    /// [`MorrisSpec::sector_pairs`] with empty hands).
    pub fn pairs(&self) -> Vec<(u8, u8)> {
        if self.rules.moving_in_placement() {
            return Vec::new();
        }
        let n = self.stones;
        let mut pairs: Vec<(u8, u8)> = (MIN_STONES..=n)
            .flat_map(|a| (a..=n).map(move |b| (a, b)))
            .collect();
        pairs.sort_by_key(|&(a, b)| (a + b, a));
        pairs
    }

    /// The placement layers in build order: 1, 2, ... stones in hand (each reads
    /// the one before; 0 in hand is the moving phase). None without placement.
    pub fn placement_hands(&self) -> Vec<u8> {
        match self.phase {
            _ if self.rules.moving_in_placement() => Vec::new(),
            Phase::Moving => Vec::new(),
            Phase::All => (1..=2 * self.stones).collect(),
        }
    }

    /// The tables (m, o) of the placement layer with `h` in hand: every count of
    /// stones on the board the hands allow (a side has placed `stones` minus its hand,
    /// some of them perhaps captured), the empty board's 0-0 included, while both
    /// sides have 3 stones or more on the board and in hand (with fewer the game is
    /// over: the side to move has lost, `L0`, or the other side lost before).
    pub fn placement_tables(&self, h: u8) -> Vec<(u8, u8)> {
        (0..=self.stones)
            .flat_map(|m| (0..=self.stones).map(move |o| (m, o)))
            .filter(|&(m, o)| self.has_placement_table(h, m, o))
            .collect()
    }

    /// Whether table (m, o) with `h` in hand is one of [`MorrisSpec::placement_tables`].
    pub fn has_placement_table(&self, h: u8, m: u8, o: u8) -> bool {
        let (hm, ho) = hands_of(h);
        (1..=2 * self.stones).contains(&h)
            && m + hm <= self.stones
            && o + ho <= self.stones
            && m + hm >= MIN_STONES
            && o + ho >= MIN_STONES
    }

    /// The tables of a pair in block order: (a, b), then (b, a) unless a == b.
    pub fn tables_of_pair(a: u8, b: u8) -> Vec<(u8, u8)> {
        if a == b {
            vec![(a, b)]
        } else {
            vec![(a, b), (b, a)]
        }
    }

    /// What the file's codings need of the `len` classes of block `key` of `layer`
    /// from index `first` on: their sites in an archival file
    /// ([`MorrisSpec::block_sites`]), else their neighbours.
    pub fn block_contexts(&self, layer: usize, key: &[u8], first: u64, len: usize) -> Contexts {
        let board = self.board();
        match self.codings {
            Family::Archive => Self::block_sites(board, layer, key, first, len).into(),
            _ => Self::block_neighbours(board, layer, key, first, len).into(),
        }
    }

    /// The coding neighbours (`store::codec`) of the `len` classes of block `key` of
    /// `layer` from index `first` on: a table pair's, or a placement table's (whose
    /// block is the one table `key` = (m, o)).
    pub fn block_neighbours(
        board: BoardKind,
        layer: usize,
        key: &[u8],
        first: u64,
        len: usize,
    ) -> Vec<Neighbours> {
        Self::tables_neighbours(board, &Self::block_tables(layer, key), first, len)
    }

    /// The tables a block of `layer` holds, one after the other: a sector pair's,
    /// a moving pair's ((a, b), then (b, a) unless a = b), or the placement table
    /// `key` = (m, o) (none for a key of another length).
    fn block_tables(layer: usize, key: &[u8]) -> Vec<(u8, u8)> {
        if let Some(sector) = layer_sector(layer) {
            sector.pair().into_iter().map(|s| (s.m, s.o)).collect()
        } else if layer_hands(layer).is_none() {
            let (a, b) = layer_pair(layer);
            Self::tables_of_pair(a, b)
        } else if let [m, o] = *key {
            vec![(m, o)]
        } else {
            Vec::new()
        }
    }

    /// The archival sites (`store::archive`, [`Site`]) of the `len` classes of
    /// block `key` of `layer` from index `first` on: the coding neighbours of
    /// [`MorrisSpec::block_neighbours`], and as the feature a summary of the
    /// position ([`position_feature`]).
    pub fn block_sites(
        board: BoardKind,
        layer: usize,
        key: &[u8],
        first: u64,
        len: usize,
    ) -> Vec<Site> {
        let tables = Self::block_tables(layer, key);
        let neighbours = Self::tables_neighbours(board, &tables, first, len);
        // Indices past the block (a corrupt row count) keep feature 0.
        let mut features = vec![0u16; len];
        for_each_table_part(board, &tables, first, len, |m, o, local, table_start| {
            with_board!(board, B => {
                let _ = table_for_each_in_range(board, m, o, local, |i, mover, opponent| {
                    let at = (table_start + i - first) as usize;
                    features[at] = position_feature::<B>(mover, opponent);
                });
            });
        });
        neighbours
            .into_iter()
            .zip(features)
            .map(|(back, feature)| Site { back, feature })
            .collect()
    }

    /// The coding neighbours (`store::codec`) of the `len` classes of pair `layer`
    /// from index `first` of its block on (table (a, b), then (b, a)).
    pub fn pair_neighbours(
        board: BoardKind,
        layer: usize,
        first: u64,
        len: usize,
    ) -> Vec<Neighbours> {
        let (a, b) = layer_pair(layer);
        Self::tables_neighbours(board, &Self::tables_of_pair(a, b), first, len)
    }

    /// The coding neighbours of the `len` classes from index `first` on of a block
    /// holding `tables` one after the other.
    fn tables_neighbours(
        board: BoardKind,
        tables: &[(u8, u8)],
        first: u64,
        len: usize,
    ) -> Vec<Neighbours> {
        let mut out = Vec::with_capacity(len);
        for_each_table_part(board, tables, first, len, |m, o, local, _| {
            table_neighbours(board, m, o, local, &mut out);
        });
        // Indices past the pair (a corrupt row count) get no neighbours.
        out.resize(len, [0, 0, 0, 0]);
        out
    }

    /// The pairs the captures of pair (a, b) lead to, each once, sorted: a capture
    /// in table (m, o) leaves the opponent, now to move, a stone fewer (none below
    /// [`MIN_STONES`]).
    pub fn capture_pairs(a: u8, b: u8) -> Vec<(u8, u8)> {
        let mut pairs: Vec<(u8, u8)> = MorrisSpec::tables_of_pair(a, b)
            .into_iter()
            .filter(|&(_, o)| o > MIN_STONES)
            .map(|(m, o)| ((o - 1).min(m), (o - 1).max(m)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// Classes in the block of pair {a, b}: its tables' classes.
    pub fn pair_size(board: BoardKind, a: u8, b: u8) -> u64 {
        Self::tables_of_pair(a, b)
            .into_iter()
            .map(|(m, o)| class_count_on(board, m, o))
            .sum()
    }

    /// Where table (m, o) starts in its pair's block.
    pub fn offset_in_pair(board: BoardKind, m: u8, o: u8) -> Result<u64> {
        Ok(if m <= o { 0 } else { table_size(board, o, m)? })
    }

    /// Classes in the block of the sector pair of `sector`: its sectors' classes.
    pub fn sector_pair_size(board: BoardKind, sector: Sector) -> u64 {
        sector
            .pair()
            .into_iter()
            .map(|s| class_count_on(board, s.m, s.o))
            .sum()
    }

    /// Where `sector`'s values start in its pair's block (after the canonical
    /// sector's, for the swapped one).
    pub fn offset_in_sector_pair(board: BoardKind, sector: Sector) -> Result<u64> {
        let first = sector.canonical();
        Ok(if sector == first {
            0
        } else {
            table_size(board, first.m, first.o)?
        })
    }
}

/// The archival feature of a position (`store::archive`: mixed with the values
/// around it) from the stones of the side to move and of the opponent: for each
/// side, its open twos (mills with two of its stones and the third point empty:
/// a mill it may close) and its stones that can slide (with an empty point
/// beside them; none: it cannot move), each capped at 3, two bits each.
pub fn position_feature<B: super::geometry::Board>(mover: u32, opponent: u32) -> u16 {
    // Without a popcount instruction (the baseline target), bit tricks: this is a
    // sixth of an archival chunk's decoding.
    let twos = |own: u32, other: u32| {
        let mut n = 0u16;
        for &mill in B::MILLS {
            let x = mill & own;
            // Exactly two of the mill's three points (more than one bit, not all
            // three), the third not the other side's: empty.
            n += u16::from(x & x.wrapping_sub(1) != 0 && x != mill && mill & other == 0);
        }
        n.min(3)
    };
    let empty = B::FULL & !(mover | opponent);
    let movable = |mut own: u32| {
        let mut n = 0u16;
        while own != 0 && n < 3 {
            let p = own.trailing_zeros() as usize;
            own &= own - 1;
            n += u16::from(B::ADJACENT[p] & empty != 0);
        }
        n
    };
    twos(mover, opponent)
        | twos(opponent, mover) << 2
        | movable(mover) << 4
        | movable(opponent) << 6
}

/// The digest of the values of a sector pair's block from index `first` on: each
/// class keyed by its sets and its sector (the same sets in two sectors differ).
fn sector_pair_digest(board: BoardKind, sector: Sector, first: u64, values: &[i8]) -> u64 {
    let mut digest = 0u64;
    let mut index = first;
    for s in sector.pair() {
        let size = table_size(board, s.m, s.o).expect("valid table");
        let start = MorrisSpec::offset_in_sector_pair(board, s).expect("valid table");
        let upto = (start + size).min(first + values.len() as u64);
        if index < upto {
            let range = index - start..upto - start;
            table_for_each_in_range(board, s.m, s.o, range, |i, mover, opponent| {
                let key = u64::from(mover) | u64::from(opponent) << 24 | sector_code(s) << 48;
                let v = values[(start + i - first) as usize];
                digest = digest.wrapping_add(digest_element(key, v));
            })
            .expect("valid table");
            index = upto;
        }
    }
    digest
}

/// The Morris file format as the generic code reads it: a layer per table pair
/// {(a, b), (b, a)} (one block holding both) and per stones in hand of the
/// placement (a block per table (m, o) on the board); values are the bytes of
/// [`super::value`], chunks context-mixing coded. Every table is kept.
#[derive(Debug, Clone)]
pub struct MorrisFormat {
    spec: MorrisSpec,
}

impl MorrisFormat {
    /// The format of the file `spec` describes (builds the table indices on first
    /// use).
    pub fn new(spec: MorrisSpec) -> MorrisFormat {
        MorrisFormat { spec }
    }

    /// What the file holds.
    pub fn spec(&self) -> &MorrisSpec {
        &self.spec
    }
}

impl Format for MorrisFormat {
    fn identity(&self) -> Vec<(&'static str, String)> {
        self.spec.to_meta()
    }

    fn layers(&self) -> Vec<usize> {
        let moving = self.spec.pairs().into_iter().map(|(a, b)| pair_layer(a, b));
        let placement = self.spec.placement_hands().into_iter().map(placement_layer);
        let sectors = self.spec.sector_pairs().into_iter().map(sector_layer);
        moving.chain(placement).chain(sectors).collect()
    }

    fn layer_label(&self, layer: usize) -> String {
        if let Some(h) = layer_hands(layer) {
            return placement_label(h);
        }
        if layer_sector(layer).is_some() {
            return format!("sectors {}", pair_label(layer));
        }
        let (a, b) = layer_pair(layer);
        let plural = if a == b { "" } else { "s" };
        format!("table{plural} {}", pair_label(layer))
    }

    fn blocks(&self, layer: usize) -> Vec<BlockKey> {
        if let Some(s) = layer_sector(layer) {
            return vec![vec![s.m, s.o, s.hm, s.ho]];
        }
        if let Some(h) = layer_hands(layer) {
            return self
                .spec
                .placement_tables(h)
                .into_iter()
                .map(|(m, o)| vec![m, o])
                .collect();
        }
        let (a, b) = layer_pair(layer);
        vec![vec![a, b]]
    }

    fn block_size(&self, layer: usize, key: &[u8]) -> u64 {
        let board = self.spec.board();
        if let Some(sector) = layer_sector(layer) {
            return MorrisSpec::sector_pair_size(board, sector);
        }
        if layer_hands(layer).is_some() {
            return class_count_on(board, key[0], key[1]);
        }
        let (a, b) = layer_pair(layer);
        MorrisSpec::pair_size(board, a, b)
    }

    fn keeps(&self, _layer: usize) -> bool {
        true
    }

    fn digest(&self, layer: usize, key: &[u8], first: u64, values: &[i8]) -> u64 {
        let board = self.spec.board();
        if let Some(sector) = layer_sector(layer) {
            return sector_pair_digest(board, sector, first, values);
        }
        if let Some(h) = layer_hands(layer) {
            let (m, o) = (key[0], key[1]);
            let mut digest = 0u64;
            let size = table_size(board, m, o).expect("valid table");
            let end = (first + values.len() as u64).min(size);
            let range = first.min(end)..end;
            table_for_each_in_range(board, m, o, range, |i, mover, opponent| {
                // Hands and table above the two 24-bit sets.
                let key = u64::from(mover)
                    | u64::from(opponent) << 24
                    | (100 * h as u64 + 10 * m as u64 + o as u64) << 48;
                let v = values[(i - first) as usize];
                digest = digest.wrapping_add(digest_element(key, v));
            })
            .expect("valid table");
            return digest;
        }
        let (a, b) = layer_pair(layer);
        let mut digest = 0u64;
        let mut index = first;
        for (m, o) in MorrisSpec::tables_of_pair(a, b) {
            let size = table_size(board, m, o).expect("valid table");
            let start = MorrisSpec::offset_in_pair(board, m, o).expect("valid table");
            let end = start + size;
            let upto = end.min(first + values.len() as u64);
            if index < upto {
                let range = index - start..upto - start;
                table_for_each_in_range(board, m, o, range, |i, mover, opponent| {
                    // Table id above the two 24-bit sets: the same sets in two tables differ.
                    let key = u64::from(mover)
                        | u64::from(opponent) << 24
                        | (10 * m as u64 + o as u64) << 48;
                    let v = values[(start + i - first) as usize];
                    digest = digest.wrapping_add(digest_element(key, v));
                })
                .expect("valid table");
                index = upto;
            }
        }
        digest
    }

    fn chunk_positions(&self) -> u64 {
        self.spec.chunk_positions
    }

    /// Context mixing: 21-25% smaller than zstd on Morris values; the archival
    /// coder, or zstd, for a file recoded so (`tb recode --coding archive|zstd`).
    fn chunk_coding(&self) -> ChunkCoding {
        match self.spec.codings {
            Family::Archive => ChunkCoding::Archive,
            Family::Zstd => ChunkCoding::Zstd(crate::retro::format::ZSTD_LEVEL),
            _ => ChunkCoding::Mix,
        }
    }

    fn chunk_contexts(&self, layer: usize, key: &[u8], first: u64, len: usize) -> Contexts {
        self.spec.block_contexts(layer, key, first, len)
    }

    /// A file that marks wins stores every win as [`super::value::WIN_MARK`]
    /// (their distances come back one ply further, in the readers: not here,
    /// where a chunk's children are not at hand).
    fn stored_form<'a>(
        &self,
        _layer: usize,
        _key: &[u8],
        _first: u64,
        values: &'a [i8],
    ) -> std::borrow::Cow<'a, [i8]> {
        if !self.spec.marks_wins {
            return std::borrow::Cow::Borrowed(values);
        }
        let marked = values
            .iter()
            .map(|&v| super::value::mark_win(v as u8) as i8)
            .collect();
        std::borrow::Cow::Owned(marked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_layers_round_trip_up_to_twelve_stones() {
        let mut seen = std::collections::HashSet::new();
        for a in 0..=12u8 {
            for b in a..=12u8 {
                let layer = pair_layer(b, a);
                assert_eq!(layer_pair(layer), (a, b));
                assert!(seen.insert(layer));
                assert_eq!(layer_hands(layer), None, "{a}-{b}");
                assert_eq!(layer_sector(layer), None, "{a}-{b}");
            }
        }
        // Nine's numbers are unchanged.
        assert_eq!(pair_layer(3, 4), 34);
        assert_eq!(pair_layer(9, 9), 99);
    }

    /// The archival feature as its definition counts it (open twos: a mill
    /// with two own stones and an empty point; stones with an empty point
    /// beside them), on every board and random positions (archival files store
    /// values coded with it: it must never change).
    #[test]
    fn the_position_feature_counts_open_twos_and_movable_stones() {
        use super::super::geometry::{Board, Morabaraba, Nine, Six};
        fn by_definition<B: Board>(mover: u32, opponent: u32) -> u16 {
            let empty = B::FULL & !(mover | opponent);
            let twos = |own: u32| {
                let n = (B::MILLS.iter())
                    .filter(|&&mill| (mill & own).count_ones() == 2 && mill & empty != 0)
                    .count();
                n.min(3) as u16
            };
            let movable = |own: u32| {
                let n = (0..32)
                    .filter(|&p| own >> p & 1 == 1 && B::ADJACENT[p] & empty != 0)
                    .count();
                n.min(3) as u16
            };
            twos(mover) | twos(opponent) << 2 | movable(mover) << 4 | movable(opponent) << 6
        }
        fn check<B: Board>() {
            let mut below = crate::test_rng::below(46);
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..200_000 {
                // Each point empty, the mover's or the opponent's, in changing
                // proportions.
                let (mut mover, mut opponent) = (0u32, 0u32);
                let fill = below(100);
                for p in 0..B::POINTS {
                    if below(100) < fill {
                        if below(2) == 0 {
                            mover |= 1 << p;
                        } else {
                            opponent |= 1 << p;
                        }
                    }
                }
                let feature = position_feature::<B>(mover, opponent);
                assert_eq!(
                    feature,
                    by_definition::<B>(mover, opponent),
                    "{mover:x} {opponent:x}"
                );
                seen.insert(feature);
            }
            assert!(seen.len() > 50, "{}", seen.len());
        }
        check::<Nine>();
        check::<Six>();
        check::<Morabaraba>();
    }

    /// The archival sites of any part of a block are that part of the whole
    /// block's (a probe decodes a chunk up to the value it needs), their
    /// neighbours are the context-mixing ones, and the features vary.
    #[test]
    fn archival_sites_of_a_part_are_the_part_of_the_whole() {
        let board = BoardKind::Nine;
        for (layer, key) in [
            (pair_layer(3, 4), vec![]),
            (placement_layer(2), vec![3u8, 3]),
        ] {
            let size = if key.is_empty() {
                MorrisSpec::pair_size(board, 3, 4)
            } else {
                table_size(board, 3, 3).unwrap()
            };
            let whole = MorrisSpec::block_sites(board, layer, &key, 0, size as usize);
            let neighbours = MorrisSpec::block_neighbours(board, layer, &key, 0, size as usize);
            assert!(whole.iter().zip(&neighbours).all(|(s, n)| s.back == *n));
            let features: std::collections::BTreeSet<u16> =
                whole.iter().map(|s| s.feature).collect();
            assert!(features.len() > 20, "{layer}: {features:?}");
            let cut = size / 3 + 7;
            // Across the pair's two tables, (3, 4) then (4, 3).
            let across = if key.is_empty() {
                table_size(board, 3, 4).unwrap() - 50
            } else {
                size / 2
            };
            for (first, len) in [(0, 1000), (cut, 2048), (across, 100), (size - 100, 100)] {
                let part = MorrisSpec::block_sites(board, layer, &key, first, len as usize);
                assert_eq!(
                    part,
                    whole[first as usize..(first + len) as usize],
                    "{layer} {first}"
                );
            }
            // Past the block: neighbours and feature 0.
            let past = MorrisSpec::block_sites(board, layer, &key, size - 1, 3);
            assert_eq!(past[1..], [Site::default(); 2]);
        }
    }
}
