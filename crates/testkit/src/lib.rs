//! Arbor's golden-file contract: `tests/cypher/**/*.cypher`, parsed once ([`format`]) and run
//! against a [`Target`]: in process ([`InProcess`], an `arbor_engine::Database` on a temporary
//! data directory) or over Bolt ([`BoltTarget`], an `arbor serve` process talked to through
//! `arbor_bolt::client`). The same files run both ways, so what a file asserts holds for
//! embedders and for drivers alike. This crate is dev-only (`publish = false`); it holds no
//! query semantics of its own and never decides what a result *should* be.
//!
//! # Format
//!
//! A small sqllogictest dialect. Each file gets a fresh database. Records are separated by
//! blank lines; `#` starts a comment line.
//!
//! ```text
//! # A statement that must succeed (rows, if any, are ignored).
//! statement ok
//! CREATE (:A {x: 1})
//!
//! # A statement that must fail with this Neo4j status code; the rest of the line, if any, is a
//! # substring the error message must contain.
//! statement error Neo.ClientError.Statement.SyntaxError Invalid input
//! MATCH (n RETURN n
//!
//! # Rows compared as a multiset (`query`) or in order (`query ordered`); columns joined by
//! # ` | `, values printed as Cypher literals with sorted map keys (`to_cypher_literal`).
//! query
//! MATCH (n:A) RETURN n.x AS x, n
//! ----
//! 1 | (:A {x: 1})
//!
//! # The plan EXPLAIN reports (`plan` is a synonym of `query explain`); the body is the query
//! # without `EXPLAIN`. One operator per line, `NN)` then `--` per depth, then the operator
//! # type and its `Details` argument.
//! query explain
//! MATCH (n:A) RETURN count(n)
//! ----
//! 01)ProduceResults: count(n)
//! 02)--NodeCountFromCountStore
//! 03)----Argument
//!
//! # `params` applies to the next record only: a Cypher map literal (it may span lines until
//! # its braces balance). It is evaluated as `RETURN <map>` on a scratch in-memory database, so
//! # every value type Cypher can write works (`date('2020-01-02')`, `point({x: 1, y: 2})`).
//! params {name: 'Ann', born: date('1990-05-01')}
//! query
//! RETURN $name, $born
//! ----
//! 'Ann' | '1990-05-01'
//!
//! # `connection NAME` applies to the next record only; records without one use the
//! # connection `default`. Each connection is its own session (in process) or Bolt connection,
//! # with its own explicit transaction (`:begin`, `:commit`, `:rollback` as statements).
//! connection reader
//! statement ok
//! :begin
//!
//! # Clean shutdown and reopen of the same data directory (in process: `Database::shutdown`;
//! # over Bolt: SIGTERM, wait, start again). All connections are closed.
//! restart
//!
//! # A crash (in process: `Database::crash_for_test`, which stops the store's threads and
//! # releases the directory without a checkpoint, as storage tests simulate a kill; over Bolt:
//! # SIGKILL the server), then reopen the same directory: recovery replays the WAL.
//! crash
//! ```
//!
//! `statement ok` with the body `:restart` or `:crash` (cypher-shell style) means the same as
//! the bare `restart` / `crash` records.
//!
//! Error codes: the expected code is compared with the full Neo4j code (over Bolt, the code the
//! server sent, even when the client maps it to a different local status). For older files a
//! code *prefix* ending at a `.` boundary also matches (`Neo.ClientError.Statement`); the rewrite
//! mode writes full codes. A statement that fails inside an explicit transaction rolls it back
//! and leaves it *failed*, in both targets as the engine's sessions and the official drivers
//! have it: further statements and `:commit` fail with `Neo.ClientError.Transaction.Terminated`
//! (the commit also ends it), `:rollback` succeeds. (The Bolt client resets the connection
//! after a failure; the Bolt target keeps that failed state itself.)
//!
//! # Rewrite mode
//!
//! `ARBOR_GOLDEN_UPDATE=1 cargo test --release -p arbor-testkit --test golden golden_in_process`
//! rewrites, in place, every record whose outcome differs from the file: result rows (multiset
//! records sorted), plans, and the `statement ok` / `statement error CODE` header (a failing
//! `query` becomes a `statement error`). Only the in-process run rewrites (the filter keeps the
//! Bolt run from reading files while they are rewritten); run both afterwards, and review the
//! diff before committing it.

pub mod bolt;
pub mod format;
pub mod render;
pub mod runner;
pub mod target;

pub use bolt::BoltTarget;
pub use format::{parse, Kind, Record};
pub use runner::{golden_files, run_file, FileOutcome};
pub use target::{InProcess, Reply, Target};
