//! Snapshot visibility, the transaction filter, updates, GC and compaction.

mod common;

use arbor_vector::{merge_top_k, synthetic, IndexConfig, SearchParams, Similarity, VectorIndex};
use common::{at, build, recall};

fn ids(hits: &[arbor_vector::Hit]) -> Vec<u64> {
    hits.iter().map(|h| h.id).collect()
}

#[test]
fn entries_are_visible_from_created_until_deleted() {
    let mut index = VectorIndex::new(IndexConfig::new(2, Similarity::Euclidean)).unwrap();
    index.insert(1, &[0.0, 0.0], 10).unwrap();
    index.insert(2, &[1.0, 0.0], 20).unwrap();
    assert!(index.delete(1, 30));
    assert!(!index.delete(1, 31), "already deleted");
    let q = [0.0, 0.0];
    assert_eq!(ids(&index.search(&q, 5, &at(9)).unwrap()), Vec::<u64>::new());
    assert_eq!(ids(&index.search(&q, 5, &at(10)).unwrap()), vec![1]);
    assert_eq!(ids(&index.search(&q, 5, &at(25)).unwrap()), vec![1, 2]);
    assert_eq!(ids(&index.search(&q, 5, &at(30)).unwrap()), vec![2]);
    assert_eq!(index.live_len(), 1);
}

#[test]
fn update_replaces_the_vector_for_new_snapshots_only() {
    let mut index = VectorIndex::new(IndexConfig::new(2, Similarity::Euclidean)).unwrap();
    index.insert(7, &[5.0, 5.0], 1).unwrap();
    index.insert(8, &[1.0, 1.0], 1).unwrap();
    index.insert(7, &[0.0, 0.0], 5).unwrap();
    let old = index.search(&[0.0, 0.0], 1, &at(4)).unwrap();
    let new = index.search(&[0.0, 0.0], 2, &at(5)).unwrap();
    assert_eq!(ids(&old), vec![8]);
    assert_eq!(ids(&new), vec![7, 8]);
    assert_eq!(new[0].score, 1.0);
    assert_eq!(index.len(), 3);
    assert_eq!(index.live_len(), 2);
}

#[test]
fn filter_hides_a_transactions_own_deletes_and_merge_adds_its_writes() {
    let index = build(&synthetic::uniform(3000, 8, 5), 8, Similarity::Euclidean, 1);
    let q = synthetic::uniform(1, 8, 6);
    let all = index.search(&q, 5, &at(1)).unwrap();
    let hidden = all[0].id;
    let filter = move |id: u64| id != hidden;
    let params =
        SearchParams { snapshot: 1, ef: 0, filter: Some(&filter), ..SearchParams::default() };
    let filtered = index.search(&q, 5, &params).unwrap();
    assert!(!ids(&filtered).contains(&hidden));
    assert_eq!(ids(&filtered)[..4], ids(&all)[1..]);
    let own =
        arbor_vector::exact_top_k(Similarity::Euclidean, &q, [(99_999, q.as_slice())], 5).unwrap();
    let merged = merge_top_k(&filtered, &own, 5);
    assert_eq!(merged[0].id, 99_999);
    assert_eq!(merged[0].score, 1.0);
    assert_eq!(ids(&merged[1..]), ids(&filtered)[..4]);
}

/// When most entries are invisible, the search must still find the visible nearest ones.
#[test]
fn selective_visibility_keeps_recall() {
    let dims = 16;
    let data = synthetic::clustered(6000, dims, 10, 7);
    let mut index = build(&data, dims, Similarity::Cosine, 1);
    for id in 0..6000u64 {
        if !id.is_multiple_of(10) {
            index.delete(id, 2);
        }
    }
    let queries = synthetic::clustered(50, dims, 10, 8);
    let filter = |id: u64| id.is_multiple_of(20);
    for (snapshot, filter) in [(2, None), (1, Some(&filter as &(dyn Fn(u64) -> bool + Sync)))] {
        let params = SearchParams { snapshot, ef: 0, filter, ..SearchParams::default() };
        let mut total = 0.0;
        for q in queries.chunks_exact(dims) {
            let got = index.search(q, 10, &params).unwrap();
            let want = index.exact_search(q, 10, &params).unwrap();
            assert_eq!(got.len(), 10);
            assert!(got.iter().all(|h| snapshot == 1 || h.id.is_multiple_of(10)));
            total += recall(&got, &want);
        }
        let r = total / 50.0;
        assert!(r >= 0.95, "recall {r:.3} at snapshot {snapshot}");
    }
}

#[test]
fn gc_compacts_dead_versions_and_keeps_visible_ones() {
    let dims = 8;
    let data = synthetic::uniform(2000, dims, 9);
    let mut index = build(&data, dims, Similarity::Euclidean, 1);
    for id in 0..1000u64 {
        index.delete(id, 10);
    }
    index.insert(5, &data[..dims], 12).unwrap();
    let report = index.gc(5);
    assert_eq!((report.dead, report.compacted), (0, false), "snapshot 5 still sees them");
    let before = index.search(&data[..dims], 3, &at(11)).unwrap();
    let report = index.gc(11);
    assert_eq!((report.dead, report.compacted), (1000, true));
    assert_eq!(index.len(), 1001);
    assert_eq!(index.search(&data[..dims], 3, &at(11)).unwrap(), before);
    let now = index.search(&data[..dims], 1, &at(12)).unwrap();
    assert_eq!((now[0].id, now[0].score), (5, 1.0));
    assert!(index.delete(5, 13), "the recent entry is still found by id after compaction");
    assert!(index.delete(1500, 13));
}

#[test]
fn invalid_vectors_and_queries_are_errors() {
    let mut index = VectorIndex::new(IndexConfig::new(3, Similarity::Cosine)).unwrap();
    assert!(index.insert(1, &[0.0, 0.0, 0.0], 1).is_err());
    assert!(index.insert(1, &[1.0, 0.0], 1).is_err());
    assert!(index.insert(1, &[1.0, f32::NAN, 0.0], 1).is_err());
    assert!(index.is_empty());
    assert!(index.search(&[1.0], 1, &at(1)).is_err());
    assert!(IndexConfig::new(0, Similarity::Cosine).dims == 0);
    assert!(VectorIndex::new(IndexConfig::new(0, Similarity::Cosine)).is_err());
    assert!(VectorIndex::new(IndexConfig::new(4097, Similarity::Cosine)).is_err());
    assert!(VectorIndex::new(IndexConfig::new(4096, Similarity::Cosine)).is_ok());
}

#[test]
fn huge_k_and_concurrent_searches() {
    fn shared<T: Send + Sync>(_: &T) {}
    let dims = 8;
    let data = synthetic::uniform(3000, dims, 11);
    let index = build(&data, dims, Similarity::Euclidean, 1);
    shared(&index);
    assert_eq!(index.search(&data[..dims], usize::MAX, &at(1)).unwrap().len(), 3000);
    let expected = index.search(&data[..dims], 10, &at(1)).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(index.search(&data[..dims], 10, &at(1)).unwrap(), expected);
                }
            });
        }
    });
}

#[test]
fn compaction_keeps_old_versions_some_snapshot_still_sees() {
    let dims = 2;
    let mut index = VectorIndex::new(IndexConfig::new(dims, Similarity::Euclidean)).unwrap();
    index.insert(1, &[0.0, 0.0], 1).unwrap();
    index.insert(2, &[3.0, 0.0], 1).unwrap();
    index.insert(1, &[2.0, 0.0], 20).unwrap();
    index.compact(15);
    assert_eq!(index.len(), 3, "the old version of 1 is visible to snapshot 15");
    let q = [0.0, 0.0];
    let old = index.search(&q, 1, &at(15)).unwrap();
    assert_eq!((old[0].id, old[0].score), (1, 1.0));
    let new = index.search(&q, 2, &at(20)).unwrap();
    assert_eq!((new[0].id, new[0].score), (1, 0.2));
    assert!(index.delete(1, 30), "finds the live version among two of the same id");
    assert_eq!(ids(&index.search(&q, 5, &at(30)).unwrap()), vec![2]);
    assert_eq!(ids(&index.search(&q, 5, &at(25)).unwrap()), vec![1, 2]);
    assert_eq!(index.gc(30).dead, 2);
}

/// Entries inserted one by one after a bulk build are found as well as bulk-built ones.
#[test]
fn incremental_inserts_keep_recall() {
    let dims = 16;
    let data = synthetic::clustered(4000, dims, 8, 12);
    let mut index = build(&data[..2000 * dims], dims, Similarity::Cosine, 1);
    for (i, v) in data.chunks_exact(dims).enumerate().skip(2000) {
        index.insert(i as u64, v, 2).unwrap();
    }
    let queries = synthetic::clustered(50, dims, 8, 13);
    let mut total = 0.0;
    for q in queries.chunks_exact(dims) {
        let got = index.search(q, 10, &at(2)).unwrap();
        total += recall(&got, &index.exact_search(q, 10, &at(2)).unwrap());
    }
    assert!(total / 50.0 >= 0.95, "recall {:.3}", total / 50.0);
}

#[test]
fn batch_inserts_link_in_parallel_and_replace_old_versions() {
    let dims = 16;
    let data = synthetic::clustered(4000, dims, 8, 14);
    let mut index = build(&data[..1000 * dims], dims, Similarity::Cosine, 1);
    let batch: Vec<(u64, &[f32])> =
        data.chunks_exact(dims).enumerate().skip(500).map(|(i, v)| (i as u64, v)).collect();
    let bad = [(9_999, &[0.0f32; 16][..]), (1, &data[..dims])];
    assert!(index.insert_batch(&bad, 2).is_err());
    assert_eq!(index.len(), 1000, "a failed batch changes nothing");
    index.insert_batch(&batch, 2).unwrap();
    assert_eq!(index.len(), 4500);
    assert_eq!(index.live_len(), 4000, "ids 500..1000 were replaced");
    let queries = synthetic::clustered(50, dims, 8, 15);
    let mut total = 0.0;
    for q in queries.chunks_exact(dims) {
        let got = index.search(q, 10, &at(2)).unwrap();
        total += recall(&got, &index.exact_search(q, 10, &at(2)).unwrap());
    }
    assert!(total / 50.0 >= 0.95, "recall {:.3}", total / 50.0);
    let before = index.search(&data[600 * dims..601 * dims], 1, &at(1)).unwrap();
    assert_eq!(before[0].id, 600, "snapshot 1 still sees the old version");
}
