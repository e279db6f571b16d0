//! `tb probe`, `tb info`, `tb verify` and `tb export`: for every game, through
//! the registry of readers (`tb::games::open`).

use super::args::{self, Format};
use super::batch::{Positions, probe_batch};
use anyhow::Result;
use std::path::Path;
use std::process::ExitCode;
use tb::games::read::{
    Ask, Detail, ExportFormat, ExportOptions, Form, ReadOptions, Reader, VerifyOptions,
};

/// `tb probe`: positions from the arguments or stdin, answered as text or JSON
/// lines; a stdin batch on `--threads` threads, each with its own reader.
pub fn probe(args: args::Probe) -> Result<ExitCode> {
    let options = ReadOptions {
        search_limit: args.search.search_limit,
        max_nodes: args.search.bounds.max_nodes,
        time_limit: args.search.bounds.time_limit,
    };
    let positions = Positions::of_args(args.positions)?;
    // Checked now; every core if not given (see probe_batch).
    let threads = args
        .threads
        .map(|t| super::common::threads(Some(t)))
        .transpose()?;
    let form = if args.json { Form::Json } else { Form::Text };
    let detail = if args.no_tie_break {
        Detail::MovesUntied
    } else {
        Detail::Moves
    };
    // The file opened here answers on the first worker; the others open their own,
    // and they share what they decode (each would decode every chunk it reads).
    let first = std::sync::Mutex::new(Some(open(&args.db, &options)?));
    let shared = tb::store::reader::SharedChunks::new();
    probe_batch(positions, args.json, threads, || {
        let mut reader = match first.lock().expect("not poisoned").take() {
            Some(reader) => reader,
            None => open(&args.db, &options)?,
        };
        reader.share_chunks(&shared);
        Ok(move |input: &str, from_args: bool, out: &mut String| {
            let ask = Ask {
                files: from_args,
                ..Ask::detail(detail)
            };
            reader.answer_into(input, ask, form, out)?;
            if form == Form::Json {
                out.push('\n');
            }
            Ok(())
        })
    })
}

/// Opens a table for the CLI.
fn open(db: &Path, options: &ReadOptions) -> Result<Box<dyn Reader>> {
    tb::games::open(db, options)
}

/// `tb info`.
pub fn info(db: &Path, json: bool) -> Result<ExitCode> {
    let report = open(db, &ReadOptions::default())?.info()?;
    if json {
        super::common::print_line(serde_json::to_string_pretty(&report.json)?)?;
    } else {
        super::common::print(&report.text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `tb verify`: exit 1 when it finds a problem.
pub fn verify(db: &Path, sample: Option<u64>, search: Option<u64>, json: bool) -> Result<ExitCode> {
    let report = open(db, &ReadOptions::default())?.verify(&VerifyOptions { sample, search })?;
    if json {
        super::common::print_line(serde_json::to_string(&report.json)?)?;
    } else {
        super::common::print(&report.text)?;
    }
    Ok(super::common::verdict(report.ok))
}

/// `tb export`.
pub fn export(args: args::Export) -> Result<ExitCode> {
    let reader = open(&args.db, &ReadOptions::default())?;
    let options = ExportOptions {
        format: match args.format {
            Format::Jsonl => ExportFormat::Jsonl,
            Format::Csv => ExportFormat::Csv,
            Format::Patashnik => ExportFormat::Patashnik,
        },
        max_lines: args.max_lines,
        expand: args.expand,
    };
    super::common::export_to(args.output.as_deref(), &args.db, |sink| {
        reader.export(&options, sink)
    })
}

/// `tb play`: a game against the table (any game's file) or the search solver, in
/// the terminal (or a script).
pub fn play(args: args::Play) -> Result<ExitCode> {
    use std::io::IsTerminal;
    // With --db a single argument is the position (the board is the table's).
    let (board, position) = match (&args.db, args.board, args.position) {
        (Some(_), Some(one), None) => (None, Some(one)),
        (_, board, position) => (board, position),
    };
    let setup = tb::games::play::Setup {
        db: args.db.as_deref(),
        board: board.as_deref(),
        position: position.as_deref(),
        penalty: args.penalty,
        limits: args.bounds.limits(),
        computer: args.computer.map(|side| match side {
            args::SideArg::A => tb::games::play::Seat::First,
            args::SideArg::B => tb::games::play::Seat::Second,
        }),
        loony: args.loony,
    };
    let mut session = tb::games::open_play(&setup)?;
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    tb::games::play::run(
        &mut *session,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        terminal,
    )?;
    Ok(ExitCode::SUCCESS)
}
