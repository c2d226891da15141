package e2e

// Verdict memory through sqlfwd to PostgreSQL 15 (daemon/prepared.go): what
// a session prepared, declared or bound before a switch from monitor to
// enforce, or before a reload to a stricter policy, is judged again when it
// is used. Proof by the server's statement log (log_statement=all: after
// the switch no line names a blocked object) and by the effect (the canary
// table keeps its rows, the bump table stays empty); the benign faces of
// each case run and are logged, so the log check can fail.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

const verdictMemoryPolicy = `version: 1
rules:
  - id: no-canary
    action: deny
    reason: the canary table is off limits
    match:
      tables: [e2e_vm_canary]
  - id: no-bump
    action: deny
    reason: the bump function is off limits
    match:
      functions: [e2e_vm_bump]
`

// rawPG speaks the protocol message by message over a hijacked connection.
type rawPG struct {
	t  *testing.T
	fe *pgproto3.Frontend
}

func dialRawPG(t *testing.T, ctx context.Context, addr string) *rawPG {
	t.Helper()
	c, err := pgconn.Connect(ctx, dsn("127.0.0.1", portOf(t, addr), pg.User, ""))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := c.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Conn.Close() })
	_ = hc.Conn.SetDeadline(time.Now().Add(time.Minute))
	return &rawPG{t: t, fe: hc.Frontend}
}

// send sends msgs and reads up to the ReadyForQuery of each of their sync
// points; it returns the SQLSTATEs of the errors, "" when there were none.
func (r *rawPG) send(msgs ...pgproto3.FrontendMessage) string {
	r.t.Helper()
	syncs := 0
	for _, m := range msgs {
		r.fe.Send(m)
		switch m.(type) {
		case *pgproto3.Query, *pgproto3.Sync:
			syncs++
		}
	}
	if err := r.fe.Flush(); err != nil {
		r.t.Fatal(err)
	}
	var codes []string
	for syncs > 0 {
		m, err := r.fe.Receive()
		if err != nil {
			r.t.Fatalf("after %q: %v", codes, err)
		}
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			codes = append(codes, m.Code)
		case *pgproto3.ReadyForQuery:
			syncs--
		}
	}
	return strings.Join(codes, ",")
}

func sq(sql string) *pgproto3.Query { return &pgproto3.Query{String: sql} }

// extended is Parse (unless name is "-"), Bind to portal, Execute and Sync.
func extended(stmt, sql, portal string) []pgproto3.FrontendMessage {
	var m []pgproto3.FrontendMessage
	if sql != "" {
		m = append(m, &pgproto3.Parse{Name: stmt, Query: sql})
	}
	return append(m, &pgproto3.Bind{DestinationPortal: portal, PreparedStatement: stmt},
		&pgproto3.Execute{Portal: portal}, &pgproto3.Sync{})
}

func TestVerdictMemory(t *testing.T) {
	needSqlfwd(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	directExec(t, "DROP TABLE IF EXISTS e2e_vm_canary, e2e_vm_bumps; CREATE TABLE e2e_vm_canary (id int); CREATE TABLE e2e_vm_bumps (id int)")
	directExec(t, "CREATE OR REPLACE FUNCTION e2e_vm_bump() RETURNS int LANGUAGE sql AS $$ INSERT INTO e2e_vm_bumps VALUES (1) RETURNING 1 $$")
	t.Cleanup(func() {
		if !t.Failed() {
			directExec(t, "DROP TABLE IF EXISTS e2e_vm_canary, e2e_vm_bumps; DROP FUNCTION IF EXISTS e2e_vm_bump()")
		}
	})

	for _, variant := range []string{"monitor to enforce", "reload to a stricter policy"} {
		t.Run(variant, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			directExec(t, "TRUNCATE e2e_vm_canary; INSERT INTO e2e_vm_canary VALUES (1), (2), (3)")
			var d *daemon
			pol := policyFile(t, verdictMemoryPolicy)
			if variant == "monitor to enforce" {
				d = ownDaemon(t, "--policy", pol, "--mode", "monitor")
			} else {
				if err := os.WriteFile(pol, []byte("version: 1\nrules: []\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				d = ownDaemon(t, "--policy", pol)
			}
			m := randomHex(t)
			name := func(s string) string { return s + "_" + m }
			del := "delete from e2e_vm_canary where id > 0"

			// Before the switch: every connection sets something up.
			prep := dialRawPG(t, ctx, d.addr)
			prep.send(sq("prepare " + name("p") + " as " + del))
			prep.send(sq("prepare " + name("pb") + " as select 'benign " + m + "'"))
			if got := prep.send(sq("prepare " + name("p") + " as select 1")); got != "42P05" {
				t.Fatalf("re-PREPARE: %q, want 42P05", got)
			}
			cur := dialRawPG(t, ctx, d.addr)
			cur.send(sq("begin"))
			cur.send(sq("declare " + name("c") + " cursor for select e2e_vm_bump()"))
			held := dialRawPG(t, ctx, d.addr)
			held.send(sq("declare " + name("h") + " cursor with hold for select e2e_vm_bump()"))
			held.send(sq("declare " + name("hb") + " cursor with hold for select 'benign " + m + "'"))
			port := dialRawPG(t, ctx, d.addr)
			port.send(sq("begin"))
			port.send(&pgproto3.Parse{Name: name("s"), Query: del}, &pgproto3.Bind{DestinationPortal: name("portal"), PreparedStatement: name("s")}, &pgproto3.Sync{})
			reparse := dialRawPG(t, ctx, d.addr)
			reparse.send(&pgproto3.Parse{Name: name("r"), Query: del}, &pgproto3.Sync{})
			if got := reparse.send(&pgproto3.Parse{Name: name("r"), Query: "select 1"}, &pgproto3.Sync{}); got != "42P05" {
				t.Fatalf("re-Parse: %q, want 42P05", got)
			}
			if n := directInts(t, "select count(*)::int from e2e_vm_canary"); n[0] != 3 {
				t.Fatalf("the canary lost rows before the switch: %v", n)
			}

			// The switch. (A WITH HOLD cursor's query ran when its
			// transaction committed: its rows are materialised; a FETCH
			// reads them.)
			bumps := directInts(t, "select count(*)::int from e2e_vm_bumps")[0]
			logFrom := logSize(t)
			if variant == "monitor to enforce" {
				if res := fwctl(t, d, "mode", "enforce"); res.Exit != 0 {
					t.Fatalf("fwctl mode enforce: %s", res)
				}
			} else {
				if err := os.WriteFile(pol, []byte(verdictMemoryPolicy), 0o644); err != nil {
					t.Fatal(err)
				}
				if res := fwctl(t, d, "reload"); res.Exit != 0 {
					t.Fatalf("fwctl reload: %s", res)
				}
			}

			blocked := []struct {
				what string
				c    *rawPG
				msgs []pgproto3.FrontendMessage
			}{
				{"EXECUTE of a PREPAREd denied statement", prep, []pgproto3.FrontendMessage{sq("execute " + name("p"))}},
				{"Bind of a PREPAREd denied statement", prep, extended(name("p"), "", "")},
				{"EXECUTE through Parse", prep, extended("", "execute "+name("p"), "")},
				{"FETCH from a cursor declared before", cur, []pgproto3.FrontendMessage{sq("fetch all from " + name("c"))}},
				{"MOVE in a WITH HOLD cursor", held, []pgproto3.FrontendMessage{sq("move next in " + name("h"))}},
				{"Execute of a WITH HOLD cursor", held, []pgproto3.FrontendMessage{&pgproto3.Execute{Portal: name("h")}, &pgproto3.Sync{}}},
				{"Execute of a portal bound before", port, []pgproto3.FrontendMessage{&pgproto3.Execute{Portal: name("portal")}, &pgproto3.Sync{}}},
				{"Bind after a refused re-Parse", reparse, extended(name("r"), "", "")},
			}
			for _, b := range blocked {
				if got := b.c.send(b.msgs...); got != codeBlocked {
					t.Errorf("%s: errors %q, want %s", b.what, got, codeBlocked)
				}
			}
			benign := []struct {
				what string
				c    *rawPG
				msgs []pgproto3.FrontendMessage
			}{
				{"EXECUTE of a benign PREPARE", prep, []pgproto3.FrontendMessage{sq("execute " + name("pb"))}},
				{"FETCH from a benign WITH HOLD cursor", held, []pgproto3.FrontendMessage{sq("fetch all from " + name("hb"))}},
				{"a new statement", reparse, extended(name("n"), "select 'benign new "+m+"'", "")},
			}
			for _, b := range benign {
				if got := b.c.send(b.msgs...); got != "" {
					t.Errorf("%s: errors %q, want none", b.what, got)
				}
			}

			// The effect, then the server's log.
			if n := directInts(t, "select count(*)::int from e2e_vm_canary"); n[0] != 3 {
				t.Errorf("the canary has %v rows after the switch, want 3", n)
			}
			if n := directInts(t, "select count(*)::int from e2e_vm_bumps"); n[0] != bumps {
				t.Errorf("e2e_vm_bump ran %d times after the switch", n[0]-bumps)
			}
			after := logAfter(t, logFrom, prep)
			for _, obj := range []string{"p", "c", "h", "portal", "r", "s"} {
				for _, line := range strings.Split(after, "\n") {
					if strings.Contains(line, name(obj)) {
						t.Errorf("after the switch the server log names %s: %q", name(obj), line)
					}
				}
			}
			for _, want := range []string{"benign " + m, "benign new " + m} {
				if !strings.Contains(after, want) {
					t.Errorf("the benign statement %q is not in the server log after the switch", want)
				}
			}
		})
	}
}

func logSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(pg.Log)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// logAfter returns the server log written since offset from, once a
// sentinel sent through c has reached it.
func logAfter(t *testing.T, from int64, c *rawPG) string {
	t.Helper()
	sentinel := "sentinel" + randomHex(t)
	c.send(sq(fmt.Sprintf("select '%s'", sentinel)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(pg.Log)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) > from && strings.Contains(string(b[from:]), sentinel) {
			return string(b[from:])
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel never reached %s", pg.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
