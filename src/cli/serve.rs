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
    if args.max_concurrent == 0 || args.max_batch == 0 {
        bail!("--max-concurrent and --max-batch must be at least 1");
    }
    let mut options = tb::serve::ServeOptions::new(tables, args.listen);
    options.max_concurrent = args.max_concurrent;
    options.max_batch = args.max_batch;
    options.request_time = args.request_time;
    tb::serve::serve(options, |address| {
        // The first line says where (scripts and tests read it).
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "listening on http://{address}");
        let _ = stdout.flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
