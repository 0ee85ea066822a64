//! The browser page (Arbor Browser) on the HTTP port: `/browser/` and its assets, embedded in the
//! binary with `include_bytes!` from `crates/http/assets/browser/` (built from `browser/` by
//! `browser/build.sh`, committed, so neither `cargo build` nor `arbor serve` needs Node), and
//! `GET /` redirected to `/browser/` when a browser asks for HTML (other clients still get the
//! discovery document).
//!
//! It is one middleware in front of the router ([`serve`]), so the router keeps a single line for
//! it. Assets have fixed names, so every answer carries `Cache-Control: no-cache` and a strong
//! ETag (SHA-256 of the content): a browser revalidates and gets `304 Not Modified` until the
//! binary changes. The JavaScript bundle is embedded gzip-compressed too, sent to clients that
//! accept gzip.

use std::sync::OnceLock;

use arbor_engine::metrics;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// Where the page lives on the HTTP port.
const PREFIX: &str = "/browser/";

/// One embedded file: its path under [`PREFIX`], content type, bytes, and gzip form if any.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
    gzip: Option<&'static [u8]>,
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../assets/browser/index.html"),
        gzip: None,
    },
    Asset {
        path: "assets/app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../assets/browser/assets/app.js"),
        gzip: Some(include_bytes!("../assets/browser/assets/app.js.gz")),
    },
    Asset {
        path: "assets/app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../assets/browser/assets/app.css"),
        gzip: None,
    },
];

/// The strong ETag of each asset (in [`ASSETS`] order), computed on first use.
fn etags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let digest = Sha256::digest(a.bytes);
                let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                format!("\"{hex}\"")
            })
            .collect()
    })
}

/// Middleware in front of every route: answers the page's paths, passes everything else on.
pub(crate) async fn serve(req: Request, next: Next) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return next.run(req).await;
    }
    let path = req.uri().path();
    if (path == "/" && wants_html(req.headers())) || path == "/browser" {
        metrics::bump(&metrics::SERVER.http_requests);
        return redirect();
    }
    match path.strip_prefix(PREFIX) {
        Some(rest) => {
            metrics::bump(&metrics::SERVER.http_requests);
            asset(if rest.is_empty() { "index.html" } else { rest }, req.headers())
        }
        None => next.run(req).await,
    }
}

/// A browser navigating to a page sends `Accept: text/html,...`; drivers and `curl` do not.
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.split(',').any(|t| t.trim().starts_with("text/html")))
}

fn redirect() -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    r.headers_mut().insert(header::LOCATION, HeaderValue::from_static(PREFIX));
    r.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.split(',').any(|e| e.trim().split(';').next() == Some("gzip")))
}

fn asset(path: &str, headers: &HeaderMap) -> Response {
    let Some(i) = ASSETS.iter().position(|a| a.path == path) else {
        let mut r = (StatusCode::NOT_FOUND, format!("No such file in the browser page: {path}\n"))
            .into_response();
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
        return r;
    };
    let a = &ASSETS[i];
    let etag = &etags()[i];
    let mut r =
        if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == etag.as_bytes()) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            match a.gzip.filter(|_| accepts_gzip(headers)) {
                Some(gz) => {
                    let mut r = Response::new(Body::from(gz));
                    r.headers_mut()
                        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                    r
                }
                None => Response::new(Body::from(a.bytes)),
            }
        };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(a.content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if a.gzip.is_some() {
        h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    r
}
