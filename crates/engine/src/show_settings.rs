//! `SHOW SETTINGS [names]` and the narrower `SHOW DATABASE` forms: Arbor's configuration under
//! Neo4j 5.26's setting names and columns (`name`, `value`, `isDynamic`, `defaultValue`,
//! `description` by default; `YIELD *` adds `startupValue`, `isExplicitlySet`, `validValues`,
//! `isDeprecated`).
//!
//! Only settings Arbor really has are listed, each with the value in force: the database's
//! own (transaction timeout, memory limits, import directory) are read from it; server-level
//! ones (listen address, authentication, login limits) are reported once by the binary at
//! start through [`report`]. Descriptions are Arbor's own words. Nothing here is dynamic:
//! Arbor changes no setting at run time.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use arbor_model::{Error, Status, Value};

use crate::Database;

type Rows = Vec<Vec<Value>>;

/// Every column, in Neo4j's order; the first [`DEFAULT_COLUMNS`] are shown without `YIELD`.
pub(crate) const COLUMNS: [&str; 9] = [
    "name",
    "value",
    "isDynamic",
    "defaultValue",
    "description",
    "startupValue",
    "isExplicitlySet",
    "validValues",
    "isDeprecated",
];
pub(crate) const DEFAULT_COLUMNS: usize = 5;

const DURATION: &str = "A duration (units `ns`, `μs`, `ms`, `s`, `m`, `h`, `d`; default `s`).";
const BYTES: &str = "A byte size (`B`, `KiB`, `MiB`, `GiB`, ... or `k`, `m`, `g`), or `0B`.";

/// One setting Arbor has: Neo4j's name, Arbor's description, default and valid values.
struct Def {
    name: &'static str,
    description: &'static str,
    /// `None` where the default is computed at start (from the machine or the data directory).
    default: Option<&'static str>,
    valid: &'static str,
}

const DEFS: &[Def] = &[
    Def {
        name: "db.memory.transaction.max",
        description: "Memory one transaction may hold; 0B means no limit beyond the pool.",
        default: Some("0B"),
        valid: BYTES,
    },
    Def {
        name: "db.memory.transaction.total.max",
        description: "Memory all running transactions may hold together; 0B means no limit.",
        default: None,
        valid: BYTES,
    },
    Def {
        name: "db.transaction.timeout",
        description: "How long a transaction may run before it is terminated; 0s means no \
                      limit (a client's smaller timeout wins).",
        default: Some("0s"),
        valid: DURATION,
    },
    Def {
        name: "dbms.security.auth_enabled",
        description: "Whether clients must authenticate.",
        default: Some("false"),
        valid: "A boolean.",
    },
    Def {
        name: "dbms.security.auth_lock_time",
        description: "How long logins from an address are refused after too many failed ones.",
        default: Some("5s"),
        valid: DURATION,
    },
    Def {
        name: "dbms.security.auth_max_failed_attempts",
        description: "Failed logins in a row before logins are refused for the lock time; 0 \
                      means never.",
        default: Some("3"),
        valid: "An integer that is minimum `0`.",
    },
    Def {
        name: "initial.dbms.default_database",
        description: "The database clients get when they name none.",
        default: Some("neo4j"),
        valid: "A database name.",
    },
    Def {
        name: "server.bolt.advertised_address",
        description: "The Bolt address routing tables give to clients.",
        default: Some("127.0.0.1:7687"),
        valid: "A socket address `hostname:port`.",
    },
    Def {
        name: "server.bolt.enabled",
        description: "Whether the Bolt connector runs.",
        default: Some("true"),
        valid: "A boolean.",
    },
    Def {
        name: "server.bolt.listen_address",
        description: "The address the Bolt connector listens on.",
        default: Some("127.0.0.1:7687"),
        valid: "A socket address `hostname:port`.",
    },
    Def {
        name: "server.bolt.thread_pool_max_size",
        description: "Bolt connections served by a thread at once (idle ones do not count); \
                      a request beyond waits up to 5s, then fails with NoThreadsAvailable.",
        default: Some("400"),
        valid: "An integer.",
    },
    Def {
        name: "server.directories.import",
        description: "The directory LOAD CSV reads `file:///` URLs from; files outside it \
                      cannot be read.",
        default: None,
        valid: "A path.",
    },
];

/// Values the server binary reported at start, by setting name.
fn reported() -> &'static Mutex<BTreeMap<&'static str, String>> {
    static REPORTED: OnceLock<Mutex<BTreeMap<&'static str, String>>> = OnceLock::new();
    REPORTED.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Records the value a server-level setting has in this process (the binary calls this at
/// start for the listen address, authentication, login limits, ...). Names Arbor does not
/// list are ignored.
pub fn report(name: &str, value: &str) {
    crate::config_settings::record(name, value);
    let Some(def) = DEFS.iter().find(|d| d.name == name) else { return };
    if let Ok(mut map) = reported().lock() {
        map.insert(def.name, value.to_string());
    }
}

/// The Bolt address `SHOW DATABASES` reports: the advertised one, else the listen address.
pub(crate) fn bolt_address() -> String {
    let map = reported().lock().ok();
    let get = |k: &str| map.as_ref().and_then(|m| m.get(k).cloned());
    get("server.bolt.advertised_address")
        .or_else(|| get("server.bolt.listen_address"))
        .unwrap_or_else(|| "localhost:7687".to_string())
}

/// A byte size as Neo4j prints one: `0B`, `512B`, `1.50KiB`, `2.00GiB`.
fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2}{}", UNITS[unit])
}

/// A duration as Neo4j prints one: `0s`, `500ms`, `30s`, `1m30s`, `2h`.
fn format_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    let parts = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1000, "s"), (1, "ms")];
    let mut rest = ms;
    for (size, unit) in parts {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

/// The value in force of `def` for `db`: the database's own, else what the binary
/// reported, else the default.
fn current(db: &Database, def: &Def) -> Option<String> {
    match def.name {
        "db.transaction.timeout" => {
            return Some(format_duration(db.transaction_timeout().unwrap_or_default()))
        }
        "db.memory.transaction.max" => {
            return Some(format_bytes(db.memory_pool().transaction_limit()))
        }
        "db.memory.transaction.total.max" => return Some(format_bytes(db.memory_pool().limit())),
        "server.directories.import" => {
            return db.import_dir().map(|p| p.display().to_string());
        }
        _ => {}
    }
    let reported = reported().lock().ok().and_then(|m| m.get(def.name).cloned());
    reported.or_else(|| def.default.map(str::to_string))
}

fn opt(v: Option<&str>) -> Value {
    v.map_or(Value::Null, Value::str)
}

/// All columns, the default columns and the rows of `SHOW SETTINGS`, sorted by name.
pub(crate) fn settings_rows(db: &Database) -> (Vec<&'static str>, Vec<&'static str>, Rows) {
    let rows = DEFS
        .iter()
        .map(|def| {
            let value = current(db, def);
            let explicit = value.is_some() && value.as_deref() != def.default;
            vec![
                Value::str(def.name),
                opt(value.as_deref()),
                Value::Bool(false),
                opt(def.default),
                Value::str(def.description),
                opt(value.as_deref()),
                Value::Bool(explicit),
                Value::str(def.valid),
                Value::Bool(false),
            ]
        })
        .collect();
    (COLUMNS.to_vec(), COLUMNS[..DEFAULT_COLUMNS].to_vec(), rows)
}

/// Keeps the rows whose first column (the name) is one of `names`.
pub(crate) fn keep_named(rows: Rows, names: &[String]) -> Rows {
    rows.into_iter()
        .filter(|r| matches!(r.first(), Some(Value::String(n)) if names.iter().any(|x| **x == **n)))
        .collect()
}

/// `SHOW DEFAULT DATABASE` / `SHOW HOME DATABASE` from the rows of `SHOW DATABASES`: the
/// default database only, without the `default` and `home` columns (Arbor has no per-user
/// home databases, so the home database is the default one).
pub(crate) fn default_database_only(
    columns: Vec<&'static str>,
    defaults: Vec<&'static str>,
    rows: Rows,
) -> (Vec<&'static str>, Vec<&'static str>, Rows) {
    let dropped = ["default", "home"];
    let is_default = columns.iter().position(|c| *c == "default");
    let keep: Vec<usize> = (0..columns.len()).filter(|&i| !dropped.contains(&columns[i])).collect();
    let rows = rows
        .into_iter()
        .filter(|r| is_default.is_some_and(|i| matches!(r.get(i), Some(Value::Bool(true)))))
        .map(|r| keep.iter().filter_map(|&i| r.get(i).cloned()).collect())
        .collect();
    let columns: Vec<&'static str> = keep.iter().map(|&i| columns[i]).collect();
    let defaults = defaults.into_iter().filter(|c| !dropped.contains(c)).collect();
    (columns, defaults, rows)
}

/// `SHOW SERVERS`: refused, as Neo4j Community refuses it (clustering is not offered).
pub(crate) fn servers_refused() -> Error {
    Error::new(Status::NotSystemDatabaseError, "Unsupported administration command: SHOW SERVERS")
}

#[cfg(test)]
mod tests {
    use super::*;

    // Goal: values print as Neo4j prints them, since tools compare the strings.
    #[test]
    fn formats() {
        assert_eq!(format_bytes(0), "0B");
        assert_eq!(format_bytes(512 << 20), "512.00MiB");
        assert_eq!(format_bytes(1536), "1.50KiB");
        assert_eq!(format_duration(std::time::Duration::ZERO), "0s");
        assert_eq!(format_duration(std::time::Duration::from_millis(90_500)), "1m30s500ms");
        assert_eq!(format_duration(std::time::Duration::from_secs(7200)), "2h");
    }
}
