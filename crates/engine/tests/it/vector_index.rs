//! Vector indexes end to end through Cypher: creation and options, `queryNodes` /
//! `queryRelationships` answers and Neo4j's scores and errors, transactional reads (snapshot,
//! own writes, rollback), durability (restart and crash), the ANN path against an exact
//! scan, `SHOW INDEXES` columns and `DROP INDEX $name`.

use arbor_engine::{Database, DatabaseConfig, PullOutcome, Session, TxConfig};
use arbor_model::{to_cypher_literal, PropertyMap, Value};

fn run_p(s: &mut Session, q: &str, params: PropertyMap) -> Result<Vec<Vec<Value>>, String> {
    s.run(q, params, TxConfig::default())
        .map_err(|e| format!("{}: {}", e.status.code(), e.message))?;
    let mut rows = Vec::new();
    let mut sink = |row: Vec<arbor_engine::ResultValue>| {
        let row: Vec<Value> = row.into_iter().map(Value::from).collect();
        rows.push(row);
        Ok(())
    };
    match s.pull(None, -1, &mut sink).map_err(|e| format!("{}: {}", e.status.code(), e.message))? {
        PullOutcome::Done(_) => Ok(rows),
        PullOutcome::HasMore => Err(format!("{q}: not exhausted")),
    }
}

fn run(s: &mut Session, q: &str) -> Result<Vec<Vec<Value>>, String> {
    run_p(s, q, PropertyMap::new())
}

fn ok(s: &mut Session, q: &str) -> Vec<Vec<Value>> {
    run(s, q).unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// `id | score` rows of a query returning an integer and a float, scores rounded to 6 places.
fn hits(s: &mut Session, q: &str) -> Vec<(i64, String)> {
    ok(s, q)
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Int(i), Value::Float(f)) => (*i, format!("{f:.6}")),
            other => panic!("unexpected row {other:?}"),
        })
        .collect()
}

const DOCS: &str = "CREATE (:Doc {id: 1, emb: [1.0, 0.0]}), (:Doc {id: 2, emb: [0.0, 1.0]}), \
                    (:Doc {id: 3, emb: [1.0, 1.0]}), (:Doc {id: 4, emb: [1, 2]}), \
                    (:Doc {id: 5, emb: 'x'}), (:Doc {id: 6, emb: [1.0, 2.0, 3.0]})";
const CREATE: &str = "CREATE VECTOR INDEX docs IF NOT EXISTS FOR (n:Doc) ON n.emb OPTIONS \
                      {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine', \
                      `vector.quantization.enabled`: false}}";
const QUERY: &str = "CALL db.index.vector.queryNodes('docs', 10, [1.0, 0.5]) YIELD node, score \
                     RETURN node.id, score";

/// Neo4j 5.26's answer to `QUERY` over `DOCS` (nodes 5 and 6 are not vectors of the index).
/// Without quantization Neo4j's scores are exact; with it (its default) they are Lucene's
/// int8-quantized scores, which Arbor reproduces (`quantized_scores_and_order_match_neo4j`).
fn neo4j_answer() -> Vec<(i64, String)> {
    [
        (3, 0.974341630935669),
        (1, 0.9472135901451111),
        (4, 0.8999999761581421),
        (2, 0.7236068248748779),
    ]
    .into_iter()
    .map(|(i, f)| (i, format!("{f:.6}")))
    .collect()
}

#[test]
fn query_nodes_matches_neo4j_before_and_after_the_index_is_built() {
    let db = Database::in_memory();
    let mut s = db.session();
    // Data first: the index populates from existing nodes.
    ok(&mut s, DOCS);
    ok(&mut s, CREATE);
    assert_eq!(hits(&mut s, QUERY), neo4j_answer());
    ok(&mut s, "CALL db.awaitIndexes()");
    assert_eq!(hits(&mut s, QUERY), neo4j_answer());
    // Index first: commits maintain it.
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, CREATE);
    ok(&mut s, DOCS);
    assert_eq!(hits(&mut s, QUERY), neo4j_answer());
    let top = hits(&mut s, "CALL db.index.vector.queryNodes('docs', 2, [1.0, 0.5]) YIELD node, score RETURN node.id, score");
    assert_eq!(top, neo4j_answer()[..2].to_vec());
}

#[test]
fn errors_carry_neo4j_codes_and_messages() {
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, CREATE);
    ok(&mut s, "CREATE ()-[:R {e: [1.0, 2.0]}]->()");
    let prefix = "Neo.ClientError.Procedure.ProcedureCallFailed: Failed to invoke procedure \
                  `db.index.vector.queryNodes`: Caused by: java.lang.IllegalArgumentException: ";
    let cases = [
        (
            "CALL db.index.vector.queryNodes('nope', 1, [1.0, 0.5])",
            "There is no such vector schema index: nope",
        ),
        (
            "CALL db.index.vector.queryNodes('docs', 0, [1.0, 0.5])",
            "'numberOfNearestNeighbours' must be positive",
        ),
        (
            "CALL db.index.vector.queryNodes('nope', -1, [1.0, 0.5])",
            "'numberOfNearestNeighbours' must be positive",
        ),
        (
            "CALL db.index.vector.queryNodes('docs', 2, [1.0, 0.5, 3.0])",
            "Index query vector has 3 dimensions, but indexed vectors have 2.",
        ),
    ];
    for (q, msg) in cases {
        assert_eq!(run(&mut s, q).unwrap_err(), format!("{prefix}{msg}"), "{q}");
    }
    let e =
        run(&mut s, "CALL db.index.vector.queryRelationships('docs', 2, [1.0, 0.0])").unwrap_err();
    assert!(e.contains("is an index on NODE, so it cannot be queried for nodes."), "{e}");
    let e = run(&mut s, "CALL db.index.vector.queryNodes('docs', 2, [0.0, 0.0])").unwrap_err();
    assert!(e.contains("Vector must only contain finite values, and have positive"), "{e}");
    let e = run(&mut s, "DROP INDEX nope").unwrap_err();
    assert_eq!(
        e,
        "Neo.DatabaseError.Schema.IndexDropFailed: Unable to drop index called `nope`. There is \
         no such index."
    );
    let e = run(&mut s, "CREATE VECTOR INDEX docs FOR (n:Doc) ON n.emb").unwrap_err();
    assert!(e.starts_with("Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"), "{e}");
    let e = run(&mut s, "CREATE VECTOR INDEX docs2 FOR (n:Doc) ON n.emb").unwrap_err();
    assert_eq!(
        e,
        "Neo.ClientError.Schema.IndexAlreadyExists: There already exists an index (:Doc {emb})."
    );
    let e = run(&mut s, "CREATE VECTOR INDEX bad FOR (n:Doc) ON n.x OPTIONS {indexConfig: {`vector.dimensions`: 5000}}").unwrap_err();
    assert_eq!(e, "Neo.DatabaseError.Statement.ExecutionFailed: 'vector.dimensions' must be between 1 and 4096 inclusively");
}

#[test]
fn a_transaction_sees_its_snapshot_and_its_own_writes() {
    let db = Database::in_memory();
    let (mut a, mut b) = (db.session(), db.session());
    ok(&mut a, CREATE);
    ok(&mut a, DOCS);
    ok(&mut a, "CALL db.awaitIndexes()");
    a.begin(TxConfig::default()).unwrap();
    // A concurrent commit is not in `a`'s snapshot...
    ok(&mut b, "CREATE (:Doc {id: 7, emb: [1.0, 0.5]})");
    ok(&mut b, "MATCH (n:Doc {id: 3}) DETACH DELETE n");
    assert_eq!(hits(&mut a, QUERY), neo4j_answer());
    // ...its own writes are: a new vector, a changed one, a removed one.
    ok(&mut a, "CREATE (:Doc {id: 8, emb: [2.0, 1.0]})");
    ok(&mut a, "MATCH (n:Doc {id: 2}) SET n.emb = [1.0, 0.0]");
    ok(&mut a, "MATCH (n:Doc {id: 1}) REMOVE n:Doc");
    let got = hits(&mut a, QUERY);
    let ids: Vec<i64> = got.iter().map(|h| h.0).collect();
    assert_eq!(ids, vec![8, 3, 2, 4], "{got:?}");
    assert_eq!(got[0].1, "1.000000");
    a.rollback().unwrap();
    // After the rollback, the committed state: 7 in, 3 gone.
    let ids: Vec<i64> = hits(&mut a, QUERY).iter().map(|h| h.0).collect();
    assert_eq!(ids, vec![7, 1, 4, 2]);
}

#[test]
fn relationships_set_vector_property_and_the_legacy_procedure() {
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, "CALL db.index.vector.createNodeIndex('legacy', 'Doc', 'v', 3, 'euclidean')");
    ok(&mut s, "CREATE VECTOR INDEX rels FOR ()-[r:R]-() ON (r.emb) OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'euclidean'}}");
    ok(&mut s, "CREATE (a:Doc {id: 10})-[:R {id: 1}]->(b:Doc {id: 11})");
    let rows = ok(
        &mut s,
        "MATCH (n:Doc {id: 10}) CALL db.create.setNodeVectorProperty(n, 'v', [1, 2, 3]) RETURN n.v",
    );
    assert_eq!(to_cypher_literal(&rows[0][0]), "[1.0, 2.0, 3.0]");
    ok(&mut s, "MATCH ()-[r:R]->() CALL db.create.setRelationshipVectorProperty(r, 'emb', [1, 2, 3]) RETURN r.emb");
    let q = "CALL db.index.vector.queryRelationships('rels', 5, [1.0, 2.0, 4.0]) YIELD relationship, score RETURN relationship.id, score";
    // Quantized (Neo4j's default): one vector [1, 2, 3] quantizes [1, 2, 4] to the same
    // levels, so Neo4j 5.26 answers 1.0 where the exact score is 0.5.
    assert_eq!(hits(&mut s, q), vec![(1, "1.000000".to_string())]);
    let q = "CALL db.index.vector.queryNodes('legacy', 5, [1.0, 2.0, 3.0]) YIELD node, score RETURN node.id, score";
    assert_eq!(hits(&mut s, q), vec![(10, "1.000000".to_string())]);
    let e = run(&mut s, "CALL db.index.vector.queryNodes('rels', 5, [1.0, 2.0, 4.0])").unwrap_err();
    assert!(e.contains("is an index on RELATIONSHIP, so it cannot be queried for nodes."), "{e}");
}

#[test]
fn show_and_drop_indexes() {
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, CREATE);
    ok(&mut s, "CREATE INDEX range_id FOR (n:Doc) ON (n.id)");
    let names = |s: &mut Session, q: &str| -> Vec<String> {
        ok(s, q).into_iter().map(|r| to_cypher_literal(&r[0])).collect()
    };
    assert_eq!(names(&mut s, "SHOW VECTOR INDEXES YIELD name"), vec!["'docs'"]);
    assert_eq!(names(&mut s, "SHOW RANGE INDEXES YIELD name"), vec!["'range_id'"]);
    assert!(names(&mut s, "SHOW TEXT INDEXES YIELD name").is_empty());
    assert!(names(&mut s, "SHOW POINT INDEXES YIELD name").is_empty());
    // The two built-in LOOKUP indexes are listed too, as in Neo4j 5.
    assert_eq!(names(&mut s, "SHOW ALL INDEXES YIELD name").len(), 4);
    let row =
        &ok(&mut s, "SHOW VECTOR INDEXES YIELD type, indexProvider, options, createStatement")[0];
    let row: Vec<String> = row.iter().map(to_cypher_literal).collect();
    assert_eq!(row[0], "'VECTOR'");
    assert_eq!(row[1], "'vector-2.0'");
    assert_eq!(
        row[2],
        "{indexConfig: {`vector.dimensions`: 2, `vector.hnsw.ef_construction`: 100, `vector.hnsw.m`: 16, \
         `vector.quantization.enabled`: false, `vector.similarity_function`: 'COSINE'}, indexProvider: 'vector-2.0'}"
    );
    assert!(row[3].starts_with("'CREATE VECTOR INDEX `docs` FOR (n:`Doc`) ON (n.`emb`) OPTIONS"));
    let info = s.run("SHOW INDEXES", PropertyMap::new(), TxConfig::default()).unwrap();
    assert_eq!(info.fields.len(), 12);
    s.pull(None, -1, &mut |_| Ok(())).unwrap();
    let mut p = PropertyMap::new();
    p.insert("name".into(), Value::str("docs"));
    run_p(&mut s, "DROP INDEX $name IF EXISTS", p.clone()).unwrap();
    run_p(&mut s, "DROP INDEX $name IF EXISTS", p.clone()).unwrap();
    assert!(run_p(&mut s, "DROP INDEX $name", p).unwrap_err().contains("IndexDropFailed"));
    assert!(names(&mut s, "SHOW VECTOR INDEXES YIELD name").is_empty());
    let e = run(&mut s, QUERY).unwrap_err();
    assert!(e.ends_with("There is no such vector schema index: docs"), "{e}");
}

#[test]
fn the_index_survives_restart_and_crash() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        ok(&mut s, CREATE);
        ok(&mut s, DOCS);
        db.checkpoint().unwrap();
        ok(&mut s, "CREATE VECTOR INDEX later FOR (n:Other) ON n.v OPTIONS {indexConfig: {`vector.dimensions`: 2}}");
        ok(&mut s, "CREATE (:Doc {id: 9, emb: [0.0, -1.0]})");
        db.crash_for_test();
    }
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    let mut want = neo4j_answer();
    want.push((9, "0.276393".to_string()));
    assert_eq!(hits(&mut s, QUERY), want, "right after open (the index may still build)");
    ok(&mut s, "CALL db.awaitIndexes()");
    assert_eq!(hits(&mut s, QUERY), want);
    let names: Vec<String> = ok(&mut s, "SHOW VECTOR INDEXES YIELD name, state")
        .iter()
        .map(|r| to_cypher_literal(&r[0]))
        .collect();
    assert_eq!(names, vec!["'docs'", "'later'"]);
}

/// Deterministic pseudo-random vectors (splitmix64).
fn vectors(n: usize, dims: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut z = seed;
    let mut next = || {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((x ^ (x >> 31)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    (0..n).map(|_| (0..dims).map(|_| next()).collect()).collect()
}

#[test]
fn the_ann_answer_agrees_with_an_exact_scan() {
    let db = Database::in_memory();
    let mut s = db.session();
    ok(
        &mut s,
        "CREATE VECTOR INDEX many FOR (n:V) ON n.v OPTIONS {indexConfig: {`vector.dimensions`: 8, \
         `vector.quantization.enabled`: false}}",
    );
    let rows: Vec<Value> = vectors(3000, 8, 1)
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let mut m = PropertyMap::new();
            m.insert("id".into(), Value::Int(i as i64));
            m.insert("v".into(), Value::List(v.into_iter().map(Value::Float).collect()));
            Value::Map(m)
        })
        .collect();
    let mut p = PropertyMap::new();
    p.insert("rows".into(), Value::List(rows));
    run_p(&mut s, "UNWIND $rows AS r CREATE (:V {id: r.id, v: r.v})", p).unwrap();
    ok(&mut s, "CALL db.awaitIndexes()");
    let mut agree = 0;
    for q in vectors(20, 8, 2) {
        let mut p = PropertyMap::new();
        p.insert("q".into(), Value::List(q.into_iter().map(Value::Float).collect()));
        let ann = run_p(
            &mut s,
            "CALL db.index.vector.queryNodes('many', 5, $q) YIELD node RETURN node.id",
            p.clone(),
        )
        .unwrap();
        let exact = run_p(
            &mut s,
            "MATCH (n:V) RETURN n.id ORDER BY vector.similarity.cosine(n.v, $q) DESC, n.id LIMIT 5",
            p,
        )
        .unwrap();
        let ids = |rows: Vec<Vec<Value>>| -> Vec<String> {
            rows.iter().map(|r| to_cypher_literal(&r[0])).collect()
        };
        let (ann, exact) = (ids(ann), ids(exact));
        agree += ann.iter().filter(|r| exact.contains(r)).count();
    }
    // HNSW is approximate: at least 95% of the exact top-5 (100 ids) must be found.
    assert!(agree >= 95, "ANN found {agree} of 100 exact neighbours");
}

/// langchain-neo4j's vector-store vectors (1536 dimensions, equal but for the last), written in
/// one transaction: Neo4j 5.26's default (quantized) index ranks "It is the end…" (id 3)
/// second where the exact order is 0, 1, 2, 3; scores from the shared Neo4j 5.26.30.
#[test]
fn quantized_scores_and_order_match_neo4j() {
    let neo4j = [(0, 0.999392), (3, 0.976123), (2, 0.975889), (1, 0.973926)];
    let want: Vec<(i64, String)> = neo4j.iter().map(|(i, f)| (*i, format!("{f:.6}"))).collect();
    for (quantization, built) in
        [("", false), ("", true), (", `vector.quantization.enabled`: true", true)]
    {
        let db = Database::in_memory();
        let mut s = db.session();
        ok(&mut s, &format!("CREATE VECTOR INDEX chunks FOR (n:Chunk) ON n.e OPTIONS {{indexConfig: {{`vector.dimensions`: 1536{quantization}}}}}"));
        ok(&mut s, "UNWIND range(0, 3) AS i CREATE (:Chunk {id: i, e: [x IN range(1, 1535) | 1.0] + [100.0 * (i + 1)]})");
        if built {
            ok(&mut s, "CALL db.awaitIndexes()");
        }
        let q = "CALL db.index.vector.queryNodes('chunks', 4, [x IN range(1, 1535) | 1.0] + [100.0]) YIELD node, score RETURN node.id, score";
        assert_eq!(hits(&mut s, q), want, "built: {built}");
        let q = "CALL db.index.vector.queryNodes('chunks', 2, [x IN range(1, 1535) | 1.0] + [100.0]) YIELD node, score RETURN node.id, score";
        assert_eq!(hits(&mut s, q), want[..2].to_vec());
    }
    // Without quantization, the exact order and scores.
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, "CREATE VECTOR INDEX chunks FOR (n:Chunk) ON n.e OPTIONS {indexConfig: {`vector.dimensions`: 1536, `vector.quantization.enabled`: false}}");
    ok(&mut s, "UNWIND range(0, 3) AS i CREATE (:Chunk {id: i, e: [x IN range(1, 1535) | 1.0] + [100.0 * (i + 1)]})");
    ok(&mut s, "CALL db.awaitIndexes()");
    let q = "CALL db.index.vector.queryNodes('chunks', 4, [x IN range(1, 1535) | 1.0] + [100.0]) YIELD node, score RETURN node.id, score";
    let ids: Vec<i64> = hits(&mut s, q).iter().map(|h| h.0).collect();
    assert_eq!(ids, vec![0, 1, 2, 3]);
}

/// `(:V {id, v})` nodes for `vectors`, ids from `first`.
fn load(s: &mut Session, vs: &[Vec<f64>], first: i64) {
    let rows: Vec<Value> = vs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut m = PropertyMap::new();
            m.insert("id".into(), Value::Int(first + i as i64));
            m.insert("v".into(), Value::List(v.iter().map(|x| Value::Float(*x)).collect()));
            Value::Map(m)
        })
        .collect();
    let mut p = PropertyMap::new();
    p.insert("rows".into(), Value::List(rows));
    run_p(s, "UNWIND $rows AS r CREATE (:V {id: r.id, v: r.v})", p).unwrap();
}

/// The top ids of the ANN index `many` for `q`.
fn top(s: &mut Session, q: &[f64]) -> Vec<(i64, String)> {
    let mut p = PropertyMap::new();
    p.insert("q".into(), Value::List(q.iter().map(|x| Value::Float(*x)).collect()));
    run_p(
        s,
        "CALL db.index.vector.queryNodes('many', 3, $q) YIELD node, score RETURN node.id, score",
        p,
    )
    .unwrap()
    .into_iter()
    .map(|r| match (&r[0], &r[1]) {
        (Value::Int(i), Value::Float(f)) => (*i, format!("{f:.6}")),
        other => panic!("unexpected row {other:?}"),
    })
    .collect()
}

/// Waits (up to 30 s) until the ANN file holds `n` entries (live and deleted: the `n` field of
/// `arbor-vector`'s format, after the 24-byte header and 25 bytes of settings): the structure is saved by the
/// builder thread after the index is online, so right after `db.awaitIndexes` the file may
/// still be the previous one. Returns what it found last.
fn wait_entries(file: &std::path::Path, n: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        // Missing or short while the first save is on its way: 0.
        let got = std::fs::read(file)
            .ok()
            .and_then(|b| Some(u64::from_le_bytes(b.get(49..57)?.try_into().ok()?)))
            .unwrap_or(0);
        if got == n || std::time::Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn the_ann_structure_is_kept_in_a_file_and_reconciled_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let vs = vectors(2000, 8, 5);
    let (new0, new_id) = (vectors(2, 8, 6), 5000);
    let file = dir
        .path()
        .join("vector-ann")
        .join(format!("{}.ann", "many".bytes().map(|b| format!("{b:02x}")).collect::<String>()));
    {
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        load(&mut s, &vs, 0);
        ok(&mut s, "CREATE VECTOR INDEX many FOR (n:V) ON n.v OPTIONS {indexConfig: {`vector.dimensions`: 8, `vector.quantization.enabled`: false}}");
        ok(&mut s, "CALL db.awaitIndexes()");
        assert_eq!(wait_entries(&file, 2000), 2000, "saved after the build");
        // Written after the file: one vector changed, one node gone, one new (WAL only).
        let mut p = PropertyMap::new();
        p.insert("v".into(), Value::List(new0[0].iter().map(|x| Value::Float(*x)).collect()));
        run_p(&mut s, "MATCH (n:V {id: 0}) SET n.v = $v", p).unwrap();
        ok(&mut s, "MATCH (n:V {id: 1}) DELETE n");
        load(&mut s, &new0[1..], new_id);
        db.crash_for_test();
    }
    let check = |s: &mut Session| {
        assert_eq!(top(s, &new0[0])[0], (0, "1.000000".to_string()));
        assert_eq!(top(s, &new0[1])[0], (new_id, "1.000000".to_string()));
        assert!(top(s, &vs[1]).iter().all(|h| h.0 != 1), "deleted node 1 found");
        assert_eq!(top(s, &vs[2])[0], (2, "1.000000".to_string()));
    };
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    check(&mut s);
    ok(&mut s, "CALL db.awaitIndexes()");
    check(&mut s);
    // Reconciled, not rebuilt: the file's entries plus the two linked again (a rebuild would
    // hold 2000), and saved again.
    assert_eq!(wait_entries(&file, 2002), 2002);
    drop(s);
    db.shutdown().unwrap();
    drop(db);

    // A damaged file is ignored: the index is built again from the store.
    let mut bytes = std::fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    ok(&mut s, "CALL db.awaitIndexes()");
    check(&mut s);
    assert_eq!(wait_entries(&file, 2000), 2000, "rebuilt and saved");
    // Dropping the index removes its file at the next open.
    ok(&mut s, "DROP INDEX many");
    drop(s);
    db.shutdown().unwrap();
    drop(db);
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    assert!(!file.exists(), "file of a dropped index kept");
    drop(db);
}
