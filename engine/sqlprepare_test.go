package engine

import (
	"reflect"
	"testing"
)

func TestSQLOps(t *testing.T) {
	type op struct {
		Kind  SQLOpKind
		Name  string
		Stmt  int
		Inner string
		Hold  bool
	}
	tests := []struct {
		name, sql string
		want      []op
	}{
		{"prepare", "PREPARE del AS DELETE FROM t", []op{{SQLPrepare, "del", 0, "DELETE FROM t", false}}},
		{"prepare with types", "prepare Q1 (int, text) as select $1::int, $2", []op{{SQLPrepare, "q1", 0, "select $1::int, $2", false}}},
		{"prepare quoted name", `PREPARE "As" (numeric(10,2)) AS UPDATE t SET a = $1 WHERE id = 1`, []op{{SQLPrepare, "As", 0, "UPDATE t SET a = $1 WHERE id = 1", false}}},
		{"prepare comment", "PREPARE /* AS */ x -- AS\n AS /*c*/ DELETE FROM t;", []op{{SQLPrepare, "x", 0, "/*c*/ DELETE FROM t", false}}},
		{"second statement", "select 1; prepare x as delete from t; execute x", []op{{SQLPrepare, "x", 1, "delete from t", false}, {SQLExecute, "x", 2, "", false}}},
		{"execute args", "EXECUTE x(1, 'a')", []op{{SQLExecute, "x", 0, "", false}}},
		{"explain analyze execute", "EXPLAIN (ANALYZE) EXECUTE x", []op{{SQLExecute, "x", 0, "", false}}},
		{"explain execute runs nothing", "EXPLAIN EXECUTE x", nil},
		{"create table as execute", "CREATE TABLE t2 AS EXECUTE x", []op{{SQLExecute, "x", 0, "", false}}},
		{"deallocate", "DEALLOCATE PREPARE x", []op{{SQLDeallocate, "x", 0, "", false}}},
		{"deallocate all", "DEALLOCATE ALL", []op{{SQLDeallocate, "", 0, "", false}}},
		{"declare", "DECLARE c CURSOR FOR SELECT * FROM t", []op{{SQLDeclare, "c", 0, "SELECT * FROM t", false}}},
		{"declare hold", "declare c binary no scroll cursor with hold for values (1)", []op{{SQLDeclare, "c", 0, "values (1)", true}}},
		{"fetch", "FETCH FORWARD 10 FROM c", []op{{SQLFetch, "c", 0, "", false}}},
		{"move", "MOVE LAST IN c", []op{{SQLFetch, "c", 0, "", false}}},
		{"close", "CLOSE c", []op{{SQLClose, "c", 0, "", false}}},
		{"close all", "CLOSE ALL", []op{{SQLClose, "", 0, "", false}}},
		{"discard all", "DISCARD ALL", []op{{SQLDiscardAll, "", 0, "", false}}},
		{"discard plans", "DISCARD PLANS", nil},
		{"plain select", "SELECT 1", nil},
	}
	e, err := New(DefaultPolicy(), PostgreSQL, Options{})
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
		e, err := New(DefaultPolicy(), PostgreSQL, Options{CacheBytes: size})
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
