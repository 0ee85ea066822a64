//! The server side of an online backup (`dbms.backup.*`): the snapshot is streamed by a thread
//! of its own at the lowest CPU priority (the kernel's view, `/proc/self/task/*/sched`) while
//! the calling thread keeps its own; records fit one Bolt chunk, follow each other without a
//! gap, carry the CRC32C of their bytes and add up to each file's length; `end` releases the
//! thread; an incremental backup with nothing new has nothing to copy.

use arbor_engine::backup::{priority, ROW_BYTES};
use arbor_engine::{Database, DatabaseConfig, PropertyMap, PullOutcome, Session, TxConfig, Value};

fn rows(s: &mut Session, q: &str) -> Vec<Vec<Value>> {
    s.run(q, PropertyMap::new(), TxConfig::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = Vec::new();
    let done = s
        .pull(None, -1, &mut |r| {
            out.push(r.into_iter().map(arbor_engine::Value::from).collect::<Vec<_>>());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    assert!(matches!(done, PullOutcome::Done(_)), "{q}: not exhausted");
    out
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

/// The thread of this process named `name`: its id and the `policy` and `prio` lines of its
/// scheduler statistics.
fn thread_named(name: &str) -> Option<(String, i64, i64)> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let sched = std::fs::read_to_string(dir.join("sched")).ok()?;
        let field = |key: &str| -> i64 {
            let line = sched.lines().find(|l| l.starts_with(key)).unwrap_or_default();
            line.rsplit(' ').next().unwrap_or_default().trim().parse().unwrap_or(-1)
        };
        return Some((task.file_name().to_string_lossy().into(), field("policy"), field("prio")));
    }
    None
}

/// `(commit, checkpoint, manifest CRC, incremental, files as (name, offset, length))`.
type Begun = (i64, i64, i64, i64, bool, Vec<(String, i64, i64)>);

fn begin(s: &mut Session, since: (i64, i64, i64)) -> Begun {
    let q = format!("CALL dbms.backup.begin({}, {}, {})", since.0, since.1, since.2);
    let r = rows(s, &q).remove(0);
    let Value::List(items) = &r[5] else { panic!("no file list: {r:?}") };
    let files = items
        .iter()
        .map(|m| {
            let Value::Map(m) = m else { panic!("{m:?}") };
            let Some(Value::String(name)) = m.get("name") else { panic!("{m:?}") };
            let field = |k: &str| int(m.get(k).unwrap_or(&Value::Null));
            (name.to_string(), field("offset"), field("length"))
        })
        .collect();
    (int(&r[0]), int(&r[1]), int(&r[2]), int(&r[3]), matches!(r[4], Value::Bool(true)), files)
}

#[test]
fn a_backup_streams_checked_records_from_an_idle_priority_thread() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    rows(&mut s, "UNWIND range(1, 3000) AS i CREATE (:OPS5_B {i: i, pad: 'x' + toString(i)})");
    let before = priority::current_thread();
    let (id, commit, checkpoint, crc, incremental, files) = begin(&mut s, (-1, -1, -1));
    assert!(!incremental && commit > 0 && !files.is_empty());
    let (_, policy, prio) =
        thread_named(&format!("arbor-backup-{id}")).expect("the backup has a thread");
    // SCHED_IDLE is policy 5; where it is refused, nice 19 (prio 139) is the fallback.
    assert!(policy == 5 || prio == 139, "policy {policy}, prio {prio}");
    assert_eq!(priority::current_thread(), before, "the caller's thread keeps its priority");
    let mut total = 0;
    for (i, (name, offset, len)) in files.iter().enumerate() {
        let mut at = *offset;
        loop {
            let q = format!("CALL dbms.backup.read({id}, {i}, 200000)");
            let got = rows(&mut s, &q);
            if got.is_empty() {
                break;
            }
            for r in got {
                let Value::Bytes(data) = &r[1] else { panic!("no bytes: {r:?}") };
                assert_eq!(int(&r[0]), at, "{name}: records follow each other");
                assert!(data.len() <= ROW_BYTES, "{name}: a record fits one Bolt chunk");
                assert_eq!(int(&r[2]), i64::from(crc32c::crc32c(data)), "{name} at {at}");
                at += data.len() as i64;
            }
        }
        assert_eq!(at, offset + len, "{name} ends where begin said");
        total += len;
    }
    assert!(total > 3000 * 10, "the log holds the writes: {total} bytes");
    let released = rows(&mut s, &format!("CALL dbms.backup.end({id})"));
    assert!(matches!(released[0][0], Value::Bool(true)), "{released:?}");
    let gone = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        thread_named(&format!("arbor-backup-{id}")).is_none()
    });
    assert!(gone, "end stops the backup's thread");

    // Nothing new: an incremental backup with nothing to copy.
    let (id2, commit2, _, _, incremental2, files2) = begin(&mut s, (commit, checkpoint, crc));
    assert!(incremental2, "continues the first backup");
    assert_eq!(commit2, commit);
    assert!(files2.is_empty(), "nothing to copy: {files2:?}");
    rows(&mut s, &format!("CALL dbms.backup.end({id2})"));
    // One write: exactly its record, appended where the first backup's copy ends.
    rows(&mut s, "CREATE (:OPS5_B {i: 0})");
    let (id3, commit3, _, _, incremental3, files3) = begin(&mut s, (commit, checkpoint, crc));
    assert!(incremental3 && commit3 > commit, "{commit3}");
    let last = files.iter().rfind(|f| f.0.starts_with("wal-")).unwrap();
    assert_eq!(files3.len(), 1, "{files3:?}");
    assert_eq!((&files3[0].0, files3[0].1), (&last.0, last.1 + last.2), "appends to the copy");
    rows(&mut s, &format!("CALL dbms.backup.end({id3})"));
    let e = s.run("CALL dbms.backup.read($id, 0, 10)", id_param(id3), TxConfig::default());
    let e = match e {
        Err(e) => e,
        Ok(_) => s.pull(None, -1, &mut |_| Ok(())).expect_err("a released backup is gone"),
    };
    assert!(e.message.contains(&format!("no backup with id {id3}")), "{e}");
}

fn id_param(id: i64) -> PropertyMap {
    let mut p = PropertyMap::new();
    p.insert("id".into(), Value::Int(id));
    p
}
