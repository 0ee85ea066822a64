//! Round trip of the index file, and corruption detection: every damaged file is an error.

mod common;

use arbor_vector::{synthetic, Similarity, VectorError, VectorIndex};
use common::{at, build};

fn sample() -> (VectorIndex, Vec<f32>) {
    let dims = 12;
    let data = synthetic::clustered(1500, dims, 5, 1);
    let mut index = build(&data, dims, Similarity::Cosine, 1);
    index.delete(3, 5);
    index.insert(2000, &data[..dims], 6).unwrap();
    (index, data)
}

#[test]
fn round_trip_answers_identically() {
    let (index, data) = sample();
    let mut file = Vec::new();
    index.write_to(&mut file).unwrap();
    let back = VectorIndex::read_from(&mut file.as_slice()).unwrap();
    assert_eq!(back.len(), index.len());
    assert_eq!(back.live_len(), index.live_len());
    for q in data.chunks_exact(12).step_by(97) {
        for snapshot in [1, 5, 6] {
            let a = index.search(q, 10, &at(snapshot)).unwrap();
            let b = back.search(q, 10, &at(snapshot)).unwrap();
            assert_eq!(a, b);
        }
    }
    let mut again = Vec::new();
    back.write_to(&mut again).unwrap();
    assert_eq!(file, again, "writing is deterministic");
}

#[test]
fn every_flipped_byte_and_truncation_is_detected() {
    let (index, _) = sample();
    let mut file = Vec::new();
    index.write_to(&mut file).unwrap();
    let step = (file.len() / 400).max(1);
    for at in (0..file.len()).step_by(step) {
        let mut bad = file.clone();
        bad[at] ^= 0x41;
        let err = VectorIndex::read_from(&mut bad.as_slice());
        assert!(matches!(err, Err(VectorError::Corrupt { .. })), "flip at {at} not detected");
    }
    for len in [0, 10, 24, 30, file.len() / 2, file.len() - 1] {
        let err = VectorIndex::read_from(&mut &file[..len]);
        match err {
            Err(VectorError::Corrupt { what }) => assert!(!what.is_empty()),
            other => panic!("truncated to {len}: {:?}", other.map(|i| i.len())),
        }
    }
    let mut longer = file.clone();
    longer.push(0);
    assert!(VectorIndex::read_from(&mut longer.as_slice()).is_ok(), "trailing bytes are not read");
}

#[test]
fn a_consistent_but_wrong_body_is_rejected_by_validation() {
    let (index, _) = sample();
    let mut file = Vec::new();
    index.write_to(&mut file).unwrap();
    // Point a layer-0 link out of range and fix up the body checksum, as a buggy writer would.
    let n = index.len();
    let links_at = 24 + 25 + 16 + n * 18;
    file[links_at..links_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let body_end = file.len() - 4;
    let crc = crc32c(&file[24..body_end]);
    file[body_end..].copy_from_slice(&crc.to_le_bytes());
    match VectorIndex::read_from(&mut file.as_slice()) {
        Err(VectorError::Corrupt { what }) => assert!(what.contains("graph"), "{what}"),
        other => panic!("expected a graph error, got {:?}", other.map(|i| i.len())),
    }
}

/// CRC-32C (Castagnoli), bitwise, so the test does not lean on the crate under test's dependency.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x82f6_3b78 } else { crc >> 1 };
        }
    }
    !crc
}

/// An index without its f32 vectors (`keep_vectors` off, as the engine runs it) answers as
/// the full one when the caller fetches the exact vectors, holds less than half of the
/// memory of the full one at 128 dimensions (under 0.85x the raw vectors), and survives a round trip through its file.
#[test]
fn codes_only_index_answers_through_fetch_and_round_trips() {
    use arbor_vector::{IndexBuilder, IndexConfig, SearchParams};
    let dims = 128;
    let data = synthetic::uniform(3000, dims, 9);
    let build = |keep: bool| {
        let mut config = IndexConfig::new(dims, Similarity::Euclidean);
        config.keep_vectors = keep;
        // One thread: a parallel build's links depend on timing, and both graphs must match.
        config.threads = 1;
        let mut b = IndexBuilder::new(config).unwrap();
        for (i, v) in data.chunks_exact(dims).enumerate() {
            b.add(i as u64, v, 1).unwrap();
        }
        b.build().unwrap()
    };
    let (full, codes) = (build(true), build(false));
    assert!(codes.prepared_vector(5).is_none(), "no f32 copy kept");
    let raw = (data.len() * 4) as f64;
    assert!((codes.memory_bytes() as f64) < 0.85 * raw, "{} bytes", codes.memory_bytes());
    assert!(codes.memory_bytes() * 2 < full.memory_bytes());
    let fetch = |id: u64, out: &mut Vec<f32>| {
        let at = id as usize * dims;
        out.extend_from_slice(&data[at..at + dims]);
        true
    };
    let params = SearchParams { snapshot: 1, ef: 64, fetch: Some(&fetch), ..Default::default() };
    let mut file = Vec::new();
    codes.write_to(&mut file).unwrap();
    let back = VectorIndex::read_from(&mut file.as_slice()).unwrap();
    for q in data.chunks_exact(dims).step_by(301) {
        let want = full.search(q, 10, &params).unwrap();
        assert_eq!(codes.search(q, 10, &params).unwrap(), want, "exact scores through fetch");
        assert_eq!(back.search(q, 10, &params).unwrap(), want, "after the round trip");
    }
    assert!(back.same_vector(7, &data[7 * dims..8 * dims]));
    assert!(!back.same_vector(7, &data[8 * dims..9 * dims]));
}
