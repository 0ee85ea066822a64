//! `Store::check`: an online consistency check, run by `arbor check` on a read-only open. It
//! verifies the checksums of the manifest, the checkpoint, every page of its segment files
//! (and that their topology, read through the page cache, matches the checkpoint file decoded
//! on its own), every WAL record not covered by the checkpoint, reports each segment's first and last commit, the last commit and its time,
//! and treats a gap in the commit sequence as a problem; and, on a read-only snapshot, that adjacency is symmetric (every relationship
//! is listed exactly once at its start as outgoing and at its end as incoming, with matching
//! endpoints), that node counts agree with scans, and that every online node index finds every
//! node it should.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arbor_model::{CheckReport, NodeId, RelId, Result, SegmentReport};

use super::checkpoint;
use super::checkpoint_segments;
use super::persist::Persist;
use super::wal;
use crate::mvcc::Core;
use crate::mvcc::Transaction;
use crate::types::{Direction, Edge, TokenKind};
use crate::vfs::Vfs;

pub(crate) fn check(core: &Arc<Core>, persist: Option<&Persist>) -> Result<CheckReport> {
    let mut r = CheckReport::default();
    if let Some(p) = persist {
        // No checkpoint may delete the files while they are read.
        let _g = p.checkpoint_lock.lock();
        let vfs = &*p.vfs;
        let mut checkpoint_ts = 0;
        let mut sealed = wal::Sealed::default();
        match checkpoint::read_manifest(vfs, &p.dir) {
            Ok(Some(m)) => {
                checkpoint_ts = m.ts;
                sealed = m.sealed;
                if let Err(e) = checkpoint::verify(vfs, &p.dir, &m.name) {
                    r.problem(e.message);
                }
                check_segments(p, &m.segments, (&m.name, m.ts, m.complete), &mut r);
                r.checkpoint = Some(m.name);
            }
            Ok(None) => {}
            Err(e) => r.problem(e.message),
        }
        r.checkpoint_ts = checkpoint_ts;
        r.last_commit_ts = checkpoint_ts;
        check_wal(vfs, &p.dir, (checkpoint_ts, &sealed), &mut r)?;
    }
    let tx = Transaction::new(core.clone(), true);
    check_graph(&tx, &mut r);
    if let Some(e) = tx.read_error() {
        // A page of the segment the base reads failed: the scan above saw a partial graph.
        r.problem(format!("the graph could not be read whole: {}", e.message));
    }
    Ok(r)
}

/// Verifies every page of the manifest's segment files and compares the topology read
/// through the page cache with the checkpoint file `ckpt` decoded into a separate base (the
/// store's own base may read that very segment, so comparing with it would prove nothing).
/// Decoding costs what opening used to: memory for the whole checkpoint, for the check's
/// duration only.
///
/// A complete segment has no decoded checkpoint to compare with: its pages are verified, and
/// its stored index arrays, label bitsets and count store are compared with ones derived
/// again from its own label codes, properties and adjacency.
fn check_segments(
    p: &Persist,
    names: &[String],
    (ckpt, ts, complete): (&str, u64, bool),
    r: &mut CheckReport,
) {
    let decoded = Core::new(false);
    let base = if complete {
        None
    } else {
        match checkpoint::load(&decoded, &*p.vfs, &p.dir, ckpt, ts) {
            Ok(()) => Some(decoded.base()),
            Err(e) => {
                r.problem(format!("segment files not compared with the checkpoint: {}", e.message));
                None
            }
        }
    };
    for name in names {
        match crate::pager::open_segment(&*p.vfs, &p.dir, name) {
            Ok(seg) => {
                r.segment_pages += seg.pages();
                if seg.ts != ts {
                    r.problem(format!("segment file {name} is of commit {}, not {ts}", seg.ts));
                }
                // The open registered the manifest's segment as the one to read.
                if !p.pager.current().ok().flatten().is_some_and(|c| c.path().ends_with(name)) {
                    r.problem(format!("segment file {name} is not the one in use"));
                }
                let same = base.as_deref().filter(|b| b.ts == ts && !b.is_paged());
                for problem in checkpoint_segments::check(&seg, &p.pager.pool, same) {
                    r.problem(problem);
                }
                if complete {
                    for problem in checkpoint_segments::check_complete(&seg, &p.pager.pool) {
                        r.problem(problem);
                    }
                }
                r.segment_files.push(name.clone());
            }
            Err(e) => r.problem(e.message),
        }
    }
}

/// Reads every segment not covered by the checkpoint: records, CRCs, ts order and gaps.
fn check_wal(
    vfs: &dyn Vfs,
    dir: &Path,
    (checkpoint_ts, sealed): (u64, &wal::Sealed),
    r: &mut CheckReport,
) -> Result<()> {
    let segments = wal::list_segments(vfs, dir)?;
    let mut last_ts = 0;
    let mut covered = 0;
    for (i, (first, path)) in segments.iter().enumerate() {
        // Wholly covered by the checkpoint: garbage recovery does not read (its deletion may
        // not have reached the disk).
        if wal::covered(&segments, i, checkpoint_ts) {
            covered += 1;
            continue;
        }
        r.wal_segments += 1;
        let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into());
        let data = match vfs.read(path) {
            Ok(d) => d,
            Err(e) => {
                r.problem(format!("cannot read {}: {e}", path.display()));
                continue;
            }
        };
        let mut seg = SegmentReport { name, bytes: data.len() as u64, ..Default::default() };
        let mut pos = 0;
        let mut ended = false;
        while pos < data.len() {
            let Some(rec) = wal::parse_record(&data, pos) else {
                // The log may end in an unsynced tail (a record being written right now, or
                // one torn by a crash); damage to a record declared durable is a problem.
                let missing = (last_ts + 1).max(*first);
                match wal::durable_claimed_after(vfs, &segments, i, &data, pos, missing) {
                    Ok(false) => r.notes.push(format!(
                        "the log ends at byte {pos} of {} in an unsynced tail of {} bytes (and \
                         {} later segment(s)), which recovery discards",
                        path.display(),
                        data.len() - pos,
                        segments.len() - i - 1
                    )),
                    Ok(true) => r.problem(format!(
                        "WAL file {} has a bad record at byte {pos} (commit {missing}, which \
                         later records say was durable)",
                        path.display()
                    )),
                    Err(e) => r.problem(e.message),
                }
                ended = true;
                break;
            };
            let expected = last_ts.max(checkpoint_ts) + 1;
            if rec.ts <= last_ts {
                r.problem(format!(
                    "WAL file {} byte {pos}: commit ts {} after {last_ts}",
                    path.display(),
                    rec.ts
                ));
            } else if rec.ts > expected {
                // As in recovery: a gap later records say was durable is a lost or truncated
                // segment; otherwise it is where the log ends (a segment lost before it was
                // durable).
                let what = format!(
                    "commits {expected} to {} are missing from the log before {} byte {pos}",
                    rec.ts - 1,
                    path.display()
                );
                match wal::durable_claimed_after(vfs, &segments, i, &data, pos, expected) {
                    Ok(false) if rec.durable < expected => r.notes.push(format!(
                        "{what}, written after the last fsync: the log ends there and \
                         recovery discards the rest"
                    )),
                    Ok(_) => r.problem(format!("{what} (a lost or truncated segment)")),
                    Err(e) => r.problem(e.message),
                }
                ended = true;
                break;
            }
            last_ts = rec.ts;
            if seg.records == 0 {
                seg.first_ts = rec.ts;
            }
            seg.records += 1;
            seg.last_ts = rec.ts;
            r.wal_records += 1;
            if rec.ts > r.last_commit_ts {
                r.last_commit_ts = rec.ts;
                r.last_commit_time_ms = rec.time_ms;
            }
            pos = rec.next;
        }
        r.segments.push(seg);
        if ended {
            break;
        }
    }
    if covered > 0 {
        r.notes.push(format!("{covered} log segment(s) covered by the checkpoint (garbage)"));
    }
    // Gaps past the end are caught above; a log that ends early is caught here.
    if r.last_commit_ts < sealed.until {
        r.problem(sealed.lost(r.last_commit_ts + 1, &segments, dir).message);
    }
    Ok(())
}

fn check_graph(tx: &Transaction, r: &mut CheckReport) {
    let (mut outs, mut ins) = (0u64, 0u64);
    let mut edges: Vec<Edge> = Vec::new();
    let mut per_label: HashMap<u32, u64> = HashMap::new();
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(None, cur) {
        cur = NodeId(n.0 + 1);
        r.nodes += 1;
        for l in tx.node_labels(n) {
            *per_label.entry(l).or_default() += 1;
        }
        for dir in [Direction::Outgoing, Direction::Incoming] {
            edges.clear();
            tx.node_edges(n, dir, &[], &mut edges);
            let mut seen: Vec<u64> = edges.iter().map(|e| e.rel.0).collect();
            seen.sort_unstable();
            if seen.windows(2).any(|w| w[0] == w[1]) {
                r.problem(format!("node {} lists a relationship twice ({dir:?})", n.0));
            }
            for e in &edges {
                let want = if dir == Direction::Outgoing { (n, e.other) } else { (e.other, n) };
                match tx.rel_info(e.rel) {
                    Some((s, t, _)) if (s, t) == want => {}
                    got => r.problem(format!(
                        "node {} lists relationship {} ({dir:?}, other end {}) but it is {got:?}",
                        n.0, e.rel.0, e.other.0
                    )),
                }
                if !tx.node_exists(e.other) {
                    r.problem(format!(
                        "relationship {} ends at missing node {}",
                        e.rel.0, e.other.0
                    ));
                }
            }
            if dir == Direction::Outgoing {
                outs += edges.len() as u64;
            } else {
                ins += edges.len() as u64;
            }
        }
    }
    let mut cur = RelId(0);
    while let Some(x) = tx.next_rel(&[], cur) {
        cur = RelId(x.0 + 1);
        r.relationships += 1;
    }
    if outs != r.relationships || ins != r.relationships {
        r.problem(format!(
            "adjacency is not symmetric: {} relationships, {outs} outgoing and {ins} incoming entries",
            r.relationships
        ));
    }
    if tx.count_nodes(None) != r.nodes {
        r.problem(format!("node count {} but {} nodes scanned", tx.count_nodes(None), r.nodes));
    }
    for (l, _) in tx.tokens(TokenKind::Label) {
        let mut scanned = 0u64;
        let mut cur = NodeId(0);
        while let Some(n) = tx.next_node(Some(l), cur) {
            cur = NodeId(n.0 + 1);
            scanned += 1;
        }
        let all = per_label.get(&l).copied().unwrap_or(0);
        let counted = tx.count_nodes(Some(l));
        if scanned != all || counted != all {
            r.problem(format!(
                "label {l}: {all} nodes carry it, a label scan finds {scanned}, the count says \
                 {counted}"
            ));
        }
    }
    let indexed = tx.indexed_targets();
    for t in indexed {
        let mut cur = NodeId(0);
        while let Some(n) = tx.next_node(Some(t.0), cur) {
            cur = NodeId(n.0 + 1);
            let Some(key) = tx.with_node(n.0, |d| d.key_for(t.0, &t.1)).flatten() else {
                continue;
            };
            // `None`: still populating in the background (not yet answering seeks).
            let Some(found) = tx.seek_exact(&t, Some(key)) else { break };
            r.index_entries += 1;
            if !found.contains(&n) {
                r.problem(format!("index on ({}, {:?}) does not find node {}", t.0, t.1, n.0));
            }
        }
    }
}
