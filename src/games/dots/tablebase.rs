//! Reading a built tablebase: open once, look positions up through a chunk cache,
//! and answer probes (the value of a position and of each of its moves, a
//! [`Probe`]).

use super::board::{Board, Lines};
use super::boxes_left::{LeftMap, box_masks, boxes_left, flip};
use super::chains::Chains;
use super::format::DotsFormat;
use super::layout::Layout;
use super::loony::{Detector, Loony, OfferMap, SetOffers};
use super::notation::ParsedPosition;
use super::probe::{MoveValue, Probe, Source, sort_moves};
use super::search::{Limits, SearchOptions, Solver};
use super::spec::Spec;
use crate::retro::audit::{check_layer_size, prepare_read_rows};
use crate::store::reader::ChunkReader;
use crate::store::{LayerRow, Place, Store, StoreError, readable_layers};
use anyhow::{Result, bail};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An open tablebase file.
pub struct Tablebase {
    reader: ChunkReader,
    spec: Spec,
    layout: Layout,
    layers: BTreeMap<usize, LayerRow>,
    /// `readable[n]`: layer n can be read.
    readable: Vec<bool>,
    /// Bit n: layer n's row holds the positions the layout gives it, checked when
    /// the layer is first read (checking every layer at open would build the
    /// layout's tables for every block shape, most of a cold probe).
    sizes_checked: Cell<u128>,
    /// The file, for the errors of those checks.
    path: PathBuf,
    completion: Vec<[Lines; 2]>,
    /// The boxes' lines, for values in the boxes-left form.
    box_masks: Vec<Lines>,
    /// Whether a position offers a loony capture (the bit loony files leave out).
    detector: Detector,
    /// Positions with more open lines than this are not searched.
    search_limit: u32,
    /// Node and time limits of each search.
    search_bounds: Limits,
    solver: RefCell<Option<Solver>>,
}

/// Default for [`Tablebase::set_search_limit`]: open lines the probe fallback
/// searches (about a second of search on 3x4-sized boards).
pub const DEFAULT_SEARCH_LIMIT: u32 = 26;

/// Transposition table of the probe fallback.
const PROBE_TT_BYTES: usize = 64 << 20;

impl Tablebase {
    /// Opens a tablebase file read-only.
    pub fn open(path: &Path) -> Result<Tablebase> {
        Tablebase::from_store(path, Store::open_read(path)?)
    }

    /// A tablebase from the file `path` opened as `store` ([`Store::open_read`]).
    pub fn from_store(path: &Path, mut store: Store) -> Result<Tablebase> {
        // Every problem of the file names it.
        let in_file = |e: anyhow::Error| e.context(path.display().to_string());
        let spec = store
            .meta()
            .and_then(|meta| Spec::from_meta(&meta))
            .map_err(in_file)?;
        let layout = spec.layout();
        let completion = spec.board.completion_masks();
        // Each layer's size is checked when first read (see `check_size`).
        let layers =
            prepare_read_rows(&mut store, &DotsFormat::new(&spec, &layout)).map_err(in_file)?;
        let readable = (0..=64)
            .map(|n| layers.get(&n).is_some_and(|r| r.status.readable()))
            .collect();
        // Archival chunks need their positions' sites (zstd ones nothing).
        let sites = super::sites::Sites::new(&spec.board, &layout);
        let codings = spec.codings;
        let reader = ChunkReader::with_contexts(
            store,
            spec.chunk_positions,
            Box::new(move |_, key, first, len| sites.contexts(codings, key, first, len)),
        );
        let detector = Detector::new(&spec.board);
        let box_masks = box_masks(&spec.board);
        Ok(Tablebase {
            reader,
            spec,
            layout,
            layers,
            readable,
            sizes_checked: Cell::new(0),
            path: path.to_path_buf(),
            completion,
            box_masks,
            detector,
            search_limit: DEFAULT_SEARCH_LIMIT,
            search_bounds: Limits::default(),
            solver: RefCell::new(None),
        })
    }

    /// Shares decoded chunks with the other readers of this file given `shared`
    /// ([`ChunkReader::share`]).
    pub fn share_chunks(&mut self, shared: &crate::store::reader::SharedChunks) {
        self.reader.share(shared);
    }

    /// The file's format (what its layers and blocks are, and how stored values
    /// are restored), for the audit and for reading whole blocks.
    pub fn format(&self) -> DotsFormat<'_> {
        DotsFormat::new(&self.spec, &self.layout)
    }

    /// The tablebase's identity.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.spec.board
    }

    /// Lines drawn at the start.
    pub fn start(&self) -> Lines {
        self.spec.start
    }

    /// The group layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Layer rows as read at open time (the sizes of readable layers not checked
    /// yet: see [`Tablebase::checked_layers`]).
    pub fn layers(&self) -> &BTreeMap<usize, LayerRow> {
        &self.layers
    }

    /// Layer rows, every readable layer's size checked against the layout (for a
    /// report of the whole file).
    pub fn checked_layers(&self) -> Result<&BTreeMap<usize, LayerRow>> {
        for row in self.layers.values().filter(|row| row.status.readable()) {
            self.check_size(row.n)?;
        }
        Ok(&self.layers)
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        self.reader.store()
    }

    /// Whether layer `n` can be read.
    pub fn has_layer(&self, n: usize) -> bool {
        self.readable.get(n).copied().unwrap_or(false)
    }

    /// Boxes that drawing `line` completes in `position`.
    #[inline]
    pub fn boxes_completed(&self, position: Lines, line: usize) -> u32 {
        super::board::boxes_completed_with(position, self.completion[line])
    }

    /// Stored value of a position; `None` if its layer is not stored or the position
    /// lacks some of the start's lines. A corrupt chunk is an error.
    pub fn value(&self, position: Lines) -> Result<Option<i8>> {
        Ok(match self.entry(position)? {
            Some(entry) if self.spec.loony => Some(self.loony_entry(entry)?.0 as i8),
            entry => entry,
        })
    }

    /// What is stored for a position: its value, or in a loony file the byte of
    /// [`super::loony::encode`] (as i8); `None` as for [`Tablebase::value`].
    pub fn entry(&self, position: Lines) -> Result<Option<i8>> {
        if position & self.spec.start != self.spec.start
            || position & !self.spec.board.all_lines() != 0
        {
            return Ok(None);
        }
        if !self.spec.chains.is_empty() {
            return self.chain_value(position);
        }
        let n = position.count_ones() as usize;
        if !self.has_layer(n) {
            return Ok(None);
        }
        let entry = self.stored(n, self.layout.locate_packed(position))?;
        Ok(Some(self.restored(position, entry)))
    }

    /// [`Tablebase::entry`] of a chain file: stored in unit form, or with a chain
    /// partly drawn, what playing it out gives from the value of the chain drawn whole.
    fn chain_value(&self, position: Lines) -> Result<Option<i8>> {
        let chains = &self.spec.chains;
        if let Some(chain) = chains.partial(position) {
            let Some(after) = self.chain_value(position | chain)? else {
                return Ok(None);
            };
            let completes = |p: Lines, line: usize| self.boxes_completed(p, line) as i32;
            let value = Chains::play_out(position, chain, after.into(), completes);
            return Ok(Some(value as i8));
        }
        let units = position | chains.hidden();
        let n = units.count_ones() as usize;
        if !self.has_layer(n) {
            return Ok(None);
        }
        Ok(Some(self.stored(n, self.layout.locate_packed(units))?))
    }

    /// The position a stored unit form stands for (itself in a file without chains;
    /// see [`Spec::chains`]).
    pub fn position_of_units(&self, units: Lines) -> Lines {
        self.spec.chains.from_units(units)
    }

    /// The lines that may be drawn in `position`: the open ones, or with chains
    /// only those of a chain that is partly drawn.
    pub fn legal_moves(&self, position: Lines) -> Lines {
        self.spec
            .chains
            .legal(position, self.spec.board.all_lines() & !position)
    }

    /// A stored entry of `position` as computed: a value in the boxes-left form
    /// turned back into the value, in a loony file with the offer bit, which format
    /// 3 leaves out (the position says what it is).
    #[inline]
    fn restored(&self, position: Lines, entry: i8) -> i8 {
        self.restored_with(position, || boxes_left(&self.box_masks, position), entry)
    }

    /// [`Tablebase::restored`] given the position's boxes left (asked for only in
    /// the boxes-left form).
    #[inline]
    fn restored_with(&self, position: Lines, left: impl FnOnce() -> u32, entry: i8) -> i8 {
        match (self.spec.loony, self.spec.boxes_left_form) {
            (false, false) => entry,
            (false, true) => flip(left(), entry),
            (true, form) => {
                let entry = if form {
                    let flip = super::loony::FlipLoony {
                        clear_offers: false,
                    };
                    flip.map(left(), entry)
                } else {
                    entry
                };
                let offers = self.detector.offers(position);
                SetOffers.map(offers, entry)
            }
        }
    }

    /// A loony file's stored byte decoded: value, flag, offers.
    pub fn loony_entry(&self, entry: i8) -> Result<(i32, Loony, bool)> {
        super::loony::decode(entry as u8).ok_or_else(|| {
            StoreError::damaged(
                Place::File,
                format!("stored byte {} is no loony entry tb writes", entry as u8),
            )
            .into()
        })
    }

    /// The value and, in a loony file, flag of a move completing `boxes` boxes into
    /// a child whose stored entry is `child`.
    fn move_entry(&self, boxes: u32, child: i8) -> Result<(i32, Option<Loony>)> {
        if self.spec.loony {
            self.loony_entry(child)?;
            let key = super::loony::move_key(boxes, child as u8).expect("a checked byte");
            let (value, flag) = super::loony::unkey(key);
            Ok((value, Some(flag)))
        } else {
            Ok((super::board::move_value(boxes, child as i32), None))
        }
    }

    /// Whether this is a loony file (`tb build --loony`).
    pub fn is_loony(&self) -> bool {
        self.spec.loony
    }

    /// The value at `(packed, index)` ([`Layout::locate_packed`]) of layer `n`,
    /// which must be readable.
    #[inline]
    fn stored(&self, n: usize, (packed, index): (u128, u64)) -> Result<i8> {
        self.check_size(n)?;
        self.reader
            .value(n, packed, index, || self.block_of(packed))
    }

    /// Checks, once per layer, that readable layer `n` holds the positions its
    /// layout gives it ([`check_layer_size`]); every read of a layer's values comes
    /// here first.
    #[inline]
    pub fn check_size(&self, n: usize) -> Result<()> {
        if self.sizes_checked.get() >> n & 1 == 1 {
            return Ok(());
        }
        let in_file = |why: String| -> anyhow::Error {
            let error = StoreError::damaged(Place::Layer(n), why);
            anyhow::Error::new(error).context(self.path.display().to_string())
        };
        let row = self
            .layers
            .get(&n)
            .ok_or_else(|| in_file("it is not in the file".into()))?;
        // A damaged file (not the position's fault: Python raises `TableError`).
        check_layer_size(row, &self.format()).map_err(|e| in_file(format!("{e:#}")))?;
        self.sizes_checked.set(self.sizes_checked.get() | 1 << n);
        Ok(())
    }

    /// The key (counts) and number of positions of the block packed as `packed`.
    fn block_of(&self, packed: u128) -> (Vec<u8>, u64) {
        let counts = self.layout.unpack_counts(packed);
        let size = self.layout.block_size(&counts);
        (counts, size)
    }

    /// Sets the node and time limits of each search of the probe fallback (a
    /// search that reaches one is an error with the bounds found).
    pub fn set_search_bounds(&mut self, limits: Limits) {
        self.search_bounds = limits;
    }

    /// Sets the most open lines the probe fallback searches (0: never search).
    pub fn set_search_limit(&mut self, open_lines: u32) {
        self.search_limit = open_lines;
    }

    /// Value of a position and of every legal move: from the stored layers when
    /// they hold the position and all its children, otherwise by search.
    pub fn probe(&self, position: Lines) -> Result<Probe> {
        self.probe_with(position, Vec::new())
    }

    /// [`Tablebase::probe`] whose answer's moves go into `moves` (cleared first):
    /// a batch hands back the moves of its last answer, so that a warm probe
    /// allocates nothing.
    pub fn probe_with(&self, position: Lines, moves: Vec<MoveValue>) -> Result<Probe> {
        match self.probe_from_book_with(position, moves)? {
            Some(probe) => Ok(probe),
            None => self.probe_by_search(position),
        }
    }

    /// [`Tablebase::probe`] when the stored layers answer it (also when some moves
    /// lead past them but the position is beyond the search fallback); `None` when
    /// the answer takes a search.
    pub fn probe_from_book(&self, position: Lines) -> Result<Option<Probe>> {
        self.probe_from_book_with(position, Vec::new())
    }

    /// [`Tablebase::probe_from_book`] with the moves put into `moves` (cleared).
    fn probe_from_book_with(
        &self,
        position: Lines,
        mut moves: Vec<MoveValue>,
    ) -> Result<Option<Probe>> {
        let board = self.spec.board;
        self.check_has_start(position)?;
        if !self.spec.chains.is_empty() {
            return self.chain_probe_from_book(position);
        }
        let open = board.all_lines() & !position;
        let n = position.count_ones() as usize;
        let children_stored = self.has_layer(n + 1);
        // Where the children's values lie (a full position has none), and the
        // position's own place with them.
        let mut lines = [0usize; 64];
        let mut places = [(0u128, 0u64); 64];
        let mut k = 0;
        let here = children_stored.then(|| {
            self.layout.locate_children(position, open, |line, place| {
                (lines[k], places[k]) = (line, place);
                k += 1;
            })
        });
        debug_assert!(!children_stored || k == open.count_ones() as usize);
        let entry = match here {
            Some(place) if self.has_layer(n) && position & !board.all_lines() == 0 => {
                Some(self.restored(position, self.stored(n, place)?))
            }
            _ => self.entry(position)?,
        };
        if let Some(entry) = entry {
            let (value, loony) = if self.spec.loony {
                let (value, flag, _) = self.loony_entry(entry)?;
                (value, Some(flag))
            } else {
                (entry as i32, None)
            };
            moves.clear();
            if children_stored {
                let mut entries = [0i8; 64];
                self.check_size(n + 1)?;
                self.reader
                    .values(n + 1, &places[..k], &mut entries[..k], |packed| {
                        self.block_of(packed)
                    })?;
                let left = boxes_left(&self.box_masks, position);
                for (&line, &entry) in lines[..k].iter().zip(&entries[..k]) {
                    let boxes = self.boxes_completed(position, line);
                    let child = self.restored_with(position | 1 << line, || left - boxes, entry);
                    let (value, loony) = self.move_entry(boxes, child)?;
                    moves.push(MoveValue {
                        line,
                        value: Some(value),
                        boxes,
                        loony,
                    });
                }
            } else {
                for line in (0..64).filter(|l| open >> l & 1 == 1) {
                    moves.push(MoveValue {
                        line,
                        value: None,
                        boxes: self.boxes_completed(position, line),
                        loony: None,
                    });
                }
            }
            if moves.iter().all(|m| m.value.is_some()) || !self.searchable(position) {
                sort_moves(&mut moves);
                return Ok(Some(Probe {
                    position,
                    value,
                    source: Source::Book,
                    moves,
                    loony,
                }));
            }
        }
        Ok(None)
    }

    /// [`Tablebase::probe_from_book`] of a chain file: plain lookups per legal move.
    fn chain_probe_from_book(&self, position: Lines) -> Result<Option<Probe>> {
        let Some(value) = self.entry(position)? else {
            return Ok(None);
        };
        let legal = self.legal_moves(position);
        let mut moves = Vec::new();
        for line in (0..64).filter(|l| legal >> l & 1 == 1) {
            let boxes = self.boxes_completed(position, line);
            let child = self.entry(position | 1 << line)?;
            moves.push(MoveValue {
                line,
                value: child.map(|c| super::board::move_value(boxes, c.into())),
                boxes,
                loony: None,
            });
        }
        if moves.iter().all(|m| m.value.is_some()) || !self.searchable(position) {
            sort_moves(&mut moves);
            return Ok(Some(Probe {
                position,
                value: value.into(),
                source: Source::Book,
                moves,
                loony: None,
            }));
        }
        Ok(None)
    }

    /// The value of a position without its moves' (`moves` empty): stored, or by
    /// the search fallback when its layer is not stored. One value read instead
    /// of one per move.
    pub fn probe_value(&self, position: Lines) -> Result<Probe> {
        self.check_has_start(position)?;
        match self.entry(position)? {
            Some(entry) => {
                let (value, loony) = if self.spec.loony {
                    let (value, flag, _) = self.loony_entry(entry)?;
                    (value, Some(flag))
                } else {
                    (entry as i32, None)
                };
                Ok(Probe {
                    position,
                    value,
                    source: Source::Book,
                    moves: Vec::new(),
                    loony,
                })
            }
            None => {
                let mut probe = self.probe_by_search(position)?;
                probe.moves.clear();
                Ok(probe)
            }
        }
    }

    /// [`Tablebase::probe_value`] of a parsed position (its penalty checked as by
    /// [`Tablebase::probe_parsed`]).
    pub fn probe_value_parsed(&self, parsed: &ParsedPosition) -> Result<Probe> {
        self.check_parsed(parsed)?;
        self.probe_value(parsed.lines)
    }

    /// An error unless `position` has every line of the table's start.
    fn check_has_start(&self, position: Lines) -> Result<()> {
        if position & self.spec.start != self.spec.start {
            bail!(
                "the position lacks lines of this tablebase's start position, so it is not in it"
            );
        }
        Ok(())
    }

    /// The search fallback of [`Tablebase::probe`] (an error past its limit).
    fn probe_by_search(&self, position: Lines) -> Result<Probe> {
        if !self.searchable(position) {
            let stored: Vec<usize> = readable_layers(&self.layers).collect();
            bail!(
                "the position has {} lines and {} open; this tablebase stores positions with {} lines, and the search fallback takes at most {} open lines",
                position.count_ones(),
                self.open_lines(position),
                ranges(&stored),
                self.search_limit
            );
        }
        let limits = self.search_bounds;
        let result = self.with_solver(|s| s.solve_within(position, limits))?;
        Ok(Probe::from_search(position, &result))
    }

    /// [`Tablebase::probe`] of a parsed position; a Wilson file's penalty is part of
    /// what it asks, so one other than the table's is refused. (Its player to move
    /// and scores change nothing: values are net future boxes for whoever moves.)
    pub fn probe_parsed(&self, parsed: &ParsedPosition) -> Result<Probe> {
        self.probe_parsed_with(parsed, Vec::new())
    }

    /// [`Tablebase::probe_parsed`] with the moves put into `moves` (see
    /// [`Tablebase::probe_with`]).
    pub fn probe_parsed_with(
        &self,
        parsed: &ParsedPosition,
        moves: Vec<MoveValue>,
    ) -> Result<Probe> {
        self.check_parsed(parsed)?;
        self.probe_with(parsed.lines, moves)
    }

    /// [`Tablebase::probe_from_book`] of a parsed position (its penalty checked as
    /// by [`Tablebase::probe_parsed`]).
    pub fn probe_parsed_from_book(&self, parsed: &ParsedPosition) -> Result<Option<Probe>> {
        self.check_parsed(parsed)?;
        self.probe_from_book(parsed.lines)
    }

    /// A file's penalty must be the table's, and its chains (if it marks any) the
    /// table's, or those the table's rule keeps of them (an exact build keeps only
    /// the chains that change no value): a plain table holds the plain game only.
    fn check_parsed(&self, parsed: &ParsedPosition) -> Result<()> {
        if self.spec.chains.is_empty() {
            parsed.chains.plain_only("a tablebase holds")?;
        } else if !parsed.chains.is_empty()
            && parsed.chains != self.spec.chains
            && parsed
                .chains
                .under(&self.spec.board, self.spec.chains.rule(&self.spec.board))
                != self.spec.chains
        {
            bail!(
                "the position marks other chains than this tablebase's (its start shows them; or give the position without dots)"
            );
        }
        if let Some(penalty) = parsed.penalty
            && penalty != self.spec.penalty as i32
        {
            bail!(
                "the file asks for penalty {penalty}, this table was built with penalty {}",
                self.spec.penalty
            );
        }
        Ok(())
    }

    /// Value of a position by search, whatever the book holds.
    pub fn search_value(&self, position: Lines) -> i32 {
        self.with_solver(|s| s.value(position))
    }

    fn open_lines(&self, position: Lines) -> u32 {
        (self.spec.board.all_lines() & !position).count_ones()
    }

    fn searchable(&self, position: Lines) -> bool {
        self.open_lines(position) <= self.search_limit
    }

    fn with_solver<T>(&self, f: impl FnOnce(&mut Solver) -> T) -> T {
        let mut slot = self.solver.borrow_mut();
        let solver = slot.get_or_insert_with(|| {
            let mut solver = Solver::new(
                self.spec.board,
                SearchOptions {
                    penalty: self.spec.penalty as i32,
                    tt_bytes: PROBE_TT_BYTES,
                },
            );
            if !self.spec.chains.is_empty() {
                solver.set_chains(self.spec.chains.clone());
            }
            // A probe answers the value and the moves' values, never a line.
            solver.set_principal_variation(false);
            solver
        });
        f(solver)
    }
}

/// `[1,2,3,7]` -> "1..3, 7".
fn ranges(ns: &[usize]) -> String {
    if ns.is_empty() {
        return "no".to_string();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ns.len() {
        let mut j = i;
        while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ns[i].to_string()
        } else {
            format!("{}..{}", ns[i], ns[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}
