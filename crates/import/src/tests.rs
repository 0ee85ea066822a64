//! End-to-end tests of the importer in process: files on disk -> `run` -> the store opened with
//! `arbor_storage::Store`, checking counts, values, the report file and the failure modes.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use arbor_storage::{NodeId, Store, StoreConfig, TokenKind};

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn write_gz(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    let mut enc =
        flate2::write::GzEncoder::new(File::create(&p).unwrap(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap();
    p
}

fn config(dir: &Path) -> ImportConfig {
    let mut cfg = ImportConfig::new(dir.join("db"));
    cfg.report_file = dir.join("import.report");
    cfg.progress = Mode::Quiet;
    cfg.sync = false;
    cfg.threads = 3;
    cfg
}

fn prop(store: &Store, node: u64, key: &str) -> String {
    let k = store.token_id(TokenKind::PropertyKey, key).unwrap();
    format!("{:?}", store.begin(true).node_property(NodeId(node), k))
}

#[test]
fn imports_nodes_relationships_and_reports_bad_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = write(
        d,
        "people-header.csv",
        "uid:ID(Person),name,age:int,score:double,tags:string[],born:date,:LABEL\n",
    );
    let people = write_gz(
        d,
        "people.csv.gz",
        "p1,Ann,30,1.5,a;b,1990-01-02,Admin\n\
         p2,\"Bob, Jr.\",41,,,,\n\
         p3,Cid,notanumber,,,,\n\
         p1,Again,1,,,,\n\
         p4,Dee,22,,x,2001-02-03,Admin;Staff\n",
    );
    let cities = write(d, "cities.csv", "name:ID(City),pop:long\nOslo,700000\nRome,2800000\n");
    let knows = write(
        d,
        "knows.csv",
        ":START_ID(Person),:END_ID(Person),since:int\np1,p2,2001\np2,p4,\np4,p1,2010\np1,p9,1999\n",
    );
    let lives = write(
        d,
        "lives.csv",
        ":START_ID(Person),:END_ID(City),:TYPE\np1,Oslo,LIVES_IN\np2,Rome,\np4,Rome,WORKS_IN\n",
    );
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec!["Person".into()], files: vec![header, people] });
    cfg.nodes.push(NodeInput { labels: vec!["City".into()], files: vec![cities] });
    cfg.relationships.push(RelInput { rel_type: Some("KNOWS".into()), files: vec![knows] });
    cfg.relationships.push(RelInput { rel_type: Some("LIVES_IN".into()), files: vec![lives] });
    cfg.skip_duplicate_nodes = true;
    cfg.skip_bad_relationships = true;
    let s = run(&cfg).unwrap();
    assert_eq!((s.nodes, s.relationships, s.bad_entries), (5, 6, 3));
    // p1: uid name age score tags born; p2: uid name age; p4: uid name age tags born; 2 cities x2;
    // rels: since x2 (the empty one is no property).
    assert_eq!(s.properties, 6 + 3 + 5 + 4 + 2);
    let report = std::fs::read_to_string(d.join("import.report")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 3, "{report}");
    assert!(lines[0].contains("people.csv.gz:3: cannot parse `notanumber` as int"), "{report}");
    assert!(lines[1].contains("people.csv.gz:4: id 'p1' is defined more than once"), "{report}");
    assert!(
        lines[2].contains("knows.csv:5:") && lines[2].contains("missing end node 'p9'"),
        "{report}"
    );

    let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
    let check = store.check().unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!((check.nodes, check.relationships), (5, 6));
    assert_eq!(prop(&store, 0, "name"), "Some(String(\"Ann\"))");
    assert_eq!(prop(&store, 0, "uid"), "Some(String(\"p1\"))");
    assert_eq!(prop(&store, 0, "score"), "Some(Float(1.5))");
    assert_eq!(prop(&store, 0, "tags"), "Some(List([String(\"a\"), String(\"b\")]))");
    assert!(prop(&store, 0, "born").starts_with("Some(Date("));
    assert_eq!(prop(&store, 1, "name"), "Some(String(\"Bob, Jr.\"))");
    assert_eq!(prop(&store, 1, "score"), "None");
    assert_eq!(prop(&store, 3, "name"), "Some(String(\"Oslo\"))");
    assert_eq!(prop(&store, 3, "pop"), "Some(Int(700000))");
    let tx = store.begin(true);
    let label = |n: &str| store.token_id(TokenKind::Label, n).unwrap();
    let labels: Vec<u32> = tx.node_labels(NodeId(2));
    let mut want = vec![label("Person"), label("Admin"), label("Staff")];
    want.sort_unstable();
    assert_eq!(labels, want);
    assert!(store.token_id(TokenKind::RelType, "WORKS_IN").is_some());
    drop(tx);
    store.close().unwrap();
}

#[test]
fn integer_ids_stored_as_integers_and_groups_separate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = write(d, "a.csv", "id:ID(A),:LABEL\n1,A\n2,A\n");
    let b = write(d, "b.csv", "id:ID(B),:LABEL\n1,B\n");
    let r = write(d, "r.csv", ":START_ID(A),:END_ID(B),:TYPE\n2,1,T\n1,1,T\n");
    let mut cfg = config(d);
    cfg.id_type = IdType::Integer;
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![a] });
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![b] });
    cfg.relationships.push(RelInput { rel_type: None, files: vec![r] });
    let s = run(&cfg).unwrap();
    assert_eq!((s.nodes, s.relationships, s.bad_entries), (3, 2, 0));
    let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
    assert_eq!(prop(&store, 2, "id"), "Some(Int(1))");
    let tx = store.begin(true);
    // Relationships are numbered in start-node order: (1)->(B1) is relationship 0.
    let (start, end, _) = tx.rel_info(arbor_storage::RelId(0)).unwrap();
    assert_eq!((start.0, end.0), (0, 2));
    drop(tx);
    store.close().unwrap();
}

#[test]
fn duplicates_and_bad_relationships_are_fatal_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = write(d, "n.csv", ":ID\na\nb\na\n");
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![n.clone()] });
    let e = run(&cfg).unwrap_err();
    assert!(e.message.contains("n.csv:4: id 'a' is defined more than once"), "{}", e.message);
    assert!(!bulk::holds_store(&cfg.dest).unwrap(), "a failed import leaves no store");

    let n = write(d, "n2.csv", ":ID\na\nb\n");
    let r = write(d, "r.csv", ":START_ID,:END_ID\na,b\na,zz\n");
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![n] });
    cfg.relationships.push(RelInput { rel_type: Some("R".into()), files: vec![r] });
    let e = run(&cfg).unwrap_err();
    assert!(e.message.contains("r.csv:3:") && e.message.contains("'zz'"), "{}", e.message);
}

#[test]
fn tolerance_stops_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from(":ID,v:int\n");
    for i in 0..10 {
        text.push_str(&format!("{i},bad\n"));
    }
    let n = write(d, "n.csv", &text);
    let mut cfg = config(d);
    cfg.bad_tolerance = Some(3);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![n] });
    let e = run(&cfg).unwrap_err();
    assert!(e.message.contains("too many bad entries: 4"), "{}", e.message);
}

#[test]
fn extra_columns_multiline_and_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = write(d, "n.csv", ":ID,text\n1,\"two\nlines\"\n2,ok,extra\n");
    let mut cfg = config(d);
    cfg.multiline_fields = true;
    cfg.nodes.push(NodeInput { labels: vec!["N".into()], files: vec![n.clone()] });
    let s = run(&cfg).unwrap();
    assert_eq!((s.nodes, s.bad_entries), (1, 1));
    let report = std::fs::read_to_string(d.join("import.report")).unwrap();
    assert!(report.starts_with(&format!("{}:4: 3 fields", n.display())), "{report}");

    // A second import refuses the existing store, unless asked to overwrite it.
    let e = run(&cfg).unwrap_err();
    assert!(e.message.contains("--overwrite-destination"));
    cfg.overwrite = true;
    cfg.ignore_extra_columns = true;
    let s = run(&cfg).unwrap();
    assert_eq!((s.nodes, s.bad_entries), (2, 0));
    let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
    assert_eq!(prop(&store, 0, "text"), "Some(String(\"two\\nlines\"))");
    store.close().unwrap();
}

#[test]
fn many_chunks_keep_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("id:ID,name\n");
    let n = 150_000;
    for i in 0..n {
        text.push_str(&format!("{i},name-{i}\n"));
    }
    let nodes = write_gz(d, "n.csv.gz", &text);
    let mut rels = String::from(":START_ID,:END_ID\n");
    for i in 0..n {
        rels.push_str(&format!("{},{}\n", (i * 7919) % n, i));
    }
    let r = write(d, "r.csv", &rels);
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec!["N".into()], files: vec![nodes] });
    cfg.relationships.push(RelInput { rel_type: Some("R".into()), files: vec![r] });
    let s = run(&cfg).unwrap();
    assert_eq!((s.nodes, s.relationships), (n, n));
    let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
    for i in [0, 1, 99_999, n - 1] {
        assert_eq!(prop(&store, i, "id"), format!("Some(String(\"{i}\"))"));
    }
    let check = store.check().unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    store.close().unwrap();
}

#[test]
fn a_memory_budget_spills_relationships_and_gives_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 3000u64;
    let mut nodes = String::from("id:ID,:LABEL\n");
    for i in 0..n {
        nodes.push_str(&format!("{i},N\n"));
    }
    let nodes = write(d, "n.csv", &nodes);
    let mut rels = String::from(":START_ID,:END_ID,w:int,:TYPE\n");
    for i in 0..40_000u64 {
        let w = if i % 3 == 0 { String::new() } else { i.to_string() };
        rels.push_str(&format!("{},{},{w},T{}\n", (i * 7919) % n, (i * 31) % n, i % 2));
    }
    let rels = write(d, "r.csv", &rels);
    let mut dumps = Vec::new();
    for (name, budget) in [("unbounded", None), ("bounded", Some(1))] {
        let mut cfg = config(d);
        cfg.dest = d.join(name);
        cfg.max_memory = budget;
        cfg.nodes.push(NodeInput { labels: vec![], files: vec![nodes.clone()] });
        cfg.relationships.push(RelInput { rel_type: None, files: vec![rels.clone()] });
        let s = run(&cfg).unwrap();
        assert_eq!((s.nodes, s.relationships), (n, 40_000));
        if budget.is_some() {
            assert_eq!(s.spilled_relationships, 40_000, "{s:?}");
        } else {
            assert_eq!((s.spilled_relationships, s.link_passes), (0, 1));
        }
        let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
        let check = store.check().unwrap();
        assert!(check.is_ok(), "{:?}", check.problems);
        let tx = store.begin(true);
        let mut dump = Vec::new();
        for r in 0..40_000u64 {
            let id = arbor_storage::RelId(r);
            dump.push(format!("{:?} {:?}", tx.rel_info(id), tx.rel_properties(id)));
        }
        // Start-node order, stable within a node.
        let starts: Vec<u64> =
            (0..40_000u64).map(|r| tx.rel_info(arbor_storage::RelId(r)).unwrap().0 .0).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]));
        drop(tx);
        store.close().unwrap();
        dumps.push(dump);
    }
    assert_eq!(dumps[0], dumps[1]);
}

/// Every spill path at once: a budget of one byte (the smallest buffer, so many sorted runs),
/// string ids, node properties, relationship groups with and without properties, and one node
/// with more relationships than a run holds; the store must equal the unbounded import's.
#[test]
fn a_tiny_budget_spills_everything_and_gives_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 2000u64;
    let mut nodes = String::from("uid:ID,name,:LABEL\n");
    for i in 0..n {
        nodes.push_str(&format!("u{i},name {i},{}\n", if i % 2 == 0 { "A" } else { "B" }));
    }
    let nodes = write_gz(d, "n.csv.gz", &nodes);
    let mut with = String::from(":START_ID,:END_ID,note,w:long\n");
    let mut without = String::from(":START_ID,:END_ID\n");
    for i in 0..30_000u64 {
        // Node u7 is a hub: a third of the relationships start there.
        let s = if i % 3 == 0 { 7 } else { (i * 7919) % n };
        with.push_str(&format!(
            "u{s},u{},\"note {i} {}\",{i}\n",
            (i * 31) % n,
            "x".repeat((i % 50) as usize)
        ));
        without.push_str(&format!("u{},u{s}\n", (i * 13) % n));
    }
    let with = write(d, "with.csv", &with);
    let without = write_gz(d, "without.csv.gz", &without);
    let (mut dumps, mut segments) = (Vec::new(), Vec::new());
    for (name, budget) in [("unbounded", None), ("tiny", Some(1))] {
        let mut cfg = config(d);
        cfg.dest = d.join(name);
        cfg.max_memory = budget;
        cfg.nodes.push(NodeInput { labels: vec![], files: vec![nodes.clone()] });
        cfg.relationships.push(RelInput { rel_type: Some("P".into()), files: vec![with.clone()] });
        cfg.relationships
            .push(RelInput { rel_type: Some("Q".into()), files: vec![without.clone()] });
        cfg.relationships.push(RelInput { rel_type: Some("R".into()), files: vec![with.clone()] });
        let s = run(&cfg).unwrap();
        assert_eq!((s.nodes, s.relationships), (n, 90_000));
        if budget.is_some() {
            assert!(s.spilled_relationships == 90_000 && s.link_passes >= 3, "{s:?}");
            // The incoming adjacency in windows of one end node, per column (three types).
            assert!(s.backward_passes >= 3 * n, "{s:?}");
            // The node blobs written a row at a time (chunks of one byte).
            assert_eq!(s.node_blob_spills, n, "{s:?}");
        } else {
            assert_eq!((s.spilled_relationships, s.link_passes), (0, 1));
            assert_eq!(s.backward_passes, 3, "{s:?}");
            assert_eq!(s.node_blob_spills, 0, "{s:?}");
        }
        // The import wrote the complete segment (no conversion at the first checkpoint).
        let names: Vec<String> = std::fs::read_dir(&cfg.dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names.iter().any(|n| n.starts_with("import-") || n.ends_with(".tmp")),
            "{names:?}"
        );
        let seg = names.iter().find(|n| n.starts_with("segment-")).expect("a segment file");
        segments.push(std::fs::read(cfg.dest.join(seg)).unwrap());
        let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
        let check = store.check().unwrap();
        assert!(check.is_ok(), "{:?}", check.problems);
        assert_eq!((check.nodes, check.relationships), (n, 90_000));
        let tx = store.begin(true);
        let mut dump = Vec::new();
        for i in 0..n {
            let id = NodeId(i);
            dump.push(format!("{:?} {:?}", tx.node_labels(id), tx.node_properties(id)));
        }
        for r in 0..90_000u64 {
            let id = arbor_storage::RelId(r);
            dump.push(format!("{:?} {:?}", tx.rel_info(id), tx.rel_properties(id)));
        }
        drop(tx);
        store.close().unwrap();
        dumps.push(dump);
    }
    assert_eq!(dumps[0].len(), dumps[1].len());
    for (a, b) in dumps[0].iter().zip(&dumps[1]) {
        assert_eq!(a, b);
    }
    assert!(segments[0] == segments[1], "the two imports wrote different segment files");
}

#[test]
fn a_truncated_gzip_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from(":ID,v\n");
    for i in 0..20_000 {
        text.push_str(&format!("{i},value number {i}\n"));
    }
    let full = write_gz(d, "full.csv.gz", &text);
    let bytes = std::fs::read(&full).unwrap();
    let cut = write(d, "cut.csv.gz", "");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![cut] });
    let e = run(&cfg).unwrap_err();
    assert!(e.message.contains("cut.csv.gz") && e.message.contains("after line"), "{}", e.message);
    assert!(!bulk::holds_store(&cfg.dest).unwrap(), "a failed import leaves no store");
}

#[test]
fn a_failed_overwrite_keeps_the_previous_store_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = write(d, "n.csv", ":ID\na\nb\n");
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![n] });
    run(&cfg).unwrap();
    // The second import fails (a relationship to a missing node); a failure while its
    // checkpoint is written is covered by `arbor_storage::bulk`'s own tests.
    let n2 = write(d, "n2.csv", ":ID\nx\ny\nz\n");
    let r = write(d, "r.csv", ":START_ID,:END_ID\nx,y\nx,nope\n");
    let mut cfg2 = config(d);
    cfg2.overwrite = true;
    cfg2.nodes.push(NodeInput { labels: vec![], files: vec![n2] });
    cfg2.relationships.push(RelInput { rel_type: Some("R".into()), files: vec![r] });
    let e = run(&cfg2).unwrap_err();
    assert!(e.message.contains("r.csv:3:") && e.message.contains("'nope'"), "{}", e.message);
    let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
    assert_eq!(store.check().unwrap().nodes, 2, "the previous store is still there");
    store.close().unwrap();
}

/// Creates the named pipe `path` (the tests shell out to `mkfifo(1)`: the crate has no
/// `unsafe`).
fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

/// The files of a store directory, by name (the report file is beside it, not in it).
fn store_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// An import fed through named pipes (a gzip one and plain ones; a group whose header and data
/// are two pipes) reads each once, front to back, in the order the groups are given, and
/// writes the same store files as from regular files.
#[test]
fn named_pipes_give_the_same_store_as_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 5000u64;
    let mut nodes = String::from("uid:ID,name,:LABEL\n");
    for i in 0..n {
        nodes.push_str(&format!(
            "u{},name {i},{}\n",
            (i * 7) % n,
            if i % 3 == 0 { "A" } else { "B" }
        ));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(nodes.as_bytes()).unwrap();
    let nodes_gz = gz.finish().unwrap();
    let rel_head = ":START_ID,:END_ID,w:long\n".to_string();
    let mut rel_data = String::new();
    for i in 0..60_000u64 {
        rel_data.push_str(&format!("u{},u{},{i}\n", (i * 7919) % n, (i * 31) % n));
    }
    let inputs: [(&str, Vec<u8>); 3] = [
        ("n.csv.gz", nodes_gz),
        ("r-head.csv", rel_head.into_bytes()),
        ("r.csv", rel_data.into_bytes()),
    ];
    let (files, pipes) = (d.join("files"), d.join("pipes"));
    std::fs::create_dir_all(&files).unwrap();
    std::fs::create_dir_all(&pipes).unwrap();
    for (name, bytes) in &inputs {
        std::fs::write(files.join(name), bytes).unwrap();
        mkfifo(&pipes.join(name));
    }
    let mut stores = Vec::new();
    for (src, budget) in [(&files, None), (&pipes, None), (&pipes, Some(1))] {
        let mut cfg = config(d);
        cfg.dest = d.join(format!("db{}", stores.len()));
        cfg.max_memory = budget;
        cfg.nodes.push(NodeInput { labels: vec![], files: vec![src.join("n.csv.gz")] });
        cfg.relationships.push(RelInput {
            rel_type: Some("R".into()),
            files: vec![src.join("r-head.csv"), src.join("r.csv")],
        });
        let s = if src == &pipes {
            // The writer opens each pipe in the order the import reads them (an open waits for
            // the reader) and fails if the import opened one twice or in another order.
            let writer = std::thread::spawn({
                let (pipes, inputs) = (pipes.clone(), inputs.clone());
                move || {
                    for (name, bytes) in &inputs {
                        let mut f =
                            std::fs::OpenOptions::new().write(true).open(pipes.join(name)).unwrap();
                        f.write_all(bytes).unwrap();
                    }
                }
            });
            let s = run(&cfg).unwrap();
            writer.join().unwrap();
            s
        } else {
            run(&cfg).unwrap()
        };
        assert_eq!((s.nodes, s.relationships), (n, 60_000));
        let store = Store::open(&cfg.dest, StoreConfig::default()).unwrap();
        assert!(store.check().unwrap().is_ok());
        store.close().unwrap();
        stores.push(store_files(&cfg.dest));
    }
    let names = |s: &Vec<(String, Vec<u8>)>| s.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert!(names(&stores[0]).iter().any(|f| f.starts_with("segment-")), "{:?}", names(&stores[0]));
    for other in &stores[1..] {
        assert_eq!(names(&stores[0]), names(other));
        for (a, b) in stores[0].iter().zip(other) {
            assert!(a.1 == b.1, "{} differs between the import from files and from pipes", a.0);
        }
    }
}

/// A zip archive cannot be read from a pipe (it is read by seeking): a clear error, no store.
#[test]
fn a_zip_archive_in_a_pipe_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("n.zip");
    mkfifo(&p);
    let writer = std::thread::spawn({
        let p = p.clone();
        move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            // The reader may close the pipe after the magic bytes: the rest may not be taken.
            let _ = f.write_all(b"PK\x03\x04 the rest of an archive");
        }
    });
    let mut cfg = config(d);
    cfg.nodes.push(NodeInput { labels: vec![], files: vec![p] });
    let e = run(&cfg).unwrap_err();
    writer.join().unwrap();
    assert!(e.message.contains("zip archive cannot be read from a pipe"), "{}", e.message);
    assert!(!bulk::holds_store(&cfg.dest).unwrap());
}
