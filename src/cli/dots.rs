//! The Dots-and-Boxes commands that are not a table's: `tb build RxC`, `tb
//! solve` and `tb play`.

use super::args::{self, SymmetryArg};
use super::common::{print, print_line};
use anyhow::{Result, bail};
use std::process::ExitCode;
use tb::games::dots::board::Board;
use tb::games::dots::build::{BuildOptions, BuildRequest, build as build_table, check_budget};
use tb::games::dots::chains::ChainRule;
use tb::games::dots::{notation, output, plan, spec};
use tb::retro::progress;

/// `tb build RxC`: builds (or resumes) a tablebase, or prints its plan.
pub fn build(args: args::DotsBuild) -> Result<ExitCode> {
    let board = args.board.expect("clap requires the board");
    let common = args.common;
    let request = BuildRequest {
        board: parse_board(&board, "tb build GAME [OPTIONS]: the game first")?,
        start: args.start.unwrap_or_else(|| "empty".to_string()),
        penalty: args.penalty,
        book_lines: args.book_lines,
        memory: super::common::build_memory(
            common.memory.as_deref(),
            tb::sys::default_memory(tb::games::dots::build::DEFAULT_MEMORY),
            args.plan,
        )?,
        groups: args.groups,
        chunk: args.chunk.unwrap_or(spec::DEFAULT_CHUNK_POSITIONS),
        symmetry: args.symmetry.map(|s| s != SymmetryArg::None),
        corners: (args.corners || args.no_corners).then_some(args.corners),
        loony: args.loony,
        chain_rule: ChainRule::asked(args.wilson_chains),
    };
    let spec = request.spec()?;
    if args.plan {
        let cluster = match (args.workers, args.cores) {
            (Some(0), _) | (_, Some(0)) => bail!("--workers and --cores need at least 1"),
            (Some(workers), cores) => Some(plan::Cluster::new(workers, cores.unwrap_or(workers))),
            (None, _) => None,
        };
        let threads = super::common::threads(args.threads)?;
        let p = plan::plan(&spec, request.memory, threads, cluster);
        if common.json {
            print_line(serde_json::to_string(&p)?)?;
        } else {
            print(plan::plan_text(&p))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let db = args.db.unwrap_or_else(|| request.default_db(&spec));
    let spec = request.spec_for_file(spec, &db)?;
    check_budget(&spec, request.memory)?;
    let threads = super::common::threads(args.threads)?;
    let mut progress = progress::for_stderr(common.quiet);
    let summary = build_table(
        BuildOptions {
            spec,
            groups_explicit: request.groups.is_some(),
            db: db.clone(),
            threads,
            memory: request.memory,
        },
        progress.as_mut(),
    )?;
    super::common::print_summary(&summary, &summary.run, &common, &db, || {
        format!(
            "{} start value {:+}{} -> {}",
            summary.spec.board,
            summary.start_value,
            summary.loony_mark(),
            db.display()
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `tb solve`: a position's value and its moves' by search; with `--json`,
/// errors are JSON objects too.
pub fn solve(args: args::Solve) -> Result<ExitCode> {
    if !args.json {
        return solve_with(&args);
    }
    match solve_with(&args) {
        Ok(code) => Ok(code),
        Err(e) => {
            let input = args.position.as_deref().unwrap_or(&args.start);
            print_line(tb::games::read::error_json(input, &e))?;
            Ok(ExitCode::from(super::common::EXIT_FAILURE))
        }
    }
}

fn solve_with(args: &args::Solve) -> Result<ExitCode> {
    let board = parse_board(
        &args.board,
        "tb solve searches Dots-and-Boxes; other games are probed from their tables",
    )?;
    let threads = super::common::threads(args.threads)?;
    let mut request = tb::games::dots::solve::SolveRequest::new(
        &board,
        args.position.as_deref(),
        notation::parse_position_arg,
        &args.start,
        args.penalty,
    )?;
    request.tt_bytes = super::common::memory("--tt", args.tt.as_deref(), request.tt_bytes)?;
    request.threads = threads;
    request.pv = args.pv;
    request.best_only = args.best;
    request.losing_bounds = args.losing_bounds;
    request.chain_rule = ChainRule::asked(args.wilson_chains);
    request.store = args.store.clone();
    if let Some(depth) = args.store_depth {
        request.store_depth = depth;
    }
    let lines = request.lines;
    let json = args.json;
    if args.loony {
        request.chains.plain_only("--loony analyses")?;
        if args.pv || args.best || args.losing_bounds || args.bounds.given() || args.tt.is_some() {
            bail!(
                "--loony analyses by exhaustion: --pv, --best, --losing-bounds, --tt, --max-nodes and --time-limit do not apply"
            );
        }
        let started = std::time::Instant::now();
        let answer = tb::games::dots::loony_solve::solve(&board, lines, request.penalty as i32)?;
        let seconds = started.elapsed().as_secs_f64();
        if json {
            print_line(output::JsonWriter::new(&board).probe(&answer))?;
        } else {
            print(output::probe_text(&board, &answer))?;
            let open = board.num_lines() as u32 - lines.count_ones();
            print_line(format!(
                "loony analysis of 2^{open} positions in {seconds:.3} s"
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(text) = request.chains_text(&board).filter(|_| !json) {
        print_line(text)?;
    }
    let run = request.run(
        board,
        args.bounds.limits(),
        super::common::search_progress(),
    );
    super::common::end_search_progress();
    let run = run?;
    let seconds = run.seconds;
    let store_text = run.store.map(|s| {
        format!(
            "store: {} positions loaded, {} added or tightened, {} in the store",
            s.loaded, s.written, s.total
        )
    });
    let result = match run.outcome {
        Ok(result) => result,
        Err(stopped) if json => {
            print_line(output::stopped_json(
                &board, lines, &stopped, seconds, run.store,
            ))?;
            return Ok(ExitCode::from(super::common::EXIT_FAILURE));
        }
        Err(stopped) => {
            if let Some(text) = store_text {
                eprintln!("{text}");
            }
            return Err(stopped.into());
        }
    };
    let answer = tb::games::dots::probe::Probe::from_search(lines, &result);
    if json {
        print_line(output::solve_json(
            &board, &answer, &result, seconds, &request, run.store,
        ))?;
    } else {
        print(output::probe_text_bounded(&board, &answer, result.bounded))?;
        if result.best_only {
            print_line("(one best move: --best values no other)")?;
        }
        print_line(format!("searched {} nodes in {seconds:.3} s", result.nodes))?;
        if let Some(text) = store_text {
            print_line(text)?;
        }
        if args.pv {
            let names: Vec<String> = result.pv.iter().map(|&l| board.line_name(l)).collect();
            print_line(format!("pv: {}", names.join(" ")))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A board argument; when it is not one, the error adds `hint` (another game's
/// name lands here).
fn parse_board(text: &str, hint: &str) -> Result<Board> {
    text.parse::<Board>()
        .map_err(|e| anyhow::anyhow!("{e} ({hint})"))
}
