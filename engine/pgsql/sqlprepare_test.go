package pgsql

import (
	"reflect"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestSQLOps(t *testing.T) {
	type op struct {
		Kind  engine.SQLOpKind
		Name  string
		Stmt  int
		Inner string
		Hold  bool
	}
	tests := []struct {
		name, sql string
		want      []op
	}{
		{"prepare", "PREPARE del AS DELETE FROM t", []op{{engine.SQLPrepare, "del", 0, "DELETE FROM t", false}}},
		{"prepare with types", "prepare Q1 (int, text) as select $1::int, $2", []op{{engine.SQLPrepare, "q1", 0, "select $1::int, $2", false}}},
		{"prepare quoted name", `PREPARE "As" (numeric(10,2)) AS UPDATE t SET a = $1 WHERE id = 1`, []op{{engine.SQLPrepare, "As", 0, "UPDATE t SET a = $1 WHERE id = 1", false}}},
		{"prepare comment", "PREPARE /* AS */ x -- AS\n AS /*c*/ DELETE FROM t;", []op{{engine.SQLPrepare, "x", 0, "/*c*/ DELETE FROM t", false}}},
		{"second statement", "select 1; prepare x as delete from t; execute x", []op{{engine.SQLPrepare, "x", 1, "delete from t", false}, {engine.SQLExecute, "x", 2, "", false}}},
		{"execute args", "EXECUTE x(1, 'a')", []op{{engine.SQLExecute, "x", 0, "", false}}},
		{"explain analyze execute", "EXPLAIN (ANALYZE) EXECUTE x", []op{{engine.SQLExecute, "x", 0, "", false}}},
		{"explain execute runs nothing", "EXPLAIN EXECUTE x", nil},
		{"create table as execute", "CREATE TABLE t2 AS EXECUTE x", []op{{engine.SQLExecute, "x", 0, "", false}}},
		{"deallocate", "DEALLOCATE PREPARE x", []op{{engine.SQLDeallocate, "x", 0, "", false}}},
		{"deallocate all", "DEALLOCATE ALL", []op{{engine.SQLDeallocate, "", 0, "", false}}},
		{"declare", "DECLARE c CURSOR FOR SELECT * FROM t", []op{{engine.SQLDeclare, "c", 0, "SELECT * FROM t", false}}},
		{"declare hold", "declare c binary no scroll cursor with hold for values (1)", []op{{engine.SQLDeclare, "c", 0, "values (1)", true}}},
		{"fetch", "FETCH FORWARD 10 FROM c", []op{{engine.SQLFetch, "c", 0, "", false}}},
		{"move", "MOVE LAST IN c", []op{{engine.SQLFetch, "c", 0, "", false}}},
		{"close", "CLOSE c", []op{{engine.SQLClose, "c", 0, "", false}}},
		{"close all", "CLOSE ALL", []op{{engine.SQLClose, "", 0, "", false}}},
		{"discard all", "DISCARD ALL", []op{{engine.SQLDiscardAll, "", 0, "", false}}},
		{"discard plans", "DISCARD PLANS", nil},
		{"plain select", "SELECT 1", nil},
	}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := e.Judge([]byte(tt.sql), nil)
			if v.SessionOps != (tt.want != nil) {
				t.Errorf("SessionOps = %v for %q", v.SessionOps, tt.sql)
			}
			var got []op
			ops, text := e.SQLOps([]byte(tt.sql), nil)
			if string(text) != tt.sql {
				t.Errorf("SQLOps text %q, want %q", text, tt.sql)
			}
			for _, o := range ops {
				got = append(got, op{o.Kind, o.Name, o.Stmt, tt.sql[o.InnerLo:o.InnerHi], o.Hold})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SQLOps(%q)\n got %+v\nwant %+v", tt.sql, got, tt.want)
			}
		})
	}
}

// The operations come with the cached facts: a second judgement of the same
// text (a cache hit) reports them too, and a cache-less engine as well.
func TestSQLOpsCached(t *testing.T) {
	for _, size := range []int64{0, -1} {
		e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: size})
		if err != nil {
			t.Fatal(err)
		}
		sql := []byte("PREPARE x AS SELECT 1")
		for i := 0; i < 3; i++ {
			ops, _ := e.SQLOps(sql, nil)
			if v := e.Judge(sql, nil); !v.SessionOps || len(ops) != 1 {
				t.Fatalf("cache %d, round %d: SessionOps %v, ops %v", size, i, v.SessionOps, ops)
			}
		}
	}
}
