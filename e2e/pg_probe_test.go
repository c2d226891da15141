package e2e

// The steps of an extraction on PostgreSQL 15 (issue 22 item 1): error-based
// conversions, catalog and server-information reads inside an application
// statement, character extraction, boolean-blind conjuncts, heavy work and a
// comment that cuts off the rest, through sqlfwd with the embedded default
// policy in enforce mode. Proof is the server's statement log and what the
// same statement does straight to PostgreSQL (an error-based one returns the
// secret in its error message), never only the client's error.

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPGProbesBlocked: each probe, straight to PostgreSQL, runs (and the
// error-based ones put the secret into their error message: the shape is
// real); through sqlfwd it is denied by its rule and never reaches the
// server log; the benign faces pass and answer as they do directly.
func TestPGProbesBlocked(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	d := sharedDaemon(t)
	marker := "pp" + randomHex(t) // in the statements sent through sqlfwd only
	items, secrets := "e2e_items_"+marker, "e2e_secrets_"+marker
	secret := "s3cr" + randomHex(t)
	directExec(t, "CREATE TABLE "+items+" (id int PRIMARY KEY, name text, price numeric)")
	directExec(t, "INSERT INTO "+items+" VALUES (1, 'nut', 2), (2, 'bolt', 3)")
	directExec(t, "CREATE TABLE "+secrets+" (id int, value text)")
	directExec(t, "INSERT INTO "+secrets+" VALUES (1, '"+secret+"')")
	t.Cleanup(func() {
		directExec(t, "DROP TABLE IF EXISTS "+items)
		directExec(t, "DROP TABLE IF EXISTS "+secrets)
	})
	r := strings.NewReplacer("{I}", items, "{S}", secrets)

	// leak: the statement, straight to PostgreSQL, fails with this in its
	// error message.
	probes := []struct{ sql, rule, leak string }{
		// error-based (sqlmap 1.7.2's payload in the numeric, ORDER BY and login slots)
		{"SELECT name, price FROM {I} WHERE id = 1 AND 4307=CAST(('qjzvq'||(SELECT COALESCE(CAST(value AS VARCHAR(10000))::text,(CHR(32))) FROM {S} LIMIT 1)||'qzqbq')::text AS NUMERIC)", "no-error-based-probe", secret},
		{"SELECT name, price FROM {I} ORDER BY (CAST((CHR(113)||CHR(98))||(SELECT value FROM {S} LIMIT 1)::text||(CHR(113)) AS NUMERIC))", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND 1=(SELECT value FROM {S} LIMIT 1)::int", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1)::regclass IS NOT NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND CAST((SELECT value FROM {S} LIMIT 1) AS boolean)", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1)::uuid IS NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1)::int[] IS NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1)::json IS NOT NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND ('{\"a\":'||(SELECT value FROM {S} LIMIT 1)||'}')::jsonb IS NOT NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND xmlparse(document (SELECT value FROM {S} LIMIT 1)) IS NOT NULL", "no-error-based-probe", secret},
		{"SELECT name FROM {I} WHERE id = 1 AND 1=CAST(current_setting('data_directory') AS int)", "no-error-based-probe", "/"},
		// catalog and server information
		{"SELECT name FROM {I} WHERE id = 1 AND EXISTS (SELECT 1 FROM information_schema.tables WHERE table_name = '{S}')", "no-catalog-probe", ""},
		{"SELECT name FROM {I} WHERE id IN (SELECT oid::int FROM pg_class)", "no-catalog-probe", ""},
		{"SELECT name FROM {I} WHERE id = 1; SELECT usename FROM pg_user", "no-catalog-probe", ""},
		{"SELECT name FROM {I} WHERE id = 1 AND version() LIKE 'PostgreSQL%'", "no-server-info-probe", ""},
		{"SELECT name, (SELECT current_user) FROM {I}", "no-server-info-probe", ""},
		{"UPDATE {I} SET price = 2 WHERE id = 1; SELECT current_user", "no-server-info-probe", ""},
		// character by character, boolean-blind, heavy work, a cut-off tail
		{"SELECT name FROM {I} WHERE id = 1 AND ASCII(SUBSTRING((SELECT value FROM {S} LIMIT 1)::text FROM 1 FOR 1))>51", "no-char-extraction", ""},
		{"SELECT name FROM {I} WHERE id = 1 AND (SELECT value FROM {S} LIMIT 1) LIKE 's%'", "no-char-extraction", ""},
		{"SELECT name FROM {I} WHERE id = 1 AND 4307=4307", "no-boolean-blind-probe", ""},
		{"SELECT name FROM {I} ORDER BY (SELECT (CASE WHEN (4307=4307) THEN 1 ELSE 1/(SELECT 0) END))", "no-boolean-blind-probe", ""},
		{"SELECT name FROM {I} WHERE id = 1 AND 1=(SELECT count(*) FROM generate_series(1, 1000000))", "no-time-probe", ""},
		{"SELECT name FROM {I} WHERE name = 'nut' -- ' AND price > 0", "no-comment-tricks", ""},
		// a value computed from literals in a literal's place: it answers as
		// the literal does (the row of nut), which confirms the injection
		{"SELECT name, price FROM {I} WHERE name = 'nu'||'t'", "no-boolean-blind-probe", ""},
		{"SELECT name, price FROM {I} WHERE id = abs(-1)", "no-boolean-blind-probe", ""},
		{"SELECT name, price FROM {I} WHERE id = div(23,-2) + 12", "no-boolean-blind-probe", ""},
		{"UPDATE {I} SET name = 'nu' || 't' WHERE id = 1", "no-boolean-blind-probe", ""},
	}
	benign := []string{
		"SELECT name FROM {I} WHERE 1=1 AND id = 1",
		"SELECT name FROM {I} WHERE price > 0 AND 1=0",
		"SELECT (SELECT count(*) FROM {S})::int AS n, name FROM {I} ORDER BY name",
		"SELECT name FROM {I} WHERE id = (SELECT max(id) FROM {I})::int",
		"SELECT name, current_user = current_user AS me FROM {I} ORDER BY id",
		"SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = '{I}'",
		"SELECT current_setting('server_version_num')::integer AS version",
		"SELECT a.id FROM {I} a WHERE a.id = 1 -- trailing note",
		"SELECT name FROM {I} WHERE name LIKE '%' || 'u' || '%'",
		"SELECT name FROM {I} WHERE id NOT /* the rest */ IN (2) ORDER BY name NULLS /* c */ LAST",
		"UPDATE {I} SET price = price * 1 WHERE id = 1 RETURNING name",
		"SELECT name FROM {I} WHERE id = 2-1 AND price > 10 * 0.1",
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	host, _, err := net.SplitHostPort(d.addr)
	if err != nil {
		t.Fatal(err)
	}
	fw := connect(t, ctx, dsn(host, portOf(t, d.addr), pg.User, ""))
	for _, p := range probes {
		q := r.Replace(p.sql)
		// Straight to PostgreSQL: the probe runs (the shape is real).
		_, err := direct.Exec(ctx, q)
		if p.leak != "" {
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || !strings.Contains(pe.Message+pe.Detail, p.leak) {
				t.Errorf("%s straight to PostgreSQL: want an error carrying %q, got %v", q, p.leak, err)
			}
		} else if err != nil && !strings.Contains(q, "--") {
			t.Errorf("%s straight to PostgreSQL: %v", q, err)
		}
		// Through sqlfwd: denied by its rule.
		_, err = fw.Exec(ctx, "/* "+marker+" */ "+q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" || !strings.Contains(pe.Message, p.rule) {
			t.Errorf("%s through sqlfwd: want 42501 by %s, got %v", q, p.rule, err)
		}
	}
	for _, b := range benign {
		q := r.Replace(b)
		want, err := direct.Exec(ctx, q)
		if err != nil {
			t.Fatalf("%s straight to PostgreSQL: %v", q, err)
		}
		got, err := fw.Exec(ctx, "/* "+marker+" */ "+q)
		if err != nil {
			t.Errorf("%s through sqlfwd: %v", q, err)
		} else if got.String() != want.String() {
			t.Errorf("%s through sqlfwd: %s, straight: %s", q, got, want)
		}
	}
	// The server log: the benign statements reached it, no probe did.
	log := serverLog(t)
	for _, p := range probes {
		if strings.Contains(log, "/* "+marker+" */ "+r.Replace(p.sql)) {
			t.Errorf("denied probe reached PostgreSQL: %s", r.Replace(p.sql))
		}
	}
	for _, b := range benign {
		if !strings.Contains(log, "/* "+marker+" */ "+r.Replace(b)) {
			t.Errorf("benign statement never reached PostgreSQL (the log check sees nothing): %s", r.Replace(b))
		}
	}
	// The secret never reached a client through sqlfwd's connection: the
	// row counts and the secret itself are as they were.
	if n := directInts(t, "SELECT count(*)::int FROM "+secrets+" WHERE value = '"+secret+"'"); len(n) != 1 || n[0] != 1 {
		t.Errorf("secrets table changed: %v", n)
	}
	if n := directInts(t, "SELECT price::int FROM "+items+" WHERE id = 1"); len(n) != 1 || n[0] != 2 {
		t.Errorf("the stacked UPDATE changed %s through sqlfwd: price %v", items, n)
	}
}
