package e2e

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// A client that asks for compression gets it on both legs (the server
// reports Compression ON for the session sqlfwd opened), and every statement
// in it is judged: the allowed ones reach the general log, a blocked one
// does not and has no effect. Large statements and results span several
// compressed packets, small ones go uncompressed below the threshold, and a
// LOCAL INFILE upload continues the compressed ids.
func TestMySQLCompressed(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := randomHex(t)
	table := "e2e_comp_" + marker
	direct := myDB(t, my, my.addr(), true)
	t.Cleanup(func() { _, _ = direct.Exec("drop table if exists " + table) })

	t.Run("mariadb --compress", func(t *testing.T) {
		long := strings.Repeat("abcdefghij", 30000) // 300 kB: many compressed packets
		data := filepath.Join(t.TempDir(), "rows.tsv")
		var rows strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&rows, "%d\trow%d\n", 1000+i, i)
		}
		if err := os.WriteFile(data, []byte(rows.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf(`show session status like 'Compression';
create table %[1]s (id int primary key, v longtext);
insert into %[1]s values (1, '%[2]s');
select length(v) from %[1]s where id = 1;
load data local infile '%[3]s' into table %[1]s (id, v);
select concat('rows-', count(*)) from %[1]s;
select sum(length(v)) from (select v from %[1]s, (select 1 union all select 2) x) y;
delete from %[1]s;
select concat('after-', count(*), '-%[4]s') from %[1]s;
`, table, long, data, marker)
		host, port, _ := net.SplitHostPort(d.addr)
		res := runTool(t, 2*time.Minute, script, nil, "mariadb", "--no-defaults", "-h", host, "-P", port, "-u", my.User,
			"--skip-ssl", "--compress", "--local-infile=1", "--force", "-N", "-B", my.Database)
		for _, want := range []string{"Compression\tON", "300000", "rows-5001", "after-5001-" + marker} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("mariadb --compress through sqlfwd: %s\nwant %q in its output", res, want)
			}
		}
		if !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "no-unfiltered-writes") {
			t.Errorf("a WHERE-less delete over a compressed session: %s, want ERROR 1227 naming no-unfiltered-writes", res)
		}
		var n int
		if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 5001 {
			t.Errorf("rows of %s on a direct connection: %d, %v; want 5001 (the delete blocked)", table, n, err)
		}
		log := generalLogOf(t, my, "after-")
		if !strings.Contains(log, "insert into "+table+" values (1, '"+long[:100]) || !strings.Contains(log, "load data local infile") {
			t.Errorf("the general log lacks the compressed session's allowed statements:\n%.2000s", linesWith(log, table))
		}
		if strings.Contains(log, "delete from "+table) {
			t.Errorf("the blocked delete reached the server:\n%s", linesWith(log, "delete from "+table))
		}
	})

	t.Run("go-sql-driver compress=true", func(t *testing.T) {
		cfg := gomysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = my.User, "tcp", d.addr, my.Database
		if err := cfg.Apply(gomysql.EnableCompression(true)); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		var name, value string
		if err := db.QueryRow("show session status like 'Compression'").Scan(&name, &value); err != nil || value != "ON" {
			t.Fatalf("Compression through sqlfwd with compress=true: %q, %v; want ON", value, err)
		}
		big := strings.Repeat("xyz", 100000)
		// prepared (binary protocol) and text, small and large
		if _, err := db.Exec("insert into "+table+" values (?, ?)", 2, big); err != nil {
			t.Fatalf("prepared insert of 300 kB: %v", err)
		}
		var got string
		if err := db.QueryRow("select v from "+table+" where id = ?", 2).Scan(&got); err != nil || got != big {
			t.Errorf("the 300 kB value read back through the compressed session: %d bytes, %v", len(got), err)
		}
		for i := range 200 {
			var x int
			if err := db.QueryRow(fmt.Sprintf("select %d", i)).Scan(&x); err != nil || x != i {
				t.Fatalf("select %d: %d, %v", i, x, err)
			}
		}
		_, err = db.Exec("update " + table + " set v = 'gone'")
		wantMyBlocked(t, "a WHERE-less update over compress=true", err, "no-unfiltered-writes")
		var n int
		if err := db.QueryRow("select count(*) from " + table + " where v = 'gone'").Scan(&n); err != nil || n != 0 {
			t.Errorf("after the blocked update, through the same session: %d rows 'gone', %v; want 0", n, err)
		}
		if err := direct.QueryRow("select count(*) from " + table + " where v = 'gone'").Scan(&n); err != nil || n != 0 {
			t.Errorf("after the blocked update, direct: %d rows 'gone', %v; want 0", n, err)
		}
		if log := generalLog(t, my); strings.Contains(log, "update "+table+" set v = 'gone'") {
			t.Errorf("the blocked update reached the server")
		}
	})

	t.Run("TLS and compression", func(t *testing.T) {
		dir := t.TempDir()
		ca := newTestCA(t, dir, "compca")
		cert, key := ca.issue(t, dir, "sqlfwd", false)
		td := mysqlDaemon(t, my, "--tls-cert", cert, "--tls-key", key, "--tls-require")
		res := tlsCLIInput(t, my, td.addr, my.User, "", []string{"--ssl", "--ssl-ca=" + ca.path, "--ssl-verify-server-cert", "--compress"},
			fmt.Sprintf("status\nshow session status like 'Compression';\nselect concat('tls-', count(*)) from %[1]s;\ndelete from %[1]s;\n", table), "--force")
		for _, want := range []string{"Cipher in use is TLS", "Compression\tON", "tls-5002"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("mariadb --ssl --compress through sqlfwd: %s\nwant %q", res, want)
			}
		}
		if !strings.Contains(res.Stderr, "ERROR 1227 (42000)") {
			t.Errorf("a WHERE-less delete over TLS and compression: %s, want ERROR 1227", res)
		}
		var n int
		if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 5002 {
			t.Errorf("rows of %s on a direct connection: %d, %v; want 5002", table, n, err)
		}
	})
}
