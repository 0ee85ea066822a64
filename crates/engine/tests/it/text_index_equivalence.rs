//! TEXT index scans must not change results: `CONTAINS` and `ENDS WITH` over random strings
//! (ASCII, Latin accents, CJK, spaces; empty and one-character needles that have no trigram)
//! give the same rows on a database with a TEXT index as on one without, with the data in the
//! base (after a checkpoint), in the delta (committed since) and in an open transaction's own
//! writes, and for an index created over existing data.

use crate::common::{compare, plan_ops, run, two_databases, Rng};
use arbor_engine::{Session, TxConfig};

/// Few distinct characters, so that random needles often hit.
const ALPHABET: &[char] = &['a', 'b', 'n', 'A', ' ', 'é', 'ö', 'ß', '語', 'テ', '\'', '\\'];

fn random_string(rng: &mut Rng, max: u64) -> String {
    let len = rng.below(max + 1);
    (0..len).map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize]).collect()
}

/// A value for the indexed property: mostly strings, sometimes another type or nothing.
fn value_literal(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!("{}", rng.below(100)),
        1 => format!("['{}']", random_string(rng, 3).replace('\\', "\\\\").replace('\'', "\\'")),
        2 => "null".to_string(),
        _ => string_literal(&random_string(rng, 9)),
    }
}

fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn setup(s: &mut Session, rng: &mut Rng, from: u64, to: u64) {
    for i in from..to {
        let v = value_literal(rng);
        run(s, &format!("CREATE (:T {{id: {i}, s: {v}, u: {}}})", value_literal(rng))).unwrap();
    }
    // Never found: another label.
    run(s, "CREATE (:Other {s: 'ab', u: 'ab'})").unwrap();
}

/// The queries: random needles of length 0 to 4 on both properties and both predicates.
fn queries(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        let needle = string_literal(&random_string(rng, 4));
        let key = if i % 3 == 0 { "u" } else { "s" };
        let op = if i % 2 == 0 { "CONTAINS" } else { "ENDS WITH" };
        out.push(format!("MATCH (n:T) WHERE n.{key} {op} {needle} RETURN n.id, n.{key}"));
    }
    out.push("MATCH (n:T) WHERE n.s CONTAINS 'a' AND n.s ENDS WITH 'b' RETURN n.id".into());
    out.push(
        "UNWIND ['a', 'nö', null, 5] AS x MATCH (n:T) WHERE n.s CONTAINS x RETURN n.id".into(),
    );
    out
}

#[test]
fn text_index_scans_equal_label_scans() {
    let ((_dir_a, a), (_dir_b, b)) = two_databases();
    let (mut pa, mut pb) = (a.session(), b.session());
    run(&mut pb, "CREATE TEXT INDEX t_s FOR (n:T) ON (n.s)").unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let qs = queries(&mut rng, 60);
    for (s, seed) in [(&mut pa, 7), (&mut pb, 7)] {
        setup(s, &mut Rng(seed), 0, 300);
    }
    // `u` gets its TEXT index over existing data (population).
    run(&mut pb, "CREATE TEXT INDEX t_u FOR (n:T) ON (n.u)").unwrap();
    run(&mut pb, "CALL db.awaitIndexes()").unwrap();
    compare(&mut pa, &mut pb, &qs, "delta only");
    a.checkpoint().unwrap();
    b.checkpoint().unwrap();
    compare(&mut pa, &mut pb, &qs, "base");

    let ops = plan_ops(&mut pb, "MATCH (n:T) WHERE n.s CONTAINS 'ab' RETURN n");
    assert!(ops.contains(&"NodeIndexContainsScan".to_string()), "{ops:?}");
    let ops = plan_ops(&mut pb, "MATCH (n:T) WHERE n.u ENDS WITH 'ab' RETURN n");
    assert!(ops.contains(&"NodeIndexEndsWithScan".to_string()), "{ops:?}");
    let ops = plan_ops(&mut pa, "MATCH (n:T) WHERE n.s CONTAINS 'ab' RETURN n");
    assert!(ops.contains(&"NodeByLabelScan".to_string()), "{ops:?}");

    // Delta: new nodes, changed and removed values, removed labels, deletions.
    for (s, seed) in [(&mut pa, 11), (&mut pb, 11)] {
        let mut rng = Rng(seed);
        setup(s, &mut rng, 300, 400);
        for _ in 0..20 {
            let (id, v) = (rng.below(400), string_literal(&random_string(&mut rng, 9)));
            run(s, &format!("MATCH (n:T {{id: {id}}}) SET n.s = {v}")).unwrap();
        }
        run(s, "MATCH (n:T) WHERE n.id % 7 = 0 REMOVE n.s").unwrap();
        run(s, "MATCH (n:T) WHERE n.id % 9 = 0 REMOVE n:T").unwrap();
        run(s, "MATCH (n:T) WHERE n.id % 11 = 0 DETACH DELETE n").unwrap();
    }
    compare(&mut pa, &mut pb, &qs, "delta over base");

    // The open transaction's own writes.
    for (s, seed) in [(&mut pa, 13), (&mut pb, 13)] {
        let mut rng = Rng(seed);
        s.begin(TxConfig::default()).unwrap();
        for _ in 0..20 {
            let (id, v) = (rng.below(400), string_literal(&random_string(&mut rng, 9)));
            run(s, &format!("MATCH (n:T {{id: {id}}}) SET n.s = {v}, n.u = {v}")).unwrap();
        }
        setup(s, &mut rng, 1000, 1020);
        run(s, "MATCH (n:T) WHERE n.id % 13 = 5 DETACH DELETE n").unwrap();
    }
    compare(&mut pa, &mut pb, &qs, "transaction");
    for s in [&mut pa, &mut pb] {
        s.commit().unwrap();
    }
    compare(&mut pa, &mut pb, &qs, "committed");
    a.checkpoint().unwrap();
    b.checkpoint().unwrap();
    compare(&mut pa, &mut pb, &qs, "rebuilt base");
}
