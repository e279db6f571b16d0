//! `tb`: the command-line front end. It parses the arguments (`cli::args`),
//! dispatches to a handler (`cli`) and reports errors with exit codes; the work
//! is in the library.

use clap::Parser;
use std::process::ExitCode;

mod cli;

use cli::common::{EXIT_FAILURE, note};

fn main() -> ExitCode {
    let cli = cli::args::Cli::parse();
    match cli::run(cli.command) {
        Ok(code) => code,
        // A closed stdout (`tb export | head`) ends the output quietly.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            note(&format!("tb: error: {e:#}"));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Whether an error comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
