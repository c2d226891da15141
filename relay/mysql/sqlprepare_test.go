package mysql

import (
	"net"
	"testing"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

const sqlPolicy = "rules:\n  - {id: no-delete, action: deny, match: {kind: [delete]}}\n"

// SQL-level prepared statements (sqlprepare.go): an EXECUTE is judged by
// what the server holds under its name, under the mode and policy of the
// moment.
func TestSQLPrepared(t *testing.T) {
	ping, pong := pkt(0, wire.ComPing), ok(1, autocommit)
	blocked := func(rule string) step { return expectErr(1, errBlocked, "42000", rule) }
	const prepDelete = "prepare s from delete from t"
	const prepSelect = "prepare s from select 1"
	for _, tc := range []struct {
		name string
		// monitor: the session starts in monitor mode; the client's
		// enforce() step switches it to enforce
		monitor        bool
		server, client func(h *harness) []step
	}{
		{"prepared in monitor mode, executed in enforce: blocked", true,
			func(*harness) []step {
				return []step{expect(query(prepDelete)), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepDelete)), expect(ok(1, autocommit)), h.enforceStep(),
					send(query("execute s")), blocked("no-delete"), send(ping), expect(pong)}
			}},
		{"names are case-insensitive", true,
			func(*harness) []step {
				return []step{expect(query("prepare S from delete from t")), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query("prepare S from delete from t")), expect(ok(1, autocommit)), h.enforceStep(),
					send(query("execute s")), blocked("no-delete"), send(ping), expect(pong)}
			}},
		{"prepared before a reload that denies it: blocked", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit)),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("execute s")), expect(ok(1, autocommit)),
					h.reloadStep(t, "rules:\n  - {id: no-select, action: deny, match: {kind: [select]}}\n"),
					send(query("execute s")), blocked("no-select"), send(ping), expect(pong)}
			}},
		{"prepared from text assembled at run time: dynamic SQL again at every EXECUTE", false,
			func(*harness) []step {
				return []step{expect(query("prepare s from concat('select', ' 1')")), send(ok(1, autocommit)),
					expect(query("execute s")), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query("prepare s from concat('select', ' 1')")), expect(ok(1, autocommit)),
					send(query("execute s")), expect(ok(1, autocommit)),
					h.reloadStep(t, "rules:\n  - {id: no-dynamic, action: deny, match: {dynamic_sql: true}}\n"),
					send(query("execute s")), blocked("no-dynamic"), send(ping), expect(pong)}
			}},
		{"a CALL forgets every name: its procedure may have prepared any", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("call p()")), send(ok(1, autocommit)),
					expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("call p()")), expect(ok(1, autocommit)),
					send(query("execute s")), blocked("session-memory"),
					send(query(prepSelect)), expect(ok(1, autocommit)), send(query("execute s")), expect(ok(1, autocommit))}
			}},
		{"a CALL that fails forgets every name too", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("call p()")),
					send(pkt(1, append([]byte{0xff, 0x6c, 0x06, '#', '4', '5', '0', '0', '0'}, "signalled"...)...)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("call p()")),
					expectErr(1, 1644, "45000", "signalled"), send(query("execute s")), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"an EXECUTE after a CALL in the same text", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("call p(); execute s")), blocked("session-memory"),
					send(ping), expect(pong)}
			}},
		{"an EXECUTE pipelined behind a CALL not answered yet", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("call p()")), send(ok(1, autocommit)),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("call p()"), query("execute s")),
					expect(ok(1, autocommit)), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"an EXECUTE under another character set than its PREPARE's: refused, the server may prepare it again so", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit)),
					expect(query("set names gbk")), send(ok(1, autocommit)),
					expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(query("execute s")), expect(ok(1, autocommit)),
					send(query("set names gbk")), expect(ok(1, autocommit)),
					send(query("execute s")), blocked("session-memory"),
					send(query("set names utf8mb4")), expect(ok(1, autocommit)), send(query("execute s")), expect(ok(1, autocommit))}
			}},
		{"an EXECUTE under another sql_mode than its PREPARE's runs: MariaDB keeps the PREPARE's", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)),
					expect(query("set sql_mode = 'NO_BACKSLASH_ESCAPES'")), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
					expect(query("execute s")), send(ok(1, autocommit|wire.StatusNoBackslashEscapes))}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)),
					send(query("set sql_mode = 'NO_BACKSLASH_ESCAPES'")), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
					send(query("execute s")), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes))}
			}},
		{"a name never prepared is refused", false,
			func(*harness) []step { return []step{expect(ping), send(pong)} },
			func(h *harness) []step {
				return []step{send(query("execute nope")), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"deallocate forgets; a benign re-prepare of the name runs", true,
			func(*harness) []step {
				return []step{expect(query(prepDelete)), send(ok(1, autocommit)), expect(query("deallocate prepare s")), send(ok(1, autocommit)),
					expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepDelete)), expect(ok(1, autocommit)), send(query("deallocate prepare s")), expect(ok(1, autocommit)),
					h.enforceStep(), send(query("execute s")), blocked("session-memory"),
					send(query(prepSelect)), expect(ok(1, autocommit)), send(query("execute s")), expect(ok(1, autocommit))}
			}},
		{"a benign re-prepare replaces a denied one", true,
			func(*harness) []step {
				return []step{expect(query(prepDelete)), send(ok(1, autocommit)),
					expect(query(prepSelect)), send(ok(1, autocommit)), expect(query("execute s")), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepDelete)), expect(ok(1, autocommit)), send(query(prepSelect)), expect(ok(1, autocommit)),
					h.enforceStep(), send(query("execute s")), expect(ok(1, autocommit))}
			}},
		{"a re-prepare the server refuses leaves the name without a statement", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)),
					expect(query("prepare s from select nope")), send(wire.AppendErr(nil, 1, 1054, "42S22", "unknown column")),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)),
					send(query("prepare s from select nope")), expectErr(1, 1054, "42S22", "unknown column"),
					send(query("execute s")), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"reset connection forgets the names", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), send(ok(1, autocommit)), expect(pkt(0, wire.ComResetConnection)), send(ok(1, autocommit)),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect)), expect(ok(1, autocommit)), send(pkt(0, wire.ComResetConnection)), expect(ok(1, autocommit)),
					send(query("execute s")), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"pipelined prepare and execute of a benign statement both run", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect)), expect(query("execute s")), send(ok(1, autocommit)), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect), query("execute s")), expect(ok(1, autocommit)), expect(ok(1, autocommit))}
			}},
		{"prepare and execute in one text are judged with it", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect + ";execute s")), send(ok(1, autocommit))}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect + ";execute s")), expect(ok(1, autocommit))}
			}},
		{"a text of several statements that fails forgets what it prepared", false,
			func(*harness) []step {
				return []step{expect(query(prepSelect + ";select 2")), send(wire.AppendErr(nil, 1, 1146, "42S02", "no table")),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepSelect + ";select 2")), expectErr(1, 1146, "42S02", "no table"),
					send(query("execute s")), blocked("session-memory"), send(ping), expect(pong)}
			}},
		{"a CALL is judged with every name: its procedure may EXECUTE one", true,
			func(*harness) []step {
				return []step{expect(query(prepDelete)), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepDelete)), expect(ok(1, autocommit)), h.enforceStep(),
					send(query("call p()")), blocked("no-delete"), send(ping), expect(pong)}
			}},
		{"a COM_STMT_PREPAREd CALL is judged with every name when executed", true,
			func(*harness) []step {
				return []step{expect(query(prepDelete)), send(ok(1, autocommit)), expect(prepare("call p()")), send(prepareOK(7)),
					expect(ping), send(pong)}
			},
			func(h *harness) []step {
				return []step{send(query(prepDelete)), expect(ok(1, autocommit)), send(prepare("call p()")), expect(prepareOK(7)),
					h.enforceStep(), send(execute(7)), blocked("no-delete"), send(ping), expect(pong)}
			}},
		{"a name with a non-ASCII byte may be any other name", true,
			func(*harness) []step {
				return []step{expect(query("prepare \xc3\xa9 from delete from t")), send(ok(1, autocommit)), expect(ping), send(pong)}
			},
			func(h *harness) []step {
				// what the server equates of non-ASCII letters is not copied: é may be e
				return []step{send(query("prepare \xc3\xa9 from delete from t")), expect(ok(1, autocommit)), h.enforceStep(),
					send(query("execute e")), blocked("no-delete"), send(ping), expect(pong)}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Eng.Store(testEngine(t, sqlPolicy))
			h.Enforce.Store(!tc.monitor)
			srv, cli := login()
			h.run(t, append(srv, tc.server(h)...), append(cli, tc.client(h)...))
		})
	}
}

// enforceStep switches the harness to enforce mode.
func (h *harness) enforceStep() step {
	return relaytest.StepFunc(func(net.Conn) error { h.Enforce.Store(true); return nil })
}

// reloadStep replaces the engine with one of policy.
func (h *harness) reloadStep(t *testing.T, policy string) step {
	return relaytest.StepFunc(func(net.Conn) error { h.Eng.Store(testEngine(t, policy)); return nil })
}

// An EXECUTE pipelined behind the PREPARE of its name is judged by the
// PREPARE still unanswered: in monitor mode both run, and the EXECUTE is
// reported with the PREPAREd DELETE's verdict, not as a name never
// prepared.
func TestSQLPreparedPending(t *testing.T) {
	h := newHarness(t)
	h.Eng.Store(testEngine(t, sqlPolicy))
	h.Enforce.Store(false)
	srv, cli := login()
	prep := query("prepare s from delete from t")
	h.run(t, append(srv, expect(prep), expect(query("execute s")), send(ok(1, autocommit)), send(ok(1, autocommit))),
		append(cli, send(prep, query("execute s")), expect(ok(1, autocommit)), expect(ok(1, autocommit))))
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var rules []string
	for _, v := range h.Verdicts {
		rules = append(rules, v.RuleID)
	}
	// the PREPARE's text; the EXECUTE's own text; the pending PREPARE judged alone
	if len(rules) != 3 || rules[0] != "no-delete" || rules[1] != "" || rules[2] != "no-delete" {
		t.Errorf("judged rules %q, want [no-delete \"\" no-delete]", rules)
	}
}

// A COM_STMT_PREPARE of a SQL-level PREPARE, EXECUTE or DEALLOCATE is
// refused as the server refuses it (ER_UNSUPPORTED_PS), in every mode, and
// never sent: a client then falls back to COM_QUERY, which is judged.
func TestSQLPreparedNotPreparable(t *testing.T) {
	for _, monitor := range []bool{false, true} {
		h := newHarness(t)
		h.Eng.Store(testEngine(t, sqlPolicy))
		h.Enforce.Store(!monitor)
		srv, cli := login()
		h.run(t, append(srv, expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))),
			append(cli, send(prepare("execute s")), expectErr(1, errUnsupportedPS, "HY000", "not supported"),
				send(prepare("prepare s from select 1")), expectErr(1, errUnsupportedPS, "HY000", "not supported"),
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))))
	}
}

// A routine body's EXECUTE is no statement of the prepare: the server
// prepares CREATE PROCEDURE p() BEGIN EXECUTE s; END (mysqltest
// --ps-protocol's sp-dynamic).
func TestSQLPreparedBodyPreparable(t *testing.T) {
	h := newHarness(t)
	h.Eng.Store(testEngine(t, sqlPolicy))
	h.Enforce.Store(false)
	srv, cli := login()
	body := prepare("create procedure p() begin; execute s; end")
	h.run(t, append(srv, expect(body), send(prepareOK(3))), append(cli, send(body), expect(prepareOK(3))))
}
