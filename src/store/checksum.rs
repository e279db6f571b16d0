//! Hashes: the checksum of a chunk's raw values and the layout-independent digest of
//! a layer's values.

/// The splitmix64 finaliser: a fast, well-mixing 64-bit bijection.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Checksum of raw chunk bytes (8 bytes per step, length mixed in).
pub fn checksum(data: &[u8]) -> u64 {
    checksums([data])[0]
}

/// [`checksum`] of `N` byte strings, their steps interleaved as far as the
/// shortest goes: each string's steps form one chain of multiplications, which
/// alone waits on the multiplier's latency; `N` chains keep it busy.
pub fn checksums<const N: usize>(data: [&[u8]; N]) -> [u64; N] {
    let word = |d: &[u8], at: usize| u64::from_le_bytes(d[at..at + 8].try_into().expect("8 bytes"));
    let step = |h: u64, w: u64| mix(h ^ w).rotate_left(17);
    let mut h = data.map(|d| mix(d.len() as u64 ^ 0x7462_2d63_6875_6e6b));
    let common = data.iter().map(|d| d.len() / 8 * 8).min().unwrap_or(0);
    for at in (0..common).step_by(8) {
        for (h, d) in h.iter_mut().zip(&data) {
            *h = step(*h, word(d, at));
        }
    }
    std::array::from_fn(|i| {
        let d = data[i];
        let whole = d.len() / 8 * 8;
        let h = (common..whole)
            .step_by(8)
            .fold(h[i], |h, at| step(h, word(d, at)));
        let mut tail = [0u8; 8];
        tail[..d.len() - whole].copy_from_slice(&d[whole..]);
        mix(h ^ u64::from_le_bytes(tail))
    })
}

/// [`checksum`] of each of `data`, four at a time ([`checksums`]).
pub fn checksum_each(data: &[&[u8]]) -> Vec<u64> {
    let mut sums = Vec::with_capacity(data.len());
    let mut quads = data.chunks_exact(4);
    for quad in &mut quads {
        sums.extend(checksums([quad[0], quad[1], quad[2], quad[3]]));
    }
    sums.extend(quads.remainder().iter().map(|d| checksum(d)));
    sums
}

/// Where a chunk belongs: (layer, block key text, chunk number).
pub type ChunkPlace<'a> = (usize, &'a str, u64);

/// The checksum stored with a chunk: of its raw values and, in files whose
/// `chunk_checksum` metadata is `keyed` (every file since schema 1 + this rule),
/// of where the chunk belongs, so that a chunk copied or moved to another place
/// fails its check. `place` is `None` for older files.
pub fn chunk_checksum(raw: &[u8], place: Option<ChunkPlace>) -> u64 {
    placed(checksum(raw), place)
}

/// A raw-values checksum keyed with the chunk's place (see [`chunk_checksum`]).
pub fn placed(sum: u64, place: Option<ChunkPlace>) -> u64 {
    match place {
        None => sum,
        Some((layer, key, chunk)) => {
            sum ^ mix(checksum(format!("{layer}/{key}/{chunk}").as_bytes()))
        }
    }
}

/// One position's contribution to a layer digest. A layer's digest is the wrapping
/// sum of this over its positions, so it does not depend on the group layout, the
/// block order or the chunking (a fixed definition: tests re-derive it).
#[inline]
pub fn digest_element(position: u64, value: i8) -> u64 {
    mix(position.wrapping_add((value as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// The digest contributions of positions `base | m` for each `m` of `masks`, with
/// `values` in the same order, summed (one vectorised loop where the CPU has
/// 64-bit vector multiplies).
pub fn digest_run(base: u64, masks: &[u64], values: &[i8]) -> u64 {
    debug_assert_eq!(masks.len(), values.len());
    digest_run_dispatch(base, masks, values)
}

#[inline(always)]
fn digest_run_body(base: u64, masks: &[u64], values: &[i8]) -> u64 {
    masks.iter().zip(values).fold(0u64, |sum, (&m, &v)| {
        sum.wrapping_add(digest_element(base | m, v))
    })
}

crate::sys::cpu_dispatch!(digest_run_dispatch, digest_run_avx512, digest_run_body, [], (base: u64, masks: &[u64], values: &[i8]) -> u64, ["avx512f", "avx512dq", "avx512vl"]);

/// Formats a digest as 16 lowercase hex digits.
pub fn digest_hex(digest: u64) -> String {
    format!("{digest:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_sees_every_byte_and_the_length() {
        let base = vec![3u8; 1000];
        let h = checksum(&base);
        for i in [0, 7, 8, 500, 999] {
            let mut d = base.clone();
            d[i] ^= 1;
            assert_ne!(checksum(&d), h, "byte {i}");
        }
        assert_ne!(checksum(&base[..999]), h);
        assert_ne!(checksum(&[]), checksum(&[0]));
        // Several at once: the same checksums.
        let others: Vec<Vec<u8>> = (1..4u8)
            .map(|k| base.iter().map(|b| b ^ k).collect())
            .collect();
        let sums = checksums([&base[..], &others[0], &others[1], &others[2]]);
        assert_eq!(sums[0], h);
        for (sum, other) in sums[1..].iter().zip(&others) {
            assert_eq!(*sum, checksum(other));
        }
        assert_eq!(
            checksums([&base[..999], &others[0][..999]])[1],
            checksum(&others[0][..999])
        );
    }

    /// The definition written out one string at a time, as files store it.
    fn one_chain(d: &[u8]) -> u64 {
        let mut words = d.chunks_exact(8);
        let mut h = mix(d.len() as u64 ^ 0x7462_2d63_6875_6e6b);
        for w in &mut words {
            h = mix(h ^ u64::from_le_bytes(w.try_into().unwrap())).rotate_left(17);
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        mix(h ^ u64::from_le_bytes(tail))
    }

    #[test]
    fn strings_of_any_lengths_checksummed_together_are_checksummed_alone() {
        let lengths = [0, 1, 7, 8, 9, 64, 100, 1000, 1001, 3, 17, 16, 4096, 5];
        let data: Vec<Vec<u8>> = (lengths.iter().enumerate())
            .map(|(i, &n)| (0..n).map(|j| (j * 31 + i * 7) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
        for (n, &d) in lengths.iter().zip(&refs) {
            assert_eq!(checksum(d), one_chain(d), "length {n}");
        }
        let each = checksum_each(&refs);
        assert_eq!(each, refs.iter().map(|d| one_chain(d)).collect::<Vec<_>>());
        assert_eq!(
            checksums([refs[7], refs[1], refs[12], refs[0]]),
            [refs[7], refs[1], refs[12], refs[0]].map(one_chain)
        );
    }
}
