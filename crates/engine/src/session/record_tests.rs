//! Tests of [`Record`](super::record::Record): what a streaming consumer (Bolt) receives,
//! against the owned rows the session (HTTP, test runners) and the embedded API hand out,
//! inside a transaction after its own writes.

use arbor_model::result::Parts;
use arbor_model::{
    NodeHead, PathPart, PropertyMap, RelHead, Result, ResultValue, ResultWriter, Scalar,
};

use crate::{Database, PullOutcome, Record, Session, TxConfig};

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
            // Written twice: a record can be (the Bolt server writes columns one by one).
            assert_eq!(traced(&r.to_values()?), t.0);
            rows.push(t.0);
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    rows
}

/// An owned row written back, traced.
fn traced(row: &[ResultValue]) -> String {
    let mut t = Trace::default();
    for v in row {
        v.write(&mut t).unwrap();
    }
    t.0
}

/// The rows of `q` as `Session::pull` hands them out (owned, built from records), traced.
fn traced_values(s: &mut Session, q: &str) -> Vec<String> {
    run(s, q);
    let mut rows = Vec::new();
    let outcome = s
        .pull(None, -1, &mut |row: Vec<ResultValue>| {
            rows.push(traced(&row));
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    rows
}

/// The rows of `q` as the embedded API hands them out in `tx`, traced.
fn traced_embedded(tx: &mut crate::Tx, q: &str) -> Vec<String> {
    let rows = tx.execute(q, PropertyMap::new()).unwrap();
    rows.map(|r| traced(&r.unwrap())).collect()
}

const WRITES: [&str; 2] = [
    "CREATE (:A {name: 'one', x: 1})-[:R {w: 2}]->(b:B:C {y: [1, 2]})<-[:S]-(:D)",
    "CREATE (a:A {name: 'two'})-[:R]->(b:B)-[:S {self: true}]->(b)",
];

const NESTED: &str = "MATCH p = (a:A)-[r:R]->(b)-[s]-(c) \
     RETURN a, r, p, [a, [b, r, s]] AS l, {n: a, m: {r: r, p: p, ps: [p]}} AS m, \
     nodes(p) AS ns, relationships(p) AS rs, a.name AS name ORDER BY name";

#[test]
fn records_in_a_transaction_carry_its_own_writes_materialised() {
    let db = Database::in_memory();
    let mut s = db.session();
    s.begin(TxConfig::default()).unwrap();
    for q in WRITES {
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

/// The embedded API's rows, in a write transaction after its own (uncommitted) writes: the
/// same nodes, relationships and paths, entity by entity, as the records Bolt streams from in
/// an explicit transaction with the same writes (two databases, so the same ids).
#[test]
fn embedded_rows_after_own_writes_equal_the_streamed_records() {
    let bolt_side = Database::in_memory();
    let mut s = bolt_side.session();
    s.begin(TxConfig::default()).unwrap();
    let embedded_side = Database::in_memory();
    let mut tx = embedded_side.begin_write().unwrap();
    for q in WRITES {
        run(&mut s, q);
        let _ = s.discard(None, -1).unwrap();
        assert_eq!(tx.execute(q, PropertyMap::new()).unwrap().count(), 0);
    }
    let records = traced_records(&mut s, NESTED);
    assert_eq!(records.len(), 2);
    assert!(records[0].contains("path(3 2 [1, 1, -2, 2])"), "{}", records[0]);
    assert_eq!(traced_embedded(&mut tx, NESTED), records);
    // `Database::execute` rows outlive their transaction, whole.
    tx.commit().unwrap();
    let rows = embedded_side.execute("MATCH (b:B:C) RETURN b", PropertyMap::new()).unwrap();
    assert!(matches!(&rows[0][0], ResultValue::Node(n)
        if n.labels == ["B", "C"] && n.properties.get("y").is_some()));
}
