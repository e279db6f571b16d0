//! The games: each folder holds a game's rules, notation, indexing, kernel and probe
//! answers, on top of the generic store ([`crate::store`]) and scheduler
//! ([`crate::retro`]). [`table`] opens a file of either game for probes from
//! several threads (`tb serve`, the Python module).

pub mod dots;
pub mod morris;
pub mod qubic;
pub mod table;

use crate::store::Store;
use anyhow::{Result, bail};
use std::path::Path;

/// The games a tablebase file can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameKind {
    /// Dots-and-Boxes (`game` meta `dots-and-boxes`).
    Dots,
    /// Nine Men's Morris (`game` meta `morris`).
    Morris,
    /// Qubic, a winning strategy (`game` meta `qubic`).
    Qubic,
}

/// Which game a tablebase file holds (its `game` metadata).
pub fn game_of_file(path: &Path) -> Result<GameKind> {
    game_of_meta(&Store::meta_of(path)?, path)
}

/// A tablebase file of either game, open for reading.
pub enum OpenTablebase {
    /// A Dots-and-Boxes file.
    Dots(Box<dots::tablebase::Tablebase>),
    /// A Nine Men's Morris file.
    Morris(Box<morris::tablebase::MorrisTablebase>),
    /// A Qubic strategy file.
    Qubic(Box<qubic::stored::StrategyFile>),
}

/// Opens a tablebase file of either game read-only, with one SQLite connection
/// (a cold probe pays for each open).
pub fn open_tablebase(path: &Path) -> Result<OpenTablebase> {
    let store = Store::open_read(path)?;
    let meta = store
        .meta()
        .map_err(|e| e.context(path.display().to_string()))?;
    Ok(match game_of_meta(&meta, path)? {
        GameKind::Dots => OpenTablebase::Dots(Box::new(dots::tablebase::Tablebase::from_store(
            path, store,
        )?)),
        GameKind::Morris => OpenTablebase::Morris(Box::new(
            morris::tablebase::MorrisTablebase::from_store(path, store)?,
        )),
        GameKind::Qubic => OpenTablebase::Qubic(Box::new(qubic::stored::StrategyFile::from_store(
            path, store,
        )?)),
    })
}

/// The game named by a file's metadata (`path` for messages).
fn game_of_meta(
    meta: &std::collections::BTreeMap<String, String>,
    path: &Path,
) -> Result<GameKind> {
    match meta.get("game").map(String::as_str) {
        Some("dots-and-boxes") => Ok(GameKind::Dots),
        Some("morris") => Ok(GameKind::Morris),
        Some(qubic::stored::GAME) => Ok(GameKind::Qubic),
        Some(other) => bail!(
            "{} holds the game `{other}`, which this tb does not know",
            path.display()
        ),
        None => bail!(
            "{}: the file has no `game` metadata (not a finished tb file?)",
            path.display()
        ),
    }
}

/// Recodes the finished tablebase `from` (of either game) into `out` with chunks of
/// `chunk` positions (see [`crate::retro::recode`]).
pub fn recode(
    from: &Path,
    out: &Path,
    chunk: u64,
    progress: &mut dyn crate::retro::progress::Progress,
) -> Result<crate::retro::recode::RecodeSummary> {
    match game_of_file(from)? {
        GameKind::Dots => dots::build::recode(from, out, chunk, progress),
        GameKind::Morris => morris::build::recode(from, out, chunk, progress),
        GameKind::Qubic => bail!(
            "{} is a Qubic strategy (one small block per reply): there is nothing to recode",
            from.display()
        ),
    }
}

/// The JSON object for a position that has no answer (`tb probe --json`, `tb
/// serve`): `{"input":...,"error":...}`, the error on one line.
pub fn probe_error_json(input: &str, error: &anyhow::Error) -> String {
    #[derive(serde::Serialize)]
    struct ErrorJson<'a> {
        input: &'a str,
        error: String,
    }
    let object = ErrorJson {
        input,
        error: format!("{error:#}"),
    };
    serde_json::to_string(&object).expect("errors serialise")
}
