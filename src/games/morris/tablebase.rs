//! Reading a built Morris file: value bytes through the generic chunk reader, and
//! probe answers (the value of a position and of each legal move).

use super::build::MorrisGame;
use super::index::{MIN_STONES, Table};
use super::rules::{Move, Position};
use super::solve::{Probe, probe};
use super::spec::{MorrisSpec, format_version, pair_layer};
use super::value::Value;
use crate::retro::audit::prepare_read;
use crate::store::reader::ChunkReader;
use crate::store::{LayerRow, Store};
use anyhow::{Result, bail};
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
        let mut store = Store::open_read(path)?;
        // Every problem of the file names it.
        let in_file = |e: anyhow::Error| e.context(path.display().to_string());
        let meta = store.meta().map_err(in_file)?;
        let spec = MorrisSpec::from_meta(&meta).map_err(in_file)?;
        // Context-mixing chunks came with format 2.
        store.chunk_rules().mixing = format_version(&meta).map_err(in_file)? >= 2;
        let layers = prepare_read(&mut store, &MorrisGame::new(spec.clone())).map_err(in_file)?;
        Ok(MorrisTablebase {
            reader: ChunkReader::with_neighbours(
                store,
                spec.chunk_positions,
                Box::new(|layer, _, first, len| MorrisSpec::pair_neighbours(layer, first, len)),
            ),
            spec,
            layers,
        })
    }

    /// What the file holds.
    pub fn spec(&self) -> &MorrisSpec {
        &self.spec
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
        let (a, b) = (m.min(o), m.max(o));
        let offset = MorrisSpec::offset_in_pair(m, o)?;
        let byte = self.reader.value(pair_layer(m, o), 0, offset + index, || {
            (vec![a, b], MorrisSpec::pair_size(a, b))
        })?;
        Ok(byte as u8)
    }

    /// Stored value of a moving-phase position.
    pub fn value(&self, position: &Position) -> Result<Value> {
        super::solve::position_value(position, &|m, o, i| self.byte(m, o, i))
    }

    /// Value of a position and of every legal move, best first.
    pub fn probe(&self, position: &Position) -> Result<Probe> {
        probe(position, |m, o, i| self.byte(m, o, i))
    }

    /// The table (m, o) of a position, for messages.
    pub fn table_of(position: &Position) -> (u8, u8) {
        (
            position.mover.count_ones() as u8,
            position.opponent.count_ones() as u8,
        )
    }

    /// Every class of table (m, o): its representative (mover as White, White to move).
    pub fn representative(m: u8, o: u8, index: u64) -> Result<Position> {
        let (mover, opponent) = Table::get(m, o)?.position(index);
        Ok(Position::new(mover, opponent, true))
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

/// The probe JSON object of DESIGN.md section 6 (fields in its order).
pub fn probe_json(position: &Position, probe: &Probe) -> String {
    #[derive(serde::Serialize)]
    struct MoveJson {
        #[serde(rename = "move")]
        mv: String,
        value: String,
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
    let object = ProbeJson {
        game: "morris",
        position: position.to_string(),
        value: probe.value.to_string(),
        result: result_word(probe.value),
        plies: probe.value.plies(),
        source: "table",
        moves: probe
            .moves
            .iter()
            .map(|(mv, v): &(Move, Value)| MoveJson {
                mv: mv.to_string(),
                value: v.to_string(),
            })
            .collect(),
    };
    serde_json::to_string(&object).expect("probe answers serialise")
}

/// A probe answer as text: the position, its value and table, then one move a line.
pub fn probe_text(position: &Position, probe: &Probe) -> String {
    let (m, o) = MorrisTablebase::table_of(position);
    let mut out = format!("morris {position}: {} (table {m}-{o})\n", probe.value);
    for (mv, v) in &probe.moves {
        out.push_str(&format!("  {:<10} {v}\n", mv.to_string()));
    }
    out
}
