//! The command handlers: [`run`] dispatches a parsed command line to its handler
//! (one file per concern: [`read`] for every game's probe, info, verify and
//! export through the registry of readers, one file per game's build, [`serve`],
//! [`tools`] for recode, completions and manual pages; [`common`], the helpers
//! they share). Parsing and printing only: the work is in the library.

pub mod args;
mod batch;
pub mod common;
mod dots;
mod morris;
mod qubic;
mod read;
mod serve;
mod tools;

use anyhow::Result;
use args::{BuildGame, Command};
use std::process::ExitCode;

/// Runs a command.
pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Build(build) => match build.game {
            Some(BuildGame::Morris(args)) => morris::build(args),
            Some(BuildGame::Qubic(args)) => qubic::build(args),
            None => dots::build(build.dots),
        },
        Command::Probe(args) => read::probe(args),
        Command::Solve(args) => dots::solve(args),
        Command::Export(args) => read::export(args),
        Command::Info { db, json } => read::info(&db, json),
        Command::Verify {
            db,
            sample,
            search,
            json,
        } => read::verify(&db, sample, search, json),
        Command::Serve(args) => serve::serve(args),
        Command::Recode {
            db,
            out,
            chunk,
            coding,
            threads,
            quiet,
            json,
        } => tools::recode(&db, &out, chunk, coding.as_deref(), threads, quiet, json),
        Command::Completions { shell } => tools::completions(shell),
        Command::Play(args) => read::play(args),
        Command::Man { command } => tools::man(command),
    }
}
