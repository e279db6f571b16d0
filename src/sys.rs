//! Facts about the running process, and how its big arrays ask the kernel for memory.

use std::sync::atomic::{AtomicU8, AtomicU16};

/// Most worker threads a command (`--threads`) or `tb.solve(threads=)` accepts.
pub const MAX_THREADS: usize = 1024;

/// `threads` if it is between 1 and [`MAX_THREADS`], else an error naming the
/// option `flag` it came from.
pub fn check_threads(flag: &str, threads: usize) -> anyhow::Result<usize> {
    if !(1..=MAX_THREADS).contains(&threads) {
        anyhow::bail!("{flag} must be between 1 and {MAX_THREADS}, not {threads}");
    }
    Ok(threads)
}

/// Peak resident set size of this process (Linux: `VmHWM` in /proc/self/status;
/// `None` elsewhere).
pub fn peak_rss_bytes() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// Physical memory of the machine (Linux: `MemTotal` in /proc/meminfo; `None`
/// elsewhere).
pub fn total_memory_bytes() -> Option<u64> {
    proc_kib("/proc/meminfo", "MemTotal:")
}

/// Share of the machine's memory a build takes when `--memory` is not given:
/// the rest is left to the system, the page cache and the file's own writes.
const DEFAULT_MEMORY_SHARE: (u64, u64) = (3, 4);

/// The memory budget of a build without `--memory`: the game's `preferred`
/// budget, but at most three quarters of this machine's memory (rounded down to
/// a MiB) where the machine says how much it has, so that the bare command fits
/// a laptop as well as the 24 GiB machine the defaults were measured on.
pub fn default_memory(preferred: u64) -> u64 {
    let (num, den) = DEFAULT_MEMORY_SHARE;
    match total_memory_bytes() {
        Some(total) => preferred.min(((total / den * num) >> 20) << 20),
        None => preferred,
    }
}

/// A `KEY: N kB` line of a /proc file, in bytes.
fn proc_kib(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Asks the kernel to back the pages of `[ptr, ptr + len)` with transparent huge pages
/// (2 MiB). The solvers read and write arrays of up to gigabytes at random; with 4 KiB
/// pages nearly every access also misses the TLB, which under virtualisation costs a
/// two-level page walk. Call it before the memory is first written: the faults then
/// allocate huge pages directly. Only advice: without THP support nothing changes.
pub fn advise_huge_pages(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        // Not worth a system call below a few huge pages.
        if len < 8 << 20 {
            return;
        }
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: madvise with MADV_HUGEPAGE changes no contents and the range lies
            // inside one live allocation of the caller; a failure is harmless.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// An empty vector with room for `capacity` elements, its memory advised for huge pages
/// ([`advise_huge_pages`]); fill it before use.
pub fn huge_vec<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    advise_huge_pages(v.as_ptr() as *const u8, capacity * std::mem::size_of::<T>());
    v
}

/// `n` copies of `fill` on huge pages where the kernel has them, written on every
/// core (a big block's page faults and first writes then spread over the cores).
pub fn huge_filled<T: Copy + Send + Sync>(n: usize, fill: T) -> Vec<T> {
    use rayon::prelude::*;
    let mut v: Vec<T> = huge_vec(n);
    // In pieces of 1 MiB, each a plain fill (rayon's `repeat_n` stored a byte at a
    // time).
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(1 << 20)
        .for_each(|piece| piece.fill(std::mem::MaybeUninit::new(fill)));
    // SAFETY: the loop above initialised the first n elements (capacity >= n).
    unsafe { v.set_len(n) };
    v
}

/// `n` atomic bytes holding `fill`, on huge pages where the kernel has them.
pub fn huge_atomic_bytes(n: usize, fill: u8) -> Vec<AtomicU8> {
    let v = huge_filled(n, fill);
    // SAFETY: AtomicU8 has the size, alignment and bit validity of u8.
    unsafe { reinterpret(v) }
}

/// `n` atomic 16-bit words holding `fill`, on huge pages where the kernel has them.
pub fn huge_atomic_u16(n: usize, fill: u16) -> Vec<AtomicU16> {
    let v = huge_filled(n, fill);
    // SAFETY: AtomicU16 has the size, alignment and bit validity of u16.
    unsafe { reinterpret(v) }
}

/// The buffer of `v` as a vector of `A`.
///
/// # Safety
/// `A` must have the size, alignment and bit validity of `T`, so that (pointer,
/// length, capacity) describe a valid `Vec<A>` that is freed with the same layout.
pub unsafe fn reinterpret<T, A>(v: Vec<T>) -> Vec<A> {
    debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<A>());
    debug_assert_eq!(std::mem::align_of::<T>(), std::mem::align_of::<A>());
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: guaranteed by the caller.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut A, v.len(), v.capacity()) }
}

/// Hints the processor to fetch the cache line at `p` into its caches (no effect
/// on other targets): callers about to read many scattered values hint them all
/// first, so that the memory reads overlap instead of waiting one after another.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint and never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Compiles a hot loop `body` twice, for the baseline target and with the x86-64
/// features listed, and defines `name` to pick one at run time: loops vectorise
/// wider with the features, and the binary still runs on CPUs without them.
///
/// `cpu_dispatch!(name, name_fast, name_body, [T: Bound], (arg: Type, ..) -> Ret,
/// ["avx2", "bmi2"]);` (the generics and the return type may be left out).
macro_rules! cpu_dispatch {
    ($name:ident, $fast:ident, $body:ident, [$($g:ident: $bound:path),*],
     ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?, [$($feature:tt),+]) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature($(enable = $feature),+)]
        fn $fast<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
            $body($($arg),*)
        }

        #[inline]
        fn $name<$($g: $bound),*>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            if $(std::is_x86_feature_detected!($feature))&&+ {
                // SAFETY: the CPU supports every feature $fast was compiled for.
                return unsafe { $fast($($arg),*) };
            }
            $body($($arg),*)
        }
    };
}
pub(crate) use cpu_dispatch;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_memory_is_the_games_but_fits_the_machine() {
        // A small budget is kept; one larger than the machine is cut to 3/4 of it.
        assert_eq!(default_memory(64 << 20), 64 << 20);
        let total = total_memory_bytes().expect("Linux has /proc/meminfo");
        let huge = default_memory(total * 2);
        assert!(huge <= total / 4 * 3, "{huge} of {total}");
        assert!(huge > total / 2, "{huge} of {total}");
        assert_eq!(huge % (1 << 20), 0);
    }
}
