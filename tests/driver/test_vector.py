"""Vector indexes through the official driver, called the way GraphRAG libraries call them
(langchain-neo4j's Neo4jVector, neo4j-graphrag's indexes module): create the index with a
parameterised name and `toInteger($dimensions)`, write embeddings with
db.create.setNodeVectorProperty, find the index through SHOW INDEXES ... YIELD options, query
it, drop it with DROP INDEX $name IF EXISTS. Expected answers are Neo4j 5.26's."""
import pytest
from neo4j.exceptions import ClientError, DatabaseError


def run(driver, cypher, **params):
    records, _, _ = driver.execute_query(cypher, params)
    return [r.data() for r in records]


@pytest.fixture(autouse=True)
def clean(driver):
    """Labels and index names carry the branch prefix, so the file can also run against the
    shared Neo4j (BOLT_TEST_PORT) and leave nothing behind."""
    def wipe():
        for name in ["vecwire_chunks", "vecwire_docs"]:
            run(driver, "DROP INDEX $name IF EXISTS", name=name)
        run(driver, "MATCH (n) WHERE n:VECWIRE_Chunk OR n:VECWIRE_Doc DETACH DELETE n")
    wipe()
    yield
    wipe()


def test_graphrag_style_lifecycle(driver):
    run(driver, "CREATE VECTOR INDEX $name IF NOT EXISTS FOR (n:VECWIRE_Chunk) ON n.embedding "
                "OPTIONS { indexConfig: { `vector.dimensions`: toInteger($dimensions), "
                "`vector.similarity_function`: $similarity_fn } }",
        name="vecwire_chunks", dimensions=3, similarity_fn="cosine")
    # The same call again is a no-op (IF NOT EXISTS).
    run(driver, "CREATE VECTOR INDEX $name IF NOT EXISTS FOR (n:VECWIRE_Chunk) ON n.embedding "
                "OPTIONS { indexConfig: { `vector.dimensions`: toInteger($dimensions), "
                "`vector.similarity_function`: $similarity_fn } }",
        name="vecwire_chunks", dimensions=3, similarity_fn="cosine")
    rows = [{"id": i, "embedding": v} for i, v in
            enumerate([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])]
    run(driver, "UNWIND $rows AS row CREATE (c:VECWIRE_Chunk {id: row.id}) "
                "WITH c, row CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding) "
                "RETURN count(*)", rows=rows)
    info = run(driver, "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options "
                       "WHERE type = 'VECTOR' AND (name = $index_name OR (labelsOrTypes[0] = $label "
                       "AND properties[0] = $prop)) RETURN name, type, entityType, labelsOrTypes, "
                       "properties, options", index_name="vecwire_chunks", label="VECWIRE_Chunk", prop="embedding")
    assert len(info) == 1
    assert info[0]["entityType"] == "NODE" and info[0]["properties"] == ["embedding"]
    config = info[0]["options"]["indexConfig"]
    assert config["vector.dimensions"] == 3
    assert config["vector.similarity_function"] == "COSINE"
    run(driver, "CALL db.awaitIndexes()")
    hits = run(driver, "CALL db.index.vector.queryNodes($index, $k, $q) YIELD node, score "
                       "RETURN node.id AS id, score", index="vecwire_chunks", k=2, q=[1.0, 0.1, 0.0])
    assert [h["id"] for h in hits] == [0, 2]
    # Exact: 0.997519; Neo4j's default quantization gives 0.997361, and so does Arbor.
    assert hits[0]["score"] == pytest.approx(0.997361, abs=2e-6)
    with pytest.raises(ClientError) as e:
        run(driver, "CALL db.index.vector.queryNodes('vecwire_chunks', 2, [1.0, 0.0])")
    assert e.value.code == "Neo.ClientError.Procedure.ProcedureCallFailed"
    assert e.value.message.endswith(
        "Index query vector has 2 dimensions, but indexed vectors have 3.")
    run(driver, "DROP INDEX $name IF EXISTS", name="vecwire_chunks")
    run(driver, "DROP INDEX $name IF EXISTS", name="vecwire_chunks")
    assert run(driver, "SHOW VECTOR INDEXES YIELD name WHERE name = 'vecwire_chunks'") == []
    with pytest.raises(DatabaseError) as e:
        run(driver, "DROP INDEX vecwire_chunks")
    assert e.value.code == "Neo.DatabaseError.Schema.IndexDropFailed"


def test_own_writes_and_rollback_in_an_explicit_transaction(driver):
    """Arbor's vector indexes are transactional like its other indexes: a query sees the
    transaction's own writes. (Neo4j 5.26 answers [2] inside the transaction: its vector index
    does not see uncommitted writes; this is the one expectation here that is not Neo4j's.)"""
    run(driver, "CREATE VECTOR INDEX vecwire_docs FOR (d:VECWIRE_Doc) ON (d.v) OPTIONS {indexConfig: "
                "{`vector.dimensions`: 2, `vector.similarity_function`: 'euclidean'}}")
    run(driver, "CREATE (:VECWIRE_Doc {id: 1, v: [0.0, 0.0]}), (:VECWIRE_Doc {id: 2, v: [5.0, 5.0]})")
    q = "CALL db.index.vector.queryNodes('vecwire_docs', 1, [4.0, 4.0]) YIELD node RETURN node.id AS id"
    with driver.session() as s:
        tx = s.begin_transaction()
        tx.run("CREATE (:VECWIRE_Doc {id: 3, v: [4.0, 4.0]})").consume()
        assert [r["id"] for r in tx.run(q)] == [3]
        tx.rollback()
    assert [r["id"] for r in run(driver, q)] == [2]
