//! Proves every O reply of a Qubic start with one prover and prints the work done:
//! `cargo run --release --example qubic_prove -- 0-3-60-21-15`.
use std::time::Instant;
use tb::games::qubic::position::Position;
use tb::games::qubic::prover::{Prover, child_classes};

fn main() {
    let start = std::env::args().nth(1).unwrap_or("0-3-60-21-15".into());
    let start = Position::parse(&start).expect("a position");
    let mut prover = Prover::new(4 << 30);
    let t = Instant::now();
    let mut proven = 0;
    let children = child_classes((start.x, start.o));
    for &(_, child) in &children {
        proven += prover.prove_key(child) as usize;
    }
    println!(
        "{proven} of {} replies proven: {} expansions, {} forced-win nodes, {} table, {:.2} s",
        children.len(),
        prover.expansions,
        prover.forced_nodes(),
        prover.table_len(),
        t.elapsed().as_secs_f64()
    );
}
