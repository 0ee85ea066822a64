//! Errors on the wire: `FAILURE` metadata per Bolt version (GQL fields from 5.7), what a
//! failure does to the connection state, and the one-message refusal used before a session exists.

use std::io::{self, Write};
use std::sync::atomic::Ordering;

use arbor_model::{Error, PropertyMap, Status, Value};
use tracing::debug;

use super::*;
use crate::handshake::Version;
use crate::message;
use crate::transport::MessageWriter;

impl<B: Backend> Conn<B> {
    pub(super) fn write_failure(&mut self, status: Status, message: &str) {
        let meta = failure_metadata(
            self.version(),
            status.code(),
            status.gql_status(),
            status.classification(),
            message,
        );
        let d = self.dialect;
        let _ = self.writer.message(|b| message::write_failure(b, &meta, d));
    }

    /// A request failed: FAILURE, then FAILED (or, before login, close).
    pub(super) fn failure(&mut self, e: &Error) -> Flow {
        debug!(peer = %self.peer, "Bolt request failed: {e}");
        self.write_failure(e.status, &e.message);
        if matches!(self.state, State::Negotiation | State::Authentication) {
            return Flow::Close;
        }
        self.state = State::Failed;
        Flow::Continue
    }

    /// The client broke the protocol: FAILURE and close.
    pub(super) fn protocol_violation(&mut self, message: &str) -> Flow {
        self.write_failure(Status::RequestInvalid, message);
        Flow::Close
    }

    /// An engine call failed. If a RESET is already on its way, the failure was (most likely)
    /// caused by it: answer as the INTERRUPTED state does, with IGNORED.
    pub(super) fn engine_failure(&mut self, e: &Error) -> Flow {
        if self.pending_resets.load(Ordering::SeqCst) > 0 {
            self.state = State::Failed;
            return self.ignored();
        }
        self.failure(e)
    }
}

/// FAILURE metadata in the shape the negotiated version expects: `code` + `message` up to 5.6;
/// from 5.7 the GQL fields (`neo4j_code`, `gql_status`, `description`, `diagnostic_record`).
pub(crate) fn failure_metadata(
    version: Version,
    code: &str,
    gql_status: &str,
    classification: &str,
    message: &str,
) -> PropertyMap {
    let mut meta = PropertyMap::new();
    meta.insert("message".into(), Value::str(message));
    if !version.at_least(5, 7) {
        meta.insert("code".into(), Value::str(code));
        return meta;
    }
    let condition = match gql_status.get(..2) {
        Some("42") => "syntax error or access rule violation",
        Some("22") => "data exception",
        Some("25") => "invalid transaction state",
        Some("40") => "transaction rollback",
        Some("08") => "connection exception",
        Some("51") => "system configuration or operation exception",
        _ => "general processing exception",
    };
    let mut diag = default_diagnostic_record();
    diag.insert("_classification".into(), Value::str(classification));
    meta.insert("neo4j_code".into(), Value::str(code));
    meta.insert("gql_status".into(), Value::str(gql_status));
    meta.insert("description".into(), Value::from(format!("error: {condition}. {message}")));
    meta.insert("diagnostic_record".into(), Value::Map(diag));
    meta
}

/// Writes one message directly (used for refusing connections over the limit).
pub(crate) fn write_single_failure(
    mut out: impl Write,
    version: Version,
    code: &str,
    gql_status: &str,
    message: &str,
) -> io::Result<()> {
    let meta = failure_metadata(version, code, gql_status, "TRANSIENT_ERROR", message);
    let mut w = MessageWriter::new(&mut out, 1024);
    let _ = w.message(|b| message::write_failure(b, &meta, dialect_for(version)));
    w.flush()
}

pub(super) fn default_diagnostic_record() -> PropertyMap {
    let mut d = PropertyMap::new();
    d.insert("OPERATION".into(), Value::str(""));
    d.insert("OPERATION_CODE".into(), Value::str("0"));
    d.insert("CURRENT_SCHEMA".into(), Value::str("/"));
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::Value;

    #[test]
    fn failure_metadata_has_the_fields_of_each_version() {
        let old = failure_metadata(Version::new(5, 6), "Neo.X.Y.Z", "42001", "CLIENT_ERROR", "m");
        assert_eq!(old.keys().collect::<Vec<_>>(), vec!["code", "message"]);
        let new = failure_metadata(Version::new(5, 7), "Neo.X.Y.Z", "42001", "CLIENT_ERROR", "m");
        let mut keys: Vec<_> = new.keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            vec!["description", "diagnostic_record", "gql_status", "message", "neo4j_code"]
        );
        assert!(matches!(new.get("description"), Some(Value::String(d))
            if d.starts_with("error: syntax error or access rule violation")));
    }
}
