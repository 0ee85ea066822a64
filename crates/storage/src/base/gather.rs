//! Typed column gathers for scans: a batch of node ids' values of one integer property
//! ([`IntColumn::gather`]) from the base's integer column, the column's packing matched once
//! per batch and values and presence appended by two branch-free passes over the codes (no
//! zero-fill, no per-id dispatch); a batch whose ids are one contiguous run (a dense label, or
//! an unlabelled scan of a base without holes) reads its codes as one slice
//! ([`IntColumn::gather_run`]), with no index per id.
//!
//! These read the base only: which rows are clean (no delta version, not written by the
//! reading transaction) is the caller's business (`Transaction::node_int_gather` overlays the
//! others).

use arbor_model::NodeId;

use super::columns::Packed;
use super::props::IntColumn;

impl IntColumn {
    /// Appends the values of `ids` (read as clean base rows) to `vals`, `0` where a node lacks
    /// the key, and whether each has one to `present`. Ids past the column read as missing.
    /// Both are written by `extend` from the codes (no zero-fill first), the packing matched
    /// once per batch.
    pub fn gather(&self, ids: &[NodeId], vals: &mut Vec<i64>, present: &mut Vec<bool>) {
        if let Some(first) = run_start(ids) {
            self.gather_run(first, ids.len(), vals, present);
            return;
        }
        let min = self.min;
        match &self.codes {
            Packed::U8(c) => decode(
                move || ids.iter().map(move |i| c.get(i.0 as usize).map_or(0, |x| *x)),
                min,
                vals,
                present,
            ),
            Packed::U16(c) => decode(
                move || ids.iter().map(move |i| c.get(i.0 as usize).map_or(0, |x| *x)),
                min,
                vals,
                present,
            ),
            Packed::U32(c) => decode(
                move || ids.iter().map(move |i| c.get(i.0 as usize).map_or(0, |x| *x)),
                min,
                vals,
                present,
            ),
            codes => {
                decode(move || ids.iter().map(move |i| codes.get(i.0 as usize)), min, vals, present)
            }
        }
    }

    /// Appends the values of the `n` nodes `first`, `first + 1`, ... as [`Self::gather`]
    /// does: the codes read as one slice of the column (ids past it missing).
    pub fn gather_run(&self, first: u64, n: usize, vals: &mut Vec<i64>, present: &mut Vec<bool>) {
        let len = self.codes.len();
        let from = usize::try_from(first).unwrap_or(usize::MAX).min(len);
        let to = from.saturating_add(n).min(len);
        let min = self.min;
        match &self.codes {
            Packed::U8(c) => decode(move || c[from..to].iter().copied(), min, vals, present),
            Packed::U16(c) => decode(move || c[from..to].iter().copied(), min, vals, present),
            Packed::U32(c) => decode(move || c[from..to].iter().copied(), min, vals, present),
            Packed::U64(c) => decode(move || c[from..to].iter().copied(), min, vals, present),
            codes => decode(move || (from..to).map(move |i| codes.get(i)), min, vals, present),
        }
        // The nodes past the column (newer than the base) read as missing.
        let past = n - (to - from);
        vals.resize(vals.len() + past, 0);
        present.resize(present.len() + past, false);
    }
}

/// The first id of `ids` when they are one run of consecutive ids (`None` otherwise, or when
/// empty). One compare per id, with no branch the loop can leave early, so it vectorises.
fn run_start(ids: &[NodeId]) -> Option<u64> {
    let first = ids.first()?.0;
    let mut off = 0u64;
    for (i, id) in ids.iter().enumerate() {
        off |= id.0 ^ first.wrapping_add(i as u64);
    }
    (off == 0).then_some(first)
}

/// Appends each code's value (`min + code - 1`, or `0` for code 0) to `vals` and its presence
/// (code non-zero) to `present`: two branch-free passes over the codes `codes()` yields.
#[inline(always)]
fn decode<T: Into<u64>, I: Iterator<Item = T>>(
    codes: impl Fn() -> I,
    min: i64,
    vals: &mut Vec<i64>,
    present: &mut Vec<bool>,
) {
    vals.extend(codes().map(|c| {
        let c: u64 = c.into();
        let x = min.wrapping_add(c.wrapping_sub(1) as i64);
        if c != 0 {
            x
        } else {
            0
        }
    }));
    present.extend(codes().map(|c| Into::<u64>::into(c) != 0));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(vals: &[Option<i64>]) -> IntColumn {
        let min = vals.iter().flatten().copied().min().unwrap_or(0);
        let codes = vals
            .iter()
            .map(|v| v.map_or(0, |x| (i128::from(x) - i128::from(min) + 1) as u64))
            .collect();
        IntColumn { min, codes: Packed::from_u64(codes) }
    }

    /// The gather against `IntColumn::get` per id, for runs, scattered ids, ids past the
    /// column and every packing width.
    #[test]
    fn gather_equals_get_per_id() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for span in [3i64, 200, 60_000, 1 << 40] {
            let vals: Vec<Option<i64>> = (0..700)
                .map(|_| match next(5) {
                    0 => None,
                    _ => Some(next(span as u64) as i64 - span / 2),
                })
                .collect();
            let col = column(&vals);
            let mut id_sets: Vec<Vec<NodeId>> = vec![
                (0..700).map(NodeId).collect(),
                (650..760).map(NodeId).collect(),
                (800..900).map(NodeId).collect(),
                Vec::new(),
            ];
            for _ in 0..20 {
                let mut ids: Vec<NodeId> = (0..next(300)).map(|_| NodeId(next(750))).collect();
                ids.sort();
                id_sets.push(ids);
            }
            for ids in id_sets {
                let (mut v, mut p) = (vec![9], vec![true]);
                col.gather(&ids, &mut v, &mut p);
                assert_eq!((v.len(), p.len()), (ids.len() + 1, ids.len() + 1));
                for (i, id) in ids.iter().enumerate() {
                    let want = vals.get(id.0 as usize).copied().flatten();
                    assert_eq!(want, col.get(id.0), "get {id:?}");
                    assert_eq!(p[i + 1], want.is_some(), "presence {id:?}");
                    assert_eq!(v[i + 1], want.unwrap_or(0), "value {id:?}");
                }
            }
        }
    }

    #[test]
    fn runs_are_recognised() {
        let ids = |v: &[u64]| v.iter().map(|i| NodeId(*i)).collect::<Vec<_>>();
        assert_eq!(run_start(&ids(&[4, 5, 6])), Some(4));
        assert_eq!(run_start(&ids(&[4])), Some(4));
        assert_eq!(run_start(&ids(&[])), None);
        assert_eq!(run_start(&ids(&[4, 4, 6])), None);
        assert_eq!(run_start(&ids(&[4, 6, 5])), None);
    }
}
