"""FULLTEXT indexes through the official Python driver, called the way hybrid retrievers call them
(langchain-neo4j's Neo4jVector with search_type="hybrid", neo4j-graphrag's HybridRetriever,
llama-index): the index is created and then looked up with SHOW INDEXES ... options, queried with
parameters and `{limit: $k}`, and its scores are normalised by their maximum inside a
`CALL { ... UNION ... }`. Expectations are Neo4j 5.26's (run with BOLT_TEST_PORT pointing at the
Neo4j anchor to check them)."""
import pytest
from neo4j.exceptions import ClientError

DOCS = [
    ("a", "Arbor is a graph database that speaks Bolt"),
    ("b", "Tantivy is a full-text search engine library"),
    ("c", "A graph of graphs: graph theory for graph databases"),
    ("d", "Cooking with cast iron"),
]

# neo4j-graphrag's hybrid query with the vector half replaced by a second full-text query (vector
# indexes are tested on their own).
HYBRID = """
CALL {
    CALL db.index.fulltext.queryNodes($index, $q1, {limit: $k}) YIELD node, score
    WITH collect({node: node, score: score}) AS nodes, max(score) AS top
    UNWIND nodes AS n
    RETURN n.node AS node, (n.score / top) AS score
    UNION
    CALL db.index.fulltext.queryNodes($index, $q2, {limit: $k}) YIELD node, score
    WITH collect({node: node, score: score}) AS nodes, max(score) AS top
    UNWIND nodes AS n
    RETURN n.node AS node, (n.score / top) AS score
}
WITH node, max(score) AS score ORDER BY score DESC, node.id LIMIT $k
RETURN node.id AS id, score
"""


@pytest.fixture(scope="module")
def docs(driver):
    with driver.session() as s:
        s.run("MATCH (n:FULLTEXT_Chunk) DETACH DELETE n").consume()
        s.run("DROP INDEX fulltext_keyword IF EXISTS").consume()
        s.run("UNWIND $docs AS d CREATE (:FULLTEXT_Chunk {id: d[0], text: d[1]})",
              docs=[list(d) for d in DOCS]).consume()
        # langchain-neo4j's keyword index creation and existence check.
        s.run("CREATE FULLTEXT INDEX fulltext_keyword FOR (n:`FULLTEXT_Chunk`) ON EACH [n.`text`]").consume()
    yield
    with driver.session() as s:
        s.run("MATCH (n:FULLTEXT_Chunk) DETACH DELETE n").consume()
        s.run("DROP INDEX fulltext_keyword IF EXISTS").consume()


def test_the_index_is_found_as_langchain_looks_for_it(driver, docs):
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options "
        "WHERE type = 'FULLTEXT' AND (name = $keyword_index_name "
        "OR (labelsOrTypes = [$node_label] AND properties = $text_node_property)) "
        "RETURN name, type, labelsOrTypes, properties, options",
        keyword_index_name="fulltext_keyword", node_label="FULLTEXT_Chunk", text_node_property=["text"])
    assert len(records) == 1
    r = records[0]
    assert (r["name"], r["type"], r["labelsOrTypes"], r["properties"]) == \
        ("fulltext_keyword", "FULLTEXT", ["FULLTEXT_Chunk"], ["text"])
    assert r["options"] == {"indexProvider": "fulltext-1.0",
                            "indexConfig": {"fulltext.analyzer": "standard-no-stop-words",
                                            "fulltext.eventually_consistent": False}}


def test_query_nodes_with_parameters_ranks_by_score(driver, docs):
    records, _, _ = driver.execute_query(
        "CALL db.index.fulltext.queryNodes($index, $q, {limit: $k}) YIELD node, score "
        "RETURN node.id AS id, score",
        index="fulltext_keyword", q="graph", k=3)
    assert [r["id"] for r in records] == ["c", "a"]
    assert records[0]["score"] > records[1]["score"] > 0


def test_hybrid_union_normalises_scores(driver, docs):
    records, _, _ = driver.execute_query(HYBRID, index="fulltext_keyword", q1="graph", q2="search engine", k=3)
    ids = [r["id"] for r in records]
    scores = [r["score"] for r in records]
    # Each half's best hit scores 1.0 after normalisation.
    assert ids[:2] == ["b", "c"] and scores[:2] == [1.0, 1.0]
    assert ids[2] == "a" and 0 < scores[2] < 1


def test_own_writes_are_searchable_before_commit(driver, docs):
    with driver.session() as s:
        tx = s.begin_transaction()
        tx.run("CREATE (:FULLTEXT_Chunk {id: 'e', text: 'unlikelyword'})").consume()
        mine = tx.run("CALL db.index.fulltext.queryNodes('fulltext_keyword', 'unlikelyword') "
                      "YIELD node RETURN node.id AS id").value()
        with driver.session() as other:
            theirs = other.run("CALL db.index.fulltext.queryNodes('fulltext_keyword', 'unlikelyword') "
                               "YIELD node RETURN node.id AS id").value()
        tx.rollback()
    assert (mine, theirs) == (["e"], [])


@pytest.mark.parametrize("query, code, text", [
    ("CALL db.index.fulltext.queryNodes('fulltext_nope', 'x')",
     "Neo.ClientError.Procedure.ProcedureCallFailed", "There is no such fulltext schema index: fulltext_nope"),
    ("CALL db.index.fulltext.queryNodes('fulltext_keyword', 'graph AND')",
     "Neo.ClientError.Procedure.ProcedureCallFailed", "ParseException"),
    ("CREATE FULLTEXT INDEX fulltext_keyword FOR (n:FULLTEXT_Chunk) ON EACH [n.id]",
     "Neo.ClientError.Schema.IndexWithNameAlreadyExists", "There already exists an index called 'fulltext_keyword'"),
])
def test_errors_carry_neo4j_codes(driver, docs, query, code, text):
    with pytest.raises(ClientError) as e:
        driver.execute_query(query)
    assert e.value.code == code
    assert text in e.value.message
