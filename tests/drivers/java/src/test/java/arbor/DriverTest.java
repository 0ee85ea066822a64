// Arbor with the official Neo4j Java driver, over a real `arbor serve` process: connectivity, value types
// both ways, graph entities, explicit and managed transactions (retried after a write conflict), Neo4j error
// codes, summaries and counters, and streaming with a small fetch size. The binary is $ARBOR_BIN (default
// target/release/arbor from the repository root).
package arbor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Record;
import org.neo4j.driver.Result;
import org.neo4j.driver.Session;
import org.neo4j.driver.SessionConfig;
import org.neo4j.driver.Transaction;
import org.neo4j.driver.Values;
import org.neo4j.driver.exceptions.ClientException;
import org.neo4j.driver.summary.QueryType;
import org.neo4j.driver.summary.ResultSummary;
import org.neo4j.driver.types.IsoDuration;
import org.neo4j.driver.types.Node;
import org.neo4j.driver.types.Point;
import org.neo4j.driver.types.Relationship;

class DriverTest {
    static Process server;
    static Path data;
    static Driver driver;

    @BeforeAll
    static void start() throws Exception {
        String bin = System.getenv("ARBOR_BIN");
        if (bin == null || bin.isEmpty()) {
            bin = Paths.get("..", "..", "..", "target", "release", "arbor").toAbsolutePath().toString();
        }
        data = Files.createTempDirectory("arbor-java-");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        server = new ProcessBuilder(bin, "serve", "--data", data.toString(), "--listen", "127.0.0.1:" + port)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket c = new Socket()) {
                c.connect(new InetSocketAddress("127.0.0.1", port), 200);
                break;
            } catch (IOException e) {
                if (!server.isAlive()) throw new IllegalStateException("arbor serve exited: " + server.exitValue());
                if (System.nanoTime() > deadline) throw new IllegalStateException("arbor serve did not start");
                Thread.sleep(50);
            }
        }
        driver = GraphDatabase.driver("bolt://127.0.0.1:" + port, AuthTokens.none());
    }

    @AfterAll
    static void stop() throws Exception {
        if (driver != null) driver.close();
        if (server != null) {
            server.destroy(); // SIGTERM: a clean shutdown with a checkpoint
            assertTrue(server.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, server.exitValue());
        }
    }

    static Object echo(Object v) {
        return driver.executableQuery("RETURN $x AS x").withParameters(Map.of("x", v)).execute()
                .records().get(0).get("x").asObject();
    }

    @Test
    void connectivity() {
        driver.verifyConnectivity();
        var server = driver.executableQuery("RETURN 1").execute().summary().server();
        assertTrue(server.protocolVersion().startsWith("5."), server.protocolVersion());
        assertTrue(server.agent().startsWith("Neo4j/5."), server.agent());
    }

    @Test
    void valuesRoundTrip() {
        for (Object v : List.of(0L, -129L, 1L << 40, Long.MAX_VALUE, Long.MIN_VALUE, 1.5, "ünïcødé 🌳", true, false)) {
            assertEquals(v, echo(v));
        }
        assertEquals(List.of(1L, "two", List.of(3.0)), echo(List.of(1L, "two", List.of(3.0))));
        assertEquals(Map.of("a", 1L, "b", Map.of("c", "d")), echo(Map.of("a", 1L, "b", Map.of("c", "d"))));
        assertEquals(LocalDate.of(2024, 2, 29), echo(LocalDate.of(2024, 2, 29)));
        ZonedDateTime zoned = ZonedDateTime.of(2021, 6, 7, 8, 9, 10, 11, ZoneId.of("Europe/Stockholm"));
        assertEquals(zoned, echo(zoned));
        Record r = driver.executableQuery(
                "RETURN duration('P1Y2M3DT4H') AS d, point({x: 1.5, y: 2.5}) AS p, [1, 2, 3] AS l")
                .execute().records().get(0);
        IsoDuration d = r.get("d").asIsoDuration();
        assertEquals(14, d.months());
        assertEquals(3, d.days());
        assertEquals(4 * 3600, d.seconds());
        Point p = r.get("p").asPoint();
        assertEquals(7203, p.srid());
        assertEquals(1.5, p.x());
        assertEquals(List.of(1L, 2L, 3L), r.get("l").asList());
    }

    @Test
    void entitiesAndCounters() {
        var result = driver.executableQuery(
                "CREATE p = (a:JPerson {name: 'Ada'})-[r:KNOWS {since: 1833}]->(b:JPerson {name: 'Charles'}) "
                        + "RETURN a, r, b, p").execute();
        Record rec = result.records().get(0);
        Node a = rec.get("a").asNode();
        Node b = rec.get("b").asNode();
        Relationship r = rec.get("r").asRelationship();
        assertTrue(a.hasLabel("JPerson"));
        assertEquals("Ada", a.get("name").asString());
        assertEquals("KNOWS", r.type());
        assertEquals(a.elementId(), r.startNodeElementId());
        assertEquals(b.elementId(), r.endNodeElementId());
        assertEquals(1833L, r.get("since").asLong());
        assertEquals(1, rec.get("p").asPath().length());
        ResultSummary s = result.summary();
        assertEquals(2, s.counters().nodesCreated());
        assertEquals(1, s.counters().relationshipsCreated());
        assertEquals(3, s.counters().propertiesSet());
        assertEquals(QueryType.READ_WRITE, s.queryType());
        String name = driver.executableQuery("MATCH (n) WHERE elementId(n) = $id RETURN n.name AS name")
                .withParameters(Map.of("id", a.elementId())).execute().records().get(0).get("name").asString();
        assertEquals("Ada", name);
    }

    @Test
    void explicitTransactions() {
        try (Session s = driver.session()) {
            try (Transaction tx = s.beginTransaction()) {
                tx.run("CREATE (:JTx {k: 'rolled back'})");
                tx.rollback();
            }
            try (Transaction tx = s.beginTransaction()) {
                tx.run("CREATE (:JTx {k: 'kept'})");
                tx.commit();
            }
            List<Object> ks = s.run("MATCH (n:JTx) RETURN collect(n.k) AS ks").single().get("ks").asList();
            assertEquals(List.of("kept"), ks);
        }
    }

    @Test
    void errorCodes() {
        try (Session s = driver.session()) {
            ClientException e = assertThrows(ClientException.class, () -> s.run("MATCH (n RETURN n").consume());
            assertEquals("Neo.ClientError.Statement.SyntaxError", e.code());
            e = assertThrows(ClientException.class, () -> s.run("RETURN 1 / 0").consume());
            assertEquals("Neo.ClientError.Statement.ArithmeticError", e.code());
            e = assertThrows(ClientException.class, () -> s.run("RETURN $missing").consume());
            assertEquals("Neo.ClientError.Statement.ParameterMissing", e.code());
            assertEquals(42L, s.run("RETURN 42 AS x").single().get("x").asLong());
        }
    }

    @Test
    void managedTransactionsRetryConflicts() throws Exception {
        driver.executableQuery("CREATE (:JCounter {v: 0})").execute();
        int workers = 4;
        int perWorker = 10;
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        List<Future<?>> done = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            done.add(pool.submit(() -> {
                try (Session s = driver.session()) {
                    for (int i = 0; i < perWorker; i++) {
                        s.executeWriteWithoutResult(tx -> {
                            long v = tx.run("MATCH (c:JCounter) RETURN c.v AS v").single().get("v").asLong();
                            tx.run("MATCH (c:JCounter) SET c.v = $v", Values.parameters("v", v + 1)).consume();
                        });
                    }
                }
            }));
        }
        for (Future<?> f : done) f.get(120, TimeUnit.SECONDS);
        pool.shutdown();
        long v = driver.executableQuery("MATCH (c:JCounter) RETURN c.v AS v").execute().records().get(0)
                .get("v").asLong();
        assertEquals(workers * perWorker, v);
    }

    @Test
    void streamingWithSmallFetchSize() {
        try (Session s = driver.session(SessionConfig.builder().withFetchSize(300).build())) {
            Result r = s.run("UNWIND range(0, 29999) AS i RETURN i");
            long n = 0;
            while (r.hasNext()) {
                assertEquals(n, r.next().get("i").asLong());
                n++;
            }
            assertEquals(30000, n);
            assertInstanceOf(ResultSummary.class, r.consume());
        }
    }
}
