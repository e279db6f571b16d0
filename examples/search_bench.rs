//! Benchmark of the search solver on standard starts.
//!
//! `cargo run --release --example search_bench [-- --all] [-- --mb N]`
//! prints value, nodes and wall time per start. Empty 3x4 runs only with `--all`.

use std::time::Instant;

use tb::board::Board;
use tb::search::{SearchOptions, Solver};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let mb: usize = args
        .iter()
        .position(|a| a == "--mb")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(256);
    let mut cases: Vec<(&str, &str)> = vec![
        ("3x3", "empty"),
        ("2x4", "empty"),
        ("3x5", "swedish"),
        ("4x4", "swedish"),
        ("3x4", "icelandic"),
    ];
    if all {
        cases.push(("3x4", "empty"));
    }
    println!(
        "{:<6} {:<10} {:>6} {:>6} {:>14} {:>10}",
        "board", "start", "open", "value", "nodes", "seconds"
    );
    for (spec, start) in cases {
        let board: Board = spec.parse().expect("board");
        let position = match start {
            "empty" => 0,
            "swedish" => board.perimeter(),
            "icelandic" => board.top_left_perimeter(),
            _ => unreachable!(),
        };
        let mut solver = Solver::new(
            board,
            SearchOptions {
                penalty: 0,
                tt_bytes: mb << 20,
            },
        );
        let t = Instant::now();
        let value = solver.value(position);
        let secs = t.elapsed().as_secs_f64();
        let open = (board.all_lines() & !position).count_ones();
        println!(
            "{:<6} {:<10} {:>6} {:>6} {:>14} {:>10.3}",
            spec,
            start,
            open,
            value,
            solver.nodes(),
            secs
        );
    }
}
