//! Group commit of the log and its writer thread.
//!
//! In `sync` mode a committer does its own log I/O. `submit` queues the record (under the commit
//! mutex, so in ts order); the committer installs its versions, then waits on its ticket: the
//! first waiter that finds the writer free becomes the leader, takes everything queued, writes it
//! and fsyncs once, publishes the new durable watermark and wakes the others. A waiter whose
//! record came after the leader took the queue leads the next round, with whatever queued up
//! meanwhile (group commit without a coordinator); so does a committer already covered, for a
//! few rounds ([`EXTRA_ROUNDS`]), if records are queued when its own round ends. A lone committer so writes and syncs on its
//! own thread: no hand-off to a log thread and back, which cost two wake-ups and two context
//! switches (plus the channel's spinning and yielding) per commit.
//!
//! The writer thread stays for what has no committer waiting: `async` and `off` modes (their
//! records go through its channel and are acknowledged once written), the retries after a full
//! disk, a ticket dropped unwaited (its record must still reach the disk), stopping, and large
//! records (see [`OVERLAP_BYTES`]).
//!
//! Lost wake-ups: a leader releases the writer before it publishes (bumping `Done::gen` under
//! the `done` mutex), so a waiter that found the writer taken and then saw `gen` unchanged is
//! certain to be woken by that leader's publication.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arbor_model::{Error, Result, Status};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::{Condvar, Mutex};

use super::wal::{WalMsg, WalShared, Writer, ASYNC_SYNC_EVERY, RETRY_MAX};
use crate::clock::Clock;
use crate::mvcc::{AwaitDurable, CommitSink, Ticket};
use crate::types::Durability;
use crate::vfs::Vfs;

/// How long a waiter sleeps while the disk is full before it retries the write itself (the
/// writer thread retries on its own schedule meanwhile).
const STALLED_WAIT: Duration = Duration::from_millis(100);
/// A bound on any wait for a leader, in case a wake-up were lost anyway (it then costs a
/// retry, not a hang).
const LEADER_WAIT: Duration = Duration::from_secs(1);

/// A record at least this large is handed to the writer thread at once, so that its write and
/// fsync overlap the committer's install (a batch of 10,000 nodes takes a few milliseconds to
/// install and about as long to sync); smaller ones are written by their committer (the
/// hand-off would cost more CPU than the overlap saves time).
const OVERLAP_BYTES: usize = 64 << 10;

/// Rounds a committer whose own record is durable still leads for records queued meanwhile
/// (at most): the writer is then busy at once, as a dedicated log thread would be, instead of
/// waiting until a woken committer is scheduled (slow on a loaded machine); each costs its own
/// client one more fsync of latency.
const EXTRA_ROUNDS: u32 = 4;

/// The writer and the number of rounds it has run (publications carry it, so an older round
/// published late never overwrites a newer one).
struct Inner {
    w: Writer,
    round: u64,
}

/// What the last published round left: waiters read it under `Log::done`.
struct Done {
    round: u64,
    /// The last commit ts made durable (`sync` mode).
    durable: u64,
    failed: Option<Error>,
    stalled: bool,
    /// Bumped by every publication (waiters sleep only while it is unchanged).
    gen: u64,
}

/// The log: the writer, the queue of `sync`-mode records and the published watermark.
pub(crate) struct Log {
    inner: Mutex<Inner>,
    /// Records submitted in `sync` mode and not yet taken by a round, in ts order.
    queue: Mutex<Vec<WalMsg>>,
    done: Mutex<Done>,
    cv: Condvar,
    tx: Sender<WalMsg>,
    sync: bool,
}

/// What a round left, read under the writer lock and published after it is released.
struct Snapshot {
    round: u64,
    durable: u64,
    failed: Option<Error>,
    stalled: bool,
}

impl Log {
    fn new(w: Writer, tx: Sender<WalMsg>) -> Log {
        let done = Done { round: 0, durable: w.durable_ts, failed: None, stalled: false, gen: 0 };
        Log {
            sync: w.durability == Durability::Sync,
            inner: Mutex::new(Inner { w, round: 0 }),
            queue: Mutex::new(Vec::new()),
            done: Mutex::new(done),
            cv: Condvar::new(),
            tx,
        }
    }

    /// One round (caller holds the writer): what is queued, then `batch`, written with one
    /// fsync (per the durability mode). Returns whether a stop was processed.
    fn round(&self, inner: &mut Inner, batch: Vec<WalMsg>) -> (bool, Snapshot) {
        let mut all = std::mem::take(&mut *self.queue.lock());
        all.extend(batch);
        let stop = inner.w.process(all);
        inner.round += 1;
        let w = &inner.w;
        let snap = Snapshot {
            round: inner.round,
            durable: w.durable_ts,
            failed: w.failed.clone(),
            stalled: w.stalled,
        };
        (stop, snap)
    }

    /// Publishes a round's outcome and wakes the waiters; called after the writer is released.
    fn publish(&self, s: Snapshot) {
        let mut d = self.done.lock();
        d.durable = d.durable.max(s.durable);
        if d.failed.is_none() {
            d.failed = s.failed;
        }
        if s.round > d.round {
            d.round = s.round;
            d.stalled = s.stalled;
        }
        d.gen += 1;
        drop(d);
        self.cv.notify_all();
    }

    /// The writer thread's timer fired: retry a write held back by a full disk, or (`async`)
    /// sync what was written.
    fn on_timeout(&self) {
        let mut inner = self.inner.lock();
        if inner.w.stalled {
            inner.w.retry_wait = (inner.w.retry_wait * 2).min(RETRY_MAX);
            let (_, snap) = self.round(&mut inner, Vec::new());
            drop(inner);
            self.publish(snap);
        } else if inner.w.unsynced {
            // A failed fsync is final (its data may be gone while a retry would succeed):
            // stop committing, as after any other log failure.
            if let Err(e) = inner.w.sync() {
                inner.w.clock.fail(e.message.clone());
                inner.w.failed = Some(e);
            }
        }
    }
}

impl AwaitDurable for Log {
    fn wait(&self, ts: u64) -> Result<()> {
        let mut extra = 0;
        loop {
            let gen = {
                let mut d = self.done.lock();
                if d.durable >= ts {
                    let more = extra < EXTRA_ROUNDS && !d.stalled && d.failed.is_none();
                    drop(d);
                    if more && !self.queue.lock().is_empty() {
                        if let Some(mut inner) = self.inner.try_lock() {
                            extra += 1;
                            let (_, snap) = self.round(&mut inner, Vec::new());
                            drop(inner);
                            self.publish(snap);
                            continue;
                        }
                    }
                    return Ok(());
                }
                if let Some(e) = &d.failed {
                    return Err(e.clone());
                }
                if d.stalled {
                    let gen = d.gen;
                    if !self.cv.wait_for(&mut d, STALLED_WAIT).timed_out() || d.gen != gen {
                        continue;
                    }
                }
                d.gen
            };
            if let Some(mut inner) = self.inner.try_lock() {
                let (_, snap) = self.round(&mut inner, Vec::new());
                drop(inner);
                let stalled = snap.stalled;
                self.publish(snap);
                if stalled {
                    // The writer thread retries while nobody leads.
                    let _ = self.tx.send(WalMsg::Nudge);
                }
                continue;
            }
            let mut d = self.done.lock();
            if d.gen == gen {
                let _ = self.cv.wait_for(&mut d, LEADER_WAIT);
            }
        }
    }

    fn abandon(&self, ts: u64) {
        if self.done.lock().durable < ts {
            let _ = self.tx.send(WalMsg::Nudge);
        }
    }
}

/// The commit sink of a file-backed store: `sync` records go to the queue and their committers
/// lead the writes (see the module doc); `async` and `off` records go to the writer thread,
/// which answers the ticket once they are written.
pub(crate) struct LogSink(Arc<Log>);

impl CommitSink for LogSink {
    fn submit(&self, ts: u64, header: Vec<u8>, body: Vec<u8>) -> Option<Ticket> {
        if self.0.sync {
            let big = header.len() + body.len() >= OVERLAP_BYTES;
            self.0.queue.lock().push(WalMsg::Commit { ts, header, body, ack: None });
            if big {
                // Written by the writer thread while the committer installs the versions.
                let _ = self.0.tx.send(WalMsg::Nudge);
            }
            return Some(Ticket::awaiting(ts, self.0.clone()));
        }
        let (atx, arx) = crossbeam_channel::bounded(1);
        self.0.tx.send(WalMsg::Commit { ts, header, body, ack: Some(atx) }).ok()?;
        Some(Ticket::new(arx))
    }

    fn stop(&self) -> Result<()> {
        let (atx, arx) = crossbeam_channel::bounded(1);
        if self.0.tx.send(WalMsg::Stop(atx)).is_ok() {
            if let Ok(Err(e)) = arx.recv() {
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Starts the log: its writer appends from `next_ts` on in a new segment named after it
/// (created by the first write), and the writer thread.
pub(crate) fn start(
    vfs: Arc<dyn Vfs>,
    dir: &Path,
    durability: Durability,
    segment_bytes: u64,
    next_ts: u64,
    shared: Arc<WalShared>,
    clock: Arc<Clock>,
) -> Result<(LogSink, JoinHandle<()>)> {
    let w = super::wal::writer(vfs, dir, durability, segment_bytes, next_ts, shared, clock)?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let log = Arc::new(Log::new(w, tx));
    let thread_log = log.clone();
    let handle = std::thread::Builder::new()
        .name("arbor-wal".into())
        .spawn(move || run(&thread_log, rx))
        .map_err(|e| Error::new(Status::Io, format!("cannot start the log writer: {e}")))?;
    Ok((LogSink(log), handle))
}

/// The writer thread: rounds for what arrives on its channel (records in `async` and `off`
/// mode, nudges, the stop), the `async` fsync timer and the retries after a full disk.
fn run(log: &Log, rx: Receiver<WalMsg>) {
    loop {
        let wait = {
            let inner = log.inner.lock();
            let w = &inner.w;
            let timer = w.durability == Durability::Async && w.failed.is_none();
            if w.stalled {
                Some(w.retry_wait)
            } else if w.unsynced && timer {
                Some(ASYNC_SYNC_EVERY.saturating_sub(w.last_sync.elapsed()))
            } else {
                None
            }
        };
        let first = match wait {
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    log.on_timeout();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(m) => m,
                Err(_) => break,
            },
        };
        let mut batch = vec![first];
        while batch.len() < 4096 {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let mut inner = log.inner.lock();
        let (stop, snap) = log.round(&mut inner, batch);
        drop(inner);
        log.publish(snap);
        if stop {
            return;
        }
    }
    let mut inner = log.inner.lock();
    let w = &mut inner.w;
    if w.durability != Durability::Off && w.unsynced && w.failed.is_none() {
        let _ = w.sync();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::clock::Clock;
    use crate::durability::wal::parse_record;
    use crate::simfs::SimFs;

    const DIR: &str = "/db";

    struct Open {
        sink: LogSink,
        thread: JoinHandle<()>,
        clock: Arc<Clock>,
        shared: Arc<WalShared>,
    }

    fn open(fs: &SimFs) -> Open {
        let dir = Path::new(DIR);
        fs.create_dir_all(dir).unwrap();
        let (clock, shared) = (Arc::new(Clock::new(0)), Arc::new(WalShared::default()));
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let (sink, thread) =
            start(vfs, dir, Durability::Sync, 1 << 20, 1, shared.clone(), clock.clone()).unwrap();
        Open { sink, thread, clock, shared }
    }

    /// The commit timestamps of the records a power loss now would leave in the log.
    fn durable_records(fs: &SimFs) -> Vec<u64> {
        let mut out = Vec::new();
        for (path, data) in fs.durable_snapshot() {
            if !path.to_string_lossy().ends_with(".log") {
                continue;
            }
            let mut pos = 0;
            while let Some(r) = parse_record(&data, pos) {
                out.push(r.ts);
                pos = r.next;
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn a_ticket_dropped_unwaited_still_becomes_durable() {
        let fs = SimFs::new(7);
        let o = open(&fs);
        drop(o.sink.submit(1, 1u64.to_le_bytes().to_vec(), b"x".to_vec()));
        o.clock.applied(1);
        // Nobody waits on the ticket, so no committer leads: the writer thread must.
        assert!(o.clock.wait_for(1, Duration::from_secs(30)), "commit 1 never became durable");
        assert_eq!(durable_records(&fs), vec![1]);
        o.sink.stop().unwrap();
        o.thread.join().unwrap();
    }

    #[test]
    fn concurrent_committers_are_durable_when_acknowledged() {
        let fs = SimFs::new(11);
        let o = open(&fs);
        // The commit mutex: records are submitted and applied in ts order.
        let commit = Mutex::new(0u64);
        let (threads, each) = (6u64, 40u64);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    for _ in 0..each {
                        let (ts, ticket) = {
                            let mut next = commit.lock();
                            *next += 1;
                            let ts = *next;
                            let t = o.sink.submit(ts, ts.to_le_bytes().to_vec(), b"x".to_vec());
                            o.clock.applied(ts);
                            (ts, t.unwrap())
                        };
                        ticket.wait().unwrap();
                        // Acknowledged: on the disk, whatever happens now.
                        let durable = durable_records(&fs);
                        assert!(durable.contains(&ts), "commit {ts} acknowledged before durable");
                        assert!(o.clock.visible() >= ts);
                    }
                });
            }
        });
        let n = threads * each;
        assert_eq!(durable_records(&fs), (1..=n).collect::<Vec<_>>());
        assert!(o.shared.syncs.load(Ordering::Relaxed) <= n);
        o.sink.stop().unwrap();
        o.thread.join().unwrap();
    }

    #[test]
    fn a_failed_fsync_fails_its_round_and_every_later_commit() {
        let fs = SimFs::new(13);
        let o = open(&fs);
        let submit = |ts: u64| {
            let t = o.sink.submit(ts, ts.to_le_bytes().to_vec(), b"x".to_vec()).unwrap();
            o.clock.applied(ts);
            t
        };
        submit(1).wait().unwrap();
        o.shared.fail_next_sync.store(true, Ordering::Relaxed);
        let (a, b) = (submit(2), submit(3));
        assert!(a.wait().is_err() && b.wait().is_err());
        // Final: no retry makes a later commit durable.
        assert!(submit(4).wait().is_err());
        assert!(o.clock.check().is_err());
        assert_eq!(durable_records(&fs), vec![1]);
        assert!(o.sink.stop().is_err());
        o.thread.join().unwrap();
    }
}
