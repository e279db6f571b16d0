//! `tb recode`, `tb completions` and `tb man`.

use super::args::Cli;
use anyhow::{Result, bail};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use tb::retro::progress;
use tb::store::codec::Family;

/// `tb recode`: a copy of a finished table with chunks of another size or coding.
pub fn recode(
    db: &Path,
    out: &Path,
    chunk: Option<u64>,
    coding: Option<&str>,
    threads: Option<usize>,
    quiet: bool,
    json: bool,
) -> Result<ExitCode> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(super::common::threads(threads)?)
        .build()?;
    let mut progress = progress::for_stderr(quiet);
    let coding = match coding {
        None => None,
        Some(name) => match Family::parse(name) {
            Some(family) => Some(family),
            None => bail!("unknown chunk coding `{name}`"),
        },
    };
    let summary = pool.install(|| tb::games::recode(db, out, chunk, coding, progress.as_mut()))?;
    if json {
        super::common::print_line(serde_json::to_string(&summary)?)?;
    } else if quiet {
        super::common::print_line(out.display())?;
    } else {
        super::common::print_line(format!("{} -> {}", db.display(), out.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `tb completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "tb", &mut script);
    std::io::stdout().write_all(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// `tb man [COMMAND]`: tb's manual page, or a command's.
pub fn man(command: Option<String>) -> Result<ExitCode> {
    let mut tb = Cli::command();
    let source = concat!("tb ", env!("CARGO_PKG_VERSION"));
    let page = match command {
        None => clap_mangen::Man::new(tb).source(source),
        Some(name) => {
            tb.build();
            let Some(sub) = tb.find_subcommand(&name) else {
                bail!("`{name}` is not a command of tb (see tb --help)");
            };
            // The page's title is `tb-<command>`, as man(1) expects.
            clap_mangen::Man::new(sub.clone())
                .title(format!("tb-{name}"))
                .source(source)
        }
    };
    let mut roff = Vec::new();
    page.render(&mut roff)?;
    std::io::stdout().write_all(&roff)?;
    Ok(ExitCode::SUCCESS)
}
