//! Result verification: every answer is compared with a reference computed in Rust from the
//! generated data (histograms, trail enumeration with relationship uniqueness, reciprocity,
//! pattern existence, node properties), so a fast wrong answer fails the run.
//!
//! Isolated runs are checked exactly. Mixed and realistic runs interleave writes
//! (`single_edge_write` adds `:Temp` edges between users, `single_vertex_write` adds
//! `:UserTemp` nodes, `single_vertex_property_update` adds a property), whose effect on a
//! concurrent read depends on timing; there the checks are the monotone ones (expected rows
//! must all be present, counts within bounds), and the whole-graph aggregates that the writes
//! cannot change stay exact.

use std::collections::HashMap;

use arbor_model::{PropertyMap, Value};

use crate::pokec::Pokec;
use crate::workload::Query;

/// How strictly to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing else writes during the run; `extra_nodes` non-User nodes exist (hot warm-up).
    Exact { extra_nodes: i64 },
    /// Writes run concurrently: up to `max_extra_nodes` extra nodes may exist.
    Bounded { min_extra_nodes: i64, max_extra_nodes: i64 },
}

/// Reference answers, cached per (query, id) because ids repeat and 3-4 hop trails are costly.
pub struct Verifier<'a> {
    data: &'a Pokec,
    cache: HashMap<(u8, u32), Vec<u32>>,
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

fn node_props(v: &Value) -> Option<(&[String], &PropertyMap)> {
    match v {
        Value::NodeData(n) => Some((&n.labels, &n.properties)),
        _ => None,
    }
}

impl<'a> Verifier<'a> {
    pub fn new(data: &'a Pokec) -> Verifier<'a> {
        Verifier { data, cache: HashMap::new() }
    }

    fn ends(&mut self, q: u8, s: u32) -> &Vec<u32> {
        let data = self.data;
        self.cache.entry((q, s)).or_insert_with(|| {
            let mut v = match q {
                5 | 6 => {
                    let mut v = data.out(s).to_vec();
                    v.sort_unstable();
                    v
                }
                7 | 8 => data.trail_ends(s, 2),
                9 | 10 => data.trail_ends(s, 3),
                11 | 12 => data.trail_ends(s, 4),
                _ => data.neighbours_2(s),
            };
            if matches!(q, 6 | 8 | 10 | 12 | 14 | 16) {
                v.retain(|&x| data.adult(x));
            }
            v
        })
    }

    /// A user node must carry its four generated properties (extra ones may exist).
    fn check_user_node(&self, v: &Value, id: Option<i64>) -> Result<i64, String> {
        let (labels, props) = node_props(v).ok_or_else(|| format!("expected a node, got {v:?}"))?;
        if !labels.iter().any(|l| l == "User") {
            return Err(format!("node without :User label: {labels:?}"));
        }
        let nid = props.get("id").and_then(int).ok_or("node without integer id")?;
        if let Some(want) = id {
            if nid != want {
                return Err(format!("node id {nid}, expected {want}"));
            }
        }
        let ix = self.data.index(nid).ok_or_else(|| format!("node id {nid} out of range"))?;
        for (k, want) in self.data.properties(ix) {
            let got = props.get(&k);
            let same = match (got, &want) {
                (Some(Value::Int(a)), Value::Int(b)) => a == b,
                (Some(Value::String(a)), Value::String(b)) => a == b,
                _ => false,
            };
            if !same {
                return Err(format!("user {nid}: property {k} is {got:?}, expected {want:?}"));
            }
        }
        Ok(nid)
    }

    /// Q4: one row of min, max and average age.
    fn check_age_stats(&self, rows: &[Vec<Value>]) -> Result<(), String> {
        let r = rows.first().filter(|_| rows.len() == 1).ok_or("expected one row")?;
        let ages: Vec<i64> = self.data.users.iter().map(|u| u.age).collect();
        let min = ages.iter().min().copied().unwrap_or(0);
        let max = ages.iter().max().copied().unwrap_or(0);
        let avg = ages.iter().sum::<i64>() as f64 / ages.len().max(1) as f64;
        let got_avg = match r.get(2) {
            Some(Value::Float(f)) => *f,
            other => return Err(format!("avg is {other:?}")),
        };
        if r.first().and_then(int) != Some(min)
            || r.get(1).and_then(int) != Some(max)
            || (got_avg - avg).abs() > 1e-9 * avg.abs().max(1.0)
        {
            return Err(format!("min/max/avg {r:?}, expected {min}/{max}/{avg}"));
        }
        Ok(())
    }

    /// Q5-Q16: the ids of the nodes reached from start node `s` (with the nodes for Q15/Q16);
    /// exactly the expected set, or in bounded mode a superset of it within the id range.
    fn check_neighbour_ids(
        &mut self,
        qn: u8,
        s: u32,
        rows: &[Vec<Value>],
        exact: bool,
    ) -> Result<(), String> {
        let n = self.data.n() as i64;
        let mut got: Vec<i64> = Vec::with_capacity(rows.len());
        for r in rows {
            let id = r.first().and_then(int).ok_or("n.id is not an integer")?;
            if qn == 15 || qn == 16 {
                self.check_user_node(r.get(1).ok_or("missing n")?, Some(id))?;
            }
            got.push(id);
        }
        got.sort_unstable();
        let distinct = qn >= 7;
        if distinct && got.windows(2).any(|w| w[0] == w[1]) {
            return Err("DISTINCT result has duplicates".into());
        }
        let want: Vec<i64> = self.ends(qn, s).iter().map(|&x| i64::from(x) + 1).collect();
        if exact {
            if got != want {
                return Err(format!("{} ids, expected {}", got.len(), want.len()));
            }
        } else {
            // Every expected id must be there (sorted-merge subset test), ids in range.
            let mut it = got.iter().peekable();
            for w in &want {
                while it.peek().is_some_and(|g| *g < w) {
                    it.next();
                }
                if it.next() != Some(w) {
                    return Err(format!("expected id {w} missing"));
                }
            }
            if got.iter().any(|&g| g < 1 || g > n) {
                return Err("id out of range".into());
            }
        }
        Ok(())
    }

    /// Checks one answer. `rows` are the records, `summary` the final SUCCESS metadata.
    pub fn check(
        &mut self,
        q: &Query,
        rows: &[Vec<Value>],
        summary: &PropertyMap,
        mode: Mode,
    ) -> Result<(), String> {
        let exact = matches!(mode, Mode::Exact { .. });
        let n = self.data.n() as i64;
        let qn = q.spec.q;
        let start = self.data.index(q.a);
        match qn {
            1 | 3 => {
                let mut got: Vec<(i64, i64)> = rows
                    .iter()
                    .map(|r| {
                        Ok((
                            r.first().and_then(int).ok_or("age")?,
                            r.get(1).and_then(int).ok_or("count")?,
                        ))
                    })
                    .collect::<Result<_, &str>>()?;
                got.sort_unstable();
                let want = self.data.age_histogram(qn == 3);
                if got != want {
                    return Err(format!(
                        "age histogram differs: {} rows, expected {}",
                        got.len(),
                        want.len()
                    ));
                }
            }
            2 => {
                let r = rows.first().filter(|_| rows.len() == 1).ok_or("expected one row")?;
                let all = r.first().and_then(int).ok_or("count(n)")?;
                let ages = r.get(1).and_then(int).ok_or("count(n.age)")?;
                let (lo, hi) = match mode {
                    Mode::Exact { extra_nodes } => (n + extra_nodes, n + extra_nodes),
                    Mode::Bounded { min_extra_nodes, max_extra_nodes } => {
                        (n + min_extra_nodes, n + max_extra_nodes)
                    }
                };
                if ages != n || all < lo || all > hi {
                    return Err(format!(
                        "count(n)={all} count(n.age)={ages}, expected {lo}..={hi} and {n}"
                    ));
                }
            }
            4 => self.check_age_stats(rows)?,
            5..=16 => {
                let s = start.ok_or("start id out of range")?;
                self.check_neighbour_ids(qn, s, rows, exact)?;
            }
            17 => {
                let s = start.ok_or("start id out of range")?;
                let want = self.data.cycle_count(s);
                if (exact && rows.len() != want) || rows.len() < want {
                    return Err(format!("{} cycles, expected {want}", rows.len()));
                }
                for r in rows {
                    self.check_user_node(r.get(1).ok_or("missing m")?, None)?;
                }
            }
            18 => {
                let s = start.ok_or("start id out of range")?;
                let want = usize::from(self.data.pattern_long_exists(s));
                if rows.len() > 1 || (exact && rows.len() != want) || rows.len() < want {
                    return Err(format!("{} rows, expected {want}", rows.len()));
                }
                if let Some(r) = rows.first() {
                    self.check_user_node(r.first().ok_or("missing n5")?, None)?;
                }
            }
            19 => {
                let s = start.ok_or("start id out of range")?;
                let want = usize::from(!self.data.out(s).is_empty());
                if rows.len() > 1 || (exact && rows.len() != want) || rows.len() < want {
                    return Err(format!("{} rows, expected {want}", rows.len()));
                }
                if let Some(r) = rows.first() {
                    let id = self.check_user_node(r.first().ok_or("missing m")?, None)?;
                    let ok = self.data.index(id).is_some_and(|m| self.data.out(s).contains(&m));
                    if exact && !ok {
                        return Err(format!("{id} is not a friend of {}", q.a));
                    }
                }
            }
            20 => match rows {
                [r] => match r.first() {
                    Some(Value::RelData(rel)) if rel.rel_type == "Temp" => {}
                    other => return Err(format!("expected a :Temp relationship, got {other:?}")),
                },
                _ => return Err(format!("{} rows, expected 1", rows.len())),
            },
            21 => match rows {
                [r] => {
                    let (labels, props) =
                        r.first().and_then(node_props).ok_or("expected a node")?;
                    if labels.iter().all(|l| l != "UserTemp")
                        || props.get("id").and_then(int) != Some(q.a)
                    {
                        return Err(format!("unexpected node {labels:?} {props:?}"));
                    }
                }
                _ => return Err(format!("{} rows, expected 1", rows.len())),
            },
            22 => {
                if !rows.is_empty() {
                    return Err(format!("{} rows, expected none", rows.len()));
                }
                if let Some(Value::Map(stats)) = summary.get("stats") {
                    if stats.get("properties-set").and_then(int) != Some(1) {
                        return Err(format!("stats {stats:?}, expected properties-set 1"));
                    }
                }
            }
            23 => match rows {
                [r] => {
                    self.check_user_node(r.first().ok_or("missing n")?, Some(q.a))?;
                }
                _ => return Err(format!("{} rows, expected 1", rows.len())),
            },
            other => return Err(format!("no reference for Q{other}")),
        }
        Ok(())
    }
}
