package e2e

// SQL-level prepared statements through sqlfwd (relay/mysql sqlprepare.go):
// an EXECUTE is judged by what MariaDB holds under its name, under the mode
// and policy of the moment. Proof by MariaDB's general log (the EXECUTE
// never reached it) and by the rows (checked on a direct connection).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// prepFixture is a table of three rows and a raw session through d.
type prepFixture struct {
	t      *testing.T
	my     myEnv
	table  string
	marker string
}

func newPrepFixture(t *testing.T, my myEnv) *prepFixture {
	t.Helper()
	m := randomHex(t)
	f := &prepFixture{t: t, my: my, table: "e2e_prep_" + m, marker: m}
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + f.table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec("insert into " + f.table + " values (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + f.table) })
	return f
}

// rows counts the table's rows on a direct connection.
func (f *prepFixture) rows() int {
	f.t.Helper()
	var n int
	if err := myDB(f.t, f.my, f.my.addr(), true).QueryRow("select count(*) from " + f.table).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// name is a statement name unique to the test.
func (f *prepFixture) name(s string) string { return s + "_" + f.marker }

func (f *prepFixture) login(addr string) *myRaw {
	r := dialRaw(f.t, addr)
	r.write(r.handshake(f.my.User, "", f.my.Database, 45))
	r.auth("")
	return r
}

// query sends sql and returns its result.
func (r *myRaw) query(sql string) string {
	r.t.Helper()
	r.write(rawQuery(sql))
	return r.result()
}

func TestMySQLPreparedVerdictMemory(t *testing.T) {
	my := mariadbEnv(t)
	defaultPolicy, err := os.ReadFile(filepath.Join("..", "engine", "mysql", "default_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"monitor to enforce", "reload to a stricter policy"} {
		t.Run(variant, func(t *testing.T) {
			f := newPrepFixture(t, my)
			var d *daemon
			pol := policyFile(t, "rules: []\n")
			if variant == "monitor to enforce" {
				d = mysqlDaemon(t, my, "--mode", "monitor")
			} else {
				d = mysqlDaemon(t, my, "--policy", pol)
			}
			del, benign, proc, pad := f.name("del"), f.name("ok"), f.name("proc"), f.name("pad")
			direct := myDB(t, my, my.addr(), true)
			// a procedure that EXECUTEs the session's statement
			if _, err := direct.Exec("create procedure " + proc + "() execute " + del); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = direct.Exec("drop procedure " + proc) })

			r := f.login(d.addr)
			if got := r.query("PREPARE " + del + " FROM 'DELETE FROM " + f.table + "'"); got != "OK" {
				t.Fatalf("PREPARE before the switch: %q", got)
			}
			if got := r.query("PREPARE " + benign + " FROM 'SELECT 1'"); got != "OK" {
				t.Fatalf("PREPARE before the switch: %q", got)
			}
			// a name with trailing spaces (another name to the server)
			if got := r.query("PREPARE `" + pad + "  ` FROM 'DELETE FROM " + f.table + "'"); got != "OK" {
				t.Fatalf("PREPARE before the switch: %q", got)
			}
			if n := f.rows(); n != 3 {
				t.Fatalf("rows before the switch: %d", n)
			}
			if variant == "monitor to enforce" {
				if res := fwctl(t, d, "mode", "enforce"); res.Exit != 0 {
					t.Fatalf("fwctl mode enforce: %s", res)
				}
			} else {
				if err := os.WriteFile(pol, defaultPolicy, 0o644); err != nil {
					t.Fatal(err)
				}
				if res := fwctl(t, d, "reload"); res.Exit != 0 {
					t.Fatalf("fwctl reload: %s", res)
				}
			}
			wantRawBlocked(t, "EXECUTE of a DELETE prepared before the switch", r.query("EXECUTE "+del), "no-unfiltered-writes")
			wantRawBlocked(t, "EXECUTE, names in another case", r.query("EXECUTE "+strings.ToUpper(del)), "no-unfiltered-writes")
			wantRawBlocked(t, "CALL of a procedure that EXECUTEs it", r.query("CALL "+proc+"()"), "no-unfiltered-writes")
			wantRawBlocked(t, "EXECUTE IMMEDIATE of that CALL", r.query("EXECUTE IMMEDIATE 'CALL "+proc+"()'"), "no-unfiltered-writes")
			wantRawBlocked(t, "EXECUTE of a name prepared with trailing spaces", r.query("EXECUTE `"+pad+"  `"), "no-unfiltered-writes")
			wantRawBlocked(t, "EXECUTE of that name without them", r.query("EXECUTE "+pad), "session-memory")
			compound := "BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; EXECUTE " + del + "; END"
			if got := r.query(compound); !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("EXECUTE inside a compound statement: %q, want sqlfw's ERR 1227", got)
			}
			if got := r.query("EXECUTE " + benign); got != "1" {
				t.Errorf("EXECUTE of a benign statement: %q, want 1", got)
			}
			if n := f.rows(); n != 3 {
				t.Errorf("rows after the blocked EXECUTEs: %d, want 3", n)
			}
			log := generalLog(t, my)
			for _, s := range []string{"EXECUTE " + del, "EXECUTE " + strings.ToUpper(del), "CALL " + proc, "EXECUTE `" + pad, "EXECUTE " + pad} {
				if strings.Contains(log, s) {
					t.Errorf("the server ran %q:\n%s", s, linesWith(log, s))
				}
			}

			// DEALLOCATE, then a benign re-PREPARE of the name
			if got := r.query("DEALLOCATE PREPARE " + del); got != "OK" {
				t.Fatalf("DEALLOCATE: %q", got)
			}
			wantRawBlocked(t, "EXECUTE after DEALLOCATE", r.query("EXECUTE "+del), "session-memory")
			if got := r.query("PREPARE " + del + " FROM 'SELECT 2'"); got != "OK" {
				t.Fatalf("re-PREPARE: %q", got)
			}
			if got := r.query("EXECUTE " + del); got != "2" {
				t.Errorf("EXECUTE of the benign re-PREPARE: %q, want 2", got)
			}
		})
	}
}

// TestMySQLPreparedForgotten: COM_RESET_CONNECTION, COM_CHANGE_USER and a
// re-PREPARE the server refuses leave no statement under the name
// (MariaDB deallocates the old one first: checked on a direct connection),
// and sqlfwd forgets it too.
func TestMySQLPreparedForgotten(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	name := f.name("s")
	badPrepare := "PREPARE " + name + " FROM 'SELECT no_such_column FROM " + f.table + "'"

	// what MariaDB does: the refused re-PREPARE removed the old statement
	r := f.login(my.addr())
	r.query("PREPARE " + name + " FROM 'SELECT 1'")
	if got := r.query(badPrepare); !strings.HasPrefix(got, "ERR 1054") {
		t.Fatalf("direct: the bad re-PREPARE: %q, want ERR 1054", got)
	}
	if got := r.query("EXECUTE " + name); !strings.HasPrefix(got, "ERR 1243") {
		t.Fatalf("direct: EXECUTE after a refused re-PREPARE: %q, want ERR 1243 (the server deallocated it)", got)
	}
	// names compare case-insensitively, trailing spaces kept, as sqlfwd
	// folds them
	r.query("PREPARE `" + name + "  ` FROM 'SELECT 7'")
	if got := r.query("EXECUTE " + name); !strings.HasPrefix(got, "ERR 1243") {
		t.Fatalf("direct: EXECUTE of a name prepared with trailing spaces: %q, want ERR 1243 (another name)", got)
	}
	if got := r.query("EXECUTE `" + strings.ToUpper(name) + "  `"); got != "7" {
		t.Fatalf("direct: EXECUTE of the name in upper case: %q, want 7", got)
	}
	r.query("DEALLOCATE PREPARE `" + name + "  `")

	for _, tc := range []struct {
		name   string
		forget func(r *myRaw)
	}{
		{"COM_RESET_CONNECTION", func(r *myRaw) {
			r.write(rawPacket(0, []byte{0x1f}))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_RESET_CONNECTION: %q", got)
			}
		}},
		{"COM_CHANGE_USER", func(r *myRaw) {
			cu := append([]byte{0x11}, my.User...)
			cu = append(cu, 0, 0) // no auth data: the server switches
			cu = append(append(cu, my.Database...), 0)
			cu = append(cu, 45, 0)
			cu = append(cu, "mysql_native_password\x00"...)
			r.write(rawPacket(0, cu))
			if m := r.read(); m[4] != 0xfe {
				t.Fatalf("COM_CHANGE_USER: %q, want an auth switch", m)
			}
			r.write(rawPacket(2, nil))
			if m := r.read(); m[4] != 0x00 {
				t.Fatalf("COM_CHANGE_USER: %q, want OK", m)
			}
		}},
		{"a re-PREPARE the server refuses", func(r *myRaw) {
			if got := r.query(badPrepare); !strings.HasPrefix(got, "ERR 1054") {
				t.Fatalf("the bad re-PREPARE: %q, want ERR 1054", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.login(d.addr)
			if got := r.query("PREPARE " + name + " FROM 'SELECT 1'"); got != "OK" {
				t.Fatalf("PREPARE: %q", got)
			}
			if got := r.query("EXECUTE " + name); got != "1" {
				t.Fatalf("EXECUTE: %q, want 1", got)
			}
			tc.forget(r)
			wantRawBlocked(t, "EXECUTE after "+tc.name, r.query("EXECUTE "+name), "session-memory")
			if got := r.query("SELECT 3"); got != "3" {
				t.Errorf("the session after the blocked EXECUTE: %q", got)
			}
		})
	}
}

// TestMySQLExecuteParamsTruncated: a COM_STMT_EXECUTE whose parameter block
// is cut short is answered with ER_WRONG_ARGUMENTS (MariaDB's own answer)
// and never reaches the server; the session goes on, and a whole block
// runs.
func TestMySQLExecuteParamsTruncated(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	r := f.login(d.addr)
	marker := "execparams_" + f.marker
	r.write(rawPacket(0, append([]byte{0x16}, "select ? /* "+marker+" */"...)))
	ok := r.read()
	if ok[4] != 0 {
		t.Fatalf("COM_STMT_PREPARE: %q", ok)
	}
	id := ok[5:9]
	for range 4 { // the parameter's and the column's definitions, each with its EOF
		r.read()
	}
	header := append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)
	// one LONGLONG parameter: null bitmap, bound flag, type; the value 7 of its 8 bytes
	cut := append(append([]byte(nil), header...), 0, 1, 0x08, 0, 1, 0, 0, 0, 0, 0, 0)
	r.write(rawPacket(0, cut))
	if got := r.result(); !strings.HasPrefix(got, "ERR 1210 HY000 sqlfw:") {
		t.Errorf("a cut parameter block: %q, want sqlfw's ERR 1210", got)
	}
	if got := r.query("SELECT 5"); got != "5" {
		t.Errorf("the session after the refused execution: %q", got)
	}
	whole := append(append([]byte(nil), header...), 0, 1, 0x08, 0, 42, 0, 0, 0, 0, 0, 0, 0)
	r.write(rawPacket(0, whole))
	// a binary result set: column count, definition, EOF, the row, EOF
	if m := r.read(); m[4] != 1 {
		t.Fatalf("a whole parameter block: %q, want one column", m)
	}
	r.read()
	r.read()
	row := r.read()
	if len(row) < 12 || row[4] != 0 || row[len(row)-8] != 42 {
		t.Errorf("a whole parameter block: row % x, want the LONGLONG 42", row)
	}
	r.read()
	log := generalLog(t, my)
	if n := strings.Count(log, "Execute\tselect 42 /* "+marker); n != 1 {
		t.Errorf("the general log has %d executions of the statement, want 1 (the whole block's):\n%s", n, linesWith(log, marker))
	}
}

// TestMySQLBareParam: a prepared DELETE whose WHERE is a parameter on its
// own deletes every row when the value bound is true. Through the binary
// protocol (go-sql-driver without interpolation) the value is read: a true
// one is blocked, a false one runs (and deletes nothing); EXECUTE ...
// USING @v binds a value sqlfwd does not know: blocked.
func TestMySQLBareParam(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	db := myDB(t, my, d.addr, false)
	mark := func(s string) string {
		return "DELETE FROM " + f.table + " WHERE ? /* bare_" + s + "_" + f.marker + " */"
	}
	for _, v := range []any{1, "1", " 2x", 0.5} {
		_, err := db.Exec(mark("true"), v)
		wantMyBlocked(t, fmt.Sprintf("DELETE ... WHERE ? with %#v", v), err, "no-unfiltered-writes")
	}
	for _, v := range []any{0, "0", "abc", nil} {
		if _, err := db.Exec(mark("false"), v); err != nil {
			t.Errorf("DELETE ... WHERE ? with %#v: %v, want it run (it deletes nothing)", v, err)
		}
	}
	if n := f.rows(); n != 3 {
		t.Errorf("rows: %d, want 3", n)
	}

	r := f.login(d.addr)
	if got := r.query("PREPARE s FROM '" + strings.ReplaceAll(mark("using"), "'", "''") + "'"); got != "OK" {
		t.Fatalf("PREPARE: %q", got)
	}
	r.query("SET @t = 1, @f = 0")
	wantRawBlocked(t, "EXECUTE USING a true variable", r.query("EXECUTE s USING @t"), "no-unfiltered-writes")
	wantRawBlocked(t, "EXECUTE USING a false variable (not known to sqlfwd)", r.query("EXECUTE s USING @f"), "no-unfiltered-writes")
	if n := f.rows(); n != 3 {
		t.Errorf("rows after EXECUTE USING: %d, want 3", n)
	}
	log := generalLog(t, my)
	for _, s := range []string{"true", "using"} {
		for _, l := range strings.Split(linesWith(log, "bare_"+s+"_"+f.marker), "\n") {
			if strings.Contains(l, "Execute") || strings.Contains(l, "EXECUTE") {
				t.Errorf("the server ran it: %s", l)
			}
		}
	}
	if n := strings.Count(log, "bare_false_"+f.marker); n < 4 {
		t.Errorf("the false ones: %d lines in the general log, want their executions", n)
	}
}
