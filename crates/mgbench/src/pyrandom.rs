//! A bit-exact port of CPython 3's `random.Random` for what mgBench uses: seeding from a
//! `str` (version 2: the UTF-8 bytes followed by their SHA-512 digest, read as one big-endian
//! integer, fed to MT19937's `init_by_array` as 32-bit words, least significant first),
//! `random()`, `getrandbits(k)`, `randrange`/`randint` (via `_randbelow_with_getrandbits`),
//! `choice`, and `choices` with and without weights. `gen-b2b` (arbor-bench) uses `randrange(n)`
//! with an integer seed ([`PyRandom::randbelow_u32`] is its fast path for small `n`).
//!
//! mgBench seeds `random` with each query's method name (isolated runs) or with the workload
//! configuration (`"500_30_40_10_20"`), so the parameter stream of every vendor is identical;
//! matching CPython bit for bit is what makes our query lists the same as mgBench's. Tests
//! compare against python3 at test time (skipped when python3 is missing) and against values
//! recorded from CPython 3.11.

use sha2::{Digest, Sha512};

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// CPython's `random.Random` state (MT19937).
#[derive(Clone)]
pub struct PyRandom {
    mt: Box<[u32; N]>,
    index: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom").field("index", &self.index).finish()
    }
}

impl PyRandom {
    fn init_genrand(s: u32) -> PyRandom {
        let mut mt = Box::new([0u32; N]);
        mt[0] = s;
        for i in 1..N {
            mt[i] =
                1_812_433_253u32.wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_add(i as u32);
        }
        PyRandom { mt, index: N }
    }

    /// MT19937's `init_by_array`, as CPython calls it.
    pub fn from_key(key: &[u32]) -> PyRandom {
        let mut r = PyRandom::init_genrand(19_650_218);
        let mt = &mut r.mt;
        let key_len = key.len().max(1);
        let (mut i, mut j) = (1usize, 0usize);
        let mut k = N.max(key_len);
        while k > 0 {
            let kj = key.get(j).copied().unwrap_or(0);
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(kj)
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key_len {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            k -= 1;
        }
        mt[0] = 0x8000_0000; // MSB is 1, assuring a non-zero initial array
        r.index = N;
        r
    }

    /// `random.seed(s)` for a `str` `s` (CPython 3.2+, version 2).
    pub fn from_str_seed(s: &str) -> PyRandom {
        let mut bytes = s.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(s.as_bytes()));
        PyRandom::from_key(&big_endian_to_words(&bytes))
    }

    /// `random.seed(n)` for a non-negative `int` `n` (CPython uses `abs(n)`).
    pub fn from_int_seed(n: u128) -> PyRandom {
        PyRandom::from_key(&big_endian_to_words(&n.to_be_bytes()))
    }

    /// MT19937's `genrand_uint32`.
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn twist(&mut self) {
        let mt = &mut self.mt;
        for kk in 0..N {
            let y = (mt[kk] & UPPER_MASK) | (mt[(kk + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[kk] = mt[(kk + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// `random.random()`: 53-bit precision float in [0, 1).
    pub fn random(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `random.getrandbits(k)` for `k <= 64`: 32-bit words, least significant first, the last
    /// word shifted down to the bits still wanted.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        if k == 0 {
            return 0;
        }
        let k = k.min(64);
        if k <= 32 {
            return u64::from(self.next_u32() >> (32 - k));
        }
        let low = u64::from(self.next_u32());
        let high = u64::from(self.next_u32() >> (64 - k));
        low | (high << 32)
    }

    /// `_randbelow_with_getrandbits(n)`: uniform in `[0, n)` by rejection. `n == 0` gives 0
    /// (CPython raises; callers here never pass 0).
    pub fn randbelow(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = 64 - n.leading_zeros();
        let mut r = self.getrandbits(k);
        while r >= n {
            r = self.getrandbits(k);
        }
        r
    }

    /// `_randbelow_with_getrandbits(n)` for `n < 2^32` (what `randrange(n)` does for small
    /// `n`): one 32-bit word per try, shifted down to `n.bit_length()` bits. `n == 0` gives 0.
    #[inline]
    pub fn randbelow_u32(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        let shift = n.leading_zeros();
        loop {
            let r = self.next_u32() >> shift;
            if r < n {
                return r;
            }
        }
    }

    /// `random.randrange(start, stop)` (step 1); `stop <= start` gives `start`.
    pub fn randrange(&mut self, start: i64, stop: i64) -> i64 {
        let width = stop.wrapping_sub(start);
        if width <= 0 {
            return start;
        }
        start.wrapping_add(self.randbelow(width as u64) as i64)
    }

    /// `random.randint(a, b)`: uniform in `[a, b]`.
    pub fn randint(&mut self, a: i64, b: i64) -> i64 {
        self.randrange(a, b.wrapping_add(1))
    }

    /// `random.choice(seq)` index: `_randbelow(len)`.
    pub fn choice_index(&mut self, len: usize) -> usize {
        self.randbelow(len as u64) as usize
    }

    /// `random.choices(population, k=1)[0]` index without weights: `floor(random() * n)`.
    pub fn choices_index(&mut self, len: usize) -> usize {
        let i = (self.random() * len as f64).floor() as usize;
        i.min(len.saturating_sub(1))
    }

    /// `random.choices(population, weights=w, k=k)` as indices: cumulative weights, then
    /// `bisect_right(cum, random() * total, 0, n - 1)` per draw.
    pub fn weighted_choices(&mut self, weights: &[f64], k: usize) -> Vec<usize> {
        let mut cum = Vec::with_capacity(weights.len());
        let mut acc = 0.0;
        for w in weights {
            acc += w;
            cum.push(acc);
        }
        let total = acc;
        let hi = weights.len().saturating_sub(1);
        (0..k)
            .map(|_| {
                let x = self.random() * total;
                // bisect_right over cum[0..hi]: first index whose value is > x.
                cum[..hi].partition_point(|&c| c <= x)
            })
            .collect()
    }
}

/// Reads `bytes` as one big-endian unsigned integer and returns its 32-bit words, least
/// significant first, without leading zero words (at least one word), as CPython's
/// `random_seed` does with `_PyLong_AsByteArray(..., little_endian=1)`.
fn big_endian_to_words(bytes: &[u8]) -> Vec<u32> {
    let mut le: Vec<u8> = bytes.iter().rev().copied().collect();
    while le.last() == Some(&0) {
        le.pop();
    }
    while !le.len().is_multiple_of(4) {
        le.push(0);
    }
    let mut words: Vec<u32> =
        le.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if words.is_empty() {
        words.push(0);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a python3 snippet; `None` when python3 is not installed (the test is then skipped).
    fn python(code: &str) -> Option<String> {
        let out = std::process::Command::new("python3").arg("-c").arg(code).output().ok()?;
        assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    #[test]
    fn recorded_cpython_values() {
        // Recorded with CPython 3.11: random.seed(name); [random.randint(1, 10000) ...]
        let mut r = PyRandom::from_str_seed("benchmark__basic__expansion_1_analytical");
        let got: Vec<i64> = (0..5).map(|_| r.randint(1, 10_000)).collect();
        assert_eq!(got, RECORDED_EXPANSION_1);
        // random.seed(42); random.random()
        let mut r = PyRandom::from_int_seed(42);
        assert_eq!(r.random(), 0.6394267984578837);
        assert_eq!(r.random(), 0.025010755222666936);
        // random.seed("500_30_40_10_20"); random.choices(range(4), weights=[30,40,10,20], k=8)
        let mut r = PyRandom::from_str_seed("500_30_40_10_20");
        assert_eq!(r.weighted_choices(&[30.0, 40.0, 10.0, 20.0], 8), RECORDED_CHOICES);
    }

    const RECORDED_EXPANSION_1: [i64; 5] = [6675, 7318, 9074, 2890, 3604];
    const RECORDED_CHOICES: [usize; 8] = [2, 3, 1, 3, 3, 3, 3, 0];

    #[test]
    fn matches_live_cpython() {
        let code = r#"
import random
out = []
for seed in ["benchmark__basic__expansion_1_analytical", "500_30_0_0_0_70", "", "é€𝄞", "x" * 300]:
    random.seed(seed)
    out.append(" ".join(str(random.randint(1, 10000)) for _ in range(50)))
    out.append(" ".join(str(random.randint(1, 100000 * 10)) for _ in range(50)))
    out.append(" ".join(repr(random.random()) for _ in range(20)))
    out.append(" ".join(str(random.getrandbits(k)) for k in (1, 7, 31, 32, 33, 53, 64)))
    out.append(" ".join(str(i) for i in random.choices(range(5), weights=[30, 0, 0, 0, 70], k=40)))
    out.append(" ".join(str(i) for i in random.choices(range(15), k=40)))
    out.append(" ".join(str(random.randrange(0, 1)) + "," + str(random.randint(1, 2**20)) for _ in range(20)))
random.seed(123456789)
out.append(" ".join(str(random.getrandbits(32)) for _ in range(5)))
print("\n".join(out))
"#;
        let Some(expected) = python(code) else {
            eprintln!("python3 not found: skipping the live CPython comparison");
            return;
        };
        let mut lines = Vec::new();
        for seed in ["benchmark__basic__expansion_1_analytical", "500_30_0_0_0_70", "", "é€𝄞"]
            .into_iter()
            .map(String::from)
            .chain(std::iter::once("x".repeat(300)))
        {
            let mut r = PyRandom::from_str_seed(&seed);
            let join = |v: Vec<String>| v.join(" ");
            lines.push(join((0..50).map(|_| r.randint(1, 10_000).to_string()).collect()));
            lines.push(join((0..50).map(|_| r.randint(1, 1_000_000).to_string()).collect()));
            lines.push(join((0..20).map(|_| py_repr(r.random())).collect()));
            lines.push(join(
                [1, 7, 31, 32, 33, 53, 64].iter().map(|&k| r.getrandbits(k).to_string()).collect(),
            ));
            lines.push(join(
                r.weighted_choices(&[30.0, 0.0, 0.0, 0.0, 70.0], 40)
                    .iter()
                    .map(|i| i.to_string())
                    .collect(),
            ));
            lines.push(join((0..40).map(|_| r.choices_index(15).to_string()).collect()));
            lines.push(join(
                (0..20)
                    .map(|_| {
                        let a = r.randrange(0, 1);
                        format!("{a},{}", r.randint(1, 1 << 20))
                    })
                    .collect(),
            ));
        }
        let mut r = PyRandom::from_int_seed(123_456_789);
        lines.push((0..5).map(|_| r.getrandbits(32).to_string()).collect::<Vec<_>>().join(" "));
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(expected.len(), lines.len());
        for (i, (e, g)) in expected.iter().zip(&lines).enumerate() {
            assert_eq!(e, g, "line {i} differs");
        }
    }

    /// Python's `repr(float)`: shortest round-trip form; Rust's `{:?}` is the same algorithm
    /// for the values in [0, 1) that `random()` yields, except for exponent formatting of very
    /// small numbers, which we normalise.
    fn py_repr(x: f64) -> String {
        let s = format!("{x:?}");
        if let Some((m, e)) = s.split_once('e') {
            let e: i32 = e.parse().unwrap_or(0);
            format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
        } else {
            s
        }
    }

    #[test]
    fn randrange_with_int_seed_matches_live_cpython() {
        let code = "import random\nr = random.Random(1)\nprint(' '.join(str(r.randrange(n)) for n in [254, 26, 20, 16, 10, 8, 3920, 5219, 2**32 - 1, 2**32 + 5, 10**12] * 30))";
        let Some(expected) = python(code) else {
            eprintln!("python3 not found: skipping the live CPython comparison");
            return;
        };
        let mut r = PyRandom::from_int_seed(1);
        let ns: [u64; 11] =
            [254, 26, 20, 16, 10, 8, 3920, 5219, (1 << 32) - 1, (1 << 32) + 5, 1_000_000_000_000];
        let mut got = Vec::new();
        for _ in 0..30 {
            for (j, &n) in ns.iter().enumerate() {
                // Alternate the two entry points: they must draw identically.
                let v = match u32::try_from(n) {
                    Ok(n32) if j % 2 == 0 => u64::from(r.randbelow_u32(n32)),
                    _ => r.randbelow(n),
                };
                got.push(v.to_string());
            }
        }
        assert_eq!(expected.trim(), got.join(" "));
    }

    #[test]
    fn words_are_least_significant_first() {
        assert_eq!(big_endian_to_words(&[0, 0, 1, 2, 3, 4, 5]), vec![0x0203_0405, 0x01]);
        assert_eq!(big_endian_to_words(&[0]), vec![0]);
    }
}
