package mysql

import "testing"

// BenchmarkStoredCold measures the cold verdict (cache off) of statements
// that store code (a view, a procedure, a trigger), whose Body stored.go
// adds, against TiDB's parse of the same text alone. Nothing here asserts
// a timing.
func BenchmarkStoredCold(b *testing.B) {
	cases := []struct{ name, sql string }{
		{"view", "CREATE OR REPLACE VIEW order_totals AS SELECT o.id, SUM(i.price) AS total FROM orders o JOIN items i ON i.order_id = o.id GROUP BY o.id"},
		{"procedure", "CREATE PROCEDURE archive(IN before DATE) BEGIN INSERT INTO orders_archive SELECT * FROM orders WHERE created_at < before; DELETE FROM orders WHERE created_at < before; END"},
		{"trigger", "CREATE TRIGGER tr BEFORE UPDATE ON orders FOR EACH ROW SET NEW.updated_at = NOW()"},
	}
	for _, c := range cases {
		b.Run(c.name+"/verdict", func(b *testing.B) { benchCold(b, c.sql) })
	}
}
