//! Reading a built Morris file: value bytes through the generic chunk reader, and
//! probe answers (the value of a position and of each legal move).

use super::index::{MIN_STONES, class_count_on, table_position};
use super::rules::{Move, Outcome, Position};
use super::sector::Sector;
use super::solve::{
    Class, Probe, break_ties, probe_hinted, sector_position, stored_class, won_byte,
};
use super::spec::{
    MorrisFormat, MorrisSpec, Phase, hands_of, layer_hands, layer_pair, layer_sector, pair_label,
    pair_layer, placement_layer, sector_layer,
};
use super::value::{Value, WIN_MARK};
use crate::retro::audit::prepare_read;
use crate::store::reader::ChunkReader;
use crate::store::{LayerRow, Store};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

/// An open Morris tablebase file.
pub struct MorrisTablebase {
    reader: ChunkReader,
    spec: MorrisSpec,
    layers: BTreeMap<usize, LayerRow>,
}

impl MorrisTablebase {
    /// Opens a Morris file read-only.
    pub fn open(path: &Path) -> Result<MorrisTablebase> {
        MorrisTablebase::from_store(path, Store::open_read(path)?)
    }

    /// A tablebase from the file `path` opened as `store` ([`Store::open_read`]).
    pub fn from_store(path: &Path, mut store: Store) -> Result<MorrisTablebase> {
        // Every problem of the file names it.
        let in_file = |e: anyhow::Error| e.context(path.display().to_string());
        let meta = store.meta().map_err(in_file)?;
        let spec = MorrisSpec::from_meta(&meta).map_err(in_file)?;
        // A chunk of a coding the file does not allow is corrupt.
        store.chunk_rules().allow(spec.codings);
        let layers = prepare_read(&mut store, &MorrisFormat::new(spec.clone())).map_err(in_file)?;
        let contexts = spec.clone();
        Ok(MorrisTablebase {
            reader: ChunkReader::with_contexts(
                store,
                spec.chunk_positions,
                Box::new(move |layer, key, first, len| {
                    contexts.block_contexts(layer, key, first, len)
                }),
            ),
            spec,
            layers,
        })
    }

    /// Shares decoded chunks with the other readers of this file given `shared`
    /// ([`ChunkReader::share`]).
    pub fn share_chunks(&mut self, shared: &crate::store::reader::SharedChunks) {
        self.reader.share(shared);
    }

    /// What the file holds.
    pub fn spec(&self) -> &MorrisSpec {
        &self.spec
    }

    /// The file's format (its layers and blocks, how chunks are coded), for the
    /// audit and for reading whole blocks.
    pub fn format(&self) -> MorrisFormat {
        MorrisFormat::new(self.spec.clone())
    }

    /// Layer rows as read at open time (one per table pair).
    pub fn layers(&self) -> &BTreeMap<usize, LayerRow> {
        &self.layers
    }

    /// Every pair the file should hold, in build order, with its layer row if the
    /// file has one (a killed build may not have started the later pairs).
    pub fn pairs(&self) -> Vec<(usize, Option<&LayerRow>)> {
        self.spec
            .pairs()
            .into_iter()
            .map(|(a, b)| {
                let layer = pair_layer(a, b);
                (layer, self.layers.get(&layer))
            })
            .collect()
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        self.reader.store()
    }

    /// Whether table (m, o) is stored and finished.
    pub fn has_table(&self, m: u8, o: u8) -> bool {
        (MIN_STONES..=self.spec.stones).contains(&m)
            && (MIN_STONES..=self.spec.stones).contains(&o)
            && self
                .layers
                .get(&pair_layer(m, o))
                .is_some_and(|r| r.status.readable())
    }

    /// The stored byte of class `index` of table (m, o).
    pub fn byte(&self, m: u8, o: u8, index: u64) -> Result<u8> {
        if self.spec.rules.moving_in_placement() {
            return self.sector_byte(Sector::new(m, o, 0, 0), index);
        }
        if !self.has_table(m, o) {
            bail!(
                "table {m}-{o} is not in this file (it holds the tables with 3 to {} stones a side{})",
                self.spec.stones,
                if self.layers.values().all(|r| r.status.readable()) {
                    ""
                } else {
                    ", some not finished yet"
                }
            );
        }
        self.stored_byte(Sector::new(m, o, 0, 0), index)
    }

    /// The stored byte of class `index` of table (m, o) with `h` stones in hand (0:
    /// the moving phase, [`MorrisTablebase::byte`]).
    pub fn byte_in_hand(&self, h: u8, m: u8, o: u8, index: u64) -> Result<u8> {
        if h == 0 {
            return self.byte(m, o, index);
        }
        if self.spec.phase != Phase::All {
            bail!(
                "this file holds the moving phase only; add the placement tables with tb build morris --stones {} --phase placement",
                self.spec.stones
            );
        }
        let layer = placement_layer(h);
        if !self.spec.has_placement_table(h, m, o) {
            bail!(
                "no table {m}-{o} with {h} stones in hand in this file (the game with {} stones a side)",
                self.spec.stones
            );
        }
        if !self.layers.get(&layer).is_some_and(|r| r.status.readable()) {
            bail!("the placement tables with {h} stones in hand are not built yet");
        }
        let (hm, ho) = hands_of(h);
        self.stored_byte(Sector::new(m, o, hm, ho), index)
    }

    /// The stored byte of class `index` of `sector` (both hands empty: the moving
    /// phase): a sector pair's for the rules that move during placement, else a
    /// table's with the sector's stones in hand ([`MorrisTablebase::byte_in_hand`]).
    pub fn sector_byte(&self, sector: Sector, index: u64) -> Result<u8> {
        if !self.spec.rules.moving_in_placement() {
            return self.byte_in_hand(sector.hm + sector.ho, sector.m, sector.o, index);
        }
        let layer = sector_layer(sector);
        if !self.spec.sector_pairs().contains(&sector.canonical()) {
            bail!(
                "no sector {} (stones on the board, then in hand) in this file: it holds the game with {} stones a side{}",
                sector.label(),
                self.spec.stones,
                if self.spec.phase == Phase::All {
                    ""
                } else {
                    ", moving phase only"
                }
            );
        }
        if !self.layers.get(&layer).is_some_and(|r| r.status.readable()) {
            bail!("sectors {} are not built yet", pair_label(layer));
        }
        self.stored_byte(sector, index)
    }

    /// The value byte at `index` of `sector` once it is known to be in the file: as
    /// stored, or in a file that marks wins ([`MorrisSpec::marks_wins`]) a win's
    /// with its distance, recomputed from the position's moves.
    fn stored_byte(&self, sector: Sector, index: u64) -> Result<u8> {
        self.with_distance(sector, index, self.raw_byte(sector, index)?)
    }

    /// The value byte of class `index` of `sector` (in the file) from `byte`, the
    /// byte the file stores there: itself, or in a file that marks wins
    /// ([`MorrisSpec::marks_wins`]) a win's with its distance, recomputed from the
    /// position's moves.
    pub fn with_distance(&self, sector: Sector, index: u64, byte: u8) -> Result<u8> {
        if !(self.spec.marks_wins && byte == WIN_MARK) {
            return Ok(byte);
        }
        won_byte(self.spec.rules, sector, index, |s, i| self.raw_byte(s, i))
    }

    /// The byte at `index` of `sector` as the file stores it.
    fn raw_byte(&self, sector: Sector, index: u64) -> Result<u8> {
        let (layer, packed, at) = self.locate(sector, index)?;
        let byte = self
            .reader
            .value(layer, packed, at, || self.block_at(layer, packed))?;
        Ok(byte as u8)
    }

    /// Where class `index` of `sector` is stored: (layer, packed block key, index in
    /// the block). A moving-phase table is a slice of its pair's block (the layer's
    /// only block), a placement table a block, a sector a slice of its sector pair's
    /// block (the layer's only block).
    fn locate(&self, sector: Sector, index: u64) -> Result<(usize, u128, u64)> {
        let Sector { m, o, hm, ho } = sector;
        let board = self.spec.board();
        Ok(if self.spec.rules.moving_in_placement() {
            let offset = MorrisSpec::offset_in_sector_pair(board, sector)?;
            (sector_layer(sector), 0, offset + index)
        } else if hm + ho == 0 {
            let offset = MorrisSpec::offset_in_pair(board, m, o)?;
            (pair_layer(m, o), 0, offset + index)
        } else {
            let packed = u128::from(m) << 8 | u128::from(o);
            (placement_layer(hm + ho), packed, index)
        })
    }

    /// The key and size of the block `packed` of `layer` (as [`MorrisTablebase::locate`]
    /// gives them).
    fn block_at(&self, layer: usize, packed: u128) -> (Vec<u8>, u64) {
        let board = self.spec.board();
        if let Some(s) = layer_sector(layer) {
            return (
                vec![s.m, s.o, s.hm, s.ho],
                MorrisSpec::sector_pair_size(board, s),
            );
        }
        match layer_hands(layer) {
            None => {
                let (a, b) = layer_pair(layer);
                (vec![a, b], MorrisSpec::pair_size(board, a, b))
            }
            Some(_) => {
                let (m, o) = ((packed >> 8) as u8, packed as u8);
                (vec![m, o], class_count_on(board, m, o))
            }
        }
    }

    /// A position text of this file's game: a character per point (24 on the nine
    /// board, 16 on the six), the side to move and the hands (docs/FORMAT.md §4.2),
    /// or a move list from the empty board with `stones` in each hand (`d6,f4,...`;
    /// a single move too).
    pub fn parse_position(&self, text: &str) -> Result<Position> {
        let text = text.trim();
        // Points and a side (or a board without one: its error says what is missing).
        let board_like = text.is_empty()
            || text.contains(char::is_whitespace)
            || text.chars().all(|c| matches!(c, '.' | 'W' | 'B'));
        if board_like {
            return Ok(Position::parse_in(self.spec.rules, text)?);
        }
        let n = self.spec.stones;
        let mut position = Position::with_mover(0, 0, true, [n, n]).on(self.spec.rules);
        let moves: Vec<&str> = text.split(',').map(str::trim).collect();
        for (k, name) in moves.iter().enumerate() {
            let mv = Move::parse_in(self.spec.rules, name)
                .with_context(|| format!("move list, move {}", k + 1))?;
            match position
                .play(mv)
                .with_context(|| format!("move list, move {}", k + 1))?
            {
                Outcome::Child(next) => position = next,
                Outcome::Win => bail!(
                    "move list, move {}: {name} wins the game (the other side is left with 2 stones), so no position follows{}",
                    k + 1,
                    if k + 1 < moves.len() {
                        " and the moves after it cannot be played"
                    } else {
                        ""
                    }
                ),
            }
        }
        Ok(position)
    }

    /// Stored value of a position (either phase).
    pub fn value(&self, position: &Position) -> Result<Value> {
        super::solve::position_value(position, &|s, i| self.sector_byte(s, i))
    }

    /// Value of a position and of every legal move, best first, with the
    /// tie-break among the moves of the position's value ([`break_ties`]).
    pub fn probe(&self, position: &Position) -> Result<Probe> {
        let lookup = |s, i| self.sector_byte(s, i);
        let probe = self.probe_untied(position)?;
        break_ties(position, probe, |classes| self.preload(classes), lookup)
    }

    /// [`MorrisTablebase::probe`] without the tie-break: moves of equal value in
    /// the move generator's order, no counts (reads the position and its children
    /// only).
    pub fn probe_untied(&self, position: &Position) -> Result<Probe> {
        self.preload_win_distances(position);
        let lookup = |s, i| self.sector_byte(s, i);
        probe_hinted(position, |classes| self.preload(classes), lookup)
    }

    /// In a file that marks wins: decodes together, on all cores, the chunks the
    /// won children of `position` read for their distance (their own children's),
    /// which the probe would otherwise decode one after the other. Nothing is
    /// reported here: the probe reports what it cannot read.
    fn preload_win_distances(&self, position: &Position) {
        if !self.spec.marks_wins {
            return;
        }
        let class_of = |outcome: Outcome| match outcome {
            Outcome::Child(child) => stored_class(&child).ok().flatten(),
            Outcome::Win => None,
        };
        let children: Vec<Class> = position
            .legal_moves()
            .into_iter()
            .filter_map(|(_, outcome)| class_of(outcome))
            .collect();
        self.preload(&children);
        let mut grandchildren = Vec::new();
        for (sector, index) in children {
            if self.raw_byte(sector, index).ok() != Some(WIN_MARK) {
                continue;
            }
            if let Ok(child) = self.sector_representative(sector, index) {
                let moves = child.legal_moves().into_iter();
                grandchildren.extend(moves.filter_map(|(_, outcome)| class_of(outcome)));
            }
        }
        self.preload(&grandchildren);
    }

    /// Decodes the chunks of the classes a probe reads, on all cores, before it
    /// reads them one by one (what a cold probe spends its time on). Classes this
    /// file does not hold are left for the probe to report.
    fn preload(&self, classes: &[Class]) {
        let wanted = classes
            .iter()
            .filter_map(|&(sector, index)| self.locate(sector, index).ok());
        // The block of a chunk not cached yet: a pair's (its layer names it) or a
        // placement table's (its packed key names it).
        self.reader
            .preload(wanted, |layer, packed| self.block_at(layer, packed));
    }

    /// The table (m, o) of a position, for messages.
    pub fn table_of(position: &Position) -> (u8, u8) {
        position.stones()
    }

    /// Every class of table (m, o): its representative (mover as White, White to move).
    pub fn representative(&self, m: u8, o: u8, index: u64) -> Result<Position> {
        let (mover, opponent) = table_position(self.spec.board(), m, o, index)?;
        Ok(Position::new(mover, opponent, true).on(self.spec.rules))
    }

    /// Every class of `sector`: its representative (the side to move is White when
    /// the hands are equal, else Black, as in [`MorrisTablebase::placement_representative`]).
    pub fn sector_representative(&self, sector: Sector, index: u64) -> Result<Position> {
        sector_position(self.spec.rules, sector, index)
    }

    /// Every class of placement table (m, o) with `h` in hand: its representative
    /// (the side to move is White when the hands are equal, else Black).
    pub fn placement_representative(&self, h: u8, m: u8, o: u8, index: u64) -> Result<Position> {
        let (mover, opponent) = table_position(self.spec.board(), m, o, index)?;
        let (hm, ho) = hands_of(h);
        Ok(Position::with_mover(mover, opponent, hm == ho, [hm, ho]).on(self.spec.rules))
    }
}

/// `win`/`loss`/`draw` for JSON.
pub fn result_word(value: Value) -> &'static str {
    match value {
        Value::Win(_) => "win",
        Value::Loss(_) => "loss",
        Value::Draw => "draw",
    }
}

/// The probe JSON object of docs/FORMAT.md §6.2 (fields in its order); each move
/// also carries the `result` and `plies` of its value (for the side that plays
/// it), as the position does.
pub fn probe_json(position: &Position, probe: &Probe) -> String {
    let mut out = String::with_capacity(128 + 64 * probe.moves.len());
    write_probe_json(&mut out, position, probe);
    out
}

/// [`probe_json`] appended to `out`. Written by hand, not through serde: a batch
/// writes millions of moves, and positions, moves and values need no escaping
/// (letters, digits, `.`, `-`, `x` and spaces only).
pub fn write_probe_json(out: &mut String, position: &Position, probe: &Probe) {
    use std::fmt::Write as _;
    // `"value":"W5","result":"win","plies":5` (plies null for a draw).
    let value_fields = |out: &mut String, value: Value| {
        let _ = write!(
            out,
            "\"value\":\"{value}\",\"result\":\"{}\",\"plies\":",
            result_word(value)
        );
        match value.plies() {
            Some(p) => {
                let _ = write!(out, "{p}");
            }
            None => out.push_str("null"),
        }
    };
    let _ = write!(out, "{{\"game\":\"morris\",\"position\":\"{position}\",");
    value_fields(out, probe.value);
    out.push_str(",\"source\":\"table\",\"moves\":[");
    for (i, (mv, value)) in probe.moves.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"move\":\"{}\",", mv.text(position.rules));
        value_fields(out, *value);
        match probe.chances.get(i).copied().flatten() {
            Some(c) => {
                let _ = write!(
                    out,
                    ",\"opponent_errors\":{},\"opponent_replies\":{}",
                    c.errors, c.replies
                );
            }
            None => out.push_str(",\"opponent_errors\":null,\"opponent_replies\":null"),
        }
        out.push('}');
    }
    out.push_str("]}");
}

/// What a value means for `side` in words: `White wins in 25 plies`, `Black
/// loses in 4 plies`, `Black has lost`, `a draw`.
pub fn value_words(side: &str, value: Value) -> String {
    let plies = |p: u8| {
        if p == 1 {
            "1 ply".to_string()
        } else {
            format!("{p} plies")
        }
    };
    match value {
        Value::Win(p) => format!("{side} wins in {}", plies(p)),
        Value::Loss(0) => format!("{side} has lost"),
        Value::Loss(p) => format!("{side} loses in {}", plies(p)),
        Value::Draw => "a draw".to_string(),
    }
}

/// A probe answer as text: the position, its value in words and table, then one
/// move a line (values for the side that plays them).
pub fn probe_text(position: &Position, probe: &Probe) -> String {
    let (m, o) = MorrisTablebase::table_of(position);
    // With moving during placement the hands are independent: both are named
    // (side to move first), as the sector is.
    let in_hand = match (position.hands, position.rules.moving_in_placement()) {
        ([0, 0], _) => String::new(),
        ([hm, ho], true) => format!(", {hm}-{ho} in hand"),
        ([hm, ho], false) => format!(", {} in hand", hm + ho),
    };
    let (side, other) = if position.white_to_move {
        ("White", "Black")
    } else {
        ("Black", "White")
    };
    let mut out = format!(
        "morris {position}: {} ({} to move: {}; table {m}-{o}{in_hand})\n",
        probe.value,
        side,
        value_words(side, probe.value)
    );
    for (i, (mv, v)) in probe.moves.iter().enumerate() {
        // The tie-break: how many of the opponent's replies go wrong.
        let note = match probe.chances.get(i).copied().flatten() {
            Some(c) => format!(
                "; {} of {} replies {} for {other}",
                c.errors,
                c.replies,
                if *v == Value::Draw {
                    "lose"
                } else {
                    "do not win"
                }
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "  {:<10} {:<4} {}{note}\n",
            mv.text(position.rules).to_string(),
            v.to_string(),
            value_words(side, *v)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::solve::Chances;
    use super::*;

    /// The hand-written JSON against serde_json's rendering of the same answer
    /// (byte for byte), on random positions (placement and moving, captures) with
    /// random values.
    #[test]
    fn probe_json_is_what_serde_writes() {
        let mut next = crate::test_rng::below(0x2545_f491_4f6c_dd1d);
        let value = |next: &mut dyn FnMut(u64) -> u64| match next(3) {
            0 => Value::Draw,
            1 => Value::Win(next(256) as u8),
            _ => Value::Loss(next(256) as u8),
        };
        let mut checked = 0;
        while checked < 2000 {
            let (mut white, mut black) = (0u32, 0u32);
            for _ in 0..next(10) {
                white |= 1 << next(24);
            }
            for _ in 0..next(10) {
                black |= 1 << next(24) & !white;
            }
            let hands = [next(10) as u8, next(10) as u8];
            let position = Position::with_mover(white, black, next(2) == 0, hands);
            let moves: Vec<(Move, Value)> = position
                .legal_moves()
                .into_iter()
                .map(|(mv, _)| (mv, value(&mut next)))
                .collect();
            let chances = moves
                .iter()
                .map(|_| {
                    (next(2) == 0).then(|| {
                        let replies = 1 + next(60) as u32;
                        Chances {
                            errors: next(u64::from(replies) + 1) as u32,
                            replies,
                        }
                    })
                })
                .collect();
            let probe = Probe {
                value: value(&mut next),
                moves,
                chances,
            };
            // serde writes a struct's fields in their order: the order the format fixes.
            #[derive(serde::Serialize)]
            struct MoveJson {
                #[serde(rename = "move")]
                mv: String,
                value: String,
                result: &'static str,
                plies: Option<u8>,
                opponent_errors: Option<u32>,
                opponent_replies: Option<u32>,
            }
            #[derive(serde::Serialize)]
            struct ProbeJson {
                game: &'static str,
                position: String,
                value: String,
                result: &'static str,
                plies: Option<u8>,
                source: &'static str,
                moves: Vec<MoveJson>,
            }
            let expected = serde_json::to_string(&ProbeJson {
                game: "morris",
                position: position.to_string(),
                value: probe.value.to_string(),
                result: result_word(probe.value),
                plies: probe.value.plies(),
                source: "table",
                moves: probe
                    .moves
                    .iter()
                    .zip(&probe.chances)
                    .map(|((mv, v), c)| MoveJson {
                        mv: mv.text(position.rules).to_string(),
                        value: v.to_string(),
                        result: result_word(*v),
                        plies: v.plies(),
                        opponent_errors: c.map(|c| c.errors),
                        opponent_replies: c.map(|c| c.replies),
                    })
                    .collect(),
            })
            .unwrap();
            assert_eq!(probe_json(&position, &probe), expected);
            checked += usize::from(!probe.moves.is_empty());
        }
    }
}
