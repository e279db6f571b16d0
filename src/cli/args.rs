//! The command line as clap sees it: every command and option, with its help.
//! Each game's build options are their own group, so clap itself refuses a
//! Dots-and-Boxes option for `tb build morris` and completions offer each game's
//! options only.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "tb",
    version,
    about = "Embedded, SQLite-backed endgame tablebase builder for Dots-and-Boxes, Nine Men's Morris and Qubic",
    long_about = "Builds endgame tablebases by retrograde analysis, stores them as compressed blocks in one SQLite file, probes positions and exports them.\n\nThe first argument of build names the game: RxC is Dots-and-Boxes (David Wilson's method: layer by layer from the full board back to the start; values are net future boxes for the player to move; positions are E characters 0/1 in line order, a move list such as h0.0,v1.2, or a file in Wilson's format), `morris` is Nine Men's Morris (Gasser's rules; tables per stone counts; positions are 24 characters ./W/B in the order a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 c5 d5 e5 b6 d6 f6 a7 d7 g7 and the side to move w/b, e.g. `WW......BB.....W.B...... w`; values W<plies> the side to move wins, L<plies> it loses, D draw), `qubic` is 4x4x4 tic-tac-toe (a winning strategy for X, the first player: positions are move lists of cells 0..63 such as 0-3-60-21, or 64 characters ./X/O).\n\nprobe, export, info, verify and serve read the game from the file. Wherever a table reads a position, `start` is the table's start. The formats are described in docs/FORMAT.md of the source.",
    after_help = "Exit codes: 0 success, 1 runtime error, 2 usage error."
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand)]
pub enum Command {
    /// Build (or resume building) a tablebase.
    #[command(
        after_help = "Examples:\n  tb build 3x3\n  tb build 3x4 --start swedish --book-lines 20\n  tb build 2x3 --penalty -1 --db nim.tb\n  tb build morris --stones 5\n  tb build morris --stones 4 --phase all\n  tb build qubic\n  tb build qubic --start 0-63-21-42-15 --db small.tb"
    )]
    Build(Build),
    /// Value of positions and of each of their moves, from a built table.
    #[command(
        after_help = "Positions come from the arguments, or one per line on stdin (no arguments, or `-`); `start` is the table's start. With --json every input gets one line, its answer or an error object (`kind`: position, table or stopped); in text, a position without an answer is reported on stderr only. Exit 1 if any failed.\nExamples:\n  tb probe --db 3x3.tb start\n  tb probe --db 3x3.tb --json 000000000000000000000000\n  printf 'h0.0\\nh0.0,v1.1\\n' | tb probe --db 3x3.tb -\n  tb probe --db morris.tb \"W.W..B...B.W.B.......... b\"\n  tb probe --db qubic.tb 0-21"
    )]
    Probe(Probe),
    /// Value of a Dots-and-Boxes position and of every move (or one best move)
    /// by search (no database needed).
    #[command(
        after_help = "Examples:\n  tb solve 3x3\n  tb solve 3x5 --start swedish --pv\n  tb solve 2x4 h0.0,v1.1 --json\n  tb solve 5x5 data/problem-12.18.txt --tt 4GiB --best\n\nChains: in a Wilson file, dots on open lines mark chains (strings of boxes with two sides drawn), as in Wilson's diagram of problem 12.18. Answers are the plain game's: a chain is played as one pseudo-line only where that cannot change a value (a box on the edge that nothing else touches), the others as plain lines. --wilson-chains plays every chain as one pseudo-line (once a line of a chain is drawn, only that chain's lines may be drawn until it is full): Wilson's assumption, faster, but its values may differ from the real game's (see the README)."
    )]
    Solve(Solve),
    /// Write the stored positions as rows. Dots-and-Boxes: the opening book,
    /// ordered by lines, then block, then index; with a reduction, one row per
    /// stored representative unless --expand. Morris: one row per stored class.
    /// Qubic: one row per strategic position.
    Export(Export),
    /// Metadata and per-layer statistics of a table (Morris: per table pair).
    Info {
        /// The table file.
        #[arg(long)]
        db: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve tables read-only over HTTP: a web board at /, probe JSON for scripts
    /// (GET /api/probe, POST batches), /api/tables, /health.
    #[command(
        after_help = "Examples:\n  tb serve --db 3x4.tb --db morris.tb\n  tb serve --db book=3x4.tb --listen 0.0.0.0:8080\n  tb serve --db 3x4.tb --listen :0\n  curl 'http://127.0.0.1:8080/api/probe?table=3x4&position=h0.0,v1.1'\n  curl -d '[\"0000\",\"1110\"]' 'http://127.0.0.1:8080/api/probe?table=1x1'\n\nWith one table, ?table= may be left out."
    )]
    Serve(Serve),
    /// Write a copy of a finished table whose values are stored in chunks of
    /// another size or another coding: smaller chunks make a cold probe decode
    /// less, larger ones make the file smaller; the archival coding makes it
    /// smaller still, for files to ship. Every value is checked against
    /// its block's histogram and digest on the way; a killed recode resumes from
    /// `<out>.partial`.
    #[command(
        after_help = "Examples:\n  tb recode --db morris.tb --out morris-8k.tb --chunk 8192\n  tb recode --db 3x4.tb --out 3x4-small.tb --chunk 4096 --json\n  tb recode --db 3x4.tb --out 3x4-archive.tb --coding archive"
    )]
    Recode {
        /// The finished table file to read.
        #[arg(long)]
        db: PathBuf,
        /// The new file (must not exist).
        #[arg(long)]
        out: PathBuf,
        /// Positions per stored chunk in the new file [default: the table's; 2048
        /// when recoding a Dots-and-Boxes file to `archive`, 1024 a Morris file].
        #[arg(long, value_name = "N")]
        chunk: Option<u64>,
        /// How the new file's chunks are coded [default: the table's]:
        /// `zstd` (what Dots-and-Boxes builds write, fast), `mix-checked` (what
        /// Morris builds write: context mixing over game neighbours) or `archive`
        /// (smaller, slower to write and to read; Dots-and-Boxes: one model over
        /// the previous value, the value one row back and the position's boxes
        /// left and three-sided boxes, `chunk_coding=archive-fast`; Morris:
        /// context mixing over each position's neighbours, open twos and movable
        /// stones, every win stored without its distance, which readers
        /// recompute one ply further: format 5, not recoded again).
        #[arg(long, value_parser = ["zstd", "mix-checked", "archive"])]
        coding: Option<String>,
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
    /// Re-hash every chunk and recompute stored values one ply deep from their
    /// children (Qubic: check the whole strategy with an independent checker).
    Verify {
        /// The table file.
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
    /// Play against perfect play. Dots-and-Boxes: the board with every open line's
    /// value (net future boxes for whoever draws it, best in green), the score and
    /// whose turn it is. Morris (--db of a Morris file): the board, the stones in
    /// hand and every legal move by value, with the tie-break among moves of equal
    /// value (k/n: k of the opponent's n replies go wrong). Type a line name or a
    /// move to play it, `best` for a best move, `undo`, `redo`, `quit` (or end the
    /// input). In a terminal the board is redrawn in place; otherwise each board is
    /// printed after the last, so a script can play.
    #[command(
        after_help = "Examples:\n  tb play 2x2\n  tb play --db 3x3.tb --computer B\n  tb play --db 3x3.tb h0.0,v1.1\n  printf 'h0.0\\nbest\\nundo\\n' | tb play 2x2\n  tb play --db six.tb --computer black\n  tb play --db morris-5.tb \"W.W..B...B.W.B.......... b\""
    )]
    Play(Play),
    /// Print a manual page (roff), of tb or of one of its commands.
    #[command(after_help = "Examples:\n  tb man | man -l -\n  tb man build > tb-build.1")]
    Man {
        /// A command of tb (build, probe, ...) for its own page [default: tb's page].
        command: Option<String>,
    },
}

/// `tb build`: Dots-and-Boxes options after the board, or a game's subcommand.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    subcommand_value_name = "GAME",
    override_usage = "tb build <RxC> [OPTIONS]\n       tb build morris [OPTIONS]\n       tb build qubic [OPTIONS]"
)]
pub struct Build {
    /// Morris or Qubic (Dots-and-Boxes: the board RxC and the options below).
    #[command(subcommand)]
    pub game: Option<BuildGame>,
    /// Dots-and-Boxes.
    #[command(flatten)]
    pub dots: DotsBuild,
}

/// The games `tb build` takes by name.
#[derive(Subcommand)]
pub enum BuildGame {
    /// Nine Men's Morris (or Six Men's with --rules six, Lasker with --rules
    /// lasker, Morabaraba with --rules morabaraba): the moving-phase tables (m, o) from 3-3 up, and with --phase all
    /// the placement positions back to the empty board.
    #[command(
        after_help = "Examples:\n  tb build morris --stones 5\n  tb build morris --stones 4 --phase all\n  tb build morris --rules six --phase all\n  tb build morris --rules lasker --stones 5 --phase all\n  tb build morris --rules morabaraba --stones 5 --phase all\n  tb build morris --plan"
    )]
    Morris(MorrisBuild),
    /// Qubic: a winning strategy for X (4x4x4 tic-tac-toe), found by proof-number
    /// search and stored with X's move in every strategic position.
    #[command(
        after_help = "Examples:\n  tb build qubic\n  tb build qubic --start 0-63-21-42-15 --db small.tb\n  tb build qubic --first 1 --time-limit 600\n  tb build qubic --proofs 2 --db qubic-2.tb\n  tb build qubic --proofs 1 --db qubic-1.tb"
    )]
    Qubic(QubicBuild),
}

/// Options every build takes.
#[derive(Args, Clone)]
pub struct BuildCommon {
    /// Memory budget (e.g. 512MiB, 8GiB): blocks kept in memory and, for Morris,
    /// the pair being solved (a resumed build needs only what its pairs left to
    /// build need); Qubic: the proof searches' tables, thinned at
    /// 4GiB at most (the same strategy on any budget from 4GiB up; a smaller one
    /// proves differently), though a proof's own positions are kept, so a large
    /// proof takes more, up to the largest table 3/4 of its share holds
    /// (then the positions with the least search below them are dropped, and
    /// searched again if needed)
    /// [default: 8GiB for Dots-and-Boxes, 4GiB for Qubic,
    /// 16GiB for Morris, at most 3/4 of the machine's memory].
    #[arg(long)]
    pub memory: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the final summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `tb build RxC`.
#[derive(Args)]
pub struct DotsBuild {
    /// A Dots-and-Boxes board RxC in boxes (e.g. 3x5 = 3 rows by 5 columns of
    /// boxes).
    #[arg(required = true, value_name = "RxC")]
    pub board: Option<String>,
    /// Start: empty, swedish (perimeter drawn), icelandic (top and left
    /// perimeter drawn), a position (0/1 string or move list) or a file in
    /// Wilson's format [default: empty].
    #[arg(long)]
    pub start: Option<String>,
    /// Value of the full board (Wilson's last-move penalty); -1 gives nimstring-like play.
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<i32>,
    /// Database file [default: <board>[-<start>][-p<penalty>][-loony].tb].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Keep every layer with at most K lines as the opening book [default: the
    /// deepest K whose layers hold at most 2^26 positions].
    #[arg(long, value_name = "K")]
    pub book_lines: Option<usize>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Line groups: sizes over the free lines in line order (e.g. 16,15), or line
    /// names per group separated by / [default: chosen from --memory].
    #[arg(long)]
    pub groups: Option<String>,
    /// Positions per stored chunk [default: 65536].
    #[arg(long, value_name = "N")]
    pub chunk: Option<u64>,
    /// Symmetry reduction: wilson stores a position only if its group-1 lines are
    /// the least of their orbit under the board symmetries that map every group
    /// onto itself (about 3-8x fewer positions); none stores all [default:
    /// wilson].
    #[arg(long, value_enum)]
    pub symmetry: Option<SymmetryArg>,
    /// Corner reduction: the two perimeter lines of a corner box are
    /// interchangeable, so a corner takes 3 states instead of 4 (81/256 of the
    /// positions on boards at least 2x2 with all four corners free) [default: on
    /// where a corner has both perimeter lines free, with the symmetry reduction
    /// and without chains; a resumed build keeps its file's].
    #[arg(long, conflicts_with = "no_corners")]
    pub corners: bool,
    /// No corner reduction (see --corners).
    #[arg(long)]
    pub no_corners: bool,
    /// Wilson's loony analysis: each position also stores who can be forced to
    /// make the next loony move under best play (probe marks ^ and v, JSON
    /// "loony"); the same values as a plain build. Boards of at most 20 boxes
    /// (with the penalty); the default file gets `-loony` in its name.
    #[arg(long)]
    pub loony: bool,
    /// Store every chain the start file marks as one unit (Wilson's assumption):
    /// a smaller table of the chain game, whose values may differ from the plain
    /// game's (`tb info` says so). Without it only chains that change no value are
    /// units, the others plain lines.
    #[arg(long)]
    pub wilson_chains: bool,
    /// Print the plan (groups, blocks per layer, predicted memory and disk) and
    /// exit without building.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: also plan a distributed build (`python -m tb.dask`) on N
    /// workers of one thread each: per layer the shards' bytes, the bytes moved
    /// and the predicted time.
    #[arg(long, value_name = "N", requires = "plan")]
    pub workers: Option<usize>,
    /// With --workers: the cores the workers share, when fewer than the workers
    /// (e.g. a LocalCluster of 4 on 2 cores) [default: one per worker].
    #[arg(long, value_name = "C", requires = "workers")]
    pub cores: Option<usize>,
    #[command(flatten)]
    pub common: BuildCommon,
}

/// `tb build morris`.
#[derive(Args)]
pub struct MorrisBuild {
    /// The rule set: `nine` (Nine Men's Morris as Gasser: 24 points, 16 mills, 9
    /// stones, flying at 3), `six` (Six Men's Morris: 16 points on two squares, 8
    /// mills, 6 stones, no flying), `six-flying` (the same with flying at 3
    /// stones), `lasker` (Lasker Morris as Malom: the nine board, 10 stones, a
    /// side with stones in hand may move one instead of placing; flying at 3
    /// stones on the board and in hand) or `morabaraba` (Morabaraba as Malom: the
    /// nine board plus the 4 corner diagonals, 20 mills, 12 stones, flying at 3,
    /// a full board after placement a draw). The file records it; resuming or adding to a file of other rules is
    /// refused [default: nine].
    #[arg(long, value_enum)]
    pub rules: Option<RulesArg>,
    /// Build the tables with at most N stones a side (3..=9 for nine, 3..=6 for
    /// six, 3..=10 for lasker, 3..=12 for morabaraba) [default: every table of the rules].
    #[arg(long, value_name = "N")]
    pub stones: Option<u8>,
    /// The phases to build: `moving` (the tables (m, o) of the moving phase),
    /// `all` (also every placement position back to the empty board), or
    /// `placement` (add the placement tables to an existing moving-phase file)
    /// [default: moving].
    #[arg(long, value_enum)]
    pub phase: Option<PhaseArg>,
    /// Database file [default: morris.tb, or morris-<N>.tb for --stones N;
    /// morris-six.tb, morris-six-<N>.tb for --rules six, morris-lasker.tb,
    /// morris-lasker-<N>.tb for --rules lasker, and so on].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Positions per stored chunk [default: 2048, or the file's own when
    /// resuming].
    #[arg(long, value_name = "N")]
    pub chunk: Option<u64>,
    /// Print the plan (table pairs, positions, predicted memory and disk) and exit
    /// without building.
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub common: BuildCommon,
}

/// `tb build qubic`.
#[derive(Args)]
pub struct QubicBuild {
    /// X's first move, a cell 0..=63 [default: 0, a corner].
    #[arg(long, value_name = "CELL", conflicts_with = "start")]
    pub first: Option<u8>,
    /// A position with O to move (a move list such as 0-63-21-42-15) to build the
    /// strategy from, instead of X's first move.
    #[arg(long)]
    pub start: Option<String>,
    /// Database file [default: qubic.tb, qubic-<CELL>.tb for --first, or
    /// qubic-from-<start>.tb].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Stop after this long (e.g. 600, 10m, 2h; the O replies proven so far are
    /// kept, and each proof in progress as a checkpoint; running again goes on).
    #[arg(long, value_name = "TIME", value_parser = tb::units::parse_duration)]
    pub time_limit: Option<Duration>,
    /// A reply's proof in progress is written beside the file this often
    /// (`<db>.proof-<reply>`, removed once the reply is stored): a killed build
    /// goes on from there instead of proving the reply from its start (e.g. 600,
    /// 10m) [default: 10m]
    #[arg(long, value_name = "TIME", value_parser = tb::units::parse_duration)]
    pub checkpoint_every: Option<Duration>,
    /// A finished strategy file (of any start) whose positions the proofs take
    /// as won, its moves played there: the pieces of a proof too big for one
    /// run, built first from positions inside it (e.g. `--start` after X's
    /// move in a hard reply). Each is checked whole as `tb verify` checks it
    /// when read, and refused if not sound; the file built stores those
    /// positions itself. Repeat for several.
    #[arg(long, value_name = "FILE")]
    pub known: Vec<PathBuf>,
    /// After each O reply is proven, every position of its strategy whose subtree
    /// has at most N+1 strategic moves is searched exhaustively for a move with
    /// fewer (0: keep the strategy read off the proof) [default: 3].
    #[arg(long, value_name = "N")]
    pub shrink: Option<u32>,
    /// Chains of O replies proven side by side (replies whose proofs meet by
    /// transposition form one chain, proven in turn with one table; the corner
    /// opening has two), at most 2; the strategy is the same on any number
    /// unless a proof's table reaches its share of --memory [default: all
    /// cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Proofs of each O reply: 1, 2 or auto. A second proof, by a prover that
    /// breaks ties between X's moves the other way, proves through other moves,
    /// and the stored strategy chooses among both proofs' moves for the fewest
    /// strategic positions (2: about twice the time). auto: a second proof of
    /// the chains whose two proofs take fewer expansions than the longest
    /// chain's first proof (in about the time of one proof on 2 cores; decided
    /// by expansions, not time, so the strategy is the same on any machine for a
    /// given --memory) [default: auto].
    #[arg(long, value_name = "1|2|auto", value_parser = |s: &str| s.parse::<tb::games::qubic::second::Proofs>().map_err(|e| e.to_string()))]
    pub proofs: Option<tb::games::qubic::second::Proofs>,
    #[command(flatten)]
    pub common: BuildCommon,
}

/// `tb probe`.
#[derive(Args)]
pub struct Probe {
    /// The table file.
    #[arg(long)]
    pub db: PathBuf,
    /// One JSON object per position per line.
    #[arg(long)]
    pub json: bool,
    /// Positions (none, or `-`: one per line on stdin). Dots-and-Boxes: 0/1
    /// strings, move lists (h0.0,v1.2) or Wilson files. Morris: 24 characters
    /// ./W/B in point order and the side to move (`W.W..B...B.W.B.......... b`).
    /// Qubic: move lists (0-21-42) or 64 characters ./X/O. Any game: `start`.
    pub positions: Vec<String>,
    /// Threads answering the positions of stdin, each with its own chunk cache
    /// [default: all cores]; answers keep the input order.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Morris: moves of equal value in the move generator's order, without the
    /// tie-break's counts (opponent_errors, opponent_replies): they read every
    /// opponent reply of the tied moves (a batch took 2.5x the time on the nine
    /// 4-stone file, 6x on Lasker's 6-stone one). No effect on other games.
    #[arg(long)]
    pub no_tie_break: bool,
    #[command(flatten)]
    pub search: ProbeSearch,
}

/// The search fallback of a probe (Dots-and-Boxes).
#[derive(Args, Clone, Copy)]
pub struct ProbeSearch {
    /// Dots-and-Boxes: positions past the stored layers are searched if they have
    /// at most this many open lines (0: never search) [default: 26].
    #[arg(long)]
    pub search_limit: Option<u32>,
    #[command(flatten)]
    pub bounds: SearchBounds,
}

/// Bounds of a search (`tb solve`, the probe fallback).
#[derive(Args, Clone, Copy)]
pub struct SearchBounds {
    /// Stop a search after N nodes (exit 1, printing the bounds on the value found
    /// so far).
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<u64>,
    /// Stop a search after this long (e.g. 30s, 5m, 2h; exit 1, printing the bounds
    /// on the value found so far).
    #[arg(long, value_name = "TIME", value_parser = tb::units::parse_duration)]
    pub time_limit: Option<Duration>,
}

impl SearchBounds {
    /// The search's limits.
    pub fn limits(self) -> tb::games::dots::search::Limits {
        tb::games::dots::search::Limits {
            max_nodes: self.max_nodes,
            time_limit: self.time_limit,
        }
    }

    /// Whether a bound was given.
    pub fn given(self) -> bool {
        self.max_nodes.is_some() || self.time_limit.is_some()
    }
}

/// `tb solve`.
#[derive(Args)]
pub struct Solve {
    /// Board size in boxes, RxC.
    pub board: String,
    /// The position [default: the start]: 0/1 string, move list, a Wilson file
    /// (whose dots mark chains), or `start`.
    pub position: Option<String>,
    /// Start when no position is given: empty, swedish, icelandic, a position or a
    /// Wilson file.
    #[arg(long, default_value = "empty")]
    pub start: String,
    /// Value of the full board (Wilson's last-move penalty).
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<i32>,
    /// Transposition table size (e.g. 64MiB, 1GiB), at most 16 bytes per position
    /// that can arise (2^open) [default: 64MiB up to 24 open lines, 256MiB up to
    /// 28, else 1GiB].
    #[arg(long)]
    pub tt: Option<String>,
    /// Search threads [default: all cores] (lazy SMP over one shared table).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also print the principal variation to the end of the game.
    #[arg(long)]
    pub pv: bool,
    /// The value and one best move only (in JSON, `moves` holds that move and
    /// `"best_only":true` is added), not every move's value: the move that proved
    /// the value, checked by one more null-window search. Each other move's value
    /// needs a search of its own; where many moves are best (problem 12.18) that
    /// is as long again as the value.
    #[arg(long)]
    pub best: bool,
    /// Every move's value, but a move worse than the position's value gets an
    /// upper bound only (text `<=`, JSON `"upper_bounds"` lists those moves): each
    /// move is tested once at the value, and a move that fails is not searched
    /// again for its exact worth. The value and the best moves stay exact.
    #[arg(long, conflicts_with = "best")]
    pub losing_bounds: bool,
    /// One JSON object (the probe shape plus nodes, seconds, pv, chains); errors
    /// too (`{"input":...,"error":...}`).
    #[arg(long)]
    pub json: bool,
    /// Loony-move analysis: each value also says who can be forced to make the
    /// next loony move (`^` the opponent, `v` the side to move; see the README),
    /// by exhaustive analysis of up to 26 open lines.
    #[arg(long)]
    pub loony: bool,
    /// Play every chain the position marks as one pseudo-line (Wilson's
    /// assumption): approximate, the answer says so (text line, JSON
    /// `"approximate":true`). Without it chains are analysed exactly.
    #[arg(long)]
    pub wilson_chains: bool,
    /// A store of proven positions (an SQLite file, made if missing): the search
    /// starts from the bounds in it and adds those it proves near its root, also
    /// when a limit stops it. Long searches run in pieces (--time-limit, then the
    /// same command again), and a root's children can be solved as separate jobs
    /// into one store before the root.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// With --store: keep bounds on positions at most this many lines below the
    /// searched one [default: 10].
    #[arg(long, value_name = "LINES", requires = "store")]
    pub store_depth: Option<u32>,
    #[command(flatten)]
    pub bounds: SearchBounds,
}

/// `tb export`.
#[derive(Args)]
pub struct Export {
    /// The table file.
    #[arg(long)]
    pub db: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    pub format: Format,
    /// Dots-and-Boxes: only positions with at most K lines.
    #[arg(long, value_name = "K")]
    pub max_lines: Option<usize>,
    /// Output file [default: stdout].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Dots-and-Boxes, with a symmetry or corner reduction: one row for every
    /// position of each stored class (rows of one class follow each other),
    /// instead of one row per stored representative.
    #[arg(long)]
    pub expand: bool,
}

/// `tb serve`.
#[derive(Args)]
pub struct Serve {
    /// A table to serve: FILE (named by its stem, `3x4.tb` is `3x4`) or NAME=FILE.
    /// Repeat for several.
    #[arg(long, required = true)]
    pub db: Vec<String>,
    /// Address to listen on: HOST:PORT, or :PORT for 127.0.0.1 (port 0: any free
    /// port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    pub listen: std::net::SocketAddr,
    /// Most requests answered at once off the connections' threads (more get
    /// 503; a probe answered from memory is not counted).
    #[arg(long, default_value_t = 256)]
    pub max_concurrent: usize,
    /// Most positions in one POST batch (more get 413).
    #[arg(long, default_value_t = 100_000)]
    pub max_batch: usize,
    /// Most POST batches answered at once (more get 503): each holds its
    /// positions until its answer is sent.
    #[arg(long, default_value_t = 16)]
    pub max_batches: usize,
    /// Most connections open at once (never more than the descriptor limit
    /// allows): past it the connection idle the longest is closed, or a new one
    /// gets 503 when every one has a request under way.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// A connection is closed when its client sends no request (or not all of
    /// one) or reads nothing of an answer for this long, e.g. 30s.
    #[arg(long, value_parser = tb::units::parse_duration, default_value = "30s")]
    pub idle_time: Duration,
    /// Longest a request may take (a search stops then, and so does a read of
    /// the file), e.g. 10s.
    #[arg(long, value_parser = tb::units::parse_duration, default_value = "10s")]
    pub request_time: Duration,
}

/// `--listen`: HOST:PORT, or `:PORT` on the loopback address.
fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("127.0.0.1:{port}"),
        None => text.to_string(),
    };
    full.parse()
        .map_err(|e| format!("`{text}` is not HOST:PORT or :PORT ({e})"))
}

/// `tb play`.
#[derive(Args)]
pub struct Play {
    /// Board size RxC in boxes (values by search), or with --db the position.
    pub board: Option<String>,
    /// Start position: a move list, 0/1 string, Wilson file or `start`; Morris: a
    /// position or a move list from the empty board [default: the table's start, or
    /// the empty board].
    pub position: Option<String>,
    /// A table to take the values from (Dots-and-Boxes: its book, and search beyond
    /// it; Morris: a Morris file).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The side the program plays (it answers with a best move; Morris: W for
    /// White, B for Black).
    #[arg(long, value_enum)]
    pub computer: Option<SideArg>,
    /// Value of the full board (Wilson's last-move penalty), without --db.
    #[arg(long, allow_negative_numbers = true)]
    pub penalty: Option<i32>,
    /// Loony marks on every value (`^`: the opponent of the player to move can be
    /// forced to make the next loony move, `v`: that player can), by exhaustive
    /// analysis (without --db, up to 26 open lines).
    #[arg(long)]
    pub loony: bool,
    #[command(flatten)]
    pub bounds: SearchBounds,
}

/// `--symmetry` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SymmetryArg {
    /// Store every position.
    None,
    /// Wilson's reduction (see --symmetry).
    Wilson,
}

/// `tb play --computer` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    /// Player A (who moves first from the empty board); Morris: White.
    #[value(name = "A", aliases = ["a", "W", "w", "white"])]
    A,
    /// Player B; Morris: Black.
    #[value(name = "B", aliases = ["b", "black"])]
    B,
}

/// `tb build morris --rules` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesArg {
    /// Nine Men's Morris (Gasser's rules).
    Nine,
    /// Six Men's Morris, no flying.
    Six,
    /// Six Men's Morris, flying at 3 stones.
    SixFlying,
    /// Lasker Morris: 10 stones, a side with stones in hand may move instead of
    /// placing (as Malom).
    Lasker,
    /// Morabaraba: the nine board plus the 4 corner diagonals (20 mills), 12
    /// stones, a full board a draw (as Malom).
    Morabaraba,
}

/// `tb build morris --phase` values.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PhaseArg {
    /// The moving-phase tables.
    Moving,
    /// The placement tables, on an existing moving-phase file.
    Placement,
    /// Both phases.
    All,
}

/// Export formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// Qubic only: the strategic moves (forced blocks left out) one per line in
    /// the style of Patashnik's dictionary, `X's cells / O's cells : X's move`.
    Patashnik,
}
