//! [`Procedures`]: the registry of procedures a database consults when it prepares a query:
//! the exec built-ins, the engine's own (transaction metadata, server info, full-text), and
//! whatever is registered later (`procedures.rs` registers from above); apart from them, the
//! internal procedures `SHOW` and administration commands are planned as (`show.rs`).
//!
//! Registration is rare and preparation frequent, so the registry is copy-on-write: preparing a
//! query takes a cheap snapshot (`Arc`), registering builds a new registry.

use std::sync::Arc;

use arbor_exec::procs::{Procedure, Registry};
use parking_lot::RwLock;

/// The registry a database consults; see the module docs.
pub(crate) struct Procedures {
    current: RwLock<Arc<Registry>>,
    info: DbInfo,
    /// The internal procedures `SHOW` and administration commands are planned as (`show.rs`,
    /// `users.rs`, `txinfo.rs`): resolved only while one of them is planned, never listed,
    /// kept by [`Procedures::reset`].
    internal: RwLock<Vec<Procedure>>,
}

/// The exec built-ins plus the engine's own: transaction metadata, the current user, server
/// and schema info.
fn engine_builtins(info: &DbInfo) -> Registry {
    let mut r = Registry::with_builtins();
    let own = crate::txinfo::procedures()
        .into_iter()
        .chain([crate::txinfo::show_current_user_proc()])
        .chain(crate::info_procs::procedures(info.id.clone(), info.created.clone()))
        .chain(crate::fulltext::procedures(info.fulltext.clone()));
    for p in own {
        r.register(p);
    }
    r
}

/// What `db.info()` reports: an id stable for a data directory, and when it was created.
#[derive(Clone)]
struct DbInfo {
    id: String,
    created: String,
    /// The full-text index definitions the `db.index.fulltext.*` procedures read.
    fulltext: Arc<crate::fulltext::Registry>,
}

impl DbInfo {
    fn for_path(
        path: Option<&std::path::Path>,
        fulltext: Arc<crate::fulltext::Registry>,
    ) -> DbInfo {
        use std::hash::{Hash, Hasher};
        let mut id = String::new();
        for salt in 0u8..4 {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (salt, path).hash(&mut h);
            id.push_str(&format!("{:016X}", h.finish()));
        }
        let created = path
            .and_then(|p| std::fs::metadata(p).ok())
            .and_then(|m| m.created().or_else(|_| m.modified()).ok())
            .unwrap_or_else(std::time::SystemTime::now);
        DbInfo { id, created: iso_utc(created), fulltext }
    }
}

/// `2026-11-26T15:15:20.926Z`, as Neo4j prints instants.
fn iso_utc(t: std::time::SystemTime) -> String {
    let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian, 400-year eras).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_millis()
    )
}

impl Procedures {
    /// The registry of a database in `path` (`None`: in memory).
    pub(crate) fn for_path(
        path: Option<&std::path::Path>,
        fulltext: Arc<crate::fulltext::Registry>,
    ) -> Procedures {
        let info = DbInfo::for_path(path, fulltext);
        Procedures {
            current: RwLock::new(Arc::new(engine_builtins(&info))),
            info,
            internal: RwLock::new(Vec::new()),
        }
    }
}

impl Procedures {
    /// The registry as of now.
    pub(crate) fn snapshot(&self) -> Arc<Registry> {
        self.current.read().clone()
    }

    /// Back to the built-ins only.
    pub(crate) fn reset(&self) {
        *self.current.write() = Arc::new(engine_builtins(&self.info));
    }

    /// Sets the internal `SHOW` procedures.
    pub(crate) fn set_internal(&self, procs: Vec<Procedure>) {
        *self.internal.write() = procs;
    }

    /// The registry as of now plus the internal `SHOW` procedures: what a `SHOW` command is
    /// planned against.
    pub(crate) fn for_show(&self) -> Arc<Registry> {
        let mut r = (*self.snapshot()).clone();
        for p in self.internal.read().iter() {
            r.register(p.clone());
        }
        Arc::new(r)
    }

    pub(crate) fn add(&self, p: Procedure) {
        let mut cur = self.current.write();
        let mut next = (**cur).clone();
        next.register(p);
        *cur = Arc::new(next);
    }
}
