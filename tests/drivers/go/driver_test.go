// Package drivertest runs Arbor with the official Neo4j Go driver, over a real `arbor serve` process:
// connectivity, value types both ways (the driver's dbtype temporal and spatial types), graph entities,
// explicit and managed transactions (retried after a write conflict), Neo4j error codes, summaries and
// counters, and streaming a large result with a small fetch size. The binary is $ARBOR_BIN (default
// target/release/arbor from the repository root).
package drivertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
	// The zone database inside the test binary: zoned datetimes must not depend on the machine.
	_ "time/tzdata"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"
)

var driver neo4j.DriverWithContext

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin := os.Getenv("ARBOR_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "target", "release", "arbor")
	}
	data, err := os.MkdirTemp("", "arbor-go-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(data)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	addr := l.Addr().String()
	l.Close()
	server := exec.Command(bin, "serve", "--data", data, "--listen", addr)
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot start arbor:", err)
		return 1
	}
	defer func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		_ = server.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "arbor serve did not start listening")
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
	driver, err = neo4j.NewDriverWithContext("bolt://"+addr, neo4j.NoAuth())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer driver.Close(context.Background())
	return m.Run()
}

func query(t *testing.T, cypher string, params map[string]any) *neo4j.EagerResult {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), driver, cypher, params, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("%s: %v", cypher, err)
	}
	return res
}

func echo(t *testing.T, v any) any {
	t.Helper()
	res := query(t, "RETURN $x AS x", map[string]any{"x": v})
	got, _ := res.Records[0].Get("x")
	return got
}

func TestConnectivityAndServerInfo(t *testing.T) {
	ctx := context.Background()
	if err := driver.VerifyConnectivity(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := driver.GetServerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.ProtocolVersion().Major < 5 {
		t.Fatalf("protocol %v", info.ProtocolVersion())
	}
}

func TestScalarsRoundTrip(t *testing.T) {
	for _, v := range []any{int64(0), int64(-129), int64(1) << 40, int64(9223372036854775807),
		1.5, "ünïcødé 🌳", true, false, nil, []byte{0, 255, 16}} {
		got := echo(t, v)
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", v) {
			t.Errorf("sent %#v, got %#v", v, got)
		}
	}
	list := echo(t, []any{int64(1), "two", []any{3.0, nil}}).([]any)
	if len(list) != 3 || list[1] != "two" {
		t.Errorf("list came back as %#v", list)
	}
	m := echo(t, map[string]any{"a": int64(1), "b": map[string]any{"c": "d"}}).(map[string]any)
	if m["a"] != int64(1) || m["b"].(map[string]any)["c"] != "d" {
		t.Errorf("map came back as %#v", m)
	}
}

func TestTemporalAndSpatial(t *testing.T) {
	d := dbtype.Date(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC))
	if got := echo(t, d).(dbtype.Date); got.String() != d.String() {
		t.Errorf("date: %v", got)
	}
	stockholm, err := time.LoadLocation("Europe/Stockholm")
	if err != nil {
		t.Fatal(err)
	}
	zoned := time.Date(2021, 6, 7, 8, 9, 10, 11, stockholm)
	got := echo(t, zoned).(time.Time)
	if !got.Equal(zoned) || got.Location().String() != "Europe/Stockholm" {
		t.Errorf("zoned datetime: %v (%v)", got, got.Location())
	}
	dur := dbtype.Duration{Months: 14, Days: 3, Seconds: 7200, Nanos: 5}
	if gotDur := echo(t, dur).(dbtype.Duration); gotDur != dur {
		t.Errorf("duration: %#v", gotDur)
	}
	res := query(t, "RETURN point({x: 1.5, y: 2.5}) AS p, localdatetime('2015-07-21T10:00:00') AS l", nil)
	p, _ := res.Records[0].Get("p")
	if pt := p.(dbtype.Point2D); pt.X != 1.5 || pt.Y != 2.5 || pt.SpatialRefId != 7203 {
		t.Errorf("point: %#v", pt)
	}
	l, _ := res.Records[0].Get("l")
	if lt := l.(dbtype.LocalDateTime); lt.Time().Hour() != 10 {
		t.Errorf("localdatetime: %v", lt)
	}
}

func TestEntitiesAndCounters(t *testing.T) {
	res := query(t, "CREATE p = (a:GoPerson {name: 'Ada'})-[r:KNOWS {since: 1833}]->(b:GoPerson {name: 'Charles'}) RETURN a, r, b, p", nil)
	rec := res.Records[0]
	a, _, _ := neo4j.GetRecordValue[neo4j.Node](rec, "a")
	r, _, _ := neo4j.GetRecordValue[neo4j.Relationship](rec, "r")
	b, _, _ := neo4j.GetRecordValue[neo4j.Node](rec, "b")
	p, _, _ := neo4j.GetRecordValue[neo4j.Path](rec, "p")
	if len(a.Labels) != 1 || a.Labels[0] != "GoPerson" || a.Props["name"] != "Ada" {
		t.Errorf("node a: %#v", a)
	}
	if r.Type != "KNOWS" || r.StartElementId != a.ElementId || r.EndElementId != b.ElementId || r.Props["since"] != int64(1833) {
		t.Errorf("relationship: %#v", r)
	}
	if len(p.Nodes) != 2 || len(p.Relationships) != 1 {
		t.Errorf("path: %#v", p)
	}
	c := res.Summary.Counters()
	if c.NodesCreated() != 2 || c.RelationshipsCreated() != 1 || c.PropertiesSet() != 3 || c.LabelsAdded() != 2 {
		t.Errorf("counters: nodes %d rels %d props %d labels %d", c.NodesCreated(), c.RelationshipsCreated(), c.PropertiesSet(), c.LabelsAdded())
	}
	if res.Summary.StatementType() != neo4j.StatementTypeReadWrite {
		t.Errorf("statement type %v", res.Summary.StatementType())
	}
}

func TestExplicitTransactionRollbackAndCommit(t *testing.T) {
	ctx := context.Background()
	s := driver.NewSession(ctx, neo4j.SessionConfig{})
	defer s.Close(ctx)
	tx, err := s.BeginTransaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Run(ctx, "CREATE (:GoTx {k: 'rolled back'})", nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	tx, _ = s.BeginTransaction(ctx)
	if _, err := tx.Run(ctx, "CREATE (:GoTx {k: 'kept'})", nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res := query(t, "MATCH (n:GoTx) RETURN collect(n.k) AS ks", nil)
	ks, _ := res.Records[0].Get("ks")
	if fmt.Sprint(ks) != "[kept]" {
		t.Errorf("after rollback and commit: %v", ks)
	}
}

func TestErrorCodes(t *testing.T) {
	cases := map[string]string{
		"MATCH (n RETURN n": "Neo.ClientError.Statement.SyntaxError",
		"RETURN 1 / 0":      "Neo.ClientError.Statement.ArithmeticError",
		"RETURN $missing":   "Neo.ClientError.Statement.ParameterMissing",
	}
	for cypher, code := range cases {
		_, err := neo4j.ExecuteQuery(context.Background(), driver, cypher, nil, neo4j.EagerResultTransformer)
		var ne *neo4j.Neo4jError
		if !errors.As(err, &ne) || ne.Code != code {
			t.Errorf("%s: want %s, got %v", cypher, code, err)
		}
	}
	if v := echo(t, int64(7)); v != int64(7) {
		t.Errorf("driver unusable after errors: %v", v)
	}
}

func TestManagedTransactionsRetryConflicts(t *testing.T) {
	ctx := context.Background()
	query(t, "CREATE (:GoCounter {v: 0})", nil)
	const workers, perWorker = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := driver.NewSession(ctx, neo4j.SessionConfig{})
			defer s.Close(ctx)
			for i := 0; i < perWorker; i++ {
				_, err := s.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
					r, err := tx.Run(ctx, "MATCH (c:GoCounter) RETURN c.v AS v", nil)
					if err != nil {
						return nil, err
					}
					rec, err := r.Single(ctx)
					if err != nil {
						return nil, err
					}
					v, _ := rec.Get("v")
					_, err = tx.Run(ctx, "MATCH (c:GoCounter) SET c.v = $v", map[string]any{"v": v.(int64) + 1})
					return nil, err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	res := query(t, "MATCH (c:GoCounter) RETURN c.v AS v", nil)
	if v, _ := res.Records[0].Get("v"); v != int64(workers*perWorker) {
		t.Errorf("lost updates: counter is %v", v)
	}
}

func TestStreamingWithSmallFetchSize(t *testing.T) {
	ctx := context.Background()
	s := driver.NewSession(ctx, neo4j.SessionConfig{FetchSize: 300})
	defer s.Close(ctx)
	r, err := s.Run(ctx, "UNWIND range(0, 29999) AS i RETURN i", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for r.Next(ctx) {
		if v, _ := r.Record().Get("i"); v != n {
			t.Fatalf("row %d is %v", n, v)
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 30000 {
		t.Fatalf("got %d rows", n)
	}
}
