package pgsql

import (
	"testing"
)

// BenchmarkBodyCold measures the cold verdict (cache off) of statements
// that carry code in strings, against pg_query.Parse of the same text
// alone: the difference is what body.go adds (the PL/pgSQL parser, the
// nested parses and walks). Nothing here asserts a timing.
func BenchmarkBodyCold(b *testing.B) {
	cases := []struct{ name, sql string }{
		{"do-static", `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'mood') THEN CREATE TYPE mood AS ENUM ('sad', 'ok'); END IF; END $$`},
		{"do-execute-const", `DO $$ BEGIN EXECUTE 'CREATE INDEX IF NOT EXISTS users_email ON users (email)'; END $$`},
		{"function-plpgsql", `CREATE FUNCTION bump(u int) RETURNS int LANGUAGE plpgsql AS $$ DECLARE v int; BEGIN UPDATE users SET visits = visits + 1 WHERE id = u RETURNING visits INTO v; IF v > 100 THEN RAISE NOTICE 'busy %', u; END IF; RETURN v; END $$`},
		{"function-sql", `CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'select a + b'`},
		{"query_to_xml-const", `SELECT query_to_xml('SELECT id, name FROM users', true, true, '')`},
		{"trigger-function", `CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$`},
		{"view", `CREATE VIEW order_totals AS SELECT o.id, sum(i.price) AS total FROM orders o JOIN order_items i ON i.order_id = o.id GROUP BY o.id`},
		{"rule", `CREATE RULE v_del AS ON DELETE TO v DO INSTEAD DELETE FROM base_table WHERE id = OLD.id`},
	}
	for _, c := range cases {
		b.Run(c.name+"/verdict", func(b *testing.B) { benchCold(b, c.sql) })
		b.Run(c.name+"/parse-only", func(b *testing.B) { benchBare(b, c.sql) })
	}
}
