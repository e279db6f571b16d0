//! A context-mixing coder for value bytes. Each value is coded as binary decisions by
//! a binary arithmetic coder: whether it equals the previous value; if not, whether
//! it equals its first neighbour; if not, its rank in the chunk's alphabet (see
//! [`code_values`]). The probability of each decision is mixed from six adaptive
//! models whose contexts are the previous value and four *neighbours*: earlier values
//! of the chunk that the game names per position, because a position's value is like
//! its neighbours' in the game, not only like the value before it in the index
//! (Morris: the same position with the opponent's highest, or second highest, stone
//! one point lower; the same slot one mover set back; the third highest stone one
//! point lower):
//!
//! * the previous value,
//! * the first neighbour,
//! * the previous value together with each of the four neighbours (hashed).
//!
//! The mixer is a single-layer logistic network with one weight set per decision
//! node, trained online. Everything is integer arithmetic with fixed tables, so the
//! decoder reproduces the encoder's probabilities bit for bit on any machine.
//!
//! Every chunk is coded independently (models start fresh), so a probe decodes one
//! chunk. Decoding never reads past its input nor writes past the requested length:
//! a corrupt stream decodes to wrong values (caught by the chunk checksum), never to a
//! panic or an allocation beyond `len`.

/// Probability precision of the coder and the mixer: 12 bits.
const PROB_BITS: u32 = 12;
/// Counters adapt at rate 1/(n + 1.5) for their first `COUNTER_LIMIT` updates, then
/// stay at that rate (fast enough to follow local statistics).
const COUNTER_LIMIT: u32 = 30;
/// Mixer learning rate (fixed point, see [`Models::update`]).
const MIXER_RATE: i32 = 82;
/// Neighbours per position.
pub const NEIGHBOURS: usize = 4;
/// Models of the game-neighbour rule ([`NeighbourRule`]): the previous value, the
/// first neighbour, and the previous value paired with each neighbour.
const MODELS: usize = 2 + NEIGHBOURS;
/// Decision nodes (each with its own counter per context and its own mixer
/// weights): [`SAME_NODE`], [`NEIGHBOUR_NODE`], and 1..512 for the rank's code (see
/// [`code_values`]).
const NODES: usize = 513;
/// Counters per slot: the nodes placed so that one value's decisions share few
/// cache lines ([`PLACE`]), rounded up to whole lines of 16.
const SLOT: usize = 528;
/// Counters per cache line; lines are reset lazily.
const LINE: usize = 16;
/// "The same value as the previous one?"
const SAME_NODE: usize = 0;
/// "The same value as the first neighbour?" (asked when that differs from the
/// previous value).
const NEIGHBOUR_NODE: usize = 512;
/// Hashed slots per pair-context model.
const HASH_SLOTS: usize = 2048;
/// Neighbour offsets used when the game gives none: the values 2 to 5 before.
const DEFAULT_NEIGHBOURS: Neighbours = [2, 3, 4, 5];

/// `squash(x)` = 4096 / (1 + e^(-x/256)) at x = 128 (i - 16), i = 0..=32: the knots
/// of a piecewise-linear logistic function.
const SQUASH_KNOTS: [i32; 33] = [
    1, 2, 3, 6, 10, 16, 27, 45, 73, 120, 194, 310, 488, 747, 1101, 1546, 2048, 2549, 2994, 3348,
    3607, 3785, 3901, 3975, 4022, 4050, 4068, 4079, 4085, 4089, 4092, 4093, 4094,
];

/// Logistic function: stretch domain (x / 256, clamped to +-2047) to a 12-bit
/// probability.
fn squash(x: i32) -> i32 {
    if x > 2047 {
        return 4095;
    }
    if x < -2047 {
        return 1;
    }
    let w = x & 127;
    let i = ((x >> 7) + 16) as usize;
    (SQUASH_KNOTS[i] * (128 - w) + SQUASH_KNOTS[i + 1] * w + 64) >> 7
}

/// [`squash`] and its inverse as tables, and the counters' adaptation rates.
struct Tables {
    /// `squash(x - 2048)` for x in 0..4096.
    squash: [i16; 4096],
    /// The inverse of [`squash`] for every 12-bit probability.
    stretch: [i16; 4096],
    /// 32768 / (n + 1.5): the adaptation rate of a counter updated n times.
    rate: [i32; COUNTER_LIMIT as usize + 1],
}

static TABLES: std::sync::LazyLock<Tables> = std::sync::LazyLock::new(|| {
    let mut stretch = [0i16; 4096];
    let mut pi = 0usize;
    for x in -2047..=2047 {
        let v = squash(x) as usize;
        for s in stretch.iter_mut().take(v + 1).skip(pi) {
            *s = x as i16;
        }
        pi = pi.max(v + 1);
    }
    for s in stretch.iter_mut().skip(pi) {
        *s = 2047;
    }
    let mut rate = [0i32; COUNTER_LIMIT as usize + 1];
    for (n, r) in rate.iter_mut().enumerate() {
        *r = 2 * 32768 / (2 * n as i32 + 3);
    }
    let mut squash_table = [0i16; 4096];
    for (x, s) in squash_table.iter_mut().enumerate() {
        *s = squash(x as i32 - 2048).clamp(1, 4095) as i16;
    }
    Tables {
        squash: squash_table,
        stretch,
        rate,
    }
});

/// A counter: probability of a 1 in the high 16 bits, updates so far in the low 16.
type Counter = u32;
const COUNTER_INIT: Counter = 1 << 31;

/// Where node n's counter sits in its slot: the two flags and the unary nodes of
/// the gamma code first, then each bucket's bit tree, smallest buckets first, so
/// that the decisions of a frequent value stay in the slot's first cache line.
const PLACE: [u16; NODES] = {
    let mut place = [0u16; NODES];
    place[NEIGHBOUR_NODE] = 1;
    let mut next = 11;
    let mut b = 0;
    while b <= 8 {
        place[1 << b] = 2 + b as u16;
        let mut t = 1;
        while t < 1 << b {
            place[(1 << b) + t] = next;
            next += 1;
            t += 1;
        }
        b += 1;
    }
    place
};

/// The models' counters, in slots of [`SLOT`] (one counter per decision node),
/// reset lazily: a cache line of counters whose generation is not the current one is
/// refilled when first read; `M` models, each mixed into every decision.
///
/// A cold probe pays a page fault for every page of counters it touches, so the
/// memory it touches is kept dense. A slot is placed when first used (a chunk uses a
/// few hundred of the rule's slots: hashed pairs of values), slots one after
/// another, and line by line: line `j` of every placed slot lies in the `j`-th of
/// [`SLOT`] / [`LINE`] regions ([`Models::counter_at`]). Most values are decided in a slot's
/// first line or two, so most pages touched are full of used lines; the counters'
/// memory starts as untouched zero pages, and a line is written only when used.
/// (Spread over all slots, 18 MiB per thread, the counters cost most of a cold
/// Morris probe; whole slots one after another still cost a fifth of a hard one.)
/// The placement is invisible to the coding: every slot still has its own counters.
pub(crate) struct Models<const M: usize> {
    tables: &'static Tables,
    /// Where each slot's counters start in `counters` ([`UNPLACED`]: not used yet):
    /// its place among the placed slots, times [`LINE`].
    slot_at: Vec<u32>,
    /// Slots placed so far.
    placed: u32,
    counters: Vec<Counter>,
    /// Per line of `counters`: the chunk that last wrote it ([`STALE`]: none).
    generation: Vec<u32>,
    current: u32,
    /// Per node, the mixer's weights of the `M` models and then the bias's.
    weights: Vec<i32>,
    /// Where node `n`'s counter sits relative to its slot's start ([`Models::slot_at`]):
    /// line `PLACE[n] / LINE` of the slot is in that line's region of `slots` lines.
    counter_at: [u32; NODES],
}

/// `slot_at` of a slot whose counters have no place yet.
const UNPLACED: u32 = u32::MAX;

/// The generation of a line never used (no chunk's generation is this): zero, so
/// that the generations start as untouched zero pages.
const STALE: u32 = 0;

/// The mixer's initial weight (0.3 in 16-bit fixed point).
const WEIGHT_INIT: i32 = (1 << 16) * 3 / 10;

/// The stretched bias input of the mixer.
const BIAS: i32 = 256;

const SLOT_PREV: usize = 0;
const SLOT_FIRST: usize = SLOT_PREV + 256;
const SLOT_PAIRS: usize = SLOT_FIRST + 256;
const SLOTS: usize = SLOT_PAIRS + NEIGHBOURS * HASH_SLOTS;

/// A hashed slot, in `0..slots` (a power of two), of a context made of `key`.
#[inline(always)]
pub(crate) fn hash_slot(key: u32, slots: usize) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> (32 - slots.trailing_zeros())) as usize
}

fn pair_slot(a: u8, b: u8) -> usize {
    hash_slot((a as u32) << 8 | b as u32, HASH_SLOTS)
}

impl<const M: usize> Models<M> {
    /// Models whose contexts are `slots` slots in all.
    pub(crate) fn new(slots: usize) -> Models<M> {
        let region = slots * LINE;
        let mut counter_at = [0u32; NODES];
        for (at, &place) in counter_at.iter_mut().zip(PLACE.iter()) {
            let place = place as usize;
            *at = ((place / LINE) * region + place % LINE) as u32;
        }
        Models {
            tables: &TABLES,
            slot_at: vec![UNPLACED; slots],
            placed: 0,
            // Zeroed allocations come as untouched pages: a page is faulted in when
            // a line in it is first used.
            counters: vec![0; slots * SLOT],
            generation: vec![STALE; slots * SLOT / LINE],
            current: STALE,
            weights: vec![WEIGHT_INIT; NODES * (M + 1)],
            counter_at,
        }
    }

    /// Where slot `slot`'s counters start, placing them (stale) on first use.
    #[inline]
    fn place(&mut self, slot: usize) -> usize {
        let at = self.slot_at[slot];
        if at != UNPLACED {
            return at as usize;
        }
        let at = self.placed as usize * LINE;
        self.placed += 1;
        self.slot_at[slot] = at as u32;
        at
    }

    /// Starts a new chunk: every counter and weight back to its initial state.
    fn reset(&mut self) {
        if self.current == u32::MAX {
            self.generation.fill(STALE);
            self.current = STALE;
        }
        self.current += 1;
        self.weights.fill(WEIGHT_INIT);
    }
}

/// One value's coding state: the models' stretched predictions for the current node.
struct Prediction<const M: usize> {
    inputs: [i32; M],
    p: i32,
}

impl<const M: usize> Models<M> {
    /// Mixed probability (12 bits) that the bit at `node` is 1 (unmixed: the
    /// first model's, see [`Rule::MIX`]).
    #[inline(always)]
    fn predict(&mut self, bases: &[usize; M], node: usize, mix: bool) -> Prediction<M> {
        let t = self.tables;
        let place = self.counter_at[node] as usize;
        let mut inputs = [0i32; M];
        for (input, &base) in inputs.iter_mut().zip(bases) {
            let at = base + place;
            let line = at / LINE;
            if self.generation[line] != self.current {
                self.generation[line] = self.current;
                self.counters[line * LINE..(line + 1) * LINE].fill(COUNTER_INIT);
            }
            if !mix {
                // The counter's 12-bit probability, kept off the ends as squash's.
                let p = ((self.counters[at] >> 20) as i32).clamp(1, 4095);
                return Prediction { inputs, p };
            }
            *input = t.stretch[(self.counters[at] >> 20) as usize] as i32;
        }
        let w = &self.weights[node * (M + 1)..(node + 1) * (M + 1)];
        let dot: i64 = inputs
            .iter()
            .zip(w)
            .map(|(&x, &w)| x as i64 * w as i64)
            .sum::<i64>()
            + BIAS as i64 * w[M] as i64;
        let p = t.squash[((dot >> 16).clamp(-2047, 2047) + 2048) as usize] as i32;
        Prediction { inputs, p }
    }

    #[inline(always)]
    fn update(
        &mut self,
        bases: &[usize; M],
        node: usize,
        pred: &Prediction<M>,
        bit: u32,
        mix: bool,
    ) {
        let t = self.tables;
        let target = (bit as i32) << 16;
        let place = self.counter_at[node] as usize;
        for &base in bases {
            let c = &mut self.counters[base + place];
            let n = *c & 0xFFFF;
            let p = (*c >> 16) as i32;
            let p = p + (((target - p) * t.rate[n as usize]) >> 15);
            *c = ((p.clamp(0, 0xFFFF) as u32) << 16) | (n + (n < COUNTER_LIMIT) as u32);
        }
        if !mix {
            return;
        }
        let err = ((bit as i32) << PROB_BITS) - pred.p;
        let w = &mut self.weights[node * (M + 1)..(node + 1) * (M + 1)];
        let inputs = pred.inputs.iter().chain(std::iter::once(&BIAS));
        for (w, &x) in w.iter_mut().zip(inputs) {
            *w = (*w + ((x * err * MIXER_RATE) >> 16)).clamp(-(1 << 22), 1 << 22);
        }
    }
}

/// Back-offsets (0: none) of a position's neighbours, per position of a chunk.
pub type Neighbours = [u32; NEIGHBOURS];

/// What the models of one value see: the two values the first decisions ask
/// about, and each model's slot (its context).
pub(crate) struct Context<const M: usize> {
    /// The previous value ("the same as it?").
    pub prev: u8,
    /// The value "the same as it?" asks about next, when it differs from `prev`.
    pub first: u8,
    /// Each model's slot.
    pub slots: [usize; M],
}

/// The body of a [`Rule::with_models`]: this thread's models (`$m` of them over
/// `$slots` slots, one set per rule) given to `$f`.
macro_rules! thread_models {
    ($m:expr, $slots:expr, $f:expr) => {{
        thread_local! {
            static MODELS_OF_THREAD: std::cell::RefCell<$crate::store::cm::Models<{ $m }>> =
                std::cell::RefCell::new($crate::store::cm::Models::new($slots));
        }
        MODELS_OF_THREAD.with_borrow_mut($f)
    }};
}
pub(crate) use thread_models;

/// How a coding picks the contexts of a value from the values before it: the one
/// thing that differs between the codings that share this coder.
pub(crate) trait Rule<const M: usize> {
    /// The context of value `i` given the values before it (`values[..i]`).
    fn context(&self, values: &[u8], i: usize) -> Context<M>;
    /// Runs `f` with this thread's models of the rule (kept between chunks: their
    /// memory is allocated once per thread).
    fn with_models<T>(f: impl FnOnce(&mut Models<M>) -> T) -> T;
    /// Whether the models' predictions are mixed; else the first model's counter
    /// is the probability of each decision (a rule of one model: a mixer of one
    /// input codes worse and slower).
    const MIX: bool = true;
}

/// The game-neighbour rule (context-mixing chunks, tags 0x01 and 0x03): the
/// previous value and the neighbours' values (the previous value where a neighbour
/// is missing or before the chunk).
struct NeighbourRule<'a> {
    neighbours: &'a [Neighbours],
}

impl Rule<MODELS> for NeighbourRule<'_> {
    #[inline(always)]
    fn context(&self, values: &[u8], i: usize) -> Context<MODELS> {
        let prev = if i > 0 { values[i - 1] } else { 0 };
        let near = back_values(values, i, self.neighbours.get(i), &DEFAULT_NEIGHBOURS, prev);
        let mut slots = [0; MODELS];
        slots[0] = SLOT_PREV + prev as usize;
        slots[1] = SLOT_FIRST + near[0] as usize;
        for (j, &near) in near.iter().enumerate() {
            slots[2 + j] = SLOT_PAIRS + j * HASH_SLOTS + pair_slot(prev, near);
        }
        Context {
            prev,
            first: near[0],
            slots,
        }
    }

    fn with_models<T>(f: impl FnOnce(&mut Models<MODELS>) -> T) -> T {
        thread_models!(MODELS, SLOTS, f)
    }
}

/// The values at back-offsets `offsets` from index `i` (`default` where the
/// position has none), `or` for an offset of 0 or one before the chunk.
#[inline(always)]
pub(crate) fn back_values(
    values: &[u8],
    i: usize,
    offsets: Option<&Neighbours>,
    default: &Neighbours,
    or: u8,
) -> [u8; NEIGHBOURS] {
    offsets.unwrap_or(default).map(|d| {
        if d > 0 && d as usize <= i {
            values[i - d as usize]
        } else {
            or
        }
    })
}

/// Binary arithmetic (range) encoder with carry propagation through a cached byte.
struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    pending: u64,
    out: Vec<u8>,
}

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            pending: 1,
            out: Vec::new(),
        }
    }

    #[inline(always)]
    fn bit(&mut self, p1: i32, bit: u32) {
        let bound = (self.range >> PROB_BITS) * p1 as u32;
        if bit == 1 {
            self.range = bound;
        } else {
            self.low += bound as u64;
            self.range -= bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if (self.low as u32) < 0xFF00_0000 || (self.low >> 32) != 0 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            while self.pending > 0 {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.pending -= 1;
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

struct Decoder<'a> {
    code: u32,
    range: u32,
    input: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn new(input: &'a [u8]) -> Decoder<'a> {
        let mut d = Decoder {
            code: 0,
            range: u32::MAX,
            input,
            at: 0,
        };
        // The encoder's first byte is always the initial (zero) cache.
        d.next_byte();
        for _ in 0..4 {
            d.code = (d.code << 8) | d.next_byte() as u32;
        }
        d
    }

    /// The next input byte, or zero past the end (a truncated stream decodes to
    /// garbage that the checksum rejects).
    #[inline(always)]
    fn next_byte(&mut self) -> u8 {
        let b = self.input.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    #[inline(always)]
    fn bit(&mut self, p1: i32) -> u32 {
        let bound = (self.range >> PROB_BITS) * p1 as u32;
        let bit = if self.code < bound {
            self.range = bound;
            1
        } else {
            self.code -= bound;
            self.range -= bound;
            0
        };
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.code = (self.code << 8) | self.next_byte() as u32;
        }
        bit
    }
}

/// One binary decision through the range coder: the encoder codes `bit` and returns
/// it, the decoder ignores it and returns the decoded bit, so that one routine
/// ([`code_values`]) drives both.
trait BitCoder {
    fn code(&mut self, p1: i32, bit: u32) -> u32;
}

impl BitCoder for Encoder {
    #[inline(always)]
    fn code(&mut self, p1: i32, bit: u32) -> u32 {
        self.bit(p1, bit);
        bit
    }
}

impl BitCoder for Decoder<'_> {
    #[inline(always)]
    fn code(&mut self, p1: i32, _bit: u32) -> u32 {
        self.bit(p1)
    }
}

impl<const M: usize> Models<M> {
    /// Predicts, codes and learns one decision.
    #[inline(always)]
    fn step<C: BitCoder>(
        &mut self,
        coder: &mut C,
        bases: &[usize; M],
        node: usize,
        bit: u32,
        mix: bool,
    ) -> u32 {
        let pred = self.predict(bases, node, mix);
        let bit = coder.code(pred.p, bit);
        self.update(bases, node, &pred, bit, mix);
        bit
    }
}

/// Codes `len` values into `out`: per value, "same as the previous value", else
/// "same as the rule's first value" (when that differs), else its
/// rank in the chunk's alphabet (most frequent first) as an Elias-gamma code: bucket
/// b (ranks 2^b - 1 .. 2^(b+1) - 2) in unary at nodes 2^b, then the b low bits of
/// rank + 1 in a bit tree at nodes 2^b + 1 .. 2^(b+1) - 1. Frequent values take few
/// decisions. The encoder passes the values as `source`, the decoder nothing.
fn code_values<const M: usize, C: BitCoder, R: Rule<M>>(
    models: &mut Models<M>,
    coder: &mut C,
    out: &mut Vec<u8>,
    len: usize,
    rule: &R,
    alphabet: &[u8],
    source: &[u8],
) {
    let mut rank_of = [0u8; 256];
    for (r, &v) in alphabet.iter().enumerate() {
        rank_of[v as usize] = r as u8;
    }
    // Rank + 1 <= alphabet size: the last bucket needs no stop decision.
    let last_bucket = usize::BITS - 1 - alphabet.len().max(1).leading_zeros();
    for i in 0..len {
        let context = rule.context(out, i);
        let prev = context.prev;
        let bases = context.slots.map(|s| models.place(s));
        let value = source.get(i).copied().unwrap_or(0);
        if models.step(coder, &bases, SAME_NODE, (value == prev) as u32, R::MIX) == 1 {
            out.push(prev);
            continue;
        }
        let first = context.first;
        if first != prev
            && models.step(
                coder,
                &bases,
                NEIGHBOUR_NODE,
                (value == first) as u32,
                R::MIX,
            ) == 1
        {
            out.push(first);
            continue;
        }
        let x = rank_of[value as usize] as usize + 1;
        let bucket = usize::BITS - 1 - x.leading_zeros();
        let mut b = 0;
        while b < last_bucket
            && models.step(coder, &bases, 1 << b, (b < bucket) as u32, R::MIX) == 1
        {
            b += 1;
        }
        let mut t = 1usize;
        for i in (0..b).rev() {
            let bit = (x >> i) as u32 & 1;
            t = 2 * t + models.step(coder, &bases, (1 << b) + t, bit, R::MIX) as usize;
        }
        // A corrupt stream may decode a rank past the alphabet: any value will do,
        // the checksum rejects the chunk.
        out.push(alphabet.get(t - 1).copied().unwrap_or(0));
    }
}

/// Codes `values` with `rule`'s contexts: the alphabet (number of distinct values
/// - 1, then the values, most frequent first), then the coded decisions.
pub(crate) fn encode_with<const M: usize, R: Rule<M>>(values: &[u8], rule: &R) -> Vec<u8> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut counts = [0u32; 256];
    for &v in values {
        counts[v as usize] += 1;
    }
    let mut alphabet: Vec<u8> = (0..=255u8).filter(|&v| counts[v as usize] > 0).collect();
    alphabet.sort_by_key(|&v| std::cmp::Reverse(counts[v as usize]));
    let mut out = vec![(alphabet.len() - 1) as u8];
    out.extend_from_slice(&alphabet);
    R::with_models(|models| {
        models.reset();
        let mut enc = Encoder::new();
        let mut copy = Vec::with_capacity(values.len());
        code_values(
            models,
            &mut enc,
            &mut copy,
            values.len(),
            rule,
            &alphabet,
            values,
        );
        out.extend(enc.finish());
    });
    out
}

/// Decodes `len` values coded by [`encode_with`] with the same rule.
pub(crate) fn decode_with<const M: usize, R: Rule<M>>(
    data: &[u8],
    len: usize,
    rule: &R,
) -> Vec<u8> {
    let mut values = Vec::with_capacity(len);
    if len == 0 {
        return values;
    }
    let size = data.first().map_or(1, |&k| k as usize + 1);
    let alphabet = data.get(1..1 + size).unwrap_or(&[]);
    let coded = data.get(1 + size..).unwrap_or(&[]);
    R::with_models(|models| {
        models.reset();
        let mut dec = Decoder::new(coded);
        code_values(models, &mut dec, &mut values, len, rule, alphabet, &[]);
    });
    values
}

/// Codes `values` whose neighbours are `neighbours` (one entry per value, or
/// empty) with the game-neighbour rule.
pub fn encode(values: &[u8], neighbours: &[Neighbours]) -> Vec<u8> {
    encode_with(values, &NeighbourRule { neighbours })
}

/// Decodes `len` values coded by [`encode`] with the same `neighbours`.
pub fn decode(data: &[u8], len: usize, neighbours: &[Neighbours]) -> Vec<u8> {
    decode_with(data, len, &NeighbourRule { neighbours })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any values with any neighbours (in or past the chunk) round-trip, and
        /// noise never codes to more than twice its size (plus the alphabet).
        #[test]
        fn any_values_round_trip(
            values in proptest::collection::vec(0u8..=255, 0..3000),
            alphabet in 1usize..=256,
            offsets in proptest::collection::vec((0u32..4000, 0u32..4000), 0..3000),
        ) {
            let neighbours: Vec<Neighbours> = offsets.iter().map(|&(a, b)| [a, b, a ^ b, a / 2]).collect();
            check_round_trip(&values, alphabet, |v| encode(v, &neighbours), |c, len| decode(c, len, &neighbours))?;
        }
    }

    /// `values` folded into an alphabet of `alphabet` values round-trip through
    /// `encode` and `decode`, and take at most twice their size (plus the
    /// alphabet): the property every coder built on this one has.
    pub(crate) fn check_round_trip(
        values: &[u8],
        alphabet: usize,
        encode: impl Fn(&[u8]) -> Vec<u8>,
        decode: impl Fn(&[u8], usize) -> Vec<u8>,
    ) -> Result<(), TestCaseError> {
        let values: Vec<u8> = values
            .iter()
            .map(|&v| (v as usize % alphabet) as u8)
            .collect();
        let coded = encode(&values);
        prop_assert_eq!(decode(&coded, values.len()), values.clone());
        prop_assert!(coded.len() <= values.len() * 2 + 270);
        Ok(())
    }

    /// Values for the corrupt-input tests of the coders built on this one.
    pub(crate) fn corrupt_test_values() -> Vec<u8> {
        (0..5000u32).map(|i| (i * i % 37) as u8).collect()
    }

    /// `decode` of `coded` (the coding of `values`) cut short gives as many values
    /// (no panic), and with a bit flipped other values.
    pub(crate) fn assert_cut_and_flipped_decode_wrong(
        values: &[u8],
        coded: &[u8],
        decode: impl Fn(&[u8]) -> Vec<u8>,
    ) {
        for cut in [0, 1, 3, coded.len() / 2] {
            assert_eq!(decode(&coded[..cut]).len(), values.len());
        }
        let mut flipped = coded.to_vec();
        flipped[coded.len() / 3] ^= 0x10;
        assert_ne!(decode(&flipped), values);
    }

    /// Neighbours one row of `stride` back and two rows back.
    fn rows(len: usize, stride: u32) -> Vec<Neighbours> {
        (0..len).map(|_| [stride, 2 * stride, 3, 4]).collect()
    }

    fn round_trip(values: &[u8], stride: u32) -> usize {
        let neighbours = if stride == 0 {
            Vec::new()
        } else {
            rows(values.len(), stride)
        };
        let coded = encode(values, &neighbours);
        assert_eq!(decode(&coded, values.len(), &neighbours), values);
        coded.len()
    }

    #[test]
    fn node_places_are_a_bijection_into_a_slot() {
        let mut seen = vec![false; SLOT];
        for &p in PLACE.iter() {
            assert!(!seen[p as usize], "place {p} twice");
            seen[p as usize] = true;
        }
        assert!(seen[..NODES].iter().all(|&s| s));
        // A value of rank < 3 decides in the first cache line of each slot.
        for node in [SAME_NODE, NEIGHBOUR_NODE, 1, 2, 3, 4, 5, 6, 7] {
            assert!((PLACE[node] as usize) < LINE, "node {node}");
        }
    }

    #[test]
    fn squash_and_stretch_are_monotone_inverses() {
        let t = &*TABLES;
        for x in -2047..2047 {
            assert_eq!(
                t.squash[(x + 2048) as usize] as i32,
                squash(x).clamp(1, 4095)
            );
            assert!(squash(x) <= squash(x + 1));
        }
        for p in 1..4095usize {
            assert!(t.stretch[p] <= t.stretch[p + 1]);
            assert!(
                (squash(t.stretch[p] as i32) - p as i32).abs() <= 40,
                "p {p}"
            );
        }
    }

    #[test]
    fn round_trips_edge_cases() {
        assert_eq!(round_trip(&[], 0), 0);
        round_trip(&[0], 0);
        round_trip(&[255], 3);
        round_trip(&[255; 1000], 7);
        round_trip(&(0..=255).collect::<Vec<u8>>(), 16);
        // Incompressible bytes: carries and 0xFF runs in the range coder.
        let mut x = 1u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let n = round_trip(&noise, 1000);
        assert!(n < noise.len() + noise.len() / 50, "{n}");
    }

    #[test]
    fn compresses_structured_values() {
        // A field like a tablebase's: each value is its neighbour one row up, often
        // changed by a little, so exact repeats (what zstd finds) are rare.
        let mut x = 7u64;
        let mut noise = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u32
        };
        let width = 300;
        let mut values: Vec<u8> = (0..width).map(|i| (i / 10) as u8).collect();
        while values.len() < 60_000 {
            let up = values[values.len() - width];
            let delta = match noise() % 8 {
                0 => 2,
                1 | 2 => 1,
                3 => -1,
                _ => 0,
            };
            values.push(up.saturating_add_signed(delta).min(60));
        }
        let n = round_trip(&values, width as u32);
        let zstd = zstd::bulk::compress(&values, 19).unwrap().len();
        assert!(n * 5 < zstd * 4, "cm {n} bytes, zstd -19 {zstd}");
    }

    #[test]
    fn corrupt_input_never_panics() {
        let values = corrupt_test_values();
        let neighbours = rows(values.len(), 50);
        assert_cut_and_flipped_decode_wrong(&values, &encode(&values, &neighbours), |data| {
            decode(data, values.len(), &neighbours)
        });
        // Neighbours past the start of the chunk, or absent, are not errors.
        let far = vec![[u32::MAX, 7, 0, 1]; values.len()];
        assert_eq!(decode(&encode(&values, &far), values.len(), &far), values);
        let short = &neighbours[..10];
        assert_eq!(decode(&encode(&values, short), values.len(), short), values);
    }
}
