//! The configuration settings `dbms.listConfig()` and `dbms.clientConfig()` list: Neo4j 5.26's
//! names, descriptions, defaults, `dynamic` flags and valid values, as Neo4j 5.26.30 lists them
//! (the `server.bolt` ones in full, since tools read that prefix, plus those of transactions,
//! memory, authentication, the default database, the import directory and the Browser).
//!
//! Where Arbor honours a setting, its value in force replaces the default: what the server
//! binary reported at start (`show_settings::report` passes it on to [`record`]: listen and
//! advertised address, thread pool, authentication, login limits, ...). `explicitlySet` is true
//! where that value differs from Neo4j's default. A leaf: it imports nothing of the crate.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// One setting as Neo4j describes it.
pub(crate) struct Setting {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// Neo4j's default (`None` where Neo4j computes it from the installation).
    pub(crate) default: Option<&'static str>,
    pub(crate) dynamic: bool,
    pub(crate) valid: &'static str,
}

/// Arbor's own values where they are fixed rather than reported: no telemetry is ever sent.
const ARBOR_VALUES: &[(&str, &str)] = &[("client.allow_telemetry", "false")];

/// Values the server binary reported at start, by setting name.
fn reported() -> &'static Mutex<BTreeMap<&'static str, String>> {
    static REPORTED: OnceLock<Mutex<BTreeMap<&'static str, String>>> = OnceLock::new();
    REPORTED.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Records the value a setting has in this process; names not listed here are ignored.
pub(crate) fn record(name: &str, value: &str) {
    let Some(s) = SETTINGS.iter().find(|s| s.name == name) else { return };
    if let Ok(mut map) = reported().lock() {
        map.insert(s.name, value.to_string());
    }
}

/// The value in force: reported by the binary, else fixed by Arbor, else Neo4j's default.
pub(crate) fn value_of(s: &Setting) -> Option<String> {
    reported()
        .lock()
        .ok()
        .and_then(|m| m.get(s.name).cloned())
        .or_else(|| ARBOR_VALUES.iter().find(|(n, _)| *n == s.name).map(|(_, v)| v.to_string()))
        .or_else(|| s.default.map(str::to_string))
}

/// The settings, sorted by name.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting {
        name: "browser.post_connect_cmd",
        description: "Commands to be run when Neo4j Browser successfully connects to this server. Separate multiple commands with semi-colon.",
        default: Some(""),
        dynamic: false,
        valid: "A string.",
    },
    Setting {
        name: "browser.remote_content_hostname_whitelist",
        description: "Whitelist of hosts for the Neo4j Browser to be allowed to fetch content from.",
        default: Some("guides.neo4j.com,localhost"),
        dynamic: false,
        valid: "A string.",
    },
    Setting {
        name: "client.allow_telemetry",
        description: "Configure client applications such as Browser and Bloom to send Product Analytics data.",
        default: Some("true"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "db.memory.transaction.max",
        description: "Limit the amount of memory that a single transaction can consume, in bytes (or kibibytes with the 'k' suffix, mebibytes with 'm' and gibibytes with 'g'). Zero means 'largest possible value'.",
        default: Some("0B"),
        dynamic: true,
        valid: "A byte size (valid multipliers are `B`, `KiB`, `KB`, `K`, `kB`, `kb`, `k`, `MiB`, `MB`, `M`, `mB`, `mb`, `m`, `GiB`, `GB`, `G`, `gB`, `gb`, `g`, `TiB`, `TB`, `PiB`, `PB`, `EiB`, `EB`) that is minimum `1.00MiB` or is `0B`.",
    },
    Setting {
        name: "db.memory.transaction.total.max",
        description: "Limit the amount of memory that all transactions in one database can consume, in bytes (or kibibytes with the 'k' suffix, mebibytes with 'm' and gibibytes with 'g'). Zero means 'unlimited'.",
        default: Some("0B"),
        dynamic: true,
        valid: "A byte size (valid multipliers are `B`, `KiB`, `KB`, `K`, `kB`, `kb`, `k`, `MiB`, `MB`, `M`, `mB`, `mb`, `m`, `GiB`, `GB`, `G`, `gB`, `gb`, `g`, `TiB`, `TB`, `PiB`, `PB`, `EiB`, `EB`) that is minimum `10.00MiB` or is `0B`.",
    },
    Setting {
        name: "db.transaction.bookmark_ready_timeout",
        description: "The maximum amount of time to wait for the database state represented by the bookmark.",
        default: Some("30s"),
        dynamic: true,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1s`.",
    },
    Setting {
        name: "db.transaction.concurrent.maximum",
        description: "The maximum number of concurrently running transactions. If set to 0, limit is disabled.",
        default: Some("1000"),
        dynamic: true,
        valid: "An integer.",
    },
    Setting {
        name: "db.transaction.monitor.check.interval",
        description: "Configures the time interval between transaction monitor checks. Determines how often monitor thread will check transaction for timeout.",
        default: Some("2s"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`).",
    },
    Setting {
        name: "db.transaction.sampling.percentage",
        description: "Transaction sampling percentage.",
        default: Some("5"),
        dynamic: true,
        valid: "An integer that is in the range `1` to `100`.",
    },
    Setting {
        name: "db.transaction.timeout",
        description: "The maximum time interval of a transaction within which it should be completed.",
        default: Some("0s"),
        dynamic: true,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`).",
    },
    Setting {
        name: "db.transaction.tracing.level",
        description: "Transaction creation tracing level.",
        default: Some("DISABLED"),
        dynamic: true,
        valid: "One of [DISABLED, SAMPLE, ALL].",
    },
    Setting {
        name: "dbms.security.auth_enabled",
        description: "Enable auth requirement to access Neo4j.\nDefaults to `true`.",
        default: Some("false"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "dbms.security.auth_lock_time",
        description: "The amount of time user account should be locked after a configured number of unsuccessful authentication attempts. The locked out user will not be able to log in until the lock period expires, even if correct credentials are provided. Setting this configuration option to a low value is not recommended because it might make it easier for an attacker to brute force the password.",
        default: Some("5s"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `0s`.",
    },
    Setting {
        name: "dbms.security.auth_max_failed_attempts",
        description: "The maximum number of unsuccessful authentication attempts before imposing a user lock for  the configured amount of time, as defined by `dbms.security.auth_lock_time`.The locked out user will not be able to log in until the lock period expires, even if correct  credentials are provided. Setting this configuration option to values less than 3 is not recommended because it might make  it easier for an attacker to brute force the password.",
        default: Some("3"),
        dynamic: false,
        valid: "An integer that is minimum `0`.",
    },
    Setting {
        name: "dbms.security.auth_minimum_password_length",
        description: "The minimum number of characters required in a password.",
        default: Some("8"),
        dynamic: false,
        valid: "An integer that is minimum `1`.",
    },
    Setting {
        name: "initial.dbms.default_database",
        description: "Name of the default database (aliases are not supported).",
        default: Some("neo4j"),
        dynamic: false,
        valid: "A valid database name containing only alphabetic characters, numbers, dots, and dashes with a length between 3 and 63 characters, starting with an alphabetic character but not with the name `system`.",
    },
    Setting {
        name: "server.bolt.additional_listen_addresses",
        description: "Additional addresses the connector should bind to.",
        default: Some(""),
        dynamic: false,
        valid: "A comma-separated set where each element is a socket address in the format of `hostname:port`, `hostname`, or `:port`.",
    },
    Setting {
        name: "server.bolt.advertised_address",
        description: "Advertised address for this connector.",
        default: Some(":7687"),
        dynamic: false,
        valid: "A socket address in the format of `hostname:port`, `hostname`, or `:port` that is an accessible address. If missing, it is acquired from server.default_advertised_address.",
    },
    Setting {
        name: "server.bolt.connection_keep_alive",
        description: "The maximum time to wait before sending a NOOP on connections waiting for responses from active ongoing queries. The minimum value is 1 millisecond.",
        default: Some("1m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1ms`.",
    },
    Setting {
        name: "server.bolt.connection_keep_alive_for_requests",
        description: "The type of messages to enable keep-alive messages for `ALL`, `STREAMING`, or `OFF`.",
        default: Some("ALL"),
        dynamic: false,
        valid: "One of [ALL, STREAMING, OFF].",
    },
    Setting {
        name: "server.bolt.connection_keep_alive_probes",
        description: "The total number of probes to be missed before a connection is considered stale. The minimum value is 1.",
        default: Some("2"),
        dynamic: false,
        valid: "An integer that is minimum `1`.",
    },
    Setting {
        name: "server.bolt.connection_keep_alive_streaming_scheduling_interval",
        description: "The interval between every scheduled keep-alive check on all connections with active queries. Zero duration turns off keep-alive service.",
        default: Some("1m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `0s`.",
    },
    Setting {
        name: "server.bolt.enable_network_error_accounting",
        description: "Enables accounting-based reporting of benign errors within the Bolt stack. When enabled, benign errors are reported only when such events occur with unusual frequency. When disabled, all benign network errors are reported.",
        default: Some("true"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "server.bolt.enabled",
        description: "Enable the Bolt connector.",
        default: Some("false"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "server.bolt.listen_address",
        description: "Address the connector should bind to.",
        default: Some(":7687"),
        dynamic: false,
        valid: "A socket address in the format of `hostname:port`, `hostname`, or `:port`. If missing, it is acquired from server.default_listen_address.",
    },
    Setting {
        name: "server.bolt.network_abort_clear_window_duration",
        description: "The duration for which network-related connection aborts need to remain at a reasonable level before the error is cleared.",
        default: Some("10m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1s`.",
    },
    Setting {
        name: "server.bolt.network_abort_warn_threshold",
        description: "The maximum number of network-related connection aborts allowed within a specified time window before emitting log messages. A value of zero reverts to legacy warning behavior.",
        default: Some("2"),
        dynamic: false,
        valid: "A long that is minimum `0`.",
    },
    Setting {
        name: "server.bolt.network_abort_warn_window_duration",
        description: "The duration of the window in which network-related connection aborts are sampled.",
        default: Some("10m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1s`.",
    },
    Setting {
        name: "server.bolt.ocsp_stapling_enabled",
        description: "Enable server OCSP stapling for bolt and http connectors.",
        default: Some("false"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "server.bolt.telemetry.enabled",
        description: "Enable the collection of driver telemetry.",
        default: Some("false"),
        dynamic: false,
        valid: "A boolean.",
    },
    Setting {
        name: "server.bolt.thread_pool_keep_alive",
        description: "The maximum time an idle thread in the thread pool bound to this connector waits for new tasks.",
        default: Some("5m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`).",
    },
    Setting {
        name: "server.bolt.thread_pool_max_size",
        description: "The maximum number of threads allowed in the thread pool bound to this connector.",
        default: Some("400"),
        dynamic: false,
        valid: "An integer.",
    },
    Setting {
        name: "server.bolt.thread_pool_min_size",
        description: "The number of threads, including idle, to keep in the thread pool bound to this connector.",
        default: Some("5"),
        dynamic: false,
        valid: "An integer.",
    },
    Setting {
        name: "server.bolt.thread_starvation_clear_window_duration",
        description: "The duration for which unscheduled requests need to remain at a reasonable level before the error is cleared.",
        default: Some("10m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1s`.",
    },
    Setting {
        name: "server.bolt.thread_starvation_warn_threshold",
        description: "The maximum number of unscheduled requests allowed during thread starvation events within a specified time window before emitting log messages. A value of zero reverts to legacy error behavior.",
        default: Some("2"),
        dynamic: false,
        valid: "A long that is minimum `0`.",
    },
    Setting {
        name: "server.bolt.thread_starvation_warn_window_duration",
        description: "The duration of the window in which unscheduled requests are sampled.",
        default: Some("10m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1s`.",
    },
    Setting {
        name: "server.bolt.tls_level",
        description: "The encryption level to be used to secure communications with this connector.",
        default: Some("DISABLED"),
        dynamic: false,
        valid: "One of [REQUIRED, OPTIONAL, DISABLED].",
    },
    Setting {
        name: "server.bolt.traffic_accounting_check_period",
        description: "Amount of time spent between samples of current traffic usage. Lower values result in more accurate reporting while incurring a higher performance penalty. A value of zero disables traffic accounting.",
        default: Some("5m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is `0s` or is minimum `1m`.",
    },
    Setting {
        name: "server.bolt.traffic_accounting_clear_duration",
        description: "Time to be spent below the configured traffic threshold to clear traffic warnings.",
        default: Some("10m"),
        dynamic: false,
        valid: "A duration (Valid units are: `ns`, `μs`, `ms`, `s`, `m`, `h` and `d`; default unit is `s`) that is minimum `1m`.",
    },
    Setting {
        name: "server.bolt.traffic_accounting_incoming_threshold_mbps",
        description: "Maximum permitted incoming traffic within a configured accounting check window before emitting a warning (in Mbps).",
        default: Some("950"),
        dynamic: false,
        valid: "A long that is minimum `1`.",
    },
    Setting {
        name: "server.bolt.traffic_accounting_outgoing_threshold_mbps",
        description: "Maximum permitted outgoing traffic within a configured accounting check window before emitting a warning (in Mbps).",
        default: Some("950"),
        dynamic: false,
        valid: "A long that is minimum `1`.",
    },
    Setting {
        name: "server.directories.import",
        description: "Sets the root directory for file URLs used with the Cypher `LOAD CSV` clause. This should be set to a directory relative to the Neo4j installation path, restricting access to only those files within that directory and its subdirectories. For example the value \"import\" will only enable access to files within the 'import' folder. Removing this setting will disable the security feature, allowing all files in the local system to be imported. Setting this to an empty field will allow access to all files within the Neo4j installation folder.",
        default: None,
        dynamic: false,
        valid: "A path. If relative, it is resolved from server.directories.neo4j_home.",
    },
];
