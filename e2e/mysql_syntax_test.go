package e2e

import (
	"database/sql"
	"strings"
	"testing"
)

// TestMySQLMariaDBSyntax: MariaDB's own syntax (engine/mysql mariadb.go,
// body.go) through sqlfwd in enforce mode with the default policy, against
// MariaDB. The forms TiDB's parser does not parse run when what they do is
// allowed (they reach the server, its general log shows them, and their
// effect is there on a direct connection), and are denied by the rule of
// what they hide when it is not (they never reach the server, and their
// effect is absent).
func TestMySQLMariaDBSyntax(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	db := myDB(t, my, d.addr, false)
	db.SetMaxOpenConns(1)
	direct := myDB(t, my, my.addr(), false)
	marker := randomHex(t)
	table := "e2e_syn_" + marker
	other := "e2e_syn2_" + marker
	fn, tr, proc := "f_"+marker, "tr_"+marker, "p_"+marker
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS " + table, "DROP TABLE IF EXISTS " + other, "DROP TABLE IF EXISTS sv_" + marker, "DROP FUNCTION IF EXISTS " + fn,
			"DROP PROCEDURE IF EXISTS " + proc, "DROP FUNCTION IF EXISTS g_" + marker, "DROP PROCEDURE IF EXISTS q_" + marker} {
			direct.Exec(q)
		}
	})
	for _, q := range []string{
		"CREATE TABLE " + table + " (id INT PRIMARY KEY, a INT, name VARCHAR(20))",
		"INSERT INTO " + table + " VALUES (1, 1, 'smith'), (2, 2, 'jones'), (3, 3, 'brown')",
		"CREATE TABLE " + other + " (a INT)",
		"INSERT INTO " + other + " VALUES (1), (2)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s directly: %v", q, err)
		}
	}
	scalar := func(conn *sql.DB, q string) string {
		t.Helper()
		var s sql.NullString
		if err := conn.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s.String
	}

	// Allowed: each runs through sqlfwd and reaches the server.
	allowed := []string{
		"EXPLAIN EXTENDED SELECT * FROM " + table + " WHERE id = 1",
		"SELECT CAST(a AS INT) FROM " + table + " WHERE id = 1",
		"SELECT id FROM " + table + " WHERE name SOUNDS LIKE 'smyth'",
		"INSERT INTO " + table + " (id, a) VALUES (1, 5) ON DUPLICATE KEY UPDATE a = VALUE(a) + 100",
		"CHECK TABLE " + table + " EXTENDED",
		"SET STATEMENT max_statement_time = 10 FOR UPDATE " + table + " SET a = 7 WHERE id = 2",
		"SELECT v FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (v INT PATH '$')) AS jt_" + marker,
		"CREATE FUNCTION " + fn + "(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
		"CREATE TRIGGER " + tr + " BEFORE INSERT ON " + table + " FOR EACH ROW SET NEW.a = NEW.a + 1000",
		"CREATE PROCEDURE " + proc + "(lo INT) BEGIN DECLARE done INT DEFAULT FALSE; DECLARE v INT; " +
			"DECLARE c CURSOR (b INT) FOR SELECT id FROM " + table + " WHERE id > b; " +
			"DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE; " +
			"FOR i IN 1..2 DO INSERT INTO " + table + " (id, a) VALUES (100 + i, i); END FOR; " +
			"OPEN c(lo); l: LOOP FETCH c INTO v; IF done THEN LEAVE l; END IF; END LOOP l; CLOSE c; END",
		"CALL " + proc + "(1)",
		// mtr's forms (issue 21 class 8: main.select, main.type_newdecimal,
		// main.ctype_latin2, main.func_encrypt)
		"SELECT t1.name FROM " + table + " = t1 WHERE t1.id = 2",
		"SELECT " + strings.Repeat("9", 134) + " AS x_" + marker,
		"SELECT HEX(WEIGHT_STRING(name AS CHAR(4) LEVEL 1)), WEIGHT_STRING('a' LEVEL 1) FROM " + table + " WHERE id = 2",
		"FLUSH QUERY CACHE",
		"CREATE TABLE sv_" + marker + " (a INT) WITH SYSTEM VERSIONING",
		"INSERT INTO sv_" + marker + " VALUES (1), (2)",
		"SELECT COUNT(*) FROM sv_" + marker + " FOR SYSTEM_TIME AS OF NOW(6)",
		"SELECT COUNT(*) FROM sv_" + marker + " FOR SYSTEM_TIME BETWEEN TIMESTAMP '2000-01-01 00:00:00' AND NOW(6)",
		"BACKUP LOCK " + table,
		"BACKUP UNLOCK",
	}
	for _, q := range allowed {
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("%s: %v, want it to run", q, err)
			continue
		}
		for rows.Next() {
		}
		rows.Close()
	}
	var got []string
	rows, err := db.Query("DELETE FROM " + table + " WHERE id = 3 RETURNING id, name")
	if err != nil {
		t.Errorf("DELETE ... RETURNING: %v", err)
	} else {
		for rows.Next() {
			var id, name string
			rows.Scan(&id, &name)
			got = append(got, id+" "+name)
		}
		rows.Close()
		if strings.Join(got, ",") != "3 brown" {
			t.Errorf("DELETE ... RETURNING returned %q, want \"3 brown\"", got)
		}
	}
	// Their effects, on a direct connection.
	for q, want := range map[string]string{
		"SELECT a FROM " + table + " WHERE id = 1":                                           "105",       // VALUE(a) + 100
		"SELECT a FROM " + table + " WHERE id = 2":                                           "7",         // SET STATEMENT ... FOR UPDATE
		"SELECT COUNT(*) FROM " + table + " WHERE id = 3":                                    "0",         // DELETE ... RETURNING
		"SELECT " + fn + "(41)":                                                              "42",        // CREATE FUNCTION
		"SELECT GROUP_CONCAT(a ORDER BY id) FROM " + table + " WHERE id > 100":               "1001,1002", // the procedure's FOR loop, through the trigger
		"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME = '" + tr + "'": "1",
	} {
		if g := scalar(direct, q); g != want {
			t.Errorf("%s: %q, want %q", q, g, want)
		}
	}

	// Denied: the rule of what the form holds; nothing reaches the server.
	denyMark := "deny_" + marker
	for _, tc := range []struct{ sql, rule string }{
		{"EXPLAIN EXTENDED SELECT authentication_string, '" + denyMark + "' FROM mysql.user", "no-credential-tables"},
		{"SET STATEMENT max_statement_time = 10 FOR DELETE FROM " + table + " WHERE '" + denyMark + "' = '" + denyMark + "'", "no-unfiltered-writes"},
		{"DELETE FROM " + table + " WHERE id = 1 RETURNING (SELECT authentication_string FROM mysql.user LIMIT 1), '" + denyMark + "'", "no-credential-tables"},
		{"CREATE FUNCTION g_" + marker + "() RETURNS INT BEGIN DELETE FROM " + other + "; RETURN 1; END", "no-unfiltered-writes"},
		{"CREATE TRIGGER tr2_" + marker + " AFTER UPDATE ON " + table + " FOR EACH ROW UPDATE " + other + " SET a = 0", "no-unfiltered-writes"},
		{"CREATE PROCEDURE q_" + marker + "() BEGIN DECLARE x TEXT DEFAULT LOAD_FILE('/etc/hostname'); SELECT x; END", "no-server-files"},
		{"SELECT id, '" + denyMark + "' FROM " + table + " WHERE name SOUNDS LIKE LOAD_FILE('/etc/hostname')", "no-server-files"},
		{"CREATE OR REPLACE TABLE mysql.e2e_" + marker + " (a INT)", "no-catalog-writes"},
		{"BEGIN NOT ATOMIC DELETE FROM " + other + "; SELECT '" + denyMark + "'; END", "no-unfiltered-writes"},
		{"DELETE x FROM " + other + " = x WHERE '" + denyMark + "' = '" + denyMark + "'", "no-unfiltered-writes"},
		{"DELETE FROM " + other + " WHERE " + strings.Repeat("9", 100) + " = " + strings.Repeat("9", 90) + " AND '" + denyMark + "' > ''", "no-unfiltered-writes"},
		{"SELECT x.authentication_string, '" + denyMark + "' FROM mysql.user = x", "no-credential-tables"},
		{"FLUSH NO_WRITE_TO_BINLOG DES_KEY_FILE", "no-server-signals"},
		{"FLUSH LOCAL USER_RESOURCES", "no-server-signals"},
		{"SELECT a, '" + denyMark + "' FROM sv_" + marker + " FOR SYSTEM_TIME AS OF (SELECT MAX(password_last_changed) FROM mysql.user)", "no-credential-tables"},
		{"BACKUP STAGE START", "no-server-signals"},
	} {
		_, err := db.Exec(tc.sql)
		wantMyBlocked(t, tc.sql, err, tc.rule)
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM " + table + " WHERE id = 1": "1",
		"SELECT COUNT(*) FROM " + other:                   "2",
		"SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME IN ('g_" + marker + "', 'q_" + marker + "')": "0",
		"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME = 'tr2_" + marker + "'":                      "0",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'e2e_" + marker + "'":                          "0",
	} {
		if g := scalar(direct, q); g != want {
			t.Errorf("%s: %q, want %q (a denied statement had its effect)", q, g, want)
		}
	}
	log := generalLog(t, my)
	for _, q := range append(allowed, "RETURNING id, name") {
		if !strings.Contains(log, q) {
			t.Errorf("the general log lacks the allowed %q", q)
		}
	}
	mustNotReach(t, my, denyMark, "DES_KEY_FILE", "USER_RESOURCES", "BACKUP STAGE", "FUNCTION g_"+marker, "TRIGGER tr2_"+marker, "PROCEDURE q_"+marker, "mysql.e2e_"+marker)
}
