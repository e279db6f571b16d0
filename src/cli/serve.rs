//! `tb serve`: the tables named on the command line, over HTTP.

use super::args;
use anyhow::{Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Serves until SIGTERM or Ctrl-C; the first line printed says where.
pub fn serve(args: args::Serve) -> Result<ExitCode> {
    let tables = args
        .db
        .iter()
        .map(|arg| -> Result<(String, PathBuf)> {
            Ok(match arg.split_once('=') {
                Some((name, file)) => (name.to_string(), PathBuf::from(file)),
                None => (tb::games::table::default_name(Path::new(arg))?, arg.into()),
            })
        })
        .collect::<Result<_>>()?;
    if [
        args.max_concurrent,
        args.max_batch,
        args.max_batches,
        args.max_connections,
    ]
    .contains(&0)
    {
        bail!(
            "--max-concurrent, --max-batch, --max-batches and --max-connections must be at least 1"
        );
    }
    if args.idle_time.is_zero() {
        bail!("--idle-time must be more than 0s");
    }
    let mut options = tb::serve::ServeOptions::new(tables, args.listen);
    options.max_concurrent = args.max_concurrent;
    options.max_batch = args.max_batch;
    options.max_batches = args.max_batches;
    options.max_connections = args.max_connections;
    options.idle_time = args.idle_time;
    options.request_time = args.request_time;
    tb::serve::serve(options, |address| {
        // The first line says where (scripts and tests read it).
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "listening on http://{address}");
        let _ = stdout.flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
