package engine

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v5"
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

var benchSession = &Session{User: "app", Database: "bench", Application: "pgbench"}

func benchEngine(b *testing.B, cacheBytes int64) *Engine {
	b.Helper()
	e, err := New(DefaultPolicy(), Options{CacheBytes: cacheBytes})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkVerdictRepeatedPointSelect(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	e.JudgePostgres(sql, benchSession)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.JudgePostgres(sql, benchSession); v.Action != ActionAllow {
			b.Fatal(v)
		}
	}
}

func BenchmarkVerdictRepeatedPointSelectParallel(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	e.JudgePostgres(sql, benchSession)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.JudgePostgres(sql, benchSession)
		}
	})
}

func benchCold(b *testing.B, text string) {
	e := benchEngine(b, -1)
	sql := []byte(text)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.JudgePostgres(sql, benchSession); v.Action != ActionAllow {
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
