//! Neo4j's Query API v2: `POST /db/{name}/query/v2` (an implicit transaction), and explicit
//! transactions under `/db/{name}/query/v2/tx` (open, run, commit, `DELETE` to roll back).
//!
//! Request body: `{"statement": ..., "parameters": {...}, "includeCounters": bool,
//! "bookmarks": [...], "accessMode": "READ"|"WRITE"}`. A successful answer is `202 Accepted`
//! with `{"data": {"fields": [...], "values": [[...], ...]}, "bookmarks": [...]}` plus
//! `counters` (if asked), `notifications`, `queryPlan`/`profiledQueryPlan` (EXPLAIN/PROFILE)
//! and, inside an explicit transaction, `transaction: {id, expires}`. A failure is
//! `{"errors": [{"code": "Neo.ClientError...", "message": ...}]}` with the code Bolt would
//! send; an error inside an explicit transaction rolls it back and forgets it, as in Neo4j.
//! Results are collected whole before the answer is written (as Neo4j's Query API does); the
//! rows count against the transaction's memory limit while they are built.

use std::net::IpAddr;
use std::sync::Arc;

use arbor_engine::{AccessMode, PullOutcome, Session, Summary, TxConfig};
use arbor_model::{Error, PropertyMap, Status};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Map, Value as Json};

use crate::json;
use crate::{ApiError, AppState};

/// `application/vnd.neo4j.query` (any version) in `Accept` asks for typed JSON out; in
/// `Content-Type`, parameters are typed JSON.
pub const TYPED_MEDIA: &str = "application/vnd.neo4j.query";

/// What one request asks for.
pub struct Request {
    statement: Option<String>,
    parameters: PropertyMap,
    include_counters: bool,
    access_mode: AccessMode,
    bookmarks: Vec<String>,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::RequestInvalid, message)
}

/// Parses a request body (empty is allowed where no statement is needed).
pub fn parse_request(body: &[u8], typed_in: bool) -> Result<Request, Error> {
    let mut req = Request {
        statement: None,
        parameters: PropertyMap::new(),
        include_counters: false,
        access_mode: AccessMode::Write,
        bookmarks: Vec::new(),
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(req);
    }
    let j: Json = serde_json::from_slice(body)
        .map_err(|e| invalid(format!("the request body is not valid JSON: {e}")))?;
    let Json::Object(m) = j else { return Err(invalid("the request body must be a JSON object")) };
    for (key, v) in &m {
        match key.as_str() {
            "statement" => {
                req.statement = Some(
                    v.as_str().ok_or_else(|| invalid("`statement` must be a string"))?.to_string(),
                )
            }
            "parameters" => {
                let Json::Object(p) = v else {
                    if v.is_null() {
                        continue;
                    }
                    return Err(invalid("`parameters` must be a JSON object"));
                };
                let mut entries = Vec::with_capacity(p.len());
                for (k, x) in p {
                    let value = if typed_in { json::from_typed(x)? } else { json::from_plain(x) };
                    entries.push((k.as_str().into(), value));
                }
                req.parameters = PropertyMap::from_entries(entries);
            }
            "includeCounters" => req.include_counters = v.as_bool().unwrap_or(false),
            "accessMode" => {
                req.access_mode = match v.as_str().map(str::to_ascii_uppercase).as_deref() {
                    Some("READ") => AccessMode::Read,
                    Some("WRITE") => AccessMode::Write,
                    _ => return Err(invalid("`accessMode` must be \"READ\" or \"WRITE\"")),
                }
            }
            "bookmarks" => {
                let items = v.as_array().ok_or_else(|| invalid("`bookmarks` must be an array"))?;
                for b in items {
                    let s = b.as_str().ok_or_else(|| invalid("a bookmark must be a string"))?;
                    req.bookmarks.push(s.to_string());
                }
            }
            "impersonatedUser" if v.is_null() => {}
            "impersonatedUser" => {
                return Err(Error::new(
                    Status::Unauthorized,
                    "Impersonation is not supported by this server.",
                ))
            }
            // Accepted and ignored, as the server has one runtime and no cluster.
            "maxExecutionTime" | "routing" => {}
            other => return Err(invalid(format!("unknown field `{other}` in the request body"))),
        }
    }
    Ok(req)
}

impl Request {
    pub fn statement(&self) -> Option<&str> {
        self.statement.as_deref()
    }

    pub fn tx_config(&self, database: &str) -> TxConfig {
        TxConfig {
            mode: self.access_mode,
            bookmarks: self.bookmarks.clone(),
            database: Some(database.to_string()),
            ..TxConfig::default()
        }
    }
}

/// Runs the request's statement in `session` and collects the answer's fields into `out`.
pub fn execute(
    session: &mut Session,
    req: &Request,
    config: TxConfig,
    typed: bool,
    out: &mut Map<String, Json>,
) -> Result<(), Error> {
    let Some(statement) = req.statement.as_deref() else { return Ok(()) };
    let info = session.run(statement, req.parameters.clone(), config)?;
    let mut values = Vec::new();
    let mut w = json::JsonWriter::new(typed);
    let outcome = session.pull_records(None, -1, &mut |record| {
        record.write(&mut w)?;
        values.push(Json::Array(w.take()?));
        Ok(())
    })?;
    let PullOutcome::Done(summary) = outcome else {
        return Err(Error::internal("a result pulled whole has more records"));
    };
    out.insert("data".into(), json!({"fields": info.fields, "values": values}));
    summary_fields(&summary, req.include_counters, out)
}

fn summary_fields(
    s: &Summary,
    include_counters: bool,
    out: &mut Map<String, Json>,
) -> Result<(), Error> {
    if include_counters {
        let c = &s.stats;
        let updates = c.nodes_created
            + c.nodes_deleted
            + c.relationships_created
            + c.relationships_deleted
            + c.properties_set
            + c.labels_added
            + c.labels_removed
            + c.indexes_added
            + c.indexes_removed
            + c.constraints_added
            + c.constraints_removed;
        out.insert(
            "counters".into(),
            json!({
                "containsUpdates": updates > 0,
                "nodesCreated": c.nodes_created,
                "nodesDeleted": c.nodes_deleted,
                "propertiesSet": c.properties_set,
                "relationshipsCreated": c.relationships_created,
                "relationshipsDeleted": c.relationships_deleted,
                "labelsAdded": c.labels_added,
                "labelsRemoved": c.labels_removed,
                "indexesAdded": c.indexes_added,
                "indexesRemoved": c.indexes_removed,
                "constraintsAdded": c.constraints_added,
                "constraintsRemoved": c.constraints_removed,
                "containsSystemUpdates": c.system_updates > 0,
                "systemUpdates": c.system_updates,
            }),
        );
    }
    if !s.notifications.is_empty() {
        let notes: Vec<Json> = s
            .notifications
            .iter()
            .map(|n| {
                let mut m = json!({
                    "code": n.code,
                    "title": n.title,
                    "description": n.description,
                    "severity": n.severity,
                });
                if let Some((line, column, offset)) = n.position {
                    m["position"] = json!({"offset": offset, "line": line, "column": column});
                }
                m
            })
            .collect();
        out.insert("notifications".into(), Json::Array(notes));
    }
    if let Some(plan) = &s.plan {
        let key = if s.profiled { "profiledQueryPlan" } else { "queryPlan" };
        let plan = json::values_json(std::slice::from_ref(plan), false)?.pop();
        out.insert(key.into(), plan.unwrap_or_default());
    }
    if let Some(b) = &s.bookmark {
        out.insert("bookmarks".into(), json!([b]));
    }
    Ok(())
}

/// The HTTP status a failure is answered with.
pub fn http_status(code: &str) -> StatusCode {
    match code {
        "Neo.ClientError.Security.Unauthorized"
        | "Neo.ClientError.Security.AuthenticationRateLimit" => StatusCode::UNAUTHORIZED,
        "Neo.ClientError.Security.Forbidden" | "Neo.ClientError.Security.CredentialsExpired" => {
            StatusCode::FORBIDDEN
        }
        "Neo.ClientError.Transaction.TransactionNotFound"
        | "Neo.ClientError.Database.DatabaseNotFound" => StatusCode::NOT_FOUND,
        c if c.starts_with("Neo.ClientError.") => StatusCode::BAD_REQUEST,
        c if c.starts_with("Neo.TransientError.") => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Whether the client asked for typed JSON (`Accept`) and sends typed parameters
/// (`Content-Type`).
pub fn media(headers: &HeaderMap) -> (bool, bool) {
    let has = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains(TYPED_MEDIA))
    };
    (has(axum::http::header::ACCEPT), has(axum::http::header::CONTENT_TYPE))
}

/// A request's identity, read once per request.
pub struct Caller {
    pub user: Option<arbor_engine::CurrentUser>,
    pub peer: IpAddr,
}

impl Caller {
    pub fn name(&self) -> String {
        self.user.as_ref().map_or_else(String::new, |u| u.name.clone())
    }
}

/// A new session for `caller`.
pub(crate) fn session(state: &Arc<AppState>, caller: &Caller) -> Result<Session, ApiError> {
    let db = state.database()?;
    let mut s = db.session();
    s.set_user(caller.user.clone());
    let n = state.next_connection();
    s.set_client(&format!("http-{n}"), &caller.peer.to_string());
    Ok(s)
}
