//! Memory benchmark: loads a Pokec-shaped graph (`gen_pokec.py`'s `csv/users.csv` and
//! `csv/friends.csv`, neo4j-admin header format) through the public storage API in large
//! transactions, checkpoints, closes, and then re-opens the store in a *fresh process* (so the
//! measured state is what a restarted server holds after recovery). It reports VmRSS/VmHWM
//! before and after, load/checkpoint/recovery times, and bytes per node, relationship and
//! property derived from resident memory differences between nested variants of the same data:
//!
//! * `nodes`: nodes with labels only; `props`: plus their properties; `rels`: plus the
//!   relationships; `full`: plus the `:User(id)` index mgBench creates.
//!
//! Per node = RSS(nodes)/N, per property = (RSS(props) - RSS(nodes))/P, per relationship =
//! (RSS(rels) - RSS(props))/R, per index entry = (RSS(full) - RSS(rels))/N, each RSS measured
//! above a process that opened an empty store.
//!
//! ```text
//! cargo run --release -p arbor-storage --example memory -- --data /tmp/pokec-medium \
//!     --work /tmp/arbor-mem [--variants nodes,props,rels,full] [--batch 500000]
//! ```

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use arbor_storage::{
    Direction, Durability, NodeId, Result, Store, StoreConfig, TokenKind, Transaction, Value,
};

fn cfg() -> StoreConfig {
    StoreConfig {
        durability: Durability::Async,
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..StoreConfig::default()
    }
}

/// `(VmRSS, VmHWM)` in bytes.
fn mem() -> (u64, u64) {
    let s = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

#[derive(Clone, Copy, PartialEq, PartialOrd, Debug)]
enum Variant {
    Nodes,
    Props,
    Rels,
    Full,
}

impl Variant {
    fn parse(s: &str) -> Option<Variant> {
        Some(match s {
            "nodes" => Variant::Nodes,
            "props" => Variant::Props,
            "rels" => Variant::Rels,
            "full" => Variant::Full,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Variant::Nodes => "nodes",
            Variant::Props => "props",
            Variant::Rels => "rels",
            Variant::Full => "full",
        }
    }
}

/// A column of a neo4j-admin CSV header.
enum Col {
    Id,
    Label,
    Start,
    End,
    Type,
    Prop(String, &'static str),
    Skip,
}

fn header(line: &str) -> Vec<Col> {
    line.split(',')
        .map(|h| {
            if h.starts_with(":ID") {
                Col::Id
            } else if h == ":LABEL" {
                Col::Label
            } else if h.starts_with(":START_ID") {
                Col::Start
            } else if h.starts_with(":END_ID") {
                Col::End
            } else if h == ":TYPE" {
                Col::Type
            } else if h.starts_with(':') {
                Col::Skip
            } else {
                let (name, ty) = h.split_once(':').unwrap_or((h, "string"));
                let ty = match ty {
                    "int" | "long" => "int",
                    "float" | "double" => "float",
                    "boolean" => "bool",
                    _ => "string",
                };
                Col::Prop(name.to_string(), ty)
            }
        })
        .collect()
}

struct Counts {
    nodes: u64,
    rels: u64,
    props: u64,
}

fn load(data: &Path, db: &Path, variant: Variant, batch: usize) -> Result<Counts> {
    let _ = fs::remove_dir_all(db);
    let store = Store::open(db, cfg())?;
    let t0 = Instant::now();
    let mut ids: HashMap<String, NodeId> = HashMap::new();
    let mut counts = Counts { nodes: 0, rels: 0, props: 0 };
    let users = BufReader::new(fs::File::open(data.join("csv/users.csv")).map_err(io)?);
    let mut lines = users.lines();
    let cols = header(&lines.next().transpose().map_err(io)?.unwrap_or_default());
    let keys: Vec<Option<u32>> = cols
        .iter()
        .map(|c| match c {
            Col::Prop(n, _) => store.get_or_create_token(TokenKind::PropertyKey, n).ok(),
            _ => None,
        })
        .collect();
    if variant == Variant::Full {
        let l = store.get_or_create_token(TokenKind::Label, "User")?;
        let k = store.get_or_create_token(TokenKind::PropertyKey, "id")?;
        store.create_index(l, k, None)?;
    }
    let mut tx = store.begin(false);
    let mut in_tx = 0usize;
    for line in lines {
        let line = line.map_err(io)?;
        let mut labels = Vec::new();
        let mut props = Vec::new();
        let mut id = String::new();
        for ((f, c), k) in line.split(',').zip(&cols).zip(&keys) {
            match c {
                Col::Id => id = f.to_string(),
                Col::Label => {
                    for l in f.split(';').filter(|l| !l.is_empty()) {
                        labels.push(store.get_or_create_token(TokenKind::Label, l)?);
                    }
                }
                Col::Prop(_, ty) if variant >= Variant::Props && !f.is_empty() => {
                    let v = match *ty {
                        "int" => f.parse::<i64>().map(Value::Int).ok(),
                        "float" => f.parse::<f64>().map(Value::Float).ok(),
                        "bool" => Some(Value::Bool(f == "true")),
                        _ => Some(Value::str(f)),
                    };
                    if let (Some(v), Some(k)) = (v, k) {
                        props.push((*k, v));
                    }
                }
                _ => {}
            }
        }
        counts.props += props.len() as u64;
        let n = tx.create_node(&labels, props)?;
        ids.insert(id, n);
        counts.nodes += 1;
        in_tx += 1;
        if in_tx >= batch {
            tx.commit()?;
            tx = store.begin(false);
            in_tx = 0;
        }
    }
    tx.commit()?;
    eprintln!("  [{}] {} nodes loaded in {:.1?}", variant.name(), counts.nodes, t0.elapsed());
    if variant >= Variant::Rels {
        let t1 = Instant::now();
        let friends = BufReader::new(fs::File::open(data.join("csv/friends.csv")).map_err(io)?);
        let mut lines = friends.lines();
        let cols = header(&lines.next().transpose().map_err(io)?.unwrap_or_default());
        let mut types: HashMap<String, u32> = HashMap::new();
        let mut tx = store.begin(false);
        let mut in_tx = 0usize;
        let mut since_ckpt = 0usize;
        for line in lines {
            let line = line.map_err(io)?;
            let (mut s, mut e, mut t) = (None, None, "REL");
            for (f, c) in line.split(',').zip(&cols) {
                match c {
                    Col::Start => s = ids.get(f).copied(),
                    Col::End => e = ids.get(f).copied(),
                    Col::Type => t = f,
                    _ => {}
                }
            }
            let (Some(s), Some(e)) = (s, e) else { continue };
            let ty = match types.get(t) {
                Some(t) => *t,
                None => {
                    let id = store.get_or_create_token(TokenKind::RelType, t)?;
                    types.insert(t.to_string(), id);
                    id
                }
            };
            tx.create_rel(s, e, ty, Vec::new())?;
            counts.rels += 1;
            in_tx += 1;
            since_ckpt += 1;
            if in_tx >= batch {
                tx.commit()?;
                // Large loads fold their delta into the compact base as they go (geometrically,
                // so the total rebuild work stays a small multiple of the graph).
                if since_ckpt >= (4 * batch).max(counts.rels as usize / 3) {
                    store.checkpoint()?;
                    since_ckpt = 0;
                }
                tx = store.begin(false);
                in_tx = 0;
            }
        }
        tx.commit()?;
        eprintln!("  [{}] {} rels loaded in {:.1?}", variant.name(), counts.rels, t1.elapsed());
    }
    let t2 = Instant::now();
    store.checkpoint()?;
    store.close()?;
    let (rss, hwm) = mem();
    eprintln!(
        "  [{}] load total {:.1?} (final checkpoint + close {:.1?}); loader RSS {:.1} MiB, HWM {:.1} MiB",
        variant.name(),
        t0.elapsed(),
        t2.elapsed(),
        mib(rss),
        mib(hwm)
    );
    Ok(counts)
}

fn io(e: std::io::Error) -> arbor_storage::Error {
    arbor_storage::Error::new(arbor_storage::Status::Io, e.to_string())
}

/// Walks the whole graph once so every structure is touched (and the numbers are not of a
/// lazily-faulted store); returns a checksum.
fn touch(tx: &Transaction) -> (u64, u64, u64) {
    let (mut nodes, mut degree, mut props) = (0u64, 0u64, 0u64);
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(None, cur) {
        nodes += 1;
        degree += tx.degree(n, Direction::Both, &[]);
        props += tx.node_properties(n).len() as u64;
        cur = NodeId(n.0 + 1);
    }
    (nodes, degree, props)
}

/// Child process: open the store (recovery), touch everything, print one result line.
fn measure(db: &Path) -> Result<()> {
    let (rss0, _) = mem();
    // An empty store first: the baseline an empty server holds.
    let empty = db.with_extension("empty");
    let _ = fs::remove_dir_all(&empty);
    {
        let s = Store::open(&empty, cfg())?;
        let tx = s.begin(true);
        touch(&tx);
        drop(tx);
        s.close()?;
    }
    let (rss_empty, _) = mem();
    let t0 = Instant::now();
    let store = Store::open(db, cfg())?;
    let open = t0.elapsed();
    let (rss_open, hwm_open) = mem();
    let tx = store.begin(true);
    let t1 = Instant::now();
    let (n, d, p) = touch(&tx);
    let walk = t1.elapsed();
    drop(tx);
    let (rss, hwm) = mem();
    let st = store.memory_stats();
    println!(
        "RESULT rss0={rss0} rss_empty={rss_empty} rss_open={rss_open} hwm_open={hwm_open} \
         rss={rss} hwm={hwm} open_ms={} walk_ms={} nodes={n} degree={d} props={p} \
         col_nodes={} col_node_props={} col_rels={} col_rel_props={} col_index={} \
         delta_nodes={} delta_rels={}",
        open.as_millis(),
        walk.as_millis(),
        st.base.node_bytes,
        st.base.node_property_bytes,
        st.base.rel_bytes,
        st.base.rel_property_bytes,
        st.base.index_bytes,
        st.delta_nodes,
        st.delta_rels,
    );
    let _ = fs::remove_dir_all(&empty);
    store.close()
}

fn parse_result(out: &str) -> HashMap<String, u64> {
    out.lines()
        .find(|l| l.starts_with("RESULT "))
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
                .collect()
        })
        .unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    if let Some(db) = arg("--measure") {
        if let Err(e) = measure(Path::new(db)) {
            eprintln!("measure failed: {e}");
            std::process::exit(1);
        }
        return;
    }
    let Some(data) = arg("--data").map(PathBuf::from) else {
        eprintln!("usage: memory --data POKEC_DIR [--work DIR] [--variants nodes,props,rels,full] [--batch N]");
        std::process::exit(2);
    };
    let work = arg("--work").map_or_else(|| PathBuf::from("/tmp/arbor-membench"), PathBuf::from);
    let batch: usize = arg("--batch").and_then(|b| b.parse().ok()).unwrap_or(500_000);
    let variants: Vec<Variant> = arg("--variants")
        .map_or("nodes,props,rels,full", |s| s.as_str())
        .split(',')
        .filter_map(Variant::parse)
        .collect();
    let _ = fs::create_dir_all(&work);
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from(&args[0]));
    let mut results: Vec<(Variant, Counts, HashMap<String, u64>)> = Vec::new();
    for v in variants {
        let db = work.join(v.name());
        let counts = match load(&data, &db, v, batch) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("load failed: {e}");
                std::process::exit(1);
            }
        };
        let out = Command::new(&exe).arg("--measure").arg(&db).output();
        let r = match out {
            Ok(o) if o.status.success() => parse_result(&String::from_utf8_lossy(&o.stdout)),
            Ok(o) => {
                eprintln!("measure failed: {}", String::from_utf8_lossy(&o.stderr));
                std::process::exit(1);
            }
            Err(e) => {
                eprintln!("cannot run {}: {e}", exe.display());
                std::process::exit(1);
            }
        };
        let g = |k: &str| r.get(k).copied().unwrap_or(0);
        let above = g("rss").saturating_sub(g("rss_empty"));
        println!(
            "{:>5}: nodes {} rels {} props {} | empty store {:.1} MiB | after recovery RSS {:.1} MiB \
             (HWM {:.1}) | after full walk RSS {:.1} MiB (HWM {:.1}) | above empty {:.1} MiB | \
             open {} ms, walk {} ms",
            v.name(),
            counts.nodes,
            counts.rels,
            counts.props,
            mib(g("rss_empty")),
            mib(g("rss_open")),
            mib(g("hwm_open")),
            mib(g("rss")),
            mib(g("hwm")),
            mib(above),
            g("open_ms"),
            g("walk_ms"),
        );
        println!(
            "       base columns: nodes {:.1} MiB, node properties {:.1} MiB, relationships {:.1} \
             MiB, relationship properties {:.1} MiB, indexes {:.1} MiB; delta entities {}/{}",
            mib(g("col_nodes")),
            mib(g("col_node_props")),
            mib(g("col_rels")),
            mib(g("col_rel_props")),
            mib(g("col_index")),
            g("delta_nodes"),
            g("delta_rels"),
        );
        results.push((v, counts, r));
    }
    let above = |v: Variant| {
        results.iter().find(|r| r.0 == v).map(|(_, c, r)| {
            let g = |k: &str| r.get(k).copied().unwrap_or(0);
            (g("rss").saturating_sub(g("rss_empty")) as f64, c.nodes, c.rels, c.props)
        })
    };
    if let Some((a, n, _, _)) = above(Variant::Nodes) {
        println!("bytes per node (labels only):        {:.1}", a / n as f64);
        if let Some((b, _, _, p)) = above(Variant::Props) {
            println!("bytes per property:                  {:.1}", (b - a) / p as f64);
            if let Some((c, _, r, _)) = above(Variant::Rels) {
                println!("bytes per relationship (both dirs):  {:.1}", (c - b) / r as f64);
                if let Some((d, _, _, _)) = above(Variant::Full) {
                    println!("bytes per :User(id) index entry:     {:.1}", (d - c) / n as f64);
                }
            }
        }
    }
}
