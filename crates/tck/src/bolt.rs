//! Running the TCK over Bolt: starts an `arbor serve` process on a free loopback port and hands
//! scenarios connections from a small pool (arbor_bolt's blocking client: handshake, HELLO,
//! LOGON with scheme `none`, RUN/PULL, RESET), clearing the database before each scenario.
//!
//! Test procedures (`there exists a procedure`) are registered through the server's
//! `arbor.test.registerProcedure`, which the server only offers when started with
//! `ARBOR_TCK_PROCEDURES=1` (done here).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_engine::{TEST_PROCEDURES_ENV, TEST_RESET};
use arbor_model::{PropertyMap, Value};

/// The `arbor` binary to test: `$ARBOR_BIN`, else `target/release/arbor` in the workspace.
pub fn default_binary() -> PathBuf {
    match std::env::var_os("ARBOR_BIN") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/arbor"),
    }
}

/// A running Bolt server for the run: an `arbor serve` process with a throw-away data
/// directory (killed on drop), or arbor_bolt's server on a thread of this process over an
/// in-memory database (stopped on drop). Either way scenarios talk to it over a real socket.
pub struct Server {
    kind: Kind,
    pub addr: String,
}

enum Kind {
    Process { child: Child, data: PathBuf },
    Thread { shutdown: Arc<AtomicBool>, handle: Option<std::thread::JoinHandle<()>> },
}

impl Server {
    /// Starts `bin serve` on a free port and waits (up to 30 s) until it accepts connections.
    pub fn start(bin: &Path) -> Result<Server, String> {
        if !bin.is_file() {
            return Err(format!(
                "no arbor binary at {} (build it with `cargo build -p arbor-cli --release` or \
                 set ARBOR_BIN)",
                bin.display()
            ));
        }
        // Ask the OS for a free port; the tiny window until the server binds it is acceptable
        // for a test run.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
        let addr = format!("127.0.0.1:{port}");
        let data = std::env::temp_dir().join(format!("arbor-tck-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        let child = Command::new(bin)
            .args(["serve", "--listen", &addr, "--auth", "none", "--durability", "off"])
            .arg("--data")
            .arg(&data)
            .env(TEST_PROCEDURES_ENV, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut server = Server { kind: Kind::Process { child, data }, addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(&server.addr).is_ok() {
                return Ok(server);
            }
            if let Kind::Process { child, .. } = &mut server.kind {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("arbor serve exited early: {status}"));
                }
            }
            if Instant::now() > deadline {
                return Err(format!("arbor serve did not listen on {} within 30 s", server.addr));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Server {
    /// Starts arbor_bolt's server on a thread, on a free loopback port, over a fresh in-memory
    /// database with test procedures enabled (for when no `arbor` binary is at hand).
    pub fn start_in_process() -> Result<Server, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot bind a loopback port: {e}"))?;
        let local = listener.local_addr().map_err(|e| format!("cannot read the port: {e}"))?;
        let db = arbor_engine::Database::in_memory();
        db.enable_test_procedures();
        let config = arbor_bolt::ServerConfig {
            listen: local,
            auth: None,
            max_connections: 64,
            advertised_address: None,
            tls: None,
        };
        let shutdown = Arc::new(AtomicBool::new(false));
        let stop = shutdown.clone();
        let handle = std::thread::Builder::new()
            .name("tck-bolt-server".into())
            .spawn(move || {
                if let Err(e) = arbor_bolt::serve_listener(listener, db, config, stop) {
                    eprintln!("in-process Bolt server stopped: {e}");
                }
            })
            .map_err(|e| format!("cannot start the server thread: {e}"))?;
        Ok(Server {
            kind: Kind::Thread { shutdown, handle: Some(handle) },
            addr: local.to_string(),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match &mut self.kind {
            Kind::Process { child, data } => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(data);
            }
            Kind::Thread { shutdown, handle } => {
                shutdown.store(true, Ordering::SeqCst);
                // The accept loop notices the flag on its next wake-up; do not wait for it
                // longer than the process lives anyway.
                drop(handle.take());
            }
        }
    }
}

/// Connections to one server, reused between scenarios. A scenario that times out keeps its
/// connection (its thread is abandoned); the next one simply opens a new connection.
pub struct BoltTarget {
    addr: String,
    idle: Mutex<Vec<Client>>,
    config: ClientConfig,
}

impl BoltTarget {
    /// `timeout` bounds every socket read, so an abandoned scenario thread ends eventually.
    pub fn new(addr: &str, timeout: Duration) -> BoltTarget {
        let config = ClientConfig {
            user_agent: "arbor-tck/0.1".into(),
            timeout: Some(timeout + Duration::from_secs(5)),
            ..ClientConfig::default()
        };
        BoltTarget { addr: addr.to_string(), idle: Mutex::new(Vec::new()), config }
    }

    /// A connection with an empty database: every node and relationship deleted, every index
    /// and constraint dropped.
    pub fn checkout(&self) -> Result<Client, String> {
        let pooled = self.idle.lock().ok().and_then(|mut v| v.pop());
        let mut client = match pooled {
            Some(c) => c,
            None => Client::connect(&self.addr, &self.config)
                .map_err(|e| format!("cannot connect to {}: {e}", self.addr))?,
        };
        clear_database(&mut client).map_err(|e| format!("cannot clear the database: {e}"))?;
        Ok(client)
    }

    /// Returns a healthy connection to the pool.
    pub fn checkin(&self, mut client: Client) {
        if client.is_broken() || client.reset().is_err() {
            return;
        }
        if let Ok(mut v) = self.idle.lock() {
            v.push(client);
        }
    }
}

fn names(client: &mut Client, query: &str) -> arbor_model::Result<Vec<String>> {
    let r = client.run_all(query, &PropertyMap::new())?;
    Ok(r.records
        .into_iter()
        .filter_map(|row| match row.into_iter().next() {
            Some(Value::String(s)) => Some(s.to_string()),
            _ => None,
        })
        .collect())
}

fn clear_database(client: &mut Client) -> arbor_model::Result<()> {
    let empty = PropertyMap::new();
    client.run_all(&format!("CALL {TEST_RESET}()"), &empty)?;
    client.run_all("MATCH (n) DETACH DELETE n", &empty)?;
    // Constraints first: they own their indexes.
    for name in names(client, "SHOW CONSTRAINTS YIELD name RETURN name")? {
        client.run_all(&format!("DROP CONSTRAINT `{}`", name.replace('`', "``")), &empty)?;
    }
    // The built-in LOOKUP indexes cannot be dropped (Neo4j lists them on an empty database).
    for name in names(client, "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")? {
        client.run_all(&format!("DROP INDEX `{}`", name.replace('`', "``")), &empty)?;
    }
    Ok(())
}
