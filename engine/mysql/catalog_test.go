package mysql

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// myCatalogRows is what MariaDB 10.11 answers CatalogQueries for a schema
// shop with a secrets table, a view over it (VIEW_DEFINITION as the server
// prints it), a procedure that deletes every row of orders, a function
// that reads secrets, and a trigger on audit whose action is a WHERE-less
// UPDATE of orders.
func myCatalogRows() [][][]string {
	return [][][]string{
		{{"shop", "secrets"}, {"shop", "orders"}, {"shop", "audit"}, {"shop", "v_secrets"}, {"shop", "items"}, {"mysql", "user"}, {"information_schema", "TABLES"}},
		{
			{"shop", "v_secrets", "select `shop`.`secrets`.`id` AS `id`,`shop`.`secrets`.`s` AS `s` from `shop`.`secrets`"},
			{"shop", "v_items", "select `shop`.`items`.`id` AS `id` from `shop`.`items`"},
			{"shop", "v_union", "select `shop`.`items`.`id` AS `id` from `shop`.`items` union select `mysql`.`user`.`Password` AS `Password` from `mysql`.`user`"},
		},
		{
			{"shop", "wipe", "PROCEDURE", "", "BEGIN DELETE FROM orders; END"},
			{"shop", "wipe1", "PROCEDURE", "", "DELETE FROM orders"},
			{"shop", "peek", "FUNCTION", "text", "RETURN (SELECT s FROM secrets LIMIT 1)"},
			{"shop", "add1", "FUNCTION", "int(11)", "RETURN 1 + 1"},
		},
		{{"shop", "orders", "id"}, {"shop", "items", "id"}},
		{
			{"shop", "t_touch", "shop", "audit", "INSERT", "AFTER", "UPDATE orders SET total = 0"},
		},
	}
}

func TestMyCatalogObjects(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(myCatalogRows(), engine.CatalogOptions{})
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := engine.ParsePolicy([]byte(`
rules:
  - {id: app-no-secrets, action: deny, users: [app], match: {tables: [secrets]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := &engine.Session{User: "app", Database: "shop"}
	// disguised: a NULL test written otherwise than col IS [NOT] NULL,
	// which is counted as every row without the catalog as with it
	// (catalog.go plainNullTests)
	const disguised = "disguised"
	tests := []struct {
		e              *engine.Engine
		sql, rule, via string
	}{
		{scoped, "SELECT * FROM v_secrets", "app-no-secrets", "view shop.v_secrets"},
		{scoped, "SELECT * FROM shop.v_secrets WHERE id = 1", "app-no-secrets", "v_secrets"},
		{scoped, "SELECT peek()", "app-no-secrets", "call shop.peek"},
		{scoped, "SELECT i.id FROM items i JOIN v_secrets v ON v.id = i.id", "app-no-secrets", "v_secrets"},
		{scoped, "SELECT id FROM items WHERE id IN (SELECT id FROM shop.v_secrets)", "app-no-secrets", "v_secrets"},
		{scoped, "SELECT id FROM items UNION SELECT id FROM v_secrets", "app-no-secrets", "v_secrets"},
		{scoped, "INSERT INTO items (id) SELECT id FROM v_secrets", "app-no-secrets", "v_secrets"},
		{scoped, "SELECT id FROM items WHERE peek() = 'x'", "app-no-secrets", "peek"},
		{scoped, "SELECT * FROM v_items", "", ""},
		{def, "CALL wipe()", "no-unfiltered-writes", "call shop.wipe"},
		{def, "CALL shop.wipe1()", "no-unfiltered-writes", "call shop.wipe1"},
		{def, "INSERT INTO audit VALUES (1)", "no-unfiltered-writes", "trigger shop.t_touch on shop.audit"},
		{def, "INSERT INTO audit SELECT id FROM items WHERE id = 1", "no-unfiltered-writes", "trigger shop.t_touch"},
		{def, "INSERT INTO shop.audit (id) VALUES (1), (2)", "no-unfiltered-writes", "trigger shop.t_touch"},
		{def, "DELETE FROM audit WHERE id = 1", "", ""},
		{def, "SELECT add1()", "", ""},
		{def, "SELECT id FROM items WHERE id = 2", "", ""},
		{def, "SELECT * FROM v_union", "no-catalog-union", "view shop.v_union → shop.items, mysql.user"},
		{def, "SELECT * FROM nowhere", "unknown-object", "relation nowhere is not in the catalog"},
		{def, "CALL nowhere()", "unknown-object", "procedure nowhere is not in the catalog"},
		{def, "SELECT * FROM mysql.db WHERE 1 = 0", "", ""},
		{def, "DELETE FROM orders WHERE id IS NOT NULL", "no-unfiltered-writes", "NOT NULL column orders.id"},
		{def, "DELETE FROM orders WHERE id IS NOT NULL LIMIT 1000000", "no-unfiltered-writes", "NOT NULL column orders.id"},
		{def, "UPDATE orders SET total = 0 WHERE id IS NOT NULL LIMIT 18446744073709551615", "no-unfiltered-writes", "NOT NULL"},
		{def, "DELETE FROM shop.orders WHERE orders.id IS NOT NULL", "no-unfiltered-writes", "NOT NULL"},
		{def, "DELETE FROM orders o WHERE NOT (o.id IS NULL)", "no-unfiltered-writes", "NOT NULL"},
		{def, "UPDATE items SET id = id WHERE id IS NOT NULL OR id = 3", "no-unfiltered-writes", "NOT NULL"},
		{def, "DELETE FROM orders WHERE ISNULL(id) = 0", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM orders WHERE NOT ISNULL(id)", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM orders WHERE NOT (id <=> NULL)", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM orders WHERE (NULL <=> orders.id) = 0", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM orders WHERE id <=> NULL IS FALSE", "no-unfiltered-writes", disguised},
		{def, "UPDATE orders SET total = 0 WHERE id = 3 OR ISNULL(id) <> 1", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM shop.orders o WHERE !ISNULL(o.id)", "no-unfiltered-writes", disguised},
		{def, "DELETE FROM orders WHERE ISNULL(total) = 0", "no-unfiltered-writes", disguised}, // a nullable column
		{def, "DELETE FROM orders WHERE ISNULL(id) = 0 LIMIT 5", "", ""},
		{def, "DELETE FROM orders WHERE ISNULL(id) = 0 AND id = 4", "", ""},
		{def, "DELETE FROM orders WHERE ISNULL(id) = 1", "", ""},
		{def, "DELETE FROM orders WHERE id <=> NULL", "", ""},
		{def, "DELETE orders FROM orders JOIN items ON items.id = orders.id WHERE NOT ISNULL(orders.id)", "", ""}, // multi-table: not folded
		{def, "DELETE FROM orders WHERE id > 0", "", ""},                                                          // data-dependent
		{def, "DELETE FROM orders WHERE total IS NOT NULL", "", ""},
		{def, "DELETE FROM orders WHERE id IS NOT NULL AND id = 4", "", ""},
	}
	for _, tc := range tests {
		tc.e.SetCatalog(nil)
		want := ""
		if tc.via == disguised {
			want, tc.via = tc.rule, ""
		}
		if v := tc.e.Judge([]byte(tc.sql), app); v.RuleID != want {
			t.Errorf("%s without the catalog: %s (%s), want %q", tc.sql, v.RuleID, v.Reason, want)
		}
		tc.e.SetCatalog(cat)
		v := tc.e.Judge([]byte(tc.sql), app)
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.via) {
			t.Errorf("%s with the catalog: %s (%s), want %s naming %q", tc.sql, v.RuleID, v.Reason, tc.rule, tc.via)
		}
		tc.e.SetCatalog(nil)
	}
}

// BenchmarkMyCatalogBuild is the cost of one refresh's reading of n tables,
// each with a view, a procedure, a trigger and a NOT NULL column
// (docs/performance.md).
func BenchmarkMyCatalogBuild(b *testing.B) {
	for _, n := range []int{100, 1000} {
		rows := make([][][]string, 5)
		for i := range n {
			t := "t" + strconv.Itoa(i)
			rows[0] = append(rows[0], []string{"shop", t})
			rows[1] = append(rows[1], []string{"shop", "v_" + t, "select `shop`.`" + t + "`.`id` AS `id` from `shop`.`" + t + "` where `shop`.`" + t + "`.`id` > 0"})
			rows[2] = append(rows[2], []string{"shop", "p_" + t, "PROCEDURE", "", "BEGIN UPDATE " + t + " SET n = n + 1 WHERE id = 1; END"})
			rows[3] = append(rows[3], []string{"shop", t, "id"})
			rows[4] = append(rows[4], []string{"shop", "tg_" + t, "shop", t, "INSERT", "AFTER", "INSERT INTO audit VALUES (NEW.id, NOW())"})
		}
		b.Run(strconv.Itoa(n)+"-tables", func(b *testing.B) {
			b.ReportAllocs()
			var c *engine.Catalog
			for range b.N {
				c = Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
			}
			b.ReportMetric(float64(c.Bytes()), "catalog-bytes")
			b.ReportMetric(float64(c.Objects()), "objects")
		})
		b.Run(strconv.Itoa(n)+"-tables-unchanged", func(b *testing.B) {
			prev := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				prev = Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{Previous: prev})
			}
		})
	}
}
