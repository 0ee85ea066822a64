//! The synthetic Pokec data set: generated once by `gen_pokec.py` into a cache directory,
//! read back from its CSV files, loaded into any Bolt server with Cypher batches (index first),
//! and used as the reference every query answer is checked against.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use arbor_bolt::client::Client;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

/// Which Pokec variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Size {
    Small,
    Medium,
    Large,
    Custom { vertices: usize, edges: usize },
}

impl Size {
    pub fn parse(s: &str) -> Option<Size> {
        match s {
            "small" => Some(Size::Small),
            "medium" => Some(Size::Medium),
            "large" => Some(Size::Large),
            _ => {
                // custom:VERTICES:EDGES
                let mut it = s.strip_prefix("custom:")?.split(':');
                let vertices = it.next()?.parse().ok()?;
                let edges = it.next()?.parse().ok()?;
                Some(Size::Custom { vertices, edges })
            }
        }
    }

    pub fn label(&self) -> String {
        match self {
            Size::Small => "small".into(),
            Size::Medium => "medium".into(),
            Size::Large => "large".into(),
            Size::Custom { vertices, edges } => format!("custom-{vertices}-{edges}"),
        }
    }
}

/// One user as generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct User {
    pub completion_percentage: i64,
    pub man: bool,
    pub age: i64,
}

/// The graph in memory: users by id (index = id - 1) and out-adjacency (CSR, ids 0-based).
#[derive(Debug)]
pub struct Pokec {
    pub users: Vec<User>,
    pub offsets: Vec<usize>,
    pub targets: Vec<u32>,
    pub in_offsets: Vec<usize>,
    pub in_sources: Vec<u32>,
    pub edge_count: usize,
}

/// Runs `gen_pokec.py` into `cache/<size>` unless the CSVs are already there; returns that dir.
pub fn generate(script: &Path, cache: &Path, size: &Size) -> Result<PathBuf> {
    let dir = cache.join(format!("pokec-{}", size.label()));
    if dir.join("csv/users.csv").is_file() && dir.join("csv/friends.csv").is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(cache).map_err(|e| io(cache, e))?;
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg("--out").arg(&dir).arg("--formats").arg("csv").arg("--quiet");
    match size {
        Size::Custom { vertices, edges } => {
            cmd.args(["--size", "custom", "--vertices", &vertices.to_string()]);
            cmd.args(["--edges", &edges.to_string()]);
        }
        other => {
            cmd.args(["--size", &other.label()]);
        }
    }
    let out = cmd.output().map_err(|e| {
        Error::new(Status::Io, format!("running python3 {}: {e}", script.display()))
    })?;
    if !out.status.success() {
        return Err(Error::new(
            Status::Io,
            format!("gen_pokec.py failed: {}", String::from_utf8_lossy(&out.stderr)),
        ));
    }
    Ok(dir)
}

fn io(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(Status::Io, format!("{}: {e}", path.display()))
}

fn bad(path: &Path, line: usize, what: &str) -> Error {
    Error::new(Status::Io, format!("{}:{line}: {what}", path.display()))
}

impl Pokec {
    /// Reads `csv/users.csv` and `csv/friends.csv` (neo4j-admin format, as gen_pokec writes).
    pub fn read(dir: &Path) -> Result<Pokec> {
        let users_path = dir.join("csv/users.csv");
        let text = std::fs::read_to_string(&users_path).map_err(|e| io(&users_path, e))?;
        let mut users = Vec::new();
        for (i, line) in text.lines().enumerate().skip(1) {
            if line.is_empty() {
                continue;
            }
            // :ID(User),id:long,completion_percentage:int,gender,age:int,:LABEL
            let f: Vec<&str> = line.split(',').collect();
            if f.len() < 5 {
                return Err(bad(&users_path, i + 1, "expected 6 columns"));
            }
            let id: usize = f[1].parse().map_err(|_| bad(&users_path, i + 1, "bad id"))?;
            if id != users.len() + 1 {
                return Err(bad(&users_path, i + 1, "ids must be 1..N in order"));
            }
            users.push(User {
                completion_percentage: f[2]
                    .parse()
                    .map_err(|_| bad(&users_path, i + 1, "bad completion_percentage"))?,
                man: f[3] == "man",
                // Users without an age are not generated for small/medium; keep 0 if absent.
                age: f[4].parse().unwrap_or(0),
            });
        }
        let n = users.len();
        let friends_path = dir.join("csv/friends.csv");
        let text = std::fs::read_to_string(&friends_path).map_err(|e| io(&friends_path, e))?;
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for (i, line) in text.lines().enumerate().skip(1) {
            if line.is_empty() {
                continue;
            }
            let mut it = line.split(',');
            let a: usize = it
                .next()
                .and_then(|x| x.parse().ok())
                .ok_or_else(|| bad(&friends_path, i + 1, "bad start id"))?;
            let b: usize = it
                .next()
                .and_then(|x| x.parse().ok())
                .ok_or_else(|| bad(&friends_path, i + 1, "bad end id"))?;
            if a == 0 || b == 0 || a > n || b > n {
                return Err(bad(&friends_path, i + 1, "edge endpoint out of range"));
            }
            edges.push(((a - 1) as u32, (b - 1) as u32));
        }
        Ok(Pokec::from_edges(users, &edges))
    }

    /// Builds the CSR from an edge list in file order (adjacency keeps that order).
    pub fn from_edges(users: Vec<User>, edges: &[(u32, u32)]) -> Pokec {
        /// Picks (from, to) out of an edge: forward or reversed.
        type EdgeKey = dyn Fn(&(u32, u32)) -> (u32, u32);
        let n = users.len();
        let csr = |key: &EdgeKey| {
            let mut offsets = vec![0usize; n + 1];
            for e in edges {
                offsets[key(e).0 as usize + 1] += 1;
            }
            for i in 0..n {
                offsets[i + 1] += offsets[i];
            }
            let mut fill = offsets.clone();
            let mut out = vec![0u32; edges.len()];
            for e in edges {
                let (a, b) = key(e);
                out[fill[a as usize]] = b;
                fill[a as usize] += 1;
            }
            (offsets, out)
        };
        let (offsets, targets) = csr(&|e| *e);
        let (in_offsets, in_sources) = csr(&|e| (e.1, e.0));
        Pokec { users, offsets, targets, in_offsets, in_sources, edge_count: edges.len() }
    }

    pub fn n(&self) -> usize {
        self.users.len()
    }

    /// Out-neighbours of 0-based node `v`.
    pub fn out(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }

    pub fn inn(&self, v: u32) -> &[u32] {
        &self.in_sources[self.in_offsets[v as usize]..self.in_offsets[v as usize + 1]]
    }

    pub fn user(&self, id: i64) -> Option<&User> {
        usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).and_then(|i| self.users.get(i))
    }

    /// `node id -> 0-based index` if it is a User id.
    pub fn index(&self, id: i64) -> Option<u32> {
        if id >= 1 && (id as usize) <= self.users.len() {
            Some((id - 1) as u32)
        } else {
            None
        }
    }

    pub fn adult(&self, v: u32) -> bool {
        self.users[v as usize].age >= 18
    }

    // ---- reference answers ---------------------------------------------------------------

    /// `n.age -> count` over all users (Q1; with `adult_only`, Q3).
    pub fn age_histogram(&self, adult_only: bool) -> Vec<(i64, i64)> {
        let mut m = std::collections::BTreeMap::new();
        for u in &self.users {
            if !adult_only || u.age >= 18 {
                *m.entry(u.age).or_insert(0i64) += 1;
            }
        }
        m.into_iter().collect()
    }

    /// Distinct end nodes (0-based) of `hops`-long directed trails from `s` (relationships
    /// pairwise distinct, as Cypher's relationship isomorphism requires inside one pattern).
    pub fn trail_ends(&self, s: u32, hops: usize) -> Vec<u32> {
        let mut ends = HashSet::new();
        let mut used: Vec<(u32, u32)> = Vec::with_capacity(hops);
        self.trails(s, hops, &mut used, &mut |v| {
            ends.insert(v);
        });
        let mut v: Vec<u32> = ends.into_iter().collect();
        v.sort_unstable();
        v
    }

    fn trails(&self, v: u32, left: usize, used: &mut Vec<(u32, u32)>, f: &mut dyn FnMut(u32)) {
        if left == 0 {
            f(v);
            return;
        }
        for &w in self.out(v) {
            // Edges are unique per ordered pair in this data set, so (v, w) identifies one.
            if used.contains(&(v, w)) {
                continue;
            }
            used.push((v, w));
            self.trails(w, left - 1, used, f);
            used.pop();
        }
    }

    /// Distinct ends of 1- and 2-hop trails (Q13-Q16).
    pub fn neighbours_2(&self, s: u32) -> Vec<u32> {
        let mut set: HashSet<u32> = self.out(s).iter().copied().collect();
        set.extend(self.trail_ends(s, 2));
        let mut v: Vec<u32> = set.into_iter().collect();
        v.sort_unstable();
        v
    }

    /// Q17: number of `m` with `n -> m` and `m -> n`.
    pub fn cycle_count(&self, n: u32) -> usize {
        let ins: HashSet<u32> = self.inn(n).iter().copied().collect();
        self.out(n).iter().filter(|m| ins.contains(m)).count()
    }

    /// Q18: does `(n1)-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5)` exist with distinct edges?
    pub fn pattern_long_exists(&self, n1: u32) -> bool {
        for &n2 in self.out(n1) {
            for &n3 in self.out(n2) {
                if (n2, n3) == (n1, n2) {
                    continue;
                }
                for &n4 in self.out(n3) {
                    let e3 = (n3, n4);
                    if e3 == (n1, n2) || e3 == (n2, n3) {
                        continue;
                    }
                    for &n5 in self.inn(n4) {
                        let e4 = (n5, n4);
                        if e4 != e3 && e4 != (n1, n2) && e4 != (n2, n3) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// A user node's expected properties.
    pub fn properties(&self, v: u32) -> PropertyMap {
        let u = &self.users[v as usize];
        let mut m = PropertyMap::new();
        m.insert("id".into(), Value::Int(i64::from(v) + 1));
        m.insert("completion_percentage".into(), Value::Int(u.completion_percentage));
        m.insert("gender".into(), Value::str(if u.man { "man" } else { "woman" }));
        m.insert("age".into(), Value::Int(u.age));
        m
    }
}

/// Loads the data set into an empty server over Bolt: the `:User(id)` index first, then the
/// nodes in `UNWIND` batches, then the edges (`MATCH ... CREATE`) in batches.
pub fn load(client: &mut Client, data: &Pokec, batch: usize, index_ddl: &str) -> Result<()> {
    client.run_all(index_ddl, &PropertyMap::new())?;
    // Neo4j builds indexes asynchronously; Arbor's is ready at once (and may lack the procedure).
    let _ = client.run_all("CALL db.awaitIndexes(300)", &PropertyMap::new());
    let batch = batch.max(1);
    let mut rows = Vec::with_capacity(batch);
    for (i, _) in data.users.iter().enumerate() {
        rows.push(Value::Map(data.properties(i as u32)));
        if rows.len() == batch || i + 1 == data.users.len() {
            let mut p = PropertyMap::new();
            p.insert("batch".into(), Value::List(std::mem::take(&mut rows)));
            client.run_all(
                "UNWIND $batch AS u CREATE (:User {id: u.id, completion_percentage: \
                 u.completion_percentage, gender: u.gender, age: u.age})",
                &p,
            )?;
        }
    }
    let mut rows = Vec::with_capacity(batch);
    let total = data.edge_count;
    let mut done = 0usize;
    for v in 0..data.n() as u32 {
        for &w in data.out(v) {
            rows.push(Value::List(vec![
                Value::Int(i64::from(v) + 1),
                Value::Int(i64::from(w) + 1),
            ]));
            done += 1;
            if rows.len() == batch || done == total {
                let mut p = PropertyMap::new();
                p.insert("batch".into(), Value::List(std::mem::take(&mut rows)));
                client.run_all(
                    "UNWIND $batch AS e MATCH (a:User {id: e[0]}), (b:User {id: e[1]}) \
                     CREATE (a)-[:Friend]->(b)",
                    &p,
                )?;
            }
        }
    }
    Ok(())
}

/// Arbor's and Neo4j 5's index statement for `:User(id)`.
pub const INDEX_NEO4J: &str = "CREATE INDEX user_id IF NOT EXISTS FOR (n:User) ON (n.id)";

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Pokec {
        // 1 -> 2, 2 -> 1, 2 -> 3, 3 -> 1, 1 -> 4 (ages: 1: 20, 2: 10, 3: 30, 4: 18)
        let users = [20, 10, 30, 18]
            .iter()
            .map(|&age| User { completion_percentage: 5, man: age > 15, age })
            .collect();
        Pokec::from_edges(users, &[(0, 1), (1, 0), (1, 2), (2, 0), (0, 3)])
    }

    #[test]
    fn trails_respect_relationship_uniqueness() {
        let p = tiny();
        assert_eq!(p.trail_ends(0, 1), vec![1, 3]);
        // 0->1->0, 0->1->2
        assert_eq!(p.trail_ends(0, 2), vec![0, 2]);
        // 0->1->0->3 (0->1 reused? no: edges 0-1,1-0,0-3 distinct), 0->1->2->0;
        // 0->1->0->1 would reuse edge 0->1 and is excluded.
        assert_eq!(p.trail_ends(0, 3), vec![0, 3]);
        assert_eq!(p.neighbours_2(0), vec![0, 1, 2, 3]);
        assert_eq!(p.cycle_count(0), 1);
        assert_eq!(p.cycle_count(3), 0);
        assert!(p.pattern_long_exists(0));
        assert!(!p.pattern_long_exists(3));
        assert_eq!(p.age_histogram(true), vec![(18, 1), (20, 1), (30, 1)]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(Size::parse("small"), Some(Size::Small));
        assert_eq!(
            Size::parse("custom:500:4000"),
            Some(Size::Custom { vertices: 500, edges: 4000 })
        );
        assert_eq!(Size::parse("huge"), None);
    }
}
