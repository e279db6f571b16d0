//! Batches of rows turned into lanes and back, for the kernel's last-group pass:
//! `lanes[q][w]` is entry q of row w, so that one operation on `lanes[q]` touches
//! entry q of every row of the batch. Bytes go through 16x16 tiles of SSE2 shuffles
//! (part of every x86-64 CPU); other entry types and the tiles' edges go one by one.

/// Rows in a batch.
pub const LANES: usize = 32;

/// `lanes[q][w] = rows[w * lanes.len() + q]`: [`LANES`] rows of `lanes.len()` entries.
pub fn rows_to_lanes<T: Copy>(rows: &[T], lanes: &mut [[T; LANES]]) {
    rows_to_lanes_from(rows, lanes, 0);
}

/// `rows[w * lanes.len() + q] = lanes[q][w]`, the inverse of [`rows_to_lanes`].
pub fn lanes_to_rows<T: Copy>(lanes: &[[T; LANES]], rows: &mut [T]) {
    lanes_to_rows_from(lanes, rows, 0);
}

/// [`rows_to_lanes`] for bytes.
pub fn byte_rows_to_lanes(rows: &[i8], lanes: &mut [[i8; LANES]]) {
    let row_len = lanes.len();
    assert!(rows.len() >= LANES * row_len);
    let tiled = for_tiles(row_len, |q, w| {
        // SAFETY: rows w..w + 16 have entries q..q + 16 (`for_tiles`, and the
        // assertion above); each lane q.. has bytes w..w + 16.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            let tile = sse2::transpose(std::array::from_fn(|i| {
                rows.as_ptr().add((w + i) * row_len + q)
            }));
            for (i, t) in tile.iter().enumerate() {
                sse2::store(lanes[q + i][w..w + 16].as_mut_ptr(), *t);
            }
        }
    });
    rows_to_lanes_from(rows, lanes, tiled);
}

/// [`lanes_to_rows`] for bytes.
pub fn byte_lanes_to_rows(lanes: &[[i8; LANES]], rows: &mut [i8]) {
    let row_len = lanes.len();
    assert!(rows.len() >= LANES * row_len);
    let tiled = for_tiles(row_len, |q, w| {
        // SAFETY: lanes q..q + 16 exist with bytes w..w + 16 (`for_tiles`); rows
        // w..w + 16 have entries q..q + 16 (the assertion above).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            let tile = sse2::transpose(std::array::from_fn(|i| lanes[q + i][w..].as_ptr()));
            for (i, t) in tile.iter().enumerate() {
                sse2::store(rows.as_mut_ptr().add((w + i) * row_len + q), *t);
            }
        }
    });
    lanes_to_rows_from(lanes, rows, tiled);
}

/// Calls `tile(q, w)` for the 16x16 tiles of rows `w..w + 16` and entries
/// `q..q + 16` that fit in rows of `row_len` entries, and returns the first entry
/// left for [`rows_to_lanes_from`] or [`lanes_to_rows_from`] (all of them where
/// SSE2 is not there).
fn for_tiles(row_len: usize, mut tile: impl FnMut(usize, usize)) -> usize {
    if !cfg!(target_arch = "x86_64") {
        return 0;
    }
    let tiled = row_len / 16 * 16;
    for q in (0..tiled).step_by(16) {
        for w in (0..LANES).step_by(16) {
            tile(q, w);
        }
    }
    tiled
}

/// [`rows_to_lanes`] for entries `from..` only.
fn rows_to_lanes_from<T: Copy>(rows: &[T], lanes: &mut [[T; LANES]], from: usize) {
    let row_len = lanes.len();
    for (w, row) in rows.chunks_exact(row_len).take(LANES).enumerate() {
        for (lane, &v) in lanes[from..].iter_mut().zip(&row[from..]) {
            lane[w] = v;
        }
    }
}

/// [`lanes_to_rows`] for entries `from..` only.
fn lanes_to_rows_from<T: Copy>(lanes: &[[T; LANES]], rows: &mut [T], from: usize) {
    let row_len = lanes.len();
    for (w, row) in rows.chunks_exact_mut(row_len).take(LANES).enumerate() {
        for (v, lane) in row[from..].iter_mut().zip(&lanes[from..]) {
            *v = lane[w];
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    /// Writes 16 bytes.
    ///
    /// # Safety
    /// `to` must be valid for 16 bytes of writes.
    #[inline(always)]
    pub unsafe fn store(to: *mut i8, v: __m128i) {
        unsafe { _mm_storeu_si128(to as *mut __m128i, v) }
    }

    /// The 16x16 byte matrix whose row i is the 16 bytes at `rows[i]`, transposed:
    /// element i of the result is column i. Four rounds of unpacks, each doubling
    /// the width of the interleaved pieces (bytes, then 2, 4 and 8 bytes).
    ///
    /// # Safety
    /// Each pointer must be valid for 16 bytes of reads.
    #[inline(always)]
    pub unsafe fn transpose(rows: [*const i8; 16]) -> [__m128i; 16] {
        // SAFETY: the caller's promise; SSE2 is part of x86-64.
        unsafe {
            let r: [__m128i; 16] =
                std::array::from_fn(|i| _mm_loadu_si128(rows[i] as *const __m128i));
            // s1[g][h]: rows 2g, 2g + 1, columns 8h..8h + 8, as 2-byte pieces.
            let s1: [[__m128i; 2]; 8] = std::array::from_fn(|g| {
                [
                    _mm_unpacklo_epi8(r[2 * g], r[2 * g + 1]),
                    _mm_unpackhi_epi8(r[2 * g], r[2 * g + 1]),
                ]
            });
            // s2[g][k]: rows 4g..4g + 4, columns 4k..4k + 4, as 4-byte pieces.
            let s2: [[__m128i; 4]; 4] = std::array::from_fn(|g| {
                std::array::from_fn(|k| {
                    let (a, b) = (s1[2 * g][k / 2], s1[2 * g + 1][k / 2]);
                    if k % 2 == 0 {
                        _mm_unpacklo_epi16(a, b)
                    } else {
                        _mm_unpackhi_epi16(a, b)
                    }
                })
            });
            // s3[g][m]: rows 8g..8g + 8, columns 2m, 2m + 1, as 8-byte pieces.
            let s3: [[__m128i; 8]; 2] = std::array::from_fn(|g| {
                std::array::from_fn(|m| {
                    let (a, b) = (s2[2 * g][m / 2], s2[2 * g + 1][m / 2]);
                    if m % 2 == 0 {
                        _mm_unpacklo_epi32(a, b)
                    } else {
                        _mm_unpackhi_epi32(a, b)
                    }
                })
            });
            std::array::from_fn(|c| {
                let (a, b) = (s3[0][c / 2], s3[1][c / 2]);
                if c % 2 == 0 {
                    _mm_unpacklo_epi64(a, b)
                } else {
                    _mm_unpackhi_epi64(a, b)
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte transposes agree with the plain ones, tile edges included, and
    /// undo each other.
    #[test]
    fn byte_transposes_agree_with_the_plain_ones() {
        for row_len in [1, 15, 16, 17, 40, 924] {
            let rows: Vec<i8> = (0..LANES * row_len).map(|i| (i * 37 % 251) as i8).collect();
            let mut plain = vec![[0i8; LANES]; row_len];
            let mut fast = vec![[0i8; LANES]; row_len];
            rows_to_lanes(&rows, &mut plain);
            byte_rows_to_lanes(&rows, &mut fast);
            assert_eq!(plain, fast, "row length {row_len}");
            for (q, lane) in plain.iter().enumerate() {
                for (w, &v) in lane.iter().enumerate() {
                    assert_eq!(v, rows[w * row_len + q]);
                }
            }
            let mut back = vec![0i8; rows.len()];
            byte_lanes_to_rows(&fast, &mut back);
            assert_eq!(back, rows, "row length {row_len}");
            let mut plain_back = vec![0i8; rows.len()];
            lanes_to_rows(&plain, &mut plain_back);
            assert_eq!(plain_back, rows);
        }
    }
}
