package e2e

import (
	"strings"
	"testing"
)

// Liquibase's and Flyway's own bookkeeping, as they send it to MariaDB,
// runs through sqlfwd with the default policy: Liquibase's reset of its
// one-row lock table (DELETE FROM db.DATABASECHANGELOGLOCK, the one
// whole-table delete not counted as one), its lock and changelog updates,
// Flyway's history table and advisory lock. The variants that add a
// condition or empty the changelog are denied and have no effect.
func TestMySQLMigrationTools(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	db := myDB(t, my, d.addr, false)
	db.SetMaxOpenConns(1)
	direct := myDB(t, my, my.addr(), false)
	mdb := "mig_" + randomHex(t)
	if _, err := direct.Exec("CREATE DATABASE " + mdb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("DROP DATABASE IF EXISTS " + mdb) })
	q := func(s string) string { return strings.ReplaceAll(s, "DB.", "`"+mdb+"`.") }
	allowed := []string{
		// Liquibase (MariaDB): lock table set up, lock taken and released
		"CREATE TABLE DB.`DATABASECHANGELOGLOCK` (`ID` INT NOT NULL, `LOCKED` BIT(1) NOT NULL, `LOCKGRANTED` datetime NULL, `LOCKEDBY` VARCHAR(255) NULL, CONSTRAINT `PK_DATABASECHANGELOGLOCK` PRIMARY KEY (`ID`))",
		"DELETE FROM DB.`DATABASECHANGELOGLOCK`",
		"INSERT INTO DB.`DATABASECHANGELOGLOCK` (`ID`, `LOCKED`) VALUES (1, 0)",
		"SELECT `LOCKED` FROM DB.`DATABASECHANGELOGLOCK` WHERE `ID` = 1",
		"UPDATE DB.`DATABASECHANGELOGLOCK` SET `LOCKED` = 1, `LOCKEDBY` = 'host (127.0.0.1)', `LOCKGRANTED` = NOW() WHERE `ID` = 1 AND `LOCKED` = 0",
		"CREATE TABLE DB.`DATABASECHANGELOG` (`ID` VARCHAR(255) NOT NULL, `AUTHOR` VARCHAR(255) NOT NULL, `FILENAME` VARCHAR(255) NOT NULL, `DATEEXECUTED` datetime NOT NULL, `ORDEREXECUTED` INT NOT NULL, `EXECTYPE` VARCHAR(10) NOT NULL, `MD5SUM` VARCHAR(35) NULL)",
		"INSERT INTO DB.`DATABASECHANGELOG` (`ID`, `AUTHOR`, `FILENAME`, `DATEEXECUTED`, `ORDEREXECUTED`, `MD5SUM`, `EXECTYPE`) VALUES ('1', 'me', 'db.xml', NOW(), 1, '8:abc', 'EXECUTED')",
		"SELECT MAX(`ORDEREXECUTED`) FROM DB.`DATABASECHANGELOG`",
		"UPDATE DB.`DATABASECHANGELOG` SET `MD5SUM` = NULL WHERE `MD5SUM` IS NOT NULL AND `MD5SUM` NOT LIKE '9:%'",
		"UPDATE DB.`DATABASECHANGELOGLOCK` SET `LOCKED` = 0, `LOCKEDBY` = NULL, `LOCKGRANTED` = NULL WHERE `ID` = 1",
		// Flyway (MySQL/MariaDB): advisory lock, history table
		"SELECT GET_LOCK('flyway-1394561235', 10)",
		"CREATE TABLE DB.`flyway_schema_history` (`installed_rank` INT NOT NULL, `version` VARCHAR(50), `description` VARCHAR(200) NOT NULL, `type` VARCHAR(20) NOT NULL, `script` VARCHAR(1000) NOT NULL, `checksum` INT, `installed_by` VARCHAR(100) NOT NULL, `installed_on` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, `execution_time` INT NOT NULL, `success` BOOL NOT NULL, CONSTRAINT `flyway_schema_history_pk` PRIMARY KEY (`installed_rank`))",
		"INSERT INTO DB.`flyway_schema_history` (`installed_rank`, `version`, `description`, `type`, `script`, `checksum`, `installed_by`, `execution_time`, `success`) VALUES (1, '1', 'init', 'SQL', 'V1__init.sql', 123, 'app', 5, 1)",
		"SELECT `installed_rank`, `version`, `checksum`, `success` FROM DB.`flyway_schema_history` WHERE `installed_rank` > 0 ORDER BY `installed_rank`",
		"UPDATE DB.`flyway_schema_history` SET `checksum` = 456 WHERE `installed_rank` = 1",
		"DELETE FROM DB.`flyway_schema_history` WHERE `success` = 0",
		"SELECT RELEASE_LOCK('flyway-1394561235')",
	}
	for _, s := range allowed {
		if _, err := db.Exec(q(s)); err != nil {
			t.Errorf("%s through sqlfwd: %v", q(s), err)
		}
	}
	var locked, n int
	if err := direct.QueryRow(q("SELECT COUNT(*), SUM(`LOCKED` + 0) FROM DB.`DATABASECHANGELOGLOCK`")).Scan(&n, &locked); err != nil || n != 1 || locked != 0 {
		t.Errorf("the lock table on a direct connection: %d rows, locked %d, %v; want one released lock", n, locked, err)
	}
	var sum string
	if err := direct.QueryRow(q("SELECT `checksum` FROM DB.`flyway_schema_history` WHERE `installed_rank` = 1")).Scan(&sum); err != nil || sum != "456" {
		t.Errorf("Flyway's history on a direct connection: checksum %q, %v; want 456", sum, err)
	}

	for _, tc := range []struct{ sql, rule string }{
		{"DELETE FROM DB.`DATABASECHANGELOG`", "no-unfiltered-writes"},
		{"DELETE FROM DB.`DATABASECHANGELOGLOCK` WHERE 1=1", "no-unfiltered-writes"},
		{"DELETE FROM DB.`flyway_schema_history`", "no-unfiltered-writes"},
		{"UPDATE DB.`DATABASECHANGELOG` SET `MD5SUM` = NULL", "no-unfiltered-writes"},
	} {
		_, err := db.Exec(q(tc.sql))
		wantMyBlocked(t, q(tc.sql), err, tc.rule)
	}
	for tbl, want := range map[string]int{"DATABASECHANGELOG": 1, "DATABASECHANGELOGLOCK": 1, "flyway_schema_history": 1} {
		if err := direct.QueryRow(q("SELECT COUNT(*) FROM DB.`" + tbl + "`")).Scan(&n); err != nil || n != want {
			t.Errorf("%s after the denied writes, direct: %d rows, %v; want %d", tbl, n, err, want)
		}
	}
	var md5 string
	if err := direct.QueryRow(q("SELECT COALESCE(`MD5SUM`, 'null') FROM DB.`DATABASECHANGELOG`")).Scan(&md5); err != nil || md5 != "null" {
		t.Errorf("MD5SUM after the conditioned clear: %q, %v; want NULL (the '8:' checksum cleared)", md5, err)
	}
	log := generalLog(t, my)
	for _, s := range allowed {
		if !strings.Contains(log, q(s)) {
			t.Errorf("the general log lacks the allowed %q", q(s))
		}
	}
	for _, s := range []string{"DELETE FROM DB.`DATABASECHANGELOG`\n", "DB.`DATABASECHANGELOGLOCK` WHERE 1=1", "DELETE FROM DB.`flyway_schema_history`\n", "SET `MD5SUM` = NULL\n"} {
		if strings.Contains(log, q(s)) {
			t.Errorf("a denied statement reached the server: %q", q(s))
		}
	}
}
