//! The Bolt [`Target`]: an `arbor serve` process on a free loopback port with a temporary data
//! directory, one `arbor_bolt::client::Client` per named connection. `restart` sends SIGTERM
//! (the server checkpoints and exits) and starts the binary again on the same directory;
//! `crash` sends SIGKILL instead. Finding the binary, and refusing a missing or stale one, is
//! [`arbor_binary`]'s job.

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::target::{Reply, Target};

/// How long the server may take to listen, and to exit after SIGTERM.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Bolt reads and writes; a golden statement is small, a hang is a bug.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// The `arbor` binary to test: `$ARBOR_BIN`, else `arbor` next to the running test executable's
/// `deps/` directory (that is `<target-dir>/<profile>/arbor`, whatever `CARGO_TARGET_DIR` is).
/// Errors, with what to do, when it is missing, or stale: older than a source file its cargo
/// dep-info (`arbor.d` next to it) lists, or listing a file that is gone. The dep-info is
/// cargo's own record of what the binary was built from, so editing a test-only file (which
/// cargo does not rebuild the binary for) does not count.
pub fn arbor_binary() -> std::result::Result<PathBuf, String> {
    let bin = match std::env::var_os("ARBOR_BIN") {
        Some(p) => PathBuf::from(p),
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
            // <target>/<profile>/deps/<test-binary>
            let profile = exe.parent().and_then(Path::parent).ok_or("no target directory")?;
            profile.join("arbor")
        }
    };
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).map_err(|e| {
        format!(
            "no arbor binary at {} ({e}): build it first with `cargo build --release -p \
             arbor-cli` (scripts/test does), or point ARBOR_BIN at one",
            bin.display()
        )
    })?;
    let Ok(dep_info) = std::fs::read_to_string(bin.with_extension("d")) else {
        return Ok(bin); // Not built by cargo here (ARBOR_BIN elsewhere): trust it.
    };
    for source in dep_info_sources(&dep_info) {
        let stale = match std::fs::metadata(&source).and_then(|m| m.modified()) {
            Ok(t) => t > built,
            Err(_) => true,
        };
        if stale {
            return Err(format!(
                "the arbor binary at {} is stale ({} changed or is gone since it was built): \
                 rebuild it with `cargo build --release -p arbor-cli`",
                bin.display(),
                source.display()
            ));
        }
    }
    Ok(bin)
}

/// The prerequisites of a Makefile-style dep-info file (`target: a.rs b\ c.rs ...`).
fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let Some(line) = text.lines().next() else { return Vec::new() };
    let Some((_, deps)) = line.split_once(": ") else { return Vec::new() };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            ' ' => {
                if !cur.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut cur)));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(PathBuf::from(cur));
    }
    out
}

fn io(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Status::Io, format!("{what}: {e}"))
}

/// `arbor serve` on a temporary directory.
pub struct BoltTarget {
    bin: PathBuf,
    dir: tempfile::TempDir,
    child: Option<Child>,
    addr: String,
    clients: HashMap<String, Client>,
    /// Per connection: an explicit transaction is open (`false`: open but failed). The client
    /// resets the connection after a failure, ending the server's transaction; this keeps the
    /// driver-visible state the engine's sessions have (see [`Target::execute`]).
    tx: HashMap<String, bool>,
}

impl BoltTarget {
    /// Starts `bin serve` on a new temporary directory and waits until it listens.
    pub fn start(bin: &Path) -> Result<BoltTarget> {
        let dir = tempfile::Builder::new()
            .prefix("arbor-golden-bolt-")
            .tempdir()
            .map_err(|e| io("creating a temporary directory", e))?;
        let mut t = BoltTarget {
            bin: bin.to_path_buf(),
            dir,
            child: None,
            addr: String::new(),
            clients: HashMap::new(),
            tx: HashMap::new(),
        };
        t.spawn()?;
        Ok(t)
    }

    fn spawn(&mut self) -> Result<()> {
        // A free port from the OS; the window until the server binds it is acceptable here.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| io("finding a free port", e))?
            .port();
        self.addr = format!("127.0.0.1:{port}");
        let mut child = Command::new(&self.bin)
            .args(["serve", "--listen", &self.addr, "--auth", "none", "--durability", "async"])
            .arg("--data")
            .arg(self.dir.path())
            .arg("--import-dir")
            .arg(crate::target::IMPORT_DIR)
            // The server's start-up lines would drown the test output; warnings still show.
            .env("ARBOR_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io(&format!("starting {}", self.bin.display()), e))?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if TcpStream::connect(&self.addr).is_ok() {
                self.child = Some(child);
                return Ok(());
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(io("arbor serve exited early", status));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io("arbor serve did not listen", &self.addr));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn client(&mut self, name: &str) -> Result<&mut Client> {
        if !self.clients.contains_key(name) {
            let config = ClientConfig { timeout: Some(IO_TIMEOUT), ..ClientConfig::default() };
            let c = Client::connect(&self.addr, &config)?;
            self.clients.insert(name.to_string(), c);
        }
        self.clients.get_mut(name).ok_or_else(|| Error::internal("connection vanished"))
    }

    /// Stops the server: SIGTERM (clean: it checkpoints) or SIGKILL, then waits for it.
    fn stop(&mut self, clean: bool) -> Result<()> {
        self.clients.clear();
        self.tx.clear();
        let Some(mut child) = self.child.take() else { return Ok(()) };
        if !clean {
            child.kill().map_err(|e| io("killing arbor serve", e))?;
            child.wait().map_err(|e| io("waiting for arbor serve", e))?;
            return Ok(());
        }
        // std has no SIGTERM; the `kill` utility keeps this crate free of unsafe code.
        let sent = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        if !sent.is_ok_and(|s| s.success()) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io("sending SIGTERM to arbor serve", "kill failed"));
        }
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => return Err(io("arbor serve shut down with", status)),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(io("arbor serve did not exit after SIGTERM within", "60 s"));
                }
                Err(e) => return Err(io("waiting for arbor serve", e)),
            }
        }
    }
}

impl BoltTarget {
    fn check_not_failed(&self, connection: &str) -> Result<()> {
        if self.tx.get(connection) == Some(&false) {
            return Err(Error::new(
                Status::TransactionTerminated,
                "the transaction has been rolled back because of an earlier error",
            ));
        }
        Ok(())
    }

    /// Marks the connection's explicit transaction failed when `result` is an error.
    fn note_failure<T>(&mut self, connection: &str, result: Result<T>) -> Result<T> {
        if result.is_err() {
            if let Some(open) = self.tx.get_mut(connection) {
                *open = false;
            }
        }
        result
    }
}

impl Drop for BoltTarget {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Target for BoltTarget {
    fn name(&self) -> &'static str {
        "bolt"
    }

    fn execute(&mut self, connection: &str, query: &str, params: &PropertyMap) -> Result<Reply> {
        self.check_not_failed(connection)?;
        let result = self.client(connection)?.run_all(query, params);
        let r = self.note_failure(connection, result)?;
        let plan = r.summary.get("plan").cloned().filter(|p| !matches!(p, Value::Null));
        Ok(Reply { rows: r.records, plan })
    }

    fn begin(&mut self, connection: &str) -> Result<()> {
        self.client(connection)?.begin(PropertyMap::new())?;
        self.tx.insert(connection.to_string(), true);
        Ok(())
    }

    fn commit(&mut self, connection: &str) -> Result<()> {
        let result = self.check_not_failed(connection);
        self.tx.remove(connection);
        result?;
        self.client(connection)?.commit().map(|_| ())
    }

    fn rollback(&mut self, connection: &str) -> Result<()> {
        if self.tx.remove(connection) == Some(false) {
            // Already rolled back by the failure (drivers make this a no-op too).
            return Ok(());
        }
        self.client(connection)?.rollback()
    }

    fn restart(&mut self) -> Result<()> {
        self.stop(true)?;
        self.spawn()
    }

    fn crash(&mut self) -> Result<()> {
        self.stop(false)?;
        self.spawn()
    }
}

#[cfg(test)]
mod tests {
    use super::dep_info_sources;
    use std::path::PathBuf;

    // Goal: dep-info prerequisites split on spaces, with escaped spaces kept.
    #[test]
    fn dep_info_lists_sources() {
        let d = "/t/arbor: /w/a.rs /w/my\\ dir/b.rs\n\n/w/a.rs:\n";
        assert_eq!(
            dep_info_sources(d),
            vec![PathBuf::from("/w/a.rs"), PathBuf::from("/w/my dir/b.rs")]
        );
    }
}
