//! Summary statistics over run times, with the same nearest-rank percentiles as the Neo4j
//! anchor (`sorted[ceil(p * n) - 1]`), so the two sides are computed identically.

/// mean / min / max and percentiles of a set of durations in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub runs: usize,
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Nearest-rank percentile of sorted data.
fn rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = (p * sorted.len() as f64).ceil() as isize - 1;
    sorted[idx.clamp(0, sorted.len() as isize - 1) as usize]
}

impl Summary {
    pub fn of(ms: &[f64]) -> Summary {
        if ms.is_empty() {
            return Summary::default();
        }
        let mut s = ms.to_vec();
        s.sort_by(f64::total_cmp);
        Summary {
            runs: s.len(),
            mean: s.iter().sum::<f64>() / s.len() as f64,
            min: s[0],
            p50: rank(&s, 0.50),
            p90: rank(&s, 0.90),
            p95: rank(&s, 0.95),
            p99: rank(&s, 0.99),
            max: s[s.len() - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_like_the_anchor() {
        let ms: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Summary::of(&ms);
        assert_eq!(
            (s.p50, s.p90, s.p95, s.p99, s.max, s.min),
            (50.0, 90.0, 95.0, 99.0, 100.0, 1.0)
        );
        assert_eq!(s.mean, 50.5);
        // 30 runs: p99 is the max, as the anchor's README says.
        let s = Summary::of(&(1..=30).map(f64::from).collect::<Vec<_>>());
        assert_eq!((s.p50, s.p99), (15.0, 30.0));
        assert_eq!(Summary::of(&[]).runs, 0);
    }
}
