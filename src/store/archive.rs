//! The archival coder (chunk tag 0x04, `chunk_coding=archive`): the context-mixing
//! coder of [`super::cm`] (its models, mixer, binarisation and arithmetic coder)
//! with more context than the game-neighbour rule gives it. A game names, per
//! position, four earlier positions of the chunk ([`Site::back`], as back-offsets:
//! positions one line apart, the position one row back) and a small number that
//! sums up the position ([`Site::feature`]: Dots-and-Boxes, its boxes left and
//! boxes with three sides); eight models mix
//!
//! * the previous value, the first neighbour's value,
//! * the previous value with the first neighbour's, and with the second's,
//! * the four neighbours' values together,
//! * the feature with the previous value, with the first neighbour's, and with
//!   the second and third neighbours' together (hashed).
//!
//! It is slower than zstd (a few million values a second per core), so builds do
//! not write it: `tb recode --coding archive` turns a finished file into one.
//! Every chunk is coded on its own, so a probe still decodes one chunk (or the
//! part of it up to the value it needs).

use super::cm::{self, Context, Models, Neighbours, Rule, back_values, hash_slot, thread_models};

/// What the archival coder knows of one position besides the values before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Site {
    /// Back-offsets (0: none) of four earlier positions whose values predict this
    /// one's, the most telling first.
    pub back: Neighbours,
    /// A summary of the position (the game's), mixed with the values.
    pub feature: u16,
}

/// Models of the rule.
const MODELS: usize = 8;
/// Hashed slots of each hashed model.
const HASH_SLOTS: usize = 4096;
const SLOT_PREV: usize = 0;
const SLOT_FIRST: usize = SLOT_PREV + 256;
const SLOT_HASHED: usize = SLOT_FIRST + 256;
const SLOTS: usize = SLOT_HASHED + (MODELS - 2) * HASH_SLOTS;

/// The archival rule over a chunk's sites (a value without a site, or whose
/// neighbour is missing or before the chunk, sees the previous value there).
struct SiteRule<'a> {
    sites: &'a [Site],
}

/// The slot of hashed model `j` (0-based among the hashed ones) for `key`.
#[inline(always)]
fn hashed(j: usize, key: u32) -> usize {
    SLOT_HASHED + j * HASH_SLOTS + hash_slot(key, HASH_SLOTS)
}

impl Rule<MODELS> for SiteRule<'_> {
    #[inline(always)]
    fn context(&self, values: &[u8], i: usize) -> Context<MODELS> {
        let prev = if i > 0 { values[i - 1] } else { 0 };
        let site = self.sites.get(i).copied().unwrap_or_default();
        let [a, b, c, d] = back_values(values, i, Some(&site.back), &[0; 4], prev);
        let f = site.feature as u32;
        let (prev32, a, b, c, d) = (prev as u32, a as u32, b as u32, c as u32, d as u32);
        let slots = [
            SLOT_PREV + prev as usize,
            SLOT_FIRST + a as usize,
            hashed(0, prev32 << 8 | a),
            hashed(1, prev32 << 8 | b),
            hashed(2, a << 24 | b << 16 | c << 8 | d),
            hashed(3, f << 8 | prev32),
            hashed(4, f << 8 | a),
            hashed(5, f << 16 | b << 8 | c),
        ];
        Context {
            prev,
            first: a as u8,
            slots,
        }
    }

    fn with_models<T>(f: impl FnOnce(&mut Models<MODELS>) -> T) -> T {
        thread_models!(MODELS, SLOTS, f)
    }
}

/// Codes `values` whose positions are `sites` (one per value, or fewer).
pub fn encode(values: &[u8], sites: &[Site]) -> Vec<u8> {
    cm::encode_with(values, &SiteRule { sites })
}

/// Decodes `len` values coded by [`encode`] with the same `sites`.
pub fn decode(data: &[u8], len: usize, sites: &[Site]) -> Vec<u8> {
    cm::decode_with(data, len, &SiteRule { sites })
}

/// What the fast archival coder (chunk tag 0x05) knows of a chunk's positions:
/// one back-offset for all of them (the position one row back; 0: none) and a
/// feature per position (as [`Site::feature`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFeatures {
    /// Back-offset of the position one row back, the same for every position of
    /// the chunk (0: none).
    pub row: u32,
    /// One per position, or fewer (a position without one has feature 0).
    pub features: Vec<u16>,
}

/// Models of the fast rule.
const FAST_MODELS: usize = 1;
/// Hashed slots of each of the fast rule's models: a chunk of 2,048 values uses a
/// few hundred contexts, so collisions are rare.
const FAST_HASH_SLOTS: usize = 1 << 14;

/// The fast archival rule (chunk tag 0x05): one model, whose context is the
/// position's feature, the previous value and the value one row back together,
/// with the row's value asked about after the previous one, and no mixer (its
/// counter's probability codes each decision). Fitted to decoding speed: on a
/// 3x5+corners book it codes 1.446 bits/position against the eight models' 1.371
/// ([`SiteRule`]) at about 4-5 times their speed (29 against 5.6-7.5 M values/s);
/// two or three mixed models coded 1.4-3.6% smaller at 12-18 M values/s, the
/// same model mixed (with a bias) 0.8% larger at 20-23 M (README, archival
/// files).
struct FastRule<'a> {
    sites: &'a RowFeatures,
}

impl Rule<FAST_MODELS> for FastRule<'_> {
    #[inline(always)]
    fn context(&self, values: &[u8], i: usize) -> Context<FAST_MODELS> {
        let prev = if i > 0 { values[i - 1] } else { 0 };
        let row = self.sites.row as usize;
        let up = if row > 0 && row <= i {
            values[i - row]
        } else {
            prev
        };
        let feature = self.sites.features.get(i).copied().unwrap_or(0) as u32;
        let key = feature << 16 | (prev as u32) << 8 | up as u32;
        Context {
            prev,
            first: up,
            slots: [hash_slot(key, FAST_HASH_SLOTS)],
        }
    }

    fn with_models<T>(f: impl FnOnce(&mut Models<FAST_MODELS>) -> T) -> T {
        thread_models!(FAST_MODELS, FAST_MODELS * FAST_HASH_SLOTS, f)
    }

    const MIX: bool = false;
}

/// Codes `values` whose positions are described by `sites` with the fast rule.
pub fn encode_fast(values: &[u8], sites: &RowFeatures) -> Vec<u8> {
    cm::encode_with(values, &FastRule { sites })
}

/// Decodes `len` values coded by [`encode_fast`] with the same `sites`.
pub fn decode_fast(data: &[u8], len: usize, sites: &RowFeatures) -> Vec<u8> {
    cm::decode_with(data, len, &FastRule { sites })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any values with any sites (neighbours in or past the chunk, any
        /// feature) round-trip, and noise never codes to more than twice its size.
        #[test]
        fn any_values_round_trip(
            values in proptest::collection::vec(0u8..=255, 0..3000),
            alphabet in 1usize..=256,
            sites in proptest::collection::vec((0u32..4000, 0u32..4000, any::<u16>()), 0..3000),
        ) {
            let sites: Vec<Site> = sites
                .iter()
                .map(|&(a, b, feature)| Site { back: [a, b, a ^ b, a / 2], feature })
                .collect();
            crate::store::cm::tests::check_round_trip(
                &values,
                alphabet,
                |v| encode(v, &sites),
                |c, len| decode(c, len, &sites),
            )?;
        }
    }

    /// A field of 60,000 values (from `seed`) whose values follow a feature of
    /// the position (in 0..12) and the value one row of 257 back: the row's
    /// width, the features and the values.
    fn structured_field(seed: u64) -> (usize, Vec<u16>, Vec<u8>) {
        let mut x = seed;
        let mut noise = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u32
        };
        let width = 257;
        let len = 60_000;
        let features: Vec<u16> = (0..len).map(|_| (noise() % 12) as u16).collect();
        let mut values: Vec<u8> = Vec::with_capacity(len);
        for i in 0..len {
            let up = if i >= width { values[i - width] } else { 0 };
            let v = match noise() % 4 {
                0 => up,
                _ => 2 * features[i] as u8 + (noise() % 8 == 0) as u8,
            };
            values.push(v);
        }
        (width, features, values)
    }

    /// A field whose values follow a feature of the position and the value one
    /// row back: the feature and the neighbours must make the coding smaller than
    /// the coder without them (and than zstd).
    #[test]
    fn sites_make_structured_values_smaller() {
        let (width, feature, values) = structured_field(11);
        let len = values.len();
        let sites: Vec<Site> = (0..len)
            .map(|i| Site {
                back: [width as u32, 1, 2, 3],
                feature: feature[i],
            })
            .collect();
        let coded = encode(&values, &sites);
        assert_eq!(decode(&coded, len, &sites), values);
        let blind = encode(&values, &[]);
        assert_eq!(decode(&blind, len, &[]), values);
        assert!(
            coded.len() * 2 < blind.len(),
            "{} vs {}",
            coded.len(),
            blind.len()
        );
        let zstd = zstd::bulk::compress(&values, 19).unwrap().len();
        assert!(coded.len() * 2 < zstd, "{} vs zstd {zstd}", coded.len());
    }

    proptest! {
        /// Any values with any row offset (in or past the chunk) and any features
        /// round-trip through the fast coder, noise within twice its size.
        #[test]
        fn any_values_round_trip_the_fast_coder(
            values in proptest::collection::vec(0u8..=255, 0..3000),
            alphabet in 1usize..=256,
            row in prop_oneof![Just(0u32), 1u32..4000, Just(u32::MAX)],
            features in proptest::collection::vec(any::<u16>(), 0..3000),
        ) {
            let sites = RowFeatures { row, features };
            crate::store::cm::tests::check_round_trip(
                &values,
                alphabet,
                |v| encode_fast(v, &sites),
                |c, len| decode_fast(c, len, &sites),
            )?;
        }
    }

    /// `values` coded fast with `sites` decode to themselves (and a prefix to
    /// the prefix): the coded bytes.
    fn fast_round_trip(values: &[u8], sites: &RowFeatures) -> Vec<u8> {
        let coded = encode_fast(values, sites);
        assert_eq!(decode_fast(&coded, values.len(), sites), values);
        let half = values.len() / 2;
        assert_eq!(decode_fast(&coded, half, sites), values[..half]);
        coded
    }

    #[test]
    fn the_fast_coder_round_trips_edge_cases() {
        let none = RowFeatures::default();
        assert!(fast_round_trip(&[], &none).is_empty());
        // One value, and a constant chunk (the codec stores those as 0x02, the
        // coder codes them in a few bytes all the same).
        for value in [0, 7, 255] {
            fast_round_trip(&[value], &none);
            let coded = fast_round_trip(&[value; 2048], &none);
            assert!(coded.len() < 40, "{}", coded.len());
        }
        // Values outside any tablebase's (every byte), features beyond any
        // board's, and a row offset past the chunk or of one value.
        let every: Vec<u8> = (0..=255).cycle().take(4096).collect();
        for row in [0, 1, 256, 4096, u32::MAX] {
            for feature in [0, 1, 64 * 33 + 31, u16::MAX] {
                let sites = RowFeatures {
                    row,
                    features: vec![feature; every.len()],
                };
                fast_round_trip(&every, &sites);
            }
        }
        // Fewer features than values: the rest have feature 0.
        let short = RowFeatures {
            row: 3,
            features: vec![9; 10],
        };
        fast_round_trip(&every, &short);
    }

    /// The field of `sites_make_structured_values_smaller` with its row and
    /// features: the fast coder must code it a third smaller than without them
    /// and than zstd. (Its single context is too fine for this small field: the
    /// eight models code it in 10,124 bytes, the fast coder in 18,334; on books,
    /// 1.371 against 1.446 bits/position.)
    #[test]
    fn the_fast_coders_row_and_features_make_values_smaller() {
        let (width, features, values) = structured_field(5);
        let sites = RowFeatures {
            row: width as u32,
            features,
        };
        let fast = fast_round_trip(&values, &sites).len();
        let blind = fast_round_trip(&values, &RowFeatures::default()).len();
        assert!(fast * 3 < blind * 2, "{fast} vs {blind}");
        let zstd = zstd::bulk::compress(&values, 19).unwrap().len();
        assert!(fast * 3 < zstd * 2, "{fast} vs zstd {zstd}");
    }

    #[test]
    fn corrupt_fast_input_never_panics() {
        let values = crate::store::cm::tests::corrupt_test_values();
        let sites = RowFeatures {
            row: 50,
            features: (0..values.len() as u16).map(|i| i % 9).collect(),
        };
        let coded = encode_fast(&values, &sites);
        crate::store::cm::tests::assert_cut_and_flipped_decode_wrong(&values, &coded, |data| {
            decode_fast(data, values.len(), &sites)
        });
        // Other contexts than the encoder's decode to other values.
        let other = RowFeatures {
            row: 51,
            ..sites.clone()
        };
        assert_ne!(decode_fast(&coded, values.len(), &other), values);
        let flat = RowFeatures {
            features: vec![0; values.len()],
            ..sites
        };
        assert_ne!(decode_fast(&coded, values.len(), &flat), values);
    }

    #[test]
    fn corrupt_input_never_panics() {
        let values = crate::store::cm::tests::corrupt_test_values();
        let sites: Vec<Site> = (0..values.len() as u32)
            .map(|i| Site {
                back: [50, 1, 100, 7],
                feature: (i % 9) as u16,
            })
            .collect();
        let coded = encode(&values, &sites);
        crate::store::cm::tests::assert_cut_and_flipped_decode_wrong(&values, &coded, |data| {
            decode(data, values.len(), &sites)
        });
        // Sites that differ from the encoder's decode to other values.
        let other: Vec<Site> = sites.iter().map(|s| Site { feature: 0, ..*s }).collect();
        assert_ne!(decode(&coded, values.len(), &other), values);
    }
}
