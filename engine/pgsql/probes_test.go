package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestProbes: the probe shapes (probes.go) of the last statement of each
// text, and whether it is a time probe. The corpus
// (testdata/adversarial/09-probes.tsv) holds the variants; this table holds
// the facts behind the rules, the benign faces included.
func TestProbes(t *testing.T) {
	const (
		cat  = engine.ProbeCatalog
		srv  = engine.ProbeServerInfo
		errb = engine.ProbeErrorBased
		bb   = engine.ProbeBooleanBlind
		ce   = engine.ProbeCharExtraction
	)
	for _, c := range []struct {
		sql   string
		want  engine.ProbeSet
		sleep bool
	}{
		// error-based
		{"SELECT name FROM items WHERE id = 1 AND 4307=CAST(('q'||(SELECT COUNT(*)::text FROM public.secrets)||'q')::text AS NUMERIC)", errb, false},
		{"SELECT name FROM items ORDER BY (CAST(CHR(113)||(SELECT value FROM secrets LIMIT 1)::text AS NUMERIC))", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND 1=(SELECT value FROM secrets LIMIT 1)::int", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND 1=(SELECT count(*) FROM secrets)::int", 0, false},
		{"SELECT name FROM items WHERE id = (SELECT value FROM secrets LIMIT 1)::int", 0, false},
		{"SELECT name FROM items WHERE id = 1 AND (SELECT value FROM secrets LIMIT 1)::regclass IS NULL", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND to_number((SELECT value FROM secrets LIMIT 1), '9') = 1", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND xmlparse(document (SELECT value FROM secrets LIMIT 1)) IS NULL", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND jsonb_path_exists('{}', (SELECT value FROM secrets LIMIT 1)::jsonpath)", errb, false},
		{"SELECT name FROM items WHERE id = 1 AND 1=CAST(version() AS int)", errb | srv, false},
		{"SELECT CAST(version() AS int)", 0, false},                                        // no application table: what SELECT version() shows
		{"SELECT current_setting('server_version_num')::integer", 0, false},                // Prisma
		{"SELECT * FROM docs WHERE tenant = current_setting('app.tenant')::int", 0, false}, // row-level security's idiom
		{"SELECT * FROM items WHERE code::int = 5", 0, false},
		// catalog
		{"SELECT name FROM items WHERE id IN (SELECT oid::int FROM pg_class)", cat, false},
		{"SELECT name FROM items JOIN pg_stat_user_tables s ON s.relname = 'items'", 0, false},
		{"SELECT j.* FROM jobs j JOIN pg_locks l ON l.objid = j.id", 0, false},
		{"SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace", 0, false},
		{"CREATE VIEW sizes AS SELECT relname FROM pg_class", 0, false},
		{"SELECT name FROM items WHERE id = 1; SELECT relname FROM pg_class", cat, false},
		{"SELECT 1; SELECT relname FROM pg_class", 0, false},
		{"SET search_path = app; SELECT relname FROM pg_class", 0, false},
		{"BEGIN; SELECT relname FROM pg_class", 0, false},
		// server information
		{"SELECT name FROM items WHERE id = 1 AND version() LIKE 'P%'", srv, false},
		{"SELECT name, (SELECT current_user) FROM items", srv, false},
		{"SELECT name FROM items ORDER BY current_user", srv | bb, false}, // and an order by no column
		{"SELECT name FROM items WHERE owner = current_user", 0, false},
		{"SELECT name, version() FROM items", 0, false},
		{"SELECT name FROM items WHERE id = 1; SELECT version()", srv, false},
		{"UPDATE items SET price = 1 WHERE id = 1; SELECT current_user", srv, false},
		{"SELECT version(); SELECT current_user", 0, false},
		// character extraction
		{"SELECT name FROM items WHERE id = 1 AND ascii(substring((SELECT value FROM secrets) FROM 1 FOR 1)) > 51", ce, false},
		{"SELECT name FROM items WHERE id = 1 AND (SELECT value FROM secrets) LIKE 'a%'", ce, false},
		{"SELECT name FROM items WHERE id = 1 AND (SELECT value FROM secrets) SIMILAR TO 'a%'", ce, false},
		{"SELECT name FROM items WHERE id = 1 AND (SELECT ascii(value) FROM secrets) = 97", ce, false},
		{"SELECT name FROM items WHERE ascii(name) = 97", 0, false},
		{"SELECT name FROM items WHERE (SELECT count(*) FROM orders) > 0", 0, false},
		// boolean-blind
		{"SELECT name FROM items WHERE id = 1 AND 4307=4307", bb, false},
		{"SELECT name FROM items WHERE id = 1 AND NOT 4307=4308", bb, false},
		{"SELECT name FROM items ORDER BY (SELECT (CASE WHEN (4307=4307) THEN 1 ELSE 1/(SELECT 0) END))", bb, false},
		{"SELECT name FROM items WHERE 1=1 AND id = 1", 0, false},
		{"SELECT name FROM items WHERE (email = $1 AND 1=1) LIMIT $2", 0, false},  // Prisma
		{"SELECT name FROM items WHERE name ILIKE '%' || 'nut' || '%'", 0, false}, // psycopg2's client-side parameters
		{"SELECT name FROM items WHERE id = 1 AND 1=0", 0, false},
		{"SELECT name FROM items WHERE id IN (NULL) AND (1 != 1)", 0, false},
		{"SELECT name FROM items WHERE 4307=4307", bb, false},
		{"SELECT name FROM items WHERE id = 1 OR 1=2", bb, false},
		{"SELECT id FROM users WHERE name = '' OR '1'='1' AND pass = 'x'", bb, false}, // '1'='1' is no idiom
		{"UPDATE items SET name = '' < '' WHERE id = 1", bb, false},
		{"SELECT name FROM items ORDER BY 1=1", bb, false},
		{"SELECT name FROM items ORDER BY lo_get(16400)", bb, false},
		{"SELECT name FROM items ORDER BY 2, random()", 0, false},
		{"SELECT name FROM items ORDER BY lower(name), $1", 0, false},
		{"SELECT name FROM items WHERE id = LENGTH(version())", srv, false},
		{"SELECT name FROM items WHERE price > 10 * $1", 0, false},
		// a value computed from literals in a literal's place
		{"SELECT name FROM items WHERE name = 'nu' || 't'", bb, false},
		{"SELECT name FROM items WHERE name = 'A '||' B'", bb, false},
		{"SELECT name FROM items WHERE name = '1'||'asd'||''", bb, false},
		{"SELECT id FROM users WHERE name = 'A' || 'B' AND pass = 'x'", bb, false},
		{"SELECT name FROM items WHERE id = 1*56", 0, false}, // constant arithmetic on numbers
		{"SELECT name FROM items WHERE id = 2-1", 0, false},  // constant arithmetic on numbers
		{"SELECT name FROM items WHERE 2-1 = id", 0, false},  // constant arithmetic on numbers
		{"SELECT name FROM items WHERE id = div(23,-2)", bb, false},
		{"SELECT name FROM items WHERE id = div (23.23 , 2)", bb, false},
		{"SELECT name FROM items WHERE id <> mod(7, 3) + 1", bb, false},
		{"SELECT name FROM items WHERE price > 10 * 2", 0, false},
		{"UPDATE items SET name = 'x' || 'y', price = 2*3 WHERE id = 1", bb, false},
		{"SELECT name FROM items WHERE id = floor(pi())", bb, false},
		{"UPDATE items SET name = 'A' || 'B' WHERE id = 1", bb, false},
		{"UPDATE items SET name = 'x', price = 2*3 WHERE id = 1", 0, false},      // constant arithmetic on numbers
		{"SELECT name FROM items WHERE name LIKE '%' || 'nut' || '%'", 0, false}, // psycopg2's
		{"SELECT name FROM items WHERE name ~ '^' || 'nut'", 0, false},
		{"SELECT name FROM items WHERE id = -1", 0, false},
		{"SELECT name FROM items WHERE id = 1", 0, false},
		{"SELECT name FROM items WHERE created > now() - interval '1 day'", 0, false},
		{"SELECT name FROM items WHERE created > '2024-01-01'::date + 1", 0, false},
		{"SELECT name FROM items WHERE created > to_timestamp(1700000000)", 0, false},
		{"SELECT name FROM items WHERE id = $1 + 1", 0, false},
		{"SELECT name FROM items WHERE price * 2 > 10", 0, false},
		{"SELECT name, 1 + 1 FROM items LIMIT 10 OFFSET 2*10", 0, false},
		{"UPDATE items SET price = price * 1.1, stock = stock - 1 WHERE id = 1", 0, false},
		{"UPDATE items SET name = name || ' (old)' WHERE id = 1", 0, false},
		{"UPDATE items SET name = $1 || $2 WHERE id = 1", 0, false},
		{"INSERT INTO items (name, price) VALUES ('a' || 'b', 2*3)", 0, false},
		{"SELECT 'A' || 'B', 1*56", 0, false}, // no application table
		// heavy work
		{"SELECT name FROM items WHERE id = 1 AND 1=(SELECT count(*) FROM generate_series(1, 5000000))", 0, true},
		{"SELECT name FROM items WHERE id = 1 AND 1=(SELECT count(*) FROM generate_series(1, (SELECT max(id) FROM items)))", 0, true},
		{"WITH s AS (SELECT generate_series(1, (SELECT max(id) FROM items)) AS i) SELECT i FROM s WHERE i NOT IN (SELECT id FROM items)", 0, false},
		{"SELECT name FROM items WHERE id IN (SELECT generate_series(1, 10))", 0, false},
		{"SELECT * FROM slots WHERE day IN (SELECT generate_series(now()::date, now()::date + 30, '1 day'))", 0, false},
		{"SELECT name FROM items WHERE id = 1; SELECT count(*) FROM generate_series(1, 5000000)", 0, true},
		{"SELECT count(*) FROM generate_series(1, 5000000)", 0, false},
	} {
		tf := analyze(c.sql)
		if tf.ParseError {
			t.Errorf("%s: parse error", c.sql)
			continue
		}
		f := tf.Stmts[len(tf.Stmts)-1]
		if f.Probes != c.want || f.TimeProbe != c.sleep {
			t.Errorf("%s:\n got probes [%v] time probe %v\nwant probes [%v] time probe %v", c.sql, f.Probes, f.TimeProbe, c.want, c.sleep)
		}
	}
}
