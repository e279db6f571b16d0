//! Times building the index of Morris tables from nothing (what a cold probe pays):
//! `cargo run --release --example morris_index_time -- 9-9 8-9 ...`.
fn main() {
    for arg in std::env::args().skip(1) {
        let (m, o) = arg.split_once('-').expect("tables as M-O");
        let (m, o): (u8, u8) = (m.parse().unwrap(), o.parse().unwrap());
        let t0 = std::time::Instant::now();
        let table = tb::games::morris::Table::<tb::games::morris::Nine>::get(m, o).unwrap();
        println!(
            "{m}-{o}: {} classes, {:.2} ms",
            table.size(),
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
}
