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
	"encoding/binary"
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
	// @f, (SELECT MIN(id) ...): values not known to sqlfwd (the subquery's
	// is 1 here: every row)
	blocked := []string{"1", "'1'", "@t", "@f", "2 - 1", "(SELECT 1)", "(SELECT MIN(id) FROM " + table + ")"}
	for _, u := range blocked {
		wantRawBlocked(t, "EXECUTE USING "+u, r.query("EXECUTE "+ps+" USING "+u), "no-unfiltered-writes")
	}
	for _, u := range []string{"0", "100", "NULL", "'abc'", "-1"} {
		if got := r.query("EXECUTE " + ps + " USING " + u); !strings.HasPrefix(got, "OK") {
			t.Errorf("EXECUTE USING %s: %q, want it run (it deletes nothing)", u, got)
		}
	}
	wantRawBlocked(t, "EXECUTE IMMEDIATE ... USING 1", r.query("EXECUTE IMMEDIATE '"+q+"' USING 1"), "no-unfiltered-writes")
	wantRawBlocked(t, "EXECUTE IMMEDIATE ... USING a subquery", r.query("EXECUTE IMMEDIATE '"+q+"' USING (SELECT MIN(id) FROM "+table+")"), "no-unfiltered-writes")
	// a multi-table write: u's column filters none of t's rows
	if got := r.query("PREPARE mt_" + m + " FROM 'DELETE " + table + " FROM " + table + ", " + table + " AS u WHERE u.id = ?'"); got != "OK" {
		t.Fatalf("PREPARE of a multi-table DELETE: %q", got)
	}
	wantRawBlocked(t, "a multi-table DELETE ... WHERE u.id = ? USING 1", r.query("EXECUTE mt_"+m+" USING 1"), "no-unfiltered-writes")
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

// bulkLogin logs in through addr announcing MariaDB's
// MARIADB_CLIENT_STMT_BULK_OPERATIONS (extended capabilities in the
// handshake's reserved bytes, which MariaDB reads when CLIENT_MYSQL is
// not set), as Connector/C does for mariadb_stmt_execute with arrays.
func bulkLogin(t *testing.T, my myEnv, addr string) *myRaw {
	t.Helper()
	r := dialRaw(t, addr)
	r.caps = rawCaps &^ 1
	hs := r.handshake(my.User, "", my.Database, 45)
	// header 4, caps 4, max packet 4, charset 1, then 23 reserved: the
	// last 4 are the extended capabilities
	binary.LittleEndian.PutUint32(hs[4+4+4+1+19:], 1<<2)
	r.write(hs)
	r.auth("")
	return r
}

// bulkPrepare prepares sql and returns its statement id, reading the
// parameter and column definitions.
func bulkPrepare(t *testing.T, r *myRaw, sql string) []byte {
	t.Helper()
	r.write(rawPacket(0, append([]byte{0x16}, sql...)))
	ok := r.read()
	if ok[4] != 0 {
		t.Fatalf("COM_STMT_PREPARE %q: %q", sql, ok)
	}
	cols, params := binary.LittleEndian.Uint16(ok[9:]), binary.LittleEndian.Uint16(ok[11:])
	for _, n := range []uint16{params, cols} {
		if n > 0 {
			for range n + 1 { // the definitions and their EOF
				r.read()
			}
		}
	}
	return append([]byte(nil), ok[5:9]...)
}

// bulkRows is a COM_STMT_BULK_EXECUTE of id with rows of one LONGLONG
// parameter (nil: NULL).
func bulkRows(id []byte, vals ...any) []byte {
	p := append(append([]byte{0xfa}, id...), 0x80, 0, 0x08, 0)
	for _, v := range vals {
		if v == nil {
			p = append(p, 1)
			continue
		}
		p = binary.LittleEndian.AppendUint64(append(p, 0), uint64(v.(int)))
	}
	return rawPacket(0, p)
}

// TestMySQLBulkExecute: MariaDB's COM_STMT_BULK_EXECUTE is checked row by
// row as COM_STMT_EXECUTE is: rows that do not hold the statement's
// parameters are answered with ERR 1210 and never reach MariaDB (the
// session goes on), and each row's values decide a write its parameters
// decide (DELETE ... WHERE ? = 1 with a row of 1 deletes every row). Bulk
// INSERTs, the command's use, run. Proof by rows on a direct connection
// and the general log.
func TestMySQLBulkExecute(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	m := randomHex(t)
	table := "e2e_bulk_" + m
	direct := myDB(t, my, my.addr(), false)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	rows := func() int {
		t.Helper()
		var n int
		if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// straight to MariaDB first: the packets are what it runs
	r := bulkLogin(t, my, my.addr())
	ins := bulkPrepare(t, r, "INSERT INTO "+table+" VALUES (?) /* bulkins_"+m+" */")
	r.write(bulkRows(ins, 1, 2, 3))
	if got := r.result(); !strings.HasPrefix(got, "OK") {
		t.Fatalf("bulk INSERT straight to MariaDB: %q", got)
	}
	if n := rows(); n != 3 {
		t.Fatalf("rows after a direct bulk INSERT of 3: %d", n)
	}
	// a row of 1 makes the DELETE delete every row
	del := bulkPrepare(t, r, "DELETE FROM "+table+" WHERE ? = 1 /* bulkdeldirect_"+m+" */")
	r.write(bulkRows(del, 0, 1))
	if got := r.result(); !strings.HasPrefix(got, "OK") {
		t.Fatalf("bulk DELETE straight to MariaDB: %q", got)
	}
	if n := rows(); n != 0 {
		t.Fatalf("rows after a direct bulk DELETE ... WHERE ? = 1 with rows 0, 1: %d, want 0", n)
	}
	r.write(bulkRows(ins, 1, 2, 3))
	if got := r.result(); !strings.HasPrefix(got, "OK") || rows() != 3 {
		t.Fatalf("bulk INSERT straight to MariaDB: %q", got)
	}

	// through sqlfwd
	r = bulkLogin(t, my, d.addr)
	ins = bulkPrepare(t, r, "INSERT INTO "+table+" VALUES (?) /* bulkins2_"+m+" */")
	r.write(bulkRows(ins, 4, nil, 6))
	if got := r.result(); !strings.HasPrefix(got, "OK") {
		t.Errorf("bulk INSERT through sqlfwd: %q, want it run", got)
	}
	if n := rows(); n != 6 {
		t.Errorf("rows after a bulk INSERT of 3 through sqlfwd: %d, want 6", n)
	}
	del = bulkPrepare(t, r, "DELETE FROM "+table+" WHERE ? = 1 /* bulkdel_"+m+" */")
	r.write(bulkRows(del, 0, 1))
	wantRawBlocked(t, "bulk DELETE ... WHERE ? = 1 with rows 0, 1", r.result(), "no-unfiltered-writes")
	r.write(bulkRows(del, 1))
	wantRawBlocked(t, "bulk DELETE ... WHERE ? = 1 with a row 1", r.result(), "no-unfiltered-writes")
	r.write(bulkRows(del, 0, 2, nil))
	if got := r.result(); !strings.HasPrefix(got, "OK") {
		t.Errorf("bulk DELETE ... WHERE ? = 1 with rows 0, 2, NULL: %q, want it run (it deletes nothing)", got)
	}
	// malformed: a value cut short, an unknown indicator, no rows
	cut := bulkRows(del, 7)
	cut = rawPacket(0, cut[4:len(cut)-3])
	for what, p := range map[string][]byte{
		"a value cut short":    cut,
		"an unknown indicator": rawPacket(0, append(append([]byte{0xfa}, del...), 0x80, 0, 0x08, 0, 9)),
		"no rows":              rawPacket(0, append(append([]byte{0xfa}, del...), 0x80, 0, 0x08, 0)),
	} {
		r.write(p)
		if got := r.result(); !strings.HasPrefix(got, "ERR 1210 HY000 sqlfw:") {
			t.Errorf("bulk rows with %s: %q, want sqlfw's ERR 1210", what, got)
		}
		if got := r.query("SELECT 5"); got != "5" {
			t.Errorf("the session after %s: %q", what, got)
		}
	}
	if n := rows(); n != 6 {
		t.Errorf("rows at the end: %d, want 6", n)
	}
	log := generalLog(t, my)
	// MariaDB logs a bulk execution as one Execute line per row: the
	// direct one's two rows; through sqlfwd only the three rows 0, 2, NULL
	if n := strings.Count(linesWith(log, "bulkdeldirect_"+m), "Execute\t"); n != 2 {
		t.Errorf("the direct bulk DELETE of two rows: %d Execute lines, want 2 (how MariaDB logs it is what this test reads):\n%s", n, linesWith(log, "bulkdeldirect_"+m))
	}
	if n := strings.Count(linesWith(log, "bulkdel_"+m), "Execute\t"); n != 3 {
		t.Errorf("bulk DELETEs through sqlfwd in the general log: %d Execute lines, want 3 (the rows 0, 2, NULL):\n%s", n, linesWith(log, "bulkdel_"+m))
	}
}

// TestMySQLProcedurePreparesName: a procedure can PREPARE a name in the
// caller's session from a text (or a variable) sqlfwd never sees: after
// `PREPARE s FROM 'SELECT 1'; CALL p()` the server holds p's DELETE under
// s. The same sequence straight to MariaDB deletes every row; through
// sqlfwd every name is forgotten at the CALL and the EXECUTE is refused
// (session-memory), never reaching MariaDB; the rows stay. The procedures
// are created on a direct connection, as by another account or in monitor
// mode.
func TestMySQLProcedurePreparesName(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	m := randomHex(t)
	table := "e2e_procps_" + m
	direct := myDB(t, my, my.addr(), true)
	for _, q := range []string{
		"create table " + table + " (id int)",
		"create procedure pt_" + m + "() PREPARE ps_" + m + " FROM 'DELETE FROM " + table + "'",
		"create procedure pv_" + m + "() BEGIN SET @q = 'DELETE FROM " + table + "'; PREPARE ps_" + m + " FROM @q; END",
		"create procedure pd_" + m + "() DEALLOCATE PREPARE ps_" + m,
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop table " + table, "drop procedure pt_" + m, "drop procedure pv_" + m, "drop procedure pd_" + m} {
			_, _ = direct.Exec(q)
		}
	})
	fill := func() {
		t.Helper()
		if _, err := direct.Exec("delete from " + table); err != nil {
			t.Fatal(err)
		}
		if _, err := direct.Exec("insert into " + table + " values (1), (2), (3)"); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() int {
		t.Helper()
		var n int
		if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	login := func(addr string) *myRaw {
		r := dialRaw(t, addr)
		r.write(r.handshake(my.User, "", my.Database, 45))
		r.auth("")
		return r
	}
	ps := "ps_" + m
	for _, p := range []string{"pt_" + m, "pv_" + m} {
		// straight to MariaDB: the EXECUTE runs the procedure's DELETE
		fill()
		r := login(my.addr())
		r.query("PREPARE " + ps + " FROM 'SELECT 1'")
		if got := r.query("CALL " + p + "()"); !strings.HasPrefix(got, "OK") {
			t.Fatalf("CALL %s() straight to MariaDB: %q", p, got)
		}
		r.query("EXECUTE " + ps)
		if n := rows(); n != 0 {
			t.Fatalf("straight to MariaDB, EXECUTE after CALL %s(): %d rows, want 0 (the procedure's DELETE ran)", p, n)
		}

		// through sqlfwd: refused
		fill()
		r = login(d.addr)
		if got := r.query("PREPARE " + ps + " FROM 'SELECT 1'"); got != "OK" {
			t.Fatalf("PREPARE: %q", got)
		}
		if got := r.query("EXECUTE " + ps); got != "1" {
			t.Errorf("EXECUTE before the CALL: %q, want 1", got)
		}
		if got := r.query("CALL " + p + "()"); !strings.HasPrefix(got, "OK") {
			t.Fatalf("CALL %s() through sqlfwd: %q", p, got)
		}
		wantRawBlocked(t, "EXECUTE after CALL "+p+"()", r.query("EXECUTE "+ps), "session-memory")
		wantRawBlocked(t, "CALL then EXECUTE in one text", r.query("CALL "+p+"(); EXECUTE "+ps), "session-memory")
		if n := rows(); n != 3 {
			t.Errorf("through sqlfwd, after CALL %s() and EXECUTE: %d rows, want 3", p, n)
		}
		// a PREPARE of its own after the CALL is judged again: it runs
		if got := r.query("PREPARE " + ps + " FROM 'SELECT 2'"); got != "OK" {
			t.Fatalf("PREPARE again: %q", got)
		}
		if got := r.query("EXECUTE " + ps); got != "2" {
			t.Errorf("EXECUTE of a name prepared again after the CALL: %q, want 2", got)
		}
	}
	// a procedure that deallocates: the name is gone on the server, and
	// forgotten by sqlfwd
	r := login(d.addr)
	r.query("PREPARE " + ps + " FROM 'SELECT 1'")
	r.query("CALL pd_" + m + "()")
	wantRawBlocked(t, "EXECUTE after a procedure's DEALLOCATE", r.query("EXECUTE "+ps), "session-memory")

	log := generalLog(t, my)
	lines := linesWith(log, "EXECUTE "+ps)
	// straight to MariaDB: two; through sqlfwd: the two EXECUTEs of
	// SELECT 1 before each CALL and of SELECT 2 after, never one after a CALL
	if n := strings.Count(lines, "\n") + 1; n != 6 {
		t.Errorf("%d EXECUTEs of %s in the general log, want 6 (2 direct, 4 through sqlfwd before a CALL or after a new PREPARE):\n%s", n, ps, lines)
	}
}
