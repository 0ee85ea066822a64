//! `CREATE FULLTEXT INDEX` in its node and relationship forms, and the filter words of
//! `SHOW FULLTEXT INDEXES`.

use arbor_cypher_syntax::ast::{SchemaCommand, Statement};
use arbor_cypher_syntax::parse;

fn fulltext(text: &str) -> (Option<String>, bool, bool, Vec<String>, Vec<String>, bool) {
    match parse(text) {
        Ok(Statement::Schema(SchemaCommand::CreateFulltextIndex {
            name,
            if_not_exists,
            relationship,
            labels,
            properties,
            options,
            ..
        })) => (
            name.map(|n| n.name.to_string()),
            if_not_exists,
            relationship,
            labels.iter().map(|l| l.name.to_string()).collect(),
            properties.iter().map(|p| p.name.to_string()).collect(),
            options.is_some(),
        ),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn node_and_relationship_forms() {
    let (name, ine, rel, labels, props, opts) = fulltext(
        "CREATE FULLTEXT INDEX titles IF NOT EXISTS FOR (n:Movie|Book) ON EACH [n.title, n.plot] \
         OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
    );
    assert_eq!(name.as_deref(), Some("titles"));
    assert!(ine && !rel && opts);
    assert_eq!(labels, ["Movie", "Book"]);
    assert_eq!(props, ["title", "plot"]);
    let (name, ine, rel, labels, props, opts) =
        fulltext("CREATE FULLTEXT INDEX FOR ()-[r:A|B]->() ON EACH [r.note] OPTIONS $o");
    assert!(name.is_none() && !ine && rel && opts);
    assert_eq!(labels, ["A", "B"]);
    assert_eq!(props, ["note"]);
}

#[test]
fn malformed_forms_are_syntax_errors() {
    for bad in [
        "CREATE FULLTEXT INDEX x FOR (n:A) ON (n.p)",
        "CREATE FULLTEXT INDEX x FOR (n:A) ON EACH [n.p",
        "CREATE FULLTEXT INDEX x FOR (n) ON EACH [n.p]",
        "CREATE FULLTEXT INDEX x FOR (n:A|) ON EACH [n.p]",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn show_records_its_filter_words() {
    let Ok(Statement::Show(s)) = parse("SHOW FULLTEXT INDEXES YIELD name") else { panic!() };
    assert_eq!(s.filter.as_deref(), Some("FULLTEXT"));
}

#[test]
fn the_name_may_be_a_parameter() {
    let Ok(Statement::Schema(SchemaCommand::CreateFulltextIndex { name, name_param, .. })) =
        parse("CREATE FULLTEXT INDEX $name IF NOT EXISTS FOR (n:`L`) ON EACH [n.`p`]")
    else {
        panic!("not parsed")
    };
    assert!(name.is_none());
    assert_eq!(name_param.as_deref(), Some("name"));
}
