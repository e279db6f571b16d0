//! `tb`: command-line front end. It only parses arguments and prints; the work is in
//! the library.

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tb::games::dots::board::Board;
use tb::games::dots::build::{BuildOptions, BuildRequest, build, check_budget};
use tb::games::dots::spec;
use tb::games::dots::tablebase::Tablebase;
use tb::games::dots::{export, info, notation, output, plan, search, verify};
use tb::games::qubic::report;
use tb::games::{GameKind, OpenTablebase, game_of_file};
use tb::retro::progress;

/// Writes a line to stdout, failing (instead of panicking) when stdout is closed.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*)?
    };
}

/// Writes to stdout, failing (instead of panicking) when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout(), $($arg)*)?
    };
}

mod cli;

/// Writes a line to stderr; a closed or full stderr is ignored (never a panic:
/// the exit code still tells what happened).
fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Exit code for runtime failures (usage errors exit with 2 through clap).
const EXIT_FAILURE: u8 = 1;

#[derive(Parser)]
#[command(
    name = "tb",
    version,
    about = "Embedded, SQLite-backed endgame tablebase builder for Dots-and-Boxes and Nine Men's Morris",
    long_about = "Builds endgame tablebases by retrograde analysis, stores them as zstd-compressed blocks in one SQLite file, probes positions and exports them.\n\nThe first argument of build and solve names the game: RxC is Dots-and-Boxes (David Wilson's method: layer by layer from the full board back to the start; values are net future boxes for the player to move; positions are E characters 0/1 in line order, a move list such as h0.0,v1.2, or a file in Wilson's format), `morris` is Nine Men's Morris (Gasser's rules; tables per stone counts; positions are 24 characters ./W/B in the order a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7 and the side to move w/b, e.g. `WW......BB.....W.B...... w`; values W<plies>, L<plies>, D), `qubic` is 4x4x4 tic-tac-toe (a winning strategy for X, the first player: positions are move lists of cells 0..63 such as 0-3-60-21, or 64 characters ./X/O).\n\nprobe, export, info and verify read the game from the file.",
    after_help = "Exit codes: 0 success, 1 runtime error, 2 usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--symmetry` values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SymmetryArg {
    /// Store every position.
    None,
    /// Wilson's reduction (DESIGN.md section 3).
    Wilson,
}

#[derive(Subcommand)]
enum Command {
    /// Build (or resume building) a tablebase.
    #[command(
        after_help = "Examples:\n  tb build 3x3\n  tb build 3x4 --start swedish --book-lines 20\n  tb build 2x3 --penalty -1 --db nim.tb\n  tb build morris --stones 5\n  tb build morris --stones 4 --phase all\n  tb build qubic\n  tb build qubic --start 0-63-21-42-15 --db small.tb"
    )]
    Build {
        /// The game: a Dots-and-Boxes board RxC in boxes (e.g. 3x5 = 3 rows by 5
        /// columns of boxes), `morris` (Nine Men's Morris; see --phase), or `qubic`
        /// (a winning strategy for X in 4x4x4 tic-tac-toe; see --first, --start).
        game: String,
        /// Dots-and-Boxes start: empty, swedish (perimeter drawn), icelandic (top and
        /// left perimeter drawn), a position (0/1 string or move list) or a file in
        /// Wilson's format [default: empty]. Qubic: a position with O to move (a move
        /// list such as 0-63-21-42-15) to build the strategy from, instead of X's
        /// first move.
        #[arg(long)]
        start: Option<String>,
        /// Morris: build the tables with at most N stones a side (3..=9) [default: 9,
        /// every table].
        #[arg(long, value_name = "N")]
        stones: Option<u8>,
        /// Morris: the phases to build: `moving` (the tables (m, o) of the moving
        /// phase), `all` (also every placement position back to the empty board), or
        /// `placement` (add the placement tables to an existing moving-phase file)
        /// [default: moving].
        #[arg(long, value_enum)]
        phase: Option<PhaseArg>,
        /// Value of the full board (Wilson's last-move penalty); -1 gives nimstring-like play.
        #[arg(long, allow_negative_numbers = true)]
        penalty: Option<i32>,
        /// Database file [default: <board>[-<start>][-p<penalty>][-loony].tb; morris.tb or
        /// morris-<N>.tb].
        #[arg(long)]
        db: Option<PathBuf>,
        /// Keep every layer with at most K lines as the opening book [default: the
        /// deepest K whose layers hold at most 2^26 positions].
        #[arg(long, value_name = "K")]
        book_lines: Option<usize>,
        /// Worker threads [default: all cores].
        #[arg(long)]
        threads: Option<usize>,
        /// Memory budget (e.g. 512MiB, 8GiB): blocks kept in memory and, for Morris,
        /// the pair being solved [default: 8GiB for Dots-and-Boxes, 16GiB for Morris].
        #[arg(long)]
        memory: Option<String>,
        /// Line groups: sizes over the free lines in line order (e.g. 16,15), or line
        /// names per group separated by / [default: chosen from --memory].
        #[arg(long)]
        groups: Option<String>,
        /// Positions per stored chunk [default: 65536 for Dots-and-Boxes; for Morris
        /// 2048, or the file's own when resuming].
        #[arg(long, value_name = "N")]
        chunk: Option<u64>,
        /// Dots-and-Boxes symmetry reduction: wilson stores a position only if its
        /// group-1 lines are the least of their orbit under the board symmetries that
        /// map every group onto itself (about 3-8x fewer positions); none stores all
        /// [default: wilson]. Morris always stores one position per class of its
        /// 16 symmetries.
        #[arg(long, value_enum)]
        symmetry: Option<SymmetryArg>,
        /// Corner reduction: the two perimeter lines of a corner box are
        /// interchangeable, so a corner takes 3 states instead of 4 (81/256 of the
        /// positions on boards at least 2x2 with all four corners free) [default: on
        /// where a corner has both perimeter lines free, with the symmetry reduction
        /// and without chains; a resumed build keeps its file's].
        #[arg(long, conflicts_with = "no_corners")]
        corners: bool,
        /// No corner reduction (see --corners).
        #[arg(long)]
        no_corners: bool,
        /// Wilson's loony analysis: each position also stores who can be forced to
        /// make the next loony move under best play (probe marks ^ and v, JSON
        /// "loony"); the same values as a plain build. Boards of at most 20 boxes
        /// (with the penalty); the default file gets `-loony` in its name.
        #[arg(long)]
        loony: bool,
        /// Qubic: X's first move, a cell 0..=63 [default: 0, a corner].
        #[arg(long, value_name = "CELL")]
        first: Option<u8>,
        /// Qubic: stop after this many seconds (the O replies proven so far are kept;
        /// running again goes on).
        #[arg(long, value_name = "SECONDS")]
        time_limit: Option<f64>,
        /// Qubic: after each O reply is proven, every position of its strategy
        /// whose subtree has at most N+1 strategic moves is searched exhaustively
        /// for a move with fewer (0: keep the strategy read off the proof)
        /// [default: 3].
        #[arg(long, value_name = "N")]
        shrink: Option<u32>,
        /// No progress output.
        #[arg(long, short)]
        quiet: bool,
        /// Print the final summary as one JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// Print the plan (groups, blocks per layer, predicted memory and disk) and
        /// exit without building.
        #[arg(long)]
        plan: bool,
    },
    /// Value of positions and of each of their moves, from a built tablebase.
    #[command(
        after_help = "Positions come from the arguments, or one per line on stdin.\nExamples:\n  tb probe --db 3x3.tb --json 000000000000000000000000\n  tb probe --db morris.tb \"W.W..B...B.W.B.......... b\""
    )]
    Probe {
        /// The tablebase file.
        #[arg(long)]
        db: PathBuf,
        /// One JSON object per position per line.
        #[arg(long)]
        json: bool,
        /// Positions. Dots-and-Boxes: 0/1 strings, move lists (h0.0,v1.2) or Wilson
        /// files. Morris: 24 characters ./W/B in point order and the side to move
        /// (`W.W..B...B.W.B.......... b`).
        positions: Vec<String>,
        /// Dots-and-Boxes: positions past the stored layers are searched if they have
        /// at most this many open lines (0: never search) [default: 26].
        #[arg(long)]
        search_limit: Option<u32>,
        /// Dots-and-Boxes: threads answering the positions of stdin, each with its
        /// own chunk cache [default: all cores]; answers keep the input order.
        #[arg(long)]
        threads: Option<usize>,
        #[command(flatten)]
        bounds: SearchBounds,
    },
    /// Value of a position and of every move (or one best move) by search (no
    /// database needed).
    #[command(
        after_help = "Examples:\n  tb solve 3x3\n  tb solve 3x5 --start swedish --pv\n  tb solve 2x4 h0.0,v1.1 --json\n  tb solve 5x5 data/problem-12.18.txt --tt 4GiB --best\n\nChains: in a Wilson file, dots on open lines mark chains (strings of boxes with two sides drawn), as in Wilson's diagram of problem 12.18. Each chain is played as one pseudo-line: once a line of a chain is drawn, only that chain's lines may be drawn until it is full (Wilson's assumption; see the README)."
    )]
    Solve {
        /// Board size in boxes, RxC.
        board: String,
        /// The position [default: the start]: 0/1 string, move list, or a Wilson file
        /// (whose dots mark chains).
        position: Option<String>,
        /// Start when no position is given: empty, swedish, icelandic, a position or a
        /// Wilson file.
        #[arg(long, default_value = "empty")]
        start: String,
        /// Value of the full board (Wilson's last-move penalty).
        #[arg(long, allow_negative_numbers = true)]
        penalty: Option<i32>,
        /// Transposition table size (e.g. 64MiB, 1GiB), at most 16 bytes per position
        /// that can arise (2^open) [default: 64MiB up to 24 open lines, 256MiB up to
        /// 28, else 1GiB].
        #[arg(long)]
        tt: Option<String>,
        /// Search threads [default: all cores] (lazy SMP over one shared table).
        #[arg(long)]
        threads: Option<usize>,
        /// Also print the principal variation to the end of the game.
        #[arg(long)]
        pv: bool,
        /// The value and one best move only (in JSON, `moves` holds that move and
        /// `"best_only":true` is added), not every move's value: the move that proved
        /// the value, checked by one more null-window search. Each other move's value
        /// needs a search of its own; where many moves are best (problem 12.18) that
        /// is as long again as the value.
        #[arg(long)]
        best: bool,
        /// One JSON object (the probe shape plus nodes, seconds, pv, chains).
        #[arg(long)]
        json: bool,
        /// Loony-move analysis: each value also says who can be forced to make the
        /// next loony move (`^` the opponent, `v` the side to move; see the README),
        /// by exhaustive analysis of up to 26 open lines.
        #[arg(long)]
        loony: bool,
        #[command(flatten)]
        bounds: SearchBounds,
    },
    /// Write the stored positions as rows. Dots-and-Boxes: the opening book, ordered
    /// by lines, then block, then index; with a reduction, one row per stored
    /// representative unless --expand. Morris: one row per stored class.
    Export {
        /// The tablebase file.
        #[arg(long)]
        db: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Jsonl)]
        format: Format,
        /// Dots-and-Boxes: only positions with at most K lines.
        #[arg(long, value_name = "K")]
        max_lines: Option<usize>,
        /// Output file [default: stdout].
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// With a symmetry or corner reduction: one row for every position of each
        /// stored class (rows of one class follow each other), instead of one row per
        /// stored representative.
        #[arg(long)]
        expand: bool,
    },
    /// Metadata and per-layer statistics of a tablebase (Morris: per table pair).
    Info {
        /// The tablebase file.
        #[arg(long)]
        db: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve tables read-only over HTTP: a web board at /, probe JSON for scripts
    /// (GET /api/probe, POST batches), /api/tables, /health.
    #[command(
        after_help = "Examples:\n  tb serve --db 3x4.tb --db morris.tb\n  tb serve --db book=3x4.tb --listen 0.0.0.0:8080\n  curl 'http://127.0.0.1:8080/api/probe?table=3x4&position=h0.0,v1.1'\n  curl -d '[\"0000\",\"1110\"]' 'http://127.0.0.1:8080/api/probe?table=1x1'"
    )]
    Serve {
        /// A table to serve: FILE (named by its stem, `3x4.tb` is `3x4`) or NAME=FILE.
        /// Repeat for several.
        #[arg(long, required = true)]
        db: Vec<String>,
        /// Address to listen on (port 0: any free port; the address is printed).
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
        /// Most requests answered at once (more get 503).
        #[arg(long, default_value_t = 256)]
        max_concurrent: usize,
        /// Most positions in one POST batch (more get 413).
        #[arg(long, default_value_t = 100_000)]
        max_batch: usize,
        /// Longest a request may take (a search stops then), e.g. 10s.
        #[arg(long, value_parser = tb::units::parse_duration, default_value = "10s")]
        request_time: std::time::Duration,
    },
    /// Write a copy of a finished tablebase whose values are stored in chunks of
    /// another size: smaller chunks make a cold probe decode less, larger ones make
    /// the file smaller. Every value is checked against its block's histogram and
    /// digest on the way; a killed recode resumes from `<out>.partial`.
    #[command(
        after_help = "Examples:\n  tb recode --db morris.tb --out morris-8k.tb --chunk 8192\n  tb recode --db 3x4.tb --out 3x4-small.tb --chunk 4096 --json"
    )]
    Recode {
        /// The finished tablebase file to read.
        #[arg(long)]
        db: PathBuf,
        /// The new file (must not exist).
        #[arg(long)]
        out: PathBuf,
        /// Positions per stored chunk in the new file.
        #[arg(long, value_name = "N")]
        chunk: u64,
        /// Worker threads [default: all cores].
        #[arg(long)]
        threads: Option<usize>,
        /// No progress output.
        #[arg(long, short)]
        quiet: bool,
        /// Print the summary as one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Re-hash every chunk and recompute stored values one ply deep from their children.
    Verify {
        /// The tablebase file.
        #[arg(long)]
        db: PathBuf,
        /// Recompute only N positions per layer (Dots-and-Boxes: random; Morris: evenly
        /// spaced per table) [default: all].
        #[arg(long, value_name = "N")]
        sample: Option<u64>,
        /// Dots-and-Boxes: also compare N random stored positions with the search
        /// solver.
        #[arg(long, value_name = "N")]
        search: Option<u64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script for tb.
    #[command(
        after_help = "Examples:\n  tb completions bash > ~/.local/share/bash-completion/completions/tb\n  tb completions zsh > ~/.zfunc/_tb\n  tb completions fish > ~/.config/fish/completions/tb.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Play Dots-and-Boxes against perfect play: the board with every open line's
    /// value (net future boxes for whoever draws it, best in green), the score and
    /// whose turn it is. Type a line name to draw it, `best` for a best move, `undo`,
    /// `redo`, `quit` (or end the input). In a terminal the board is redrawn in place;
    /// otherwise each board is printed after the last, so a script can play.
    #[command(
        after_help = "Examples:\n  tb play 2x2\n  tb play --db 3x3.tb --computer B\n  tb play --db 3x3.tb h0.0,v1.1\n  printf 'h0.0\\nbest\\nundo\\n' | tb play 2x2"
    )]
    Play {
        /// Board size RxC in boxes (values by search), or with --db the position.
        board: Option<String>,
        /// Start position: a move list, 0/1 string or Wilson file [default: the
        /// table's start, or the empty board].
        position: Option<String>,
        /// A tablebase to take the values from (its book, and search beyond it).
        #[arg(long)]
        db: Option<PathBuf>,
        /// The side the program plays (it answers with a best move).
        #[arg(long, value_enum)]
        computer: Option<SideArg>,
        /// Value of the full board (Wilson's last-move penalty), without --db.
        #[arg(long, allow_negative_numbers = true)]
        penalty: Option<i32>,
        /// Loony marks on every value (`^`: the opponent of the player to move can be
        /// forced to make the next loony move, `v`: that player can), by exhaustive
        /// analysis (without --db, up to 26 open lines).
        #[arg(long)]
        loony: bool,
        #[command(flatten)]
        bounds: SearchBounds,
    },
    /// Print a manual page (roff), of tb or of one of its commands.
    #[command(after_help = "Examples:\n  tb man | man -l -\n  tb man build > tb-build.1")]
    Man {
        /// A command of tb (build, probe, ...) for its own page [default: tb's page].
        command: Option<String>,
    },
}

/// `tb play --computer` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SideArg {
    /// Player A (who moves first from the empty board).
    #[value(name = "A", alias = "a")]
    A,
    /// Player B.
    #[value(name = "B", alias = "b")]
    B,
}

/// `tb build morris --phase` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PhaseArg {
    /// The moving-phase tables.
    Moving,
    /// The placement tables, on an existing moving-phase file.
    Placement,
    /// Both phases.
    All,
}

/// Bounds of a search (`tb solve`, the probe fallback).
#[derive(clap::Args, Clone, Copy)]
struct SearchBounds {
    /// Stop a search after N nodes (exit 1, printing the bounds on the value found
    /// so far).
    #[arg(long, value_name = "N")]
    max_nodes: Option<u64>,
    /// Stop a search after this long (e.g. 30s, 5m, 2h; exit 1, printing the bounds
    /// on the value found so far).
    #[arg(long, value_name = "TIME", value_parser = tb::units::parse_duration)]
    time_limit: Option<std::time::Duration>,
}

impl SearchBounds {
    fn limits(self) -> search::Limits {
        search::Limits {
            max_nodes: self.max_nodes,
            time_limit: self.time_limit,
        }
    }

    fn given(self) -> bool {
        self.max_nodes.is_some() || self.time_limit.is_some()
    }
}

/// Export formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// Qubic only: the strategic moves (forced blocks left out) one per line in
    /// the style of Patashnik's dictionary, `X's cells / O's cells : X's move`.
    Patashnik,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // A closed stdout (`tb export | head`) ends the output quietly.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            note(&format!("tb: error: {e:#}"));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Build {
            game,
            start,
            stones,
            phase,
            penalty,
            db,
            book_lines,
            threads,
            memory,
            groups,
            chunk,
            quiet,
            json,
            plan,
            symmetry,
            corners,
            no_corners,
            loony,
            first,
            time_limit,
            shrink,
        } => {
            if game == "qubic" {
                let others = [
                    ("--stones", stones.is_some()),
                    ("--phase", phase.is_some()),
                    ("--penalty", penalty.is_some()),
                    ("--book-lines", book_lines.is_some()),
                    ("--groups", groups.is_some()),
                    ("--chunk", chunk.is_some()),
                    ("--symmetry", symmetry.is_some()),
                    ("--corners", corners),
                    ("--no-corners", no_corners),
                    ("--loony", loony),
                    ("--plan", plan),
                    ("--threads", threads.is_some()),
                ];
                cli::refuse_given(
                    &others,
                    "is not a Qubic option; qubic takes --first, --start, --time-limit, --shrink, --db, --memory, --quiet, --json",
                )?;
                let args = cli::qubic::BuildArgs {
                    db,
                    first,
                    start,
                    memory: cli::memory("--memory", memory.as_deref(), 8 << 30)?,
                    time_limit,
                    shrink: shrink.unwrap_or(3),
                };
                return cli::qubic::build(args, quiet, json);
            }
            if first.is_some() || time_limit.is_some() || shrink.is_some() {
                bail!("--first, --time-limit and --shrink are Qubic options (tb build qubic)");
            }
            if game == "morris" {
                let dots_only = [
                    ("--start", start.is_some()),
                    ("--penalty", penalty.is_some()),
                    ("--book-lines", book_lines.is_some()),
                    ("--groups", groups.is_some()),
                    ("--symmetry", symmetry.is_some()),
                    ("--corners", corners),
                    ("--no-corners", no_corners),
                    ("--loony", loony),
                ];
                cli::refuse_given(
                    &dots_only,
                    "is a Dots-and-Boxes option; morris takes --stones, --phase, --db, --threads, --memory, --chunk, --plan, --quiet, --json",
                )?;
                return cli::morris::build(cli::morris::BuildArgs {
                    stones,
                    phase: match phase {
                        None | Some(PhaseArg::Moving) => cli::morris::PhaseChoice::Moving,
                        Some(PhaseArg::Placement) => cli::morris::PhaseChoice::Placement,
                        Some(PhaseArg::All) => cli::morris::PhaseChoice::All,
                    },
                    db,
                    threads,
                    memory: cli::build_memory(memory.as_deref(), 16 << 30, plan)?,
                    chunk,
                    quiet,
                    json,
                    plan,
                });
            }
            if stones.is_some() || phase.is_some() {
                bail!("--stones and --phase are Morris options (tb build morris --stones N)");
            }
            let request = BuildRequest {
                board: game.parse()?,
                start: start.unwrap_or_else(|| "empty".to_string()),
                penalty,
                book_lines,
                memory: cli::build_memory(memory.as_deref(), 8 << 30, plan)?,
                groups,
                chunk: chunk.unwrap_or(spec::DEFAULT_CHUNK_POSITIONS),
                symmetry: symmetry.map(|s| s != SymmetryArg::None),
                corners: (corners || no_corners).then_some(corners),
                loony,
            };
            let spec = request.spec()?;
            if plan {
                let p = plan::plan(&spec, request.memory, cli::threads(threads)?);
                if json {
                    outln!("{}", serde_json::to_string(&p)?);
                } else {
                    out!("{}", plan::plan_text(&p));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let db = db.unwrap_or_else(|| request.default_db(&spec));
            let spec = request.spec_for_file(spec, &db)?;
            check_budget(&spec, request.memory)?;
            let threads = cli::threads(threads)?;
            let mut progress = progress::for_stderr(quiet);
            let summary = build(
                BuildOptions {
                    spec,
                    groups_explicit: request.groups.is_some(),
                    db: db.clone(),
                    threads,
                    memory: request.memory,
                },
                progress.as_mut(),
            )?;
            if json {
                let value = cli::summary_json(&summary, &summary.run)?;
                outln!("{value}");
            } else if quiet {
                // Scripts still learn where the result went.
                outln!("{}", db.display());
            } else {
                outln!(
                    "{} start value {:+}{} -> {}",
                    summary.spec.board,
                    summary.start_value,
                    summary.loony_mark(),
                    db.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Probe {
            db,
            json,
            positions,
            search_limit,
            threads,
            bounds,
        } => match tb::games::open_tablebase(&db)? {
            OpenTablebase::Morris(_) if search_limit.is_some() || bounds.given() => {
                bail!(
                    "--search-limit, --max-nodes and --time-limit are Dots-and-Boxes options (Morris has no search solver)"
                )
            }
            OpenTablebase::Morris(_) | OpenTablebase::Qubic(_) if threads.is_some() => {
                bail!("--threads is a Dots-and-Boxes option of probe")
            }
            OpenTablebase::Morris(tb) => cli::morris::probe(&tb, json, positions),
            OpenTablebase::Qubic(_) if search_limit.is_some() || bounds.given() => {
                bail!("--search-limit, --max-nodes and --time-limit are Dots-and-Boxes options")
            }
            OpenTablebase::Qubic(file) => cli::qubic::probe(&file, json, positions),
            OpenTablebase::Dots(tb) => probe(
                *tb,
                &db,
                json,
                positions,
                ProbeLimits {
                    search_limit: search_limit
                        .unwrap_or(tb::games::dots::tablebase::DEFAULT_SEARCH_LIMIT),
                    bounds: bounds.limits(),
                    // Checked now; every core if not given (see probe_batch_parallel).
                    threads: threads.map(|t| cli::threads(Some(t))).transpose()?,
                },
            ),
        },
        Command::Solve {
            board,
            position,
            start,
            penalty,
            tt,
            threads,
            pv,
            best,
            json,
            loony,
            bounds,
        } => {
            if board == "morris" {
                bail!(
                    "Morris has no search solver: build its tables (tb build morris) and probe them"
                );
            }
            let board: Board = board.parse()?;
            let threads = cli::threads(threads)?;
            let mut request = tb::games::dots::solve::SolveRequest::new(
                &board,
                position.as_deref(),
                notation::parse_position_arg,
                &start,
                penalty,
            )?;
            request.tt_bytes = cli::memory("--tt", tt.as_deref(), request.tt_bytes)?;
            request.threads = threads;
            request.pv = pv;
            request.best_only = best;
            let lines = request.lines;
            if loony {
                request.chains.plain_only("--loony analyses")?;
                if pv || best || bounds.given() || tt.is_some() {
                    bail!(
                        "--loony analyses by exhaustion: --pv, --best, --tt, --max-nodes and --time-limit do not apply"
                    );
                }
                let started = std::time::Instant::now();
                let answer = tb::games::dots::loony::solve(&board, lines, request.penalty as i32)?;
                let seconds = started.elapsed().as_secs_f64();
                if json {
                    outln!("{}", output::JsonWriter::new(&board).probe(&answer));
                } else {
                    out!("{}", output::probe_text(&board, &answer));
                    let open = board.num_lines() as u32 - lines.count_ones();
                    outln!("loony analysis of 2^{open} positions in {seconds:.3} s");
                }
                return Ok(ExitCode::SUCCESS);
            }
            if !request.chains.is_empty() && !json {
                let chains = request.chains.masks();
                let chain_lines: u32 = chains.iter().map(|c| c.count_ones()).sum();
                let units = request.chains.open_units(lines, board.all_lines());
                outln!(
                    "chains as pseudo-lines: {} chains of {chain_lines} lines; {units} units open",
                    chains.len()
                );
            }
            let started = std::time::Instant::now();
            let mut solver = request.solver(board);
            solver.set_progress(cli::search_progress());
            let outcome = solver.solve_within(lines, bounds.limits());
            cli::end_search_progress();
            let seconds = started.elapsed().as_secs_f64();
            let result = match outcome {
                Ok(result) => result,
                Err(stopped) if json => {
                    outln!("{}", output::stopped_json(&board, lines, &stopped, seconds));
                    return Ok(ExitCode::from(EXIT_FAILURE));
                }
                Err(stopped) => return Err(stopped.into()),
            };
            let answer = tb::games::dots::tablebase::Probe::from_search(lines, &result);
            if json {
                outln!(
                    "{}",
                    output::solve_json(&board, &answer, &result, seconds, pv, &request.chains)
                );
            } else {
                out!("{}", output::probe_text(&board, &answer));
                if result.best_only {
                    outln!("(one best move: --best values no other)");
                }
                outln!("searched {} nodes in {seconds:.3} s", result.nodes);
                if pv {
                    let names: Vec<String> =
                        result.pv.iter().map(|&l| board.line_name(l)).collect();
                    outln!("pv: {}", names.join(" "));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            db,
            format,
            max_lines,
            output,
            expand,
        } => {
            let game = game_of_file(&db)?;
            if format == Format::Patashnik && game != GameKind::Qubic {
                bail!("--format patashnik is for Qubic strategy files");
            }
            match game {
                GameKind::Morris => {
                    return cli::morris::export(
                        &db,
                        format == Format::Csv,
                        max_lines,
                        expand,
                        output,
                    );
                }
                GameKind::Qubic => {
                    let format = match format {
                        Format::Jsonl => report::ExportFormat::Jsonl,
                        Format::Csv => report::ExportFormat::Csv,
                        Format::Patashnik => report::ExportFormat::Patashnik,
                    };
                    return cli::qubic::export(&db, format, max_lines, expand, output);
                }
                GameKind::Dots => {}
            }
            let tb = Tablebase::open(&db)?;
            let format = if format == Format::Csv {
                export::Format::Csv
            } else {
                export::Format::Jsonl
            };
            cli::export_to(output.as_deref(), &db, |sink| {
                export::export(&tb, format, max_lines, expand, sink)
            })
        }
        Command::Recode {
            db,
            out,
            chunk,
            threads,
            quiet,
            json,
        } => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(cli::threads(threads)?)
                .build()?;
            let mut progress = progress::for_stderr(quiet);
            let summary =
                pool.install(|| tb::games::recode(&db, &out, chunk, progress.as_mut()))?;
            if json {
                outln!("{}", serde_json::to_string(&summary)?);
            } else if quiet {
                outln!("{}", out.display());
            } else {
                outln!("{} -> {}", db.display(), out.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Info { db, json } => {
            match game_of_file(&db)? {
                GameKind::Morris => return cli::morris::info(&db, json),
                GameKind::Qubic => return cli::qubic::info(&db, json),
                GameKind::Dots => {}
            }
            let tb = Tablebase::open(&db)?;
            let report = info::info(&tb)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                out!("{}", info::info_text(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Play {
            board,
            position,
            db,
            computer,
            penalty,
            loony,
            bounds,
        } => {
            use std::io::IsTerminal;
            // With --db a single argument is the position (the board is the table's).
            let (board, position) = match (&db, board, position) {
                (Some(_), Some(one), None) => (None, Some(one)),
                (_, board, position) => (board, position),
            };
            let setup = tb::games::dots::play::Setup {
                db: db.as_deref(),
                board: board.as_deref(),
                position: position.as_deref(),
                penalty,
                limits: bounds.limits(),
                computer: computer.map(|side| match side {
                    SideArg::A => notation::Player::A,
                    SideArg::B => notation::Player::B,
                }),
                loony,
            };
            let mut session = setup.open()?;
            let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
            tb::games::dots::play::run(
                &mut session,
                &mut std::io::stdin().lock(),
                &mut std::io::stdout().lock(),
                terminal,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            db,
            listen,
            max_concurrent,
            max_batch,
            request_time,
        } => {
            let tables = db
                .iter()
                .map(|arg| -> Result<(String, PathBuf)> {
                    Ok(match arg.split_once('=') {
                        Some((name, file)) => (name.to_string(), PathBuf::from(file)),
                        None => (tb::games::table::default_name(Path::new(arg))?, arg.into()),
                    })
                })
                .collect::<Result<_>>()?;
            if max_concurrent == 0 || max_batch == 0 {
                bail!("--max-concurrent and --max-batch must be at least 1");
            }
            let mut options = tb::serve::ServeOptions::new(tables, listen);
            options.max_concurrent = max_concurrent;
            options.max_batch = max_batch;
            options.request_time = request_time;
            tb::serve::serve(options, |address| {
                // The first line says where (scripts and tests read it).
                let mut stdout = std::io::stdout();
                let _ = writeln!(stdout, "listening on http://{address}");
                let _ = stdout.flush();
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "tb", &mut script);
            std::io::stdout().write_all(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command } => {
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
        Command::Verify {
            db,
            sample,
            search,
            json,
        } => {
            match game_of_file(&db)? {
                GameKind::Morris => return cli::morris::verify(&db, sample, search, json),
                GameKind::Qubic => return cli::qubic::verify(&db, sample, search, json),
                GameKind::Dots => {}
            }
            let tb = Tablebase::open(&db)?;
            let report = verify::verify(&tb, sample, search.unwrap_or(0))?;
            if json {
                outln!("{}", serde_json::to_string(&report.to_json())?);
            } else {
                out!("{}", report.text());
            }
            Ok(if report.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FAILURE)
            })
        }
    }
}

/// How a Dots-and-Boxes probe runs: the search fallback's limits and the threads
/// of a stdin batch.
struct ProbeLimits {
    search_limit: u32,
    bounds: search::Limits,
    /// `--threads` of a stdin batch (every core if not given).
    threads: Option<usize>,
}

/// Probes Dots-and-Boxes positions from the arguments or stdin (a stdin batch on
/// `limits.threads` threads, each with its own open `db`).
fn probe(
    tb: Tablebase,
    db: &Path,
    json: bool,
    positions: Vec<String>,
    limits: ProbeLimits,
) -> Result<ExitCode> {
    let board = tb.board();
    let answerer = |mut tb: Tablebase| {
        tb.set_search_limit(limits.search_limit);
        tb.set_search_bounds(limits.bounds);
        let mut json_writer = output::JsonWriter::new(&board);
        // The moves of the last answer, reused for the next.
        let mut spare_moves = Vec::new();
        // Arguments may name Wilson files; stdin lines are positions themselves.
        move |input: &str, from_args: bool, out: &mut String| -> Result<()> {
            let parsed = if from_args {
                notation::parse_position_arg(&board, input)
            } else {
                notation::parse_position(&board, input)
            };
            let p = tb.probe_parsed_with(&parsed?, std::mem::take(&mut spare_moves))?;
            if json {
                json_writer.probe_into(&p, out);
                out.push('\n');
            } else {
                out.push_str(&output::probe_text(&board, &p));
            }
            spare_moves = p.moves;
            Ok(())
        }
    };
    // The file opened here answers on the first worker; the others open their own.
    let first = std::sync::Mutex::new(Some(tb));
    cli::probe_batch_parallel(positions, json, limits.threads, || {
        let tb = match first.lock().expect("not poisoned").take() {
            Some(tb) => tb,
            None => Tablebase::open(db)?,
        };
        Ok(answerer(tb))
    })
}

/// Whether an error comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
