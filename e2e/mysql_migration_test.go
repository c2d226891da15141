package e2e

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine/mysql"
)

// Liquibase's and Flyway's own bookkeeping, as they send it to MariaDB,
// runs through sqlfwd with the default policy: Liquibase's reset of its
// one-row lock table (DELETE FROM db.DATABASECHANGELOGLOCK, the one
// whole-table delete not counted as one), its lock and changelog updates,
// Flyway's history table and advisory lock, Rails' and Django's tables,
// then migrations that create procedures, functions, triggers and views
// (Flyway's and Liquibase's stored-code scripts, the statements a
// DELIMITER-splitting client sends), and the application's writes that fire
// those triggers and call those routines. The variants that add a condition
// or empty the changelog are denied and have no effect. Twice: judged by
// the text alone, and with the catalog in force (the writes judged with the
// triggers and routines the migrations created, once the catalog holds
// them).
func TestMySQLMigrationTools(t *testing.T) {
	my := mariadbEnv(t)
	t.Run("text", func(t *testing.T) { mysqlMigrationTools(t, my, mysqlDaemon(t, my), false) })
	t.Run("catalog", func(t *testing.T) {
		mysqlMigrationTools(t, my, myCatalogDaemon(t, my, policyWith(t, mysql.DefaultPolicyYAML(), "", "")), true)
	})
}

func mysqlMigrationTools(t *testing.T, my myEnv, d *daemon, catalog bool) {
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
		// Rails (ActiveRecord 7, mysql2) and Django 5's bookkeeping
		"CREATE TABLE DB.`schema_migrations` (`version` varchar(255) NOT NULL PRIMARY KEY)",
		"CREATE TABLE DB.`ar_internal_metadata` (`key` varchar(255) NOT NULL PRIMARY KEY, `value` varchar(255), `created_at` datetime(6) NOT NULL, `updated_at` datetime(6) NOT NULL)",
		"SELECT GET_LOCK('2873201940958212497', 0)",
		"INSERT INTO DB.`ar_internal_metadata` (`key`, `value`, `created_at`, `updated_at`) VALUES ('environment', 'production', '2026-12-02 14:00:00.000001', '2026-12-02 14:00:00.000001')",
		"INSERT INTO DB.`schema_migrations` (`version`) VALUES ('20261202140000')",
		"SELECT RELEASE_LOCK('2873201940958212497')",
		"CREATE TABLE DB.`django_migrations` (`id` bigint AUTO_INCREMENT NOT NULL PRIMARY KEY, `app` varchar(255) NOT NULL, `name` varchar(255) NOT NULL, `applied` datetime(6) NOT NULL)",
		"INSERT INTO DB.`django_migrations` (`app`, `name`, `applied`) VALUES ('polls', '0001_initial', '2026-12-02 14:00:02.000000')",
		// Flyway V2__stored_code.sql / Liquibase sql changesets
		// (splitStatements off): tables, trigger, procedures, a function,
		// views, replaced
		"CREATE TABLE DB.`customers` (`id` INT AUTO_INCREMENT PRIMARY KEY, `email` VARCHAR(100) NOT NULL UNIQUE, `updated_at` DATETIME NULL)",
		"CREATE TABLE DB.`orders` (`id` INT AUTO_INCREMENT PRIMARY KEY, `customer_id` INT NOT NULL, `total` DECIMAL(10,2) NOT NULL DEFAULT 0, `status` VARCHAR(10) NOT NULL DEFAULT 'new', CONSTRAINT `fk_orders_customer` FOREIGN KEY (`customer_id`) REFERENCES DB.`customers` (`id`) ON DELETE CASCADE)",
		"CREATE TABLE DB.`audit_log` (`id` INT AUTO_INCREMENT PRIMARY KEY, `tbl` VARCHAR(64) NOT NULL, `op` VARCHAR(10) NOT NULL, `row_id` INT, `at` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)",
		"CREATE TRIGGER DB.`customers_touch` BEFORE UPDATE ON DB.`customers` FOR EACH ROW SET NEW.updated_at = NOW()",
		"CREATE TRIGGER DB.`orders_ai` AFTER INSERT ON DB.`orders` FOR EACH ROW INSERT INTO DB.`audit_log` (`tbl`, `op`, `row_id`) VALUES ('orders', 'INSERT', NEW.id)",
		"CREATE DEFINER = CURRENT_USER TRIGGER DB.`orders_ad` AFTER DELETE ON DB.`orders` FOR EACH ROW BEGIN\n  INSERT INTO DB.`audit_log` (`tbl`, `op`, `row_id`) VALUES ('orders', 'DELETE', OLD.id);\nEND",
		"CREATE PROCEDURE DB.`close_order`(IN oid INT)\nBEGIN\n  UPDATE DB.`orders` SET `status` = 'done' WHERE `id` = oid;\nEND",
		"CREATE PROCEDURE DB.`archive_orders`(IN keep_days INT)\nMODIFIES SQL DATA\nBEGIN\n  DECLARE n INT DEFAULT 0;\n  DELETE FROM DB.`orders` WHERE `status` = 'done' AND `id` > keep_days;\n  SET n = ROW_COUNT();\n  SELECT n;\nEND",
		"CREATE FUNCTION DB.`customer_total`(cid INT) RETURNS DECIMAL(10,2) READS SQL DATA\nBEGIN\n  RETURN (SELECT COALESCE(SUM(`total`), 0) FROM DB.`orders` WHERE `customer_id` = cid);\nEND",
		"CREATE VIEW DB.`customer_totals` AS SELECT c.`id`, c.`email`, DB.`customer_total`(c.`id`) AS `total` FROM DB.`customers` c",
		"CREATE OR REPLACE VIEW DB.`open_orders` AS SELECT `id`, `customer_id`, `total` FROM DB.`orders` WHERE `status` <> 'done'",
		"CREATE OR REPLACE SQL SECURITY INVOKER VIEW DB.`open_orders` AS SELECT `id`, `customer_id`, `total`, `status` FROM DB.`orders` WHERE `status` <> 'done'",
		"DROP PROCEDURE IF EXISTS DB.`close_order`",
		"CREATE PROCEDURE DB.`close_order`(IN oid INT) UPDATE DB.`orders` SET `status` = 'done' WHERE `id` = oid",
		"INSERT INTO DB.`flyway_schema_history` (`installed_rank`, `version`, `description`, `type`, `script`, `checksum`, `installed_by`, `execution_time`, `success`) VALUES (2, '2', 'stored code', 'SQL', 'V2__stored_code.sql', 991, 'app', 40, 1)",
	}
	for _, s := range allowed {
		if _, err := db.Exec(q(s)); err != nil {
			t.Errorf("%s through sqlfwd: %v", q(s), err)
		}
	}
	if catalog {
		// The application's writes are judged with the migrations'
		// triggers and routines in the catalog.
		waitCatalogHas(t, d, "customer_total")
	}
	app := []string{
		"INSERT INTO DB.`customers` (`email`) VALUES ('a@example.com'), ('b@example.com')",
		"INSERT INTO DB.`orders` (`customer_id`, `total`) VALUES (1, 10.5), (2, 3), (2, 4)",
		"UPDATE DB.`customers` SET `email` = 'ann@example.com' WHERE `id` = 1",
		"CALL DB.`close_order`(1)",
		"SELECT `id`, `total` FROM DB.`customer_totals` ORDER BY `id`",
		"SELECT DB.`customer_total`(2)",
		"SELECT * FROM DB.`open_orders`",
		"CALL DB.`archive_orders`(0)",
		"DELETE FROM DB.`customers` WHERE `id` = 2",
	}
	for _, s := range app {
		rows, err := db.Query(q(s))
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			t.Errorf("%s through sqlfwd: %v", q(s), err)
		}
	}
	allowed = append(allowed, app...)
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
	for tbl, want := range map[string]int{"DATABASECHANGELOG": 1, "DATABASECHANGELOGLOCK": 1, "flyway_schema_history": 2} {
		if err := direct.QueryRow(q("SELECT COUNT(*) FROM DB.`" + tbl + "`")).Scan(&n); err != nil || n != want {
			t.Errorf("%s after the denied writes, direct: %d rows, %v; want %d", tbl, n, err, want)
		}
	}
	var md5 string
	if err := direct.QueryRow(q("SELECT COALESCE(`MD5SUM`, 'null') FROM DB.`DATABASECHANGELOG`")).Scan(&md5); err != nil || md5 != "null" {
		t.Errorf("MD5SUM after the conditioned clear: %q, %v; want NULL (the '8:' checksum cleared)", md5, err)
	}
	// The effect of the triggers and routines: order 1 closed and
	// archived, 2 and 3 cascaded away; each insert and the archive's delete
	// audited (a cascaded foreign-key action fires no trigger in MariaDB).
	var orders, audits, deletes int
	if err := direct.QueryRow(q("SELECT (SELECT COUNT(*) FROM DB.`orders`), (SELECT COUNT(*) FROM DB.`audit_log`), (SELECT COUNT(*) FROM DB.`audit_log` WHERE `op` = 'DELETE')")).Scan(&orders, &audits, &deletes); err != nil || orders != 0 || audits != 4 || deletes != 1 {
		t.Errorf("orders %d, audit rows %d (deletes %d), %v; want 0, 4, 1", orders, audits, deletes, err)
	}
	var touched int
	if err := direct.QueryRow(q("SELECT COUNT(*) FROM DB.`customers` WHERE `updated_at` IS NOT NULL AND `email` = 'ann@example.com'")).Scan(&touched); err != nil || touched != 1 {
		t.Errorf("customers touched by the trigger: %d, %v; want 1", touched, err)
	}
	log := generalLog(t, my)
	oneLine := strings.ReplaceAll(log, "\n", `\n`) // a multi-line statement's lines as one
	for _, s := range allowed {
		if !strings.Contains(oneLine, strings.ReplaceAll(q(s), "\n", `\n`)) {
			t.Errorf("the general log lacks the allowed %q", q(s))
		}
	}
	for _, s := range []string{"DELETE FROM DB.`DATABASECHANGELOG`\n", "DB.`DATABASECHANGELOGLOCK` WHERE 1=1", "DELETE FROM DB.`flyway_schema_history`\n", "SET `MD5SUM` = NULL\n"} {
		if strings.Contains(log, q(s)) {
			t.Errorf("a denied statement reached the server: %q", q(s))
		}
	}
}
