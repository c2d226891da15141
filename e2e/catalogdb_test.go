package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogPerDatabasePG: with the default policy and a catalog
// connection configured for the test database (A), a session in another
// database B of the same server is judged with B's own catalog, which
// sqlfwd reads over a connection of its own to B when the session starts:
// a function of B whose body deletes every row is denied when called (it
// was only logged as unknown_object before), and the server's log shows
// it never ran. With catalog.max_databases 1 a session in a third
// database C is refused while B's catalog has a session, and served once
// it has none (B's catalog closed). DDL in B through sqlfwd reads B's
// catalog again. A database that is dropped leaves its
// catalog failing to read, and a new session there fails at the server.
func TestCatalogPerDatabasePG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	dbB, dbC := "e2e_pdb_b_"+run[:8], "e2e_pdb_c_"+run[:8]
	f, victim := "e2e_pdb_f_"+run, "e2e_pdb_victim_"+run
	app, mon := "e2e_pdb_app_"+run[:8], "e2e_sp_mon"
	pgRoles(t, app, mon)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	in := func(db, sql string) {
		t.Helper()
		c := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, pg.User, db))
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("directly on PostgreSQL in %s: %s: %v", db, sql, err)
		}
	}
	count := func(db, table string) int {
		t.Helper()
		c := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, pg.User, db))
		defer c.Close(context.Background())
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*)::int FROM "+table).Scan(&n); err != nil {
			t.Fatalf("directly in %s: counting %s: %v", db, table, err)
		}
		return n
	}
	for _, db := range []string{dbB, dbC} {
		directExec(t, "CREATE DATABASE "+db)
	}
	t.Cleanup(func() {
		for _, db := range []string{dbB, dbC} {
			directExec(t, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", db))
		}
		directExec(t, fmt.Sprintf("DROP OWNED BY %s CASCADE; DROP ROLE IF EXISTS %s", app, app))
	})
	for _, db := range []string{dbB, dbC} {
		for _, q := range []string{
			fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (1), (2), (3)", victim, victim),
			fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql AS 'DELETE FROM %s; SELECT 1'", f, victim),
			fmt.Sprintf("GRANT ALL ON %s TO %s; GRANT CREATE ON SCHEMA public TO %s", victim, app, app),
		} {
			in(db, q)
		}
	}

	mport, perr := freePort()
	if perr != nil {
		t.Fatal(perr)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(mport)
	def := policyWith(t, pgsql.DefaultPolicyYAML(), "", "")
	d := catalogDaemonWith(t, "postgres", net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)), def,
		fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, mon, pg.Database),
		"      max_databases: 1\n", "metrics_listen: "+maddr+"\n")
	waitLog(t, d, `"catalog read"`)
	via := func(db string) (*pgconn.PgConn, error) {
		return pgconn.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", portOf(t, d.addr), app, db))
	}
	b, err := via(dbB)
	if err != nil {
		t.Fatalf("connecting through sqlfwd to %s: %v", dbB, err)
	}
	mk := newMarkedPG(t, "sqlfwpdb_"+run)
	mk.send(ctx, b, "SELECT "+f+"()", "no-unfiltered-writes")
	mk.send(ctx, b, "SELECT public."+f+"()", "no-unfiltered-writes")
	mk.send(ctx, b, "SELECT count(*) FROM "+victim, "")
	mk.send(ctx, b, "SELECT 1", "")
	if n := count(dbB, victim); n != 3 {
		t.Errorf("%s in %s: %d rows, want 3 (the function never ran)", victim, dbB, n)
	}
	waitLog(t, d, `"catalog read"`, `"dbname":"`+dbB+`"`, `"reads":1,`)
	// DDL in B through sqlfwd reads B's catalog again.
	mk.send(ctx, b, "CREATE TABLE e2e_pdb_t_"+run+" (id int)", "")
	waitLog(t, d, `"catalog read"`, `"dbname":"`+dbB+`"`, `"reads":2,`)
	mk.checkLog()

	if m := scrapeMetrics(t, maddr); !strings.Contains(m, `sqlfw_catalog_sessions{database="db",dbname="`+dbB+`"} 1`) {
		t.Errorf("metrics without B's per-database catalog and its session:\n%s", m)
	}
	if r := fwctl(t, d, "status"); !strings.Contains(r.Stdout, "catalog db "+dbB+": ") || !strings.Contains(r.Stdout, ", 1 sessions") {
		t.Errorf("fwctl status without B's per-database catalog:\n%s", r.Stdout)
	}
	// The bound: B's catalog has a session, so C gets none and is refused.
	if c, err := via(dbC); err == nil {
		c.Close(context.Background())
		t.Errorf("a session in %s with max_databases 1 and %s's catalog in use: served, want refused", dbC, dbB)
	} else if e := err.Error(); !strings.Contains(e, "57P03") || !strings.Contains(e, "max_databases") || !strings.Contains(e, dbC) {
		t.Errorf("the refused client is told %q, want SQLSTATE 57P03 naming %s and catalog.max_databases", e, dbC)
	}
	waitLog(t, d, "session refused", "max_databases")
	b.Close(context.Background())
	// Without sessions in B its catalog gives way to C's.
	var c *pgconn.PgConn
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err = via(dbC); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("connecting through sqlfwd to %s after the session in %s ended: %v", dbC, dbB, err)
	}
	mk.send(ctx, c, "SELECT "+f+"()", "no-unfiltered-writes")
	mk.send(ctx, c, "DELETE FROM "+victim+" WHERE id = 1", "")
	if n := count(dbC, victim); n != 2 {
		t.Errorf("%s in %s: %d rows, want 2 (only the DELETE with WHERE ran)", victim, dbC, n)
	}
	mk.checkLog()
	c.Close(context.Background())

	// A database that disappears: sqlfwd holds no idle connection to it,
	// so DROP DATABASE (without FORCE) succeeds.
	var dropErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
		_, dropErr = c.Exec(ctx, "DROP DATABASE "+dbC)
		c.Close(context.Background())
		if dropErr == nil {
			break
		}
	}
	if dropErr != nil {
		t.Errorf("DROP DATABASE %s with sqlfwd's catalog of it open: %v", dbC, dropErr)
	}
	if c, err := via(dbC); err == nil {
		c.Close(context.Background())
		t.Errorf("a session in the dropped %s: served", dbC)
	} else if !strings.Contains(err.Error(), "does not exist") && !strings.Contains(err.Error(), "catalog") {
		t.Logf("session in dropped database: %v", err)
	}
	if got := []int{count(dbB, victim)}; !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("%s in %s: %v, want 3", victim, dbB, got)
	}
}

// scrapeMetrics is sqlfwd's /metrics at addr.
func scrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
