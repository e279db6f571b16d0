//! Proves a Qubic position with the df-pn prover: `cargo run --release --example
//! qubic_prove -- 0-3-60`.
use std::time::Instant;
use tb::games::qubic::{position::Position, prover::Prover};

fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "0".into());
    let p = Position::parse(&text).unwrap();
    let t = Instant::now();
    let mut prover = Prover::new(200_000_000);
    let start = Instant::now();
    let (root, _) = tb::games::qubic::geometry::canonical(p.x, p.o);
    prover.on_progress(move |p| {
        eprintln!(
            "{:.1}s root {:?} expansions {} leaves {} forced {} table {}",
            start.elapsed().as_secs_f64(),
            p.lookup(root),
            p.expansions,
            p.leaves,
            p.forced_nodes(),
            p.table_len()
        )
    });
    let won = prover.prove(p.x, p.o);
    println!(
        "{text}: X wins {won}; {:.2}s, {} expansions, {} leaves, {} forced nodes, table {}",
        t.elapsed().as_secs_f64(),
        prover.expansions,
        prover.leaves,
        prover.forced_nodes(),
        prover.table_len()
    );
    if won {
        let t = Instant::now();
        let s = tb::games::qubic::strategy::Strategy::extract(&mut prover, root).unwrap();
        println!(
            "strategy: {} strategic positions ({:.2}s)",
            s.len(),
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let checker = tb::games::qubic::check::Checker::new();
        let lookup = |k: (u64, u64)| s.choices.get(&k).map(|c| c.cell);
        let start_x = if p.to_move() == tb::games::qubic::position::Side::X {
            vec![(p.x, p.o)]
        } else {
            (0..64)
                .filter(|&r| (p.x | p.o) >> r & 1 == 0)
                .map(|r| (p.x, p.o | 1 << r))
                .collect()
        };
        for st in start_x {
            let r = checker.check(st, &lookup);
            if r.gap_count > 0 {
                println!("GAPS {:?}", r.gaps);
            }
        }
        println!("checked in {:.2}s", t.elapsed().as_secs_f64());
    }
}
