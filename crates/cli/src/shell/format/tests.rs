//! Output formats against cypher-shell's documented shapes.

use std::sync::Arc;

use arbor_model::{NodeData, NodeId, PathData, PropertyMap, RelData, RelId, Value};

use super::*;

fn props(pairs: &[(&str, Value)]) -> PropertyMap {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn node(id: u64, labels: &[&str], p: &[(&str, Value)]) -> NodeData {
    NodeData {
        id: NodeId(id),
        labels: labels.iter().map(|s| s.to_string()).collect(),
        properties: props(p),
    }
}

fn render(format: Format, fields: &[&str], rows: Vec<Vec<Value>>, summary: Summary) -> String {
    let mut out = Vec::new();
    let fields: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
    print_result(&mut out, format, &fields, &rows, &summary).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn verbose_is_a_bordered_table_with_row_count_and_timings() {
    let text = render(
        Format::Verbose,
        &["a.term_id", "c.term_id"],
        vec![vec![Value::str("T_BIGADONG"), Value::str("T_DOWNTIME")]],
        Summary { available_ms: 47, consumed_ms: 2, stats: vec![] },
    );
    let expected = "\
+-----------------------------+
| a.term_id    | c.term_id    |
+-----------------------------+
| \"T_BIGADONG\" | \"T_DOWNTIME\" |
+-----------------------------+

1 row
ready to start consuming query after 47 ms, results consumed after another 2 ms
";
    assert_eq!(text, expected);
}

#[test]
fn verbose_prints_update_statistics_and_no_table_without_columns() {
    let stats = vec![("labels-added".to_string(), 1), ("nodes-created".to_string(), 1)];
    let text = render(Format::Verbose, &[], vec![], Summary { stats, ..Summary::default() });
    assert_eq!(text, "Added 1 nodes, Added 1 labels\n");
}

#[test]
fn plain_prints_a_header_only_when_there_are_rows() {
    let rows = vec![vec![Value::Int(1), Value::Null], vec![Value::Bool(true), Value::Float(2.5)]];
    assert_eq!(
        render(Format::Plain, &["a", "b"], rows, Summary::default()),
        "a, b\n1, NULL\nTRUE, 2.5\n"
    );
    assert_eq!(render(Format::Plain, &["a"], vec![], Summary::default()), "");
}

#[test]
fn entities_print_as_cypher_shell_shows_them() {
    let a = node(1, &["Person"], &[("name", Value::str("Ann"))]);
    let b = node(2, &[], &[]);
    let r = RelData {
        id: RelId(7),
        start: NodeId(2),
        end: NodeId(1),
        rel_type: "KNOWS".into(),
        properties: props(&[("since", Value::Int(2020))]),
    };
    assert_eq!(value(&Value::NodeData(Arc::new(a.clone()))), "(:Person {name: \"Ann\"})");
    assert_eq!(value(&Value::NodeData(Arc::new(b.clone()))), "()");
    assert_eq!(value(&Value::RelData(Arc::new(r.clone()))), "[:KNOWS {since: 2020}]");
    let path = PathData { nodes: vec![a, b], rels: vec![r] };
    assert_eq!(
        value(&Value::PathData(Arc::new(path))),
        "(:Person {name: \"Ann\"})<-[:KNOWS {since: 2020}]-()"
    );
    let list =
        Value::List(vec![Value::Map(props(&[("k", Value::str("v\"q"))])), Value::Float(1e10)]);
    assert_eq!(value(&list), "[{k: \"v\\\"q\"}, 1.0E10]");
}

#[test]
fn csv_quotes_cells_that_need_it_and_prints_strings_raw() {
    let rows = vec![vec![Value::str("a,b"), Value::str("plain"), Value::Null, Value::Int(3)]];
    assert_eq!(
        render(Format::Csv, &["x", "y", "z", "n"], rows, Summary::default()),
        "x,y,z,n\n\"a,b\",plain,,3\n"
    );
}

#[test]
fn json_prints_one_object_per_row_in_column_order() {
    let n = node(5, &["L"], &[("p", Value::Int(1))]);
    let rows = vec![vec![Value::Int(1), Value::NodeData(Arc::new(n))]];
    assert_eq!(
        render(Format::Json, &["b", "a"], rows, Summary::default()),
        "{\"b\":1,\"a\":{\"id\":5,\"labels\":[\"L\"],\"properties\":{\"p\":1}}}\n"
    );
}

#[test]
fn wide_characters_take_two_columns() {
    let text = render(Format::Verbose, &["k"], vec![vec![Value::str("비가")]], Summary::default());
    assert!(text.starts_with("+--------+\n| k      |\n"), "{text}");
}
