package e2e

// Issue 21, eleventh round: conditions true for every row by the range of
// an expression of a column (engine/mysql tautrange.go), judged by what
// MariaDB 10.11 does, as TestMySQLFolding10JudgedByEffect does: through
// sqlfwd each DELETE is blocked, absent from the general log and the table
// keeps its rows; straight to MariaDB it deletes every row (a negative id
// included: -3 % 2 is -1). The filtered faces delete what they name.

import (
	"strings"
	"testing"
)

func TestMySQLFolding11JudgedByEffect(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	fw := myDB(t, my, d.addr, true)
	suffix := randomHex(t)
	marker := "f11_attack_" + suffix
	tbl := "f11_t_" + suffix
	reset, count := myVictim(t, direct, tbl, "id int not null primary key, a int, name varchar(20)", "(-3, 1, 'ann'), (2, NULL, 'bob'), (3, 3, ' cy')")

	t.Run("true for every row", func(t *testing.T) {
		reset()
		for i, w := range []string{
			"abs(id) >= id", "abs(id) >= -id", "id * id >= 0", "pow(id, 2) >= 0",
			"id % 2 < 2", "id % -2 > -2", "mod(id, 3) > -3", "nullif(id, id) is null",
			"concat(id, 'x') <> ''", "greatest(id, 5) >= id", "least(id, 5) <= id",
		} {
			q := "delete from " + tbl + " where " + w
			_, err := fw.Exec(q + " /* " + marker + " */")
			wantMyBlocked(t, q, err, "no-unfiltered-writes")
			if n := count(); n != 3 {
				t.Errorf("after the blocked %s the table holds %d rows, want 3", q, n)
				reset()
			}
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
			if n := count(); n != 0 {
				t.Fatalf("control %d: %s directly left %d rows: it did not delete every row", i, q, n)
			}
			reset()
		}
		mustNotReach(t, my, marker)
	})

	t.Run("filtered faces", func(t *testing.T) {
		reset()
		ok := "f11_ok_" + suffix
		for w, want := range map[string]int{
			"id % 2 = 0":                 2, // 2
			"abs(id) > id":               2, // -3
			"id % 2 < 1":                 1, // -3 (-1) and 2 (0)
			"id * id > 4":                1, // -3 and 3
			"nullif(id, id) is not null": 3,
		} {
			q := "delete from " + tbl + " where " + w
			if _, err := fw.Exec(q + " /* " + ok + " */"); err != nil {
				t.Errorf("%s through sqlfwd: %v", q, err)
			}
			if n := count(); n != want {
				t.Errorf("%s through sqlfwd left %d rows, want %d", q, n, want)
			}
			reset()
		}
		if strings.Count(generalLog(t, my), ok) < 5 {
			t.Errorf("the allowed filtered deletes are not all in the general log")
		}
	})
}
