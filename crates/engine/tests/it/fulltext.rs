//! FULLTEXT indexes through the engine: a query sees its transaction's snapshot and own writes
//! (never a later commit, nothing rolled back), definitions survive restart and crash, and a
//! damaged definitions file is an error naming it, not a panic or a silent loss.

use crate::common::run;
use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

fn ok(s: &mut Session, q: &str) -> Vec<String> {
    run(s, q).unwrap()
}

const SEARCH: &str = "CALL db.index.fulltext.queryNodes('docs', 'graph') YIELD node, score \
                      RETURN node.title ORDER BY score DESC, node.title";

fn setup(db: &Database) -> Session {
    let mut s = db.session();
    ok(&mut s, "CREATE FULLTEXT INDEX docs FOR (d:Doc) ON EACH [d.title, d.body]");
    ok(&mut s, "CREATE (:Doc {title: 'Graph databases', body: 'nodes and edges'})");
    ok(&mut s, "CREATE (:Doc {title: 'Cooking', body: 'a graph of recipes, graph upon graph'})");
    s
}

#[test]
fn a_query_sees_its_snapshot_and_its_own_writes() {
    let db = Database::in_memory();
    let mut writer = setup(&db);
    let mut reader = db.session();
    reader.begin(TxConfig::default()).unwrap();
    let before = ok(&mut reader, SEARCH);
    assert_eq!(before.len(), 2);

    // Own writes: created, changed, deleted and relabelled entities, before commit.
    writer.begin(TxConfig::default()).unwrap();
    ok(&mut writer, "CREATE (:Doc {title: 'Graph theory'})");
    ok(&mut writer, "MATCH (d:Doc {title: 'Cooking'}) SET d.body = 'recipes'");
    assert_eq!(ok(&mut writer, SEARCH), ["'Graph databases'", "'Graph theory'"]);
    ok(&mut writer, "MATCH (d:Doc {title: 'Graph databases'}) REMOVE d:Doc");
    assert_eq!(ok(&mut writer, SEARCH), ["'Graph theory'"]);
    // Others do not see them before the commit...
    let mut other = db.session();
    assert_eq!(ok(&mut other, SEARCH), before);
    writer.commit().unwrap();
    // ...and a transaction that started earlier keeps its snapshot after it.
    assert_eq!(ok(&mut reader, SEARCH), before);
    reader.commit().unwrap();
    assert_eq!(ok(&mut other, SEARCH), ["'Graph theory'"]);
}

#[test]
fn a_rolled_back_write_leaves_no_trace() {
    let db = Database::in_memory();
    let mut s = setup(&db);
    let before = ok(&mut s, SEARCH);
    s.begin(TxConfig::default()).unwrap();
    ok(&mut s, "CREATE (:Doc {title: 'graph graph graph'})");
    ok(&mut s, "MATCH (d:Doc) DETACH DELETE d");
    assert!(ok(&mut s, SEARCH).is_empty());
    s.rollback().unwrap();
    assert_eq!(ok(&mut s, SEARCH), before);
    // A failing statement rolls its transaction back too.
    assert!(run(&mut s, "CREATE (:Doc {title: 'graph'}) WITH 1 AS x RETURN 1 / 0").is_err());
    assert_eq!(ok(&mut s, SEARCH), before);
}

#[test]
fn definitions_survive_restart_and_crash() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = setup(&db);
    ok(
        &mut s,
        "CREATE FULLTEXT INDEX notes FOR ()-[r:NOTE]-() ON EACH [r.text] \
         OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
    );
    let expected = ok(&mut s, SEARCH);
    drop(s);
    db.shutdown().unwrap();
    drop(db);

    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    assert_eq!(ok(&mut s, SEARCH), expected);
    let shown = "SHOW FULLTEXT INDEXES YIELD name, options \
                 RETURN name, options.indexConfig.`fulltext.analyzer` AS a";
    assert_eq!(ok(&mut s, shown), ["'docs' | 'standard-no-stop-words'", "'notes' | 'english'"]);
    ok(&mut s, "DROP INDEX notes");
    drop(s);
    db.crash_for_test();
    drop(db);

    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    assert_eq!(ok(&mut s, "SHOW FULLTEXT INDEXES YIELD name RETURN name"), ["'docs'"]);
    drop(s);
    db.shutdown().unwrap();
    drop(db);

    // A damaged definitions file is an error naming the file and line.
    let file = dir.path().join("fulltext-indexes");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("\tnode\t", "\tedge\t")).unwrap();
    let err = Database::open(dir.path(), DatabaseConfig::default()).err().expect("damage found");
    assert!(err.message.contains("fulltext-indexes line 2"), "{}", err.message);
}

#[test]
fn schema_names_are_shared_with_other_indexes_and_show_filters_by_type() {
    let db = Database::in_memory();
    let mut s = setup(&db);
    ok(&mut s, "CREATE INDEX doc_title FOR (d:Doc) ON (d.title)");
    let err =
        run(&mut s, "CREATE FULLTEXT INDEX doc_title FOR (d:Doc) ON EACH [d.body]").unwrap_err();
    assert!(err.contains("There already exists an index called 'doc_title'"), "{err}");
    ok(&mut s, "CREATE FULLTEXT INDEX doc_title IF NOT EXISTS FOR (d:Doc) ON EACH [d.body]");
    assert_eq!(ok(&mut s, "SHOW FULLTEXT INDEXES YIELD name RETURN name"), ["'docs'"]);
    assert_eq!(ok(&mut s, "SHOW RANGE INDEXES YIELD name RETURN name"), ["'doc_title'"]);
    assert_eq!(
        ok(&mut s, "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name, type"),
        ["'doc_title' | 'RANGE'", "'docs' | 'FULLTEXT'"]
    );
    ok(&mut s, "DROP INDEX docs");
    let err = run(&mut s, SEARCH).unwrap_err();
    assert!(err.contains("There is no such fulltext schema index: docs"), "{err}");
}

#[test]
fn neo4j_4_procedures_create_and_drop_indexes() {
    let db = Database::in_memory();
    let mut s = db.session();
    ok(&mut s, "CREATE (:Doc {title: 'Graph databases'}), (:Note {text: 'graph notes'})");
    ok(
        &mut s,
        "CALL db.index.fulltext.createNodeIndex('docs', ['Doc', 'Note'], ['title', 'text'], \
         {analyzer: 'english', eventually_consistent: 'true'})",
    );
    assert_eq!(
        ok(
            &mut s,
            "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes, options \
                    RETURN name, labelsOrTypes, options.indexConfig"
        ),
        ["'docs' | ['Doc', 'Note'] | {`fulltext.analyzer`: 'english', \
          `fulltext.eventually_consistent`: true}"]
    );
    assert_eq!(
        ok(
            &mut s,
            "CALL db.index.fulltext.queryNodes('docs', 'graphs') YIELD node \
                    RETURN coalesce(node.title, node.text) AS t ORDER BY t"
        ),
        ["'Graph databases'", "'graph notes'"]
    );
    let err =
        run(&mut s, "CALL db.index.fulltext.createNodeIndex('docs', ['X'], ['p'])").unwrap_err();
    assert!(err.contains("There already exists an index called 'docs'"), "{err}");
    ok(&mut s, "CALL db.index.fulltext.createRelationshipIndex('rels', ['R'], ['note'])");
    ok(&mut s, "CALL db.index.fulltext.drop('docs')");
    assert_eq!(ok(&mut s, "SHOW FULLTEXT INDEXES YIELD name RETURN name"), ["'rels'"]);
    assert!(run(&mut s, "CALL db.index.fulltext.drop('docs')").is_err());
}
