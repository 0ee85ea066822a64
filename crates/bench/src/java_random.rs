//! A port of `java.util.Random` (the 48-bit linear congruential generator of the JDK), so the
//! traversal tree gets exactly the flags Neo4j's benchmark draws with `Random(seed).nextBoolean()`.

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// `java.util.Random`, bit for bit.
#[derive(Clone, Debug)]
pub struct JavaRandom {
    seed: u64,
}

impl JavaRandom {
    /// `new Random(seed)`: the seed is scrambled with the multiplier, as the JDK does.
    pub fn new(seed: i64) -> JavaRandom {
        JavaRandom { seed: (seed as u64 ^ MULTIPLIER) & MASK }
    }

    /// `next(bits)`: the top `bits` of the advanced 48-bit state, as a signed int.
    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND)) & MASK;
        (self.seed >> (48 - bits)) as u32 as i32
    }

    pub fn next_boolean(&mut self) -> bool {
        self.next(1) != 0
    }

    pub fn next_int(&mut self) -> i32 {
        self.next(32)
    }

    pub fn next_long(&mut self) -> i64 {
        // The JDK adds the low word as a signed int.
        ((self.next(32) as i64) << 32).wrapping_add(self.next(32) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by OpenJDK 17's `jshell` for the same calls.
    #[test]
    fn matches_the_jdk() {
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int(), -1_170_105_035);
        assert_eq!(r.next_int(), 234_785_527);
        assert_eq!(r.next_long(), -5_843_495_416_241_995_736);

        let mut r = JavaRandom::new(42);
        let bits: String = (0..32).map(|_| if r.next_boolean() { '1' } else { '0' }).collect();
        assert_eq!(bits, "10100101101000010111100011010010");

        let mut r = JavaRandom::new(-7);
        assert_eq!(r.next_int(), 1_155_869_324);
        assert!(r.next_boolean());
    }
}
