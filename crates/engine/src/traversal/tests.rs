//! Traversals over a store whose base is read through the page cache: a corrupt segment page
//! ends the traversal with the read error (naming file and page) instead of a partial answer,
//! and an intact store reopened under a tiny budget traverses as before.

use std::path::Path;

use super::{TraversalDescription, Uniqueness};
use crate::{Database, DatabaseConfig, Direction, Status};

/// The smallest page cache the store accepts (16 frames of 4 KiB).
const TINY: u64 = 16 * 4096;

fn open(dir: &Path, memory_limit: Option<u64>) -> Database {
    Database::open(dir, DatabaseConfig { memory_limit, ..DatabaseConfig::default() }).unwrap()
}

/// A binary tree of `n` nodes (`i` -> `2i+1`, `2i+2`), checkpointed and closed.
fn tree(dir: &Path, n: u64) {
    let db = open(dir, None);
    db.write(|tx| {
        let ids: Vec<_> =
            (0..n).map(|_| tx.create_node(&["T"], [])).collect::<crate::Result<_>>()?;
        for i in 0..n {
            for c in [2 * i + 1, 2 * i + 2] {
                if c < n {
                    tx.create_relationship(ids[i as usize], ids[c as usize], "C", [])?;
                }
            }
        }
        Ok(())
    })
    .unwrap();
    db.shutdown().unwrap();
}

fn count(db: &Database) -> crate::Result<u64> {
    let tx = db.begin_read()?;
    let root = tx.find_nodes(tx.label("T").unwrap()).next().unwrap();
    let c = tx.rel_type("C").unwrap();
    let td = TraversalDescription::new()
        .relationships(c, Direction::Outgoing)
        .uniqueness(Uniqueness::NodeGlobal)
        .breadth_first();
    let n = td.traverse(&tx, root).try_count_paths();
    n
}

#[test]
fn a_traversal_stops_at_a_corrupt_segment_page_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), 20_000);
    let db = open(dir.path(), Some(TINY));
    assert_eq!(count(&db).unwrap(), 20_000, "the tree read through a 64 KiB cache");
    db.shutdown().unwrap();
    drop(db);
    // Flip a byte in every data page of the segment (its header length is at byte 12).
    let name = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.starts_with("segment-") && n.ends_with(".arbor"))
        .expect("the checkpoint wrote a segment");
    let path = dir.path().join(&name);
    let mut bytes = std::fs::read(&path).unwrap();
    let header = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize * 4096;
    for p in (header..bytes.len()).step_by(4096) {
        bytes[p + 9] ^= 0x40;
    }
    std::fs::write(&path, &bytes).unwrap();
    // A complete segment's open reads the forward adjacency whole and checks every page: the
    // open itself then fails with the page's error. A store that opens must fail the traversal.
    let db = match Database::open(
        dir.path(),
        DatabaseConfig { memory_limit: Some(TINY), ..DatabaseConfig::default() },
    ) {
        Ok(db) => db,
        Err(e) => {
            assert_eq!(e.status, Status::Corruption);
            assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
            return;
        }
    };
    let e = count(&db).expect_err("the bad page ends the traversal");
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
    // Plain iteration stops too, and the traverser says why.
    let tx = db.begin_read().unwrap();
    let root = tx.find_nodes(tx.label("T").unwrap()).next().unwrap();
    let td =
        TraversalDescription::new().relationships(tx.rel_type("C").unwrap(), Direction::Outgoing);
    let mut t = td.traverse(&tx, root);
    assert!(t.by_ref().count() < 20_000);
    assert_eq!(t.error().map(|e| e.status), Some(Status::Corruption));
    assert!(t.check().is_err());
    drop(t);
    drop(tx);
    let _ = db.shutdown();
}
