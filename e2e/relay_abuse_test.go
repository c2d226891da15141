package e2e

// Relay faults found under abuse (issue 21, class 9), against real servers
// through sqlfwd: a PostgreSQL restarted under load, a stray password
// message after authentication, a MySQL client's half-close, an oversized
// packet before a MySQL login. In each the daemon lives on and a connection
// opened before the abuse stays usable.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// hangBound is how long one statement (or connect) of the load may take
// before the test calls it a hang. It is a deadlock detector, not a speed
// assertion: the fault it catches left a statement unanswered until its
// client gave up after 15 s; a healthy session answers or fails within
// milliseconds of the server going away or coming back.
const hangBound = 10 * time.Second

// pgCtl runs pg_ctl on the second server's cluster, as the postgres user
// when we are root (initdb and pg_ctl refuse root).
func (p *secondPG) pgCtl(t *testing.T, args ...string) {
	t.Helper()
	bin := os.Getenv("SQLFW_PG_SERVER_BIN") // the server's own major (scripts/pg.sh --version)
	if bin == "" {
		bin = pg.Bin
	}
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	argv := append([]string{filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(p.dir, "data")}, args...)
	if os.Geteuid() == 0 {
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// loadWorker runs statements through one session after another until
// stop, recording how each ended.
type loadWorker struct {
	id     int
	simple bool // the simple query protocol (psql's), else pgx's extended one
	tx     bool // statements inside an explicit transaction
	// okAfter counts statements answered after the restart began
	// (restarted set).
	okAfter atomic.Int64
	mu      sync.Mutex
	hangs   []string
	errs    []string
}

func (w *loadWorker) run(addr string, stop <-chan struct{}, restarted *atomic.Bool) {
	host, port, _ := net.SplitHostPort(addr)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		cfg, _ := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable application_name=load%d", host, port, pg.User, pg.Database, w.id))
		if w.simple {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		}
		t0 := time.Now()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		cancel()
		if err != nil {
			w.note(t0, "connect", err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		w.session(conn, stop, restarted)
		conn.Close(context.Background())
	}
}

// session runs statements on conn until one fails or stop.
func (w *loadWorker) session(conn *pgx.Conn, stop <-chan struct{}, restarted *atomic.Bool) {
	stmts := []string{"select pg_sleep(0.05)", "select count(*) from generate_series(1, 1000)", "select 1"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		sql := stmts[i%len(stmts)]
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		t0 := time.Now()
		var err error
		if w.tx {
			var tx pgx.Tx
			if tx, err = conn.Begin(ctx); err == nil {
				if _, err = tx.Exec(ctx, sql); err == nil {
					err = tx.Commit(ctx)
				}
			}
		} else {
			_, err = conn.Exec(ctx, sql)
		}
		cancel()
		if err != nil {
			w.note(t0, sql, err)
			return
		}
		if restarted.Load() {
			w.okAfter.Add(1)
		}
	}
}

// note records how a statement or connect failed: a hang when it took the
// whole bound.
func (w *loadWorker) note(t0 time.Time, what string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) || time.Since(t0) >= hangBound {
		w.hangs = append(w.hangs, fmt.Sprintf("%s (started %s): no answer within %v: %v", what, t0.Format("15:04:05.000"), hangBound, err))
		return
	}
	w.errs = append(w.errs, fmt.Sprintf("%s: %v", what, err))
}

// TestPGRestartUnderLoad restarts the server (pg_ctl restart -m fast, then
// -m immediate) under load from concurrent sessions with statements in
// flight, in both query protocols, in and out of transactions. Every
// statement gets an answer or an error (the server's FATAL, or sqlfw's own)
// at once rather than waiting for its client to give up (hangBound), every
// session works again on a new connection once the server is back, and the
// daemon lives on.
func TestPGRestartUnderLoad(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	p := startSecondPG(t)
	d, err := startDaemon("--upstream", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log (last lines):\n%s", tail(d.log(), 60))
		}
		d.stop()
	})
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			var restarted atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var workers []*loadWorker
			for i := 0; i < 6; i++ {
				w := &loadWorker{id: i, simple: i%2 == 1, tx: i%3 == 2}
				workers = append(workers, w)
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.run(d.addr, stop, &restarted)
				}()
			}
			time.Sleep(time.Second) // statements in flight on every session
			restarted.Store(true)
			p.pgCtl(t, "restart", "-m", mode, "-w", "-t", "60", "-l", p.Log)
			waitBack(t, workers) // every session works again on a new connection
			close(stop)
			wg.Wait()
			checkLoad(t, workers)
			select {
			case <-d.done:
				t.Fatalf("sqlfwd exited (%v)", d.waitErr)
			default:
			}
		})
	}
}

// rawEOF wants the connection closed by the other side, no packet more:
// EOF, or a reset when the closer left unread bytes (the rest of an
// oversized packet; MariaDB's own close does the same).
func rawEOF(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(hangBound))
	var b [64]byte
	n, err := c.Read(b[:])
	if n > 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Errorf("%s: read %q, %v; want the connection closed", what, b[:n], err)
	}
}

// stillUsable checks that a connection opened before the abuse still
// answers, and that the daemon is alive.
func myStillUsable(t *testing.T, d *daemon, conn *sql.Conn) {
	t.Helper()
	var v int
	if err := conn.QueryRowContext(context.Background(), "select 41 + 1").Scan(&v); err != nil || v != 42 {
		t.Errorf("a connection opened before: select 41 + 1 = %d, %v; want 42", v, err)
	}
	select {
	case <-d.done:
		t.Fatalf("sqlfwd exited (%v)", d.waitErr)
	default:
	}
}

// TestMySQLHalfCloseAnswered: a client that sends its commands and shuts
// down its write side (printf … | nc, a pipelining client) gets the answer
// to every one, a blocked one's ERR among them in its place, and then the
// close; the server ran the allowed ones (general log) and never saw the
// blocked one, whose table keeps its rows.
func TestMySQLHalfCloseAnswered(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "halfclose_" + randomHex(t)
	table := "e2e_halfclose_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	if _, err := direct.Exec("insert into " + table + " values (1), (2)"); err != nil {
		t.Fatal(err)
	}
	other, err := myDB(t, my, d.addr, true).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	check := func(t *testing.T, r *myRaw, n string) {
		t.Helper()
		if got, want := r.result(), marker+"_"+n+"_1"; got != want {
			t.Errorf("first answer %q, want %q", got, want)
		}
		wantRawBlocked(t, "the DELETE", r.result(), "no-unfiltered-writes")
		if got, want := r.result(), marker+"_"+n+"_2"; got != want {
			t.Errorf("third answer %q, want %q", got, want)
		}
		rawEOF(t, r.c, "after the answers")
	}
	three := func(n string) []byte {
		return bytes.Join([][]byte{rawQuery("select '" + marker + "_" + n + "_1'"),
			rawQuery("delete from " + table + " /* " + marker + "_" + n + "_delete */"),
			rawQuery("select '" + marker + "_" + n + "_2' from (select sleep(0.2)) s")}, nil)
	}
	t.Run("after login", func(t *testing.T) {
		r := dialRaw(t, d.addr)
		r.write(r.handshake(my.User, "", my.Database, 45))
		r.auth("")
		r.write(three("a"))
		if err := r.c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		check(t, r, "a")
	})
	t.Run("with the handshake response (printf | nc)", func(t *testing.T) {
		r := dialRaw(t, d.addr)
		r.write(r.handshake(my.User, "", my.Database, 45), three("b"))
		if err := r.c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		r.auth("")
		check(t, r, "b")
	})
	log := generalLog(t, my)
	for _, n := range []string{"a", "b"} {
		for _, k := range []string{"_1", "_2"} {
			if !strings.Contains(log, marker+"_"+n+k) {
				t.Errorf("the server never ran %s%s", n, k)
			}
		}
	}
	mustNotReach(t, my, marker+"_a_delete", marker+"_b_delete")
	var rows int
	if err := direct.QueryRow("select count(*) from " + table).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("rows: %d, %v; want 2", rows, err)
	}
	myStillUsable(t, d, other)
}

// TestMySQLOversizedBeforeLogin: a packet before login longer than sqlfw
// holds then (a first packet whose header claims 16 MiB, a whole handshake
// response over the limit) gets MariaDB's own answer to a packet too large,
// ER_NET_PACKET_TOO_LARGE (1153, 08S01), after its sequence id, then the
// close, not a silent close; the daemon logs one line for each and lives
// on, and a connection opened before stays usable.
func TestMySQLOversizedBeforeLogin(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	other, err := myDB(t, my, d.addr, true).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	hdr := func(n int, seq byte) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), seq} }
	for _, tc := range []struct {
		name string
		send func(r *myRaw) []byte
	}{
		{"a 16 MiB header", func(*myRaw) []byte { return hdr(0xffffff, 1) }},
		{"a whole handshake response of 70,000 bytes", func(r *myRaw) []byte {
			p := r.handshake(my.User, "", my.Database, 45)
			p = append(p, make([]byte, 70000-(len(p)-4))...)
			copy(p, hdr(70000, 1))
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, d.addr)
			r.write(tc.send(r))
			m := r.read()
			if m[3] != 2 || m[4] != 0xff || !strings.HasPrefix(rawErr(m), "ERR 1153 08S01 sqlfw: Got a packet bigger than 'max_allowed_packet' bytes") {
				t.Errorf("got %q (sequence id %d), want ERR 1153 08S01 with sequence id 2", rawErr(m), m[3])
			}
			rawEOF(t, r.c, "after the ERR")
		})
	}
	if n := strings.Count(d.log(), "a packet before login larger than sqlfw accepts"); n != 2 {
		t.Errorf("the daemon logged %d lines for the two packets, want 2", n)
	}
	myStillUsable(t, d, other)
}

// TestPGPasswordMessageAfterAuth: a password message ('p') after
// authentication has finished is PostgreSQL's protocol violation: the
// client gets FATAL 08P01 and the close, and the server never sees it (its
// log, which would say "invalid frontend message type 112", holds nothing
// of it, nor of the Query bytes inside it). Another session goes on.
func TestPGPasswordMessageAfterAuth(t *testing.T) {
	needSqlfwd(t)
	d := sharedDaemon(t)
	host, port, _ := net.SplitHostPort(d.addr)
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := connect(t, ctx, dsn(host, p, pg.User, ""))
	defer other.Close(context.Background())
	before := len(serverLog(t))
	marker := "stray_" + randomHex(t)
	for _, tc := range []struct {
		name string
		msgs []pgproto3.FrontendMessage
	}{
		{"a password message", []pgproto3.FrontendMessage{&pgproto3.PasswordMessage{Password: "Q\x00\x00\x00\x20select '" + marker + "_p'\x00"}}},
		{"a SASL response behind a Query", []pgproto3.FrontendMessage{&pgproto3.Query{String: "select '" + marker + "_q'"}, &pgproto3.SASLResponse{Data: []byte(marker + "_sasl")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := pgconn.Connect(ctx, dsn(host, p, pg.User, ""))
			if err != nil {
				t.Fatal(err)
			}
			hc, err := pc.Hijack()
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Conn.Close()
			for _, m := range tc.msgs {
				hc.Frontend.Send(m)
			}
			if err := hc.Frontend.Flush(); err != nil {
				t.Fatal(err)
			}
			_ = hc.Conn.SetReadDeadline(time.Now().Add(hangBound))
			var got *pgproto3.ErrorResponse
			for {
				m, err := hc.Frontend.Receive()
				if err != nil {
					break
				}
				if e, ok := m.(*pgproto3.ErrorResponse); ok {
					c := *e
					got = &c
				}
			}
			if got == nil || got.Severity != "FATAL" || got.Code != "08P01" || !strings.Contains(got.Message, "invalid frontend message type 112") {
				t.Errorf("got %+v before the close, want FATAL 08P01 invalid frontend message type 112", got)
			}
		})
	}
	log := serverLog(t)[before:]
	for _, s := range []string{"type 112", marker} {
		if strings.Contains(log, s) {
			t.Errorf("the server saw the stray message:\n%s", linesWith(log, s))
		}
	}
	var v int
	if err := other.QueryRow(ctx, "select 41 + 1").Scan(&v); err != nil || v != 42 {
		t.Errorf("another session: select 41 + 1 = %d, %v; want 42", v, err)
	}
}

// runMy runs statements through db (one connection at a time, reconnected
// by database/sql after a failure) until stop.
func (w *loadWorker) runMy(db *sql.DB, stop <-chan struct{}, restarted *atomic.Bool) {
	stmts := []string{"do sleep(0.05)", "select count(*) from seq_1_to_1000", "select 1"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		q := stmts[i%len(stmts)]
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		t0 := time.Now()
		var err error
		if w.tx {
			var tx *sql.Tx
			if tx, err = db.BeginTx(ctx, nil); err == nil {
				if _, err = tx.ExecContext(ctx, q); err == nil {
					err = tx.Commit()
				} else {
					_ = tx.Rollback()
				}
			}
		} else {
			_, err = db.ExecContext(ctx, q)
		}
		cancel()
		if err != nil {
			w.note(t0, q, err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if restarted.Load() {
			w.okAfter.Add(1)
		}
	}
}

// waitBack waits until every worker has had a statement answered since the
// restart began, for at most a minute.
func waitBack(t *testing.T, workers []*loadWorker) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		back := 0
		for _, w := range workers {
			if w.okAfter.Load() > 0 {
				back++
			}
		}
		if back == len(workers) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d sessions never answered a statement again after the restart", len(workers)-back, len(workers))
			return
		}
	}
}

// checkLoad reports the hangs the workers saw, and wants some statement to
// have failed (the restart hit the load).
func checkLoad(t *testing.T, workers []*loadWorker) {
	t.Helper()
	failed := 0
	for _, w := range workers {
		for _, h := range w.hangs {
			t.Errorf("session %d (tx %v): %s", w.id, w.tx, h)
		}
		failed += len(w.errs)
		if testing.Verbose() {
			for _, e := range w.errs {
				t.Logf("session %d: %s", w.id, e)
			}
		}
	}
	if failed == 0 {
		t.Errorf("no statement failed across the restart: the restart did not hit the load")
	}
}

// TestMySQLRestartUnderLoad is TestPGRestartUnderLoad's MariaDB
// counterpart: a clean shutdown (mariadb.sh stop) and a kill -9, each
// followed by a start, under load from concurrent sessions with statements
// in flight, in and out of transactions. Every statement is answered or
// fails at once (hangBound), every session works again once the server is
// back, and the daemon lives on.
func TestMySQLRestartUnderLoad(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			t.Skip("no mariadbd")
		}
	}
	dir, err := os.MkdirTemp("", "sqlfw-my3-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	script := scriptPath("mariadb.sh")
	dir = filepath.Join(dir, "my")
	t.Cleanup(func() {
		runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", dir)
		os.RemoveAll(filepath.Dir(dir))
	})
	start := func() {
		t.Helper()
		if res := runCmd(t, 3*time.Minute, "", nil, "bash", script, "start", "--dir", dir); res.Exit != 0 {
			t.Fatalf("starting a MariaDB of the test's own: %s", res)
		}
	}
	start()
	env := scriptEnv(t, "bash", script, "env", "--dir", dir)
	my := myEnv{Host: "127.0.0.1", Port: env["SQLFW_MY_PORT"], User: "root", Database: "mysql"}
	d := mysqlDaemon(t, my)
	for _, how := range []string{"shutdown", "kill -9"} {
		t.Run(how, func(t *testing.T) {
			var restarted atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var workers []*loadWorker
			for i := 0; i < 6; i++ {
				w := &loadWorker{id: i, tx: i%3 == 2}
				workers = append(workers, w)
				db := myDB(t, my, d.addr, i%2 == 0)
				db.SetMaxOpenConns(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.runMy(db, stop, &restarted)
				}()
			}
			time.Sleep(time.Second) // statements in flight on every session
			restarted.Store(true)
			if how == "shutdown" {
				if res := runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", dir); res.Exit != 0 {
					t.Fatalf("stopping: %s", res)
				}
			} else {
				b, err := os.ReadFile(filepath.Join(dir, "pid"))
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				for syscall.Kill(pid, 0) == nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
			start()
			waitBack(t, workers)
			close(stop)
			wg.Wait()
			checkLoad(t, workers)
			select {
			case <-d.done:
				t.Fatalf("sqlfwd exited (%v)", d.waitErr)
			default:
			}
		})
	}
}
