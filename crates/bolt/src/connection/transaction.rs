//! Transaction state: `RESET`, auto-commit `RUN`, `BEGIN`/`RUN`/`COMMIT`/`ROLLBACK`, `ROUTE`,
//! and the validation of databases and transaction settings from request extras.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use arbor_engine::{AccessMode, RunInfo, TxConfig};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use super::*;

impl<B: Backend> Conn<B> {
    pub(super) fn reset(&mut self) -> Flow {
        self.backend.reset();
        self.results.clear();
        self.last_key = None;
        // The session clears the flag on reset; make sure of it, unless another RESET is
        // already queued (then its messages are being ignored anyway).
        self.interrupt.store(false, Ordering::SeqCst);
        if self.pending_resets.load(Ordering::SeqCst) > 0 {
            self.interrupt.store(true, Ordering::SeqCst);
        }
        self.state = State::Ready;
        self.success(PropertyMap::new())
    }

    pub(super) fn run_auto(
        &mut self,
        query: &str,
        params: PropertyMap,
        extra: PropertyMap,
    ) -> Flow {
        let (db, db_given) = match resolve_db(extra.get("db")) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        let config = match tx_config(&extra, &db) {
            Ok(c) => c,
            Err(e) => return self.failure(&e),
        };
        let started = Instant::now();
        match self.backend.run(query, params, config) {
            Ok(info) => {
                let t_first = started.elapsed().as_millis() as i64;
                self.db = db.clone();
                self.tx_filter = self.hello_filter.overlay(NotificationFilter::from_extra(&extra));
                self.results = vec![OpenResult {
                    key: -1,
                    engine_qid: None,
                    has_fields: !info.fields.is_empty(),
                    records: 0,
                }];
                self.state = State::Streaming;
                let mut meta = run_metadata(&info, t_first);
                if !db_given && self.version().at_least(5, 8) {
                    meta.insert("db".into(), Value::from(db));
                }
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn begin(&mut self, extra: PropertyMap) -> Flow {
        let (db, db_given) = match resolve_db(extra.get("db")) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        let config = match tx_config(&extra, &db) {
            Ok(c) => c,
            Err(e) => return self.failure(&e),
        };
        match self.backend.begin(config) {
            Ok(()) => {
                self.db = db.clone();
                self.tx_filter = self.hello_filter.overlay(NotificationFilter::from_extra(&extra));
                self.results.clear();
                self.last_key = None;
                self.state = State::TxReady;
                let mut meta = PropertyMap::new();
                if !db_given && self.version().at_least(5, 8) {
                    meta.insert("db".into(), Value::from(db));
                }
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn run_in_tx(&mut self, query: &str, params: PropertyMap) -> Flow {
        let config = TxConfig { database: Some(self.db.clone()), ..TxConfig::default() };
        let started = Instant::now();
        match self.backend.run(query, params, config) {
            Ok(info) => {
                let t_first = started.elapsed().as_millis() as i64;
                let key = match info.qid {
                    Some(q) => q,
                    None => {
                        self.next_key += 1;
                        self.next_key
                    }
                };
                self.results.retain(|r| r.key != key);
                self.results.push(OpenResult {
                    key,
                    engine_qid: info.qid,
                    has_fields: !info.fields.is_empty(),
                    records: 0,
                });
                self.last_key = Some(key);
                self.state = State::TxStreaming;
                let mut meta = run_metadata(&info, t_first);
                meta.insert("qid".into(), Value::Int(key));
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn commit(&mut self) -> Flow {
        match self.backend.commit() {
            Ok(bookmark) => {
                self.results.clear();
                self.last_key = None;
                self.state = State::Ready;
                let mut meta = PropertyMap::new();
                meta.insert("bookmark".into(), Value::from(bookmark));
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn rollback(&mut self) -> Flow {
        match self.backend.rollback() {
            Ok(()) => {
                self.results.clear();
                self.last_key = None;
                self.state = State::Ready;
                self.success(PropertyMap::new())
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn route(&mut self, routing: PropertyMap, db: Option<String>) -> Flow {
        let (db, _) = match resolve_db(db.map(Value::from).as_ref()) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        // A single server is writer, reader and router. Advertise what the operator configured,
        // else the address the client says it dialled (it resolves for that client), else ours.
        let address = match (&self.shared.advertised_address, routing.get("address")) {
            (Some(a), _) => a.clone(),
            (None, Some(Value::String(a))) if !a.is_empty() => a.to_string(),
            _ => self.local.clone(),
        };
        let servers = ["WRITE", "READ", "ROUTE"]
            .iter()
            .map(|role| {
                let mut s = PropertyMap::new();
                s.insert("addresses".into(), Value::List(vec![Value::str(&address)]));
                s.insert("role".into(), Value::str(role));
                Value::Map(s)
            })
            .collect();
        let mut rt = PropertyMap::new();
        rt.insert("ttl".into(), Value::Int(ROUTING_TTL_SECONDS));
        rt.insert("db".into(), Value::from(db));
        rt.insert("servers".into(), Value::List(servers));
        let mut meta = PropertyMap::new();
        meta.insert("rt".into(), Value::Map(rt));
        self.success(meta)
    }
}

/// `fields` and `t_first` of a RUN's SUCCESS.
pub(super) fn run_metadata(info: &RunInfo, t_first: i64) -> PropertyMap {
    let mut meta = PropertyMap::new();
    meta.insert("fields".into(), Value::List(info.fields.iter().map(|f| Value::str(f)).collect()));
    meta.insert("t_first".into(), Value::Int(t_first));
    meta
}

/// The database a request names: absent, null or `""` mean the default, `neo4j`.
pub(super) fn resolve_db(v: Option<&Value>) -> Result<(String, bool)> {
    match v {
        None | Some(Value::Null) => Ok(("neo4j".into(), false)),
        Some(Value::String(s)) if s.is_empty() => Ok(("neo4j".into(), false)),
        Some(Value::String(s)) => {
            // Neo4j database names are case-insensitive.
            let lower = s.to_lowercase();
            if lower == "neo4j" || lower == "system" {
                Ok((lower, true))
            } else {
                Err(Error::new(
                    Status::DatabaseNotFound,
                    format!("Database does not exist. Database name: '{s}'."),
                ))
            }
        }
        Some(other) => Err(Error::new(
            Status::RequestInvalid,
            format!("The database name must be a String, got {}.", other.type_name()),
        )),
    }
}

/// Transaction settings from BEGIN/RUN extras.
pub(super) fn tx_config(extra: &PropertyMap, db: &str) -> Result<TxConfig> {
    let invalid = |what: &str, v: &Value| {
        Error::new(Status::RequestInvalid, format!("Invalid {what}: got {}.", v.type_name()))
    };
    let mut config = TxConfig { database: Some(db.to_string()), ..TxConfig::default() };
    match extra.get("mode") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if &**m == "r" => config.mode = AccessMode::Read,
        Some(Value::String(m)) if &**m == "w" => config.mode = AccessMode::Write,
        Some(v) => return Err(invalid("access mode", v)),
    }
    match extra.get("tx_timeout") {
        None | Some(Value::Null) => {}
        Some(Value::Int(ms)) if *ms > 0 => config.timeout = Some(Duration::from_millis(*ms as u64)),
        // 0 means "no timeout" in Neo4j.
        Some(Value::Int(0)) => {}
        Some(v) => return Err(invalid("transaction timeout", v)),
    }
    match extra.get("tx_metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Map(m)) => config.metadata = m.clone(),
        Some(v) => return Err(invalid("transaction metadata", v)),
    }
    match extra.get("bookmarks") {
        None | Some(Value::Null) => {}
        Some(Value::List(items)) => {
            for item in items {
                match item {
                    Value::String(s) => config.bookmarks.push(s.to_string()),
                    v => return Err(invalid("bookmark", v)),
                }
            }
        }
        Some(v) => return Err(invalid("bookmarks", v)),
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::Value;

    fn extra(entries: &[(&str, Value)]) -> PropertyMap {
        entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn databases_and_transaction_settings_are_validated() {
        assert_eq!(resolve_db(None).unwrap(), ("neo4j".to_string(), false));
        assert_eq!(resolve_db(Some(&Value::str(""))).unwrap(), ("neo4j".to_string(), false));
        assert_eq!(resolve_db(Some(&Value::str("SYSTEM"))).unwrap(), ("system".to_string(), true));
        assert_eq!(
            resolve_db(Some(&Value::str("x"))).unwrap_err().status,
            Status::DatabaseNotFound
        );
        assert_eq!(resolve_db(Some(&Value::Int(1))).unwrap_err().status, Status::RequestInvalid);

        let c = tx_config(
            &extra(&[
                ("mode", Value::str("r")),
                ("tx_timeout", Value::Int(1500)),
                ("bookmarks", Value::List(vec![Value::str("neo4j:3")])),
                ("tx_metadata", Value::Map(extra(&[("app", Value::str("x"))]))),
            ]),
            "neo4j",
        )
        .unwrap();
        assert_eq!(c.mode, AccessMode::Read);
        assert_eq!(c.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(c.bookmarks, vec!["neo4j:3".to_string()]);
        assert!(c.metadata.contains_key("app"));
        assert_eq!(c.database.as_deref(), Some("neo4j"));
        assert!(tx_config(&extra(&[("mode", Value::str("x"))]), "neo4j").is_err());
        assert!(tx_config(&extra(&[("tx_timeout", Value::Int(-1))]), "neo4j").is_err());
        assert!(
            tx_config(&extra(&[("bookmarks", Value::List(vec![Value::Int(1)]))]), "neo4j").is_err()
        );
    }
}
