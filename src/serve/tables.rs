//! The tables a server has loaded: each an open tablebase of either game behind a
//! lock (a tablebase keeps a chunk cache and a search solver, one user at a time),
//! answering a position text with the probe JSON object of `tb probe --json`.

use crate::games::dots::notation;
use crate::games::dots::output::JsonWriter;
use crate::games::dots::search::Limits;
use crate::games::dots::tablebase::Tablebase;
use crate::games::morris::rules::Position;
use crate::games::morris::spec::pair_label;
use crate::games::morris::tablebase::{MorrisTablebase, probe_json};
use crate::games::{GameKind, game_of_file};
use crate::store::readable_layers;
use anyhow::{Context, Result};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

/// An open tablebase of either game.
enum Open {
    Dots(Box<Tablebase>, JsonWriter),
    Morris(Box<MorrisTablebase>),
}

/// One loaded table.
pub struct Table {
    /// The name requests use (`?table=NAME`).
    pub name: String,
    /// What `GET /api/tables` says of it: name, game and identity.
    pub description: Value,
    open: Mutex<Open>,
}

impl Table {
    /// Opens `path` read-only (checked like any reader) under `name`; a search of
    /// the Dots-and-Boxes probe fallback stops after `search_time`.
    pub fn open(name: &str, path: &Path, search_time: Duration) -> Result<Table> {
        let (open, game, identity, stored) = match game_of_file(path)? {
            GameKind::Dots => {
                let mut tb = Tablebase::open(path)?;
                tb.set_search_bounds(Limits {
                    max_nodes: None,
                    time_limit: Some(search_time),
                });
                let stored = (
                    "layers",
                    json!(readable_layers(tb.layers()).collect::<Vec<_>>()),
                );
                let identity = tb.spec().to_meta();
                let writer = JsonWriter::new(&tb.board());
                (
                    Open::Dots(Box::new(tb), writer),
                    "dots-and-boxes",
                    identity,
                    stored,
                )
            }
            GameKind::Morris => {
                let tb = MorrisTablebase::open(path)?;
                let pairs: Vec<String> = readable_layers(tb.layers()).map(pair_label).collect();
                let identity = tb.spec().to_meta();
                (
                    Open::Morris(Box::new(tb)),
                    "morris",
                    identity,
                    ("tables", json!(pairs)),
                )
            }
        };
        let mut description = Map::new();
        description.insert("name".into(), name.into());
        description.insert("game".into(), game.into());
        for (key, value) in identity {
            description.insert(key.into(), value.into());
        }
        description.insert(stored.0.into(), stored.1);
        Ok(Table {
            name: name.to_string(),
            description: Value::Object(description),
            open: Mutex::new(open),
        })
    }

    /// The probe JSON object for a position text, or why it has none.
    pub fn answer(&self, position: &str) -> Result<String> {
        // A panic in another request cannot leave a tablebase half-updated in a
        // way that matters (its cache only grows), so a poisoned lock is usable.
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *open {
            Open::Dots(tb, writer) => {
                let lines = notation::parse_position(&tb.board(), position)?.lines;
                let probe = tb.probe(lines)?;
                Ok(writer.probe(&probe))
            }
            Open::Morris(tb) => {
                let position = Position::parse(position)?;
                let probe = tb.probe(&position)?;
                Ok(probe_json(&position, &probe))
            }
        }
    }
}

/// The name of a table file: its stem (`3x4.tb` -> `3x4`).
pub fn default_name(path: &Path) -> Result<String> {
    Ok(path
        .file_stem()
        .context("a table file needs a name")?
        .to_string_lossy()
        .into_owned())
}
