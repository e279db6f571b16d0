//! A small deterministic random source for unit tests (xorshift64): reproducible
//! without a dependency, good enough to pick positions and values.

/// Xorshift64 from `seed` (not zero): each call gives the next 64 random bits.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// [`xorshift`] reduced below `n` on each call (`n` > 0; the slight bias of `%`
/// does not matter to a test).
pub fn below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut bits = xorshift(seed);
    move |n| bits() % n
}
