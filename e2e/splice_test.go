package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestInterceptSpliceUpstream: with intercept.splice_upstream (experimental)
// the upstream leg to a PostgreSQL on this host is spliced in the kernel
// too, and sessions behave as before: pipelined batches give the right
// answers on many connections, a DELETE between batches is refused by sqlfw and never reaches the server (its own statement log),
// the rows stay, and all four sockets of each connection were spliced. The
// server gets a cgroup of its own at start: sockops sees a listener's
// accepted sockets only in the cgroup the listener was made in.
func TestInterceptSpliceUpstream(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	pgcg := makeCgroup(t, filepath.Dir(cg), cg+"-db")
	work, err := os.MkdirTemp("", "sqlfw-splice-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	pgDir := filepath.Join(work, "pg")
	script := filepath.Join("..", "scripts", "pg.sh")
	if res := runCmd(t, 2*time.Minute, "", nil, "sh", append(inCgroup(pgcg)[1:], "bash", script, "start", "--dir", pgDir, "--log-statements")...); res.Exit != 0 {
		t.Fatalf("starting a PostgreSQL in its own cgroup: %s", res)
	}
	t.Cleanup(func() { runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", pgDir) })
	res := runCmd(t, time.Minute, "", nil, "bash", script, "env", "--dir", pgDir)
	env := map[string]string{}
	for _, f := range strings.Fields(res.Stdout) {
		if k, v, ok := strings.Cut(f, "="); ok {
			env[k] = strings.Trim(v, `'"`)
		}
	}
	port, err := strconv.Atoi(env["SQLFW_PG_PORT"])
	if err != nil || env["SQLFW_PG_LOG"] == "" {
		t.Fatalf("pg.sh env: %s", res)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct, err := pgx.Connect(ctx, dsn("127.0.0.1", port, "postgres", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec(ctx, "create table splice_rows (a int); insert into splice_rows values (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}

	d := startIntercepting(t, cg, "--sockmap", "on", "--splice-upstream", pgcg, "--upstream", addr)
	enterCgroup(t, cg)
	const conns, batches, perBatch = 40, 5, 20
	var wg sync.WaitGroup
	errs := make(chan error, conns*batches)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, dsn("127.0.0.1", port, "postgres", ""))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.Background())
			for b := range batches {
				batch := &pgx.Batch{}
				for k := range perBatch {
					batch.Queue("select $1::int8 * 2", int64(i*100000+b*1000+k))
				}
				br := c.SendBatch(ctx, batch)
				for k := range perBatch {
					var v int64
					if err := br.QueryRow().Scan(&v); err != nil {
						errs <- fmt.Errorf("connection %d batch %d item %d: %v", i, b, k, err)
						break
					}
					if want := int64(i*100000+b*1000+k) * 2; v != want {
						errs <- fmt.Errorf("connection %d batch %d item %d: got %d, want %d", i, b, k, v, want)
					}
				}
				if err := br.Close(); err != nil {
					errs <- fmt.Errorf("connection %d batch %d: %v", i, b, err)
				}
				// A blocked statement between batches, then the session
				// goes on.
				del := fmt.Sprintf("delete from splice_rows /* c%d b%d */", i, b)
				if _, err := c.Exec(ctx, del, pgx.QueryExecModeSimpleProtocol); err == nil || !strings.Contains(err.Error(), codeBlocked) {
					errs <- fmt.Errorf("connection %d batch %d: the DELETE got %v, want %s", i, b, err, codeBlocked)
				}
				var n int
				if err := c.QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
					errs <- fmt.Errorf("connection %d after batch %d: count %d, %v; want 3", i, b, n, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := stats(t, d)
	t.Logf("interception: %+v", st.Interception)
	if st.Interception.Redirected < conns {
		t.Errorf("redirected = %d, want ≥ %d", st.Interception.Redirected, conns)
	}
	// Client, accepted, upstream and the server's socket of each connection.
	if st.Interception.SockmapAdded < 4*conns {
		t.Errorf("sockmap_added = %d, want ≥ %d (four sockets a connection)", st.Interception.SockmapAdded, 4*conns)
	}
	var n int
	if err := direct.QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
		t.Errorf("rows after the run: %d, %v; want 3", n, err)
	}
	direct.Close(ctx)
	f, err := os.Open(env["SQLFW_PG_LOG"])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.Contains(line, "delete from splice_rows") {
			t.Errorf("a blocked statement reached the server: %s", line)
		}
		if strings.Contains(line, "select count(*) from splice_rows") {
			seen++
		}
	}
	if seen < conns*batches {
		t.Errorf("the server's log holds %d of the %d counts sent through sqlfwd: is it the right log?", seen, conns*batches)
	}
}
