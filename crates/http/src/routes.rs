//! The router and its handlers. Each Query API handler checks the credentials and runs the
//! engine work on the blocking pool, then answers `202 Accepted` with the JSON body, or the
//! error body with the status `query_api::http_status` maps its code to.

use std::net::SocketAddr;
use std::sync::Arc;

use arbor_engine::metrics;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{json, Map, Value as Json};

use crate::query_api::{self, Caller};
use crate::{ApiError, AppState};

/// The client's address, attached to each connection's requests.
#[derive(Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

pub(crate) fn router(state: Arc<AppState>, max_body_bytes: usize) -> Router {
    Router::new()
        .route("/", get(discovery))
        .route("/health/live", get(live))
        .route("/health/ready", get(ready))
        .route("/metrics", get(prometheus))
        .route("/db/{db}/query/v2", post(query))
        .route("/db/{db}/query/v2/tx", post(open_tx))
        .route("/db/{db}/query/v2/tx/{id}", post(run_in_tx).delete(rollback_tx))
        .route("/db/{db}/query/v2/tx/{id}/commit", post(commit_tx))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(crate::browser::serve))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

fn json_response(status: StatusCode, body: Json) -> Response {
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

pub(crate) fn error_response(e: &ApiError) -> Response {
    let status = query_api::http_status(&e.code);
    let mut r = json_response(status, json!({"errors": [{"code": e.code, "message": e.message}]}));
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"Neo4j\""));
    }
    r
}

async fn not_found() -> Response {
    metrics::bump(&metrics::SERVER.http_requests);
    let e = ApiError {
        code: "Neo.ClientError.Request.Invalid".into(),
        message: "No such endpoint.".into(),
    };
    let mut r = error_response(&e);
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

fn host_of(headers: &HeaderMap) -> String {
    headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost:7474").to_string()
}

async fn discovery(State(st): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    metrics::bump(&metrics::SERVER.http_requests);
    let scheme = if st.https { "https" } else { "http" };
    let host = host_of(&headers);
    let mut doc = json!({
        "query": format!("{scheme}://{host}/db/{{databaseName}}/query/v2"),
        "transaction": format!("{scheme}://{host}/db/{{databaseName}}/query/v2/tx"),
        "neo4j_version": arbor_engine::NEO4J_COMPAT_VERSION,
        "neo4j_edition": "community",
    });
    if let Some(bolt) = &st.bolt_address {
        doc["bolt_routing"] = json!(format!("neo4j://{bolt}"));
        doc["bolt_direct"] = json!(format!("bolt://{bolt}"));
    }
    json_response(StatusCode::OK, doc)
}

async fn live() -> Response {
    metrics::bump(&metrics::SERVER.http_requests);
    json_response(StatusCode::OK, json!({"status": "up"}))
}

async fn ready(State(st): State<Arc<AppState>>) -> Response {
    metrics::bump(&metrics::SERVER.http_requests);
    match st.database() {
        Ok(_) => json_response(StatusCode::OK, json!({"status": "ready"})),
        Err(e) => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "unavailable", "message": e.message}),
        ),
    }
}

async fn prometheus(State(st): State<Arc<AppState>>) -> Response {
    metrics::bump(&metrics::SERVER.http_requests);
    let text = metrics::render(st.db.get().map(|db| db.gauges()));
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// Runs `work` on the blocking pool after authenticating the request.
async fn blocking<F>(st: Arc<AppState>, peer: Peer, headers: &HeaderMap, work: F) -> Response
where
    F: FnOnce(
            &Arc<AppState>,
            Caller,
        ) -> Result<(Map<String, Json>, Vec<(&'static str, String)>), ApiError>
        + Send
        + 'static,
{
    metrics::bump(&metrics::SERVER.http_requests);
    let authorization =
        headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok()).map(str::to_string);
    let joined = tokio::task::spawn_blocking(move || {
        let user = st.auth.authenticate(authorization.as_deref(), peer.0.ip())?;
        work(&st, Caller { user, peer: peer.0.ip() })
    })
    .await;
    match joined {
        Ok(Ok((body, extra_headers))) => {
            let mut r = json_response(StatusCode::ACCEPTED, Json::Object(body));
            for (name, value) in extra_headers {
                if let Ok(v) = HeaderValue::from_str(&value) {
                    r.headers_mut().insert(name, v);
                }
            }
            r
        }
        Ok(Err(e)) => error_response(&e),
        Err(e) => error_response(&ApiError {
            code: "Neo.DatabaseError.General.UnknownError".into(),
            message: format!("the request failed inside the server: {e}"),
        }),
    }
}

async fn query(
    State(st): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (typed_out, typed_in) = query_api::media(&headers);
    blocking(st, peer, &headers, move |st, caller| {
        let req = query_api::parse_request(&body, typed_in)?;
        if req.statement().is_none() {
            return Err(ApiError {
                code: "Neo.ClientError.Request.Invalid".into(),
                message: "the request body needs a `statement`".into(),
            });
        }
        let mut session = query_api::session(st, &caller)?;
        let mut out = Map::new();
        query_api::execute(&mut session, &req, req.tx_config(&db), typed_out, &mut out)?;
        out.entry("bookmarks").or_insert(json!([]));
        Ok((out, Vec::new()))
    })
    .await
}

/// `neo4j-cluster-affinity`: which server holds the transaction (base64 of its address).
fn affinity(st: &AppState) -> Vec<(&'static str, String)> {
    vec![("neo4j-cluster-affinity", st.affinity.clone())]
}

async fn open_tx(
    State(st): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    Path(db): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (typed_out, typed_in) = query_api::media(&headers);
    blocking(st, peer, &headers, move |st, caller| {
        let req = query_api::parse_request(&body, typed_in)?;
        let mut session = query_api::session(st, &caller)?;
        let config = req.tx_config(&db);
        session.begin(config.clone())?;
        let mut out = Map::new();
        // The statement runs before the transaction is registered: a failure rolls it back.
        query_api::execute(&mut session, &req, config, typed_out, &mut out)?;
        out.entry("bookmarks").or_insert(json!([]));
        let (id, tx) = st.txns.insert(session, caller.name(), db)?;
        let expires = tx.lock().expires_text();
        out.insert("transaction".into(), json!({"id": id, "expires": expires}));
        Ok((out, affinity(st)))
    })
    .await
}

/// The reply so far and how the statement went.
type Ran = (Map<String, Json>, Result<(), arbor_model::Error>);

/// Reads the request in `body` and runs its statement in the open transaction on `session` (of
/// database `db`): the reply so far and how the statement went. `Err`: the request itself could
/// not be read (the transaction is left as it was).
fn run_body(
    session: &mut arbor_engine::Session,
    body: &[u8],
    db: &str,
    (typed_out, typed_in): (bool, bool),
) -> Result<Ran, arbor_model::Error> {
    let req = query_api::parse_request(body, typed_in)?;
    let mut out = Map::new();
    let ran = query_api::execute(session, &req, req.tx_config(db), typed_out, &mut out);
    Ok((out, ran))
}

async fn run_in_tx(
    State(st): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let media = query_api::media(&headers);
    blocking(st, peer, &headers, move |st, caller| {
        let tx = st.txns.get(&id, &caller.name(), &db)?;
        let mut t = tx.lock();
        let (mut out, ran) = run_body(&mut t.session, &body, &db, media)?;
        if let Err(e) = ran {
            // As Neo4j: an error rolls the transaction back and ends it.
            t.session.reset();
            drop(t);
            st.txns.remove(&id);
            return Err(e.into());
        }
        st.txns.touch(&mut t);
        out.entry("bookmarks").or_insert(json!([]));
        out.insert("transaction".into(), json!({"id": id, "expires": t.expires_text()}));
        Ok((out, affinity(st)))
    })
    .await
}

async fn commit_tx(
    State(st): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let media = query_api::media(&headers);
    blocking(st, peer, &headers, move |st, caller| {
        let tx = st.txns.get(&id, &caller.name(), &db)?;
        st.txns.remove(&id);
        let mut t = tx.lock();
        let (mut out, ran) = run_body(&mut t.session, &body, &db, media)?;
        let committed = ran.and_then(|()| t.session.commit());
        match committed {
            Ok(bookmark) => {
                out.insert("bookmarks".into(), json!([bookmark]));
                Ok((out, affinity(st)))
            }
            Err(e) => {
                t.session.reset();
                Err(e.into())
            }
        }
    })
    .await
}

async fn rollback_tx(
    State(st): State<Arc<AppState>>,
    Extension(peer): Extension<Peer>,
    Path((db, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    blocking(st, peer, &headers, move |st, caller| {
        let tx = st.txns.get(&id, &caller.name(), &db)?;
        st.txns.remove(&id);
        let mut t = tx.lock();
        t.session.rollback()?;
        let mut out = Map::new();
        out.insert("bookmarks".into(), json!([]));
        Ok((out, affinity(st)))
    })
    .await
}
