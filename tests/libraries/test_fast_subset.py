"""Fast CI subset of the library suites: a handful of real library API calls per library that work
against `arbor serve` today (langchain-neo4j, neo4j-graphrag, neomodel, llama-index).

These call the libraries themselves, not re-implementations. A library that is not installed makes
its tests FAIL with the pip command to run, unless ARBOR_LIBS_OPTIONAL=1 (then they skip, loudly).
llama-index-graph-stores-neo4j 0.8.0 pins `neo4j<6` while neomodel 7.0 pins `neo4j~=6.1`, so the
llama-index checks run in a child process: the interpreter in $ARBOR_LIBS_LLAMA_PYTHON (a venv with
llama-index-graph-stores-neo4j==0.8.0), default this interpreter.
Server binary: $ARBOR_BIN (default target/release/arbor). Full suites: run.sh (README.md).
"""

import importlib
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("ARBOR_BIN", os.path.join(HERE, "../../target/release/arbor"))
PASSWORD = "password"
PINS = {
    "langchain_neo4j": "langchain-neo4j==0.11.0",
    "neo4j_graphrag": "neo4j-graphrag==1.21.0",
    "neomodel": "neomodel==7.0.0",
    "llama_index.graph_stores.neo4j": "llama-index-graph-stores-neo4j==0.8.0",
}


def missing(module):
    """Fails (or, with ARBOR_LIBS_OPTIONAL=1, skips) saying what to install."""
    text = (f"{module} is not installed: pip install '{PINS[module]}' "
            f"(pinned set: tests/libraries/README.md), or set ARBOR_LIBS_OPTIONAL=1")
    if os.environ.get("ARBOR_LIBS_OPTIONAL") == "1":
        pytest.skip(text)
    pytest.fail(text, pytrace=False)


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(module)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def arbor():
    """`arbor serve` with basic auth (neo4j/password) on a fresh data dir; yields the bolt URI."""
    if not os.path.exists(BIN):
        pytest.fail(f"no arbor binary at {BIN}; build it or set ARBOR_BIN", pytrace=False)
    data = tempfile.mkdtemp(prefix="arbor-fastlib-")
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--data", data, "--listen", f"127.0.0.1:{port}",
                             "--auth", "basic", "--initial-password", PASSWORD,
                             "--durability", "off"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        if proc.poll() is not None:
            pytest.fail(f"arbor serve exited: {proc.stderr.read().decode()[:500]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                pytest.fail(f"arbor serve not listening on {port} after 30 s")
            time.sleep(0.1)
    yield f"bolt://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


def test_langchain_neo4jgraph_query(arbor):
    lc = need("langchain_neo4j")
    graph = lc.Neo4jGraph(url=arbor, username="neo4j", password=PASSWORD, refresh_schema=False)
    graph.query("MATCH (n) DETACH DELETE n")
    rows = graph.query("CREATE (m:Movie {title: $t, year: $y}) RETURN m.title AS title, m.year AS year",
                       params={"t": "Arrival", "y": 2016})
    assert rows == [{"title": "Arrival", "year": 2016}]
    rows = graph.query("MATCH (m:Movie) WHERE m.year > 2000 RETURN m {.title} AS m")
    assert rows == [{"m": {"title": "Arrival"}}]
    graph.close()


def test_langchain_chat_message_history(arbor):
    lc = need("langchain_neo4j")
    history = lc.Neo4jChatMessageHistory(session_id="fast-1", url=arbor, username="neo4j",
                                         password=PASSWORD)
    history.add_user_message("hello")
    history.add_ai_message("hi there")
    assert [m.content for m in history.messages] == ["hello", "hi there"]
    history.clear()
    assert history.messages == []


def test_langchain_checkpoint_saver(arbor):
    lc = need("langchain_neo4j")
    import neo4j
    from langgraph.checkpoint.base import empty_checkpoint

    with neo4j.GraphDatabase.driver(arbor, auth=("neo4j", PASSWORD)) as driver:
        saver = lc.Neo4jSaver(driver)
        saver.setup()
        config = {"configurable": {"thread_id": "fast-t1", "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        saver.put(config, checkpoint, {"source": "input", "step": 1}, {})
        got = saver.get_tuple(config)
        assert got is not None and got.checkpoint["id"] == checkpoint["id"]
        assert got.metadata["step"] == 1


def test_neomodel_structured_node(arbor):
    nm = need("neomodel")

    class FastPerson(nm.StructuredNode):
        name = nm.StringProperty(unique_index=True)
        age = nm.IntegerProperty(index=True)
        friends = nm.RelationshipTo("FastPerson", "FRIEND")

    globals()["FastPerson"] = FastPerson  # neomodel resolves "FastPerson" in this module
    host = arbor.split("://", 1)[1]
    nm.get_config().database_url = f"bolt://neo4j:{PASSWORD}@{host}"
    try:
        nm.db.install_labels(FastPerson)
        ann = FastPerson(name="Ann", age=30).save()
        bob = FastPerson(name="Bob", age=25).save()
        assert [p.name for p in FastPerson.nodes.filter(age__gt=26)] == ["Ann"]
        assert FastPerson.nodes.get(name="Bob").age == 25
        ann.friends.connect(bob)
        assert [f.name for f in ann.friends.all()] == ["Bob"]
        rows, cols = nm.db.cypher_query("MATCH (p:FastPerson) RETURN count(p) AS n")
        assert (rows, cols) == ([[2]], ["n"])
        with pytest.raises(nm.UniqueProperty):
            FastPerson(name="Ann", age=1).save()
    finally:
        nm.db.close_connection()


def test_graphrag_query_database_and_message_history(arbor):
    need("neo4j_graphrag")
    import neo4j
    from neo4j_graphrag.message_history import Neo4jMessageHistory
    from neo4j_graphrag.schema import query_database
    from neo4j_graphrag.types import LLMMessage

    with neo4j.GraphDatabase.driver(arbor, auth=("neo4j", PASSWORD)) as driver:
        query_database(driver, "MATCH (n) DETACH DELETE n")
        query_database(driver, "CREATE (:Doc {id: 1, text: 'graph'})-[:NEXT]->(:Doc {id: 2})")
        rows = query_database(driver, "MATCH (a:Doc)-[:NEXT]->(b) RETURN a.id AS a, b.id AS b")
        assert rows == [{"a": 1, "b": 2}]
        history = Neo4jMessageHistory(session_id="fast-s1", driver=driver)
        history.add_message(LLMMessage(role="user", content="hi"))
        history.add_message(LLMMessage(role="assistant", content="hello"))
        assert [m["content"] for m in history.messages] == ["hi", "hello"]
        history.clear()
        assert history.messages == []


LLAMA_CHECK = """
import sys
try:
    from llama_index.graph_stores.neo4j import Neo4jGraphStore
except ImportError:
    sys.exit(3)
store = Neo4jGraphStore(username="neo4j", password=sys.argv[2], url=sys.argv[1],
                        refresh_schema=False)
store.query("MATCH (n) DETACH DELETE n")
store.upsert_triplet("Alice", "LIKES", "IceCream")
store.upsert_triplet("Alice", "KNOWS", "Bob")
got = sorted(map(tuple, store.get("Alice")))
assert got == [("KNOWS", "Bob"), ("LIKES", "IceCream")], got
store.delete("Alice", "LIKES", "IceCream")
assert [tuple(r) for r in store.get("Alice")] == [("KNOWS", "Bob")]
rows = store.query("MATCH (n)-[r]->(m) RETURN n.id AS s, type(r) AS t, m.id AS o")
assert rows == [{"s": "Alice", "t": "KNOWS", "o": "Bob"}], rows
print("llama-ok")
"""


def test_llamaindex_graph_store(arbor):
    python = os.environ.get("ARBOR_LIBS_LLAMA_PYTHON", sys.executable)
    proc = subprocess.run([python, "-c", LLAMA_CHECK, arbor, PASSWORD], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode == 3:
        missing("llama_index.graph_stores.neo4j")
    assert proc.returncode == 0 and "llama-ok" in proc.stdout, proc.stderr[-2000:]


def test_graphrag_text2cypher_retriever(arbor):
    """The retriever runs the Cypher its LLM returns; the LLM here is a fixed answer (no network)."""
    need("neo4j_graphrag")
    import neo4j
    from neo4j_graphrag.llm import LLMInterface, LLMResponse
    from neo4j_graphrag.retrievers import Text2CypherRetriever

    cypher = "MATCH (m:Movie) WHERE m.year > 2000 RETURN m.title AS title ORDER BY title"

    class FixedLLM(LLMInterface):
        def invoke(self, input, message_history=None, system_instruction=None):
            return LLMResponse(content=cypher)

        async def ainvoke(self, input, message_history=None, system_instruction=None):
            return LLMResponse(content=cypher)

    with neo4j.GraphDatabase.driver(arbor, auth=("neo4j", PASSWORD)) as driver:
        driver.execute_query("MATCH (n) DETACH DELETE n")
        driver.execute_query("UNWIND [['Arrival', 2016], ['Alien', 1979], ['Dune', 2021]] AS m "
                             "CREATE (:Movie {title: m[0], year: m[1]})")
        retriever = Text2CypherRetriever(driver=driver, llm=FixedLLM(model_name="fixed"),
                                         neo4j_schema="Node Movie {title: STRING, year: INTEGER}")
        result = retriever.search(query_text="movies after 2000")
        assert [item.content for item in result.items] == [
            "<Record title='Arrival'>", "<Record title='Dune'>"]
        assert result.metadata["cypher"] == cypher


def test_langchain_structured_schema_from_apoc_meta_data(arbor):
    """langchain-neo4j's refresh_schema reads labels, properties and relationships through
    apoc.meta.data (neo4j-graphrag's schema queries)."""
    lc = need("langchain_neo4j")
    graph = lc.Neo4jGraph(url=arbor, username="neo4j", password=PASSWORD, refresh_schema=False)
    graph.query("MATCH (n) DETACH DELETE n")
    graph.query("CREATE (:Person {name: 'Ann', born: 1990})-[:ACTED_IN {role: 'x'}]->(:Film {title: 'T'})")
    graph.refresh_schema()
    schema = graph.get_structured_schema
    person = {p["property"]: p["type"] for p in schema["node_props"]["Person"]}
    assert person == {"name": "STRING", "born": "INTEGER"}
    assert schema["rel_props"]["ACTED_IN"] == [{"property": "role", "type": "STRING"}]
    assert {"start": "Person", "type": "ACTED_IN", "end": "Film"} in schema["relationships"]
    graph.close()


def test_graphrag_fallback_return_map_order(arbor):
    """neo4j-graphrag's retrievers return `node {.*, `emb`: null}` and render the record's text,
    which its hybrid test reads by position: Neo4j 5.26 sends the named item first."""
    import neo4j

    with neo4j.GraphDatabase.driver(arbor, auth=("neo4j", PASSWORD)) as driver:
        driver.execute_query("MATCH (n:FastOrder) DETACH DELETE n")
        driver.execute_query("CREATE (:FastOrder {id: 'u', int_property: 0, emb: [1.0, 2.0]})")
        records, _, _ = driver.execute_query(
            "WITH {b: 2, a: 1} AS row MATCH (node:FastOrder) "
            "RETURN node {.*, `emb`: null} AS node, row {.*, x: 1} AS m")
        assert list(records[0]["node"].items()) == [("emb", None), ("id", "u"), ("int_property", 0)]
        assert list(records[0]["m"]) == ["x", "a", "b"]
        driver.execute_query("MATCH (n:FastOrder) DETACH DELETE n")


def test_langchain_vector_ties_in_neo4j_order(arbor):
    """Equal scores come out in Neo4j 5.26's order (its Lucene queue: the second of the tied
    entries first, the first last), which langchain's test_neo4jvector_prefer_indexname_insert
    asserts for two identical embeddings."""
    lc = need("langchain_neo4j")
    from langchain_core.embeddings import Embeddings

    class Same(Embeddings):
        def embed_documents(self, texts):
            return [[1.0, 1.0, 1.0, 100.0] for _ in texts]

        def embed_query(self, text):
            return [1.0, 1.0, 1.0, 200.0]

    store = lc.Neo4jVector.from_texts(["foo"], embedding=Same(), url=arbor, username="neo4j",
                                      password=PASSWORD, index_name="fast_tie",
                                      node_label="FastTie", pre_delete_collection=True)
    try:
        store.add_texts(["bar"])
        assert [d.page_content for d in store.similarity_search("q", k=2)] == ["bar", "foo"]
        store.add_texts(["baz"])
        assert [d.page_content for d in store.similarity_search("q", k=3)] == ["bar", "baz", "foo"]
    finally:
        store.query("DROP INDEX fast_tie IF EXISTS")
        store.query("MATCH (n:FastTie) DETACH DELETE n")
        store._driver.close()
