// Command mgbench drives mgBench's 23 Pokec queries through the official Neo4j Go driver with
// N concurrent workers (isolated workload, hot: one warm-up pass, then one measured pass per
// query) and prints throughput and latency per query. It measures a server the way a Go
// application sees it: the client's own cost (record decoding, the driver's pool) is included.
//
//	go run ./mgbench -uri bolt://127.0.0.1:7687 -workers 12 -count 600 -nodes 10000
//
// The data set must already be loaded (e.g. by `arbor bench mgbench --uri ...`); parameters
// are drawn from a seeded stream, identical for every server given the same flags.
//
// With -workloads W1,W2,W3,W4 it runs mgBench's realistic mixes instead: each query of the list
// is a write (Q20, Q21), read (Q23), update (Q22) or analytical (Q5-Q19) query, the type drawn
// with benchgraph's weights (W1 30/40/10/20, W2 30/70, W3 50/50, W4 70/30) and the query
// uniformly within its type. The list comes from this program's own seeded stream (Go's
// generator, not CPython's), so it is identical for every server, not identical to mgBench's.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

type param int

const (
	pNone param = iota
	pID
	pID10
	pFromTo
)

type query struct {
	q      int
	name   string
	cypher string
	params param
}

var queries = []query{
	{1, "aggregate", "MATCH (n:User) RETURN n.age, COUNT(*)", pNone},
	{2, "aggregate_count", "MATCH (n) RETURN count(n), count(n.age)", pNone},
	{3, "aggregate_with_filter", "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)", pNone},
	{4, "min_max_avg", "MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)", pNone},
	{5, "expansion_1", "MATCH (s:User {id: $id})-->(n:User) RETURN n.id", pID},
	{6, "expansion_1_with_filter", "MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id", pID},
	{7, "expansion_2", "MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id", pID},
	{8, "expansion_2_with_filter", "MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", pID},
	{9, "expansion_3", "MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id", pID},
	{10, "expansion_3_with_filter", "MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", pID},
	{11, "expansion_4", "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id", pID},
	{12, "expansion_4_with_filter", "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", pID},
	{13, "neighbours_2", "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id", pID},
	{14, "neighbours_2_with_filter", "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id", pID},
	{15, "neighbours_2_with_data", "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n", pID},
	{16, "neighbours_2_with_data_and_filter", "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n", pID},
	{17, "pattern_cycle", "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2", pID},
	{18, "pattern_long", "MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1", pID},
	{19, "pattern_short", "MATCH (n:User {id: $id})-[e]->(m) RETURN m LIMIT 1", pID},
	{20, "single_edge_write", "MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e", pFromTo},
	{21, "single_vertex_write", "CREATE (n:UserTemp {id : $id}) RETURN n", pID10},
	{22, "single_vertex_property_update", "MATCH (n:User {id: $id}) SET n.property = -1", pID},
	{23, "single_vertex_read", "MATCH (n:User {id : $id}) RETURN n", pID},
}

type result struct {
	Q       int     `json:"q"`
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	QPS     float64 `json:"qps"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	Rows    int64   `json:"rows"`
	Errors  int     `json:"errors"`
	WallSec float64 `json:"wall_s"`
}

func paramsFor(q query, r *rand.Rand, nodes int) map[string]any {
	switch q.params {
	case pID:
		return map[string]any{"id": int64(r.Intn(nodes) + 1)}
	case pID10:
		return map[string]any{"id": int64(r.Intn(nodes*10) + 1)}
	case pFromTo:
		from := r.Intn(nodes) + 1
		to := from
		for to == from {
			to = r.Intn(nodes) + 1
		}
		return map[string]any{"from": int64(from), "to": int64(to)}
	}
	return map[string]any{}
}

// run executes one query with each parameter map of ps, spread over workers.
func run(ctx context.Context, drv neo4j.DriverWithContext, q query, ps []map[string]any, workers int) (time.Duration, []time.Duration, int64, int) {
	items := make([]item, len(ps))
	for i, p := range ps {
		items[i] = item{q, p}
	}
	return runMix(ctx, drv, items, workers)
}

// kindOf is mgBench's query type: 0 write, 1 read, 2 update, 3 analytical, -1 aggregate.
func kindOf(q int) int {
	switch {
	case q == 20 || q == 21:
		return 0
	case q == 23:
		return 1
	case q == 22:
		return 2
	case q >= 5 && q <= 19:
		return 3
	}
	return -1
}

// realisticMixes are benchgraph's W1..W4 weights (write, read, update, analytical).
var realisticMixes = map[string][4]int{
	"W1": {30, 40, 10, 20},
	"W2": {30, 70, 0, 0},
	"W3": {50, 50, 0, 0},
	"W4": {70, 30, 0, 0},
}

type item struct {
	q      query
	params map[string]any
}

// realisticList draws count queries of one mix: a type by weight, then a query of that type.
func realisticList(weights [4]int, r *rand.Rand, count, nodes int) []item {
	var byKind [4][]query
	for _, q := range queries {
		if k := kindOf(q.q); k >= 0 {
			byKind[k] = append(byKind[k], q)
		}
	}
	total := weights[0] + weights[1] + weights[2] + weights[3]
	out := make([]item, 0, count)
	for len(out) < count {
		x := r.Intn(total)
		k := 0
		for x >= weights[k] {
			x -= weights[k]
			k++
		}
		q := byKind[k][r.Intn(len(byKind[k]))]
		out = append(out, item{q, paramsFor(q, r, nodes)})
	}
	return out
}

// runMix executes a list of queries over workers, each worker with its own session: wall time,
// latencies, rows and errors.
func runMix(ctx context.Context, drv neo4j.DriverWithContext, items []item, workers int) (time.Duration, []time.Duration, int64, int) {
	var next int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, len(items))
	var rows int64
	errs := 0
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := drv.NewSession(ctx, neo4j.SessionConfig{})
			defer sess.Close(ctx)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if int(i) >= len(items) {
					return
				}
				it := items[i]
				t := time.Now()
				n, err := runOne(ctx, sess, it.q, it.params)
				d := time.Since(t)
				mu.Lock()
				lat = append(lat, d)
				rows += n
				if err != nil {
					if errs == 0 {
						fmt.Fprintf(os.Stderr, "Q%d: %v\n", it.q.q, err)
					}
					errs++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return time.Since(start), lat, rows, errs
}

// runOne runs one query and consumes every record.
func runOne(ctx context.Context, sess neo4j.SessionWithContext, q query, params map[string]any) (int64, error) {
	res, err := sess.Run(ctx, q.cypher, params)
	if err != nil {
		return 0, err
	}
	var n int64
	for res.Next(ctx) {
		n++
	}
	return n, res.Err()
}

func pct(l []time.Duration, p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	i := int(p * float64(len(l)-1))
	return float64(l[i].Microseconds()) / 1000
}

func selected(spec string) map[int]bool {
	out := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		if part == "" {
			continue
		}
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(strings.TrimPrefix(lo, "Q"))
		b := a
		if ok {
			b, _ = strconv.Atoi(strings.TrimPrefix(hi, "Q"))
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out
}

func main() {
	uri := flag.String("uri", "bolt://127.0.0.1:7687", "server")
	user := flag.String("user", "", "user (empty: no auth)")
	pass := flag.String("password", "", "password")
	workers := flag.Int("workers", 12, "concurrent workers")
	count := flag.Int("count", 600, "queries per measured pass (and per warm-up pass)")
	nodes := flag.Int("nodes", 10000, "number of :User nodes (parameters draw ids from 1..nodes)")
	qs := flag.String("queries", "1-23", "queries, e.g. 1-4,9,23")
	seed := flag.Int64("seed", 1, "parameter stream seed")
	label := flag.String("label", "", "name of the server in the output")
	jsonOut := flag.String("json", "", "write results as JSON here")
	workloads := flag.String("workloads", "", "realistic mixes instead of single queries, e.g. W1,W2,W3,W4")
	flag.Parse()

	ctx := context.Background()
	auth := neo4j.NoAuth()
	if *user != "" {
		auth = neo4j.BasicAuth(*user, *pass, "")
	}
	drv, err := neo4j.NewDriverWithContext(*uri, auth, func(c *neo4j.Config) { c.MaxConnectionPoolSize = *workers * 2 })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer drv.Close(ctx)
	if err := drv.VerifyConnectivity(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sel := selected(*qs)
	var results []result
	fmt.Printf("# go-mgbench %s uri=%s workers=%d count=%d nodes=%d\n", *label, *uri, *workers, *count, *nodes)
	if *workloads != "" {
		sel = map[int]bool{}
		for i, w := range strings.Split(*workloads, ",") {
			weights, ok := realisticMixes[w]
			if !ok {
				fmt.Fprintf(os.Stderr, "unknown workload %q (W1..W4)\n", w)
				os.Exit(2)
			}
			r := rand.New(rand.NewSource(*seed*1000 + 100 + int64(i)))
			runMix(ctx, drv, realisticList(weights, r, *count, *nodes), *workers)
			wall, lat, rows, errs := runMix(ctx, drv, realisticList(weights, r, *count, *nodes), *workers)
			res := result{Q: 0, Name: w, Count: *count, QPS: float64(*count) / wall.Seconds(),
				P50Ms: pct(lat, 0.5), P99Ms: pct(lat, 0.99), Rows: rows, Errors: errs, WallSec: wall.Seconds()}
			results = append(results, res)
			fmt.Printf("%-3s %-34s %9.1f qps  p50 %8.3f ms  p99 %8.3f ms  rows %8d  errors %d\n",
				w, "realistic", res.QPS, res.P50Ms, res.P99Ms, res.Rows, res.Errors)
		}
	}
	for _, q := range queries {
		if !sel[q.q] {
			continue
		}
		r := rand.New(rand.NewSource(*seed*1000 + int64(q.q)))
		warm := make([]map[string]any, *count)
		meas := make([]map[string]any, *count)
		for i := range warm {
			warm[i] = paramsFor(q, r, *nodes)
		}
		for i := range meas {
			meas[i] = paramsFor(q, r, *nodes)
		}
		run(ctx, drv, q, warm, *workers)
		wall, lat, rows, errs := run(ctx, drv, q, meas, *workers)
		res := result{Q: q.q, Name: q.name, Count: *count, QPS: float64(*count) / wall.Seconds(),
			P50Ms: pct(lat, 0.5), P99Ms: pct(lat, 0.99), Rows: rows, Errors: errs, WallSec: wall.Seconds()}
		results = append(results, res)
		fmt.Printf("Q%-2d %-34s %9.1f qps  p50 %8.3f ms  p99 %8.3f ms  rows %8d  errors %d\n",
			res.Q, res.Name, res.QPS, res.P50Ms, res.P99Ms, res.Rows, res.Errors)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"label": *label, "uri": *uri, "workers": *workers, "count": *count, "results": results}, "", " ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
