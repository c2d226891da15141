package e2e

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

func TestPgxPrepared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, targetDSN(t))

	if _, err := c.Prepare(ctx, "e2e_add", "select $1::int + $2::int"); err != nil {
		t.Fatalf("input Prepare(select $1::int + $2::int): %v", err)
	}
	for i := 0; i < 3; i++ {
		var got int
		if err := c.QueryRow(ctx, "e2e_add", i, 10).Scan(&got); err != nil || got != i+10 {
			t.Errorf("input execute e2e_add(%d, 10): got %d, %v; want %d, nil", i, got, err, i+10)
		}
	}
	// The default mode prepares and caches every statement by itself.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		var got string
		err := c.QueryRow(ctx, "select $1::text || 'x'", mode, "a").Scan(&got)
		if err != nil || got != "ax" {
			t.Errorf("input select $1::text || 'x' in mode %v: got %q, %v; want \"ax\", nil", mode, got, err)
		}
	}
	// A denied statement through the extended protocol, then the connection
	// is still usable.
	sql := deny("delete from e2e_pgx_prepared")
	_, err := c.Exec(ctx, sql)
	checkDenied(t, sql, err)
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("input select 1 after a denied statement: got %d, %v; want 1, nil", one, err)
	}
}

// batchOutcome is what a client sees of one batch: the error code of each
// queued statement ("" for success) and the rows left in the table.
type batchOutcome struct {
	Codes []string
	Rows  []int
}

// runBatch sends insert 1, insert 2, bad, insert 3, insert 4 as one batch
// (one pipeline with a single Sync, so one implicit transaction).
func runBatch(t *testing.T, ctx context.Context, c *pgx.Conn, bad string) batchOutcome {
	t.Helper()
	freshTable(t, "e2e_batch")
	b := &pgx.Batch{}
	b.Queue("insert into e2e_batch values (1)")
	b.Queue("insert into e2e_batch values (2)")
	b.Queue(bad)
	b.Queue("insert into e2e_batch values (3)")
	b.Queue("insert into e2e_batch values (4)")
	br := c.SendBatch(ctx, b)
	var out batchOutcome
	for i := 0; i < b.Len(); i++ {
		_, err := br.Exec()
		out.Codes = append(out.Codes, errCode(err))
	}
	if err := br.Close(); err != nil {
		t.Logf("closing the batch: %v", err)
	}
	out.Rows = directInts(t, "select id from e2e_batch order by id")
	return out
}

func errCode(err error) string {
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "other: " + err.Error()
}

// TestPgxBatchBlocked puts a denied statement in the middle of a batch and
// expects what PostgreSQL does with a statement that fails in the same place:
// the reference runs, directly on PostgreSQL, a statement that fails while it
// is analysed (an unknown function), as a denial happens before execution.
func TestPgxBatchBlocked(t *testing.T) {
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connectMode := func(t *testing.T, connString string, mode pgx.QueryExecMode) *pgx.Conn {
		cfg, err := pgx.ParseConfig(connString)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		return connectConfig(t, ctx, cfg)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			ref := connectMode(t, dsn(pg.Host, pg.Port, pg.User, ""), mode)
			c := connectMode(t, targetDSN(t), mode)
			want := runBatch(t, ctx, ref, "select sqlfw_e2e_reference()")
			t.Logf("PostgreSQL itself, failing statement third of five: %+v", want)
			bad := deny("delete from e2e_batch")
			got := runBatch(t, ctx, c, bad)
			// The reference fails with 42883; the denial has its own code.
			for i, code := range want.Codes {
				if code == codeDirectBlocked {
					want.Codes[i] = wantDeniedCode()
				}
			}
			// In simple protocol mode pgx sends the whole batch as one
			// Query. PostgreSQL runs the first two statements before it
			// fails (and then rolls them back); sqlfwd denies the whole
			// Query before any of it runs, so every result is the denial.
			// The rows left behind are the same.
			if mode == pgx.QueryExecModeSimpleProtocol && !direct {
				for i := range want.Codes {
					want.Codes[i] = wantDeniedCode()
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("input batch [insert 1, insert 2, %q, insert 3, insert 4] in mode %v\ngot  %+v\nwant %+v (PostgreSQL's own behaviour)", bad, mode, got, want)
			}
			var one int
			if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
				t.Errorf("input select 1 after the batch: got %d, %v; want 1, nil", one, err)
			}
		})
	}
}

func TestPgxListenNotify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listener := connect(t, ctx, targetDSN(t))
	notifier := connect(t, ctx, targetDSN(t))
	if _, err := listener.Exec(ctx, "listen e2e_channel"); err != nil {
		t.Fatalf("input listen e2e_channel: %v", err)
	}
	if _, err := notifier.Exec(ctx, "select pg_notify('e2e_channel', 'hello')"); err != nil {
		t.Fatalf("input select pg_notify(...): %v", err)
	}
	if _, err := notifier.Exec(ctx, "notify e2e_channel, 'world'"); err != nil {
		t.Fatalf("input notify e2e_channel, 'world': %v", err)
	}
	for _, want := range []string{"hello", "world"} {
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := listener.WaitForNotification(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("waiting for notification %q: %v", want, err)
		}
		if n.Channel != "e2e_channel" || n.Payload != want {
			t.Errorf("notification: got %s/%q, want e2e_channel/%q", n.Channel, n.Payload, want)
		}
	}
}

// TestPgxCancel cancels a running query by cancelling its context; pgx then
// sends a CancelRequest on a new connection to the same address. Only if it
// reaches the backend that runs the query does the query end with
// query_canceled (57014); a second connection's query must not be touched.
func TestPgxCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(targetDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	// pgx's default closes the socket on cancel; ask for a CancelRequest.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 8 * time.Second}
	}
	victim := connectConfig(t, ctx, cfg)
	bystander := connectConfig(t, ctx, cfg)

	bystanderErr := make(chan error, 1)
	go func() {
		_, err := bystander.Exec(ctx, "select pg_sleep(2)")
		bystanderErr <- err
	}()

	qctx, qcancel := context.WithCancel(ctx)
	time.AfterFunc(500*time.Millisecond, qcancel)
	start := time.Now()
	_, err = victim.Exec(qctx, "select pg_sleep(5)")
	elapsed := time.Since(start)
	if code := errCode(err); code != "57014" || elapsed > 5*time.Second {
		t.Errorf("input select pg_sleep(5), context cancelled after 0.5 s\ngot error %v (code %q) after %v\nwant 57014 (query_canceled) within 5 s", err, code, elapsed)
	}
	if err := <-bystanderErr; err != nil {
		t.Errorf("input select pg_sleep(2) on another connection: got %v, want nil: the cancel hit the wrong backend", err)
	}
	// Both connections go on.
	for name, c := range map[string]*pgx.Conn{"victim": victim, "bystander": bystander} {
		var one int
		if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("%s: input select 1 after the cancel: got %d, %v; want 1, nil", name, one, err)
		}
	}
}

// TestPgxTLS: sqlfwd answers SSLRequest with 'N'. sslmode=prefer falls back
// to plaintext; sslmode=require must fail, quickly and saying why.
func TestPgxTLS(t *testing.T) {
	host, port := target(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	prefer := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=prefer connect_timeout=5", host, port, pg.User, pg.Database)
	c := connect(t, ctx, prefer)
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("input %q, select 1: got %d, %v; want 1, nil", prefer, one, err)
	}

	require := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=require connect_timeout=5", host, port, pg.User, pg.Database)
	start := time.Now()
	rc, err := pgx.Connect(ctx, require)
	if err == nil {
		rc.Close(ctx)
		t.Fatalf("input %q: got a connection, want an error", require)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("input %q: the error took %v, want it at once", require, time.Since(start))
	}
	t.Logf("sslmode=require: %v", err)

	res := runTool(t, 30*time.Second, "", nil, "psql", "-X", "-c", "select 1", require)
	if res.Exit == 0 || !regexp.MustCompile(`(?i)ssl`).MatchString(res.Stderr) {
		t.Errorf("input psql %q\ngot %s\nwant a non-zero exit and an error about SSL", require, res)
	}
}
