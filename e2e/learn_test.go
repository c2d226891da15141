package e2e

// A learned policy per application through sqlfwd, on PostgreSQL 15 and
// MariaDB 10.11 (docs/learn.md): two applications (two database users)
// learned from their traffic, reviewed (fwctl learn status, diff), promoted
// in detect mode (drift reported and counted, not blocked), then in enforce
// mode as fingerprints (a new shape of a known table is drift) and as a
// scope (it passes, while a read of a table the application never touched
// is denied and never reaches the server's statement log), each
// application held to its own scope, drift counted in metrics, and the
// learned policy kept across a reload through its learned_policy file.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// learnTarget is one protocol's side of the scenario.
type learnTarget struct {
	proto string
	d     *daemon
	maddr string // metrics
	// run sends q through sqlfwd as user (reading any rows).
	run func(t *testing.T, user, q string) error
	// blocked reports whether err is sqlfw's deny of rule.
	blocked func(err error, rule string) bool
	// logHas reports whether the server's statement log holds marker.
	logHas func(t *testing.T, marker string) bool
	// T names the scenario's tables (prefixed by the run).
	T func(name string) string
}

func TestLearnedPolicyPostgres(t *testing.T) {
	needPG(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := "lp" + randomHex(t)[:8]
	T := func(n string) string { return run + "_" + n }
	shop, report := run+"_shop", run+"_report"
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, name text, price int)", T("items")),
		fmt.Sprintf("CREATE TABLE %s (item int, qty int)", T("orders")),
		fmt.Sprintf("CREATE TABLE %s (secret text)", T("secrets")),
		fmt.Sprintf("CREATE TABLE %s (day date, total int)", T("reports")),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'nut', 3), (2, 'bolt', 5)", T("items")),
		fmt.Sprintf("INSERT INTO %s VALUES ('s3cr3t-%s')", T("secrets"), run),
		fmt.Sprintf("INSERT INTO %s VALUES ('2024-01-02', 7)", T("reports")),
		fmt.Sprintf("CREATE ROLE %s LOGIN", shop),
		fmt.Sprintf("CREATE ROLE %s LOGIN", report),
		fmt.Sprintf("GRANT SELECT ON %s, %s, %s TO %s", T("items"), T("secrets"), T("reports"), shop),
		fmt.Sprintf("GRANT INSERT ON %s TO %s", T("orders"), shop),
		fmt.Sprintf("GRANT SELECT ON %s, %s, %s TO %s", T("items"), T("secrets"), T("reports"), report),
	} {
		directExec(t, q)
	}
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s, %s, %s; DROP ROLE IF EXISTS %s; DROP ROLE IF EXISTS %s", T("items"), T("orders"), T("secrets"), T("reports"), shop, report))
	})
	learned := filepath.Join(t.TempDir(), "learned.yaml")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(port)
	d := ownDaemon(t, "--learn", "--learn-by", "user,database", "--learned-policy", learned, "--metrics-listen", maddr)
	conns := map[string]*pgx.Conn{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg := learnTarget{proto: "postgres", d: d, maddr: maddr, T: T,
		run: func(t *testing.T, user, q string) error {
			c := conns[user]
			if c == nil {
				c = connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), user, ""))
				conns[user] = c
			}
			rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		},
		blocked: func(err error, rule string) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == wantDeniedCode() && strings.Contains(pe.Message, rule)
		},
		logHas: func(t *testing.T, marker string) bool { return strings.Contains(serverLog(t), marker) },
	}
	learnScenario(t, tg, shop, report, learned)
}

func TestLearnedPolicyMySQL(t *testing.T) {
	my := mariadbEnv(t)
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	run := "lm" + randomHex(t)[:8]
	T := func(n string) string { return run + "_" + n }
	shop, report := run+"_shop", run+"_report"
	pw := "pw_" + run
	direct := myDB(t, my, my.addr(), true)
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, name text, price int)", T("items")),
		fmt.Sprintf("CREATE TABLE %s (item int, qty int)", T("orders")),
		fmt.Sprintf("CREATE TABLE %s (secret text)", T("secrets")),
		fmt.Sprintf("CREATE TABLE %s (day date, total int)", T("reports")),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 'nut', 3), (2, 'bolt', 5)", T("items")),
		fmt.Sprintf("INSERT INTO %s VALUES ('s3cr3t-%s')", T("secrets"), run),
		fmt.Sprintf("INSERT INTO %s VALUES ('2024-01-02', 7)", T("reports")),
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", shop, pw),
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", report, pw),
		fmt.Sprintf("GRANT SELECT, INSERT ON %s.* TO '%s'@'%%'", my.Database, shop),
		fmt.Sprintf("GRANT SELECT ON %s.* TO '%s'@'%%'", my.Database, report),
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{
			fmt.Sprintf("DROP TABLE IF EXISTS %s, %s, %s, %s", T("items"), T("orders"), T("secrets"), T("reports")),
			fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", shop), fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", report),
		} {
			_, _ = direct.Exec(q)
		}
	})
	learned := filepath.Join(t.TempDir(), "learned.yaml")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(port)
	d := mysqlDaemon(t, my, "--learn", "--learn-by", "user,database", "--learned-policy", learned, "--metrics-listen", maddr)
	dbs := map[string]*sql.DB{}
	tg := learnTarget{proto: "mysql", d: d, maddr: maddr, T: T,
		run: func(t *testing.T, user, q string) error {
			db := dbs[user]
			if db == nil {
				cfg := gomysql.NewConfig()
				cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", d.addr, my.Database
				var err error
				if db, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
					t.Fatal(err)
				}
				db.SetMaxOpenConns(1)
				t.Cleanup(func() { db.Close() })
				dbs[user] = db
			}
			rows, err := db.Query(q)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		},
		blocked: func(err error, rule string) bool {
			var me *gomysql.MySQLError
			return errors.As(err, &me) && me.Number == 1227 && strings.Contains(me.Message, rule)
		},
		logHas: func(t *testing.T, marker string) bool { return strings.Contains(generalLog(t, my), marker) },
	}
	learnScenario(t, tg, shop, report, learned)
}

func learnScenario(t *testing.T, tg learnTarget, shop, report, learnedFile string) {
	T := tg.T
	must := func(user, q string) {
		t.Helper()
		if err := tg.run(t, user, q); err != nil {
			t.Fatalf("%s: %s as %s: %v", tg.proto, q, user, err)
		}
	}
	// What each application sends while learning (sqlfwd --learn).
	for i := 1; i <= 3; i++ {
		must(shop, fmt.Sprintf("SELECT name, price FROM %s WHERE id = %d", T("items"), i))
		must(shop, fmt.Sprintf("INSERT INTO %s (item, qty) VALUES (%d, 1)", T("orders"), i))
		must(report, fmt.Sprintf("SELECT day, total FROM %s WHERE day > '2024-01-0%d'", T("reports"), i))
	}
	must(shop, fmt.Sprintf("SELECT count(*) FROM %s", T("items")))

	// The review.
	st := fwctl(t, tg.d, "learn", "status")
	for _, want := range []string{"learning since", "told apart by user,database", shop + "@", report + "@", "table " + T("items") + " (read) columns id, name, price", "table " + T("orders") + " (write)", "shapes"} {
		if st.Exit != 0 || !strings.Contains(st.Stdout, want) {
			t.Errorf("%s: fwctl learn status lacks %q: %s", tg.proto, want, st)
		}
	}
	if strings.Contains(st.Stdout, T("secrets")) {
		t.Errorf("%s: the status shows a table no application read:\n%s", tg.proto, st.Stdout)
	}
	diff := fwctl(t, tg.d, "learn", "diff")
	if diff.Exit != 0 || !strings.Contains(diff.Stdout, "new") || !strings.Contains(diff.Stdout, "no learned policy in force") {
		t.Errorf("%s: fwctl learn diff before a promotion: %s", tg.proto, diff)
	}
	for _, lit := range []string{"'2024-01-01'", "= 2"} {
		if strings.Contains(st.Stdout+diff.Stdout, lit) {
			t.Errorf("%s: the review shows a literal %s", tg.proto, lit)
		}
	}
	if _, err := os.Stat(learnedFile); err == nil {
		t.Fatalf("%s: learning alone wrote the learned policy: promotion is the operator's", tg.proto)
	}

	secretQ := func(marker string) string {
		return fmt.Sprintf("SELECT secret FROM %s WHERE secret <> '%s'", T("secrets"), marker)
	}
	newShape := fmt.Sprintf("SELECT price FROM %s WHERE name = 'nut' ORDER BY price", T("items"))

	// Detect first: drift is reported and counted, not blocked.
	if res := fwctl(t, tg.d, "learn", "promote"); res.Exit != 0 || !strings.Contains(res.Stdout, "mode detect") || !strings.Contains(res.Stdout, "written to "+learnedFile) {
		t.Fatalf("%s: fwctl learn promote: %s", tg.proto, res)
	}
	detectMarker := "detect" + randomHex(t)
	if err := tg.run(t, shop, secretQ(detectMarker)); err != nil {
		t.Errorf("%s: drift in detect mode must pass: %v", tg.proto, err)
	}
	if !tg.logHas(t, detectMarker) {
		t.Errorf("%s: the statement let through in detect mode is not in the server's log", tg.proto)
	}
	diff = fwctl(t, tg.d, "learn", "diff")
	if !strings.Contains(diff.Stdout, "drift") || !strings.Contains(strings.ToLower(diff.Stdout), strings.ToLower(T("secrets"))) {
		t.Errorf("%s: fwctl learn diff after drift: %s", tg.proto, diff)
	}
	if strings.Contains(diff.Stdout, detectMarker) {
		t.Errorf("%s: the diff shows a literal", tg.proto)
	}
	driftBefore := metricValue(t, tg.maddr, `sqlfw_learned_drift_total{database="default"}`)
	if driftBefore < 1 {
		t.Errorf("%s: drift in detect mode not counted: sqlfw_learned_drift_total = %v", tg.proto, driftBefore)
	}

	// Fingerprints, enforced: a learned shape passes, a new one is drift.
	if res := fwctl(t, tg.d, "learn", "promote", "--form", "fingerprints", "--mode", "enforce"); res.Exit != 0 {
		t.Fatalf("%s: promote fingerprints: %s", tg.proto, res)
	}
	must(shop, fmt.Sprintf("SELECT name, price FROM %s WHERE id = 42", T("items")))
	if err := tg.run(t, shop, newShape); !tg.blocked(err, "learned-drift") {
		t.Errorf("%s: a new shape under learned fingerprints: got %v, want learned-drift", tg.proto, err)
	}

	// Scope, enforced: new shapes of known tables pass; reads of tables the
	// application never touched are denied and never reach the server.
	if res := fwctl(t, tg.d, "learn", "promote", "--form", "scope", "--mode", "enforce"); res.Exit != 0 {
		t.Fatalf("%s: promote scope: %s", tg.proto, res)
	}
	b, err := os.ReadFile(learnedFile)
	if err != nil || !strings.Contains(string(b), "within:") || strings.Contains(string(b), T("secrets")) {
		t.Fatalf("%s: the learned policy file: %v\n%s", tg.proto, err, b)
	}
	// a reload rebuilds the policy with the learned file
	if res := fwctl(t, tg.d, "reload"); res.Exit != 0 {
		t.Fatalf("%s: fwctl reload: %s", tg.proto, res)
	}
	must(shop, newShape)
	must(shop, fmt.Sprintf("SELECT i.name FROM %s i WHERE i.price < 10 AND i.id IN (1, 2)", T("items")))
	must(report, fmt.Sprintf("SELECT total FROM %s WHERE day = '2024-01-02'", T("reports")))
	marker := "enforce" + randomHex(t)
	denied := []struct{ user, q string }{
		{shop, secretQ(marker)},
		{shop, fmt.Sprintf("SELECT name FROM %s WHERE id = (SELECT count(*) FROM %s WHERE secret <> '%s')", T("items"), T("secrets"), marker)},
		{shop, fmt.Sprintf("SELECT name, price FROM %s WHERE id = 1 UNION SELECT secret, 1 FROM %s WHERE secret <> '%s'", T("items"), T("secrets"), marker)},
		{shop, fmt.Sprintf("SELECT * FROM %s WHERE name <> '%s'", T("items"), marker)},      // star: more than it read
		{shop, fmt.Sprintf("SELECT day FROM %s", T("reports"))},                             // the other application's table
		{shop, fmt.Sprintf("DELETE FROM %s WHERE item = 99", T("orders"))},                  // a kind it never ran
		{report, fmt.Sprintf("SELECT name FROM %s WHERE name <> '%s'", T("items"), marker)}, // the shop's table
		{report, secretQ(marker)},
	}
	for _, c := range denied {
		if err := tg.run(t, c.user, c.q); !tg.blocked(err, "learned-drift") {
			t.Errorf("%s: %s as %s under the learned scope: got %v, want learned-drift", tg.proto, c.q, c.user, err)
		}
	}
	if tg.logHas(t, marker) {
		t.Errorf("%s: a statement the learned scope denied reached the server", tg.proto)
	}
	if after := metricValue(t, tg.maddr, `sqlfw_learned_drift_total{database="default"}`); after < driftBefore+float64(len(denied)) {
		t.Errorf("%s: sqlfw_learned_drift_total %v after %v and %d denials", tg.proto, after, driftBefore, len(denied))
	}
	st = fwctl(t, tg.d, "learn", "status")
	if !strings.Contains(st.Stdout, "learned policy in force: form scope, drift deny, mode enforce") {
		t.Errorf("%s: fwctl learn status after promotion: %s", tg.proto, st)
	}

	// Demote: the database's own policy alone again.
	if res := fwctl(t, tg.d, "learn", "demote"); res.Exit != 0 {
		t.Fatalf("%s: fwctl learn demote: %s", tg.proto, res)
	}
	if _, err := os.Stat(learnedFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: demote left the learned policy file", tg.proto)
	}
	must(shop, newShape)
	must(report, fmt.Sprintf("SELECT name FROM %s WHERE id = 1", T("items")))
}

// TestLearnedPolicyByUnit: with interception, two applications that share
// one database user are told apart by the systemd unit of their cgroup
// (learn_by user,database,unit): each is held to its own scope, and a
// connection sqlfwd did not intercept (the test binary through the
// listener) is neither of them.
func TestLearnedPolicyByUnit(t *testing.T) {
	needKernel(t)
	needPG(t)
	cg := childCgroup(t)
	units := map[string]string{}
	for _, app := range []string{"billing", "shop"} {
		dir := filepath.Join(cg, "lu-"+app+".service")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, pid := range strings.Fields(string(b)) {
				_ = os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(pid), 0)
			}
			_ = os.Remove(dir)
		})
		units[app] = dir
	}
	run := "lu" + randomHex(t)[:8]
	invoices, items := run+"_invoices", run+"_items"
	freshTable(t, invoices, 1, 2)
	freshTable(t, items, 1, 2)
	d := startIntercepting(t, cg, "--learn", "--learn-by", "user,database,unit")
	psqlAs := func(app, sql string) psqlResult { return psqlIn(t, units[app], "127.0.0.1", sql) }
	for i := 1; i <= 2; i++ {
		if res := psqlAs("billing", fmt.Sprintf("select id from %s where id = %d", invoices, i)); res.Exit != 0 {
			t.Fatalf("billing while learning: %s", res)
		}
		if res := psqlAs("shop", fmt.Sprintf("select id from %s where id = %d", items, i)); res.Exit != 0 {
			t.Fatalf("shop while learning: %s", res)
		}
	}
	st := fwctl(t, d, "learn", "status")
	for _, want := range []string{"unit=lu-billing.service", "unit=lu-shop.service", "table " + invoices, "table " + items} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("fwctl learn status lacks %q: %s", want, st)
		}
	}
	if res := fwctl(t, d, "learn", "promote", "--mode", "enforce"); res.Exit != 0 {
		t.Fatalf("fwctl learn promote: %s", res)
	}
	for _, c := range []struct {
		app, sql string
		allow    bool
	}{
		{"billing", fmt.Sprintf("select id from %s where id > 0 order by id", invoices), true},
		{"shop", fmt.Sprintf("select id from %s where id in (1, 2)", items), true},
		{"shop", fmt.Sprintf("select id from %s where id > 0", invoices), false},
		{"billing", fmt.Sprintf("select id from %s where id > 0", items), false},
	} {
		res := psqlAs(c.app, c.sql)
		if c.allow && res.Exit != 0 {
			t.Errorf("%s: %s: %s; want it allowed", c.app, c.sql, res)
		}
		if !c.allow && (!strings.Contains(res.Stderr, codeBlocked) || !strings.Contains(res.Stderr, "learned-drift")) {
			t.Errorf("%s: %s: %s; want %s from learned-drift", c.app, c.sql, res, codeBlocked)
		}
	}
	// the test binary is not intercepted (it is outside cg): an identity
	// never learned
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	var n int
	err := c.QueryRow(ctx, fmt.Sprintf("select id from %s where id = 1", invoices), pgx.QueryExecModeSimpleProtocol).Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeBlocked || !strings.Contains(pe.Message, "learned-drift") {
		t.Errorf("a connection sqlfwd did not intercept: %v; want learned-drift", err)
	}
}
