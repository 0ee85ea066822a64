//! A store opens lazily (issue 19): the open reads the segment's header, meta, label-set
//! dictionary and counts, never its columns of O(nodes or relationships), at any memory
//! budget (bytes counted through the file-system seam); answers are the same read through a
//! tiny page cache, through the default one, and after the promotion reads what fits into
//! memory (also for entities written between the open and the promotion); damage to a page
//! the open left in the segment fails the read (and the promotion) naming file and page.
//!
//! An integration test: the crate's own tests build with `cfg(test)`, under which every base
//! is paged anyway; here the store behaves as in production.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arbor_storage::{
    Direction, NodeId, PageFile, RealFs, RelId, Status, Store, StoreConfig, TokenKind, Value, Vfs,
    VfsFile, VfsRead,
};

const NODES: u64 = 20_000;
const RELS_PER_NODE: u64 = 3;
/// The fewest frames the pool accepts (16 pages of 4 KiB).
const TINY: u64 = 16 * 4096;

/// Bytes read through the seam: from segment files, and from every other file.
#[derive(Default)]
struct Counts {
    segment: AtomicU64,
    other: AtomicU64,
}

impl Counts {
    fn add(&self, path: &Path, n: usize) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let c = if name.starts_with("segment-") { &self.segment } else { &self.other };
        c.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn segment(&self) -> u64 {
        self.segment.load(Ordering::Relaxed)
    }
}

/// [`RealFs`], counting the bytes read.
struct CountingFs(Arc<Counts>);

struct CountingPages(Arc<dyn PageFile>, PathBuf, Arc<Counts>);

impl PageFile for CountingPages {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = self.0.read_at(buf, offset)?;
        self.2.add(&self.1, n);
        Ok(n)
    }
}

struct CountingRead(Box<dyn VfsRead>, PathBuf, Arc<Counts>);

impl Read for CountingRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        self.2.add(&self.1, n);
        Ok(n)
    }
}

impl VfsRead for CountingRead {
    fn size(&self) -> io::Result<u64> {
        self.0.size()
    }
}

impl Vfs for CountingFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        RealFs.create_dir_all(dir)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        RealFs.open_append(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        RealFs.create(path)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn VfsRead>> {
        Ok(Box::new(CountingRead(RealFs.open_read(path)?, path.into(), self.0.clone())))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let b = RealFs.read(path)?;
        self.0.add(path, b.len());
        Ok(b)
    }
    fn open_pages(&self, path: &Path) -> io::Result<Arc<dyn PageFile>> {
        Ok(Arc::new(CountingPages(RealFs.open_pages(path)?, path.into(), self.0.clone())))
    }
    fn exists(&self, path: &Path) -> bool {
        RealFs.exists(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        RealFs.list_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.sync_dir(dir)
    }
    fn lock_dir(
        &self,
        dir: &Path,
        exclusive: bool,
    ) -> io::Result<Option<Box<dyn std::any::Any + Send>>> {
        RealFs.lock_dir(dir, exclusive)
    }
}

/// A store that neither checkpoints nor promotes on its own, with page cache `budget`
/// (`None`: the default, half of the machine's memory).
fn cfg(budget: Option<u64>) -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        memory_limit: budget,
        promote_at_open: false,
        ..StoreConfig::default()
    }
}

/// A closed store of `NODES` nodes (two labels, an index), `RELS_PER_NODE` relationships
/// each (two types), with properties: its checkpoint wrote a complete segment.
fn filled(dir: &Path) {
    let s = Store::open(dir, cfg(None)).unwrap();
    let tok = |k, n: &str| s.get_or_create_token(k, n).unwrap();
    let (a, b) = (tok(TokenKind::Label, "LzA"), tok(TokenKind::Label, "LzB"));
    let (id, name, w) = (
        tok(TokenKind::PropertyKey, "id"),
        tok(TokenKind::PropertyKey, "name"),
        tok(TokenKind::PropertyKey, "w"),
    );
    let types = [tok(TokenKind::RelType, "LZ_X"), tok(TokenKind::RelType, "LZ_Y")];
    s.create_index(a, id, Some("lz_id")).unwrap();
    let mut tx = s.begin(false);
    for i in 0..NODES {
        let labels = if i % 3 == 0 { vec![a, b] } else { vec![a] };
        let props = vec![
            (id, Value::Int(i as i64)),
            (name, Value::String(Arc::from(format!("node number {i}")))),
        ];
        tx.create_node(&labels, props).unwrap();
    }
    let mut x = 7u64;
    for i in 0..NODES * RELS_PER_NODE {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (from, to) = (i / RELS_PER_NODE, (x >> 11) % NODES);
        let ty = types[(x >> 40) as usize % 2];
        tx.create_rel(NodeId(from), NodeId(to), ty, vec![(w, Value::Int(i as i64))]).unwrap();
    }
    tx.commit().unwrap();
    s.close().unwrap();
}

/// Labels, properties and relationships of every node, every relationship's ends, index
/// seeks, a label scan and counts, one line each.
fn answers(s: &Store) -> Vec<String> {
    let tx = s.begin(true);
    let mut out = Vec::new();
    for n in 0..NODES + 2 {
        let mut es = Vec::new();
        tx.node_edges(NodeId(n), Direction::Both, &[], &mut es);
        let es: Vec<_> = es.iter().map(|e| (e.rel.0, e.other.0)).collect();
        let (l, p) = (tx.node_labels(NodeId(n)), tx.node_properties(NodeId(n)));
        out.push(format!("{n}: {l:?} {p:?} {es:?}"));
    }
    for r in (0..NODES * RELS_PER_NODE + 2).step_by(7) {
        out.push(format!("r{r}: {:?}", tx.rel_info(RelId(r))));
    }
    let (a, id) = (
        s.token_id(TokenKind::Label, "LzA").unwrap(),
        s.token_id(TokenKind::PropertyKey, "id").unwrap(),
    );
    for i in [0, 1, 777, NODES as i64 - 1, NODES as i64] {
        out.push(format!("seek {i}: {:?}", tx.index_seek(a, id, &Value::Int(i))));
    }
    let b = s.token_id(TokenKind::Label, "LzB").unwrap();
    let (mut cur, mut seen) = (NodeId(0), 0);
    while let Some(n) = tx.next_node(Some(b), cur) {
        seen += 1;
        cur = NodeId(n.0 + 1);
    }
    out.push(format!(
        "scan LzB: {seen}, count {} {}",
        tx.count_nodes(Some(b)),
        tx.count_nodes(None)
    ));
    assert!(tx.read_error().is_none(), "{:?}", tx.read_error());
    out
}

fn segment_size(dir: &Path) -> u64 {
    let seg = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("segment-"))
        .expect("a segment file");
    seg.metadata().unwrap().len()
}

#[test]
fn the_open_reads_a_sliver_of_the_segment_at_any_budget_and_the_promotion_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path());
    let size = segment_size(dir.path());
    for budget in [Some(TINY), None] {
        let counts = Arc::new(Counts::default());
        let fs = Arc::new(CountingFs(counts.clone()));
        let s = Store::open_with_vfs(dir.path(), cfg(budget), fs).unwrap();
        let at_open = counts.segment();
        // Header (a checksum per page), meta, label-set dictionary, counts: a few pages.
        assert!(at_open * 50 < size, "budget {budget:?}: the open read {at_open} of {size} bytes");
        let paged = answers(&s);
        let promoted = s.warm_base().unwrap();
        // At the default budget everything fits and is read whole; at a tiny one nothing is.
        assert_eq!(promoted, budget.is_none(), "budget {budget:?}");
        if promoted {
            assert!(counts.segment() > size / 2, "the promotion read {}", counts.segment());
        }
        assert!(!s.warm_base().unwrap(), "a second promotion has nothing left to do");
        assert_eq!(answers(&s), paged, "budget {budget:?}: promoted and paged answers differ");
        s.close().unwrap();
    }
}

#[test]
fn writes_between_the_open_and_the_promotion_stay_visible() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path());
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    let w_key = s.token_id(TokenKind::PropertyKey, "w").unwrap();
    let name = s.token_id(TokenKind::PropertyKey, "name").unwrap();
    let mut tx = s.begin(false);
    tx.set_node_property(NodeId(5), name, Value::String(Arc::from("renamed"))).unwrap();
    tx.delete_rel(RelId(9)).unwrap();
    tx.set_rel_property(RelId(10), w_key, Value::Int(-1)).unwrap();
    let ty = s.token_id(TokenKind::RelType, "LZ_Y").unwrap();
    tx.create_rel(NodeId(1), NodeId(2), ty, vec![]).unwrap();
    tx.commit().unwrap();
    let before = answers(&s);
    assert!(before[5].contains("renamed"), "{}", before[5]);
    let reader = s.begin(true);
    assert!(s.warm_base().unwrap());
    assert_eq!(answers(&s), before, "the promoted base lost the writes since the open");
    // A transaction begun before the promotion keeps reading the paged base.
    let (old, new) = (reader.node_properties(NodeId(5)), s.begin(true).node_properties(NodeId(5)));
    assert_eq!(format!("{old:?}"), format!("{new:?}"));
    assert!(reader.read_error().is_none());
}

#[test]
fn damage_to_a_page_the_open_left_in_the_segment_fails_the_read_not_the_open() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path());
    let seg = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("segment-")))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    // The middle of the file: a page of a large column (adjacency or properties).
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&seg, &bytes).unwrap();
    let name = seg.file_name().unwrap().to_string_lossy().to_string();
    let s = Store::open(dir.path(), cfg(None)).expect("the open does not read the page");
    let e = s.warm_base().expect_err("the promotion reads the page");
    assert_eq!(e.status, Status::Corruption, "{}", e.message);
    assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
    // The paged base stays; a read of everything meets the page and reports it.
    let tx = s.begin(true);
    for n in 0..NODES {
        let mut es = Vec::new();
        tx.node_edges(NodeId(n), Direction::Both, &[], &mut es);
        tx.node_properties(NodeId(n));
    }
    let w = s.token_id(TokenKind::PropertyKey, "w").unwrap();
    for r in 0..NODES * RELS_PER_NODE {
        tx.rel_info(RelId(r));
        tx.rel_property(RelId(r), w);
    }
    let (a, id) = (
        s.token_id(TokenKind::Label, "LzA").unwrap(),
        s.token_id(TokenKind::PropertyKey, "id").unwrap(),
    );
    for i in 0..NODES as i64 {
        tx.index_seek(a, id, &Value::Int(i));
    }
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(Some(a), cur) {
        cur = NodeId(n.0 + 1);
    }
    let e = tx.read_error().expect("a read failed").clone();
    assert_eq!(e.status, Status::Corruption, "{}", e.message);
    assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
}

/// The decoded sizes of the base's parts held in memory: label codes and bitsets, index
/// arrays, adjacency, node and relationship property blobs (before any query built a column
/// lazily).
fn parts(s: &Store) -> [u64; 5] {
    let b = s.memory_stats().base;
    [b.node_bytes, b.index_bytes, b.rel_bytes, b.node_property_bytes, b.rel_property_bytes]
}

/// Reads through the page cache so far (hits and misses).
fn pool_reads(s: &Store) -> u64 {
    let p = s.page_cache_stats().unwrap();
    p.hits + p.misses
}

/// The bytes of the budget the pool may fill and those it gave to promoted parts.
fn pool_split(s: &Store) -> (u64, u64) {
    let p = s.page_cache_stats().unwrap();
    (p.limit * 4096, (p.frames - p.limit) * 4096)
}

/// The parts of the base promoted at a budget where everything fits, and its answers.
fn fully_promoted(dir: &Path) -> ([u64; 5], Vec<String>) {
    let s = Store::open(dir, cfg(None)).unwrap();
    assert!(s.warm_base().unwrap());
    let p = parts(&s);
    let a = answers(&s);
    s.close().unwrap();
    (p, a)
}

#[test]
fn a_store_whose_parts_fit_the_budget_together_ends_fully_promoted() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path());
    let (full, want) = fully_promoted(dir.path());
    let total: u64 = full.iter().sum();
    // Three quarters of the budget hold every part, though the largest takes more than a
    // quarter of it (it stayed paged while each part had to fit a quarter).
    let budget = (total / 3 * 4 + (64 << 10)).next_multiple_of(4096);
    let largest = full.iter().max().copied().unwrap_or(0);
    assert!(largest * 4 > budget, "parts {full:?}, budget {budget}");
    let s = Store::open(dir.path(), cfg(Some(budget))).unwrap();
    assert!(s.warm_base().unwrap());
    assert_eq!(parts(&s), full, "budget {budget}: not every part was promoted");
    let (pool, promoted) = pool_split(&s);
    assert!(promoted >= total && pool + promoted <= budget, "{pool} + {promoted}");
    let before = pool_reads(&s);
    assert_eq!(answers(&s), want);
    assert_eq!(pool_reads(&s), before, "a fully promoted base read through the page cache");
    s.close().unwrap();
}

#[test]
fn a_store_larger_than_the_budget_keeps_pool_and_promoted_parts_within_it() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path());
    let (full, want) = fully_promoted(dir.path());
    let total: u64 = full.iter().sum();
    for budget in [total / 2, total / 5, TINY * 4] {
        let budget = budget.next_multiple_of(4096);
        let s = Store::open(dir.path(), cfg(Some(budget))).unwrap();
        s.warm_base().unwrap();
        let now = parts(&s);
        // A part is promoted whole or paged (a paged one leaves a few bytes of bookkeeping).
        let kept: u64 = now.iter().zip(full).filter(|(n, f)| *n == f).map(|(n, _)| n).sum();
        assert!(now.iter().zip(full).all(|(n, f)| *n == f || *n < 16 << 10), "{now:?}");
        let (pool, promoted) = pool_split(&s);
        // What stays in memory is taken from the pool (in whole pages), within three quarters
        // of the budget; the pool fills at most the rest.
        assert!(kept <= budget / 4 * 3, "budget {budget}: {kept} promoted");
        assert!(kept <= promoted, "budget {budget}: {kept} kept, {promoted} reserved");
        assert!(pool + promoted <= budget.max(16 * 4096), "budget {budget}: {pool} + {promoted}");
        let before = pool_reads(&s);
        assert_eq!(answers(&s), want, "budget {budget}");
        assert!(pool_reads(&s) > before, "budget {budget}: nothing was left paged");
        let st = s.page_cache_stats().unwrap();
        assert!(st.resident <= st.limit, "budget {budget}: {st:?}");
        s.close().unwrap();
    }
}
