//! The browser page on the HTTP port over a real socket: `/` redirects a browser (and only a
//! browser) to `/browser/`, the embedded page and its assets come with their content types,
//! revalidation by ETag answers 304, the bundle is sent gzip-compressed to clients that accept it,
//! and an unknown file under `/browser/` is a 404.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use arbor_engine::logins::{LoginGuard, LoginLimits};
use arbor_http::{HttpConfig, HttpServer};

struct Reply {
    status: u16,
    /// Header lines, names lower-cased.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect::<Vec<_>>();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(k, v)| k == "transfer-encoding" && v == "chunked") {
        body = dechunk(&body);
    }
    Reply { status, headers, body }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 2 + size + 2..];
    }
}

fn start() -> HttpServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = HttpConfig::new(Arc::new(LoginGuard::new(LoginLimits::default())));
    config.bolt_address = Some("127.0.0.1:7687".into());
    HttpServer::start(listener, config).unwrap()
}

#[test]
fn root_redirects_only_browsers() {
    let server = start();
    let a = server.local_addr();
    let html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let r = get(a, "/", &[("Accept", html)]);
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/browser/"));
    let r = get(a, "/browser", &[]);
    assert_eq!((r.status, r.header("location")), (303, Some("/browser/")));
    // Drivers and curl still get the discovery document.
    for accept in [None, Some("application/json"), Some("*/*")] {
        let headers: Vec<_> = accept.map(|v| ("Accept", v)).into_iter().collect();
        let r = get(a, "/", &headers);
        assert_eq!(r.status, 200, "Accept {accept:?}");
        let doc: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(doc["bolt_direct"], "bolt://127.0.0.1:7687");
    }
}

#[test]
fn page_and_assets_with_types_and_revalidation() {
    let server = start();
    let a = server.local_addr();
    let page = get(a, "/browser/", &[]);
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    let text = String::from_utf8(page.body.clone()).unwrap();
    assert!(text.contains("<title>Arbor Browser</title>"), "{text}");
    assert_eq!(get(a, "/browser/index.html", &[]).body, page.body);
    // Every file the page names is served, with its type.
    for (path, kind) in [("assets/app.js", "text/javascript"), ("assets/app.css", "text/css")] {
        assert!(text.contains(&format!("./{path}")), "index.html names {path}");
        let r = get(a, &format!("/browser/{path}"), &[]);
        assert_eq!(r.status, 200, "{path}");
        assert!(r.header("content-type").unwrap().starts_with(kind), "{path}");
        assert!(r.body.len() > 1000, "{path} has content");
        let etag = r.header("etag").expect("an ETag").to_string();
        let again = get(a, &format!("/browser/{path}"), &[("If-None-Match", &etag)]);
        assert_eq!(again.status, 304, "{path} revalidates");
        assert!(again.body.is_empty());
        let stale = get(a, &format!("/browser/{path}"), &[("If-None-Match", "\"other\"")]);
        assert_eq!(stale.status, 200);
    }
    let js = get(a, "/browser/assets/app.js", &[]);
    let gz = get(a, "/browser/assets/app.js", &[("Accept-Encoding", "gzip, deflate, br")]);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(&gz.body[..2], &[0x1f, 0x8b], "a gzip stream");
    assert!(gz.body.len() < js.body.len() / 2);
    let mut unpacked = Vec::new();
    flate2::read::GzDecoder::new(&gz.body[..]).read_to_end(&mut unpacked).unwrap();
    assert!(unpacked == js.body, "app.js.gz is app.js compressed (rebuild with browser/build.sh)");
    assert_eq!(js.header("content-encoding"), None);
    let missing = get(a, "/browser/nope.js", &[]);
    assert_eq!(missing.status, 404);
    assert!(String::from_utf8_lossy(&missing.body).contains("nope.js"));
}
