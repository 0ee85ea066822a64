//! `LOAD CSV` through the engine: files under the import directory (`<data>/import` by
//! default), with and without headers, another field terminator, gzip, `linenumber()` and
//! `file()`, Neo4j 5.26's answers and error codes (taken from the shared Neo4j over the same
//! bytes), and batched writes with `CALL { ... } IN TRANSACTIONS`, which stream the file.

use arbor_engine::{Database, DatabaseConfig, PropertyMap, PullOutcome, Session, TxConfig};
use arbor_model::Error;

const PEOPLE: &str =
    "name,age,city\nAnn,30,\"Paris, FR\"\nBob,,\"He said \"\"hi\"\"\"\n\"multi\nline\",5,\n";

fn run(s: &mut Session, query: &str) -> Result<Vec<String>, Error> {
    s.run(query, PropertyMap::new(), TxConfig::default())?;
    let mut rows = Vec::new();
    loop {
        let outcome = s.pull(None, 100, &mut |r| {
            let r: Vec<arbor_model::Value> = r.into_iter().map(Into::into).collect();
            let cells: Vec<String> = r.iter().map(arbor_model::to_cypher_literal).collect();
            rows.push(cells.join(" | "));
            Ok(())
        })?;
        if let PullOutcome::Done(_) = outcome {
            return Ok(rows);
        }
    }
}

/// A database in a temporary directory, with `files` written into `<data>/import`.
fn with_files(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("import/sub")).unwrap();
    for (name, bytes) in files {
        std::fs::write(data.join("import").join(name), bytes).unwrap();
    }
    let db = Database::open(&data, DatabaseConfig::default()).unwrap();
    (dir, db)
}

#[test]
fn rows_lines_and_files_match_neo4j() {
    let (_dir, db) =
        with_files(&[("people.csv", PEOPLE.as_bytes()), ("sub/semi.csv", b"a;b\n1;2\n")]);
    let mut s = db.session();
    let rows = run(
        &mut s,
        "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row \
         RETURN row, linenumber() AS ln, file() AS f",
    )
    .unwrap();
    assert_eq!(
        rows,
        [
            "{name: 'Ann', age: '30', city: 'Paris, FR'} | 2 | '///people.csv'",
            "{name: 'Bob', age: null, city: 'He said \"hi\"'} | 3 | '///people.csv'",
            "{name: 'multi\nline', age: '5', city: null} | 4 | '///people.csv'",
        ]
    );
    let rows = run(&mut s, "LOAD CSV FROM 'file:///people.csv' AS row RETURN row[1], linenumber()")
        .unwrap();
    assert_eq!(rows, ["'age' | 1", "'30' | 2", "null | 3", "'5' | 4"]);
    let rows =
        run(&mut s, "LOAD CSV FROM 'file:///sub/semi.csv' AS row FIELDTERMINATOR ';' RETURN row")
            .unwrap();
    assert_eq!(rows, ["['a', 'b']", "['1', '2']"]);
    assert_eq!(run(&mut s, "RETURN linenumber(), file()").unwrap(), ["null | null"]);
}

#[test]
fn gzip_is_read_by_its_magic_bytes() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(PEOPLE.as_bytes()).unwrap();
    let (_dir, db) = with_files(&[("people.csv.gz", &gz.finish().unwrap())]);
    let mut s = db.session();
    let rows =
        run(&mut s, "LOAD CSV WITH HEADERS FROM 'file:///people.csv.gz' AS r RETURN count(r)")
            .unwrap();
    assert_eq!(rows, ["3"]);
}

#[test]
fn errors_carry_neo4j_codes() {
    let (_dir, db) = with_files(&[("people.csv", PEOPLE.as_bytes())]);
    let mut s = db.session();
    let code = |s: &mut Session, q: &str| run(s, q).unwrap_err();
    let e = code(&mut s, "LOAD CSV FROM 'file:///nope.csv' AS row RETURN row");
    assert_eq!(e.status.code(), "Neo.ClientError.Statement.ExternalResourceFailed");
    assert_eq!(
        e.message,
        "Cannot load from URL 'file:///nope.csv': Couldn't load the external resource at: \
         file:///nope.csv ()"
    );
    let e = code(&mut s, "LOAD CSV FROM 'nope.csv' AS row RETURN row");
    assert_eq!(e.message, "Invalid URL 'nope.csv': no protocol: nope.csv ()");
    let e = code(&mut s, "LOAD CSV FROM 'file:///../../etc/passwd' AS row RETURN row");
    assert_eq!(e.status.code(), "Neo.ClientError.Statement.ExternalResourceFailed");
    let e = code(&mut s, "LOAD CSV FROM 'http://127.0.0.1:1/x.csv' AS row RETURN row");
    assert_eq!(e.status.code(), "Neo.ClientError.Statement.ExternalResourceFailed");
    let e = code(&mut s, "LOAD CSV FROM 1 AS row RETURN row");
    assert_eq!(e.status.code(), "Neo.ClientError.Statement.SyntaxError");
    assert!(e.message.starts_with("Type mismatch: expected String but was Integer"));
    let e =
        code(&mut s, "LOAD CSV FROM 'file:///people.csv' AS row FIELDTERMINATOR ';;' RETURN row");
    assert!(e.message.starts_with("CSV field terminator can only be one character wide"));
}

/// `LOAD CSV ... CALL { ... } IN TRANSACTIONS`: every record is written, in batches; the plan
/// has no `Eager` under the batches (the file streams through them), while a graph read
/// under them keeps one.
#[test]
fn batched_import_streams_the_file() {
    let mut csv = String::from("id,name\n");
    for i in 0..2500 {
        csv.push_str(&format!("{i},n{i}\n"));
    }
    let (_dir, db) = with_files(&[("big.csv", csv.as_bytes())]);
    let mut s = db.session();
    let q = "LOAD CSV WITH HEADERS FROM 'file:///big.csv' AS row \
             CALL (row) { CREATE (:P {id: toInteger(row.id), name: row.name}) } \
             IN TRANSACTIONS OF 1000 ROWS";
    run(&mut s, q).unwrap();
    assert_eq!(run(&mut s, "MATCH (p:P) RETURN count(p), sum(p.id)").unwrap(), ["2500 | 3123750"]);
    let plan = |s: &mut Session, q: &str| {
        s.run(&format!("EXPLAIN {q}"), PropertyMap::new(), TxConfig::default()).unwrap();
        let mut plan = None;
        while plan.is_none() {
            if let PullOutcome::Done(summary) = s.pull(None, -1, &mut |_| Ok(())).unwrap() {
                plan = Some(format!("{:?}", summary.plan));
            }
        }
        plan.unwrap_or_default()
    };
    let streamed = plan(&mut s, q);
    assert!(streamed.contains("LoadCSV") && !streamed.contains("Eager"), "{streamed}");
    let read = plan(&mut s, "MATCH (p:P) CALL (p) { SET p.x = 1 } IN TRANSACTIONS");
    assert!(read.contains("Eager"), "{read}");
    // A value that fails in one batch: ON ERROR CONTINUE keeps the others.
    let rows = run(
        &mut s,
        "LOAD CSV WITH HEADERS FROM 'file:///big.csv' AS row WITH row LIMIT 3 \
         CALL (row) { CREATE (:Q {v: 1 / toInteger(row.id)}) } IN TRANSACTIONS OF 1 ROWS \
         ON ERROR CONTINUE REPORT STATUS AS s RETURN row.id, s.committed",
    )
    .unwrap();
    assert_eq!(rows, ["'0' | false", "'1' | true", "'2' | true"]);
}
