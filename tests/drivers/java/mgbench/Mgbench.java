// mgBench's 23 Pokec queries (and the realistic mixes W1..W4) through the official Neo4j Java
// driver, N concurrent worker threads, hot (one warm-up pass, then one measured pass per query).
// The Java twin of tests/drivers/go/mgbench: it measures a server as a Java application sees it,
// the driver's own cost included. Run with the driver's classpath (tests/drivers/java/mgbench/run.sh):
//
//   run.sh -uri bolt://127.0.0.1:7687 -workers 12 -count 1000 -nodes 10000 [-workloads W1,W2,W3,W4]
//
// The data set must already be loaded (e.g. by `arbor bench mgbench --uri ...`). Parameters come
// from a seeded java.util.Random stream: identical for every server given the same flags (not
// identical to the Go client's stream or to mgBench's CPython one).
import java.util.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.neo4j.driver.*;

public class Mgbench {
    enum P { NONE, ID, ID10, FROM_TO }

    record Q(int q, String name, String cypher, P params) {}

    static final List<Q> QUERIES = List.of(
        new Q(1, "aggregate", "MATCH (n:User) RETURN n.age, COUNT(*)", P.NONE),
        new Q(2, "aggregate_count", "MATCH (n) RETURN count(n), count(n.age)", P.NONE),
        new Q(3, "aggregate_with_filter", "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)", P.NONE),
        new Q(4, "min_max_avg", "MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)", P.NONE),
        new Q(5, "expansion_1", "MATCH (s:User {id: $id})-->(n:User) RETURN n.id", P.ID),
        new Q(6, "expansion_1_with_filter", "MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id", P.ID),
        new Q(7, "expansion_2", "MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id", P.ID),
        new Q(8, "expansion_2_with_filter", "MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", P.ID),
        new Q(9, "expansion_3", "MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id", P.ID),
        new Q(10, "expansion_3_with_filter", "MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", P.ID),
        new Q(11, "expansion_4", "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id", P.ID),
        new Q(12, "expansion_4_with_filter", "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", P.ID),
        new Q(13, "neighbours_2", "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id", P.ID),
        new Q(14, "neighbours_2_with_filter", "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", P.ID),
        new Q(15, "neighbours_2_with_data", "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n", P.ID),
        new Q(16, "neighbours_2_with_data_and_filter", "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n", P.ID),
        new Q(17, "pattern_cycle", "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2", P.ID),
        new Q(18, "pattern_long", "MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1", P.ID),
        new Q(19, "pattern_short", "MATCH (n:User {id: $id})-[e]->(m) RETURN m LIMIT 1", P.ID),
        new Q(20, "single_edge_write", "MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e", P.FROM_TO),
        new Q(21, "single_vertex_write", "CREATE (n:UserTemp {id : $id}) RETURN n", P.ID10),
        new Q(22, "single_vertex_property_update", "MATCH (n:User {id: $id}) SET n.property = -1", P.ID),
        new Q(23, "single_vertex_read", "MATCH (n:User {id : $id}) RETURN n", P.ID));

    /** benchgraph's realistic mixes: weights of write, read, update, analytical. */
    static final Map<String, int[]> MIXES = Map.of(
        "W1", new int[] {30, 40, 10, 20}, "W2", new int[] {30, 70, 0, 0},
        "W3", new int[] {50, 50, 0, 0}, "W4", new int[] {70, 30, 0, 0});

    record Item(Q q, Map<String, Object> params) {}

    record Outcome(double wallS, long[] latNanos, long rows, int errors) {}

    static Map<String, Object> params(Q q, Random r, int nodes) {
        switch (q.params()) {
            case ID: return Map.of("id", (long) (r.nextInt(nodes) + 1));
            case ID10: return Map.of("id", (long) (r.nextInt(nodes * 10) + 1));
            case FROM_TO: {
                int from = r.nextInt(nodes) + 1, to = from;
                while (to == from) to = r.nextInt(nodes) + 1;
                return Map.of("from", (long) from, "to", (long) to);
            }
            default: return Map.of();
        }
    }

    /** mgBench's query type: 0 write, 1 read, 2 update, 3 analytical, -1 aggregate. */
    static int kindOf(int q) {
        if (q == 20 || q == 21) return 0;
        if (q == 23) return 1;
        if (q == 22) return 2;
        if (q >= 5 && q <= 19) return 3;
        return -1;
    }

    static List<Item> realistic(int[] w, Random r, int count, int nodes) {
        List<List<Q>> byKind = new ArrayList<>();
        for (int k = 0; k < 4; k++) byKind.add(new ArrayList<>());
        for (Q q : QUERIES) if (kindOf(q.q()) >= 0) byKind.get(kindOf(q.q())).add(q);
        int total = w[0] + w[1] + w[2] + w[3];
        List<Item> out = new ArrayList<>(count);
        while (out.size() < count) {
            int x = r.nextInt(total), k = 0;
            while (x >= w[k]) { x -= w[k]; k++; }
            Q q = byKind.get(k).get(r.nextInt(byKind.get(k).size()));
            out.add(new Item(q, params(q, r, nodes)));
        }
        return out;
    }

    /** Runs the items over `workers` threads, each with its own session; every record is consumed. */
    static Outcome run(Driver driver, List<Item> items, int workers) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        long[] lat = new long[items.size()];
        long[] rows = new long[workers];
        int[] errors = new int[workers];
        Thread[] threads = new Thread[workers];
        long start = System.nanoTime();
        for (int t = 0; t < workers; t++) {
            final int me = t;
            threads[t] = new Thread(() -> {
                try (Session session = driver.session()) {
                    for (int i; (i = next.getAndIncrement()) < items.size(); ) {
                        Item it = items.get(i);
                        long t0 = System.nanoTime();
                        try {
                            Result res = session.run(it.q().cypher(), it.params());
                            while (res.hasNext()) { res.next(); rows[me]++; }
                        } catch (RuntimeException e) {
                            if (errors[me]++ == 0) System.err.println("Q" + it.q().q() + ": " + e.getMessage());
                        }
                        lat[i] = System.nanoTime() - t0;
                    }
                }
            });
            threads[t].start();
        }
        for (Thread th : threads) th.join();
        double wall = (System.nanoTime() - start) / 1e9;
        return new Outcome(wall, lat, Arrays.stream(rows).sum(), Arrays.stream(errors).sum());
    }

    static double pct(long[] lat, double p) {
        long[] s = lat.clone();
        Arrays.sort(s);
        return s.length == 0 ? 0 : s[(int) (p * (s.length - 1))] / 1e6;
    }

    static Set<Integer> selected(String spec) {
        Set<Integer> out = new HashSet<>();
        for (String part : spec.split(",")) {
            if (part.isEmpty()) continue;
            String[] lohi = part.split("-");
            int a = Integer.parseInt(lohi[0].replace("Q", ""));
            int b = lohi.length > 1 ? Integer.parseInt(lohi[1].replace("Q", "")) : a;
            for (int i = a; i <= b; i++) out.add(i);
        }
        return out;
    }

    static void report(String tag, String name, int count, Outcome o) {
        System.out.printf("%-3s %-34s %9.1f qps  p50 %8.3f ms  p99 %8.3f ms  rows %8d  errors %d%n",
            tag, name, count / o.wallS(), pct(o.latNanos(), 0.5), pct(o.latNanos(), 0.99), o.rows(), o.errors());
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>(Map.of("uri", "bolt://127.0.0.1:7687", "workers", "12",
            "count", "600", "nodes", "10000", "queries", "1-23", "seed", "1", "workloads", "", "user", "", "password", ""));
        for (int i = 0; i + 1 < argv.length; i += 2) {
            String k = argv[i].replaceFirst("^-+", "");
            if (!a.containsKey(k)) { System.err.println("unknown flag " + argv[i]); System.exit(2); }
            a.put(k, argv[i + 1]);
        }
        int workers = Integer.parseInt(a.get("workers")), count = Integer.parseInt(a.get("count"));
        int nodes = Integer.parseInt(a.get("nodes"));
        long seed = Long.parseLong(a.get("seed"));
        AuthToken auth = a.get("user").isEmpty() ? AuthTokens.none() : AuthTokens.basic(a.get("user"), a.get("password"));
        Config config = Config.builder().withMaxConnectionPoolSize(workers * 2)
            .withLogging(Logging.none()).build();
        try (Driver driver = GraphDatabase.driver(a.get("uri"), auth, config)) {
            driver.verifyConnectivity();
            System.out.printf("# java-mgbench uri=%s workers=%d count=%d nodes=%d%n", a.get("uri"), workers, count, nodes);
            if (!a.get("workloads").isEmpty()) {
                String[] ws = a.get("workloads").split(",");
                for (int i = 0; i < ws.length; i++) {
                    int[] w = MIXES.get(ws[i]);
                    if (w == null) { System.err.println("unknown workload " + ws[i] + " (W1..W4)"); System.exit(2); }
                    Random r = new Random(seed * 1000 + 100 + i);
                    run(driver, realistic(w, r, count, nodes), workers);
                    report(ws[i], "realistic", count, run(driver, realistic(w, r, count, nodes), workers));
                }
                return;
            }
            Set<Integer> sel = selected(a.get("queries"));
            for (Q q : QUERIES) {
                if (!sel.contains(q.q())) continue;
                Random r = new Random(seed * 1000 + q.q());
                List<Item> warm = new ArrayList<>(), meas = new ArrayList<>();
                for (int i = 0; i < count; i++) warm.add(new Item(q, params(q, r, nodes)));
                for (int i = 0; i < count; i++) meas.add(new Item(q, params(q, r, nodes)));
                run(driver, warm, workers);
                report("Q" + q.q(), q.name(), count, run(driver, meas, workers));
            }
        }
    }
}
