//! Server lifecycle for the benchmarks: start Arbor (`arbor serve`) or Neo4j
//! (`neo4j-anchor serve`) on a free port over a data directory, wait until it answers Bolt,
//! read its peak RSS and CPU time, stop it (SIGTERM, then SIGKILL after a grace period), and
//! restore a pristine copy of the loaded data before every run, so writes never accumulate
//! across runs (mgBench restarts the database from its snapshot/dump for every run).
//!
//! An in-process variant (the Bolt server on a thread of this process, over a file-backed
//! database) serves the tests; its RSS and CPU are then those of the whole test process.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_model::{Error, Result, Status};

use crate::metrics;

/// Which server to run.
#[derive(Clone, Debug)]
pub enum ServerKind {
    /// `BINARY serve --data DIR --listen 127.0.0.1:PORT [--durability D]`.
    Arbor { binary: PathBuf, durability: Option<String> },
    /// `ANCHOR serve --port PORT --data DIR --heap HEAP`.
    Neo4j { anchor: PathBuf, heap: String },
    /// The Bolt server on a thread of this process (tests).
    InProcess,
    /// A server someone else runs at `uri` (no restarts; `pid` for RSS/CPU if known).
    External { uri: String, pid: Option<u32> },
}

impl ServerKind {
    pub fn name(&self) -> &'static str {
        match self {
            ServerKind::Arbor { .. } | ServerKind::InProcess => "arbor",
            ServerKind::Neo4j { .. } => "neo4j",
            ServerKind::External { .. } => "external",
        }
    }
}

/// Resource use of one server lifetime.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerStats {
    pub peak_rss_kib: u64,
    pub cpu_seconds: f64,
}

/// A running server.
pub struct Server {
    pub uri: String,
    pub pid: u32,
    child: Option<Child>,
    in_process: Option<(Arc<AtomicBool>, JoinHandle<()>, arbor_engine::Database)>,
    cpu_at_start: f64,
    log: Option<PathBuf>,
}

fn io(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Status::Io, format!("{what}: {e}"))
}

/// A free TCP port on the loopback interface (Neo4j: the anchor's 17687-17699 range first).
pub fn free_port(prefer: Option<std::ops::RangeInclusive<u16>>) -> Result<u16> {
    if let Some(range) = prefer {
        for p in range {
            if TcpListener::bind(("127.0.0.1", p)).is_ok() {
                return Ok(p);
            }
        }
    }
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| io("finding a free port", e))?;
    Ok(l.local_addr().map_err(|e| io("finding a free port", e))?.port())
}

impl Server {
    /// Starts a server over `data` and waits until it accepts a Bolt session (at most
    /// `timeout`).
    pub fn start(kind: &ServerKind, data: &Path, timeout: Duration) -> Result<Server> {
        match kind {
            ServerKind::External { uri, pid } => {
                let server = Server {
                    uri: uri.clone(),
                    pid: pid.unwrap_or(0),
                    child: None,
                    in_process: None,
                    cpu_at_start: 0.0,
                    log: None,
                };
                server.wait_ready(timeout, None)?;
                Ok(server)
            }
            ServerKind::InProcess => {
                let port = free_port(None)?;
                let listener = TcpListener::bind(("127.0.0.1", port))
                    .map_err(|e| io("binding the in-process server", e))?;
                let addr = listener.local_addr().map_err(|e| io("local address", e))?;
                let db = arbor_engine::Database::open(data, Default::default())?;
                let config = arbor_bolt::ServerConfig {
                    listen: addr,
                    auth: None,
                    max_connections: 1000,
                    advertised_address: None,
                    tls: None,
                };
                let stop = Arc::new(AtomicBool::new(false));
                let flag = stop.clone();
                let db2 = db.clone();
                let handle = std::thread::spawn(move || {
                    let _ = arbor_bolt::serve_listener(listener, db2, config, flag);
                });
                let server = Server {
                    uri: format!("bolt://{addr}"),
                    pid: std::process::id(),
                    child: None,
                    in_process: Some((stop, handle, db)),
                    cpu_at_start: metrics::self_cpu_seconds().unwrap_or(0.0),
                    log: None,
                };
                server.wait_ready(timeout, None)?;
                Ok(server)
            }
            ServerKind::Arbor { binary, durability } => {
                let port = free_port(None)?;
                std::fs::create_dir_all(data).map_err(|e| io("creating the data dir", e))?;
                let log = data.with_extension("log");
                let out = File::create(&log).map_err(|e| io("creating the server log", e))?;
                let err = out.try_clone().map_err(|e| io("server log", e))?;
                let mut cmd = Command::new(binary);
                cmd.arg("serve").arg("--data").arg(data);
                cmd.arg("--listen").arg(format!("127.0.0.1:{port}"));
                if let Some(d) = durability {
                    cmd.arg("--durability").arg(d);
                }
                cmd.env("ARBOR_LOG", "warn");
                let child = cmd
                    .stdin(Stdio::null())
                    .stdout(out)
                    .stderr(err)
                    .spawn()
                    .map_err(|e| io(&format!("starting {}", binary.display()), e))?;
                let mut server = Server {
                    uri: format!("bolt://127.0.0.1:{port}"),
                    pid: child.id(),
                    child: Some(child),
                    in_process: None,
                    cpu_at_start: 0.0,
                    log: Some(log),
                };
                if let Err(e) = server.wait_ready(timeout, None) {
                    server.kill();
                    return Err(e);
                }
                Ok(server)
            }
            ServerKind::Neo4j { anchor, heap } => {
                let port = free_port(Some(17687..=17699))?;
                let log = data.with_extension("log");
                let out = File::create(&log).map_err(|e| io("creating the server log", e))?;
                let err = out.try_clone().map_err(|e| io("server log", e))?;
                let child = Command::new(anchor)
                    .arg("serve")
                    .arg("--port")
                    .arg(port.to_string())
                    .arg("--data")
                    .arg(data)
                    .arg("--heap")
                    .arg(heap)
                    .stdin(Stdio::null())
                    .stdout(out)
                    .stderr(err)
                    .spawn()
                    .map_err(|e| io(&format!("starting {}", anchor.display()), e))?;
                let mut server = Server {
                    uri: format!("bolt://127.0.0.1:{port}"),
                    pid: child.id(),
                    child: Some(child),
                    in_process: None,
                    cpu_at_start: 0.0,
                    log: Some(log.clone()),
                };
                // The anchor prints a READY line once the database is online (the port opens
                // earlier than that).
                if let Err(e) = server.wait_ready(timeout, Some(&log)) {
                    server.kill();
                    return Err(e);
                }
                Ok(server)
            }
        }
    }

    fn wait_ready(&self, timeout: Duration, ready_line_in: Option<&Path>) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut last = String::from("not started");
        loop {
            let line_ok = match ready_line_in {
                Some(log) => std::fs::read_to_string(log)
                    .map(|t| t.contains("NEO4J_ANCHOR_READY"))
                    .unwrap_or(false),
                None => true,
            };
            if line_ok {
                let cfg =
                    ClientConfig { timeout: Some(Duration::from_secs(5)), ..Default::default() };
                match Client::connect(&self.uri, &cfg) {
                    Ok(mut c) => match c.run_all("RETURN 1", &Default::default()) {
                        Ok(_) => return Ok(()),
                        Err(e) => last = e.to_string(),
                    },
                    Err(e) => last = e.to_string(),
                }
            }
            if Instant::now() > deadline {
                let tail = self.log_tail();
                return Err(Error::new(
                    Status::Io,
                    format!("server at {} not ready after {timeout:?}: {last}{tail}", self.uri),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tail(&self) -> String {
        let Some(log) = &self.log else { return String::new() };
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(10);
        format!("\n--- {} (tail) ---\n{}", log.display(), lines[start..].join("\n"))
    }

    /// Peak RSS and CPU so far.
    pub fn stats(&self) -> ServerStats {
        ServerStats {
            peak_rss_kib: metrics::peak_rss_kib(self.pid).unwrap_or(0),
            cpu_seconds: metrics::cpu_seconds(self.pid).unwrap_or(0.0) - self.cpu_at_start,
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the server cleanly and returns its resource use over its lifetime.
    pub fn stop(mut self) -> Result<ServerStats> {
        let stats = self.stats();
        if let Some((flag, handle, db)) = self.in_process.take() {
            flag.store(true, Ordering::SeqCst);
            let _ = handle.join();
            db.shutdown()?;
            return Ok(stats);
        }
        if let Some(mut child) = self.child.take() {
            // SIGTERM for a clean shutdown (checkpoint), without unsafe code: kill(1).
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
        Ok(stats)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((flag, handle, _db)) = self.in_process.take() {
            flag.store(true, Ordering::SeqCst);
            let _ = handle.join();
        }
        self.kill();
    }
}

/// Replaces `dst` with a copy of `src` (`cp -a --sparse=always`: Neo4j preallocates its
/// transaction log, and holes keep the copy cheap).
pub fn restore(src: &Path, dst: &Path) -> Result<()> {
    if dst.exists() {
        std::fs::remove_dir_all(dst).map_err(|e| io(&format!("removing {}", dst.display()), e))?;
    }
    let status = Command::new("cp")
        .arg("-a")
        .arg("--sparse=always")
        .arg(src)
        .arg(dst)
        .status()
        .map_err(|e| io("running cp", e))?;
    if !status.success() {
        return Err(Error::new(
            Status::Io,
            format!("copying {} to {} failed", src.display(), dst.display()),
        ));
    }
    Ok(())
}
