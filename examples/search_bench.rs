//! Benchmark of the search solver on standard starts.
//!
//! `cargo run --release --example search_bench [-- [--all] [--mb N] [--runs N]]`
//! `cargo run --release --example search_bench -- RxC empty|swedish|icelandic [--mb N]`
//!
//! With `--solve` it times [`Solver::solve`] (every move's value and the PV)
//! instead of [`Solver::value`].
//!
//! For each start prints the value, the nodes searched and the wall time of a fresh
//! solver (table allocation included), best of `--runs` runs (default 3). The table
//! has `--mb` MiB (default 64; at least 512 for the empty 3x4 board). The empty 3x4 board
//! (10-20 s) runs only with `--all`, once.

use std::time::Instant;

use tb::games::dots::board::Board;
use tb::games::dots::search::{SearchOptions, Solver};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| -> Option<usize> {
        let i = args.iter().position(|a| a == name)?;
        args.get(i + 1)?.parse().ok()
    };
    let all = args.iter().any(|a| a == "--all");
    let solve = args.iter().any(|a| a == "--solve");
    let mb = flag("--mb").unwrap_or(64);
    let runs = flag("--runs").unwrap_or(3).max(1);
    let mut cases: Vec<(&str, &str, usize, usize)> = vec![
        ("3x3", "empty", mb, runs),
        ("2x4", "empty", mb, runs),
        ("3x5", "swedish", mb, runs),
        ("4x4", "swedish", mb, runs),
        ("3x4", "icelandic", mb, runs),
    ];
    if all {
        cases.push(("3x4", "empty", mb.max(512), 1));
    }
    if let [spec, start, ..] = &args[..]
        && !spec.starts_with("--")
    {
        cases = vec![(spec.as_str(), start.as_str(), mb, runs)];
    }
    println!(
        "{:<6} {:<10} {:>5} {:>6} {:>12} {:>9} {:>9}",
        "board", "start", "open", "value", "nodes", "seconds", "table MiB"
    );
    for (spec, start, mb, runs) in cases {
        let board: Board = spec.parse().expect("board");
        let position = match start {
            "empty" => 0,
            "swedish" => board.perimeter(),
            "icelandic" => board.top_left_perimeter(),
            other => panic!("unknown start {other} (empty, swedish or icelandic)"),
        };
        let mut best = f64::INFINITY;
        let (mut value, mut nodes) = (0, 0);
        for _ in 0..runs {
            let t = Instant::now();
            let mut solver = Solver::new(
                board,
                SearchOptions {
                    penalty: 0,
                    tt_bytes: mb << 20,
                },
            );
            value = if solve {
                solver.solve(position).value
            } else {
                solver.value(position)
            };
            best = best.min(t.elapsed().as_secs_f64());
            nodes = solver.nodes();
        }
        let open = (board.all_lines() & !position).count_ones();
        println!("{spec:<6} {start:<10} {open:>5} {value:>6} {nodes:>12} {best:>9.3} {mb:>9}");
    }
}
