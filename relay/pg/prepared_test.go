package pg

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/config"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// The verdict memory (prepared.go) against a fake server that keeps
// statements and portals by name (fakeNamed): each case prepares something
// in monitor mode, switches to enforce, and uses it. What the server ran
// is the proof, not only the client's error.

const (
	denied       = "delete from accounts" // no-unfiltered-writes
	deniedCursor = "select pg_read_file('/etc/passwd')"
	benign       = "select 1"
)

func parseMsg(name, sql string) []byte { return wire.AppendParse(nil, name, sql) }
func bindMsg(portal, stmt string) []byte {
	return wire.AppendBind(nil, portal, stmt)
}
func execMsg(portal string) []byte { return wire.AppendExecute(nil, portal) }
func closeMsg(kind byte, name string) []byte {
	b, _ := (&pgproto3.Close{ObjectType: kind, Name: name}).Encode(nil)
	return b
}

var syncMsg = []byte{wire.MsgSync, 0, 0, 0, 4}

// step is one batch the client sends (one or more sync points) and what
// it must get back.
type step struct {
	send    [][]byte
	readies int    // ReadyForQuery messages to read (default 1)
	want    string // "blocked", "ok" or a server SQLSTATE
	enforce bool   // switch to enforce mode before sending
}

func memoRun(t *testing.T, steps []step, mustRun, mustNotRun []string) {
	t.Helper()
	fs := newFakeServer(t, cannedResult(1))
	fs.Named = true
	d, addr := startProxy(t, fs.Addr(), modeMonitor)
	rc := dialRaw(t, addr)
	rc.Startup()
	for i, st := range steps {
		if st.enforce {
			if err := d.SetMode("t", modeEnforce); err != nil {
				t.Fatal(err)
			}
			fs.ResetRan()
		}
		var b []byte
		for _, m := range st.send {
			b = append(b, m...)
		}
		rc.Write(b)
		n := st.readies
		if n == 0 {
			n = 1
		}
		var got []string
		for j := 0; j < n; j++ {
			for _, m := range rc.ReadUntilReady() {
				if m[0] == wire.MsgErrorResponse {
					got = append(got, string(wire.ErrorField(m, 'C')))
				}
			}
		}
		want := []string(nil)
		switch st.want {
		case "blocked":
			want = []string{sqlstateBlocked}
		case "", "ok":
		default:
			want = []string{st.want}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("step %d: errors %q, want %q", i, got, want)
		}
	}
	for _, sql := range mustRun {
		if !fs.RanText(sql) {
			t.Errorf("after the switch the server did not run %q (ran %q)", sql, fs.Ran())
		}
	}
	for _, sql := range mustNotRun {
		if fs.RanText(sql) {
			t.Errorf("after the switch the server ran %q", sql)
		}
	}
}

func q(sql string) []byte { return wire.AppendQuery(nil, sql) }

func TestVerdictMemory(t *testing.T) {
	tests := []struct {
		name        string
		steps       []step
		ran, notRan []string
	}{
		{"refused re-Parse keeps the record", []step{
			{send: [][]byte{parseMsg("s", denied), syncMsg}},
			{send: [][]byte{parseMsg("s", benign), syncMsg}, want: "42P05"},
			{enforce: true, send: [][]byte{bindMsg("", "s"), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"Close then re-Parse in one batch", []step{
			{send: [][]byte{parseMsg("s", denied), syncMsg}},
			{enforce: true, send: [][]byte{closeMsg('S', "s"), parseMsg("s", benign), bindMsg("", "s"), execMsg(""), syncMsg}},
		}, []string{benign}, []string{denied}},
		{"an error skips the Close", []step{
			{send: [][]byte{parseMsg("s", denied), syncMsg}},
			{send: [][]byte{bindMsg("", "nosuch"), closeMsg('S', "s"), syncMsg}, want: "26000"},
			{enforce: true, send: [][]byte{bindMsg("", "s"), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"Close commits", []step{
			{send: [][]byte{parseMsg("s", denied), syncMsg}},
			{send: [][]byte{closeMsg('S', "s"), syncMsg}},
			{send: [][]byte{parseMsg("s", benign), syncMsg}},
			{enforce: true, send: [][]byte{bindMsg("", "s"), execMsg(""), syncMsg}},
		}, []string{benign}, nil},
		{"pipeline: an error skips the unnamed re-Parse", []step{
			{send: [][]byte{parseMsg("", denied), bindMsg("", ""), execMsg(""), syncMsg,
				bindMsg("", "nosuch"), parseMsg("", benign), syncMsg}, readies: 2, want: "26000"},
			{enforce: true, send: [][]byte{bindMsg("", ""), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"pipeline: the last unnamed Parse counts", []step{
			{send: [][]byte{parseMsg("", denied), syncMsg, parseMsg("", benign), syncMsg}, readies: 2},
			{enforce: true, send: [][]byte{bindMsg("", ""), execMsg(""), syncMsg}},
		}, []string{benign}, []string{denied}},
		{"pipeline: a pending Parse in an earlier batch is judged too", []step{
			{send: [][]byte{parseMsg("s", benign), syncMsg}},
			{send: [][]byte{closeMsg('S', "s"), syncMsg}},
			{enforce: true, send: [][]byte{parseMsg("x", benign), syncMsg, bindMsg("", "x"), execMsg(""), syncMsg}, readies: 2},
		}, []string{benign}, nil},
		{"portal bound before the switch", []step{
			{send: [][]byte{q("begin")}},
			{send: [][]byte{parseMsg("s", denied), bindMsg("p", "s"), syncMsg}},
			{enforce: true, send: [][]byte{execMsg("p"), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"benign portal bound before the switch", []step{
			{send: [][]byte{q("begin")}},
			{send: [][]byte{parseMsg("s", benign), bindMsg("p", "s"), syncMsg}},
			{enforce: true, send: [][]byte{execMsg("p"), syncMsg}},
		}, []string{benign}, nil},
		{"SQL PREPARE: refused re-PREPARE keeps the record", []step{
			{send: [][]byte{q("prepare p as " + denied)}},
			{send: [][]byte{q("prepare p as " + benign)}, want: "42P05"},
			{enforce: true, send: [][]byte{q("execute p")}, want: "blocked"},
		}, nil, []string{denied}},
		{"SQL PREPARE, protocol Bind", []step{
			{send: [][]byte{q("prepare p as " + denied)}},
			{enforce: true, send: [][]byte{bindMsg("", "p"), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"SQL PREPARE, EXECUTE through Parse", []step{
			{send: [][]byte{q("prepare p as " + denied)}},
			{enforce: true, send: [][]byte{parseMsg("", "execute p"), bindMsg("", ""), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"SQL DEALLOCATE then a benign PREPARE", []step{
			{send: [][]byte{q("prepare p as " + denied)}},
			{send: [][]byte{q("deallocate p")}},
			{send: [][]byte{q("prepare p as " + benign)}},
			{enforce: true, send: [][]byte{q("execute p")}},
		}, []string{benign}, []string{denied}},
		{"SQL PREPARE after the switch", []step{
			{enforce: true, send: [][]byte{q("prepare b as " + benign)}},
			{send: [][]byte{q("execute b")}},
		}, []string{benign}, nil},
		{"PREPARE through the extended protocol", []step{
			{send: [][]byte{parseMsg("", "prepare p as "+denied), bindMsg("", ""), execMsg(""), syncMsg}},
			{enforce: true, send: [][]byte{q("execute p")}, want: "blocked"},
		}, nil, []string{denied}},
		{"refused re-PREPARE through the extended protocol is uncertain: both are judged", []step{
			{send: [][]byte{q("prepare p as " + denied)}},
			{send: [][]byte{parseMsg("", "prepare p as "+benign), bindMsg("", ""), execMsg(""), syncMsg}, want: "42P05"},
			{enforce: true, send: [][]byte{q("execute p")}, want: "blocked"},
		}, nil, []string{denied}},
		{"extended PREPARE proven by a later ParseComplete", []step{
			{send: [][]byte{parseMsg("", "prepare b as "+benign), bindMsg("", ""), execMsg(""),
				parseMsg("", "fail"), bindMsg("", ""), execMsg(""), syncMsg}, want: "22012"},
			{enforce: true, send: [][]byte{q("execute b")}},
		}, []string{benign}, nil},
		{"extended PREPARE before an error is kept", []step{
			{send: [][]byte{parseMsg("", "prepare b as "+benign), bindMsg("", ""), execMsg(""), bindMsg("", "nosuch"), syncMsg}, want: "26000"},
			{enforce: true, send: [][]byte{q("execute b")}},
		}, []string{benign}, nil},
		{"an unreadable PREPARE let through makes unknown names suspect", []step{
			{send: [][]byte{q("prepare p as delete from accounts where x = 'unterminated")}},
			{enforce: true, send: [][]byte{q("execute p")}, want: "blocked"},
			{send: [][]byte{bindMsg("", "p"), execMsg(""), syncMsg}, want: "blocked"},
			{send: [][]byte{q("prepare b as " + benign)}},
			{send: [][]byte{q("execute b")}},
		}, []string{benign}, nil},
		{"a Sync ignored during COPY FROM STDIN does not lose a record", []step{
			{send: [][]byte{q("copy t from stdin"), syncMsg, {wire.MsgCopyDone, 0, 0, 0, 4}}},
			{send: [][]byte{parseMsg("s", denied), syncMsg}},
			{send: [][]byte{bindMsg("", "nosuch"), syncMsg}, want: "26000"},
			{enforce: true, send: [][]byte{bindMsg("", "s"), execMsg(""), syncMsg}, want: "blocked"},
		}, nil, []string{denied}},
		{"a Sync ignored during COPY FROM STDIN does not lose a PREPARE", []step{
			{send: [][]byte{q("copy t from stdin"), syncMsg, {wire.MsgCopyDone, 0, 0, 0, 4}}},
			{send: [][]byte{q("prepare p as " + denied)}},
			{send: [][]byte{q("fail")}, want: "22012"},
			{enforce: true, send: [][]byte{q("execute p")}, want: "blocked"},
		}, nil, []string{denied}},
		{"cursor declared before the switch", []step{
			{send: [][]byte{q("begin")}},
			{send: [][]byte{q("declare c cursor for select pg_read_file('/etc/passwd')")}},
			{enforce: true, send: [][]byte{q("fetch all from c")}, want: "blocked"},
			{send: [][]byte{q("rollback")}},
		}, nil, []string{"select pg_read_file('/etc/passwd')"}},
		{"cursor read by a protocol Execute", []step{
			{send: [][]byte{q("declare c cursor with hold for select pg_read_file('/etc/passwd')")}},
			{enforce: true, send: [][]byte{execMsg("c"), syncMsg}, want: "blocked"},
		}, nil, []string{"select pg_read_file('/etc/passwd')"}},
		{"refused re-DECLARE keeps the cursor", []step{
			{send: [][]byte{q("declare c cursor with hold for select pg_read_file('/etc/passwd')")}},
			{send: [][]byte{q("declare c cursor with hold for select 1")}, want: "42P03"},
			{enforce: true, send: [][]byte{q("move next in c")}, want: "blocked"},
		}, nil, []string{"select pg_read_file('/etc/passwd')"}},
		{"a cursor dies with its transaction", []step{
			{send: [][]byte{q("begin")}},
			{send: [][]byte{q("declare c cursor for select pg_read_file('/etc/passwd')")}},
			{send: [][]byte{q("commit")}},
			{send: [][]byte{q("begin")}},
			{enforce: true, send: [][]byte{q("declare c cursor for select 1")}},
			{send: [][]byte{q("fetch c")}},
			{send: [][]byte{q("commit")}},
		}, []string{"select 1"}, nil},
		{"CLOSE, then a benign cursor", []step{
			{send: [][]byte{q("declare c cursor with hold for select pg_read_file('/etc/passwd')")}},
			{send: [][]byte{q("close c")}},
			{send: [][]byte{q("declare c cursor with hold for select 2")}},
			{enforce: true, send: [][]byte{q("fetch c")}},
		}, []string{"select 2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { memoRun(t, tt.steps, tt.ran, tt.notRan) })
	}
}

// A reload to a stricter policy re-judges what was prepared under the old
// one, in enforce mode throughout.
func TestVerdictMemoryReload(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Named = true
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(text string) {
		if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("version: 1\nrules: []\n")
	d := startWith(t, config.Database{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(), Mode: modeEnforce, Policy: pol,
	})
	rc := dialRaw(t, d.ln.Addr().String())
	rc.Startup()
	for _, m := range [][]byte{
		q("prepare p as select secret from vault"),
		q("declare c cursor with hold for select secret from vault"),
		q("begin"),
		append(append(parseMsg("s", "select secret from vault"), bindMsg("b", "s")...), syncMsg...),
	} {
		rc.Write(m)
		for _, r := range rc.ReadUntilReady() {
			if r[0] == wire.MsgErrorResponse {
				t.Fatalf("before the reload: %s", wire.ErrorField(r, 'M'))
			}
		}
	}
	write("version: 1\nrules:\n  - id: no-vault\n    action: deny\n    reason: the vault is off limits\n    match:\n      tables: [vault]\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	fs.ResetRan()
	for i, m := range [][]byte{
		append(execMsg("b"), syncMsg...), // in the open transaction
		q("execute p"),
		q("fetch c"),
		append(append(bindMsg("", "s"), execMsg("")...), syncMsg...),
	} {
		rc.Write(m)
		blocked := false
		for _, r := range rc.ReadUntilReady() {
			if r[0] == wire.MsgErrorResponse {
				blocked = string(wire.ErrorField(r, 'C')) == sqlstateBlocked && strings.Contains(string(wire.ErrorField(r, 'M')), "no-vault")
			}
		}
		if !blocked {
			t.Errorf("after the reload, %q was not blocked by no-vault", m)
		}
		if i == 0 {
			rc.Write(q("rollback"))
			rc.ReadUntilReady()
		}
	}
	if fs.RanText("select secret from vault") {
		t.Errorf("the server ran the vault query after the reload")
	}
}

// BenchmarkMemo* measure the verdict memory's bookkeeping for one
// extended-protocol statement, without sockets: what toServer does for
// Parse (unnamed), Bind and Execute and toClient for ParseComplete and
// ReadyForQuery; and, for a statement prepared once, Bind and Execute. The
// round-trip benchmarks (BenchmarkSessionExtended*) include it but are too
// noisy on a shared machine to show tens of nanoseconds.
func BenchmarkMemoUnnamed(b *testing.B) { benchMemo(b, false) }
func BenchmarkMemoNamed(b *testing.B)   { benchMemo(b, true) }

func benchMemo(b *testing.B, named bool) {
	fs := newFakeServer(b, cannedResult(1))
	d, _ := startProxy(b, fs.Addr(), modeEnforce)
	s := benchSessionOf(d)
	s.memoReady(wire.TxIdle) // the end of the startup phase
	const sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	eng := s.env.Engine()
	parse := parseMsg("", sql)
	stmt := ""
	if named {
		stmt = "stmtcache_0123456789abcdef0123456789abcdef"
		s.memoJudged(parseMsg(stmt, sql), eng.Judge([]byte(sql), &s.sess), eng, 0)
		s.memoComplete(wire.MsgParseComplete)
		s.memoReady(wire.TxIdle)
	}
	bind, exec := bindMsg("", stmt), execMsg("")
	batch := s.memo.ready
	v := eng.Judge([]byte(sql), &s.sess)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !named {
			s.memoJudged(parse, v, eng, batch)
		}
		if _, known, _, _ := s.memoBind(bind, batch); !known {
			b.Fatal("Bind of an unknown statement")
		}
		if _, known, _, _ := s.memoExecute(exec, batch); !known {
			b.Fatal("Execute of an unknown portal")
		}
		if !named {
			s.memoComplete(wire.MsgParseComplete)
		}
		s.memoReady(wire.TxIdle)
		batch++
	}
}

// Uncertain definitions pile up beside the old record, without repeats,
// until maxAlternatives, past which the name is unknown (a use is denied).
func TestBesideBounded(t *testing.T) {
	r := &stmtRec{sql: []byte("select 0")}
	if got := beside(r, &stmtRec{sql: []byte("select 0")}, true); got != r {
		t.Fatalf("the same text again must keep the record")
	}
	for i := 1; i <= maxAlternatives+1; i++ {
		r = beside(r, &stmtRec{sql: []byte("select " + string(rune('0'+i)))}, true)
		if want := i > maxAlternatives; r.unknown != want || len(r.alt) != i {
			t.Fatalf("after %d uncertain definitions: unknown %v with %d alternatives, want %v with %d", i, r.unknown, len(r.alt), want, i)
		}
	}
	if got := beside(r, &stmtRec{sql: []byte("select 1")}, false); got.unknown || got.alt != nil {
		t.Fatalf("a certain definition must replace the uncertain ones")
	}
}

// BenchmarkMemoExecuteQuery measures what a repeated simple Query
// "EXECUTE p(...)" costs beyond its cached verdict: the lookup of what it
// runs.
func BenchmarkMemoExecuteQuery(b *testing.B) {
	fs := newFakeServer(b, cannedResult(1))
	d, _ := startProxy(b, fs.Addr(), modeEnforce)
	s := benchSessionOf(d)
	s.memoReady(wire.TxIdle)
	eng := s.env.Engine()
	prep := q("PREPARE get_account (int) AS SELECT * FROM accounts WHERE id = $1")
	s.memoJudged(prep, eng.Judge(prep[5:len(prep)-1], &s.sess), eng, 0)
	s.memoReady(wire.TxIdle)
	exec := q("EXECUTE get_account(42)")
	sql := exec[5 : len(exec)-1]
	v := eng.Judge(sql, &s.sess)
	batch := s.memo.ready
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, blocked := s.memoJudged(exec, v, eng, batch); blocked {
			b.Fatal("blocked")
		}
		s.memoReady(wire.TxIdle)
		batch++
	}
}

// TestVerdictMemoryRandom runs random sessions against the fake server in
// monitor mode (Parse, Close, SQL PREPARE and DEALLOCATE, PREPARE through
// the extended protocol, errors, Syncs anywhere, pipelined in one write),
// switches to enforce and uses every name: the server must never run the
// denied text, whatever it holds. Over-remembering (a benign use blocked
// after an uncertain outcome) is allowed; running a denied text is not.
func TestVerdictMemoryRandom(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Named = true
	d, addr := startProxy(t, fs.Addr(), modeMonitor)
	names := []string{"", "a", "b"}
	texts := []string{denied, benign, "select 2"}
	rng := rand.New(rand.NewSource(10))
	var log []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last session was\n%s", strings.Join(log, "\n"))
		}
	})
	for seq := 0; seq < 600; seq++ {
		if err := d.SetMode("t", modeMonitor); err != nil {
			t.Fatal(err)
		}
		rc := dialRaw(t, addr)
		rc.Startup()
		log = log[:0]
		var b []byte
		syncs := 0
		// flush sends the batch and reads up to the answer to a sentinel
		// Query sent after it: a Query inside an extended batch gets no
		// answer when the server skips it after an error.
		flush := func() {
			sentinel := fmt.Sprintf("sentinel %d", len(log))
			rc.Write(append(append(b, syncMsg...), q(sentinel)...))
			for done := false; !done; {
				for _, m := range rc.ReadUntilReady() {
					if m[0] == 'C' && strings.HasPrefix(string(m[5:]), sentinel+"\x00") {
						done = true
					}
				}
			}
			b, syncs = b[:0], 0
		}
		for i := 0; i < 12; i++ {
			name, text := names[rng.Intn(len(names))], texts[rng.Intn(len(texts))]
			cursorQ := []string{deniedCursor, "select 3"}[rng.Intn(2)]
			switch rng.Intn(14) {
			case 9:
				b = append(b, q("begin")...)
				log = append(log, "Query(begin)")
			case 10:
				b = append(b, q([]string{"commit", "rollback"}[rng.Intn(2)])...)
				log = append(log, "Query(commit/rollback)")
			case 11:
				hold := []string{"", " with hold"}[rng.Intn(2)]
				b = append(b, q("declare c cursor"+hold+" for "+cursorQ)...)
				log = append(log, "Query(declare c"+hold+" for "+cursorQ+")")
			case 12:
				b = append(b, bindMsg("p", name)...)
				log = append(log, fmt.Sprintf("Bind(p, %q)", name))
			case 13:
				b = append(b, q("close c")...)
				log = append(log, "Query(close c)")
			case 0, 1:
				b = append(b, parseMsg(name, text)...)
				log = append(log, fmt.Sprintf("Parse(%q, %q)", name, text))
			case 2:
				b = append(b, closeMsg('S', name)...)
				log = append(log, fmt.Sprintf("Close(%q)", name))
			case 3:
				b = append(b, bindMsg("", "nosuch")...)
				log = append(log, "Bind(nosuch)")
			case 4:
				if name != "" {
					b, syncs = append(b, q("prepare "+name+" as "+text)...), syncs+1
					log = append(log, fmt.Sprintf("Query(prepare %s as %s)", name, text))
				}
			case 5:
				if name != "" {
					b, syncs = append(b, q("deallocate "+name)...), syncs+1
					log = append(log, "Query(deallocate "+name+")")
				}
			case 6:
				if name != "" {
					b = append(b, parseMsg("", "prepare "+name+" as "+text)...)
					b = append(b, bindMsg("", "")...)
					b = append(b, execMsg("")...)
					log = append(log, fmt.Sprintf("Parse/Bind/Execute(prepare %s as %s)", name, text))
				}
			case 7:
				b, syncs = append(b, syncMsg...), syncs+1
				log = append(log, "Sync")
			case 8:
				log = append(log, "(read)")
				flush()
			}
		}
		flush()
		if err := d.SetMode("t", modeEnforce); err != nil {
			t.Fatal(err)
		}
		fs.ResetRan()
		// one use per session: a blocked one fails an open transaction
		probes := [][]byte{
			append(append(bindMsg("", names[rng.Intn(len(names))]), execMsg("")...), syncMsg...),
			q("execute " + names[1+rng.Intn(len(names)-1)]),
			q("fetch c"),
			append(execMsg("c"), syncMsg...),
			append(execMsg("p"), syncMsg...),
		}
		probe := probes[rng.Intn(len(probes))]
		log = append(log, fmt.Sprintf("after the switch: %q", probe))
		rc.Write(probe)
		rc.ReadUntilReady()
		if fs.RanText(denied) || fs.RanText(deniedCursor) {
			t.Fatalf("sequence %d: after the switch the server ran the denied text; the session was\n%s", seq, strings.Join(log, "\n"))
		}
		rc.Conn.Close()
	}
}
