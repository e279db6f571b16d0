//! Decoding speed of a Dots-and-Boxes file's book, chunk by chunk on one thread:
//! the CPU time of the sites (the archival coding's contexts) and of the decoding
//! apart, so that a coding's cost per value is measured without the probes
//! around it (and, as CPU time of the thread, with less of the machine's load in
//! it than wall time).
//!
//!   cargo run --release --example archive_decode -- FILE [ROUNDS]
//!
//! With DUMP=PATH also writes every chunk's stored bytes and sites (for studying
//! a coding outside tb): per chunk, `len` (u32), the `len` values, then per value
//! `back` (4 x u32) and `feature` (u16), little-endian (of a file in the fast
//! archival coding, `back[1..4]` are 0: it computes only the row).

use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;
use tb::games::dots::tablebase::Tablebase;
use tb::retro::format::Format;
use tb::store::codec::Site;
use tb::store::{LayerStatus, Store};

/// CPU time of this thread, in seconds.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().map(PathBuf::from) else {
        bail!("usage: archive_decode FILE [ROUNDS]");
    };
    let rounds: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let table = Tablebase::open(&path)?;
    let format = table.format();
    let layout = format.layout();
    layout.prepare_unranking();
    let store = Store::open_read(&path)?;
    let cp = format.chunk_positions();
    let mut chunks = Vec::new();
    for (n, row) in store.layers()? {
        if row.status != LayerStatus::Book {
            continue;
        }
        for counts in layout.blocks_of_layer(n) {
            for chunk in store.block_chunks(n, &counts)? {
                chunks.push((n, counts.to_vec(), chunk));
            }
        }
    }
    let mut dump = match std::env::var("DUMP") {
        Ok(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
        Err(_) => None,
    };
    for round in 0..rounds {
        let (mut sites_time, mut decode_time) = (0.0, 0.0);
        let (mut values, mut bytes) = (0usize, 0usize);
        for (n, counts, chunk) in &chunks {
            let len = chunk.raw_len as usize;
            let first = chunk.chunk * cp;
            let start = thread_cpu();
            let contexts = format.chunk_contexts(*n, counts, first, len);
            let sited = thread_cpu();
            // A copy only for the dump: the decoder takes the sites it codes with.
            let kept = (round == 0 && dump.is_some()).then(|| contexts.clone());
            let copied = thread_cpu();
            let decoded = chunk.decode_part(len, len, |_| contexts)?;
            decode_time += thread_cpu() - copied;
            sites_time += sited - start;
            values += len;
            bytes += chunk.data.len();
            if let (Some(out), Some(contexts)) = (dump.as_mut(), kept) {
                out.write_all(&(len as u32).to_le_bytes())?;
                out.write_all(tb::store::as_bytes(&decoded))?;
                for i in 0..len {
                    // A file of the fast archival coding computes only the row and
                    // the features: the other offsets are dumped as 0.
                    let site = contexts.sites.get(i).copied().unwrap_or(Site {
                        back: [contexts.rows.row, 0, 0, 0],
                        feature: contexts.rows.features.get(i).copied().unwrap_or(0),
                    });
                    for b in site.back {
                        out.write_all(&b.to_le_bytes())?;
                    }
                    out.write_all(&site.feature.to_le_bytes())?;
                }
            }
        }
        println!(
            "{} chunks, {values} values, {:.4} bits/value; CPU: sites {:.3} s, decoding {:.3} s ({:.1} M values/s)",
            chunks.len(),
            bytes as f64 * 8.0 / values as f64,
            sites_time,
            decode_time,
            values as f64 / decode_time / 1e6
        );
    }
    Ok(())
}
