package mysql

import (
	"encoding/binary"
	"strings"
	"testing"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// prepareOKParams is a PREPARE_OK of id with one parameter and no
// columns, the parameter's definition after it (DEPRECATE_EOF: no EOF).
func prepareOKParams(id uint32) []byte {
	p := []byte{0}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = append(p, 0, 0, 1, 0, 0, 0, 0)
	def := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, '?', 0, 0x0c, 0x3f, 0, 0, 0, 0, 0, 8, 0x80, 0, 0, 0, 0}
	return append(pkt(1, p...), pkt(2, def...)...)
}

// executeBlock is a COM_STMT_EXECUTE of id with a parameter block.
func executeBlock(id uint32, block ...byte) []byte {
	return stmtCmd(wire.ComStmtExecute, id, append([]byte{0, 1, 0, 0, 0}, block...)...)
}

// TestExecuteParams: a COM_STMT_EXECUTE whose parameter block does not hold
// the statement's parameters is answered with ER_WRONG_ARGUMENTS, as
// MariaDB answers it, and never reaches the server; the session goes on.
func TestExecuteParams(t *testing.T) {
	ll := []byte{wire.TypeLongLong, 0}
	v := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	good := executeBlock(7, append(append([]byte{0, 1}, ll...), v...)...)
	again := executeBlock(7, append([]byte{0, 0}, v...)...) // the types bound before
	wrong := func() step { return expectErr(1, errWrongArguments, "HY000", "incorrect arguments") }
	ping, pong := pkt(0, wire.ComPing), ok(1, autocommit)
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"a value cut short",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong), expect(good), send(ok(1, autocommit))},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)),
				send(executeBlock(7, append(append([]byte{0, 1}, ll...), v[:7]...)...)), wrong(),
				send(ping), expect(pong), send(good), expect(ok(1, autocommit))}},
		{"no block at all",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)), send(execute(7)), wrong(), send(ping), expect(pong)}},
		{"no types bound yet",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)), send(again), wrong(), send(ping), expect(pong)}},
		{"the types an execution bound serve the next",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(good), send(ok(1, autocommit)), expect(again), send(ok(1, autocommit))},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)), send(good), expect(ok(1, autocommit)), send(again), expect(ok(1, autocommit))}},
		{"a value sent as long data is not in the block",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(stmtCmd(wire.ComStmtSendLongData, 7, 0, 0, 'x')),
				expect(executeBlock(7, append([]byte{0, 1}, ll...)...)), send(ok(1, autocommit)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)), send(stmtCmd(wire.ComStmtSendLongData, 7, 0, 0, 'x')),
				send(executeBlock(7, append([]byte{0, 1}, ll...)...)), expect(ok(1, autocommit)),
				// the long data went with that execution
				send(executeBlock(7, append([]byte{0, 1}, ll...)...)), wrong(), send(ping), expect(pong)}},
		{"a bulk row truncated",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)),
				send(stmtCmd(wire.ComStmtBulkExecute, 7, append(append([]byte{0x80, 0}, ll...), 0, 1, 0, 0)...)), wrong(), send(ping), expect(pong)}},
		{"a bulk row with an unknown indicator",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)),
				send(stmtCmd(wire.ComStmtBulkExecute, 7, append(append([]byte{0x80, 0}, ll...), 9)...)), wrong(), send(ping), expect(pong)}},
		{"bulk rows without types, none bound before",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(ping), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)),
				send(stmtCmd(wire.ComStmtBulkExecute, 7, append([]byte{0, 0, 0}, v...)...)), wrong(), send(ping), expect(pong)}},
		{"bulk rows of a statement without parameters",
			[]step{expect(prepare("select 1")), send(pkt(1, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), expect(ping), send(pong)},
			[]step{send(prepare("select 1")), expect(pkt(1, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
				send(stmtCmd(wire.ComStmtBulkExecute, 7, 0x80, 0)), wrong(), send(ping), expect(pong)}},
		{"whole bulk rows, types bound before",
			[]step{expect(prepare("select ?")), send(prepareOKParams(7)), expect(good), send(pong),
				expect(stmtCmd(wire.ComStmtBulkExecute, 7, append(append([]byte{0, 0, 0}, v...), 1)...)), send(pong)},
			[]step{send(prepare("select ?")), expect(prepareOKParams(7)), send(good), expect(pong),
				send(stmtCmd(wire.ComStmtBulkExecute, 7, append(append([]byte{0, 0, 0}, v...), 1)...)), expect(pong)}},
		{"MariaDB's last prepared id, pipelined, with a block cut short",
			[]step{expect(prepare("select ?")), send(prepareOKParams(9)), expect(ping), send(pong)},
			[]step{send(prepare("select ?"), executeBlock(wire.StmtLastPrepared, 0, 1)), expect(prepareOKParams(9)), wrong(),
				send(ping), expect(pong)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv, cli := login()
			h.run(t, append(srv, tc.server...), append(cli, tc.client...))
			if strings.Contains(tc.name, "cut short") && !strings.Contains(h.Logs.String(), "COM_STMT_EXECUTE refused") {
				t.Errorf("no log line for the refused execution:\n%s", h.Logs.String())
			}
		})
	}
}

// A bare parameter (DELETE ... WHERE ?) is decided by the value bound: a
// true one makes the DELETE WHERE-less and blocked, a false or NULL one
// runs; EXECUTE ... USING binds values sqlfw does not know: blocked.
func TestBoundBareParam(t *testing.T) {
	const policy = "rules:\n  - {id: no-unfiltered, action: deny, match: {kind: [delete], without_where: true}}\n"
	ll := []byte{wire.TypeLongLong, 0}
	str := []byte{wire.TypeVarString, 0}
	withLL := func(v byte) []byte {
		return executeBlock(7, append(append([]byte{0, 1}, ll...), v, 0, 0, 0, 0, 0, 0, 0)...)
	}
	withStr := func(v string) []byte {
		return executeBlock(7, append(append(append([]byte{0, 1}, str...), byte(len(v))), v...)...)
	}
	null := executeBlock(7, append([]byte{1, 1}, ll...)...)
	bulk := func(vs ...byte) []byte { // rows of one LONGLONG
		b := append([]byte{0x80, 0}, ll...)
		for _, v := range vs {
			b = append(b, wire.IndicatorNone, v, 0, 0, 0, 0, 0, 0, 0)
		}
		return stmtCmd(wire.ComStmtBulkExecute, 7, b...)
	}
	blocked := func() step { return expectErr(1, errBlocked, "42000", "no-unfiltered") }
	prep := prepare("delete from t where ?")
	h := newHarness(t)
	h.Eng.Store(testEngine(t, policy))
	srv, cli := login()
	h.run(t, append(srv, expect(prep), send(prepareOKParams(7)),
		expect(withLL(0)), send(ok(1, autocommit)), expect(null), send(ok(1, autocommit)),
		expect(withStr("0.0abc")), send(ok(1, autocommit)),
		expect(query("prepare s from delete from t where ?")), send(ok(1, autocommit)),
		expect(bulk(0)), send(ok(1, autocommit)), expect(bulk(0, 0)), send(ok(1, autocommit)),
		expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))),
		append(cli, send(prep), expect(prepareOKParams(7)),
			send(withLL(1)), blocked(),
			send(withLL(0)), expect(ok(1, autocommit)),
			send(null), expect(ok(1, autocommit)),
			send(withStr(" 1x")), blocked(),
			send(withStr("0.0abc")), expect(ok(1, autocommit)),
			send(query("prepare s from delete from t where ?")), expect(ok(1, autocommit)),
			send(query("execute s using @v")), blocked(),
			// COM_STMT_BULK_EXECUTE: each row's value decides
			send(bulk(1)), blocked(),
			send(bulk(0, 1)), blocked(),
			send(bulk(0)), expect(ok(1, autocommit)),
			send(bulk(0, 0)), expect(ok(1, autocommit)),
			send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))))
}

func TestStringTruth(t *testing.T) {
	for _, tc := range []struct {
		s          string
		canT, canF bool
	}{
		{"1", true, false}, {"0", false, true}, {"", false, true}, {"abc", false, true}, {" 1", true, false},
		{"-0.0", false, true}, {".5", true, false}, {"0x1", false, true}, {"1e3", true, false}, {"1e-400", true, true},
		{"00", false, true}, {"\xd9\xa1", true, true},
	} {
		if tr, f := stringTruth([]byte(tc.s)); tr != tc.canT || f != tc.canF {
			t.Errorf("%q: got (%v, %v), want (%v, %v)", tc.s, tr, f, tc.canT, tc.canF)
		}
	}
}
