//! Unit tests of version chains, the id hash, the clock, count histories, tokens and the
//! commit-sink seam (commit against a sink without any log or file).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{Result, Status};
use parking_lot::Mutex;

use super::counts::{hist_add, hist_at, hist_prune};
use super::sink::{CommitSink, Ticket};
use super::state::Core;
use super::tokens::Tokens;
use super::tx::Transaction;
use super::versions::{
    chain_at, prune_chain, shard_key, visible_at, Chain, IdHasher, NodeSlot, Table, BLOCK_BITS,
    SHARDS,
};
use crate::clock::Clock;
use crate::records::{Labels, NodeData};
use crate::types::TokenKind;

#[test]
fn id_hash_keeps_runs_of_a_shard_together_and_spreads_the_rest() {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let h = |id: u64| BuildHasherDefault::<IdHasher>::default().hash_one(id);
    let low = |x: u64| x & ((1 << 40) - 1);
    // 16 consecutive ids of one block: consecutive buckets.
    for id in 33..48u64 {
        assert_eq!(low(h(id)), low(h(id - 1)) + 1);
    }
    // The last id of a shard's block and the first of its next block are neighbours too.
    let next_block = SHARDS << BLOCK_BITS;
    assert_eq!(shard_key(next_block), shard_key(next_block - (SHARDS - 1) * 1024 - 1) + 1);
    assert_eq!(Table::<NodeSlot>::shard(5), Table::<NodeSlot>::shard(1023));
    assert_ne!(Table::<NodeSlot>::shard(1023), Table::<NodeSlot>::shard(1024));
    assert_eq!(Table::<NodeSlot>::shard(0), Table::<NodeSlot>::shard(next_block));
    // Runs of one shard land far apart, and tags differ between neighbours.
    let of_shard_0 = |k: u64| ((k >> BLOCK_BITS) << (BLOCK_BITS + 6)) | (k & 1023);
    assert_eq!(shard_key(of_shard_0(5000)), 5000);
    let runs: HashSet<u64> = (0..1000u64).map(|r| low(h(of_shard_0(r * 16))) >> 4).collect();
    assert!(runs.len() > 990, "runs collide: {}", runs.len());
    let tags: HashSet<u64> = (0..64u64).map(|k| h(k) >> 57).collect();
    assert!(tags.len() > 20, "tags barely vary: {}", tags.len());
}

/// A logged commit is visible only once both durable and applied, in either order.
#[test]
fn clock_publishes_when_durable_and_applied() {
    let c = Clock::new(3);
    c.durable(4);
    assert_eq!(c.visible(), 3, "durable but not installed");
    c.applied(4);
    assert_eq!(c.visible(), 4);
    c.applied(5);
    assert_eq!(c.visible(), 4, "installed but not durable");
    c.applied(6);
    c.durable(5);
    assert_eq!(c.visible(), 5);
    c.durable(6);
    assert_eq!(c.visible(), 6);
    c.publish(8);
    assert_eq!(c.visible(), 8);
    c.durable(9);
    assert_eq!(c.visible(), 8);
    c.applied(9);
    assert_eq!(c.visible(), 9);
    assert!(c.wait_for(9, Duration::from_millis(1)));
}

#[test]
fn chain_visibility_and_prune() {
    let d = |n: u32| Some(Arc::new(NodeData { labels: Labels::from_slice(&[n]), props: vec![] }));
    let mut c: Chain<NodeData> = vec![(1, d(1)), (3, d(3)), (5, None)];
    assert!(visible_at(&c, 0).is_none());
    assert_eq!(visible_at(&c, 2).map(|x| x.labels[0]), Some(1));
    assert_eq!(visible_at(&c, 4).map(|x| x.labels[0]), Some(3));
    assert!(visible_at(&c, 9).is_none());
    assert_eq!(prune_chain(&mut c, 3, 0, true).len(), 1);
    assert_eq!(c.len(), 2);
    // A deletion of something a live base still has must stay (it hides the base row)...
    assert_eq!(prune_chain(&mut c, 5, 0, false).len(), 1);
    assert_eq!(c.len(), 1);
    // ...until every live base is newer than it.
    assert_eq!(prune_chain(&mut c, 5, 5, false).len(), 1);
    assert!(c.is_empty());
    let mut c: Chain<NodeData> = vec![(1, d(1)), (3, d(3)), (5, d(5))];
    assert_eq!(chain_at(&c, 0).map(|x| x.is_some()), None);
    assert_eq!(chain_at(&c, 4).flatten().map(|x| x.labels[0]), Some(3));
    // Versions every live base holds go even if a snapshot could see them: it reads the base.
    assert_eq!(prune_chain(&mut c, 2, 3, false).len(), 2);
    assert_eq!(c.len(), 1);
}

#[test]
fn count_histories() {
    let mut h = Vec::new();
    hist_add(&mut h, 2, 3);
    hist_add(&mut h, 2, 1);
    hist_add(&mut h, 5, -1);
    assert_eq!(hist_at(&h, 1), 0);
    assert_eq!(hist_at(&h, 2), 4);
    assert_eq!(hist_at(&h, 9), 3);
    hist_prune(&mut h, 9);
    assert_eq!(h, vec![(5, 3)]);
}

#[test]
fn tokens_replay_in_order_only() {
    let mut t = Tokens::default();
    assert_eq!(t.create(TokenKind::Label, "A").unwrap(), 0);
    assert!(t.ensure(TokenKind::Label, 0, "A").is_ok());
    assert!(t.ensure(TokenKind::Label, 0, "B").is_err());
    assert!(t.ensure(TokenKind::Label, 5, "C").is_err());
    assert!(t.ensure(TokenKind::Label, 1, "C").is_ok());
    assert_eq!(t.get(TokenKind::Label, "C"), Some(1));
}

/// A sink that records the commits handed to it and makes them durable at once (or, with
/// `fail`, refuses them like a stopped log writer).
struct Recorder {
    clock: Arc<Clock>,
    seen: Mutex<Vec<u64>>,
    fail: bool,
}

struct Shared(Arc<Recorder>);

impl CommitSink for Shared {
    fn submit(&self, ts: u64, header: Vec<u8>, _body: Vec<u8>) -> Option<Ticket> {
        if self.0.fail {
            return None;
        }
        assert_eq!(header[..8], ts.to_le_bytes(), "a record header starts with its commit ts");
        self.0.seen.lock().push(ts);
        self.0.clock.durable(ts);
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(Ok(())).unwrap();
        Some(Ticket::new(rx))
    }

    fn stop(&self) -> Result<()> {
        Ok(())
    }
}

fn core_with_sink(fail: bool) -> (Arc<Core>, Arc<Recorder>) {
    let core = Arc::new(Core::new(true));
    let rec = Arc::new(Recorder { clock: core.clock().clone(), seen: Mutex::default(), fail });
    core.lock_commit().sink = Some(Box::new(Shared(rec.clone())));
    (core, rec)
}

#[test]
fn commits_reach_the_sink_in_ts_order_and_become_visible() {
    let (core, rec) = core_with_sink(false);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let mut w = Transaction::new(core.clone(), false);
        ids.push(w.create_node(&[], vec![]).unwrap());
        w.commit().unwrap();
    }
    assert_eq!(*rec.seen.lock(), vec![1, 2, 3]);
    assert_eq!(core.clock().visible(), 3);
    let r = Transaction::new(core.clone(), true);
    assert!(ids.iter().all(|id| r.node_exists(*id)));
}

#[test]
fn a_stopped_sink_fails_the_commit_and_the_store() {
    let (core, rec) = core_with_sink(true);
    let mut w = Transaction::new(core.clone(), false);
    let id = w.create_node(&[], vec![]).unwrap();
    assert_eq!(w.commit().unwrap_err().status, Status::Io);
    assert!(core.clock().check().is_err(), "a lost record marks the store failed");
    assert!(rec.seen.lock().is_empty());
    assert!(!Transaction::new(core.clone(), true).node_exists(id));
    let mut w = Transaction::new(core, false);
    w.create_node(&[], vec![]).unwrap();
    assert_eq!(w.commit().unwrap_err().status, Status::Io);
}

#[test]
fn a_durable_core_without_a_sink_refuses_commits() {
    let core = Arc::new(Core::new(true));
    let mut w = Transaction::new(core.clone(), false);
    w.create_node(&[], vec![]).unwrap();
    assert_eq!(w.commit().unwrap_err().status, Status::Io);
}
