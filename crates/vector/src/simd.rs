//! Runtime-dispatched AVX2+FMA versions of the distance kernels (x86-64 only), cache
//! prefetch hints and the huge-page advice for the graph's big arrays.
//!
//! This is the crate's only `unsafe`. A prefetch is a hint that never faults, whatever the
//! address; the huge-page advice changes only how the kernel backs memory the caller owns,
//! never its contents. The kernels have two invariants: a `#[target_feature]` function is
//! called only after [`avx2_fma`] returned true (the CPU has AVX2 and FMA, checked and cached by
//! `is_x86_feature_detected!`), and an unaligned 8-lane load reads only inside its slice (the
//! kernels load only from 16-lane chunks; debug builds assert it in `load`). Two 8-lane accumulators with fused multiply-adds per 16 coordinates.
//! Other targets have only [`avx2_fma`] (always false), so callers fall back to the portable
//! kernels and this module never needs to know them.
#![allow(unsafe_code)]

/// True when the AVX2+FMA kernels may be called.
#[inline]
pub(crate) fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Hints the CPU to load the cache line at `p` and the next one (no effect on results; a
/// prefetch never faults, whatever the address). A no-op off x86-64.
#[inline]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching is a hint that never faults and never reads into the program,
        // so any address is allowed; SSE is part of the x86-64 baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast());
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints the CPU to load every cache line of `items` into L1 (no effect on results): a
/// whole link list, which a search reads one expansion later. A no-op off x86-64.
#[inline]
pub(crate) fn prefetch_all<T>(items: &[T]) {
    let bytes = std::mem::size_of_val(items);
    let start = items.as_ptr().cast::<u8>();
    let mut at = 0;
    while at < bytes {
        prefetch_line(start.wrapping_add(at));
        at += 64;
    }
}

/// Hints the CPU to load the one cache line at `p` into L1 (no effect on results; any
/// address is allowed, as in [`prefetch`]). A no-op off x86-64.
#[inline]
pub(crate) fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: as in `prefetch`: a hint that never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Size of a huge page (x86-64 and aarch64 Linux with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks Linux to back the whole 2 MiB pages inside `v`'s allocation (its capacity, used or
/// not) with transparent huge pages (`madvise(MADV_HUGEPAGE)`): a build reads codes and link
/// lists at random slots, and with 4 KiB pages nearly every such read at 100 k entries also
/// missed the TLB (3 100 misses per insert). Pages already touched keep their size until the
/// kernel collapses them, so callers advise right after reserving. Does nothing when the
/// allocation holds no whole huge page, off Linux, or when the kernel refuses (THP `never`):
/// the advice never changes results.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    let start = v.as_ptr() as usize;
    let end = start.saturating_add(v.capacity().saturating_mul(std::mem::size_of::<T>()));
    let first = start.div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE);
    let last = end / HUGE_PAGE * HUGE_PAGE;
    if last <= first {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `[first, last)` lies inside `v`'s allocation, which `v` owns; MADV_HUGEPAGE
    // only sets a paging policy on those pages (their contents stay as they are), and a
    // refusal is an error code, which is ignored because the advice is optional.
    unsafe {
        libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE);
    }
}

/// `out[i] = Σ code_d · weights_d` for the code of each `slots[i]` (`dims` bytes per slot
/// in `codes`), in one AVX2 loop with the kernel inlined (a call per distance cost as much
/// as the distance at 128 dimensions); callers checked [`avx2_fma`]. Panics, as slicing
/// does, if a slot's code is outside `codes` (callers pass graph slots, always inside).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn dots_u8_i16(
    codes: &[u8],
    dims: usize,
    slots: &[u32],
    weights: &[i16],
    out: &mut Vec<i32>,
) {
    debug_assert!(avx2_fma(), "AVX2 kernel called without the CPU feature");
    // SAFETY: as in `dot`.
    unsafe { x86::dots_u8_i16(codes, dims, slots, weights, out) }
}

/// Whether `stop(item, code · weights(item))` holds for some item, in order, stopping at the
/// first: one code against many queries (the neighbour heuristic) in one AVX2 loop;
/// callers checked [`avx2_fma`].
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn any_dot<T>(
    code: &[u8],
    items: &[T],
    weights: impl Fn(&T) -> &[i16],
    stop: impl FnMut(&T, i32) -> bool,
) -> bool {
    debug_assert!(avx2_fma(), "AVX2 kernel called without the CPU feature");
    // SAFETY: as in `dot`.
    unsafe { x86::any_dot(code, items, weights, stop) }
}

/// Dot product with AVX2+FMA; callers checked [`avx2_fma`].
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert!(avx2_fma(), "AVX2 kernel called without the CPU feature");
    // SAFETY: the caller checked `avx2_fma()`, so the CPU supports every enabled feature.
    unsafe { x86::dot(a, b) }
}

/// Squared euclidean distance with AVX2+FMA; callers checked [`avx2_fma`].
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn l2_squared(a: &[f32], b: &[f32]) -> f32 {
    debug_assert!(avx2_fma(), "AVX2 kernel called without the CPU feature");
    // SAFETY: as in `dot`.
    unsafe { x86::l2_squared(a, b) }
}

/// `Σ code_d · weight_d` with AVX2 (`u8` widened to `i16`, pairs multiplied and added into
/// `i32` lanes); callers checked [`avx2_fma`].
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn dot_u8_i16(code: &[u8], weights: &[i16]) -> i32 {
    debug_assert!(avx2_fma(), "AVX2 kernel called without the CPU feature");
    // SAFETY: as in `dot`.
    unsafe { x86::dot_u8_i16(code, weights) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_fmadd_ps,
        _mm256_loadu_ps, _mm256_setzero_ps, _mm256_sub_ps, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps,
    };

    /// Loads the 8 lanes of `v` starting at `at`.
    ///
    /// SAFETY (of the body): callers pass a chunk of 16 lanes with `at` 0 or 8, so the
    /// unaligned load reads inside the slice (checked in debug builds; release builds skip
    /// the check, which cost a third of a distance's instructions).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load(v: &[f32], at: usize) -> __m256 {
        debug_assert!(at + 8 <= v.len(), "load past the end of a vector");
        unsafe { _mm256_loadu_ps(v.as_ptr().add(at)) }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn sum(v: __m256) -> f32 {
        let half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pair = _mm_hadd_ps(half, half);
        _mm_cvtss_f32(_mm_hadd_ps(pair, pair))
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
        let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        for (x, y) in ac.zip(bc) {
            // Chunks of exactly 16 lanes: both loads of each are inside (see `load`).
            s0 = _mm256_fmadd_ps(load(x, 0), load(y, 0), s0);
            s1 = _mm256_fmadd_ps(load(x, 8), load(y, 8), s1);
        }
        sum(_mm256_add_ps(s0, s1)) + tail
    }

    /// Four codes at a time when the dimension count is a multiple of 16 (see [`dot4`]), the
    /// remaining slots and other dimension counts one at a time ([`dot_u8_i16`]).
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn dots_u8_i16(
        codes: &[u8],
        dims: usize,
        slots: &[u32],
        weights: &[i16],
        out: &mut Vec<i32>,
    ) {
        out.clear();
        let code = |s: u32| {
            let at = s as usize * dims;
            &codes[at..at + dims]
        };
        if !dims.is_multiple_of(16) || weights.len() < dims {
            out.extend(slots.iter().map(|&s| dot_u8_i16(code(s), weights)));
            return;
        }
        let mut groups = slots.chunks_exact(4);
        for g in &mut groups {
            let c = [code(g[0]), code(g[1]), code(g[2]), code(g[3])];
            out.extend_from_slice(&dot4(c.map(<[u8]>::as_ptr), [weights.as_ptr(); 4], dims));
        }
        out.extend(groups.remainder().iter().map(|&s| dot_u8_i16(code(s), weights)));
    }

    /// One code against the items' weights four items at a time (when the dimension count
    /// is a multiple of 16 and every item has that many weights), testing `stop` in order.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn any_dot<T>(
        code: &[u8],
        items: &[T],
        weights: impl Fn(&T) -> &[i16],
        mut stop: impl FnMut(&T, i32) -> bool,
    ) -> bool {
        let n = code.len();
        let mut rest = items;
        if n.is_multiple_of(16) && items.iter().all(|it| weights(it).len() == n) {
            let mut groups = items.chunks_exact(4);
            for g in &mut groups {
                let w = [weights(&g[0]), weights(&g[1]), weights(&g[2]), weights(&g[3])];
                let dots = dot4([code.as_ptr(); 4], w.map(<[i16]>::as_ptr), n);
                if g.iter().zip(dots).any(|(it, d)| stop(it, d)) {
                    return true;
                }
            }
            rest = groups.remainder();
        }
        rest.iter().any(|it| stop(it, dot_u8_i16(code, weights(it))))
    }

    /// `Σ_d code_k[d] · weights_k[d]` for four (code, weights) pairs at once: per 16
    /// coordinates, each pair is one widening load, one `madd` with the weights from memory
    /// and one add; the four sums are reduced together by three horizontal adds. Integer sums
    /// in another order, so equal to [`dot_u8_i16`]'s.
    ///
    /// SAFETY (of the body): the caller passes pointers to `n` readable bytes (codes) and `n`
    /// readable `i16` (weights) with `n % 16 == 0`; every load reads 16 elements at `at` with
    /// `at + 16 <= n`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn dot4(c: [*const u8; 4], w: [*const i16; 4], n: usize) -> [i32; 4] {
        use std::arch::x86_64::{
            __m128i, __m256i, _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepu8_epi16,
            _mm256_extracti128_si256, _mm256_hadd_epi32, _mm256_loadu_si256, _mm256_madd_epi16,
            _mm256_setzero_si256, _mm_add_epi32, _mm_loadu_si128, _mm_storeu_si128,
        };
        debug_assert!(n.is_multiple_of(16), "dot4 needs whole 16-lane chunks");
        // SAFETY: `at + 16 <= n` (see above).
        let part = |k: usize, at: usize| unsafe {
            let code = _mm_loadu_si128(c[k].add(at).cast::<__m128i>());
            let weights = _mm256_loadu_si256(w[k].add(at).cast::<__m256i>());
            _mm256_madd_epi16(_mm256_cvtepu8_epi16(code), weights)
        };
        let mut acc = [_mm256_setzero_si256(); 4];
        let mut at = 0;
        while at + 16 <= n {
            for (k, a) in acc.iter_mut().enumerate() {
                *a = _mm256_add_epi32(*a, part(k, at));
            }
            at += 16;
        }
        let h =
            _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
        let sums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
        let mut out = [0i32; 4];
        // SAFETY: `out` holds exactly 16 bytes.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), sums) };
        out
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn dot_u8_i16(code: &[u8], weights: &[i16]) -> i32 {
        use std::arch::x86_64::{
            __m128i, __m256i, _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepu8_epi16,
            _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
            _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_shuffle_epi32,
        };
        let n = code.len().min(weights.len());
        let (c, w) = (code.as_ptr(), weights.as_ptr());
        // SAFETY: only called with `at + 16 <= n` (see above).
        let part = |at: usize| unsafe {
            let c = _mm_loadu_si128(c.add(at).cast::<__m128i>());
            let w = _mm256_loadu_si256(w.add(at).cast::<__m256i>());
            _mm256_madd_epi16(_mm256_cvtepu8_epi16(c), w)
        };
        let (mut a0, mut a1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        let mut at = 0;
        while at + 32 <= n {
            a0 = _mm256_add_epi32(a0, part(at));
            a1 = _mm256_add_epi32(a1, part(at + 16));
            at += 32;
        }
        if at + 16 <= n {
            a0 = _mm256_add_epi32(a0, part(at));
            at += 16;
        }
        let tail: i32 = code[at..n]
            .iter()
            .zip(&weights[at..n])
            .map(|(&c, &w)| i32::from(c) * i32::from(w))
            .sum();
        let acc = _mm256_add_epi32(a0, a1);
        let half = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
        let pair = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
        let one = _mm_add_epi32(pair, _mm_shuffle_epi32::<0b10_11_00_01>(pair));
        _mm_cvtsi128_si32(one) + tail
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn l2_squared(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
        let tail: f32 =
            ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| (x - y) * (x - y)).sum();
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        for (x, y) in ac.zip(bc) {
            let d0 = _mm256_sub_ps(load(x, 0), load(y, 0));
            let d1 = _mm256_sub_ps(load(x, 8), load(y, 8));
            s0 = _mm256_fmadd_ps(d0, d0, s0);
            s1 = _mm256_fmadd_ps(d1, d1, s1);
        }
        sum(_mm256_add_ps(s0, s1)) + tail
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    /// Deterministic bytes and weights over the whole ranges (codes 0..=255, weights ±2047).
    fn data(n: usize, seed: u64) -> (Vec<u8>, Vec<i16>) {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let codes = (0..n).map(|_| next() as u8).collect();
        let weights = (0..n).map(|_| (next() % 4095) as i16 - 2047).collect();
        (codes, weights)
    }

    fn plain(code: &[u8], weights: &[i16]) -> i32 {
        code.iter().zip(weights).map(|(&c, &w)| i32::from(c) * i32::from(w)).sum()
    }

    /// The batched kernels (four at a time, then one at a time) give every slot's exact dot
    /// product, in slot order, for any batch length and dimension count.
    #[test]
    fn batched_dots_equal_plain_dots() {
        if !super::avx2_fma() {
            return;
        }
        for dims in [1, 15, 16, 32, 37, 48, 128, 130, 256] {
            let (codes, _) = data(dims * 20, dims as u64);
            let (_, weights) = data(dims, 7 + dims as u64);
            for len in 0..=11 {
                let slots: Vec<u32> = (0..len).map(|i| (i * 7 % 20) as u32).collect();
                let mut out = vec![-1];
                super::dots_u8_i16(&codes, dims, &slots, &weights, &mut out);
                let want: Vec<i32> = slots
                    .iter()
                    .map(|&s| plain(&codes[s as usize * dims..][..dims], &weights))
                    .collect();
                assert_eq!(out, want, "dims {dims}, {len} slots");
            }
        }
    }

    /// `any_dot` stops at the first item whose exact dot product passes, as a plain loop does.
    #[test]
    fn any_dot_stops_at_the_first_passing_item() {
        if !super::avx2_fma() {
            return;
        }
        for dims in [16, 37, 128] {
            let (code, _) = data(dims, 3);
            let items: Vec<Vec<i16>> = (0..9).map(|i| data(dims, 100 + i).1).collect();
            let dots: Vec<i32> = items.iter().map(|w| plain(&code, w)).collect();
            for target in 0..=items.len() {
                let want = dots.get(target).copied();
                let mut seen = Vec::new();
                let hit = super::any_dot(
                    &code,
                    &items,
                    |w| w,
                    |w, d| {
                        seen.push(d);
                        Some(d) == want && std::ptr::eq(w, &items[target])
                    },
                );
                assert_eq!(hit, target < items.len(), "dims {dims}, target {target}");
                let upto = (target + 1).min(items.len());
                assert_eq!(seen[..upto], dots[..upto], "dims {dims}, target {target}");
            }
        }
    }
}
