//! Property test: on small sets the graph walk (forced with `exact_below = 0`, with a beam as
//! wide as the index) answers exactly like exact search, bulk-built or inserted one by one.

use arbor_vector::{IndexBuilder, IndexConfig, SearchParams, Similarity, VectorIndex};
use proptest::prelude::*;

fn vectors(dims: usize) -> impl Strategy<Value = Vec<Vec<f32>>> {
    prop::collection::vec(prop::collection::vec(-4.0f32..4.0, dims), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn matches_exact_search(
        vs in vectors(5),
        q in prop::collection::vec(-4.0f32..4.0, 5),
        k in 1usize..12,
        cosine in any::<bool>(),
        deletes in prop::collection::vec(any::<bool>(), 60),
    ) {
        let sim = if cosine { Similarity::Cosine } else { Similarity::Euclidean };
        let mut config = IndexConfig::new(5, sim);
        config.exact_below = 0;
        let mut b = IndexBuilder::new(config.clone()).unwrap();
        let mut incremental = VectorIndex::new(config).unwrap();
        for (i, v) in vs.iter().enumerate() {
            let (a, c) = (b.add(i as u64, v, 1), incremental.insert(i as u64, v, 1));
            prop_assert_eq!(a.is_ok(), c.is_ok());
        }
        let mut bulk = b.build().unwrap();
        for (i, &d) in deletes.iter().enumerate().take(vs.len()) {
            if d {
                prop_assert_eq!(bulk.delete(i as u64, 2), incremental.delete(i as u64, 2));
            }
        }
        if sim.prepare(&q).is_err() {
            return Ok(());
        }
        for snapshot in [1, 2] {
            let wide = SearchParams { snapshot, ef: 64, ..SearchParams::default() };
            let want = bulk.exact_search(&q, k, &wide).unwrap();
            let got = bulk.search(&q, k, &wide).unwrap();
            let inc = incremental.search(&q, k, &wide).unwrap();
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(&inc, &want);
        }
    }
}
