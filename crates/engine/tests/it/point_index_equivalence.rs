//! POINT index seeks must not change results: `point.distance(p, c) < r`, `<= r` and
//! `point.withinBBox(p, lo, hi)` over random points (cartesian and WGS-84, 2D and 3D; poles,
//! the dateline, repeated points, non-point values) give the same rows on a database with a
//! POINT index as on one without, on nodes and relationships, with the data in the delta, in
//! the base (after a checkpoint), changed and deleted over the base, in an open transaction's
//! own writes, and after the databases are closed and opened again.

use crate::common::{compare, plan_ops, run, two_databases, Rng};
use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

/// A value in `[lo, hi]`, often one of the ends or a round number.
trait Coord {
    fn coord(&mut self, lo: f64, hi: f64) -> f64;
}

impl Coord for Rng {
    fn coord(&mut self, lo: f64, hi: f64) -> f64 {
        match self.below(8) {
            0 => lo,
            1 => hi,
            2 => ((lo + hi) / 2.0).round(),
            _ => lo + (hi - lo) * (self.below(1_000_001) as f64 / 1e6),
        }
    }
}

fn point_literal(rng: &mut Rng, crs: u64) -> String {
    match crs {
        0 => format!("point({{x: {}, y: {}}})", rng.coord(-100.0, 100.0), rng.coord(-100.0, 100.0)),
        1 => format!(
            "point({{x: {}, y: {}, z: {}}})",
            rng.coord(-10.0, 10.0),
            rng.coord(-10.0, 10.0),
            rng.coord(-10.0, 10.0)
        ),
        2 => format!(
            "point({{longitude: {}, latitude: {}}})",
            rng.coord(-180.0, 180.0),
            rng.coord(-90.0, 90.0)
        ),
        _ => format!(
            "point({{longitude: {}, latitude: {}, height: {}}})",
            rng.coord(-180.0, 180.0),
            rng.coord(-90.0, 90.0),
            rng.coord(-1000.0, 1000.0)
        ),
    }
}

/// A value for the indexed property: mostly points, sometimes another type or nothing.
fn value_literal(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => "5".to_string(),
        1 => "'point'".to_string(),
        2 => "null".to_string(),
        n => point_literal(rng, n % 4),
    }
}

fn setup(s: &mut Session, rng: &mut Rng, from: u64, to: u64) {
    for i in from..to {
        let (v, w) = (value_literal(rng), value_literal(rng));
        run(s, &format!("CREATE (a:T {{id: {i}, p: {v}}})-[:R {{id: {i}, p: {w}}}]->(a)")).unwrap();
    }
    run(s, "CREATE (:Other {p: point({x: 0, y: 0})})").unwrap();
}

/// Random distance and box queries on nodes and relationships in every CRS.
fn queries(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        let crs = rng.below(4);
        let (c, d) = (point_literal(rng, crs), point_literal(rng, crs));
        let r = match crs {
            0 | 1 => rng.coord(0.0, 60.0),
            _ => rng.coord(0.0, 3_000_000.0),
        };
        let op = if i % 2 == 0 { "<" } else { "<=" };
        let (m, v) = if i % 3 == 0 { ("()-[e:R]->()", "e") } else { ("(e:T)", "e") };
        out.push(format!(
            "MATCH {m} WHERE point.distance({v}.p, {c}) {op} {r} RETURN {v}.id, {v}.p"
        ));
        out.push(format!("MATCH {m} WHERE point.withinBBox({v}.p, {c}, {d}) RETURN {v}.id"));
    }
    for q in [
        "MATCH (n:T) WHERE point.distance(n.p, point({longitude: 0, latitude: 90})) < 500000 RETURN n.id",
        "MATCH (n:T) WHERE point.distance(n.p, point({longitude: 180, latitude: 0})) <= 2000000 RETURN n.id",
        "MATCH (n:T) WHERE point.distance(n.p, point({longitude: -180, latitude: -90})) < 1e6 RETURN n.id",
        "MATCH (n:T) WHERE point.withinBBox(n.p, point({longitude: 170, latitude: -90}), point({longitude: -170, latitude: 90})) RETURN n.id",
        "MATCH (n:T) WHERE point.distance(n.p, point({x: 0, y: 0})) < 1e300 RETURN n.id",
        "UNWIND [1, 50, null] AS r MATCH (n:T) WHERE point.distance(n.p, point({x: 1, y: 1})) <= r RETURN r, n.id",
    ] {
        out.push(q.to_string());
    }
    out
}

fn change(s: &mut Session, seed: u64) {
    let mut rng = Rng(seed);
    setup(s, &mut rng, 300, 350);
    for _ in 0..20 {
        let (id, v) = (rng.below(350), value_literal(&mut rng));
        run(s, &format!("MATCH (n:T {{id: {id}}}) SET n.p = {v}")).unwrap();
        run(s, &format!("MATCH ()-[r:R {{id: {id}}}]->() SET r.p = {v}")).unwrap();
    }
    run(s, "MATCH (n:T) WHERE n.id % 7 = 0 REMOVE n.p").unwrap();
    run(s, "MATCH (n:T) WHERE n.id % 9 = 0 REMOVE n:T").unwrap();
    run(s, "MATCH ()-[r:R]->() WHERE r.id % 8 = 0 DELETE r").unwrap();
    run(s, "MATCH (n:T) WHERE n.id % 11 = 0 DETACH DELETE n").unwrap();
}

#[test]
fn point_index_seeks_equal_scans() {
    let ((dir_a, a), (dir_b, b)) = two_databases();
    let qs = queries(&mut Rng(0x9e37_79b9_7f4a_7c15), 40);
    {
        let (mut pa, mut pb) = (a.session(), b.session());
        run(&mut pb, "CREATE POINT INDEX t_p FOR (n:T) ON (n.p)").unwrap();
        for (s, seed) in [(&mut pa, 7), (&mut pb, 7)] {
            setup(s, &mut Rng(seed), 0, 300);
        }
        // The relationship index populates over existing data.
        run(&mut pb, "CREATE POINT INDEX r_p FOR ()-[r:R]-() ON (r.p)").unwrap();
        run(&mut pb, "CALL db.awaitIndexes()").unwrap();
        compare(&mut pa, &mut pb, &qs, "delta only");
        a.checkpoint().unwrap();
        b.checkpoint().unwrap();
        compare(&mut pa, &mut pb, &qs, "base");

        let q = "MATCH (n:T) WHERE point.distance(n.p, point({x: 0, y: 0})) < 5 RETURN n";
        assert!(plan_ops(&mut pb, q).contains(&"NodeIndexSeekByRange".to_string()));
        assert!(plan_ops(&mut pa, q).contains(&"NodeByLabelScan".to_string()));
        let q = "MATCH ()-[r:R]->() WHERE point.withinBBox(r.p, point({x: 0, y: 0}), point({x: 1, y: 1})) RETURN r";
        let ops = plan_ops(&mut pb, q);
        assert!(ops.contains(&"DirectedRelationshipIndexSeekByRange".to_string()), "{ops:?}");

        for (s, seed) in [(&mut pa, 11), (&mut pb, 11)] {
            change(s, seed);
        }
        compare(&mut pa, &mut pb, &qs, "delta over base");

        for (s, seed) in [(&mut pa, 13), (&mut pb, 13)] {
            s.begin(TxConfig::default()).unwrap();
            change(s, seed);
        }
        compare(&mut pa, &mut pb, &qs, "transaction");
        for s in [&mut pa, &mut pb] {
            s.commit().unwrap();
        }
        compare(&mut pa, &mut pb, &qs, "committed");
    }
    drop((a, b));
    // Closed without a checkpoint: the reopened stores recover the delta from the log.
    let a = Database::open(dir_a.path(), DatabaseConfig::default()).unwrap();
    let b = Database::open(dir_b.path(), DatabaseConfig::default()).unwrap();
    let (mut pa, mut pb) = (a.session(), b.session());
    compare(&mut pa, &mut pb, &qs, "reopened");
    a.checkpoint().unwrap();
    b.checkpoint().unwrap();
    compare(&mut pa, &mut pb, &qs, "rebuilt base");
}
