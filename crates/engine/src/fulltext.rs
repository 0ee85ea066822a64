//! FULLTEXT indexes: their definitions (kept by the engine and persisted in
//! `DIR/fulltext-indexes`), the DDL (`CREATE FULLTEXT INDEX`, `DROP INDEX`), the `SHOW INDEXES`
//! rows, and the `db.index.fulltext.*` procedures.
//!
//! A query reads the index's entities through the transaction's [`Graph`] (its snapshot plus
//! its own writes), gathers their string values and searches them with `arbor-fulltext`
//! (tantivy, BM25). Answers are therefore transactional by construction: a query sees its own
//! writes, never a later commit, and nothing of a rolled-back transaction. ARCHITECTURE.md says
//! why the definitions live here and what a commit-maintained index would add.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use arbor_cypher_plan::CypherType as T;
use arbor_exec::graph::Graph;
use arbor_exec::procs::Procedure;
use arbor_fulltext::{rank, AnalyzerSpec, Corpus, DEFAULT_ANALYZER};
use arbor_model::{Error, NodeId, RelId, Result, Status, Value};
use arbor_storage::Store;
use parking_lot::RwLock;

use crate::fulltext_doc::{documents, FulltextDef};
use crate::fulltext_live::{Feed, Live, Phase};

/// The file holding the definitions, in the data directory.
const FILE: &str = "fulltext-indexes";
const HEADER: &str = "arbor-fulltext-indexes 1";

/// The definitions of a database, where they are persisted (`None`: in memory), and their
/// maintained indexes (see fulltext_live.rs).
pub(crate) struct Registry {
    defs: RwLock<Vec<FulltextDef>>,
    file: Option<PathBuf>,
    /// The store the indexes follow, once the database is assembled.
    store: OnceLock<(Store, Weak<Registry>)>,
    feed: Arc<Feed>,
    live: RwLock<Vec<Arc<Live>>>,
    worker_started: AtomicBool,
}

impl Registry {
    /// The definitions persisted in `dir` (none if the file does not exist).
    pub fn open(dir: Option<&Path>) -> Result<Registry> {
        let file = dir.map(|d| d.join(FILE));
        let defs = match &file {
            Some(f) if f.exists() => {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| Error::new(Status::Io, format!("reading {}: {e}", f.display())))?;
                decode(&text).map_err(|(line, what)| {
                    Error::new(Status::Corruption, format!("{} line {line}: {what}", f.display()))
                })?
            }
            _ => Vec::new(),
        };
        Ok(Registry::with_defs(defs, file))
    }

    /// No file: the definitions of an in-memory database.
    pub fn in_memory() -> Registry {
        Registry::with_defs(Vec::new(), None)
    }

    fn with_defs(defs: Vec<FulltextDef>, file: Option<PathBuf>) -> Registry {
        Registry {
            defs: RwLock::new(defs),
            file,
            store: OnceLock::new(),
            feed: Arc::default(),
            live: RwLock::default(),
            worker_started: AtomicBool::new(false),
        }
    }

    /// The registry connected to its store: the indexes defined start populating.
    pub fn attached(reg: Registry, store: &Store) -> Arc<Registry> {
        let reg = Arc::new(reg);
        let _ = reg.store.set((store.clone(), Arc::downgrade(&reg)));
        reg.sync_live();
        reg
    }

    pub fn list(&self) -> Vec<FulltextDef> {
        let mut v = self.defs.read().clone();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    pub fn get(&self, name: &str) -> Option<FulltextDef> {
        self.defs.read().iter().find(|d| d.name == name).cloned()
    }

    /// The maintained index of `name`.
    pub fn live(&self, name: &str) -> Option<Arc<Live>> {
        self.live.read().iter().find(|l| l.def.name == name).cloned()
    }

    /// Starts a maintained index for every new definition, drops those of dropped ones, and
    /// removes the commit observer when none is left.
    fn sync_live(&self) {
        let Some((store, me)) = self.store.get() else { return };
        let defs = self.defs.read().clone();
        let mut live = self.live.write();
        live.retain(|l| defs.contains(&l.def));
        let mut added = false;
        for d in defs {
            if !live.iter().any(|l| l.def == d) {
                live.push(Arc::new(Live::new(d)));
                added = true;
            }
        }
        if live.is_empty() {
            store.set_commit_observer(None);
            self.feed.disable();
        }
        drop(live);
        if added {
            if !self.worker_started.swap(true, Ordering::SeqCst) {
                let (me, feed) = (me.clone(), self.feed.clone());
                let spawned = std::thread::Builder::new()
                    .name("arbor-fulltext".into())
                    .spawn(move || worker(me, feed));
                if spawned.is_err() {
                    self.worker_started.store(false, Ordering::SeqCst);
                }
            }
            self.feed.kick();
        }
    }

    /// One round of the worker: populates the new indexes, applies what committed to the
    /// others, and trims the feed.
    fn work(&self) {
        let Some((store, _)) = self.store.get() else { return };
        let live = self.live.read().clone();
        for l in &live {
            match l.phase() {
                Phase::Populating => l.populate(store, &self.feed),
                Phase::Online => {
                    if let Err(e) = l.catch_up(store, &self.feed, u64::MAX) {
                        tracing_failure(&l.def.name, &e);
                    }
                }
                Phase::Failed(_) => {}
            }
        }
        crate::fulltext_live::trim(&self.feed, &live);
        // A population that outlived its index's DROP may have installed the observer again.
        if self.live.read().is_empty() {
            store.set_commit_observer(None);
            self.feed.disable();
        }
    }

    /// Waits (up to `timeout`) until every index (or the one named) is online and has
    /// applied every commit.
    pub fn refresh(&self, name: Option<&str>, timeout: Duration) -> Result<()> {
        let Some((store, _)) = self.store.get() else { return Ok(()) };
        let deadline = std::time::Instant::now() + timeout;
        let live = self.live.read().clone();
        for l in live.into_iter().filter(|l| name.is_none_or(|n| l.def.name == n)) {
            loop {
                match l.phase() {
                    Phase::Online => break,
                    Phase::Failed(e) => {
                        return Err(Error::new(
                            Status::ExecutionFailed,
                            format!("Index `{}` has failed: {e}", l.def.name),
                        ))
                    }
                    Phase::Populating if std::time::Instant::now() >= deadline => {
                        return Err(Error::new(
                            Status::ProcedureCallFailed,
                            format!("Index `{}` is still populating", l.def.name),
                        ))
                    }
                    Phase::Populating => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            l.catch_up(store, &self.feed, u64::MAX).map_err(Error::internal)?;
        }
        Ok(())
    }

    /// Changes the definitions under the lock (`f` may refuse) and persists the new set
    /// before it becomes visible.
    pub(crate) fn change<R>(
        &self,
        f: impl FnOnce(&mut Vec<FulltextDef>) -> Result<R>,
    ) -> Result<R> {
        let mut defs = self.defs.write();
        let mut next = defs.clone();
        let r = f(&mut next)?;
        if next != *defs {
            if let Some(file) = &self.file {
                persist(file, &encode(&next))?;
            }
            *defs = next;
            drop(defs);
            self.sync_live();
        }
        Ok(r)
    }
}

/// The worker thread of a registry: runs until the registry is gone.
fn worker(reg: Weak<Registry>, feed: Arc<Feed>) {
    loop {
        match reg.upgrade() {
            Some(r) => r.work(),
            None => return,
        }
        feed.wait(Duration::from_millis(200));
    }
}

/// A maintained index that failed to apply commits stays as it was; the next round retries.
fn tracing_failure(name: &str, e: &str) {
    tracing::warn!(index = name, error = e, "full-text index: applying commits failed");
}

/// Writes `text` to `file` atomically and durably: a temporary file, fsync, rename, fsync of
/// the directory (owner-only permissions, as every data file).
pub(crate) fn persist(file: &Path, text: &str) -> Result<()> {
    let io = |what: &str, e: std::io::Error| {
        Error::new(Status::Io, format!("{what} {}: {e}", file.display()))
    };
    let tmp = file.with_extension("tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(&tmp).map_err(|e| io("creating", e))?;
    f.write_all(text.as_bytes()).map_err(|e| io("writing", e))?;
    f.sync_all().map_err(|e| io("syncing", e))?;
    std::fs::rename(&tmp, file).map_err(|e| io("renaming to", e))?;
    if let Some(dir) = file.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("syncing the directory of", e))?;
    }
    Ok(())
}

/// `%`-escapes the separators of the file format.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' | '\t' | '\n' | '\r' | ',' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn unesc(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '%' {
            let hex: String = it.by_ref().take(2).collect();
            out.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// One line per index: name, `node`/`relationship`, labels, properties, analyzer, eventually
/// consistent (`true`/`false`), tab-separated; lists comma-separated.
fn encode(defs: &[FulltextDef]) -> String {
    let mut out = format!("{HEADER}\n");
    for d in defs {
        let list = |v: &[String]| v.iter().map(|s| esc(s)).collect::<Vec<_>>().join(",");
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            esc(&d.name),
            if d.relationship { "relationship" } else { "node" },
            list(&d.labels),
            list(&d.properties),
            esc(&d.analyzer),
            d.eventually_consistent
        ));
    }
    out
}

fn decode(text: &str) -> std::result::Result<Vec<FulltextDef>, (usize, String)> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err((1, format!("expected the header `{HEADER}`")));
    }
    let mut defs = Vec::new();
    for (i, line) in lines.enumerate() {
        let bad = |what: &str| (i + 2, what.to_string());
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 6 {
            return Err(bad("expected 6 tab-separated fields"));
        }
        let list = |s: &str| -> Option<Vec<String>> { s.split(',').map(unesc).collect() };
        let def = FulltextDef {
            name: unesc(f[0]).ok_or_else(|| bad("bad escape in the name"))?,
            relationship: match f[1] {
                "node" => false,
                "relationship" => true,
                _ => return Err(bad("expected `node` or `relationship`")),
            },
            labels: list(f[2]).ok_or_else(|| bad("bad escape in the labels"))?,
            properties: list(f[3]).ok_or_else(|| bad("bad escape in the properties"))?,
            analyzer: unesc(f[4]).ok_or_else(|| bad("bad escape in the analyzer"))?,
            eventually_consistent: f[5] == "true",
        };
        if AnalyzerSpec::named(&def.analyzer).is_none() {
            return Err(bad("unknown analyzer"));
        }
        defs.push(def);
    }
    Ok(defs)
}

/// Adds `def` unless an index with its schema or its name exists: Neo4j's errors, or nothing
/// with `if_not_exists`. Returns whether it was added.
pub(crate) fn create(
    reg: &Registry,
    def: FulltextDef,
    if_not_exists: bool,
    name_taken: &dyn Fn(&str) -> bool,
) -> Result<bool> {
    reg.change(|defs| {
        if let Some(same) = defs.iter().find(|d| d.same_schema(&def)) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(if same.name == def.name {
                Error::new(
                    Status::EquivalentSchemaRule,
                    format!(
                        "An equivalent index already exists, 'Index( name='{}', \
                         type='FULLTEXT', schema={}, indexProvider='fulltext-1.0' )'.",
                        same.name,
                        same.schema_text()
                    ),
                )
            } else {
                Error::new(
                    Status::IndexAlreadyExists,
                    format!("There already exists an index {}.", def.schema_text()),
                )
            });
        }
        if defs.iter().any(|d| d.name == def.name) || name_taken(&def.name) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(name_exists(&def.name));
        }
        defs.push(def);
        Ok(true)
    })
}

pub(crate) fn name_exists(name: &str) -> Error {
    Error::new(
        Status::IndexWithNameAlreadyExists,
        format!("There already exists an index called '{name}'."),
    )
}

/// `index_<hash>` over the definition, as Neo4j names an index created without a name.
pub(crate) fn default_name(def: &FulltextDef) -> String {
    let text = format!("fulltext:{}:{:?}:{:?}", def.relationship, def.labels, def.properties);
    // FNV-1a: stable across builds and platforms (the name is persisted).
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("index_{h:08x}")
}

/// The `db.index.fulltext.*` procedures over the definitions in `reg`.
pub(crate) fn procedures(reg: Arc<Registry>) -> Vec<Procedure> {
    let refresh_reg = reg.clone();
    let list = |t: T| T::List(Box::new(t));
    let col = |n: &str, t: T| (n.to_string(), t);
    let mut out = vec![
        Procedure::new(
            "db.index.fulltext.listAvailableAnalyzers",
            vec![],
            vec![
                col("analyzer", T::String),
                col("description", T::String),
                col("stopwords", list(T::String)),
            ],
            "List the available analyzers that the full-text indexes can be configured with.",
            |_, _| {
                Ok(arbor_fulltext::CATALOG
                    .iter()
                    .map(|a| {
                        let stop = a.stopwords().into_iter().map(Value::from).collect();
                        vec![Value::from(a.name), Value::from(a.describe()), Value::List(stop)]
                    })
                    .collect())
            },
        ),
        Procedure::new(
            "db.index.fulltext.awaitEventuallyConsistentIndexRefresh",
            vec![],
            vec![],
            "Wait for the updates from recently committed transactions to be applied to any \
             eventually-consistent full-text indexes.",
            // Queries are exact either way; this waits for population and applies every
            // commit, so the next query reads the maintained index alone.
            move |_, _| {
                refresh_reg.refresh(None, Duration::from_secs(300))?;
                Ok(Vec::new())
            },
        ),
    ];
    out.extend(legacy_procedures(&reg));
    out.extend(await_procedures(&reg));
    for rel in [false, true] {
        let reg = reg.clone();
        let (name, entity) = if rel {
            ("db.index.fulltext.queryRelationships", col("relationship", T::Relationship))
        } else {
            ("db.index.fulltext.queryNodes", col("node", T::Node))
        };
        let mut p = Procedure::new(
            name,
            vec![
                col("indexName", T::String),
                col("queryString", T::String),
                col("options", T::Map),
            ],
            vec![entity, col("score", T::Float)],
            if rel {
                "Query the given full-text index. Returns the matching relationships, and their \
                 Lucene query score, ordered by score."
            } else {
                "Query the given full-text index. Returns the matching nodes, and their Lucene \
                 query score, ordered by score."
            },
            move |args, g| query_procedure(&reg, name, rel, args, g),
        );
        p.sig.optional = 1;
        out.push(p);
    }
    out
}

/// `db.awaitIndexes` and `db.awaitIndex` (replacing exec's, which know only storage's
/// indexes): they also wait for full-text indexes to finish populating.
fn await_procedures(reg: &Arc<Registry>) -> Vec<Procedure> {
    use arbor_exec::procs::timeout_arg;
    let col = |n: &str, t: T| (n.to_string(), t);
    let all_reg = reg.clone();
    let mut all = Procedure::new(
        "db.awaitIndexes",
        vec![col("timeOutSeconds", T::Integer)],
        vec![],
        "Wait for all indexes to come online (for example: CALL db.awaitIndexes(300)).",
        move |args, g| {
            let timeout = timeout_arg(args.first())?;
            all_reg.refresh(None, timeout)?;
            g.await_indexes(None, timeout)?;
            Ok(Vec::new())
        },
    );
    all.sig.optional = 1;
    let one_reg = reg.clone();
    let mut one = Procedure::new(
        "db.awaitIndex",
        vec![col("indexName", T::String), col("timeOutSeconds", T::Integer)],
        vec![],
        "Wait for an index to come online (for example: CALL db.awaitIndex(\"MyIndex\", 300)).",
        move |args, g| {
            let Some(Value::String(name)) = args.first() else {
                return Err(Error::new(Status::ArgumentError, "db.awaitIndex needs an index name"));
            };
            let timeout = timeout_arg(args.get(1))?;
            if one_reg.get(name).is_some() {
                one_reg.refresh(Some(name), timeout)?;
            } else {
                g.await_indexes(Some(name), timeout)?;
            }
            Ok(Vec::new())
        },
    );
    one.sig.optional = 1;
    vec![all, one]
}

/// Neo4j 4's `db.index.fulltext.createNodeIndex|createRelationshipIndex(name, labels,
/// properties[, {analyzer, eventually_consistent}])` and `db.index.fulltext.drop(name)`, for
/// clients written before `CREATE FULLTEXT INDEX` (Neo4j 5 removed them). They change the
/// schema at once, not at commit. Unlike the DDL they cannot see RANGE index and constraint
/// names, so only full-text names are checked for clashes.
fn legacy_procedures(reg: &Arc<Registry>) -> Vec<Procedure> {
    let list = || T::List(Box::new(T::String));
    let mut out = Vec::new();
    for rel in [false, true] {
        let reg = reg.clone();
        let (name, what) = if rel {
            ("db.index.fulltext.createRelationshipIndex", "relationshipTypes")
        } else {
            ("db.index.fulltext.createNodeIndex", "labels")
        };
        let inputs = vec![
            ("indexName".to_string(), T::String),
            (what.to_string(), list()),
            ("properties".to_string(), list()),
            ("config".to_string(), T::Map),
        ];
        let mut p = Procedure::new(
            name,
            inputs,
            vec![],
            "Create a full-text index (Neo4j 4 form of CREATE FULLTEXT INDEX).",
            move |args, _| {
                let def = legacy_def(name, rel, args)?;
                create(&reg, def, false, &|_| false)?;
                Ok(Vec::new())
            },
        );
        p.sig.optional = 1;
        p.writes = true;
        out.push(p);
    }
    let reg = reg.clone();
    let mut drop = Procedure::new(
        "db.index.fulltext.drop",
        vec![("indexName".to_string(), T::String)],
        vec![],
        "Drop the given full-text index (Neo4j 4 form of DROP INDEX).",
        move |args, _| {
            let name = match args.first() {
                Some(Value::String(s)) => s.to_string(),
                _ => String::new(),
            };
            reg.change(|defs| {
                let before = defs.len();
                defs.retain(|d| d.name != name);
                if defs.len() == before {
                    return Err(call_failed(
                        "db.index.fulltext.drop",
                        &format!("There is no such fulltext schema index: {name}"),
                    ));
                }
                Ok(())
            })?;
            Ok(Vec::new())
        },
    );
    drop.writes = true;
    out.push(drop);
    out
}

/// The definition a legacy create procedure asks for.
fn legacy_def(proc_name: &str, rel: bool, args: &[Value]) -> Result<FulltextDef> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        match v {
            Some(Value::List(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let name = match args.first() {
        Some(Value::String(s)) if !s.is_empty() => s.to_string(),
        _ => return Err(call_failed(proc_name, "the index name must be a non-empty string")),
    };
    let (labels, properties) = (strings(args.get(1)), strings(args.get(2)));
    if labels.is_empty() || properties.is_empty() {
        return Err(call_failed(proc_name, "a full-text index needs labels and properties"));
    }
    let mut def = FulltextDef {
        name,
        relationship: rel,
        labels,
        properties,
        analyzer: DEFAULT_ANALYZER.to_string(),
        eventually_consistent: false,
    };
    if let Some(Value::Map(config)) = args.get(3) {
        if let Some(Value::String(a)) = config.get("analyzer") {
            if AnalyzerSpec::named(a).is_none() {
                return Err(call_failed(proc_name, &format!("No such full-text analyzer: '{a}'.")));
            }
            def.analyzer = a.to_string();
        }
        def.eventually_consistent = match config.get("eventually_consistent") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        };
    }
    Ok(def)
}

fn call_failed(proc_name: &str, cause: &str) -> Error {
    Error::new(
        Status::ProcedureCallFailed,
        format!("Failed to invoke procedure `{proc_name}`: Caused by: {cause}"),
    )
}

/// `db.index.fulltext.queryNodes|queryRelationships(indexName, queryString[, options])`.
fn query_procedure(
    reg: &Registry,
    proc_name: &str,
    rel: bool,
    args: &[Value],
    g: &mut dyn Graph,
) -> Result<Vec<Vec<Value>>> {
    let index_name = match args.first() {
        Some(Value::String(s)) => s.to_string(),
        _ => "null".to_string(),
    };
    let Some(def) = reg.get(&index_name) else {
        return Err(call_failed(
            proc_name,
            &format!(
                "java.lang.IllegalArgumentException: There is no such fulltext schema index: \
                 {index_name}"
            ),
        ));
    };
    if def.relationship != rel {
        let (is, not) =
            if def.relationship { ("RELATIONSHIP", "nodes") } else { ("NODE", "relationships") };
        return Err(call_failed(
            proc_name,
            &format!(
                "java.lang.IllegalArgumentException: The '{}' index is an index on {is}, so it \
                 cannot be queried for {not}.",
                def.name
            ),
        ));
    }
    let Some(Value::String(text)) = args.get(1) else {
        return Err(call_failed(
            proc_name,
            "java.lang.NullPointerException: the query string is null",
        ));
    };
    let query = arbor_fulltext::parse(text).map_err(|e| {
        call_failed(
            proc_name,
            &format!("org.apache.lucene.queryparser.classic.{}: {}", e.kind, e.message),
        )
    })?;
    let (skip, limit, analyzer) = query_options(proc_name, args.get(2), &def)?;
    let index_analyzer = AnalyzerSpec::named(&def.analyzer)
        .ok_or_else(|| Error::internal(format!("unknown analyzer {}", def.analyzer)))?;
    let live = match (reg.live(&def.name), reg.store.get()) {
        (Some(l), Some((store, _))) => l.query(store, &reg.feed, g, &query, analyzer),
        _ => None,
    };
    let hits = match live {
        Some(hits) => hits,
        // Populating, or a snapshot older than the feed keeps: read every entity.
        None => Corpus::build(&def.properties, index_analyzer, documents(&def, g))
            .and_then(|c| c.hits(&query, analyzer, None)),
    };
    let mut hits = hits
        .map_err(|e| call_failed(proc_name, &format!("java.lang.IllegalArgumentException: {e}")))?;
    rank(&mut hits);
    Ok(hits
        .into_iter()
        .skip(skip)
        .take(limit.unwrap_or(usize::MAX))
        .map(|(id, score)| {
            let entity = if rel { Value::Relationship(RelId(id)) } else { Value::Node(NodeId(id)) };
            vec![entity, Value::Float(score)]
        })
        .collect())
}

/// `{skip, limit, analyzer}` of a query call (other keys are ignored, as in Neo4j).
fn query_options(
    proc_name: &str,
    options: Option<&Value>,
    def: &FulltextDef,
) -> Result<(usize, Option<usize>, &'static AnalyzerSpec)> {
    let mut skip = 0;
    let mut limit = None;
    let mut analyzer = AnalyzerSpec::named(&def.analyzer);
    if let Some(Value::Map(m)) = options {
        for (k, v) in m.iter() {
            match (&**k, v) {
                ("skip" | "limit", Value::Int(n)) if *n < 0 => {
                    let what = if &**k == "skip" { "Skip" } else { "Limit" };
                    return Err(call_failed(
                        proc_name,
                        &format!("java.lang.IllegalStateException: {what} argument cannot be negative: {n}."),
                    ));
                }
                ("skip", Value::Int(n)) => skip = usize::try_from(*n).unwrap_or(usize::MAX),
                ("limit", Value::Int(n)) => limit = Some(usize::try_from(*n).unwrap_or(usize::MAX)),
                ("analyzer", Value::String(a)) => {
                    analyzer = Some(AnalyzerSpec::named(a).ok_or_else(|| {
                        call_failed(
                            proc_name,
                            &format!("java.lang.IllegalArgumentException: No such full-text analyzer: '{a}'."),
                        )
                    })?);
                }
                _ => {}
            }
        }
    }
    let analyzer =
        analyzer.ok_or_else(|| Error::internal(format!("unknown analyzer {}", def.analyzer)))?;
    Ok((skip, limit, analyzer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> FulltextDef {
        FulltextDef {
            name: "t,i\tt%le".into(),
            relationship: true,
            labels: vec!["A".into(), "B,C".into()],
            properties: vec!["p".into()],
            analyzer: "english".into(),
            eventually_consistent: true,
        }
    }

    #[test]
    fn the_file_format_round_trips_and_rejects_damage() {
        let defs = vec![def(), FulltextDef { relationship: false, ..def() }];
        assert_eq!(decode(&encode(&defs)).unwrap(), defs);
        assert_eq!(decode("nonsense").unwrap_err().0, 1);
        let broken = encode(&defs).replace("\tenglish\t", "\tklingon\t");
        assert_eq!(decode(&broken).unwrap_err().0, 2);
        assert!(decode(&format!("{HEADER}\nx\ty\n")).is_err());
    }

    #[test]
    fn create_statement_and_options_read_like_neo4j() {
        let d = FulltextDef {
            name: "titles".into(),
            relationship: false,
            labels: vec!["Movie".into(), "Book".into()],
            properties: vec!["title".into(), "description".into()],
            analyzer: DEFAULT_ANALYZER.into(),
            eventually_consistent: false,
        };
        assert_eq!(
            d.create_statement(),
            "CREATE FULLTEXT INDEX `titles` FOR (n:`Movie`|`Book`) ON EACH [n.`title`, \
             n.`description`] OPTIONS {indexConfig: {`fulltext.analyzer`: \
             'standard-no-stop-words',`fulltext.eventually_consistent`: false}}"
        );
        assert_eq!(d.schema_text(), "(:Movie:Book {title, description})");
        assert!(default_name(&d).starts_with("index_"));
    }
}
