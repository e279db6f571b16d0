//! The Dots-and-Boxes file format as the generic code reads it ([`DotsFormat`]):
//! layer n = the positions with n lines drawn, from the full board down to the
//! start; block (n; c1..cG) = those with ci lines drawn in group i, indexed by the
//! [`Layout`]; what a stored byte means (a value, or a loony byte of
//! [`super::loony`]; the boxes-left form of [`super::boxes_left`]; the offer bit
//! loony files leave out). The tablebase reader, `verify`, `export` and the
//! builder share it; it holds nothing of the kernel.

use super::boxes_left::BoxesLeft;
use super::layout::{LastGroupTable, Layout};
use super::loony::{self, BoxSides, Detector, OfferMap};
use super::sites::Sites;
use super::spec::Spec;
use crate::retro::format::ZSTD_LEVEL;
use crate::retro::{BlockKey, Format};
use crate::store::checksum::digest_run;
use crate::store::codec::{ChunkCoding, Contexts, Family};
use std::borrow::Cow;
use std::ops::RangeInclusive;
use std::sync::OnceLock;

/// The format of a tablebase: its spec (what the file holds) and layout (where a
/// position is stored), with the tables that restore stored values, made on first
/// use.
pub struct DotsFormat<'a> {
    spec: &'a Spec,
    layout: &'a Layout,
    /// Boxes left per position, for files in the boxes-left form; built on the
    /// first chunk stored or read.
    boxes_left: OnceLock<BoxesLeft<'a>>,
    /// The box sides of the last group's subsets, for the offer bits of loony
    /// files.
    last_sides: OnceLock<(Detector, LastGroupTable<'a, BoxSides>)>,
    /// The archival coding's sites; built on the first archival chunk.
    sites: OnceLock<Sites>,
}

impl<'a> DotsFormat<'a> {
    /// The format of the tablebase `spec` with its layout (`spec.layout()`).
    pub fn new(spec: &'a Spec, layout: &'a Layout) -> DotsFormat<'a> {
        DotsFormat {
            spec,
            layout,
            boxes_left: OnceLock::new(),
            last_sides: OnceLock::new(),
            sites: OnceLock::new(),
        }
    }

    /// What the file holds.
    pub fn spec(&self) -> &'a Spec {
        self.spec
    }

    /// Where each position is stored.
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    /// Maps each loony byte of `values` (block `counts` from index `first` on) by
    /// `m`, told whether its position offers a loony capture: the box sides of a
    /// run's base once, those of the last group by rank, so that a position costs a
    /// union and the bit-sliced test, not a side map of its own.
    pub fn map_with_offers(&self, counts: &[u8], first: u64, values: &mut [i8], m: impl OfferMap) {
        let (detector, table) = self.last_sides.get_or_init(|| {
            let detector = Detector::new(&self.spec.board);
            let of = detector.clone();
            (
                detector,
                LastGroupTable::new(self.layout, move |m| of.sides(m)),
            )
        });
        let last = table.of_block(counts);
        self.layout
            .visit_rank_runs_mut(counts, first, values, |base, ranks, run| {
                detector.map_offers(detector.sides(base), &last[ranks], run, m);
            });
    }

    /// The boxes-left tables of the layout.
    fn boxes_left(&self) -> &BoxesLeft<'a> {
        (self.boxes_left).get_or_init(|| BoxesLeft::new(&self.spec.board, self.layout))
    }
}

impl Format for DotsFormat<'_> {
    fn identity(&self) -> Vec<(&'static str, String)> {
        self.spec.to_meta()
    }

    fn layers(&self) -> Vec<usize> {
        (self.layout.start_lines()..=self.layout.full_layer())
            .rev()
            .collect()
    }

    fn layer_label(&self, layer: usize) -> String {
        format!("layer {layer}")
    }

    fn blocks(&self, layer: usize) -> Vec<BlockKey> {
        self.layout.blocks_of_layer(layer)
    }

    fn block_size(&self, _layer: usize, key: &[u8]) -> u64 {
        self.layout.block_size(key)
    }

    fn keeps(&self, layer: usize) -> bool {
        layer <= self.spec.book_lines
    }

    fn digest(&self, _layer: usize, key: &[u8], first: u64, values: &[i8]) -> u64 {
        let mut digest = 0u64;
        let mut rest = values;
        self.layout
            .visit_runs(key, first, values.len(), |base, run| {
                let (head, tail) = rest.split_at(run.len());
                digest = digest.wrapping_add(digest_run(base, run, head));
                rest = tail;
            });
        digest
    }

    fn chunk_positions(&self) -> u64 {
        self.spec.chunk_positions
    }

    /// Files of `value_form=boxes-left` (legacy formats 5 and 6) store each value in
    /// the boxes-left form (see [`super::boxes_left`]); loony files leave each
    /// byte's offer bit out (all but legacy format 2): it follows from the
    /// position, and the bytes without it compress to about a fifth less.
    fn stored_form<'v>(
        &self,
        _layer: usize,
        key: &[u8],
        first: u64,
        values: &'v [i8],
    ) -> Cow<'v, [i8]> {
        let without_offers = |x: i8| loony::SetOffers.map(false, x);
        match (self.spec.loony, self.spec.boxes_left_form) {
            (false, false) => Cow::Borrowed(values),
            (true, false) => Cow::Owned(values.iter().map(|&x| without_offers(x)).collect()),
            (loony, true) => {
                let mut stored = values.to_vec();
                if loony {
                    let store = loony::FlipLoony { clear_offers: true };
                    self.boxes_left().map_all(key, first, &mut stored, store);
                } else {
                    self.boxes_left().flip_all(key, first, &mut stored);
                }
                Cow::Owned(stored)
            }
        }
    }

    fn restore(&self, _layer: usize, key: &[u8], first: u64, values: &mut [i8]) {
        match (self.spec.loony, self.spec.boxes_left_form) {
            (false, false) => return,
            (false, true) => return self.boxes_left().flip_all(key, first, values),
            (true, true) => {
                let flip = loony::FlipLoony {
                    clear_offers: false,
                };
                self.boxes_left().map_all(key, first, values, flip);
            }
            (true, false) => {}
        }
        self.map_with_offers(key, first, values, loony::SetOffers);
    }

    /// zstd as builds write it, or an archival coding (`tb recode --coding
    /// archive`).
    fn chunk_coding(&self) -> ChunkCoding {
        match self.spec.codings {
            Family::ArchiveFast => ChunkCoding::ArchiveFast,
            Family::Archive => ChunkCoding::Archive,
            _ => ChunkCoding::Zstd(ZSTD_LEVEL),
        }
    }

    fn chunk_family(&self) -> Option<Family> {
        Some(self.spec.codings)
    }

    fn chunk_contexts(&self, _layer: usize, key: &[u8], first: u64, len: usize) -> Contexts {
        let sites = (self.sites).get_or_init(|| Sites::new(&self.spec.board, self.layout));
        sites.contexts(self.spec.codings, key, first, len)
    }

    fn value_range(&self) -> RangeInclusive<i8> {
        if self.spec.loony {
            // Bytes of `loony::encode`, read as i8.
            return i8::MIN..=i8::MAX;
        }
        // Net boxes still to take, plus the last-move penalty; in the boxes-left
        // form, boxes left (0..=all) minus such a value.
        let boxes = self.spec.board.num_boxes() as i32;
        let bound = boxes + (self.spec.penalty as i32).abs();
        let top = if self.spec.boxes_left_form {
            boxes + bound
        } else {
            bound
        };
        -bound as i8..=top.min(i8::MAX as i32) as i8
    }
}
