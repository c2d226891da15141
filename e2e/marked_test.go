package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// markedPG sends statements through sqlfwd, each behind a marker comment of
// its own, wants each run or blocked naming a rule, and then checks the
// server's statement log: an allowed statement's marker is in it, a blocked
// one's is not (PostgreSQL never received it).
type markedPG struct {
	t       *testing.T
	prefix  string
	n       int
	markers map[string]bool // marker → allowed
}

// newMarkedPG makes markers prefix_0, prefix_1, ...
func newMarkedPG(t *testing.T, prefix string) *markedPG {
	return &markedPG{t: t, prefix: prefix, markers: map[string]bool{}}
}

// send runs sql on conn (simple Query) behind the next marker: rule "" wants
// it run, else sqlfwd's block (SQLSTATE codeBlocked) naming rule.
func (m *markedPG) send(ctx context.Context, conn *pgconn.PgConn, sql, rule string) {
	m.t.Helper()
	mk := fmt.Sprintf("%s_%d", m.prefix, m.n)
	m.n++
	m.markers[mk] = rule == ""
	q := "/* " + mk + " */ " + sql
	_, err := conn.Exec(ctx, q).ReadAll()
	var pgErr *pgconn.PgError
	switch {
	case rule == "" && err != nil:
		m.t.Errorf("%q: %v, want it run", q, err)
	case rule != "" && (!errors.As(err, &pgErr) || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, rule)):
		m.t.Errorf("%q: %v, want SQLSTATE %s naming %s", q, err, codeBlocked, rule)
	}
}

// sendAs is send on a connection of its own to port as user.
func (m *markedPG) sendAs(ctx context.Context, port int, user, sql, rule string) {
	m.t.Helper()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, port, user, ""))
	if err != nil {
		m.t.Fatalf("connecting as %s: %v", user, err)
	}
	defer conn.Close(context.Background())
	m.send(ctx, conn, sql, rule)
}

// checkLog checks every marker sent so far against the server's log.
func (m *markedPG) checkLog() {
	m.t.Helper()
	log := serverLog(m.t)
	for mk, allowed := range m.markers {
		if logged := strings.Contains(log, mk+" "); logged != allowed {
			m.t.Errorf("marker %s: in the server log %v, want %v", mk, logged, allowed)
		}
	}
}
