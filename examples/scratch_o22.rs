//! Scratch: the children's numbers of 1-22 (X to move) after slices of the proof.
use tb::games::qubic::prover::{Prover, child_classes};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let slices: u64 = args.get(1).map_or(10, |s| s.parse().unwrap());
    let slice: u64 = args.get(2).map_or(500_000, |s| s.parse().unwrap());
    let mem: u64 = args
        .get(3)
        .map_or(4 << 30, |s| s.parse::<u64>().unwrap() << 30);
    let first = child_classes((0, 0))
        .into_iter()
        .find(|&(c, _)| c == 1)
        .unwrap()
        .1;
    let root = child_classes(first)
        .into_iter()
        .find(|&(c, _)| c == 22)
        .unwrap()
        .1;
    let mut p = Prover::new(mem);
    for s in 0..slices {
        p.set_pause(Some(slice));
        let won = p.prove_key(root);
        let mut kids: Vec<(u32, u32, u8)> = child_classes(root)
            .into_iter()
            .filter_map(|(m, k)| p.lookup(k).map(|n| (n.pn, n.dn, m)))
            .collect();
        kids.sort();
        let r = p
            .lookup(root)
            .unwrap_or(tb::games::qubic::table::Numbers { pn: 0, dn: 0 });
        println!(
            "slice {s}: {} expansions, table {}, root ({}, {}), won {won}; best: {:?}",
            p.expansions,
            p.table_len(),
            r.pn,
            r.dn,
            &kids[..kids.len().min(8)]
        );
        if won {
            break;
        }
    }
}
