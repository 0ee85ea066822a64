//! Tests of [`Record`](super::record::Record): what a streaming consumer receives, against
//! the owned rows the executor materialises, inside a transaction after its own writes.

use arbor_model::result::Parts;
use arbor_model::{NodeHead, PathPart, PropertyMap, RelHead, Result, ResultWriter, Scalar, Value};

use crate::{Database, PullOutcome, Record, RecordNames, Session, TxConfig};

/// Writes what it receives as text: every event and every entity's head.
#[derive(Default)]
struct Trace(String);

impl ResultWriter for Trace {
    fn scalar(&mut self, v: Scalar<'_>) -> Result<()> {
        self.0 += &format!("{v:?} ");
        Ok(())
    }
    fn list(&mut self, len: usize) -> Result<()> {
        self.0 += &format!("list({len}) ");
        Ok(())
    }
    fn map(&mut self, len: usize) -> Result<()> {
        self.0 += &format!("map({len}) ");
        Ok(())
    }
    fn key(&mut self, key: &str) -> Result<()> {
        self.0 += &format!("{key}: ");
        Ok(())
    }
    fn node(&mut self, head: NodeHead<'_>, properties: Parts<'_, ()>) -> Result<()> {
        self.0 += &format!("node({} {:?} {}){{ ", head.id.0, head.labels, head.properties);
        properties(self, ())?;
        self.0 += "} ";
        Ok(())
    }
    fn relationship(&mut self, head: RelHead<'_>, properties: Parts<'_, ()>) -> Result<()> {
        self.0 += &format!(
            "rel({} {}->{} {} {}){{ ",
            head.id.0, head.start.0, head.end.0, head.rel_type, head.properties
        );
        properties(self, ())?;
        self.0 += "} ";
        Ok(())
    }
    fn path(
        &mut self,
        nodes: usize,
        rels: usize,
        steps: &[i64],
        parts: Parts<'_, PathPart>,
    ) -> Result<()> {
        self.0 += &format!("path({nodes} {rels} {steps:?}) nodes: ");
        parts(self, PathPart::Nodes)?;
        self.0 += "rels: ";
        parts(self, PathPart::Relationships)?;
        self.0 += "end ";
        Ok(())
    }
}

fn run(s: &mut Session, q: &str) {
    s.run(q, PropertyMap::new(), TxConfig::default()).unwrap();
}

/// The rows of `q` as records, traced.
fn traced_records(s: &mut Session, q: &str) -> Vec<String> {
    run(s, q);
    let mut rows = Vec::new();
    let outcome = s
        .pull_records(None, -1, &mut |r: &mut Record<'_>| {
            let mut t = Trace::default();
            r.write(&mut t)?;
            // Its owned form is materialised too.
            assert!(r.to_values()?.iter().all(materialised), "{}", t.0);
            rows.push(t.0);
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    rows
}

/// The rows of `q` as the executor materialises them, traced through a detached record.
fn traced_values(s: &mut Session, q: &str) -> Vec<String> {
    run(s, q);
    let mut rows = Vec::new();
    let outcome = s
        .pull(None, -1, &mut |row: Vec<Value>| {
            assert!(row.iter().all(materialised));
            let mut t = Trace::default();
            Record::detached(&row, &mut RecordNames::default()).write(&mut t)?;
            rows.push(t.0);
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    rows
}

fn materialised(v: &Value) -> bool {
    match v {
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => false,
        Value::List(items) => items.iter().all(materialised),
        Value::Map(m) => m.values().all(materialised),
        _ => true,
    }
}

const NESTED: &str = "MATCH p = (a:A)-[r:R]->(b)-[s]-(c) \
     RETURN a, r, p, [a, [b, r, s]] AS l, {n: a, m: {r: r, p: p, ps: [p]}} AS m, \
     nodes(p) AS ns, relationships(p) AS rs, a.name AS name ORDER BY name";

#[test]
fn records_in_a_transaction_carry_its_own_writes_materialised() {
    let db = Database::in_memory();
    let mut s = db.session();
    s.begin(TxConfig::default()).unwrap();
    for q in [
        "CREATE (:A {name: 'one', x: 1})-[:R {w: 2}]->(b:B:C {y: [1, 2]})<-[:S]-(:D)",
        "CREATE (a:A {name: 'two'})-[:R]->(b:B)-[:S {self: true}]->(b)",
    ] {
        run(&mut s, q);
        let _ = s.discard(None, -1).unwrap();
    }
    let records = traced_records(&mut s, NESTED);
    let values = traced_values(&mut s, NESTED);
    assert_eq!(records, values, "records and materialised rows differ");
    assert_eq!(records.len(), 2);
    // The first row, from the transaction's own writes: labels sorted, properties by key, the
    // second relationship walked against its direction (step -2), the list property intact.
    let one = &records[0];
    for part in [
        r#"["A"] 2){ name: String("one") x: Int(1) }"#,
        r#"["B", "C"] 1){ y: list(2) Int(1) Int(2) }"#,
        "R 1){ w: Int(2) }",
        "path(3 2 [1, 1, -2, 2])",
        "m: map(3) p: path(",
    ] {
        assert!(one.contains(part), "{part} not in {one}");
    }
    // A self-loop walked from its start: forward, back to the same node.
    assert!(records[1].contains("path(2 2 [1, 1, 2, 1])"), "{}", records[1]);
    s.rollback().unwrap();

    // After commit, from another session: the same answers from the committed graph.
    let mut s = db.session();
    run(&mut s, "CREATE (:A {name: 'z'})-[:R]->(:B)-[:S]->(:E)");
    let _ = s.discard(None, -1).unwrap();
    let records = traced_records(&mut s, NESTED);
    assert_eq!(records, traced_values(&mut s, NESTED));
    assert_eq!(records.len(), 1);
}

#[test]
fn scalar_and_precomputed_records_match_their_owned_rows() {
    let db = Database::in_memory();
    let mut s = db.session();
    for q in [
        "UNWIND range(1, 5) AS i RETURN i, toString(i) AS s, i * 1.5 AS f, [i, null] AS l, \
         {k: i} AS m, date('2024-01-02') AS d",
        "SHOW INDEXES",
        "RETURN 1 AS one",
    ] {
        assert_eq!(traced_records(&mut s, q), traced_values(&mut s, q), "{q}");
    }
}
