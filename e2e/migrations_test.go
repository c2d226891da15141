package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// migStmt is one statement a migration tool sends: its text (SCHEMA stands
// for the test's schema), and its parameters when the tool sends it by the
// extended protocol (pgjdbc, the Rails pg adapter); ext without args is an
// extended-protocol statement with none (pgjdbc sends DDL so).
type migStmt struct {
	tool, sql string
	ext       bool
	args      []string
}

// pgMigrations are the statements Flyway, Liquibase, Rails and Django send
// to PostgreSQL for their bookkeeping and for migrations that create
// ordinary functions, trigger functions, triggers, views and rules, in the
// order they send them (the bookkeeping as each tool's source writes it:
// Flyway's PostgreSQL createMetaDataTable and its history INSERT, Liquibase's
// lock service and changelog, ActiveRecord's SchemaMigration and
// InternalMetadata, Django's MigrationRecorder and schema editor).
var pgMigrations = []migStmt{
	// Flyway: advisory lock, its history table, a versioned migration with
	// tables, trigger functions and triggers, one with a SECURITY DEFINER
	// function of its own search_path and a procedure, a repeatable
	// migration replacing views, one with rules.
	{tool: "flyway", sql: `SELECT pg_try_advisory_xact_lock(77431708279161)`, ext: true},
	{tool: "flyway", sql: `SET search_path = "SCHEMA"`, ext: true},
	{tool: "flyway", sql: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)`, ext: true, args: []string{"SCHEMA"}},
	{tool: "flyway", sql: `CREATE TABLE "SCHEMA"."flyway_schema_history" (
    "installed_rank" INT NOT NULL,
    "version" VARCHAR(50),
    "description" VARCHAR(200) NOT NULL,
    "type" VARCHAR(20) NOT NULL,
    "script" VARCHAR(1000) NOT NULL,
    "checksum" INTEGER,
    "installed_by" VARCHAR(100) NOT NULL,
    "installed_on" TIMESTAMP NOT NULL DEFAULT now(),
    "execution_time" INTEGER NOT NULL,
    "success" BOOLEAN NOT NULL
)`, ext: true},
	{tool: "flyway", sql: `ALTER TABLE "SCHEMA"."flyway_schema_history" ADD CONSTRAINT "flyway_schema_history_pk" PRIMARY KEY ("installed_rank")`, ext: true},
	{tool: "flyway", sql: `CREATE INDEX "flyway_schema_history_s_idx" ON "SCHEMA"."flyway_schema_history" ("success")`, ext: true},
	{tool: "flyway", sql: `SELECT "installed_rank","version","description","type","script","checksum","installed_on","installed_by","execution_time","success" FROM "SCHEMA"."flyway_schema_history" WHERE "installed_rank" > $1 ORDER BY "installed_rank"`, ext: true, args: []string{"-1"}},
	// V1__init.sql
	{tool: "flyway", sql: `CREATE TABLE customers (id bigserial PRIMARY KEY, email text NOT NULL UNIQUE, name text, updated_at timestamptz NOT NULL DEFAULT now())`, ext: true},
	{tool: "flyway", sql: `CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE, total numeric(10, 2) NOT NULL DEFAULT 0, status text NOT NULL DEFAULT 'new', updated_at timestamptz NOT NULL DEFAULT now())`, ext: true},
	{tool: "flyway", sql: `CREATE TABLE audit_log (id bigserial PRIMARY KEY, tbl text NOT NULL, op text NOT NULL, row_id bigint, at timestamptz NOT NULL DEFAULT now())`, ext: true},
	{tool: "flyway", sql: `INSERT INTO "SCHEMA"."flyway_schema_history" ("installed_rank", "version", "description", "type", "script", "checksum", "installed_by", "execution_time", "success") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, ext: true,
		args: []string{"1", "1", "init", "SQL", "V1__init.sql", "-1534912302", "app", "12", "true"}},
	// V2__functions.sql
	{tool: "flyway", sql: `CREATE OR REPLACE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END;
$$`, ext: true},
	{tool: "flyway", sql: `CREATE TRIGGER customers_updated_at BEFORE UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION set_updated_at()`, ext: true},
	{tool: "flyway", sql: `CREATE TRIGGER orders_updated_at BEFORE UPDATE ON orders FOR EACH ROW EXECUTE PROCEDURE set_updated_at()`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO audit_log (tbl, op, row_id) VALUES (TG_TABLE_NAME, TG_OP, OLD.id);
    RETURN OLD;
  END IF;
  INSERT INTO audit_log (tbl, op, row_id) VALUES (TG_TABLE_NAME, TG_OP, NEW.id);
  RETURN NEW;
END;
$$`, ext: true},
	{tool: "flyway", sql: `CREATE TRIGGER orders_audit AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION audit()`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE FUNCTION customer_total(cid bigint) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(total), 0) FROM orders WHERE customer_id = cid $$`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE FUNCTION archive_orders(before timestamptz) RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = SCHEMA, pg_temp AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM orders WHERE status = 'done' AND updated_at < before;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END;
$$`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE PROCEDURE close_order(oid bigint) LANGUAGE sql BEGIN ATOMIC UPDATE orders SET status = 'done' WHERE id = oid; END`, ext: true},
	{tool: "flyway", sql: `COMMENT ON FUNCTION audit() IS 'writes one audit_log row per changed order'`, ext: true},
	{tool: "flyway", sql: `GRANT EXECUTE ON FUNCTION customer_total(bigint) TO PUBLIC`, ext: true},
	{tool: "flyway", sql: `INSERT INTO "SCHEMA"."flyway_schema_history" ("installed_rank", "version", "description", "type", "script", "checksum", "installed_by", "execution_time", "success") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, ext: true,
		args: []string{"2", "2", "functions", "SQL", "V2__functions.sql", "99120043", "app", "30", "true"}},
	// V3__rules.sql
	{tool: "flyway", sql: `CREATE RULE audit_log_no_delete AS ON DELETE TO audit_log DO INSTEAD NOTHING`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE RULE audit_log_no_update AS ON UPDATE TO audit_log DO INSTEAD NOTHING`, ext: true},
	{tool: "flyway", sql: `CREATE TABLE orders_archive (LIKE orders INCLUDING DEFAULTS)`, ext: true},
	{tool: "flyway", sql: `CREATE RULE orders_archive_copy AS ON DELETE TO orders WHERE OLD.status = 'done' DO ALSO INSERT INTO orders_archive SELECT OLD.*`, ext: true},
	// R__views.sql (repeatable: replaced on every change)
	{tool: "flyway", sql: `DROP VIEW IF EXISTS customer_totals`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE VIEW customer_totals AS SELECT c.id, c.email, customer_total(c.id) AS total FROM customers c`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE VIEW open_orders AS SELECT id, customer_id, total FROM orders WHERE status <> 'done'`, ext: true},
	{tool: "flyway", sql: `CREATE OR REPLACE RULE open_orders_insert AS ON INSERT TO open_orders DO INSTEAD INSERT INTO orders (customer_id, total) VALUES (NEW.customer_id, NEW.total)`, ext: true},
	{tool: "flyway", sql: `UPDATE "SCHEMA"."flyway_schema_history" SET "checksum" = $1 WHERE "version" IS NULL AND "script" = $2`, ext: true, args: []string{"771", "R__views.sql"}},
	{tool: "flyway", sql: `DELETE FROM "SCHEMA"."flyway_schema_history" WHERE "success" = $1`, ext: true, args: []string{"false"}},

	// Liquibase: its lock table (the reset of the fresh one-row lock table
	// is a DELETE without WHERE, as the tool sends it), changelog, a
	// changeset with a trigger function, a view replaced.
	{tool: "liquibase", sql: `SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2`, ext: true, args: []string{"SCHEMA", "databasechangeloglock"}},
	{tool: "liquibase", sql: `CREATE TABLE SCHEMA.databasechangeloglock (ID INTEGER NOT NULL, LOCKED BOOLEAN NOT NULL, LOCKGRANTED TIMESTAMP WITHOUT TIME ZONE, LOCKEDBY VARCHAR(255), CONSTRAINT databasechangeloglock_pkey PRIMARY KEY (ID))`, ext: true},
	{tool: "liquibase", sql: `DELETE FROM SCHEMA.databasechangeloglock`, ext: true},
	{tool: "liquibase", sql: `INSERT INTO SCHEMA.databasechangeloglock (ID, LOCKED) VALUES (1, FALSE)`, ext: true},
	{tool: "liquibase", sql: `SELECT LOCKED FROM SCHEMA.databasechangeloglock WHERE ID=1`, ext: true},
	{tool: "liquibase", sql: `UPDATE SCHEMA.databasechangeloglock SET LOCKED = TRUE, LOCKEDBY = 'build-7 (10.0.0.7)', LOCKGRANTED = NOW() WHERE ID = 1 AND LOCKED = FALSE`, ext: true},
	{tool: "liquibase", sql: `CREATE TABLE SCHEMA.databasechangelog (ID VARCHAR(255) NOT NULL, AUTHOR VARCHAR(255) NOT NULL, FILENAME VARCHAR(255) NOT NULL, DATEEXECUTED TIMESTAMP WITHOUT TIME ZONE NOT NULL, ORDEREXECUTED INTEGER NOT NULL, EXECTYPE VARCHAR(10) NOT NULL, MD5SUM VARCHAR(35), DESCRIPTION VARCHAR(255), COMMENTS VARCHAR(255), TAG VARCHAR(255), LIQUIBASE VARCHAR(20), CONTEXTS VARCHAR(255), LABELS VARCHAR(255), DEPLOYMENT_ID VARCHAR(10))`, ext: true},
	{tool: "liquibase", sql: `SELECT MD5SUM FROM SCHEMA.databasechangelog WHERE MD5SUM IS NOT NULL LIMIT 1`, ext: true},
	{tool: "liquibase", sql: `SELECT * FROM SCHEMA.databasechangelog ORDER BY DATEEXECUTED ASC, ORDEREXECUTED ASC`, ext: true},
	{tool: "liquibase", sql: `CREATE TABLE SCHEMA.person (id SERIAL NOT NULL, name VARCHAR(50) NOT NULL, CONSTRAINT person_pkey PRIMARY KEY (id))`, ext: true},
	{tool: "liquibase", sql: `CREATE OR REPLACE FUNCTION SCHEMA.person_name_lower() RETURNS trigger AS $BODY$
BEGIN
    NEW.name = lower(NEW.name);
    RETURN NEW;
END;
$BODY$ LANGUAGE plpgsql`, ext: true},
	{tool: "liquibase", sql: `CREATE TRIGGER person_name_lower BEFORE INSERT OR UPDATE ON SCHEMA.person FOR EACH ROW EXECUTE PROCEDURE SCHEMA.person_name_lower()`, ext: true},
	{tool: "liquibase", sql: `CREATE VIEW SCHEMA.person_v AS SELECT id, name FROM SCHEMA.person`, ext: true},
	{tool: "liquibase", sql: `CREATE OR REPLACE VIEW SCHEMA.person_v AS SELECT id, name, upper(name) AS shout FROM SCHEMA.person`, ext: true},
	{tool: "liquibase", sql: `INSERT INTO SCHEMA.databasechangelog (ID, AUTHOR, FILENAME, DATEEXECUTED, ORDEREXECUTED, MD5SUM, DESCRIPTION, COMMENTS, EXECTYPE, CONTEXTS, LABELS, LIQUIBASE, DEPLOYMENT_ID) VALUES ('1', 'me', 'db/changelog.xml', NOW(), 1, '9:4a8b7c', 'createTable tableName=person', '', 'EXECUTED', NULL, NULL, '4.29.2', '3345678901')`, ext: true},
	{tool: "liquibase", sql: `UPDATE SCHEMA.databasechangelog SET MD5SUM = NULL WHERE MD5SUM IS NOT NULL AND MD5SUM NOT LIKE '9:%'`, ext: true},
	{tool: "liquibase", sql: `UPDATE SCHEMA.databasechangeloglock SET LOCKED = FALSE, LOCKEDBY = NULL, LOCKGRANTED = NULL WHERE ID = 1`, ext: true},

	// Rails (ActiveRecord 7): its advisory lock, schema_migrations and
	// ar_internal_metadata, a migration in a transaction, a function, trigger
	// and view created with execute (the fx, hair_trigger and scenic gems').
	{tool: "rails", sql: `SELECT pg_try_advisory_lock(4168474223616011625)`},
	{tool: "rails", sql: `CREATE TABLE "schema_migrations" ("version" character varying NOT NULL PRIMARY KEY)`},
	{tool: "rails", sql: `CREATE TABLE "ar_internal_metadata" ("key" character varying NOT NULL PRIMARY KEY, "value" character varying, "created_at" timestamp(6) NOT NULL, "updated_at" timestamp(6) NOT NULL)`},
	{tool: "rails", sql: `SELECT "ar_internal_metadata"."value" FROM "ar_internal_metadata" WHERE "ar_internal_metadata"."key" = $1 LIMIT $2`, ext: true, args: []string{"environment", "1"}},
	{tool: "rails", sql: `INSERT INTO "ar_internal_metadata" ("key", "value", "created_at", "updated_at") VALUES ('environment', 'production', '2026-12-02 14:00:00.000001', '2026-12-02 14:00:00.000001') RETURNING "key"`},
	{tool: "rails", sql: `SELECT "schema_migrations"."version" FROM "schema_migrations" ORDER BY "schema_migrations"."version" ASC`},
	{tool: "rails", sql: `BEGIN`},
	{tool: "rails", sql: `CREATE TABLE "users" ("id" bigserial primary key, "email" character varying NOT NULL, "search" tsvector, "created_at" timestamp(6) NOT NULL, "updated_at" timestamp(6) NOT NULL)`},
	{tool: "rails", sql: `CREATE UNIQUE INDEX "index_users_on_email" ON "users" ("email")`},
	{tool: "rails", sql: `ALTER TABLE "orders" ADD "user_id" bigint`},
	{tool: "rails", sql: `CREATE INDEX "index_orders_on_user_id" ON "orders" ("user_id")`},
	{tool: "rails", sql: `ALTER TABLE "orders" ADD CONSTRAINT "fk_rails_f868b47f6a" FOREIGN KEY ("user_id") REFERENCES "users" ("id")`},
	{tool: "rails", sql: `CREATE OR REPLACE FUNCTION users_search_update() RETURNS trigger AS $$
begin
  new.search := to_tsvector('simple', coalesce(new.email, ''));
  return new;
end
$$ LANGUAGE plpgsql`},
	{tool: "rails", sql: `CREATE TRIGGER users_search_update_tr BEFORE INSERT OR UPDATE OF email ON "users" FOR EACH ROW EXECUTE FUNCTION users_search_update()`},
	{tool: "rails", sql: `CREATE VIEW "active_users" AS SELECT users.id, users.email FROM users WHERE users.created_at > now() - interval '30 days'`},
	{tool: "rails", sql: `INSERT INTO "schema_migrations" ("version") VALUES ('20261202140000') RETURNING "version"`},
	{tool: "rails", sql: `UPDATE "ar_internal_metadata" SET "value" = $1, "updated_at" = $2 WHERE "ar_internal_metadata"."key" = $3`, ext: true, args: []string{"production", "2026-12-02 14:00:01", "environment"}},
	{tool: "rails", sql: `COMMIT`},
	{tool: "rails", sql: `SELECT pg_advisory_unlock(4168474223616011625)`},

	// Django 5: MigrationRecorder's table and rows, the schema editor's
	// CREATE INDEX / ALTER forms, a RunSQL trigger function and trigger.
	{tool: "django", sql: `SELECT c.relname, CASE WHEN c.relispartition THEN 'p' WHEN c.relkind IN ('m', 'v') THEN 'v' ELSE 't' END, obj_description(c.oid, 'pg_class') FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('f', 'm', 'p', 'r', 'v') AND n.nspname NOT IN ('pg_catalog', 'pg_toast') AND pg_catalog.pg_table_is_visible(c.oid)`},
	{tool: "django", sql: `CREATE TABLE "django_migrations" ("id" bigint NOT NULL PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY, "app" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "applied" timestamp with time zone NOT NULL)`},
	{tool: "django", sql: `SELECT "django_migrations"."id", "django_migrations"."app", "django_migrations"."name", "django_migrations"."applied" FROM "django_migrations"`},
	{tool: "django", sql: `BEGIN`},
	{tool: "django", sql: `CREATE TABLE "polls_question" ("id" bigint NOT NULL PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY, "question_text" varchar(200) NOT NULL, "pub_date" timestamp with time zone NOT NULL)`},
	{tool: "django", sql: `CREATE TABLE "polls_choice" ("id" bigint NOT NULL PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY, "choice_text" varchar(200) NOT NULL, "votes" integer NOT NULL, "question_id" bigint NOT NULL)`},
	{tool: "django", sql: `ALTER TABLE "polls_choice" ADD CONSTRAINT "polls_choice_question_id_c5b4b260_fk_polls_question_id" FOREIGN KEY ("question_id") REFERENCES "polls_question" ("id") DEFERRABLE INITIALLY DEFERRED`},
	{tool: "django", sql: `CREATE INDEX "polls_choice_question_id_c5b4b260" ON "polls_choice" ("question_id")`},
	{tool: "django", sql: `CREATE INDEX "polls_question_question_text_3c0a5f25_like" ON "polls_question" ("question_text" varchar_pattern_ops)`},
	{tool: "django", sql: `ALTER TABLE "polls_question" ADD COLUMN "slug" varchar(50) DEFAULT '' NOT NULL`},
	{tool: "django", sql: `ALTER TABLE "polls_question" ALTER COLUMN "slug" DROP DEFAULT`},
	{tool: "django", sql: `ALTER TABLE "polls_question" ALTER COLUMN "question_text" TYPE varchar(300)`},
	{tool: "django", sql: `ALTER TABLE "polls_choice" RENAME COLUMN "votes" TO "vote_count"`},
	{tool: "django", sql: `CREATE OR REPLACE FUNCTION polls_question_slug() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.slug = '' THEN NEW.slug := lower(regexp_replace(NEW.question_text, '[^a-zA-Z0-9]+', '-', 'g')); END IF; RETURN NEW; END $$`},
	{tool: "django", sql: `CREATE TRIGGER polls_question_slug BEFORE INSERT ON "polls_question" FOR EACH ROW EXECUTE FUNCTION polls_question_slug()`},
	{tool: "django", sql: `INSERT INTO "django_migrations" ("app", "name", "applied") VALUES ('polls', '0001_initial', '2026-12-02T14:00:02.000000+00:00'::timestamptz) RETURNING "django_migrations"."id"`},
	{tool: "django", sql: `COMMIT`},
	{tool: "django", sql: `SET CONSTRAINTS "polls_choice_question_id_c5b4b260_fk_polls_question_id" IMMEDIATE; ALTER TABLE "polls_choice" DROP CONSTRAINT "polls_choice_question_id_c5b4b260_fk_polls_question_id"`},
	{tool: "django", sql: `ALTER TABLE "polls_choice" ADD CONSTRAINT "polls_choice_question_id_c5b4b260_fk_polls_question_id" FOREIGN KEY ("question_id") REFERENCES "polls_question" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`},
	{tool: "django", sql: `INSERT INTO "django_migrations" ("app", "name", "applied") VALUES ('polls', '0002_cascade', '2026-12-02T14:00:03.000000+00:00'::timestamptz) RETURNING "django_migrations"."id"`},
}

// pgMigratedApp is what the application sends once the migrations have run
// and the catalog holds what they created: writes that fire the triggers
// and rules (the audit trigger, the cascade into orders and its triggers,
// the rule on the view), reads of the views and calls of the functions.
var pgMigratedApp = []migStmt{
	{tool: "app", sql: `INSERT INTO customers (email, name) VALUES ('a@example.com', 'A'), ('b@example.com', 'B') RETURNING id`},
	{tool: "app", sql: `INSERT INTO orders (customer_id, total) VALUES ($1, $2)`, ext: true, args: []string{"1", "10.50"}},
	{tool: "app", sql: `INSERT INTO orders (customer_id, total) VALUES (2, 3), (2, 4)`},
	{tool: "app", sql: `UPDATE orders SET status = 'done' WHERE id = $1`, ext: true, args: []string{"1"}},
	{tool: "app", sql: `UPDATE customers SET name = 'Ann' WHERE id = 1`},
	{tool: "app", sql: `SELECT id, email, total FROM customer_totals ORDER BY id`},
	{tool: "app", sql: `SELECT customer_total($1)`, ext: true, args: []string{"1"}},
	{tool: "app", sql: `INSERT INTO open_orders (customer_id, total) VALUES (1, 5)`},
	{tool: "app", sql: `SELECT * FROM open_orders WHERE customer_id = 1`},
	{tool: "app", sql: `CALL close_order(4)`},
	{tool: "app", sql: `SELECT archive_orders(now() + interval '1 day')`},
	{tool: "app", sql: `DELETE FROM customers WHERE id = 2`},
	{tool: "app", sql: `DELETE FROM audit_log WHERE id = 1`},
	{tool: "app", sql: `INSERT INTO person (name) VALUES ('Bob')`},
	{tool: "app", sql: `SELECT id, name, shout FROM person_v`},
	{tool: "app", sql: `INSERT INTO users (email, created_at, updated_at) VALUES ('u@example.com', now(), now()) RETURNING "id"`},
	{tool: "app", sql: `SELECT id, email FROM active_users`},
	{tool: "app", sql: `INSERT INTO "polls_question" ("question_text", "pub_date", "slug") VALUES ('What is new?', '2026-12-02T14:00:00+00:00'::timestamptz, '') RETURNING "polls_question"."id"`},
	{tool: "app", sql: `INSERT INTO "polls_choice" ("choice_text", "vote_count", "question_id") VALUES ('Not much', 0, 1) RETURNING "polls_choice"."id"`},
	{tool: "app", sql: `UPDATE "polls_choice" SET "vote_count" = ("polls_choice"."vote_count" + 1) WHERE "polls_choice"."id" = 1`},
	{tool: "app", sql: `SELECT setval(pg_get_serial_sequence('"polls_question"','id'), coalesce(max("id"), 1), max("id") IS NOT null) FROM "polls_question"`},
}

// TestMigrationsCatalogPG: with the catalog in force (sqlfwd in enforce,
// the default policy, a monitoring role's catalog connection), what
// Flyway, Liquibase, Rails and Django send to create and record their
// migrations, functions, trigger functions, triggers, views and rules runs,
// every statement (each one's marker is in the server's statement log and
// the objects exist); then the application's statements that fire those
// triggers and rules, read those views and call those functions run once
// the catalog holds them, with their effect (the audit rows, the cascade,
// the lowered name); then a pg_dump of the schema taken through sqlfwd is
// reloaded through it (psql -f, and pg_restore --clean of the custom
// format) and dumps as the original.
func TestMigrationsCatalogPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog: not meaningful in direct mode")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := randomHex(t)
	schema := "e2e_mig_" + run
	mon := "e2e_mig_monitor"
	pgRoles(t, mon)
	directExec(t, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { directExec(t, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	d := pgCatalogDaemon(t, policyWith(t, pgsql.DefaultPolicyYAML(), "", ""), mon)
	port := portOf(t, d.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, port, pg.User, "options=-csearch_path="+schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	var markers []string
	sendAll := func(phase string, stmts []migStmt) {
		t.Helper()
		for i, s := range stmts {
			m := fmt.Sprintf("sqlfwmig_%s_%s_%d", run, phase, i)
			text := "/* " + m + " */ " + strings.ReplaceAll(s.sql, "SCHEMA", schema)
			markers = append(markers, m)
			if s.ext || s.args != nil {
				args := make([][]byte, len(s.args))
				for j, a := range s.args {
					args[j] = []byte(strings.ReplaceAll(a, "SCHEMA", schema))
				}
				err = conn.ExecParams(ctx, text, args, nil, nil, nil).Read().Err
			} else {
				_, err = conn.Exec(ctx, text).ReadAll()
			}
			if err != nil {
				t.Errorf("%s (%s) through sqlfwd with the catalog: %v", text, s.tool, err)
			}
		}
	}
	sendAll("migrate", pgMigrations)
	// The application's statements are judged with the migrations' objects
	// in the catalog: wait until its read holds the last one created.
	waitCatalogHas(t, d, "polls_question_slug")
	sendAll("app", pgMigratedApp)

	// The effect: every trigger and rule ran.
	q := func(s string) string { return strings.ReplaceAll(s, "SCHEMA", schema) }
	for _, c := range []struct {
		sql  string
		want []int
	}{
		{"SELECT count(*)::int FROM SCHEMA.flyway_schema_history", []int{2}},
		{"SELECT count(*)::int FROM SCHEMA.databasechangeloglock WHERE NOT locked", []int{1}},
		{"SELECT count(*)::int FROM SCHEMA.django_migrations", []int{2}},
		// orders: 1 (done, archived by archive_orders), 2 and 3 of customer 2
		// (cascaded away), 4 (made by the view's rule, closed, archived).
		{"SELECT count(*)::int FROM SCHEMA.orders", []int{0}},
		{"SELECT id::int FROM SCHEMA.orders_archive ORDER BY id", []int{1, 4}},
		// audit_log: 4 inserts, 2 status updates, 4 deletes (2 archived, 2
		// cascaded); the DELETE of row 1 was made nothing by the rule.
		{"SELECT count(*)::int FROM SCHEMA.audit_log", []int{10}},
		{"SELECT count(*)::int FROM SCHEMA.audit_log WHERE op = 'DELETE'", []int{4}},
		{"SELECT count(*)::int FROM SCHEMA.person WHERE name = 'bob'", []int{1}},
		{"SELECT count(*)::int FROM SCHEMA.users WHERE search IS NOT NULL", []int{1}},
		{"SELECT count(*)::int FROM SCHEMA.polls_question WHERE slug = 'what-is-new-'", []int{1}},
		{"SELECT count(*)::int FROM SCHEMA.customers WHERE updated_at > now() - interval '1 hour' AND name = 'Ann'", []int{1}},
	} {
		if got := directInts(t, q(c.sql)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", q(c.sql), got, c.want)
		}
	}
	log := serverLog(t)
	for _, m := range markers {
		if !strings.Contains(log, m+" ") {
			t.Errorf("marker %s of an allowed statement is not in the server log", m)
		}
	}

	// The reload of a dump: functions, trigger functions, triggers, views,
	// rules, their data and sequences, through sqlfwd with the catalog.
	fw := []string{"-h", pg.Host, "-p", strconv.Itoa(port), "-U", pg.User, "-d", pg.Database}
	directArgs := []string{"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User, "-d", pg.Database}
	dumpDirect := func() string {
		t.Helper()
		r := runTool(t, time.Minute, "", nil, "pg_dump", append([]string{"-n", schema}, directArgs...)...)
		if r.Exit != 0 {
			t.Fatalf("pg_dump -n %s straight to PostgreSQL: %s", schema, r)
		}
		return unrestrict(r.Stdout)
	}
	orig := dumpDirect()
	for _, want := range []string{"CREATE FUNCTION " + schema + ".audit()", "CREATE TRIGGER orders_audit", "CREATE VIEW " + schema + ".customer_totals", "CREATE RULE orders_archive_copy", "CREATE PROCEDURE " + schema + ".close_order"} {
		if !strings.Contains(orig, want) {
			t.Fatalf("the dump lacks %q: the test's objects are not what it means", want)
		}
	}
	r := runTool(t, 2*time.Minute, "", nil, "pg_dump", append([]string{"-n", schema}, fw...)...)
	if r.Exit != 0 || r.Stderr != "" || unrestrict(r.Stdout) != orig {
		t.Fatalf("pg_dump -n %s through sqlfwd with the catalog: %s (same as straight: %v)", schema, r, unrestrict(r.Stdout) == orig)
	}
	dir := t.TempDir()
	plain, custom := filepath.Join(dir, "dump.sql"), filepath.Join(dir, "dump.custom")
	if err := os.WriteFile(plain, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runTool(t, time.Minute, "", nil, "pg_dump", append([]string{"-Fc", "-n", schema, "-f", custom}, directArgs...)...); r.Exit != 0 {
		t.Fatalf("pg_dump -Fc: %s", r)
	}
	// dropped through sqlfwd: the DDL starts the read that forgets it
	if r := runTool(t, time.Minute, "", nil, "psql", append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "DROP SCHEMA " + schema + " CASCADE"}, fw...)...); r.Exit != 0 {
		t.Fatalf("DROP SCHEMA through sqlfwd: %s", r)
	}
	waitCatalogHasNot(t, d, "polls_question_slug")
	if r := runTool(t, 2*time.Minute, "", nil, "psql", append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", plain}, fw...)...); r.Exit != 0 || r.Stderr != "" {
		t.Errorf("psql -f (the reload of the plain dump) through sqlfwd with the catalog: %s", r)
	}
	if got := dumpDirect(); got != orig {
		t.Errorf("the schema reloaded through sqlfwd does not dump as the original\n--- reloaded:\n%s\n--- original:\n%s", got, orig)
	}
	// pg_restore --clean drops what the catalog now holds and recreates it.
	waitCatalogHas(t, d, "polls_question_slug")
	if r := runTool(t, 2*time.Minute, "", nil, "pg_restore", append([]string{"--exit-on-error", "--clean", "--if-exists", custom}, fw...)...); r.Exit != 0 || r.Stderr != "" {
		t.Errorf("pg_restore --clean --if-exists through sqlfwd with the catalog: %s", r)
	}
	if got := dumpDirect(); got != orig {
		t.Errorf("the schema restored by pg_restore --clean through sqlfwd does not dump as the original\n--- restored:\n%s\n--- original:\n%s", got, orig)
	}
}

// waitCatalogHas waits until the catalog in force in d (fwctl catalog
// dump over its control socket) holds the text want, e.g. an object's name.
func waitCatalogHas(t *testing.T, d *daemon, want string) {
	t.Helper()
	waitCatalog(t, d, want, true)
}

// waitCatalogHasNot waits until it no longer does.
func waitCatalogHasNot(t *testing.T, d *daemon, want string) {
	t.Helper()
	waitCatalog(t, d, want, false)
}

func waitCatalog(t *testing.T, d *daemon, want string, has bool) {
	t.Helper()
	fw := filepath.Join(binDir, "fwctl")
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := runToolPath(t, fw, "catalog", "dump", "--control-socket", d.control)
		if r.Exit == 0 && strings.Contains(r.Stdout, want) == has {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog in force never came to hold %q = %v: %s", want, has, tail(r.Stdout+r.Stderr, 5))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
