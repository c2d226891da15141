package e2e

import (
	"database/sql"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestMySQLExtractionSteps: the steps of an extraction (issue 22 item 1,
// issue 21 class 6) are denied by the default policy through sqlfwd
// against MariaDB 10.11 — boolean-blind terms, character-by-character
// questions, server information in any position, catalog reads stacked
// after an application statement, error-based extraction fed constants,
// glued executable comments and comments that cut a statement off —
// none reaches the server (general log), while the same probes straight
// to MariaDB answer what an attacker wants (the test is real); the
// clients', connectors' and builders' own statements pass with the rows
// MariaDB returns directly.
func TestMySQLExtractionSteps(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "ex" + randomHex(t)
	table, secrets := "e2e_"+marker, "e2e_sec"+marker
	direct := multiDB(t, my, my.addr())
	direct.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE " + table + " (id INT PRIMARY KEY, name VARCHAR(50), active INT)",
		"INSERT INTO " + table + " VALUES (1, 'nut', 1), (2, 'bolt', 1), (3, 'gear', 0)",
		"CREATE TABLE " + secrets + " (id INT PRIMARY KEY, value VARCHAR(64))",
		"INSERT INTO " + secrets + " VALUES (1, 'hunter2')",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s directly: %v", q, err)
		}
	}
	t.Cleanup(func() {
		direct.Exec("DROP TABLE IF EXISTS " + table)
		direct.Exec("DROP TABLE IF EXISTS " + secrets)
	})
	fw := multiDB(t, my, d.addr)
	fw.SetMaxOpenConns(1)
	sub := strings.NewReplacer("{T}", table, "{S}", secrets).Replace

	// rows: what the probe returns straight to MariaDB, as text ("" for
	// no rows); errs: what its error carries instead. Either shows the
	// probe works, so that its denial means something.
	probes := []struct{ sql, rule, rows, errs string }{
		{"SELECT name FROM {T} WHERE id = 1 AND 5678=5678", "no-boolean-blind-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND 5678=1234", "no-boolean-blind-probe", "", ""},
		{"SELECT name FROM {T} WHERE name = 'nut' AND 'XyZw'='XyZw'", "no-boolean-blind-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 OR 5678=1234", "no-boolean-blind-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 RLIKE (SELECT (CASE WHEN (5678=5678) THEN 1 ELSE 0x28 END))", "no-boolean-blind-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND ORD(MID((SELECT IFNULL(CAST(value AS NCHAR), 0x20) FROM {S} ORDER BY id LIMIT 0, 1), 1, 1)) > 103", "no-char-extraction-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1) LIKE 'h%'", "no-char-extraction-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND (SELECT user()) LIKE 'root%'", "no-server-info-probe", "nut", ""},
		{"SELECT name, user() FROM {T} WHERE id = 1", "no-server-info-probe", "nut|root@", ""},
		{"SELECT name FROM {T} WHERE id = 1 ORDER BY version()", "no-server-info-probe", "nut", ""},
		{"INSERT INTO {T} (id, name) VALUES (9, 'x') RETURNING @@datadir", "no-server-info-probe", "", ""},
		{"SELECT name FROM {T} WHERE id = 1; SELECT table_name FROM information_schema.tables WHERE table_name = '{S}'", "no-catalog-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1; SELECT @@datadir, '{T}'", "no-server-info-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND EXTRACTVALUE(1, CONCAT(0x5c, 0x71, (SELECT (ELT(5678=5678, 1))), 0x71))", "no-error-based-probe", "", "q1q"},
		{"SELECT name FROM {T} WHERE id = 1 AND UPDATEXML(1, CONCAT(0x2e, 0x71, (SELECT (ELT(5678=5678, 1))), 0x71), 1)", "no-error-based-probe", "", "q1q"},
		{"SELECT name FROM {T} WHERE id = 1/*!UNION*//*!SELECT*/'u'", "no-comment-tricks", "nut\nu", ""},
		{"SELECT name FROM {T} WHERE id = 1 /*!50000UNION*/ /*!50000SELECT*/ 'u'", "no-comment-tricks", "nut\nu", ""},
		{"SELECT name FROM {T} WHERE name = 'nut' -- ' AND active = 0", "no-comment-tricks", "nut", ""},
		{"SELECT name FROM {T} WHERE name = 'nut' #' AND active = 0", "no-comment-tricks", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1;do (1=1)", "no-boolean-blind-probe", "nut", ""},
		{"SELECT name FROM {T} WHERE id = 1; DO IF((SELECT COUNT(*) FROM {S} WHERE id = 1), (SELECT 1 UNION SELECT 2), 1)", "no-boolean-blind-probe", "nut", ""},
	}
	for _, p := range probes {
		q := sub(p.sql)
		_, err := queryAll(fw, q)
		wantMyBlocked(t, q, err, p.rule)
		got, err := queryAll(direct, q)
		switch {
		case p.errs != "":
			if err == nil || !strings.Contains(err.Error(), p.errs) {
				t.Errorf("%s straight to MariaDB: %q, %v; want an error carrying %q (the probe works)", q, got, err, p.errs)
			}
		case err != nil:
			t.Errorf("%s straight to MariaDB: %v", q, err)
		case !strings.HasPrefix(got, p.rows):
			t.Errorf("%s straight to MariaDB: %q, want %q (the probe works)", q, got, p.rows)
		}
	}
	if _, err := direct.Exec("DELETE FROM " + table + " WHERE id = 9"); err != nil {
		t.Fatal(err)
	}

	// The clients', connectors', dumps' and builders' own statements.
	for _, q := range []string{
		"select @@version_comment limit 1",
		"SELECT DATABASE()",
		"SELECT @@max_allowed_packet, @@sql_mode, @@system_time_zone, @@time_zone",
		"SELECT name FROM {T} WHERE 1=1 AND id = 2",
		"SELECT name FROM {T} WHERE 1=0",
		"SELECT name FROM {T} WHERE active = 1 AND 1=0",
		"SELECT name FROM {T} WHERE (name = 'nut' OR 'nut' IS NULL) AND active = 1",
		"SELECT name FROM {T} WHERE LEFT(name, 1) = 'g'",
		"SELECT name FROM {T} WHERE id = 3 -- the gear",
		"SELECT name FROM {T} WHERE id = 1 /*!40101 AND active = 1 */",
		"SELECT name FROM {T} WHERE id = 2; SELECT FOUND_ROWS()",
	} {
		sameRows(t, fw, direct, sub(q))
	}

	// None of the denied probes reached the server; each ran directly,
	// so the log must hold each once, from the direct connection.
	log := generalLog(t, my)
	for _, p := range probes {
		q := sub(p.sql)
		if i := strings.Index(q, "; "); i >= 0 {
			q = q[i+2:] // the stacked statement
		}
		if n := strings.Count(log, q); n != 1 {
			t.Errorf("the general log holds %q %d times, want once (the direct run): a denied probe reached the server", q, n)
		}
	}
}

// multiDB opens a connection pool with multiStatements on, as PHP's
// mysqli_multi_query sends stacked statements.
func multiDB(t *testing.T, my myEnv, addr string) *sql.DB {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = my.User, "tcp", addr, my.Database
	cfg.MultiStatements = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
