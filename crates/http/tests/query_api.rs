//! The HTTP port end to end over a real socket (a minimal HTTP/1.1 client below): Neo4j's
//! documented Query API requests, explicit transactions and their expiry, readiness before and
//! after the database is handed over, basic auth, and the metrics text.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use arbor_engine::logins::{LoginGuard, LoginLimits};
use arbor_engine::{Database, UserStore};
use arbor_http::{HttpConfig, HttpServer};
use serde_json::{json, Value};

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if !body.is_empty() && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
        req.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Reply { status, headers: head.to_ascii_lowercase(), body: body.to_string() }
}

fn start(config: HttpConfig, db: Option<Database>) -> HttpServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = HttpServer::start(listener, config).unwrap();
    if let Some(db) = db {
        server.set_database(db);
    }
    server
}

fn config() -> HttpConfig {
    HttpConfig::new(Arc::new(LoginGuard::new(LoginLimits::default())))
}

#[test]
fn documented_query_and_typed_json() {
    let server = start(config(), Some(Database::in_memory()));
    let a = server.local_addr();
    // Neo4j's "Query the database" example.
    let r = request(
        a,
        "POST",
        "/db/neo4j/query/v2",
        Some(json!({"statement": "MERGE (n:Person {name: $name, age: $age}) RETURN n AS alice",
                    "parameters": {"name": "Alice", "age": 42}})),
        &[("Authorization", "Basic bmVvNGo6dmVyeXNlY3JldA==")],
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let b = r.json();
    assert_eq!(b["data"]["fields"], json!(["alice"]));
    let alice = &b["data"]["values"][0][0];
    assert_eq!(alice["labels"], json!(["Person"]));
    assert_eq!(alice["properties"], json!({"age": 42, "name": "Alice"}));
    assert_eq!(b["bookmarks"].as_array().map(Vec::len), Some(1));
    // Typed JSON in and out.
    let typed = "application/vnd.neo4j.query.v1.1";
    let r = request(
        a,
        "POST",
        "/db/neo4j/query/v2",
        Some(json!({"statement": "RETURN $n + 1 AS n, [true, 'x'] AS l",
                    "parameters": {"n": {"$type": "Integer", "_value": "41"}}})),
        &[("Accept", typed), ("Content-Type", typed)],
    );
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(
        r.json()["data"]["values"][0],
        json!([{"$type": "Integer", "_value": "42"},
               {"$type": "List", "_value": [{"$type": "Boolean", "_value": true},
                                            {"$type": "String", "_value": "x"}]}])
    );
    // A syntax error: 400 with Neo4j's code.
    let r = request(a, "POST", "/db/neo4j/query/v2", Some(json!({"statement": "RETURN ("})), &[]);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["errors"][0]["code"], "Neo.ClientError.Statement.SyntaxError");
    // Not JSON at all.
    let r = request(a, "POST", "/db/neo4j/query/v2", Some(json!("x")), &[]);
    assert_eq!(r.json()["errors"][0]["code"], "Neo.ClientError.Request.Invalid");
}

#[test]
fn explicit_transactions_commit_roll_back_and_expire() {
    let mut c = config();
    c.transaction_idle_timeout = Duration::from_millis(1500);
    let db = Database::in_memory();
    let server = start(c, Some(db.clone()));
    let a = server.local_addr();
    let count = |label: &str| {
        let r = request(
            a,
            "POST",
            "/db/neo4j/query/v2",
            Some(json!({"statement": format!("MATCH (n:{label}) RETURN count(n)")})),
            &[],
        );
        r.json()["data"]["values"][0][0].as_i64().unwrap()
    };
    let r = request(
        a,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some(json!({"statement": "CREATE (:T1)"})),
        &[],
    );
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.headers.contains("neo4j-cluster-affinity"));
    let id = r.json()["transaction"]["id"].as_str().unwrap().to_string();
    assert_eq!(count("T1"), 0, "uncommitted writes are invisible outside");
    let r = request(a, "POST", &format!("/db/neo4j/query/v2/tx/{id}/commit"), None, &[]);
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(count("T1"), 1);

    let r = request(
        a,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some(json!({"statement": "CREATE (:T2)"})),
        &[],
    );
    let id = r.json()["transaction"]["id"].as_str().unwrap().to_string();
    let r = request(a, "DELETE", &format!("/db/neo4j/query/v2/tx/{id}"), None, &[]);
    assert_eq!(r.status, 202);
    assert_eq!(count("T2"), 0);

    // Idle past the timeout: rolled back and forgotten.
    let r = request(
        a,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some(json!({"statement": "CREATE (:T3)"})),
        &[],
    );
    let id = r.json()["transaction"]["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(3000));
    let r = request(a, "POST", &format!("/db/neo4j/query/v2/tx/{id}/commit"), None, &[]);
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["errors"][0]["code"], "Neo.ClientError.Transaction.TransactionNotFound");
    assert_eq!(count("T3"), 0);
}

#[test]
fn ready_only_once_the_database_is_handed_over() {
    let server = start(config(), None);
    let a = server.local_addr();
    assert_eq!(request(a, "GET", "/health/live", None, &[]).status, 200);
    assert_eq!(request(a, "GET", "/health/ready", None, &[]).status, 503);
    let r = request(a, "POST", "/db/neo4j/query/v2", Some(json!({"statement": "RETURN 1"})), &[]);
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["errors"][0]["code"], "Neo.TransientError.General.DatabaseUnavailable");
    server.set_database(Database::in_memory());
    assert_eq!(request(a, "GET", "/health/ready", None, &[]).status, 200);
    let metrics = request(a, "GET", "/metrics", None, &[]);
    assert!(metrics.body.contains("# TYPE arbor_query_duration_seconds histogram"));
    assert!(metrics.body.contains("arbor_memory_pool_used_bytes"));
}

#[test]
fn basic_auth_checks_the_user_store_and_the_limiter() {
    let mut users = UserStore::in_memory();
    users.set_password("neo4j", "verysecret").unwrap();
    let mut c = config();
    c.auth = Some(users);
    let server = start(c, Some(Database::in_memory()));
    let a = server.local_addr();
    let q = || Some(json!({"statement": "RETURN 1 AS one"}));
    let r = request(a, "POST", "/db/neo4j/query/v2", q(), &[]);
    assert_eq!(r.status, 401);
    assert!(r.headers.contains("www-authenticate: basic"));
    let ok = request(
        a,
        "POST",
        "/db/neo4j/query/v2",
        q(),
        &[("Authorization", "Basic bmVvNGo6dmVyeXNlY3JldA==")],
    );
    assert_eq!(ok.status, 202, "{}", ok.body);
    // Three wrong passwords lock the user (Bolt's limiter), even the right one is refused.
    let wrong = "Basic bmVvNGo6d3Jvbmc="; // neo4j:wrong
    for _ in 0..3 {
        assert_eq!(
            request(a, "POST", "/db/neo4j/query/v2", q(), &[("Authorization", wrong)]).status,
            401
        );
    }
    let r = request(a, "POST", "/db/neo4j/query/v2", q(), &[("Authorization", wrong)]);
    assert_eq!(r.json()["errors"][0]["code"], "Neo.ClientError.Security.AuthenticationRateLimit");
}
