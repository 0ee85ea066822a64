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

/// Attempts at starting a server process, each on a newly probed port.
pub const START_ATTEMPTS: usize = 3;

/// Marks a start failure caused by losing the port (the process exited before it was ready, or
/// another process answers on the port): worth another attempt on another port.
const PORT_LOST: &str = "server port lost";

/// A free TCP port on the loopback interface (Neo4j: the anchor's 17687-17699 range first).
pub fn free_port(prefer: Option<std::ops::RangeInclusive<u16>>) -> Result<u16> {
    free_port_except(prefer, &[])
}

/// [`free_port`], skipping the ports in `except` (those a failed start already tried).
fn free_port_except(prefer: Option<std::ops::RangeInclusive<u16>>, except: &[u16]) -> Result<u16> {
    if let Some(range) = prefer {
        for p in range {
            if !except.contains(&p) && TcpListener::bind(("127.0.0.1", p)).is_ok() {
                return Ok(p);
            }
        }
    }
    for _ in 0..16 {
        let l = TcpListener::bind("127.0.0.1:0").map_err(|e| io("finding a free port", e))?;
        let p = l.local_addr().map_err(|e| io("finding a free port", e))?.port();
        if !except.contains(&p) {
            return Ok(p);
        }
    }
    Err(Error::new(Status::Io, "finding a free port: the system keeps handing out tried ports"))
}

/// Whether process `pid` owns the socket listening on TCP `port` (`/proc/net/tcp{,6}` give the
/// listening socket's inode, `/proc/PID/fd` the process's sockets). `None` when `/proc` cannot
/// tell (not Linux, no permission, or no listener at all).
pub fn listens_on(pid: u32, port: u16) -> Option<bool> {
    let mut inodes: Vec<String> = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        inodes.extend(listening_inodes(&text, port));
    }
    if inodes.is_empty() {
        return None;
    }
    let fds = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("fd")).ok()?;
    for fd in fds.flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            let t = target.to_string_lossy();
            if let Some(inode) = t.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
                if inodes.iter().any(|i| i == inode) {
                    return Some(true);
                }
            }
        }
    }
    Some(false)
}

/// The inodes of the sockets listening (state `0A`) on local `port` in a `/proc/net/tcp`
/// table: `sl local_address rem_address st ... uid timeout inode`, addresses as `HEX:PORT`.
fn listening_inodes(table: &str, port: u16) -> Vec<String> {
    let want = format!("{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit(':').next()?;
            (local_port == want && *f.get(3)? == "0A").then(|| f.get(9).map(|s| s.to_string()))?
        })
        .collect()
}

impl Server {
    /// Starts a server over `data` and waits until it accepts a Bolt session (at most
    /// `timeout`).
    pub fn start(kind: &ServerKind, data: &Path, timeout: Duration) -> Result<Server> {
        match kind {
            ServerKind::External { uri, pid } => {
                let mut server = Server {
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
                let mut server = Server {
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
                std::fs::create_dir_all(data).map_err(|e| io("creating the data dir", e))?;
                Server::start_child(kind, data, timeout, |port| {
                    let mut cmd = Command::new(binary);
                    cmd.arg("serve").arg("--data").arg(data);
                    cmd.arg("--listen").arg(format!("127.0.0.1:{port}"));
                    if let Some(d) = durability {
                        cmd.arg("--durability").arg(d);
                    }
                    cmd.env("ARBOR_LOG", "warn");
                    cmd
                })
            }
            ServerKind::Neo4j { anchor, heap } => {
                Server::start_child(kind, data, timeout, |port| {
                    let mut cmd = Command::new(anchor);
                    cmd.arg("serve").arg("--port").arg(port.to_string());
                    cmd.arg("--data").arg(data).arg("--heap").arg(heap);
                    cmd
                })
            }
        }
    }

    /// Starts a server process built by `command(port)` on a free port and waits until it is
    /// ready. Between our port probe and the server's bind another process on the machine can
    /// take the port (other benchmarks pick from the same ranges), so a server that exits
    /// before it is ready, or whose port turns out to be held by someone else, is stopped and
    /// started again on another port, up to [`START_ATTEMPTS`] times.
    fn start_child(
        kind: &ServerKind,
        data: &Path,
        timeout: Duration,
        command: impl Fn(u16) -> Command,
    ) -> Result<Server> {
        let (program, prefer, ready_line) = match kind {
            ServerKind::Arbor { binary, .. } => (binary.as_path(), None, false),
            // The anchor prints a READY line once the database is online (the port opens
            // earlier than that).
            ServerKind::Neo4j { anchor, .. } => (anchor.as_path(), Some(17687..=17699), true),
            _ => return Err(Error::new(Status::Internal, "start_child is for server processes")),
        };
        let log = data.with_extension("log");
        let mut tried: Vec<u16> = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port_except(prefer.clone(), &tried)?;
            tried.push(port);
            let out = File::create(&log).map_err(|e| io("creating the server log", e))?;
            let err = out.try_clone().map_err(|e| io("server log", e))?;
            let child = command(port)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| io(&format!("starting {}", program.display()), e))?;
            let mut server = Server {
                uri: format!("bolt://127.0.0.1:{port}"),
                pid: child.id(),
                child: Some(child),
                in_process: None,
                cpu_at_start: 0.0,
                log: Some(log.clone()),
            };
            match server.wait_ready(timeout, ready_line.then_some(log.as_path())) {
                Ok(()) => return Ok(server),
                Err(e) => {
                    server.kill();
                    // Only a lost port is worth another attempt; a server that was alive but
                    // never became ready (timeout) would fail the same way again.
                    if !e.message.contains(PORT_LOST) {
                        return Err(e);
                    }
                    failures.push(format!("port {port}: {}", e.message));
                }
            }
        }
        Err(Error::new(
            Status::Io,
            format!(
                "{} did not start after {START_ATTEMPTS} attempts on different ports:\n{}",
                program.display(),
                failures.join("\n")
            ),
        ))
    }

    /// Waits until the server answers `RETURN 1` (after its READY line in `ready_line_in`, if
    /// given). For a child process, fails early with [`PORT_LOST`] in the message when the
    /// process exits before that, or when the port is answered by a socket the process does
    /// not own (someone else bound it first; our server will fail to bind).
    fn wait_ready(&mut self, timeout: Duration, ready_line_in: Option<&Path>) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut last = String::from("not started");
        let port = self.uri.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    let tail = self.log_tail();
                    return Err(Error::new(
                        Status::Io,
                        format!(
                            "{PORT_LOST}: server at {} exited ({status}) before it was ready{tail}",
                            self.uri
                        ),
                    ));
                }
            }
            let log_text = ready_line_in.and_then(|log| std::fs::read_to_string(log).ok());
            // A JVM whose Bolt connector cannot bind may log it and stay up without ever
            // printing READY: that is a lost port too, not something to wait out.
            if log_text.as_deref().is_some_and(|t| t.contains("Address already in use")) {
                let tail = self.log_tail();
                return Err(Error::new(
                    Status::Io,
                    format!("{PORT_LOST}: server at {} could not bind{tail}", self.uri),
                ));
            }
            let line_ok = match ready_line_in {
                Some(_) => log_text.is_some_and(|t| t.contains("NEO4J_ANCHOR_READY")),
                None => true,
            };
            if line_ok {
                let cfg =
                    ClientConfig { timeout: Some(Duration::from_secs(5)), ..Default::default() };
                match Client::connect(&self.uri, &cfg) {
                    Ok(mut c) => match c.run_all("RETURN 1", &Default::default()) {
                        Ok(_) => {
                            let ours = match (self.child.as_ref(), port) {
                                (Some(_), Some(port)) => listens_on(self.pid, port),
                                _ => None,
                            };
                            if ours == Some(false) {
                                return Err(Error::new(
                                    Status::Io,
                                    format!(
                                        "{PORT_LOST}: {} is answered by another process, not pid {}",
                                        self.uri, self.pid
                                    ),
                                ));
                            }
                            return Ok(());
                        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_inodes_reads_the_proc_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4444 1 0
";
        // Only the listener on 8080 (0x1F90), not the established connection from it.
        assert_eq!(listening_inodes(table, 8080), vec!["4242".to_string()]);
        assert!(listening_inodes(table, 8082).is_empty());
    }

    #[test]
    fn listens_on_tells_our_listener_from_another_process() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if std::fs::metadata("/proc/net/tcp").is_err() {
            return; // not Linux: nothing to check
        }
        assert_eq!(listens_on(std::process::id(), port), Some(true));
        let mut other = Command::new("sleep").arg("5").spawn().unwrap();
        // Between fork and exec the child still holds a copy of every descriptor, the listener
        // included (close-on-exec only drops it at the exec): wait until it runs `sleep`.
        let cmdline = format!("/proc/{}/cmdline", other.id());
        let t = Instant::now();
        while !std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep"))
            && t.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(listens_on(other.id(), port), Some(false));
        let _ = other.kill();
        let _ = other.wait();
        drop(l);
        assert_eq!(listens_on(std::process::id(), port), None);
    }

    /// A fresh directory with an executable shell script `body` (`{ports}` replaced by the path of
    /// a file the script may append the ports it was given to): `(dir, script, ports file)`.
    fn fake_server(name: &str, body: &str) -> (PathBuf, PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("arbor-mgbench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (script, ports) = (dir.join("fake-server.sh"), dir.join("ports.txt"));
        let body = body.replace("{ports}", &ports.display().to_string());
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
        Command::new("chmod").arg("+x").arg(&script).status().unwrap();
        (dir, script, ports)
    }

    #[test]
    fn a_neo4j_that_cannot_bind_and_stays_up_is_retried() {
        // Like the anchor when its port was taken: logs the bind error, never READY, stays up.
        let (dir, script, ports) = fake_server(
            "bind",
            "echo \"$3\" >> '{ports}'\necho 'java.net.BindException: Address already in use'\nexec sleep 30",
        );
        let kind = ServerKind::Neo4j { anchor: script, heap: "1g".into() };
        let t = Instant::now();
        let err = match Server::start(&kind, &dir.join("data"), Duration::from_secs(60)) {
            Ok(_) => panic!("a server that cannot bind cannot be ready"),
            Err(e) => e,
        };
        assert!(t.elapsed() < Duration::from_secs(30), "noticed before the timeout");
        assert!(err.message.contains("3 attempts"), "{}", err.message);
        let tried = std::fs::read_to_string(&ports).unwrap();
        assert_eq!(tried.lines().count(), START_ATTEMPTS, "{tried}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn free_port_except_skips_tried_ports() {
        let first = free_port_except(Some(40000..=40100), &[]).unwrap();
        let second = free_port_except(Some(40000..=40100), &[first]).unwrap();
        assert_ne!(first, second);
    }

    #[test]
    fn a_server_that_exits_at_once_is_retried_on_new_ports_then_reported() {
        // A "server" that records its port argument and exits, like one that lost its port.
        let (dir, script, ports) = fake_server(
            "start",
            "echo \"$5\" >> '{ports}'\necho 'Address already in use' >&2\nexit 1",
        );
        let kind = ServerKind::Arbor { binary: script, durability: None };
        let t = Instant::now();
        let err = match Server::start(&kind, &dir.join("data"), Duration::from_secs(60)) {
            Ok(_) => panic!("a server that exits cannot be ready"),
            Err(e) => e,
        };
        assert!(t.elapsed() < Duration::from_secs(30), "exit must be noticed before the timeout");
        assert!(err.message.contains("3 attempts"), "{}", err.message);
        assert!(err.message.contains("Address already in use"), "{}", err.message);
        let tried = std::fs::read_to_string(&ports).unwrap();
        let tried: Vec<&str> = tried.lines().collect();
        assert_eq!(tried.len(), START_ATTEMPTS, "{tried:?}");
        let mut distinct = tried.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), START_ATTEMPTS, "every attempt on another port: {tried:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
