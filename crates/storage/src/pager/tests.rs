//! Tests of the buffer pool and the segment format: round trips of every column
//! representation through a pool far smaller than the data, pins, concurrent readers, and
//! corrupt, truncated and future-version files.

use std::path::Path;
use std::sync::Arc;

use arbor_model::Status;

use super::pool::{BufferPool, MemFile, PageFile, PagedFile, MIN_FRAMES, PAGE_SIZE};
use super::segment::{write_segment, write_segment_rewinding, write_segment_streaming};
use super::segment::{ColumnData, Segment, Sink, Values};

const TINY: u64 = (MIN_FRAMES * PAGE_SIZE) as u64;

struct Cols {
    u8s: Vec<u8>,
    u16s: Vec<u16>,
    u32s: Vec<u32>,
    u64s: Vec<u64>,
}

fn cols(n: usize) -> Cols {
    let x = |i: usize| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7;
    Cols {
        u8s: (0..n).map(|i| x(i) as u8).collect(),
        u16s: (0..n).map(|i| x(i) as u16).collect(),
        u32s: (0..n).map(|i| x(i) as u32).collect(),
        u64s: (0..n).map(x).collect(),
    }
}

fn encode(c: &Cols) -> Vec<u8> {
    let n = c.u8s.len();
    let columns = [
        (1, ColumnData::Const(7, n)),
        (2, ColumnData::Seq(100, n)),
        (3, ColumnData::U8(&c.u8s)),
        (4, ColumnData::U16(&c.u16s)),
        (5, ColumnData::U32(&c.u32s)),
        (6, ColumnData::U64(&c.u64s)),
    ];
    let mut out = Vec::new();
    write_segment(&mut out, 42, &columns).unwrap();
    out
}

#[test]
fn the_one_pass_writer_writes_the_bytes_of_the_two_pass_one() {
    // Enough pages for a header of several pages (one checksum per data page).
    for n in [0, 1, 5_000, 300_000] {
        let c = cols(n);
        let columns = [
            (1, ColumnData::Const(7, n)),
            (3, ColumnData::U8(&c.u8s)),
            (4, ColumnData::U16(&c.u16s)),
            (6, ColumnData::U64(&c.u64s)),
        ];
        let mut two = Vec::new();
        write_segment(&mut two, 9, &columns).unwrap();
        let mut one = std::io::Cursor::new(Vec::new());
        let rewind = |o: &mut std::io::Cursor<Vec<u8>>| {
            o.set_position(0);
            Ok(())
        };
        write_segment_rewinding(&mut one, 9, &columns, rewind).unwrap();
        assert!(one.get_ref() == &two, "n = {n}");
        let seg = open(one.into_inner()).unwrap();
        seg.verify_pages().unwrap();
    }
}

/// Columns given to the writer as streams, in slices of uneven lengths, give the bytes of the
/// same columns in memory; a stream of the wrong length is refused.
#[test]
fn streamed_columns_write_the_bytes_of_columns_in_memory() {
    for n in [1, 2_047, 2_048, 5_000, 300_000] {
        let c = cols(n);
        let in_memory = [
            (1, ColumnData::Const(7, n)),
            (3, ColumnData::U8(&c.u8s)),
            (4, ColumnData::U16(&c.u16s)),
            (5, ColumnData::U32(&c.u32s)),
            (6, ColumnData::U64(&c.u64s)),
        ];
        let mut two = Vec::new();
        write_segment(&mut two, 9, &in_memory).unwrap();
        let streamed = [
            (1, ColumnData::Const(7, n)),
            (3, ColumnData::Stream { width: 1, len: n }),
            (4, ColumnData::U16(&c.u16s)),
            (5, ColumnData::Stream { width: 4, len: n }),
            (6, ColumnData::Stream { width: 8, len: n }),
        ];
        let values = |id: u8| -> Vec<u64> {
            match id {
                3 => c.u8s.iter().map(|v| u64::from(*v)).collect(),
                5 => c.u32s.iter().map(|v| u64::from(*v)).collect(),
                _ => c.u64s.clone(),
            }
        };
        let mut calls = Vec::new();
        let mut produce = |id: u8, emit: &mut Sink<'_>| {
            calls.push(id);
            let v = values(id);
            let mut at = 0;
            let mut step = 1;
            while at < v.len() {
                let to = (at + step).min(v.len());
                // The one-byte column comes as bytes and as integers, by turns.
                if id == 3 && step % 2 == 0 {
                    emit(Values::Bytes(&c.u8s[at..to]))?;
                } else {
                    emit(Values::U64(&v[at..to]))?;
                }
                at = to;
                step = step * 3 % 1_999 + 1;
            }
            Ok(())
        };
        let mut one = std::io::Cursor::new(Vec::new());
        let rewind = |o: &mut std::io::Cursor<Vec<u8>>| {
            o.set_position(0);
            Ok(())
        };
        write_segment_streaming(&mut one, 9, &streamed, rewind, &mut produce).unwrap();
        assert_eq!(calls, [3, 5, 6]);
        assert!(one.get_ref() == &two, "n = {n}");
        open(one.into_inner()).unwrap().verify_pages().unwrap();
    }
    let short = [(3, ColumnData::Stream { width: 2, len: 10 })];
    let mut produce = |_: u8, emit: &mut Sink<'_>| emit(Values::U64(&[1; 9]));
    let mut out = std::io::Cursor::new(Vec::new());
    let e = write_segment_streaming(&mut out, 9, &short, |_| Ok(()), &mut produce).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
}

fn open(bytes: Vec<u8>) -> arbor_model::Result<Segment> {
    Segment::open(Arc::new(MemFile(bytes)), Path::new("/db/segment-test.arbor"))
}

fn expected(c: &Cols, id: u8, i: usize) -> u64 {
    match id {
        1 => 7,
        2 => 100 + i as u64,
        3 => u64::from(c.u8s[i]),
        4 => u64::from(c.u16s[i]),
        5 => u64::from(c.u32s[i]),
        _ => c.u64s[i],
    }
}

#[test]
fn a_budget_below_the_minimum_is_refused_naming_it() {
    let e = BufferPool::new(TINY - 1).err().unwrap();
    assert_eq!(e.status, Status::MemoryExhausted);
    assert!(e.message.contains(&TINY.to_string()), "{}", e.message);
    assert!(BufferPool::new(TINY).is_ok());
}

#[test]
fn every_representation_reads_back_through_a_pool_much_smaller_than_the_data() {
    let n = 60_000;
    let c = cols(n);
    let seg = open(encode(&c)).unwrap();
    assert!(seg.pages() > 10 * MIN_FRAMES as u64, "{} pages", seg.pages());
    assert_eq!(seg.ts, 42);
    let pool = BufferPool::new(TINY).unwrap();
    for id in 1..=6u8 {
        let col = seg.column(id).unwrap();
        assert_eq!(col.len(), n as u64);
        // Single values, in a stride that jumps pages.
        for i in (0..n).step_by(97) {
            assert_eq!(
                seg.get(&pool, col, i as u64).unwrap(),
                expected(&c, id, i),
                "col {id} at {i}"
            );
        }
        // Runs that cross page boundaries and the end of the column (zeros past it).
        let mut buf = vec![0u64; 3000];
        for from in [0usize, 511, 1023, 4095, n - 100] {
            seg.fill(&pool, col, from as u64, &mut buf).unwrap();
            for (k, v) in buf.iter().enumerate() {
                let want = if from + k < n { expected(&c, id, from + k) } else { 0 };
                assert_eq!(*v, want, "col {id} at {}", from + k);
            }
        }
    }
    assert!(seg.column(9).is_none());
    let st = pool.stats();
    assert_eq!(st.frames, MIN_FRAMES as u64);
    assert!(st.resident <= st.frames);
    assert!(st.evictions > 0 && st.hits > 0, "{st:?}");
    seg.verify_pages().unwrap();
}

#[test]
fn pinned_pages_are_never_evicted_and_a_fully_pinned_pool_is_an_error() {
    let c = cols(40_000);
    let seg = open(encode(&c)).unwrap();
    let pool = BufferPool::new(TINY).unwrap();
    let file = PagedFile::new(Arc::new(MemFile(encode(&c))), Path::new("/x"), 4096, Box::new([]));
    assert!(pool.fix(&file, 0).is_err(), "a page past the end");
    let col = seg.column(6).unwrap();
    // Values of distinct pages of the first segment, read before the pool fills with pins.
    let values: Vec<u64> = (0..MIN_FRAMES as u64)
        .map(|p| {
            let mut v = [0u64; 1];
            seg.fill(&pool, col, p * 512, &mut v).unwrap();
            v[0]
        })
        .collect();
    assert_eq!(values.len(), MIN_FRAMES);
    // Hold pins directly via the pool API through a second segment reading its pages.
    let bytes = encode(&c);
    let data_offset = bytes.len() as u64 - seg.pages() * PAGE_SIZE as u64;
    let crcs: Vec<u32> =
        bytes[data_offset as usize..].chunks(PAGE_SIZE).map(crc32c::crc32c).collect();
    let f =
        PagedFile::new(Arc::new(MemFile(bytes.clone())), Path::new("/y"), data_offset, crcs.into());
    let pinned: Vec<_> = (0..MIN_FRAMES as u64).map(|p| pool.fix(&f, p).unwrap()).collect();
    let copies: Vec<Vec<u8>> = pinned.iter().map(|g| g.bytes().to_vec()).collect();
    let e = pool.fix(&f, MIN_FRAMES as u64).err().unwrap();
    assert_eq!(e.status, Status::MemoryExhausted);
    assert!(seg.get(&pool, col, 0).is_err(), "no frame is free");
    for (g, want) in pinned.iter().zip(&copies) {
        assert_eq!(g.bytes(), &want[..]);
    }
    drop(pinned);
    assert_eq!(seg.get(&pool, col, 512).unwrap(), values[1]);
    assert!(pool.fix(&f, MIN_FRAMES as u64).is_ok());
}

#[test]
fn concurrent_readers_over_a_tiny_pool_see_the_right_values() {
    let n = 50_000;
    let c = Arc::new(cols(n));
    let seg = Arc::new(open(encode(&c)).unwrap());
    let pool = Arc::new(BufferPool::new(TINY).unwrap());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (c, seg, pool) = (c.clone(), seg.clone(), pool.clone());
            std::thread::spawn(move || {
                let mut x = t + 1;
                let mut buf = [0u64; 40];
                for _ in 0..3000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let id = 3 + (x >> 60) as u8 % 4;
                    let from = (x >> 20) as usize % n;
                    // Retry while every frame is pinned by the other readers.
                    while seg.fill(&pool, seg.column(id).unwrap(), from as u64, &mut buf).is_err() {
                        std::thread::yield_now();
                    }
                    for (k, v) in buf.iter().enumerate() {
                        let want = if from + k < n { expected(&c, id, from + k) } else { 0 };
                        assert_eq!(*v, want);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_flipped_byte_in_a_data_page_is_corruption_naming_file_and_page() {
    let c = cols(20_000);
    let clean = encode(&c);
    let header = clean.len() - open(clean.clone()).unwrap().pages() as usize * PAGE_SIZE;
    let mut bytes = clean.clone();
    let page = 5;
    bytes[header + page * PAGE_SIZE + 17] ^= 0x40;
    let seg = open(bytes).unwrap();
    let pool = BufferPool::new(TINY).unwrap();
    // Find the column holding data page 5 by reading everything; the error names the page.
    let mut err = None;
    for id in 3..=6u8 {
        let col = seg.column(id).unwrap();
        let mut buf = vec![0u64; 20_000];
        if let Err(e) = seg.fill(&pool, col, 0, &mut buf) {
            err = Some(e);
        }
    }
    let e = err.expect("the bad page was read");
    assert_eq!(e.status, Status::Corruption);
    assert!(
        e.message.contains("segment-test.arbor") && e.message.contains("page 5"),
        "{}",
        e.message
    );
    let e = seg.verify_pages().err().unwrap();
    assert!(e.message.contains("page 5"), "{}", e.message);
    // The pool is still usable and has not kept the bad page.
    let seg = open(clean).unwrap();
    let col = seg.column(6).unwrap();
    assert_eq!(seg.get(&pool, col, 3).unwrap(), c.u64s[3]);
}

#[test]
fn truncated_and_damaged_headers_and_future_versions_are_errors() {
    let c = cols(5_000);
    let clean = encode(&c);
    // Truncated in the data: opens (the header is intact), the missing page is named.
    let seg = open(clean[..clean.len() - 100].to_vec()).unwrap();
    let last = seg.pages() - 1;
    let e = seg.verify_pages().err().unwrap();
    assert!(
        e.message.contains(&format!("page {last}")) && e.message.contains("truncated"),
        "{}",
        e.message
    );
    // Damage anywhere in the header.
    for at in [0usize, 9, 20, 40, 100, 200] {
        let mut b = clean.clone();
        b[at] ^= 1;
        let e = open(b).err().unwrap_or_else(|| panic!("byte {at} flipped and still opened"));
        assert!(matches!(e.status, Status::Corruption), "{e}");
        assert!(e.message.contains("segment-test.arbor"), "{}", e.message);
    }
    let mut b = clean.clone();
    b[8] = 9;
    let e = open(b).err().unwrap();
    assert!(e.message.contains("format version 9"), "{}", e.message);
    assert!(open(clean[..3000].to_vec()).is_err());
    assert!(open(Vec::new()).is_err());
}

/// A file whose reads wait (up to a few seconds, so a broken pool fails instead of hanging)
/// until `want` reads are in progress at once, and records the most seen.
struct Rendezvous {
    bytes: Vec<u8>,
    want: u32,
    inside: parking_lot::Mutex<(u32, u32)>,
    cv: parking_lot::Condvar,
}

impl PageFile for Rendezvous {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let mut g = self.inside.lock();
        g.0 += 1;
        g.1 = g.1.max(g.0);
        self.cv.notify_all();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while g.1 < self.want && !self.cv.wait_until(&mut g, deadline).timed_out() {}
        g.0 -= 1;
        drop(g);
        MemFile(self.bytes.clone()).read_at(buf, offset)
    }
}

#[test]
fn misses_on_different_pages_are_read_concurrently() {
    let pages: Vec<u8> = (0..4 * PAGE_SIZE).map(|i| (i / PAGE_SIZE) as u8 + 1).collect();
    let crcs: Box<[u32]> = pages.chunks(PAGE_SIZE).map(crc32c::crc32c).collect();
    let file = Arc::new(Rendezvous {
        bytes: pages,
        want: 2,
        inside: parking_lot::Mutex::new((0, 0)),
        cv: parking_lot::Condvar::new(),
    });
    let f = Arc::new(PagedFile::new(file.clone(), Path::new("/db/rv.arbor"), 0, crcs));
    let pool = Arc::new(BufferPool::new(TINY).unwrap());
    let threads: Vec<_> = (0..2u64)
        .map(|p| {
            let (f, pool) = (f.clone(), pool.clone());
            std::thread::spawn(move || {
                let g = pool.fix(&f, p).unwrap();
                assert!(g.bytes().iter().all(|b| u64::from(*b) == p + 1));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(file.inside.lock().1, 2, "the two misses were serialised");
    assert_eq!(pool.stats().misses, 2);
}

#[test]
fn concurrent_readers_of_a_corrupt_page_all_get_the_error_and_good_pages_stay_readable() {
    let mut pages: Vec<u8> = (0..64 * PAGE_SIZE).map(|i| (i / PAGE_SIZE) as u8).collect();
    let crcs: Box<[u32]> = pages.chunks(PAGE_SIZE).map(crc32c::crc32c).collect();
    pages[5 * PAGE_SIZE + 9] ^= 0x40;
    let f = Arc::new(PagedFile::new(Arc::new(MemFile(pages)), Path::new("/db/bad.arbor"), 0, crcs));
    let pool = Arc::new(BufferPool::new(TINY).unwrap());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (f, pool) = (f.clone(), pool.clone());
            std::thread::spawn(move || {
                let mut x = t + 7;
                for _ in 0..2000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let p = (x >> 40) % 64;
                    match pool.fix(&f, p) {
                        Ok(g) => {
                            assert_ne!(p, 5, "the corrupt page was served");
                            assert!(g.bytes().iter().all(|b| u64::from(*b) == p));
                        }
                        Err(e) if e.status == Status::MemoryExhausted => {}
                        Err(e) => {
                            assert_eq!(p, 5, "{}", e.message);
                            assert_eq!(e.status, Status::Corruption);
                            assert!(e.message.contains("/db/bad.arbor page 5"), "{}", e.message);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(pool.stats().evictions > 0);
}

/// A file of `n` pages whose page `p` holds the byte `p as u8` everywhere.
fn numbered_pages(n: u64) -> Arc<PagedFile> {
    let pages: Vec<u8> = (0..n).flat_map(|p| [p as u8; PAGE_SIZE]).collect();
    let crcs: Box<[u32]> = pages.chunks(PAGE_SIZE).map(crc32c::crc32c).collect();
    Arc::new(PagedFile::new(Arc::new(MemFile(pages)), Path::new("/db/n.arbor"), 0, crcs))
}

#[test]
fn reserved_bytes_shrink_the_frames_the_pool_fills_and_reads_stay_exact() {
    let f = numbered_pages(200);
    let pool = BufferPool::new(64 * PAGE_SIZE as u64).unwrap();
    let read_all = |pool: &BufferPool| {
        for round in 0..3 {
            for p in (0..200).map(|i| (i * 37 + round) % 200) {
                let first = pool.read(&f, p, |w| w[0].load(std::sync::atomic::Ordering::Relaxed));
                assert_eq!(first.unwrap(), u64::from_ne_bytes([p as u8; 8]));
            }
        }
    };
    read_all(&pool);
    assert_eq!(pool.stats().resident, 64);
    // Promoted parts take 40 pages: the 24 left are all the pool holds, at once and after.
    pool.set_reserved(40 * PAGE_SIZE as u64);
    assert_eq!((pool.stats().limit, pool.reserved()), (24, 40 * PAGE_SIZE as u64));
    assert!(pool.stats().resident <= 24, "{:?}", pool.stats());
    read_all(&pool);
    assert!(pool.stats().resident <= 24, "{:?}", pool.stats());
    // Never below the minimum; and giving the bytes back lets the pool fill again.
    pool.set_reserved(u64::MAX);
    assert_eq!(pool.stats().limit, MIN_FRAMES as u64);
    read_all(&pool);
    assert!(pool.stats().resident <= MIN_FRAMES as u64, "{:?}", pool.stats());
    pool.set_reserved(0);
    read_all(&pool);
    assert_eq!(pool.stats().resident, 64);
}
