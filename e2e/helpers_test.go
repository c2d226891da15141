package e2e

// The harness: it finds PostgreSQL through SQLFW_PG_* (scripts/pg.sh env),
// builds sqlfwd and fwctl once, starts one shared sqlfwd in enforce mode with
// the embedded default policy, and points real clients at it. With
// SQLFW_E2E_TARGET=direct the clients talk to PostgreSQL itself, which checks
// the harness while the daemon is not there yet: every statement sqlfwd would
// block is replaced by one that PostgreSQL rejects while parsing (an unknown
// function, 42883), and tests of sqlfwd-only behaviour skip.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// codeBlocked is the SQLSTATE sqlfwd answers a denied statement with
	// (insufficient_privilege).
	codeBlocked = "42501"
	// codeDirectBlocked stands in for it in direct mode: undefined_function,
	// raised while PostgreSQL analyses the statement, before it runs.
	codeDirectBlocked = "42883"
	// blockedPrefix starts every message sqlfwd writes for a denied statement.
	blockedPrefix = "sqlfw:"
)

// pgEnv is the PostgreSQL the tests run against, from scripts/pg.sh env.
type pgEnv struct {
	Host, User, Database, Log, SockDir, Bin string
	Port                                    int
	ScramUser, ScramPassword                string
	MD5User, MD5Password                    string
}

var (
	pg         pgEnv
	skipReason string // non-empty: no PostgreSQL configured, every test skips
	direct     bool   // SQLFW_E2E_TARGET=direct

	binDir   string // holds the sqlfwd and fwctl built by TestMain
	buildErr error

	shared     *daemon
	sharedOnce sync.Once
	sharedErr  error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	pg = pgEnv{
		Host:          os.Getenv("SQLFW_PG_HOST"),
		User:          envOr("SQLFW_PG_USER", "postgres"),
		Database:      envOr("SQLFW_PG_DATABASE", "postgres"),
		Log:           os.Getenv("SQLFW_PG_LOG"),
		SockDir:       os.Getenv("SQLFW_PG_SOCKDIR"),
		Bin:           os.Getenv("SQLFW_PG_BIN"),
		ScramUser:     envOr("SQLFW_PG_SCRAM_USER", "scram_user"),
		ScramPassword: envOr("SQLFW_PG_SCRAM_PASSWORD", "scram_pass"),
		MD5User:       envOr("SQLFW_PG_MD5_USER", "md5_user"),
		MD5Password:   envOr("SQLFW_PG_MD5_PASSWORD", "md5_pass"),
	}
	port, err := strconv.Atoi(os.Getenv("SQLFW_PG_PORT"))
	switch {
	case pg.Host == "" || os.Getenv("SQLFW_PG_PORT") == "":
		skipReason = "SQLFW_PG_HOST/SQLFW_PG_PORT not set: run `make test`, or eval \"$(scripts/pg.sh env)\" after scripts/pg.sh start --log-statements"
	case err != nil:
		skipReason = fmt.Sprintf("SQLFW_PG_PORT=%q is not a port", os.Getenv("SQLFW_PG_PORT"))
	}
	pg.Port = port
	if skipReason != "" {
		fmt.Fprintln(os.Stderr, "e2e: skipping:", skipReason)
		return m.Run()
	}

	switch t := os.Getenv("SQLFW_E2E_TARGET"); t {
	case "", "sqlfwd":
	case "direct":
		direct = true
		fmt.Fprintln(os.Stderr, "e2e: SQLFW_E2E_TARGET=direct: clients talk to PostgreSQL itself, sqlfwd-only tests skip")
	default:
		fmt.Fprintf(os.Stderr, "e2e: SQLFW_E2E_TARGET=%q: want sqlfwd or direct\n", t)
		return 2
	}

	dir, err := os.MkdirTemp("", "sqlfw-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	buildErr = build(dir)
	if buildErr != nil {
		fmt.Fprintln(os.Stderr, "e2e:", buildErr)
	}

	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the shared sqlfwd:", err)
		}
	}
	return code
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// build compiles cmd/sqlfwd and cmd/fwctl into dir.
func build(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), "./cmd/sqlfwd", "./cmd/fwctl")
	cmd.Dir = ".." // the module root; go test runs in the package directory
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/sqlfwd ./cmd/fwctl: %v\n%s", err, out)
	}
	return nil
}

// needPG skips the test when no PostgreSQL is configured.
func needPG(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// needSqlfwd skips in direct mode: the test is about sqlfwd's own behaviour.
func needSqlfwd(t *testing.T) {
	t.Helper()
	needPG(t)
	if direct {
		t.Skip("SQLFW_E2E_TARGET=direct: this test checks sqlfwd itself")
	}
}

// needBinary fails the test when cmd/ did not build.
func needBinary(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("sqlfwd/fwctl did not build:\n%v", buildErr)
	}
}

// daemon is one running sqlfwd.
type daemon struct {
	cmd     *exec.Cmd
	addr    string // listen address
	control string // control socket path
	logPath string
	done    chan struct{}
	waitErr error
}

// startDaemon starts sqlfwd in enforce mode with the default policy in front
// of the test PostgreSQL and waits until it accepts connections.
func startDaemon(extraArgs ...string) (*daemon, error) {
	return startDaemonWrapped(nil, extraArgs...)
}

// startDaemonWrapped is startDaemon with a command prefix (such as
// "sh -c 'echo $$ > CGROUP/cgroup.procs; exec \"$0\" \"$@\"'") that runs
// sqlfwd.
func startDaemonWrapped(wrap []string, extraArgs ...string) (*daemon, error) {
	if buildErr != nil {
		return nil, buildErr
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sqlfwd-")
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for i := 0; i+1 < len(extraArgs); i++ {
		if extraArgs[i] == "--listen" { // a later --listen wins in sqlfwd too
			addr = extraArgs[i+1]
		}
	}
	d := &daemon{
		addr:    addr,
		control: filepath.Join(dir, "control.sock"),
		logPath: filepath.Join(dir, "sqlfwd.log"),
		done:    make(chan struct{}),
	}
	logf, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--protocol", "postgres",
		"--listen", d.addr,
		"--upstream", net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)),
		"--mode", "enforce",
		"--control-socket", d.control,
	}, extraArgs...)
	argv := append(append(append([]string(nil), wrap...), filepath.Join(binDir, "sqlfwd")), args...)
	return launch(d, logf, argv)
}

// startConfigDaemon starts sqlfwd with exactly args (a --config file that
// says to listen on addr and serve control) and waits until it listens.
func startConfigDaemon(addr, control string, args ...string) (*daemon, error) {
	if buildErr != nil {
		return nil, buildErr
	}
	dir, err := os.MkdirTemp("", "sqlfwd-")
	if err != nil {
		return nil, err
	}
	d := &daemon{addr: addr, control: control, logPath: filepath.Join(dir, "sqlfwd.log"), done: make(chan struct{})}
	logf, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	return launch(d, logf, append([]string{filepath.Join(binDir, "sqlfwd")}, args...))
}

// launch runs argv as d, logging to logf, and waits until d.addr accepts.
func launch(d *daemon, logf *os.File, argv []string) (*daemon, error) {
	args := argv[1:]
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Stdout = logf
	d.cmd.Stderr = logf
	if err := d.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting sqlfwd %s: %w", strings.Join(args, " "), err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		logf.Close()
		close(d.done)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", d.addr, time.Second)
		if err == nil {
			c.Close()
			return d, nil
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("sqlfwd %s exited before listening (%v); its log:\n%s", strings.Join(args, " "), d.waitErr, d.log())
		default:
		}
		if time.Now().After(deadline) {
			d.cmd.Process.Kill()
			<-d.done
			return nil, fmt.Errorf("sqlfwd did not listen on %s within 15s; its log:\n%s", d.addr, d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// log returns what the daemon wrote so far.
func (d *daemon) log() string {
	b, _ := os.ReadFile(d.logPath)
	return string(b)
}

// signal sends sig and waits up to timeout for the exit; it returns the exit
// code, or an error when the daemon did not exit.
func (d *daemon) signal(sig os.Signal, timeout time.Duration) (int, error) {
	select {
	case <-d.done:
	default:
		if err := d.cmd.Process.Signal(sig); err != nil {
			return -1, err
		}
	}
	select {
	case <-d.done:
		return d.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		d.cmd.Process.Kill()
		<-d.done
		return -1, fmt.Errorf("sqlfwd did not exit within %v of %v; killed it", timeout, sig)
	}
}

func (d *daemon) stop() error {
	code, err := d.signal(syscall.SIGTERM, 15*time.Second)
	log := d.log() // the directory goes next: say why it exited while the log is there
	os.RemoveAll(filepath.Dir(d.logPath))
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("sqlfwd exited %d after SIGTERM; its log:\n%s", code, tail(log, 30))
	}
	return nil
}

// sharedDaemon returns the sqlfwd most tests share, starting it on first use.
// On a failing test it adds the daemon's log to the output.
func sharedDaemon(t *testing.T) *daemon {
	t.Helper()
	needBinary(t)
	sharedOnce.Do(func() { shared, sharedErr = startDaemon() })
	if sharedErr != nil {
		t.Fatalf("starting sqlfwd: %v", sharedErr)
	}
	select {
	case <-shared.done:
		t.Fatalf("the shared sqlfwd has exited (%v); its log:\n%s", shared.waitErr, tail(shared.log(), 40))
	default:
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log (last lines):\n%s", tail(shared.log(), 40))
		}
	})
	return shared
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// target is the host and port clients under test connect to: sqlfwd, or
// PostgreSQL in direct mode.
func target(t *testing.T) (string, int) {
	t.Helper()
	needPG(t)
	if direct {
		return pg.Host, pg.Port
	}
	d := sharedDaemon(t)
	host, port, _ := net.SplitHostPort(d.addr)
	p, _ := strconv.Atoi(port)
	return host, p
}

// portOf returns the port of a host:port address.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// freePort asks the kernel for a loopback port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dsn builds a keyword/value connection string; extra is appended as is.
func dsn(host string, port int, user, extra string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5 %s",
		host, port, user, pg.Database, extra)
}

// targetDSN connects as the superuser to whatever the test targets.
func targetDSN(t *testing.T) string {
	t.Helper()
	host, port := target(t)
	return dsn(host, port, pg.User, "")
}

// connect opens a pgx connection to the target, closed at the end of the test.
func connect(t *testing.T, ctx context.Context, connString string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		t.Fatalf("parsing %q: %v", connString, err)
	}
	return connectConfig(t, ctx, cfg)
}

func connectConfig(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig) *pgx.Conn {
	t.Helper()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connecting to %s:%d as %s: %v", cfg.Host, cfg.Port, cfg.User, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// directExec runs SQL on PostgreSQL itself, never through sqlfwd: test setup
// and the checks of what really happened.
func directExec(t *testing.T, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("directly on PostgreSQL: %s: %v", sql, err)
	}
}

// directInts returns the single int column of a query run on PostgreSQL
// itself.
func directInts(t *testing.T, sql string) []int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	rows, err := c.Query(ctx, sql)
	if err != nil {
		t.Fatalf("directly on PostgreSQL: %s: %v", sql, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatalf("directly on PostgreSQL: %s: %v", sql, err)
	}
	if got == nil {
		got = []int{}
	}
	return got
}

// freshTable (re)creates table name (id int) directly on PostgreSQL with the
// given rows.
func freshTable(t *testing.T, name string, ids ...int) {
	t.Helper()
	directExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (id int)", name, name))
	for _, id := range ids {
		directExec(t, fmt.Sprintf("INSERT INTO %s VALUES (%d)", name, id))
	}
	t.Cleanup(func() {
		if !t.Failed() {
			directExec(t, "DROP TABLE IF EXISTS "+name)
		}
	})
}

// deny returns a statement the target refuses before running it: sql itself
// for sqlfwd, an unknown function call in direct mode.
func deny(sql string) string {
	if direct {
		return "SELECT sqlfw_e2e_denied()"
	}
	return sql
}

// wantDeniedCode is the SQLSTATE of a statement from deny.
func wantDeniedCode() string {
	if direct {
		return codeDirectBlocked
	}
	return codeBlocked
}

// checkDenied fails unless err is the target's answer to a denied statement.
func checkDenied(t *testing.T, input string, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Errorf("input %q: got error %v (%T), want a PgError with SQLSTATE %s", input, err, err, wantDeniedCode())
		return
	}
	if pgErr.Code != wantDeniedCode() {
		t.Errorf("input %q: got SQLSTATE %s (%s), want %s", input, pgErr.Code, pgErr.Message, wantDeniedCode())
	}
	if !direct && !strings.HasPrefix(pgErr.Message, blockedPrefix) {
		t.Errorf("input %q: got message %q, want it to start with %q", input, pgErr.Message, blockedPrefix)
	}
}

// psqlResult is one psql run.
type psqlResult struct {
	Stdout, Stderr string
	Exit           int
}

func (r psqlResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.Exit, r.Stdout, r.Stderr)
}

// tool finds a PostgreSQL client program: in SQLFW_PG_BIN, else on PATH.
func tool(t *testing.T, name string) string {
	t.Helper()
	if pg.Bin != "" {
		p := filepath.Join(pg.Bin, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found in SQLFW_PG_BIN=%q or PATH: run scripts/deps.sh", name, pg.Bin)
	}
	return p
}

// runTool runs a client program with a timeout; stdin may be empty.
func runTool(t *testing.T, timeout time.Duration, stdin string, env []string, name string, args ...string) psqlResult {
	t.Helper()
	return runCmd(t, timeout, stdin, env, tool(t, name), args...)
}

// runToolPath runs a program of ours (fwctl) with a short timeout.
func runToolPath(t *testing.T, path string, args ...string) psqlResult {
	t.Helper()
	return runCmd(t, 30*time.Second, "", nil, path, args...)
}

func runCmd(t *testing.T, timeout time.Duration, stdin string, env []string, path string, args ...string) psqlResult {
	t.Helper()
	res, err := execCmd(timeout, stdin, env, path, args...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// execCmd is runCmd without the test: it returns an error when the command
// could not run or did not finish in time, so goroutines can use it.
func execCmd(timeout time.Duration, stdin string, env []string, path string, args ...string) (psqlResult, error) {
	name := filepath.Base(path)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=5", "PGOPTIONS=", "PSQLRC=/dev/null")
	cmd.Env = append(cmd.Env, env...)
	err := cmd.Run()
	res := psqlResult{Stdout: out.String(), Stderr: errb.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Exit = exitErr.ExitCode()
	default:
		return res, fmt.Errorf("running %s %s: %v", name, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s %s did not finish within %v:\n%s", name, strings.Join(args, " "), timeout, res)
	}
	return res, nil
}

// psql runs psql against the target as the superuser with verbose errors
// (so stderr carries SQLSTATEs: "ERROR:  42501: sqlfw: ..."). Statements come
// from stdin; args go before it (e.g. "-c", "select 1").
func psql(t *testing.T, stdin string, args ...string) psqlResult {
	t.Helper()
	host, port := target(t)
	base := []string{"-X", "-h", host, "-p", strconv.Itoa(port), "-U", pg.User, "-d", pg.Database,
		"-v", "VERBOSITY=verbose"}
	return runTool(t, 60*time.Second, stdin, nil, "psql", append(base, args...)...)
}

// serverLog sends a sentinel straight to PostgreSQL, waits until its
// statement log (log_statement=all, SQLFW_PG_LOG) holds it, and returns the
// log: whatever a test sent and had answered before the call is in it.
func serverLog(t *testing.T) string {
	t.Helper()
	sentinel := "sentinel" + randomHex(t)
	directExec(t, fmt.Sprintf("SELECT '%s'", sentinel))
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(pg.Log)
		if err != nil {
			t.Fatalf("reading the server log: %v", err)
		}
		if strings.Contains(string(b), sentinel) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel %q never reached %s: is log_statement=all set (scripts/pg.sh start --log-statements)?", sentinel, pg.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
