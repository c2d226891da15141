package e2e

import (
	"strings"
	"testing"
)

// TestMySQLDynamicCharset: SQL text assembled at run time can set the
// character set without naming it, EXECUTE IMMEDIATE CONCAT('SET NA','MES
// gbk') or PREPARE s FROM CONCAT(...) then EXECUTE s, under a policy that
// lets dynamic SQL through and with session tracking off (the client's
// choice), so that the server never reports it. Under gbk "'中\\' or 1=1
// -- '" (E4 B8 AD 5C) is a string ending after the character AD5C followed
// by OR 1=1; to a UTF-8 reader it is one string. sqlfwd reads the session
// as in an unknown character set after such a text: the attack is blocked
// (its non-ASCII bytes cannot be read), absent from MariaDB's general log,
// and the table keeps its rows.
func TestMySQLDynamicCharset(t *testing.T) {
	my := mariadbEnv(t)
	pol := policyFile(t, `on_parse_error: allow
rules:
  - id: no-tautology
    action: deny
    match: {tautology: true}
`)
	d := mysqlDaemon(t, my, "--policy", pol)
	marker := "dyncharset_" + randomHex(t)
	table := "e2e_dyncharset_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	for _, tc := range []struct {
		name  string
		setup []string
	}{
		{"EXECUTE IMMEDIATE CONCAT", []string{"execute immediate concat('set na', 'mes gbk')"}},
		{"EXECUTE of PREPARE FROM CONCAT", []string{"prepare s from concat('set na', 'mes gbk')", "set names utf8mb4", "execute s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := direct.Exec("delete from " + table + " where id > 0"); err != nil {
				t.Fatal(err)
			}
			if _, err := direct.Exec("insert into " + table + " values (1), (2)"); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, d.addr)
			r.caps = rawCaps // no CLIENT_SESSION_TRACK: the server reports no character set
			r.write(r.handshake(my.User, "", my.Database, 45))
			r.auth("")
			for _, sql := range tc.setup {
				r.exec(sql)
			}
			attack := "delete from " + table + " where id = '中\\' or 1=1 -- " + marker + " " + strings.ReplaceAll(tc.name, " ", "_") + "'"
			r.write(rawQuery(attack))
			if got := r.result(); !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("%q: got %q, want sqlfw's ERR 1227", attack, got)
			}
			r.write(rawQuery("select count(*) from " + table))
			if got := r.result(); got != "2" {
				t.Errorf("rows after the attempt: %q, want 2", got)
			}
		})
	}
	mustNotReach(t, my, marker)
}
