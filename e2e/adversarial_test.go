package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
	"github.com/sqlfw/sqlfw/internal/corpus"
)

// TestAdversarialE2E sends every line of the engine's corpora — the
// adversarial corpus (../engine/pgsql/testdata/adversarial/*.tsv), malicious.sql,
// benign.sql and pgbench.sql — through a real sqlfwd (enforce, embedded
// default policy) to the real PostgreSQL, and judges by what the server
// says it received: every send carries a unique marker comment, and
//
//   - a denied line (expect "deny" or a rule id) must never put its marker
//     into the server's statement log (log_statement=all logs a statement
//     when it arrives, and its text again when it fails), the client must get
//     SQLSTATE 42501 naming the rule, and the canary tables the corpus names
//     (t, users, orders, …) must hold the same rows afterwards, and the
//     server's roles, memberships, settings, databases and catalog object
//     counts must be what they were (serverState);
//   - an allowed line must put its marker into the log, which proves the log
//     check can see a statement at all. The server may well answer an allowed
//     line with an error (a table the corpus names does not exist); that is
//     fine. Allowed lines run inside BEGIN … ROLLBACK, after the deny phase
//     and its canary check, so that they change nothing the other tests see.
//
// Every line goes as a simple Query and, when the engine counts at most one
// statement in it, also through the extended protocol (Parse/Bind/Execute),
// each on a connection of its own. A line with a session column goes once
// more after the identical text was sent in a default session, so that a
// verdict cached for the default reading cannot serve the line's session;
// only the log lines of the second backend count for it.
func TestAdversarialE2E(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	cases := readE2ECorpus(t)

	d, err := startDaemon()
	if err != nil {
		t.Fatalf("starting sqlfwd: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log (last lines):\n%s", tail(d.log(), 40))
		}
		if err := d.stop(); err != nil {
			t.Errorf("stopping sqlfwd: %v", err)
		}
	})

	run := randomHex(t)
	sends, skipped := planSends(t, cases, run)
	for _, s := range skipped {
		t.Log(s)
	}
	setupRoles(t, cases)
	setupCanaries(t)
	before := canaryFingerprints(t)

	var denies, allows []*advSend
	for _, s := range sends {
		if s.c.denied() {
			denies = append(denies, s)
		} else {
			allows = append(allows, s)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runSends(ctx, d.addr, denies)

	// The effect check: no denied line changed a canary table.
	after := canaryFingerprints(t)
	for _, name := range canaryNames {
		if before[name] != after[name] {
			t.Errorf("canary table %s changed during the deny phase (before %s, after %s): a denied line reached the server", name, before[name], after[name])
		}
	}
	for _, st := range serverState {
		if before[st.name] != after[st.name] {
			t.Errorf("the server's %s changed during the deny phase (before %s, after %s): a denied line reached the server", st.name, before[st.name], after[st.name])
		}
	}

	runSends(ctx, d.addr, allows)
	if ctx.Err() != nil {
		t.Fatalf("the corpus did not finish within its time bound: %v", ctx.Err())
	}

	logged := serverLogMarkers(t, run)
	var nDeny, nAllow, nUnreachable int
	for _, s := range sends {
		lines := logged[s.marker]
		if s.warm {
			lines = linesOf(lines, s.pid)
		}
		if s.c.denied() {
			if len(lines) > 0 {
				t.Errorf("%s: denied line reached PostgreSQL (%s): %s\n  expect: %s\n  client: %s\n  server log:\n    %s",
					s.c.where(), s.proto, s.c.show(), s.c.expect, s.got, strings.Join(lines, "\n    "))
				continue
			}
			if s.unreachable != "" {
				t.Logf("%s (%s): not judged: %s", s.c.where(), s.proto, s.unreachable)
				nUnreachable++
				continue
			}
			nDeny++
			if msg := s.deniedMismatch(); msg != "" {
				t.Errorf("%s: %s (%s): %s\n  expect: %s\n  client: %s", s.c.where(), msg, s.proto, s.c.show(), s.c.expect, s.got)
			}
			continue
		}
		if s.unreachable != "" && len(lines) == 0 {
			t.Logf("%s (%s): not judged: %s", s.c.where(), s.proto, s.unreachable)
			nUnreachable++
			continue
		}
		nAllow++
		if len(lines) == 0 {
			t.Errorf("%s: allowed line never reached PostgreSQL (%s): %s\n  client: %s\n  server log: nothing with marker %s",
				s.c.where(), s.proto, s.c.show(), s.got, s.marker)
		}
	}
	t.Logf("%d corpus lines, %d sends: %d denied sends stayed out of the server log, %d allowed sends reached it; %d sends skipped, %d in a session no connection can have",
		len(cases), len(sends), nDeny, nAllow, len(skipped), nUnreachable)

	t.Run("control", checkAdversarialControl)
}

// checkAdversarialControl shows that the two checks above can fail: a line
// the default policy denies, sent through a sqlfwd in monitor mode (which
// forwards what it would deny), must show up in the server log and change
// its canary table.
func checkAdversarialControl(t *testing.T) {
	run := randomHex(t)
	c := &advCase{file: "control", line: 1, expect: "no-unfiltered-writes", sql: "DELETE FROM t"}
	v := engineVerdict(t, c.sql)
	if !v.Action.Denies() || v.RuleID != c.expect {
		t.Fatalf("control %q: the engine says %v %s, want deny %s", c.sql, v.Action, v.RuleID, c.expect)
	}
	m, err := startDaemon("--mode", "monitor")
	if err != nil {
		t.Fatalf("starting sqlfwd in monitor mode: %v", err)
	}
	defer m.stop()
	// A row of its own, so that the DELETE changes t even when a leak
	// above has emptied it.
	directExec(t, "INSERT INTO t (id) VALUES (1000)")
	before := canaryFingerprints(t)["t"]
	s := &advSend{c: c, proto: "simple", marker: "sqlfwadv_" + run + "_0s"}
	s.text = "/* " + s.marker + " */ " + c.sql
	s.send(context.Background(), m.addr)
	if after := canaryFingerprints(t)["t"]; after == before {
		t.Errorf("control %q through a monitor-mode sqlfwd (client: %s): canary t unchanged (%s): the effect check cannot see a leak", c.sql, s.got, after)
	}
	if lines := serverLogMarkers(t, run)[s.marker]; len(lines) == 0 {
		t.Errorf("control %q through a monitor-mode sqlfwd (client: %s): marker %s not in the server log: the log check cannot see a leak", c.sql, s.got, s.marker)
	}
}

func engineVerdict(t *testing.T, sql string) engine.Verdict {
	t.Helper()
	e, err := engine.New(pgsql.DefaultPolicy(), pgsql.Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e.Judge([]byte(sql), &engine.Session{User: "app", Database: "app"})
}

// advCase is one corpus line.
type advCase struct {
	file    string
	line    int
	expect  string // "allow", "deny" or a rule id
	sql     string
	session string
}

func (c *advCase) denied() bool { return c.expect != "allow" }

func (c *advCase) where() string { return fmt.Sprintf("%s:%d", c.file, c.line) }

// show is the statement for a failure message, quoted, cut at 300 bytes.
func (c *advCase) show() string {
	s := c.sql
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	q := strconv.Quote(s)
	if c.session != "" {
		q += " session " + c.session
	}
	return q
}

// readE2ECorpus reads the corpora the engine's tests read, in their formats:
// adversarial/*.tsv (expect<TAB>statement[<TAB>session], see
// engine/pgsql/adversarial_test.go), malicious.sql (rule-id<TAB>statement),
// benign.sql and pgbench.sql (one allowed statement a line).
func readE2ECorpus(t *testing.T) []*advCase {
	t.Helper()
	const dir = "../engine/pgsql/testdata"
	cs, err := corpus.Read(filepath.Join(dir, "adversarial", "*.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*advCase
	for _, c := range cs {
		out = append(out, &advCase{file: "adversarial/" + c.File, line: c.Line, expect: c.Expect, sql: c.SQL, session: c.Session})
	}
	// The older corpora: lines are trimmed, "--" starts a comment line.
	plain := func(name string, f func(n int, line string)) {
		eachLine(t, filepath.Join(dir, name), func(n int, line string) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "--") {
				return
			}
			f(n, line)
		})
	}
	plain("malicious.sql", func(n int, line string) {
		id, sql, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("malicious.sql:%d: line without tab: %q", n, line)
		}
		out = append(out, &advCase{file: "malicious.sql", line: n, expect: id, sql: sql})
	})
	for _, name := range []string{"benign.sql", "pgbench.sql"} {
		plain(name, func(n int, line string) {
			out = append(out, &advCase{file: name, line: n, expect: "allow", sql: line})
		})
	}
	return out
}

func eachLine(t *testing.T, path string, f func(n int, line string)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		f(n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
}

// advSession is what a corpus line's session column asks of the connection.
type advSession struct {
	user  string   // connect as this role ("" = the superuser)
	setup []string // statements sent through sqlfwd before the line
	// pipelined: the setup goes in the same write as the line, so the line
	// arrives before the server has confirmed the settings (unconfirmed=1).
	pipelined bool
}

// parseAdvSession turns a session column into connection setup. Keys it
// cannot reproduce on a real connection return an error saying why; the line
// is then skipped (and the skip logged), never silently dropped.
func parseAdvSession(spec string) (advSession, error) {
	var s advSession
	if spec == "" {
		return s, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "user":
			if !regexp.MustCompile(`^[a-z_][a-z0-9_]*$`).MatchString(v) {
				return s, fmt.Errorf("user=%q is not a plain role name", v)
			}
			s.user = v
		case "scs":
			switch strings.ToLower(v) {
			case "off", "on":
				s.setup = append(s.setup, "SET standard_conforming_strings = "+strings.ToLower(v))
			default:
				return s, fmt.Errorf("scs=%q: want on or off", v)
			}
		case "encoding":
			if !regexp.MustCompile(`^[A-Za-z0-9_]+$`).MatchString(v) {
				return s, fmt.Errorf("encoding=%q is not an encoding name", v)
			}
			s.setup = append(s.setup, "SET client_encoding = '"+v+"'")
		case "unconfirmed":
			if v != "1" && v != "true" {
				return s, fmt.Errorf("unconfirmed=%q: want 1", v)
			}
			s.pipelined = true
		default:
			return s, fmt.Errorf("session key %q has no e2e counterpart here", k)
		}
	}
	if s.pipelined && len(s.setup) == 0 {
		// Something that may change how the server lexes, still unanswered
		// when the line arrives.
		s.setup = []string{"SET standard_conforming_strings = on"}
	}
	return s, nil
}

// advSend is one statement on the wire: a corpus line, marked, over one
// protocol.
type advSend struct {
	c      *advCase
	sess   advSession
	proto  string // "simple" or "extended"
	text   string // the line with its marker
	marker string
	copyIn bool // COPY … FROM STDIN: sent with the copy sub-protocol
	// warm: the text goes first through a connection in the default
	// session, then in the line's session; only the server log lines of
	// the second connection's backend (pid) count.
	warm bool
	pid  uint32

	setupErr string // a failed setup statement of a pipelined send
	// unreachable says why the session the line asks for cannot be set up
	// on a real connection; the send is then not judged (but logged).
	unreachable string
	got         string // what the client saw, for messages
	errCode     string // SQLSTATE of the first error, "" for none
	errMsg      string
}

var copyFromStdin = regexp.MustCompile(`(?is)^\s*copy\b.*\bfrom\s+stdin\b`)

// planSends marks every line. The marker is a block comment put in front of
// the statement when that leaves the engine's verdict unchanged, else after
// it; a line where neither placement keeps the verdict is skipped with the
// reason returned. The check runs the embedded engine under the default
// session: a leading or trailing ASCII comment lexes the same under every
// session setting the corpus varies.
func planSends(t *testing.T, cases []*advCase, run string) ([]*advSend, []string) {
	t.Helper()
	e, err := engine.New(pgsql.DefaultPolicy(), pgsql.Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	judge := func(sql string) engine.Verdict {
		return e.Judge([]byte(sql), &engine.Session{User: "app", Database: "app"})
	}
	same := func(a, b engine.Verdict) bool {
		return a.Action.Denies() == b.Action.Denies() && a.RuleID == b.RuleID
	}
	var sends []*advSend
	var skipped []string
	for i, c := range cases {
		sess, err := parseAdvSession(c.session)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: skipped: %v", c.where(), err))
			continue
		}
		raw := judge(c.sql)
		protos := []string{"simple"}
		// The extended protocol carries one statement; a text the engine
		// cannot parse (0) goes both ways, as an attacker would send it.
		switch {
		case raw.Statements == 0 && !raw.ParseError && !raw.Action.Denies():
			// Only comments: PostgreSQL answers an empty Execute without
			// logging it, so there would be nothing to look for.
			skipped = append(skipped, fmt.Sprintf("%s (extended): skipped: an empty query (comments only) is not logged when executed through the extended protocol", c.where()))
		case raw.Statements <= 1:
			protos = append(protos, "extended")
		}
		for _, proto := range protos {
			m := fmt.Sprintf("sqlfwadv_%s_%d%c", run, i, proto[0])
			var text string
			for i, cand := range []string{"/* " + m + " */ " + c.sql, c.sql + " /* " + m + " */"} {
				v := judge(cand)
				if same(raw, v) {
					text = cand
					break
				}
				if i == 0 {
					t.Logf("%s (%s): a leading marker comment changes the engine's verdict (%v %s → %v %s); trying it after the statement", c.where(), proto, raw.Action, raw.RuleID, v.Action, v.RuleID)
				}
				if raw.Action.Denies() && !v.Action.Denies() {
					t.Errorf("%s: a marker comment turns a denied line into an allowed one: %s\n  unmarked: %v %s\n  marked:   %q → %v", c.where(), c.show(), raw.Action, raw.RuleID, cand, v.Action)
				}
			}
			if text == "" {
				skipped = append(skipped, fmt.Sprintf("%s (%s): skipped: no marker placement keeps the engine's verdict (%v %s) for %s", c.where(), proto, raw.Action, raw.RuleID, c.show()))
				continue
			}
			sends = append(sends, &advSend{c: c, sess: sess, proto: proto, text: text, marker: m,
				copyIn: copyFromStdin.MatchString(c.sql)})
			if proto == "simple" && len(sess.setup) > 0 && strings.HasPrefix(text, "/* ") {
				// The same text once more, first in a default session: its
				// verdict there is cached, and the line's session must not
				// be served from that cache.
				w := fmt.Sprintf("sqlfwadv_%s_%dw", run, i)
				sends = append(sends, &advSend{c: c, sess: sess, proto: "simple, after the same text in a default session",
					text: strings.Replace(text, m, w, 1), marker: w, warm: true, copyIn: copyFromStdin.MatchString(c.sql)})
			}
		}
	}
	return sends, skipped
}

// runSends sends each on a connection of its own, a few at a time.
func runSends(ctx context.Context, addr string, sends []*advSend) {
	const workers = 6
	work := make(chan *advSend)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range work {
				s.send(ctx, addr)
			}
		})
	}
	for _, s := range sends {
		work <- s
	}
	close(work)
	wg.Wait()
}

// sendTimeout bounds one send: a denied line that leaked and sleeps, or an
// allowed one waiting for a lock, must not stall the run.
const sendTimeout = 10 * time.Second

func (s *advSend) send(parent context.Context, addr string) {
	ctx, cancel := context.WithTimeout(parent, sendTimeout)
	defer cancel()
	host, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	user := pg.User
	if s.sess.user != "" {
		user = s.sess.user
	}
	if s.warm {
		w, err := pgconn.Connect(ctx, dsn(host, p, user, ""))
		if err != nil {
			s.note(fmt.Errorf("connecting for the default-session send: %w", err))
			return
		}
		// Only the verdict it leaves in the cache matters: whatever the
		// text does in the default reading is rolled back when the
		// connection closes.
		w.Exec(ctx, "BEGIN").ReadAll()
		if s.copyIn {
			w.CopyFrom(ctx, strings.NewReader(""), s.text)
		} else {
			w.Exec(ctx, s.text).ReadAll()
		}
		w.Close(context.Background())
	}
	conn, err := pgconn.Connect(ctx, dsn(host, p, user, ""))
	if err != nil {
		s.note(fmt.Errorf("connecting: %w", err))
		return
	}
	defer conn.Close(context.Background())
	s.pid = conn.PID()
	if !s.sess.pipelined {
		for _, q := range s.sess.setup {
			if _, err := conn.Exec(ctx, q).ReadAll(); err != nil {
				s.note(fmt.Errorf("session setup %q: %w", q, err))
				var pgErr *pgconn.PgError
				switch {
				case !errors.As(err, &pgErr):
				case pgErr.Code != codeBlocked:
					// The engine's corpus may name states no server has
					// (encoding=KLINGON): there is nothing to send it in.
					s.unreachable = fmt.Sprintf("the server refuses the session setup %q: %s", q, pgErr.Message)
				case s.c.denied():
					s.unreachable = fmt.Sprintf("sqlfwd blocks the session setup %q (%s): no statement runs in that state", q, pgErr.Message)
				}
				return
			}
		}
	}
	wrap := !s.c.denied()
	if wrap {
		// SET LOCAL ends with the transaction; the timeout keeps an allowed
		// pg_sleep or lock wait short.
		if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL statement_timeout = 5000").ReadAll(); err != nil {
			s.note(fmt.Errorf("BEGIN: %w", err))
			return
		}
	}
	switch {
	case s.sess.pipelined:
		// Closing the connection rolls back what wrap began.
		s.notePipelined(s.sendRaw(ctx, conn, s.sess.setup))
		return
	case s.copyIn && s.proto == "extended":
		// pgconn has no COPY FROM STDIN through Parse/Bind/Execute.
		s.notePipelined(s.sendRaw(ctx, conn, nil))
		return
	}
	switch {
	case s.copyIn && s.proto == "simple":
		_, err = conn.CopyFrom(ctx, strings.NewReader(""), s.text)
	case s.proto == "simple":
		_, err = conn.Exec(ctx, s.text).ReadAll()
	default:
		err = conn.ExecParams(ctx, s.text, nil, nil, nil, nil).Read().Err
	}
	s.note(err)
	if wrap && !conn.IsClosed() {
		conn.Exec(ctx, "ROLLBACK").ReadAll()
	}
}

// sendRaw writes the setup statements and the line in one go and only then
// reads the answers; it returns the line's error. The connection is hijacked
// (pgconn cannot pipeline simple queries) and closed afterwards. A COPY FROM
// STDIN gets no rows.
func (s *advSend) sendRaw(ctx context.Context, conn *pgconn.PgConn, setup []string) error {
	hc, err := conn.Hijack()
	if err != nil {
		return err
	}
	defer hc.Conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		hc.Conn.SetDeadline(dl)
	}
	fe := hc.Frontend
	for _, q := range setup {
		fe.Send(&pgproto3.Query{String: q})
	}
	if s.proto == "simple" {
		fe.Send(&pgproto3.Query{String: s.text})
	} else {
		fe.Send(&pgproto3.Parse{Query: s.text})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Describe{ObjectType: 'P'})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
	}
	if err := fe.Flush(); err != nil {
		return err
	}
	var lineErr error
	for ready := 0; ready <= len(setup); {
		msg, err := fe.Receive()
		if err != nil {
			if lineErr != nil {
				return lineErr // deny_and_close: the error, then the close
			}
			return fmt.Errorf("after %d of %d answers: %w", ready, len(setup)+1, err)
		}
		switch m := msg.(type) {
		case *pgproto3.ReadyForQuery:
			ready++
		case *pgproto3.ErrorResponse:
			if ready == len(setup) && lineErr == nil {
				lineErr = pgconn.ErrorResponseToPgError(m)
			} else if ready < len(setup) {
				s.setupErr += fmt.Sprintf("; setup %q: %s %s", setup[ready], m.Code, m.Message)
			}
		case *pgproto3.CopyInResponse:
			fe.Send(&pgproto3.CopyDone{})
			if s.proto == "extended" {
				// The server ignored the Sync sent during copy-in mode.
				fe.Send(&pgproto3.Sync{})
			}
			if err := fe.Flush(); err != nil {
				return err
			}
		}
	}
	return lineErr
}

func (s *advSend) note(err error) {
	if err == nil {
		s.got = "no error"
		return
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		s.errCode, s.errMsg = pgErr.Code, pgErr.Message
		s.got = fmt.Sprintf("%s %s: %s", pgErr.Severity, pgErr.Code, pgErr.Message)
		return
	}
	s.got = err.Error()
}

func (s *advSend) notePipelined(err error) {
	s.note(err)
	s.got += s.setupErr
}

// deniedMismatch says what is wrong with the client's answer to a denied
// line, "" when it is sqlfwd's block naming the expected rule.
func (s *advSend) deniedMismatch() string {
	if s.errCode != codeBlocked || !strings.HasPrefix(s.errMsg, blockedPrefix) {
		return "denied line not answered with sqlfwd's block (SQLSTATE " + codeBlocked + ")"
	}
	if s.c.expect != "deny" && !strings.Contains(s.errMsg, "rule "+s.c.expect) {
		return "blocked by another rule than expected"
	}
	return ""
}

// canaryNames are the tables the corpus names most; each is created with
// rows before the run, and a denied line must leave them as they were.
var canaryNames = []string{"t", "users", "orders", "accounts", "products", "items", "sessions", "audit_log"}

func setupCanaries(t *testing.T) {
	t.Helper()
	cols := map[string]string{
		"users":    "id int PRIMARY KEY, name text, email text, password_hash text, role text, active bool DEFAULT true, last_login timestamptz, created_at timestamptz DEFAULT now()",
		"orders":   "id int PRIMARY KEY, user_id int, total numeric, status text, created_at timestamptz DEFAULT now()",
		"accounts": "id int PRIMARY KEY, user_id int, balance numeric",
		"products": "id int PRIMARY KEY, name text, price numeric",
	}
	var b strings.Builder
	for _, name := range canaryNames {
		c, ok := cols[name]
		if !ok {
			c = "id int PRIMARY KEY, a int, b text, name text"
		}
		fmt.Fprintf(&b, "DROP TABLE IF EXISTS %s CASCADE; CREATE TABLE %s (%s); INSERT INTO %s (id) SELECT g FROM generate_series(1, 5) g;\n", name, name, c, name)
	}
	directExec(t, b.String())
	t.Cleanup(func() {
		var drop strings.Builder
		for _, name := range canaryNames {
			fmt.Fprintf(&drop, "DROP TABLE IF EXISTS %s CASCADE;", name)
		}
		directExec(t, drop.String())
	})
}

// canaryFingerprints returns, per canary table, its row count and an md5 of
// its rows ("missing" when it is gone).
func canaryFingerprints(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	if err != nil {
		t.Fatalf("connecting directly: %v", err)
	}
	defer c.Close(context.Background())
	out := map[string]string{}
	read := func(name, q string) {
		res, err := c.Exec(ctx, q).ReadAll()
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
			out[name] = fmt.Sprintf("unreadable (%v)", err)
			return
		}
		out[name] = string(res[0].Rows[0][0])
	}
	for _, name := range canaryNames {
		read(name, fmt.Sprintf("SELECT count(*) || ' rows, md5 ' || md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM %s x", name))
	}
	for _, st := range serverState {
		read(st.name, st.query)
	}
	return out
}

// serverState is what a denied line could change outside the canary tables:
// the effects the attack suite proved (superuser granted, settings
// switched, code loaded, objects created). Each query returns one text.
var serverState = []struct{ name, query string }{
	{"roles", `SELECT md5(string_agg(format('%s %s%s%s%s%s%s', rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication || rolbypassrls::text), ',' ORDER BY rolname)) FROM pg_roles`},
	{"role memberships", `SELECT count(*) || ' ' || md5(coalesce(string_agg(roleid || ':' || member, ',' ORDER BY roleid, member), '')) FROM pg_auth_members`},
	{"role and database settings", `SELECT count(*) || ' ' || md5(coalesce(string_agg(setdatabase || ':' || setrole || ':' || setconfig::text, ',' ORDER BY setdatabase, setrole), '')) FROM pg_db_role_setting`},
	{"postgresql.auto.conf (ALTER SYSTEM)", `SELECT md5(pg_read_file('postgresql.auto.conf'))`},
	{"databases", `SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database`},
	{"catalog objects", `SELECT format('%s relations, %s functions, %s types, %s schemas, %s extensions, %s languages, %s casts, %s operators, %s event triggers, %s triggers, %s rules, %s servers, %s large objects',
		(SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_proc), (SELECT count(*) FROM pg_type), (SELECT count(*) FROM pg_namespace),
		(SELECT count(*) FROM pg_extension), (SELECT count(*) FROM pg_language), (SELECT count(*) FROM pg_cast), (SELECT count(*) FROM pg_operator),
		(SELECT count(*) FROM pg_event_trigger), (SELECT count(*) FROM pg_trigger), (SELECT count(*) FROM pg_rewrite),
		(SELECT count(*) FROM pg_foreign_server), (SELECT count(*) FROM pg_largeobject_metadata))`},
}

// setupRoles creates the roles session columns connect as (user=…), plain
// LOGIN roles, dropped after the test.
func setupRoles(t *testing.T, cases []*advCase) {
	t.Helper()
	roles := map[string]bool{}
	for _, c := range cases {
		if s, err := parseAdvSession(c.session); err == nil && s.user != "" && s.user != pg.User {
			roles[s.user] = true
		}
	}
	var names []string
	for r := range roles {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		pgRoles(t, r)
		t.Cleanup(func() { directExec(t, "DROP ROLE IF EXISTS "+r) })
	}
}

// linesOf keeps the log lines of backend pid (log_line_prefix '%m [%p] ',
// scripts/pg.sh).
func linesOf(lines []string, pid uint32) []string {
	tag := fmt.Sprintf(" [%d] ", pid)
	var out []string
	for _, l := range lines {
		if strings.Contains(l, tag) {
			out = append(out, l)
		}
	}
	return out
}

// serverLogMarkers waits until PostgreSQL has logged a sentinel sent after
// every send, then returns the log lines holding each marker of this run.
func serverLogMarkers(t *testing.T, run string) map[string][]string {
	t.Helper()
	log := serverLog(t)
	re := regexp.MustCompile(`sqlfwadv_` + run + `_[0-9]+[sew]`)
	out := map[string][]string{}
	for _, line := range strings.Split(string(log), "\n") {
		for _, m := range re.FindAllString(line, -1) {
			if len(line) > 400 {
				line = line[:400] + "…"
			}
			out[m] = append(out[m], line)
		}
	}
	return out
}
