package mysql

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

func prepare(sql string) []byte { return pktS(0, wire.ComStmtPrepare, sql) }

// prepareOK is a PREPARE_OK of id with no parameters and one column, its
// definition after it (DEPRECATE_EOF: no EOF).
func prepareOK(id uint32) []byte {
	p := []byte{0}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = append(p, 1, 0, 0, 0, 0, 0, 0)
	col := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, '1', 0, 0x0c, 0x3f, 0, 1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0}
	return append(pkt(1, p...), pkt(2, col...)...)
}

func stmtCmd(cmd byte, id uint32, rest ...byte) []byte {
	p := binary.LittleEndian.AppendUint32([]byte{cmd}, id)
	return pkt(0, append(p, rest...)...)
}

func execute(id uint32) []byte { return stmtCmd(wire.ComStmtExecute, id, 0, 1, 0, 0, 0) }

func TestPrepared(t *testing.T) {
	unknown := func() step { return expectErr(1, errUnknownStmt, "HY000", "unknown prepared statement") }
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"prepared, executed, closed",
			[]step{expect(prepare("select ?")), send(prepareOK(7)), expect(execute(7)), send(ok(1, autocommit)),
				expect(stmtCmd(wire.ComStmtClose, 7)), expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(prepare("select ?")), expect(prepareOK(7)), send(execute(7)), expect(ok(1, autocommit)),
				send(stmtCmd(wire.ComStmtClose, 7)), send(execute(7)), unknown(), send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"an id never prepared is refused",
			[]step{expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(execute(3)), unknown(), send(stmtCmd(wire.ComStmtReset, 3)), unknown(),
				send(stmtCmd(wire.ComStmtSendLongData, 3, 0, 0, 'x')), // no answer: dropped
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"a blocked prepare gets the ERR instead of PREPARE_OK",
			[]step{expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(prepare("delete from t where id = ?")), expectErr(1, errBlocked, "42000", "no-delete"),
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"MariaDB's last prepared id, pipelined: the execution waits for the PREPARE_OK (its parameter count)",
			[]step{expect(prepare("select ?")), send(prepareOK(9)), expect(execute(wire.StmtLastPrepared)), send(ok(1, autocommit))},
			[]step{send(prepare("select ?"), execute(wire.StmtLastPrepared)), expect(prepareOK(9)), expect(ok(1, autocommit))}},
		{"after a blocked prepare the last prepared id names nothing",
			[]step{expect(prepare("select ?")), send(prepareOK(9)), expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(prepare("select ?")), expect(prepareOK(9)),
				send(prepare("delete from t"), execute(wire.StmtLastPrepared)), expectErr(1, errBlocked, "42000", "no-delete"), unknown(),
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"a failed prepare leaves no id",
			[]step{expect(prepare("select nope")), send(wire.AppendErr(nil, 1, 1064, "42000", "syntax")), expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(prepare("select nope")), expectErr(1, 1064, "42000", "syntax"), send(execute(1)), unknown(),
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"a prepare closed and its slot taken again before its PREPARE_OK",
			[]step{expect(prepare("select ?")), expect(stmtCmd(wire.ComStmtClose, wire.StmtLastPrepared)), expect(prepare("select 2")),
				send(prepareOK(7)), send(prepareOK(8)), expect(execute(8)), send(ok(1, autocommit))},
			[]step{send(prepare("select ?"), stmtCmd(wire.ComStmtClose, wire.StmtLastPrepared), prepare("select 2")),
				expect(prepareOK(7)), expect(prepareOK(8)), send(execute(7)), unknown(), send(execute(8)), expect(ok(1, autocommit))}},
		{"reset connection forgets the statements",
			[]step{expect(prepare("select ?")), send(prepareOK(7)), expect(pkt(0, wire.ComResetConnection)), send(ok(1, autocommit)), expectClosed()},
			[]step{send(prepare("select ?")), expect(prepareOK(7)), send(pkt(0, wire.ComResetConnection)), expect(ok(1, autocommit)),
				send(execute(7)), unknown()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv, cli := login()
			h.run(t, append(srv, tc.server...), append(cli, tc.client...))
		})
	}
}

// A reload that denies a prepared statement stops its executions.
func TestPreparedRejudgedAfterReload(t *testing.T) {
	h := newHarness(t)
	srv, cli := login()
	h.run(t, append(srv, expect(prepare("select ?")), send(prepareOK(7)), expect(execute(7)), send(ok(1, autocommit)),
		expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))),
		append(cli, send(prepare("select ?")), expect(prepareOK(7)), send(execute(7)), expect(ok(1, autocommit)),
			relaytest.StepFunc(func(net.Conn) error {
				h.Eng.Store(testEngine(t, "rules:\n  - {id: no-select, action: deny, match: {kind: [select]}}\n"))
				return nil
			}),
			send(execute(7)), expectErr(1, errBlocked, "42000", "no-select"),
			send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))))
}

// In monitor mode a denied statement reaches the server and is reported.
func TestMonitorMode(t *testing.T) {
	h := newHarness(t)
	h.Enforce.Store(false)
	srv, cli := login()
	h.run(t, append(srv, expect(query("delete from t")), send(ok(1, autocommit))),
		append(cli, send(query("delete from t")), expect(ok(1, autocommit))))
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if len(h.Verdicts) != 1 || h.Verdicts[0].RuleID != "no-delete" {
		t.Errorf("verdicts %+v, want one of rule no-delete", h.Verdicts)
	}
}

// Executions are reported with the prepare's verdict (Applied), once each;
// a FETCH continues an execution and is not one; an execution re-judged
// after a reload is reported as judged, not again as applied.
func TestPreparedExecutionsCounted(t *testing.T) {
	h := newHarness(t)
	srv, cli := login()
	fetch := stmtCmd(wire.ComStmtFetch, 7, 1, 0, 0, 0)
	// a cursor's last rows: one row, then the end (DEPRECATE_EOF)
	rows := append(pkt(1, 1, '1'), pkt(2, 0xfe, 0, 0, byte(autocommit), 0, 0, 0)...)
	h.run(t, append(srv, expect(prepare("select ?")), send(prepareOK(7)),
		expect(execute(7)), send(ok(1, autocommit)), expect(execute(7)), send(ok(1, autocommit)),
		expect(fetch), send(rows),
		expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))),
		append(cli, send(prepare("select ?")), expect(prepareOK(7)),
			send(execute(7)), expect(ok(1, autocommit)), send(execute(7)), expect(ok(1, autocommit)),
			send(fetch), expect(rows),
			relaytest.StepFunc(func(net.Conn) error {
				h.Eng.Store(testEngine(t, "rules:\n  - {id: no-select, action: deny, match: {kind: [select]}}\n"))
				return nil
			}),
			send(execute(7)), expectErr(1, errBlocked, "42000", "no-select"),
			send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))))
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if len(h.Executions) != 2 || h.Executions[0].Action != engine.ActionAllow || h.Executions[0].Statements != 1 {
		t.Errorf("applied verdicts %+v, want the two executions', allowed, of 1 statement each", h.Executions)
	}
	if len(h.Verdicts) != 2 || h.Verdicts[1].RuleID != "no-select" {
		t.Errorf("judged verdicts %+v, want the prepare's and the re-judged execution's (no-select)", h.Verdicts)
	}
}

// In monitor mode a statement whose prepare was denied runs, and each
// execution is reported with the deny verdict.
func TestPreparedExecutionsCountedMonitor(t *testing.T) {
	h := newHarness(t)
	h.Enforce.Store(false)
	srv, cli := login()
	h.run(t, append(srv, expect(prepare("delete from t")), send(prepareOK(7)), expect(execute(7)), send(ok(1, autocommit))),
		append(cli, send(prepare("delete from t")), expect(prepareOK(7)), send(execute(7)), expect(ok(1, autocommit))))
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if len(h.Executions) != 1 || h.Executions[0].RuleID != "no-delete" {
		t.Errorf("applied verdicts %+v, want one of rule no-delete", h.Executions)
	}
}

// A statement re-judged after a reload is judged in the database it was
// prepared in, where the server runs it, not the session's current one.
func TestPreparedRejudgedInItsDatabase(t *testing.T) {
	h := newHarness(t)
	srv, cli := login() // database shop
	h.run(t, append(srv, expect(prepare("select ?")), send(prepareOK(7)),
		expect(pktS(0, wire.ComInitDB, "other")), send(ok(1, autocommit)), expectClosed()),
		append(cli, send(prepare("select ?")), expect(prepareOK(7)),
			send(pktS(0, wire.ComInitDB, "other")), expect(ok(1, autocommit)),
			relaytest.StepFunc(func(net.Conn) error {
				h.Eng.Store(testEngine(t, "rules:\n  - {id: no-shop, action: deny, databases: [shop], match: {}}\n"))
				return nil
			}),
			send(execute(7)), expectErr(1, errBlocked, "42000", "no-shop")))
}
