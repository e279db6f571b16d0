//! The games: each folder holds a game's rules, notation, indexing, kernel and
//! reader, on top of the generic store ([`crate::store`]) and scheduler
//! ([`crate::retro`]).
//!
//! This module is the registry of the read side: [`open`] reads a file's `game`
//! metadata and gives the game's [`read::Reader`], the one interface the CLI,
//! `tb serve` and the Python module use for every game. It is the only place
//! outside the games' own folders that names a game.
//! [`table`] shares readers of one file between threads.

pub mod dots;
pub mod morris;
pub mod play;
pub mod qubic;
pub mod read;
pub mod table;

use crate::store::{Store, StoreError, StoreErrorKind};
use anyhow::Result;
use read::{ReadOptions, Reader};
use std::collections::BTreeMap;
use std::path::Path;

/// The games a file can hold, by the name in its `game` metadata.
const GAMES: &[&str] = &[
    dots::reader::GAME,
    morris::reader::GAME,
    qubic::stored::GAME,
];

/// Opens a table file of any game read-only (checked like any reader: schema,
/// metadata, layers), with the search bounds of `options` for a game that
/// searches (a game without a search fallback refuses them). One SQLite
/// connection: a cold probe pays for each open.
pub fn open(path: &Path, options: &ReadOptions) -> Result<Box<dyn Reader>> {
    let store = Store::open_read(path)?;
    let meta = store
        .meta()
        .map_err(|e| e.context(path.display().to_string()))?;
    Ok(match game_of_meta(&meta, path)? {
        dots::reader::GAME => Box::new(dots::reader::DotsReader::from_store(path, store, options)?),
        morris::reader::GAME => Box::new(morris::reader::MorrisReader::from_store(
            path, store, options,
        )?),
        _ => Box::new(qubic::reader::QubicReader::from_store(
            path, store, options,
        )?),
    })
}

/// `tb play`'s session: on the table file `setup.db`, its game's (Dots-and-Boxes
/// or Morris; a Qubic file is refused); without a file, Dots-and-Boxes with values
/// from the search solver.
pub fn open_play(setup: &play::Setup) -> Result<Box<dyn play::Session>> {
    let Some(path) = setup.db else {
        return Ok(Box::new(dots::play::open(setup)?));
    };
    let meta = Store::open_read(path)?
        .meta()
        .map_err(|e| e.context(path.display().to_string()))?;
    Ok(match game_of_meta(&meta, path)? {
        dots::reader::GAME => Box::new(dots::play::open(setup)?),
        morris::reader::GAME => Box::new(morris::play::open(setup)?),
        _ => anyhow::bail!(
            "{} is a Qubic strategy: tb play plays Dots-and-Boxes and Morris (tb serve's web board plays Qubic)",
            path.display()
        ),
    })
}

/// Recodes the finished table `from` (of any game) into `out` with chunks of
/// `chunk` positions and in `coding` (each by default the source's; see
/// [`crate::retro::recode`]).
pub fn recode(
    from: &Path,
    out: &Path,
    chunk: Option<u64>,
    coding: Option<crate::store::codec::Family>,
    progress: &mut dyn crate::retro::progress::Progress,
) -> Result<crate::retro::recode::RecodeSummary> {
    let meta = Store::open_read(from)?
        .meta()
        .map_err(|e| e.context(from.display().to_string()))?;
    match game_of_meta(&meta, from)? {
        dots::reader::GAME => dots::build::recode(from, out, chunk, coding, progress),
        morris::reader::GAME => morris::build::recode(from, out, chunk, coding, progress),
        _ => anyhow::bail!(
            "{} is a Qubic strategy (one small block per reply): there is nothing to recode",
            from.display()
        ),
    }
}

/// The build kernel of the game that identity rows name (a file's meta, or what
/// [`crate::retro::Format::identity`] gives): what a block task of a distributed
/// build ([`crate::retro::distributed`]) computes with, in a process that knows
/// only the identity. Made once per identity and process and kept for the
/// process's lifetime (a worker runs many blocks of few builds).
pub fn kernel_of_identity(
    identity: &BTreeMap<String, String>,
) -> Result<&'static dyn crate::retro::Kernel> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Kernels = HashMap<String, &'static dyn crate::retro::Kernel>;
    static KERNELS: Mutex<Option<Kernels>> = Mutex::new(None);
    let name = serde_json::to_string(identity)?;
    let mut kernels = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    let kernels = kernels.get_or_insert_with(HashMap::new);
    if let Some(kernel) = kernels.get(&name) {
        return Ok(*kernel);
    }
    let kernel: &'static dyn crate::retro::Kernel =
        match game_of_meta(identity, Path::new("the identity"))? {
            dots::reader::GAME => {
                let spec: &'static dots::spec::Spec =
                    Box::leak(Box::new(dots::spec::Spec::from_meta(identity)?));
                let layout: &'static dots::layout::Layout = Box::leak(Box::new(spec.layout()));
                layout.prepare_unranking();
                let completion = Box::leak(spec.board.completion_masks().into_boxed_slice());
                Box::leak(Box::new(dots::build::DotsKernel::new(
                    spec, layout, completion,
                )))
            }
            morris::reader::GAME => Box::leak(Box::new(morris::build::MorrisKernel::new(
                morris::spec::MorrisSpec::from_meta(identity)?,
            ))),
            other => anyhow::bail!("{other} is not built block by block: it has no block tasks"),
        };
    kernels.insert(name, kernel);
    Ok(kernel)
}

/// The game a file's metadata names, one of [`GAMES`] (`path` for messages).
fn game_of_meta(meta: &BTreeMap<String, String>, path: &Path) -> Result<&'static str> {
    let not_a_table = |why: String| -> anyhow::Error {
        StoreError::new(
            StoreErrorKind::NotATable,
            format!("{}{why}", path.display()),
        )
        .into()
    };
    match meta.get("game") {
        Some(name) => GAMES
            .iter()
            .copied()
            .find(|game| game == name)
            .ok_or_else(|| {
                not_a_table(format!(
                    " holds the game `{name}`, which this tb does not know"
                ))
            }),
        None => Err(not_a_table(
            ": the file has no `game` metadata (not a finished tb file?)".into(),
        )),
    }
}
