//! Load for `tb serve`: N client threads, each on one keep-alive connection, send
//! `GET /api/probe` for random book positions and print requests/s and latency
//! percentiles.
//!
//! ```text
//! tb serve --db 3x4.tb &
//! cargo run --release --example serve_load -- 127.0.0.1:8080 3x4 31 11 64 5
//! ```
//! (address, table, lines of the board, deepest book layer, clients, seconds)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, table, lines, book, clients, seconds] = &args[..] else {
        eprintln!("usage: serve_load ADDRESS TABLE LINES BOOK_LINES CLIENTS SECONDS");
        std::process::exit(2);
    };
    let lines: u32 = lines.parse().unwrap();
    let book: u32 = book.parse().unwrap();
    let clients: usize = clients.parse().unwrap();
    let run = Duration::from_secs_f64(seconds.parse().unwrap());
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let (address, table) = (address.clone(), table.clone());
            std::thread::spawn(move || client(&address, &table, lines, book, c as u64, run))
        })
        .collect();
    let mut latencies: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "{} requests in {elapsed:.2} s = {:.0} requests/s with {clients} clients; latency p50 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// One keep-alive connection sending requests for `run`; the latency of each.
fn client(
    address: &str,
    table: &str,
    lines: u32,
    book: u32,
    seed: u64,
    run: Duration,
) -> Vec<Duration> {
    let stream = TcpStream::connect(address).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut latencies = Vec::new();
    let end = Instant::now() + run;
    while Instant::now() < end {
        // A position of at most `book` - 1 lines: its children are in the book too.
        let drawn = next() % book as u64;
        let mut position = vec![b'0'; lines as usize];
        for _ in 0..drawn {
            position[(next() % lines as u64) as usize] = b'1';
        }
        let position = String::from_utf8(position).unwrap();
        let sent = Instant::now();
        write!(
            writer,
            "GET /api/probe?table={table}&position={position} HTTP/1.1\r\nHost: {address}\r\n\r\n"
        )
        .unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        latencies.push(sent.elapsed());
    }
    latencies
}
