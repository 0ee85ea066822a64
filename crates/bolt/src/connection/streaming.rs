//! Result streaming: `PULL`/`DISCARD`, the summary that ends a result (stats, plans,
//! notifications or 5.6+ statuses), and the client's notification filters.

use std::io;

use arbor_engine::{Notification, PullOutcome, Record, Stats, Summary};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use tracing::debug;

use super::errors::default_diagnostic_record;
use super::notify::notification_category;
use super::*;
use crate::message;

impl<B: Backend> Conn<B> {
    pub(super) fn pull(&mut self, n: i64, qid: i64, discard: bool) -> Flow {
        if n == 0 || n < -1 {
            return self.failure(&Error::new(
                Status::RequestInvalid,
                format!("Invalid value {n} for n: expected a positive number, or -1 for all."),
            ));
        }
        let auto = self.state == State::Streaming;
        let index = if auto {
            Some(0)
        } else {
            let key = if qid == -1 { self.last_key } else { Some(qid) };
            key.and_then(|k| self.results.iter().position(|r| r.key == k))
        };
        let Some(index) = index.filter(|&i| i < self.results.len()) else {
            return self.failure(&Error::new(
                Status::RequestInvalid,
                format!("There is no open result with qid {qid}."),
            ));
        };
        let engine_qid = self.results[index].engine_qid;

        let mut io_error: Option<io::Error> = None;
        let mut sent = 0u64;
        let outcome = if discard {
            self.backend.discard(engine_qid, n)
        } else {
            let writer = &mut self.writer;
            let dialect = self.dialect;
            let mut sink = |record: &mut Record<'_>| -> Result<()> {
                writer.message(|b| message::write_record(b, record, dialect))?;
                sent += 1;
                if let Err(e) = writer.maybe_flush() {
                    io_error = Some(e);
                    return Err(Error::new(Status::Io, "the client connection was lost"));
                }
                Ok(())
            };
            self.backend.pull(engine_qid, n, &mut sink)
        };
        if let Some(e) = io_error {
            debug!(peer = %self.peer, "Bolt write failed while streaming: {e}");
            return Flow::Close;
        }
        self.results[index].records += sent;
        match outcome {
            Ok(PullOutcome::HasMore) => {
                let mut meta = PropertyMap::new();
                meta.insert("has_more".into(), Value::Bool(true));
                self.success(meta)
            }
            Ok(PullOutcome::Done(summary)) => {
                let result = self.results.remove(index);
                if self.last_key == Some(result.key) {
                    self.last_key = None;
                }
                let meta = self.summary_metadata(&summary, &result, auto);
                self.state = if auto {
                    State::Ready
                } else if self.results.is_empty() {
                    State::TxReady
                } else {
                    State::TxStreaming
                };
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    pub(super) fn summary_metadata(
        &self,
        s: &Summary,
        result: &OpenResult,
        auto: bool,
    ) -> PropertyMap {
        let mut meta = PropertyMap::new();
        if auto {
            if let Some(b) = &s.bookmark {
                meta.insert("bookmark".into(), Value::str(b));
            }
        }
        meta.insert("db".into(), Value::str(&self.db));
        meta.insert("t_last".into(), Value::Int(i64::try_from(s.t_last_ms).unwrap_or(i64::MAX)));
        meta.insert("type".into(), Value::str(s.query_type.code()));
        let stats = stats_map(&s.stats);
        if !stats.is_empty() {
            meta.insert("stats".into(), Value::Map(stats));
        }
        if let Some(plan) = &s.plan {
            meta.insert(if s.profiled { "profile" } else { "plan" }.into(), plan.clone());
        }
        let notifications: Vec<&Notification> =
            s.notifications.iter().filter(|n| self.tx_filter.allows(n)).collect();
        if self.version().at_least(5, 6) {
            // The result's own status first, then notifications, as Neo4j orders them.
            let mut statuses = vec![result_status(result)];
            statuses.extend(notifications.iter().map(|n| status_object(n)));
            meta.insert("statuses".into(), Value::List(statuses));
        } else if !notifications.is_empty() {
            meta.insert(
                "notifications".into(),
                Value::List(notifications.iter().map(|n| notification_map(n)).collect()),
            );
        }
        meta
    }
}

/// Neo4j's counter names; only non-zero counters are sent, plus `contains-updates`.
pub(super) fn stats_map(s: &Stats) -> PropertyMap {
    let counters = arbor_engine::update_counters(s);
    let mut m = PropertyMap::new();
    for (k, v) in counters {
        if v > 0 {
            m.insert(k.into(), Value::Int(i64::try_from(v).unwrap_or(i64::MAX)));
        }
    }
    if !m.is_empty() {
        m.insert("contains-updates".into(), Value::Bool(true));
    }
    // User administration, as Neo4j reports changes to its system graph.
    if s.system_updates > 0 {
        let n = i64::try_from(s.system_updates).unwrap_or(i64::MAX);
        m.insert("system-updates".into(), Value::Int(n));
        m.insert("contains-system-updates".into(), Value::Bool(true));
    }
    m
}

pub(super) fn position_map(n: &Notification) -> Option<Value> {
    n.position.map(|(line, column, offset)| {
        let mut p = PropertyMap::new();
        p.insert("offset".into(), Value::Int(offset as i64));
        p.insert("line".into(), Value::Int(line as i64));
        p.insert("column".into(), Value::Int(column as i64));
        Value::Map(p)
    })
}

/// A notification as Bolt 4.4-5.4 send it.
pub(super) fn notification_map(n: &Notification) -> Value {
    let mut m = PropertyMap::new();
    m.insert("code".into(), Value::str(&n.code));
    m.insert("title".into(), Value::str(&n.title));
    m.insert("description".into(), Value::str(&n.description));
    m.insert("severity".into(), Value::str(&n.severity));
    m.insert("category".into(), Value::str(notification_category(&n.code)));
    if let Some(p) = position_map(n) {
        m.insert("position".into(), p);
    }
    Value::Map(m)
}

/// A notification as a 5.6+ GQL status object.
pub(super) fn status_object(n: &Notification) -> Value {
    let warning = n.severity.eq_ignore_ascii_case("WARNING");
    let mut diag = default_diagnostic_record();
    diag.insert("_severity".into(), Value::str(&n.severity));
    diag.insert("_classification".into(), Value::str(notification_category(&n.code)));
    if let Some(p) = position_map(n) {
        diag.insert("_position".into(), p);
    }
    let mut m = PropertyMap::new();
    let fallback = if warning { "01N00" } else { "03N00" };
    let gql_status = if n.gql_status.is_empty() { fallback } else { &n.gql_status };
    m.insert("gql_status".into(), Value::str(gql_status));
    m.insert(
        "status_description".into(),
        Value::from(format!("{}: {}", if warning { "warn" } else { "info" }, n.description)),
    );
    m.insert("neo4j_code".into(), Value::str(&n.code));
    m.insert("title".into(), Value::str(&n.title));
    m.insert("description".into(), Value::str(&n.description));
    m.insert("diagnostic_record".into(), Value::Map(diag));
    Value::Map(m)
}

/// The status every 5.6+ result ends with: success, no data, or omitted result.
pub(super) fn result_status(r: &OpenResult) -> Value {
    let (code, description) = if r.records > 0 {
        ("00000", "note: successful completion")
    } else if r.has_fields {
        ("02000", "note: no data")
    } else {
        ("00001", "note: successful completion - omitted result")
    };
    let mut m = PropertyMap::new();
    m.insert("gql_status".into(), Value::str(code));
    m.insert("status_description".into(), Value::str(description));
    m.insert("diagnostic_record".into(), Value::Map(default_diagnostic_record()));
    Value::Map(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::Value;

    fn note(code: &str, severity: &str) -> Notification {
        Notification {
            code: code.into(),
            gql_status: String::new(),
            title: "t".into(),
            description: "d".into(),
            severity: severity.into(),
            position: Some((1, 2, 3)),
        }
    }

    fn extra(entries: &[(&str, Value)]) -> PropertyMap {
        entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn system_updates_are_counted_as_neo4j_does() {
        let m = stats_map(&Stats { system_updates: 1, ..Stats::default() });
        assert!(matches!(m.get("system-updates"), Some(Value::Int(1))));
        assert!(matches!(m.get("contains-system-updates"), Some(Value::Bool(true))));
        assert!(m.get("contains-updates").is_none());
        assert!(stats_map(&Stats::default()).is_empty());
    }

    #[test]
    fn notification_filters_follow_hello_and_per_transaction_settings() {
        let cartesian = note("Neo.ClientNotification.Statement.CartesianProduct", "INFORMATION");
        let unknown = note("Neo.ClientNotification.Statement.UnknownLabelWarning", "WARNING");
        let all = NotificationFilter::default();
        assert!(all.allows(&cartesian) && all.allows(&unknown));

        let hello = NotificationFilter::from_extra(&extra(&[(
            "notifications_minimum_severity",
            Value::str("WARNING"),
        )]));
        assert!(!hello.allows(&cartesian) && hello.allows(&unknown));
        // A transaction can switch notifications off entirely...
        let off = hello.overlay(NotificationFilter::from_extra(&extra(&[(
            "notifications_minimum_severity",
            Value::str("OFF"),
        )])));
        assert!(!off.allows(&unknown));
        // ...or disable a classification while keeping HELLO's severity.
        let tx = hello.overlay(NotificationFilter::from_extra(&extra(&[(
            "notifications_disabled_classifications",
            Value::List(vec![Value::str("unrecognized")]),
        )])));
        assert!(!tx.allows(&unknown) && !tx.allows(&cartesian));
        // The pre-5.6 name works too.
        let legacy = NotificationFilter::from_extra(&extra(&[(
            "notifications_disabled_categories",
            Value::List(vec![Value::str("PERFORMANCE")]),
        )]));
        assert!(!legacy.allows(&cartesian) && legacy.allows(&unknown));
    }

    #[test]
    fn statuses_and_notifications_carry_positions_and_categories() {
        let n = note("Neo.ClientNotification.Statement.CartesianProduct", "WARNING");
        let Value::Map(m) = notification_map(&n) else { panic!() };
        assert!(matches!(m.get("category"), Some(Value::String(c)) if &**c == "PERFORMANCE"));
        let Some(Value::Map(p)) = m.get("position") else { panic!() };
        assert!(matches!(p.get("offset"), Some(Value::Int(3))));
        assert!(matches!(p.get("line"), Some(Value::Int(1))));
        let Value::Map(s) = status_object(&n) else { panic!() };
        assert!(matches!(s.get("gql_status"), Some(Value::String(g)) if g.starts_with("01")));
        assert!(matches!(s.get("neo4j_code"), Some(Value::String(_))));
        let r = OpenResult { key: -1, engine_qid: None, has_fields: true, records: 0 };
        let Value::Map(s) = result_status(&r) else { panic!() };
        assert!(matches!(s.get("gql_status"), Some(Value::String(g)) if &**g == "02000"));
    }

    #[test]
    fn stats_only_carry_nonzero_counters() {
        assert!(stats_map(&Stats::default()).is_empty());
        let s = Stats { labels_removed: 3, ..Stats::default() };
        let m = stats_map(&s);
        assert!(matches!(m.get("labels-removed"), Some(Value::Int(3))));
        assert!(matches!(m.get("contains-updates"), Some(Value::Bool(true))));
        assert_eq!(m.len(), 2);
    }
}
