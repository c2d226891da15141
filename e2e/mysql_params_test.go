package e2e

// Conditions of parameters and constants only (DELETE FROM t WHERE ? = 1)
// are the same for every row: every row or none, by the values bound
// (engine bound.go, ParamWrite). Each case is run first on a direct
// connection inside a transaction that is rolled back, to show what
// MariaDB makes of it (every row, or none), then through sqlfwd: blocked
// when MariaDB would write every row, run (and writing nothing) when not.
// Proof by the general log (a blocked execution never reached MariaDB) and
// by the rows, counted on a direct connection.

import (
	"fmt"
	"strings"
	"testing"
)

// paramCase is a DELETE's condition, values bound to it, and whether
// MariaDB deletes every row with them (else none).
type paramCase struct {
	cond  string
	args  []any
	every bool
}

var paramCases = []paramCase{
	{"? = 1", []any{1}, true},
	{"? = 1", []any{0}, false},
	{"? = 1", []any{"1"}, true},
	{"? = 1", []any{" 1x"}, true},
	{"? = 1", []any{nil}, false},
	{"? > 0", []any{7}, true},
	{"? > 0", []any{-7}, false},
	{"? > 0", []any{0.5}, true},
	{"? IS NOT NULL", []any{0}, true},
	{"? IS NOT NULL", []any{nil}, false},
	{"IF(?, 1, 0)", []any{3}, true},
	{"IF(?, 1, 0)", []any{0}, false},
	{"? LIKE ?", []any{"abc", "a%"}, true},
	{"? LIKE ?", []any{"abc", "b%"}, false},
	{"? OR id = 5", []any{1}, true}, // a bare arm: no-tautology (bound.go decides it first)
	{"id = 5 OR ? = 1", []any{1}, true},
	{"id = 5 OR ? = 1", []any{2}, false},
	{"(? + 0) = 1", []any{1}, true},
	{"COALESCE(?, 1)", []any{nil}, true},
	{"COALESCE(?, 1)", []any{0}, false},
	{"? IN (1, 2)", []any{2}, true},
	{"? IN (1, 2)", []any{3}, false},
	{"? <> ?", []any{1, 2}, true},
	{"? <> ?", []any{1, 1}, false},
	{"? = 'A'", []any{"a"}, true}, // the default collation has no case
	{"name LIKE ?", []any{"%"}, true},
	{"name LIKE ?", []any{"zz%"}, false},
	{"? IS NULL OR id = ?", []any{nil, nil}, true},
	{"? IS NULL OR id = ?", []any{5, 5}, false},
	{"EXISTS (SELECT 1 FROM DUAL WHERE ? = 1)", []any{1}, true},
	{"id = id + ?", []any{0}, true},
	{"id = id + ?", []any{1}, false},
}

func TestMySQLParamConditions(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	m := randomHex(t)
	table := "e2e_params_" + m
	direct := myDB(t, my, my.addr(), false)
	if _, err := direct.Exec("create table " + table + " (id int, name varchar(20)) engine=InnoDB"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	if _, err := direct.Exec("insert into " + table + " values (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		t.Helper()
		var n int
		if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stmt := func(i int, c paramCase) string {
		return fmt.Sprintf("DELETE FROM %s WHERE %s /* pc%d_%s */", table, c.cond, i, m)
	}

	// What MariaDB makes of each: every row or none.
	for i, c := range paramCases {
		tx, err := direct.Begin()
		if err != nil {
			t.Fatal(err)
		}
		res, err := tx.Exec(stmt(i, c), c.args...)
		if err != nil {
			t.Fatalf("direct %s %v: %v", c.cond, c.args, err)
		}
		n, _ := res.RowsAffected()
		_ = tx.Rollback()
		if want := map[bool]int64{true: 3, false: 0}[c.every]; n != want {
			t.Errorf("MariaDB: DELETE ... WHERE %s with %v deletes %d rows, the case says %d", c.cond, c.args, n, want)
		}
	}
	if n := rows(); n != 3 {
		t.Fatalf("rows after the rolled-back checks: %d", n)
	}

	// Through sqlfwd, binary protocol (no interpolation): the values read.
	db := myDB(t, my, d.addr, false)
	db.SetMaxOpenConns(1)
	for i, c := range paramCases {
		_, err := db.Exec(stmt(i, c), c.args...)
		if c.every {
			rule := "no-unfiltered-writes"
			if strings.HasPrefix(c.cond, "? OR") {
				rule = "no-tautology"
			}
			wantMyBlocked(t, fmt.Sprintf("DELETE ... WHERE %s with %v", c.cond, c.args), err, rule)
		} else if err != nil {
			t.Errorf("DELETE ... WHERE %s with %v: %v, want it run (it deletes nothing)", c.cond, c.args, err)
		}
	}
	if n := rows(); n != 3 {
		t.Errorf("rows after the binary executions: %d, want 3", n)
	}
	// a filter by the row stays one
	if _, err := db.Exec("DELETE FROM "+table+" WHERE id = ? /* pcfilter_"+m+" */", 3); err != nil {
		t.Errorf("DELETE ... WHERE id = ?: %v", err)
	}
	if n := rows(); n != 2 {
		t.Errorf("rows after DELETE ... WHERE id = 3: %d, want 2", n)
	}

	// SQL-level: EXECUTE ... USING a literal, a variable, an expression;
	// EXECUTE IMMEDIATE ... USING.
	r := dialRaw(t, d.addr)
	r.write(r.handshake(my.User, "", my.Database, 45))
	r.auth("")
	ps := "ps_" + m
	q := "DELETE FROM " + table + " WHERE ? = 1 /* pcsql_" + m + " */"
	if got := r.query("PREPARE " + ps + " FROM '" + q + "'"); got != "OK" {
		t.Fatalf("PREPARE: %q", got)
	}
	r.query("SET @t = 1, @f = 0")
	blocked := []string{"1", "'1'", "@t", "@f", "2 - 1", "(SELECT 1)"} // @f: its value is not known to sqlfwd
	for _, u := range blocked {
		wantRawBlocked(t, "EXECUTE USING "+u, r.query("EXECUTE "+ps+" USING "+u), "no-unfiltered-writes")
	}
	for _, u := range []string{"0", "100", "NULL", "'abc'", "-1"} {
		if got := r.query("EXECUTE " + ps + " USING " + u); !strings.HasPrefix(got, "OK") {
			t.Errorf("EXECUTE USING %s: %q, want it run (it deletes nothing)", u, got)
		}
	}
	wantRawBlocked(t, "EXECUTE IMMEDIATE ... USING 1", r.query("EXECUTE IMMEDIATE '"+q+"' USING 1"), "no-unfiltered-writes")
	if got := r.query("EXECUTE IMMEDIATE '" + q + "' USING 0"); !strings.HasPrefix(got, "OK") {
		t.Errorf("EXECUTE IMMEDIATE ... USING 0: %q, want it run", got)
	}
	if n := rows(); n != 2 {
		t.Errorf("rows after the SQL-level executions: %d, want 2", n)
	}

	log := generalLog(t, my)
	for i, c := range paramCases {
		lines := linesWith(log, fmt.Sprintf("pc%d_%s", i, m))
		// the direct transaction's run, and sqlfwd's when not blocked
		want := 2
		if c.every {
			want = 1
		}
		if n := strings.Count(lines, "Execute\t"); n != want {
			t.Errorf("DELETE ... WHERE %s with %v: %d executions in the general log, want %d:\n%s", c.cond, c.args, n, want, lines)
		}
	}
	// the SQL-level ones: those that ran, never the blocked
	lines := linesWith(log, ps+" USING ")
	for _, u := range blocked {
		if strings.Contains(lines, ps+" USING "+u+"\n") || strings.HasSuffix(lines, ps+" USING "+u) {
			t.Errorf("the server ran EXECUTE USING %s:\n%s", u, lines)
		}
	}
	if n := strings.Count(lines, "\n") + 1; n != 5 {
		t.Errorf("%d EXECUTEs in the general log, want the 5 allowed:\n%s", n, lines)
	}
	if strings.Contains(log, "' USING 1") && strings.Contains(linesWith(log, "' USING 1"), "pcsql_"+m) {
		t.Errorf("the server ran EXECUTE IMMEDIATE ... USING 1")
	}
}
