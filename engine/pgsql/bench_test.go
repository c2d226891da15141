package pgsql

import (
	"fmt"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// Benchmarks report costs; nothing here asserts a timing.

const (
	benchPointSelect = "SELECT abalance FROM pgbench_accounts WHERE aid = 48213"
	bench3Join       = "SELECT a.aid, a.abalance, b.bbalance, t.tbalance, lower(a.filler) " +
		"FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid " +
		"JOIN pgbench_tellers t ON t.bid = b.bid " +
		"WHERE a.aid BETWEEN 100 AND 200 AND t.tid IN (1, 2, 3) AND coalesce(b.filler, '') <> 'x' " +
		"ORDER BY a.aid DESC, t.tid LIMIT 50"
)

var benchSession = &engine.Session{User: "app", Database: "bench", Application: "pgbench"}

func benchEngine(b *testing.B, cacheBytes int64) *engine.Engine {
	b.Helper()
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: cacheBytes})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkVerdictRepeatedPointSelect(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	e.Judge(sql, benchSession)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

func BenchmarkVerdictRepeatedPointSelectParallel(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	e.Judge(sql, benchSession)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Judge(sql, benchSession)
		}
	})
}

func benchCold(b *testing.B, text string) {
	e := benchEngine(b, -1)
	sql := []byte(text)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

func BenchmarkVerdictColdPointSelect(b *testing.B) { benchCold(b, benchPointSelect) }
func BenchmarkVerdictCold3Join(b *testing.B)       { benchCold(b, bench3Join) }

func benchBare(b *testing.B, text string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pg_query.Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareParsePointSelect(b *testing.B) { benchBare(b, benchPointSelect) }
func BenchmarkBareParse3Join(b *testing.B)       { benchBare(b, bench3Join) }

// BenchmarkWalk3Join isolates the tree walk from parsing.
func BenchmarkWalk3Join(b *testing.B) {
	tree, err := pg_query.Parse(bench3Join)
	if err != nil {
		b.Fatal(err)
	}
	var w walker
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range tree.Stmts {
			w.statement(s.GetStmt())
		}
	}
}

const bench6Join = "SELECT c.name, o.id, o.total, i.qty, p.title, s.name, w.city " +
	"FROM customers c JOIN orders o ON o.customer_id = c.id " +
	"JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id " +
	"JOIN suppliers s ON s.id = p.supplier_id JOIN warehouses w ON w.id = s.warehouse_id " +
	"LEFT JOIN regions r ON r.id = w.region_id " +
	"WHERE o.created_at > now() - interval '30 days' AND c.country IN ('DE', 'FR', 'IT') AND p.price BETWEEN 10 AND 500 " +
	"GROUP BY c.name, o.id, o.total, i.qty, p.title, s.name, w.city HAVING sum(i.qty) > 2 ORDER BY o.total DESC LIMIT 100"

func BenchmarkVerdictCold6Join(b *testing.B) { benchCold(b, bench6Join) }
func BenchmarkBareParse6Join(b *testing.B)   { benchBare(b, bench6Join) }

// manyRules builds a policy of n rules that a point select on
// pgbench_accounts does not match: table, function and kind rules, scoped
// and not, as a large operator policy would have.
func manyRules(b *testing.B, n int) *engine.Policy {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("rules:\n")
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, "  - {id: t%d, action: deny, match: {tables: [secret_%d], access: read}}\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "  - {id: f%d, action: deny, match: {functions: [evil_%d]}}\n", i, i)
		case 2:
			fmt.Fprintf(&sb, "  - {id: k%d, action: deny, users: [u%d], match: {kind: [ddl]}}\n", i, i)
		default:
			fmt.Fprintf(&sb, "  - {id: c%d, action: deny, match: {kind: [select], columns: [t%d.c%d]}}\n", i, i, i)
		}
	}
	p, err := engine.ParsePolicy([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkRules(b *testing.B) {
	for _, n := range []int{10, 1000} {
		p := manyRules(b, n)
		b.Run(fmt.Sprintf("hit/%d", n), func(b *testing.B) {
			e, _ := engine.New(p, Dialect, engine.Options{})
			sql := []byte(benchPointSelect)
			e.Judge(sql, benchSession)
			b.ReportAllocs()
			for b.Loop() {
				if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
					b.Fatal(v)
				}
			}
		})
		b.Run(fmt.Sprintf("cold/%d", n), func(b *testing.B) {
			e, _ := engine.New(p, Dialect, engine.Options{CacheBytes: -1})
			sql := []byte(benchPointSelect)
			b.ReportAllocs()
			for b.Loop() {
				if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
					b.Fatal(v)
				}
			}
		})
	}
}

// BenchmarkPathological reports how long the default policy takes to deny
// each pathological input (denied before parsing by the pre-parse limits).
func BenchmarkPathological(b *testing.B) {
	in := make([]string, 10000)
	for i := range in {
		in[i] = fmt.Sprint(i)
	}
	var joins strings.Builder
	joins.WriteString("SELECT * FROM t0")
	for i := 1; i < 50; i++ {
		fmt.Fprintf(&joins, " JOIN t%d ON t%d.id = t0.id", i, i)
	}
	cases := map[string]string{
		"in10k":    "SELECT * FROM t WHERE id IN (" + strings.Join(in, ",") + ")",
		"depth500": strings.Repeat("SELECT * FROM (", 500) + "SELECT 1" + strings.Repeat(") s", 500),
		"join50":   joins.String(),
	}
	for name, sql := range cases {
		b.Run(name, func(b *testing.B) {
			e := benchEngine(b, -1)
			q := []byte(sql)
			for b.Loop() {
				if v := e.Judge(q, benchSession); v.Action != engine.ActionDeny {
					b.Fatal(v)
				}
			}
		})
	}
}

// bulkInsert is an INSERT of rows rows shaped like the bench workloads'
// (integer, text, numeric), its values derived from n so that no two texts
// are equal.
func bulkInsert(rows, n int) []byte {
	var b strings.Builder
	b.WriteString("INSERT INTO bench_insert (id, name, amount) VALUES ")
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 'name-%d-%d', %d.%02d)", n*rows+i, n, i, i, n%100)
	}
	return []byte(b.String())
}

// BenchmarkBulkInsert analyses INSERTs of 10, 100 and 1,000 rows whose
// texts differ: "shape" through the shape cache (a hit after the second),
// "cold" without caches (a parse every time). It calls analyze, not
// Judge: the 64 texts repeat, and a repeated text would be answered
// by the exact cache.
func BenchmarkBulkInsert(b *testing.B) {
	for _, rows := range []int{10, 100, 1000} {
		texts := make([]string, 64)
		for i := range texts {
			texts[i] = string(bulkInsert(rows, i))
		}
		for _, mode := range []struct {
			name  string
			cache int64
		}{{"shape", 0}, {"cold", -1}} {
			b.Run(fmt.Sprintf("rows%d/%s", rows, mode.name), func(b *testing.B) {
				e := benchEngine(b, mode.cache)
				b.ReportAllocs()
				b.SetBytes(int64(len(texts[0])))
				i := 0
				for b.Loop() {
					if tf := e.Analyze(texts[i%len(texts)]); tf.ParseError || len(tf.Stmts) != 1 {
						b.Fatal("not analysed")
					}
					i++
				}
			})
		}
	}
}
