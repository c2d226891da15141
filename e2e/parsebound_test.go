package e2e

// The parse bound through sqlfwd (engine/parsebound.go, issue 26): 10 MB
// statements of five shapes, by the simple and the extended protocol to
// PostgreSQL 15 and by COM_QUERY and COM_STMT_PREPARE to MariaDB 10.11,
// are answered with sqlfw's deny (the default policy's limits rule; with
// a policy of no rules, the parse bound), the session goes on, and none
// reaches the server's log. The time each took is logged, not asserted
// (docs/performance.md, "The parse bound").

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// bigStatements are statements of at least n bytes, each naming marker:
// one bulk INSERT ... VALUES, an IN list, nested parentheses, a string
// literal, a comment.
func bigStatements(n int, marker string) map[string]string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + marker + " (a, b) VALUES ")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(123456, 'abcdefgh')")
	}
	ins := b.String()
	b.Reset()
	b.WriteString("SELECT a FROM " + marker + " WHERE a IN (")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("1234567")
	}
	b.WriteString(")")
	d := n / 2
	return map[string]string{
		"insert":  ins,
		"in-list": b.String(),
		"nested":  "SELECT '" + marker + "', " + strings.Repeat("(", d) + "1" + strings.Repeat(")", d),
		"string":  "SELECT '" + marker + strings.Repeat("x", n) + "'",
		"comment": "SELECT '" + marker + "' /* " + strings.Repeat("y", n) + " */",
	}
}

// peakRSS is the daemon's peak resident memory (VmHWM), for the log.
func (d *daemon) peakRSS() string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "unknown"
}

var parseBoundPolicies = []struct{ name, policy, rule string }{
	{"default policy", "", "limits"},
	{"no rules", "version: 1\nrules: []\n", "parse-bound"},
}

func TestParseBoundPG(t *testing.T) {
	needSqlfwd(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	marker := "e2e_pb_" + randomHex(t)
	for _, pp := range parseBoundPolicies {
		t.Run(pp.name, func(t *testing.T) {
			var args []string
			if pp.policy != "" {
				args = []string{"--policy", policyFile(t, pp.policy)}
			}
			d := ownDaemon(t, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c, err := pgconn.Connect(ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			for name, text := range bigStatements(10<<20, marker) {
				for _, proto := range []string{"simple", "extended"} {
					t0 := time.Now()
					if proto == "simple" {
						_, err = c.Exec(ctx, text).ReadAll()
					} else {
						err = c.ExecParams(ctx, text, nil, nil, nil, nil).Read().Err
					}
					el := time.Since(t0)
					var pe *pgconn.PgError
					if !errors.As(err, &pe) || pe.Code != codeBlocked || !strings.HasPrefix(pe.Message, blockedPrefix+" statement blocked by rule "+pp.rule) {
						t.Errorf("%s, %d bytes, %s protocol: %v, want sqlfw's deny by %s", name, len(text), proto, err, pp.rule)
					}
					t.Logf("%s, %d bytes, %s protocol: answered in %v", name, len(text), proto, el) // reported, not asserted
					if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
						t.Fatalf("after the %s %s: %v", proto, name, err)
					}
				}
			}
			t.Logf("sqlfwd's peak RSS: %s", d.peakRSS())
		})
	}
	if strings.Contains(serverLog(t), marker) {
		t.Errorf("a 10 MB statement naming %s reached PostgreSQL's log", marker)
	}
}

func TestParseBoundMariaDB(t *testing.T) {
	needSqlfwd(t)
	my := mariadbEnv(t)
	marker := "e2e_pb_" + randomHex(t)
	for _, pp := range parseBoundPolicies {
		t.Run(pp.name, func(t *testing.T) {
			var args []string
			if pp.policy != "" {
				args = []string{"--policy", policyFile(t, pp.policy)}
			}
			d := mysqlDaemon(t, my, args...)
			db := myDB(t, my, d.addr, false)
			db.SetMaxOpenConns(1)
			for name, text := range bigStatements(10<<20, marker) {
				for _, proto := range []string{"COM_QUERY", "COM_STMT_PREPARE"} {
					t0 := time.Now()
					var err error
					if proto == "COM_QUERY" {
						_, err = db.Exec(text)
					} else {
						var st interface{ Close() error }
						if st, err = db.Prepare(text); err == nil {
							st.Close()
						}
					}
					el := time.Since(t0)
					var me *gomysql.MySQLError
					if !errors.As(err, &me) || me.Number != 1227 || !strings.Contains(me.Message, "rule "+pp.rule) {
						t.Errorf("%s, %d bytes, %s: %v, want sqlfw's deny by %s", name, len(text), proto, err, pp.rule)
					}
					t.Logf("%s, %d bytes, %s: answered in %v", name, len(text), proto, el) // reported, not asserted
					var one int
					if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
						t.Fatalf("after the %s %s: %v", proto, name, err)
					}
				}
			}
			t.Logf("sqlfwd's peak RSS: %s", d.peakRSS())
		})
	}
	if strings.Contains(generalLog(t, my), marker) {
		t.Errorf("a 10 MB statement naming %s reached MariaDB's general log", marker)
	}
}
