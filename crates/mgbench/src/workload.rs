//! The 23 queries of mgBench's `basic` group on Pokec (byte-exact Cypher, parameter generators)
//! and the query lists mgBench builds from them: isolated (one query, `random.seed(method
//! name)`), mixed (a base query diluted with fillers of other types) and realistic (fillers
//! only, by type percentage), with exactly mgBench's use of the shared random stream.

use arbor_model::{PropertyMap, Value};

use crate::pyrandom::PyRandom;

/// The query type: the last `_`-separated token of the method name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Write,
    Read,
    Update,
    Aggregate,
    Analytical,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Read => "read",
            Kind::Update => "update",
            Kind::Aggregate => "aggregate",
            Kind::Analytical => "analytical",
        }
    }
}

/// How a query draws its parameters from the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamGen {
    None,
    /// `{"id": randint(1, N)}`
    Id,
    /// `{"id": randint(1, 10 N)}` (single_vertex_write)
    IdTimes10,
    /// `{"from": randint(1, N), "to": randint(1, N) redrawn until != from}`
    FromTo,
}

/// One query of the `basic` group.
#[derive(Debug, PartialEq, Eq)]
pub struct QuerySpec {
    /// Q-number in the 2022 mgBench README order (1-23).
    pub q: u8,
    /// Short name as benchgraph shows it (`expansion_1`).
    pub name: &'static str,
    pub kind: Kind,
    pub cypher: &'static str,
    pub params: ParamGen,
}

impl QuerySpec {
    /// The Python method name, which is also the random seed of the isolated workload.
    pub fn method(&self) -> String {
        format!("benchmark__basic__{}_{}", self.name, self.kind.name())
    }
}

macro_rules! q {
    ($q:expr, $name:expr, $kind:ident, $params:ident, $cypher:expr) => {
        QuerySpec {
            q: $q,
            name: $name,
            kind: Kind::$kind,
            cypher: $cypher,
            params: ParamGen::$params,
        }
    };
}

/// All 23 queries, in Q order.
pub static QUERIES: [QuerySpec; 23] = [
    q!(1, "aggregate", Aggregate, None, "MATCH (n:User) RETURN n.age, COUNT(*)"),
    q!(2, "aggregate_count", Aggregate, None, "MATCH (n) RETURN count(n), count(n.age)"),
    q!(
        3,
        "aggregate_with_filter",
        Aggregate,
        None,
        "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)"
    ),
    q!(4, "min_max_avg", Aggregate, None, "MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)"),
    q!(5, "expansion_1", Analytical, Id, "MATCH (s:User {id: $id})-->(n:User) RETURN n.id"),
    q!(
        6,
        "expansion_1_with_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id"
    ),
    q!(
        7,
        "expansion_2",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id"
    ),
    q!(
        8,
        "expansion_2_with_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id"
    ),
    q!(
        9,
        "expansion_3",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id"
    ),
    q!(
        10,
        "expansion_3_with_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id"
    ),
    q!(
        11,
        "expansion_4",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id"
    ),
    q!(
        12,
        "expansion_4_with_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id"
    ),
    q!(
        13,
        "neighbours_2",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id"
    ),
    q!(
        14,
        "neighbours_2_with_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id"
    ),
    q!(
        15,
        "neighbours_2_with_data",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n"
    ),
    q!(
        16,
        "neighbours_2_with_data_and_filter",
        Analytical,
        Id,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n"
    ),
    q!(
        17,
        "pattern_cycle",
        Analytical,
        Id,
        "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2"
    ),
    q!(
        18,
        "pattern_long",
        Analytical,
        Id,
        "MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1"
    ),
    q!(19, "pattern_short", Analytical, Id, "MATCH (n:User {id: $id})-[e]->(m) RETURN m LIMIT 1"),
    q!(
        20,
        "single_edge_write",
        Write,
        FromTo,
        "MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e"
    ),
    q!(21, "single_vertex_write", Write, IdTimes10, "CREATE (n:UserTemp {id : $id}) RETURN n"),
    q!(
        22,
        "single_vertex_property_update",
        Update,
        Id,
        "MATCH (n:User {id: $id}) SET n.property = -1"
    ),
    q!(23, "single_vertex_read", Read, Id, "MATCH (n:User {id : $id}) RETURN n"),
];

/// The query with this Q-number.
pub fn by_q(q: u8) -> Option<&'static QuerySpec> {
    QUERIES.iter().find(|s| s.q == q)
}

/// Finds a query by Q-number (`Q5`, `5`) or name (`expansion_1`).
pub fn lookup(name: &str) -> Option<&'static QuerySpec> {
    let t = name.trim();
    let num = t.strip_prefix('Q').or_else(|| t.strip_prefix('q')).unwrap_or(t);
    if let Ok(n) = num.parse::<u8>() {
        return by_q(n);
    }
    QUERIES.iter().find(|s| s.name == t || s.method() == t)
}

/// The queries in Python `dir()` order (alphabetical by method name): the order mgBench walks
/// them in, which matters for the mixed workload's shared random stream.
pub fn dir_order() -> Vec<&'static QuerySpec> {
    let mut v: Vec<&QuerySpec> = QUERIES.iter().collect();
    v.sort_by_key(|s| s.method());
    v
}

/// One concrete query: the spec and its drawn parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub spec: &'static QuerySpec,
    /// `id` (or `from`) parameter.
    pub a: i64,
    /// `to` parameter of single_edge_write.
    pub b: i64,
}

impl Query {
    pub fn params(&self) -> PropertyMap {
        let mut m = PropertyMap::new();
        match self.spec.params {
            ParamGen::None => {}
            ParamGen::Id | ParamGen::IdTimes10 => {
                m.insert("id".into(), Value::Int(self.a));
            }
            ParamGen::FromTo => {
                m.insert("from".into(), Value::Int(self.a));
                m.insert("to".into(), Value::Int(self.b));
            }
        }
        m
    }
}

/// Calls the query's generator once (mgBench's `benchmark__basic__...()`).
pub fn generate(spec: &'static QuerySpec, rng: &mut PyRandom, n: i64) -> Query {
    match spec.params {
        ParamGen::None => Query { spec, a: 0, b: 0 },
        ParamGen::Id => Query { spec, a: rng.randint(1, n), b: 0 },
        ParamGen::IdTimes10 => Query { spec, a: rng.randint(1, n * 10), b: 0 },
        ParamGen::FromTo => {
            let from = rng.randint(1, n);
            let mut to = from;
            while to == from {
                to = rng.randint(1, n);
            }
            Query { spec, a: from, b: to }
        }
    }
}

/// `get_queries(gen, count)`: `random.seed(method name)`, then `count` generator calls.
pub fn isolated(spec: &'static QuerySpec, count: usize, n: i64) -> Vec<Query> {
    let mut rng = PyRandom::from_str_seed(&spec.method());
    (0..count).map(|_| generate(spec, &mut rng, n)).collect()
}

/// A mixed/realistic configuration: total count and write/read/update/analytical percentages
/// (plus, for mixed, the base query's percentage).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixConfig {
    pub count: usize,
    pub percentages: Vec<u32>,
}

impl MixConfig {
    /// The random seed mgBench uses: all numbers joined with `_` (`"500_30_40_10_20"`).
    pub fn seed(&self) -> String {
        std::iter::once(self.count.to_string())
            .chain(self.percentages.iter().map(|p| p.to_string()))
            .collect::<Vec<_>>()
            .join("_")
    }

    /// benchgraph's realistic W1..W4.
    pub fn realistic_presets(count: usize) -> Vec<(&'static str, MixConfig)> {
        [
            ("W1", [30, 40, 10, 20]),
            ("W2", [30, 70, 0, 0]),
            ("W3", [50, 50, 0, 0]),
            ("W4", [70, 30, 0, 0]),
        ]
        .into_iter()
        .map(|(n, p)| (n, MixConfig { count, percentages: p.to_vec() }))
        .collect()
    }

    /// benchgraph's mixed configuration: 30 % writes, 70 % the base query.
    pub fn mixed_preset(count: usize) -> MixConfig {
        MixConfig { count, percentages: vec![30, 0, 0, 0, 70] }
    }
}

/// Fillers by type, as mgBench's `queries_by_type`: substring match of the type name in the
/// method name, in `dir()` order. Aggregates match none of the four types.
fn fillers_by_type() -> [Vec<&'static QuerySpec>; 4] {
    let order = dir_order();
    let pick = |t: &str| order.iter().copied().filter(|s| s.method().contains(t)).collect();
    [pick("write"), pick("read"), pick("update"), pick("analytical")]
}

fn draw_filler(
    fillers: &[Vec<&'static QuerySpec>; 4],
    t: usize,
    rng: &mut PyRandom,
    n: i64,
) -> Query {
    let list = &fillers[t];
    let spec = list[rng.choices_index(list.len())];
    generate(spec, rng, n)
}

/// The realistic workload's query list (`--workload-realistic N w r u a`).
pub fn realistic(config: &MixConfig, n: i64) -> Result<Vec<Query>, String> {
    if config.percentages.len() != 4 || config.percentages.iter().sum::<u32>() != 100 {
        return Err(format!(
            "realistic needs 4 percentages summing to 100, got {:?}",
            config.percentages
        ));
    }
    let fillers = fillers_by_type();
    let mut rng = PyRandom::from_str_seed(&config.seed());
    let weights: Vec<f64> = config.percentages.iter().map(|&p| f64::from(p)).collect();
    let types = rng.weighted_choices(&weights, config.count);
    Ok(types.into_iter().map(|t| draw_filler(&fillers, t, &mut rng, n)).collect())
}

/// The mixed workload (`--workload-mixed N w r u a q`): one list per base query, in `dir()`
/// order, all from one random stream; a base query whose own type has a non-zero filler share
/// is skipped without consuming randomness.
pub fn mixed(config: &MixConfig, n: i64) -> Result<Vec<(&'static QuerySpec, Vec<Query>)>, String> {
    if config.percentages.len() != 5 || config.percentages.iter().sum::<u32>() != 100 {
        return Err(format!(
            "mixed needs 5 percentages summing to 100, got {:?}",
            config.percentages
        ));
    }
    let fillers = fillers_by_type();
    let mut rng = PyRandom::from_str_seed(&config.seed());
    let weights: Vec<f64> = config.percentages.iter().map(|&p| f64::from(p)).collect();
    let mut out = Vec::new();
    for base in dir_order() {
        let own = match base.kind {
            Kind::Write => config.percentages[0],
            Kind::Read => config.percentages[1],
            Kind::Update => config.percentages[2],
            Kind::Analytical => config.percentages[3],
            Kind::Aggregate => 0,
        };
        if own > 0 {
            continue;
        }
        let types = rng.weighted_choices(&weights, config.count);
        let list = types
            .into_iter()
            .map(|t| {
                if t == 4 {
                    generate(base, &mut rng, n)
                } else {
                    draw_filler(&fillers, t, &mut rng, n)
                }
            })
            .collect();
        out.push((base, list));
    }
    Ok(out)
}

/// The warm-up of the `hot` condition (benchgraph v2+).
pub const HOT_WARMUP: [&str; 3] =
    ["CREATE ();", "CREATE ()-[:TempEdge]->();", "MATCH (n) RETURN count(n.prop) LIMIT 1;"];

#[cfg(test)]
mod tests {
    use super::*;

    fn python(code: &str) -> Option<String> {
        let out = std::process::Command::new("python3").arg("-c").arg(code).output().ok()?;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A Python model of mgBench's generators: the Pokec methods and benchmark.py's
    /// mixed/realistic list builders (re-stated from the methodology, run by CPython).
    const PY_MODEL: &str = r#"
import random
N = 10000
def rv(): return random.randint(1, N)
def ft():
    a = rv(); b = a
    while b == a: b = rv()
    return (a, b)
class P:
    def benchmark__basic__single_vertex_read_read(self): return ("read", rv(), 0)
    def benchmark__basic__single_vertex_write_write(self): return ("vw", random.randint(1, N * 10), 0)
    def benchmark__basic__single_vertex_property_update_update(self): return ("upd", rv(), 0)
    def benchmark__basic__single_edge_write_write(self): return ("ew",) + ft()
    def benchmark__basic__aggregate_aggregate(self): return ("agg", 0, 0)
    def benchmark__basic__aggregate_count_aggregate(self): return ("aggc", 0, 0)
    def benchmark__basic__aggregate_with_filter_aggregate(self): return ("aggf", 0, 0)
    def benchmark__basic__min_max_avg_aggregate(self): return ("mma", 0, 0)
for name in ["expansion_1", "expansion_1_with_filter", "expansion_2", "expansion_2_with_filter",
             "expansion_3", "expansion_3_with_filter", "expansion_4", "expansion_4_with_filter",
             "neighbours_2", "neighbours_2_with_filter", "neighbours_2_with_data",
             "neighbours_2_with_data_and_filter", "pattern_cycle", "pattern_long", "pattern_short"]:
    setattr(P, "benchmark__basic__" + name + "_analytical", (lambda nm: lambda self: (nm, rv(), 0))(name))
p = P()
names = [f for f in dir(p) if f.startswith("benchmark__")]
def show(q): return "%s:%d:%d" % q
def get_queries(f, count):
    random.seed(f)
    return [getattr(p, f)() for _ in range(count)]
out = []
for f in names:
    out.append(f + " " + " ".join(show(q) for q in get_queries(f, 30)))
def by_type():
    d = {"write": [], "read": [], "update": [], "analytical": []}
    for f in names:
        for k in d:
            if k in f: d[k].append(f)
    return d
def realistic(cfg):
    d = by_type(); random.seed("_".join(str(c) for c in cfg))
    types = random.choices(["write", "read", "update", "analytical"], weights=cfg[1:], k=cfg[0])
    return [getattr(p, random.choices(d[t], k=1)[0])() for t in types]
def mixed(cfg):
    d = by_type(); random.seed("_".join(str(c) for c in cfg))
    pct = {"write": cfg[1], "read": cfg[2], "update": cfg[3], "analytical": cfg[4]}
    res = []
    for f in names:
        if pct.get(f.rsplit("_", 1)[1], 0) > 0: continue
        types = random.choices(["write", "read", "update", "analytical", "query"], weights=cfg[1:], k=cfg[0])
        res.append(f + " " + " ".join(show(getattr(p, f)() if t == "query" else getattr(p, random.choices(d[t], k=1)[0])()) for t in types))
    return res
for cfg in [[60, 30, 40, 10, 20], [50, 30, 70, 0, 0], [40, 70, 30, 0, 0]]:
    out.append("R " + " ".join(show(q) for q in realistic(cfg)))
out.extend(mixed([25, 30, 0, 0, 0, 70]))
out.extend(mixed([20, 10, 10, 10, 10, 60]))
print("\n".join(out))
"#;

    fn short(q: &Query) -> String {
        let tag = match q.spec.name {
            "single_vertex_read" => "read",
            "single_vertex_write" => "vw",
            "single_vertex_property_update" => "upd",
            "single_edge_write" => "ew",
            "aggregate" => "agg",
            "aggregate_count" => "aggc",
            "aggregate_with_filter" => "aggf",
            "min_max_avg" => "mma",
            other => other,
        };
        format!("{tag}:{}:{}", q.a, q.b)
    }

    #[test]
    fn lists_match_a_cpython_model_of_mgbench() {
        let Some(expected) = python(PY_MODEL) else {
            eprintln!("python3 not found: skipping");
            return;
        };
        let mut lines = Vec::new();
        for spec in dir_order() {
            let qs = isolated(spec, 30, 10_000);
            lines.push(format!(
                "{} {}",
                spec.method(),
                qs.iter().map(short).collect::<Vec<_>>().join(" ")
            ));
        }
        for p in [[60, 30, 40, 10, 20], [50, 30, 70, 0, 0], [40, 70, 30, 0, 0]] {
            let cfg = MixConfig { count: p[0] as usize, percentages: p[1..].to_vec() };
            let qs = realistic(&cfg, 10_000).unwrap();
            lines.push(format!("R {}", qs.iter().map(short).collect::<Vec<_>>().join(" ")));
        }
        for p in [[25, 30, 0, 0, 0, 70], [20, 10, 10, 10, 10, 60]] {
            let cfg = MixConfig { count: p[0] as usize, percentages: p[1..].to_vec() };
            for (base, qs) in mixed(&cfg, 10_000).unwrap() {
                lines.push(format!(
                    "{} {}",
                    base.method(),
                    qs.iter().map(short).collect::<Vec<_>>().join(" ")
                ));
            }
        }
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(expected.len(), lines.len(), "number of lists");
        for (e, g) in expected.iter().zip(&lines) {
            assert_eq!(*e, g.as_str());
        }
    }

    #[test]
    fn known_first_ids_and_shapes() {
        // Recorded from CPython 3.11 (see pyrandom tests).
        let qs = isolated(by_q(5).unwrap(), 5, 10_000);
        assert_eq!(qs.iter().map(|q| q.a).collect::<Vec<_>>(), [6675, 7318, 9074, 2890, 3604]);
        assert_eq!(QUERIES.len(), 23);
        let kinds = |k| QUERIES.iter().filter(|s| s.kind == k).count();
        assert_eq!((kinds(Kind::Write), kinds(Kind::Read), kinds(Kind::Update)), (2, 1, 1));
        assert_eq!((kinds(Kind::Aggregate), kinds(Kind::Analytical)), (4, 15));
        let mixed = mixed(&MixConfig::mixed_preset(10), 10_000).unwrap();
        assert_eq!(mixed.len(), 21, "the two write queries have no mixed result");
        for s in &QUERIES {
            for q in isolated(s, 50, 100) {
                if s.params == ParamGen::FromTo {
                    assert_ne!(q.a, q.b);
                }
            }
        }
        assert_eq!(lookup("Q7").unwrap().name, "expansion_2");
        assert_eq!(lookup("pattern_short").unwrap().q, 19);
    }
}
