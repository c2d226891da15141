package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// fastpathScript exercises what the kernel fast path must hand back to
// sqlfwd: errors, a blocked statement in and out of a transaction and in
// the middle of a multi-statement query, a client_encoding change (the
// server's ParameterStatus), COPY both ways, large results around them.
func fastpathScript(marker string) string {
	return `\set VERBOSITY terse
select count(*), sum(length(r)) from (select repeat('x', i % 700) r from generate_series(1, 30000) i) s;
select i, repeat(chr(65 + i % 26), i % 50) from generate_series(1, 3000) i;
select 1/0;
select 'after error';
delete /* ` + marker + ` */ from fpt;
select count(*) from fpt;
begin;
select i from generate_series(1, 2000) i;
delete /* ` + marker + ` */ from fpt;
select 'in failed tx';
rollback;
select 'x' || i from generate_series(1, 5) i; delete /* ` + marker + ` */ from fpt; select 'not run';
set client_encoding to 'LATIN1';
select 'caf' || chr(233), repeat(chr(233), 3000);
reset client_encoding;
select 'caf' || chr(233);
copy (select i, md5(i::text) from generate_series(1, 20000) i) to stdout;
copy fpt from stdin;
7
8
9
\.
select sum(id), count(*) from fpt;
select i, repeat('y', 5000) from generate_series(1, 400) i;
`
}

// TestInterceptFastpath: with the experimental kernel fast path, psql
// (simple protocol, COPY, errors, blocked statements, an encoding change),
// pgbench in prepared and extended mode and pipelined pgx batches get
// exactly what they get without it; blocked statements never reach the
// server; and the kernel did relay (its counters).
func TestInterceptFastpath(t *testing.T) {
	needKernel(t)
	marker := "fpmark" + randomHex(t)
	out, pipe := map[string]string{}, map[string]string{}
	for _, mode := range []string{"fastpath", "reference"} {
		t.Run(mode, func(t *testing.T) {
			cg := childCgroup(t)
			var d *daemon
			if mode == "fastpath" {
				d = startIntercepting(t, cg, "--fastpath")
			} else {
				d = startIntercepting(t, cg)
			}
			freshTable(t, "fpt", 1, 2, 3)
			args := append(inCgroup(cg)[1:], tool(t, "psql"), "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", pg.User,
				"-d", pg.Database, "-A")
			res := runCmd(t, time.Minute, fastpathScript(marker), nil, "sh", args...)
			out[mode] = res.Stdout + "\n--stderr--\n" + res.Stderr
			if res.Exit != 0 {
				t.Fatalf("psql: %s", tail(out[mode], 30))
			}
			if !strings.Contains(res.Stderr, codeBlocked) && !strings.Contains(res.Stderr, "blocked") {
				t.Errorf("psql: no blocked statement reported:\n%s", res.Stderr)
			}

			conn := []string{"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User}
			for _, m := range []string{"prepared", "extended"} {
				pa := append(inCgroup(cg)[1:], tool(t, "pgbench"), "-n", "-T", "2", "-c", "2", "-j", "2", "-M", m,
					"-f", "-")
				pa = append(append(pa, conn...), pg.Database)
				script := "\\set a random(1, 1000)\nselect :a::int * 2, repeat('z', :a);\nselect count(*) from fpt;\n"
				if r := runCmd(t, time.Minute, script, nil, "sh", pa...); r.Exit != 0 || !strings.Contains(r.Stdout, "number of failed transactions: 0 ") {
					t.Errorf("pgbench -M %s: %s", m, r)
				}
			}

			enterCgroup(t, cg)
			pipe[mode] = pipelines(t)

			if mode == "fastpath" {
				st := stats(t, d)
				ic := st.Interception
				if ic.FastpathSessions < 5 || ic.FastpathBytes == 0 || ic.FastpathReady == 0 || ic.FastpathHalts == 0 {
					t.Errorf("fast path counters %+v: want sessions, bytes, ReadyForQuery relayed by the kernel and halts", ic)
				}
				t.Logf("fast path: %d sessions, %d bytes and %d ReadyForQuery relayed by the kernel, %d halts",
					ic.FastpathSessions, ic.FastpathBytes, ic.FastpathReady, ic.FastpathHalts)
			}
		})
	}
	if out["fastpath"] != out["reference"] {
		t.Errorf("psql output differs with the fast path:\n--- fastpath\n%s\n--- reference\n%s", tail(out["fastpath"], 40), tail(out["reference"], 40))
	}
	if pipe["fastpath"] != pipe["reference"] {
		t.Errorf("pipelined answers differ with the fast path:\n--- fastpath\n%s\n--- reference\n%s", tail(pipe["fastpath"], 5), tail(pipe["reference"], 5))
	}
	checkServerLogClean(t, marker)
}

// pipelines runs pipelined, sequence-numbered batches on several
// connections, some with a blocked statement in the middle, checks the
// answers of the batches without one and returns a transcript of all
// answers (values, or the error's SQLSTATE) to compare across runs.
func pipelines(t *testing.T) string {
	t.Helper()
	const conns, batches, perBatch = 8, 20, 30
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	logs := make([]strings.Builder, conns)
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := pgx.Connect(ctx, dsn(pg.Host, pg.Port, pg.User, ""))
			if err != nil {
				fail(err)
				return
			}
			defer c.Close(context.Background())
			for b := 0; b < batches; b++ {
				blocked := b%4 == 3
				batch := &pgx.Batch{}
				for k := 0; k < perBatch; k++ {
					if blocked && k == perBatch/2 {
						batch.Queue("delete from fpt")
						continue
					}
					batch.Queue("select $1::int8 * 2, repeat('p', $2::int)", int64(i*100000+b*1000+k), (k*97)%4000)
				}
				br := c.SendBatch(ctx, batch)
				for k := 0; k < perBatch; k++ {
					var v int64
					var s string
					err := br.QueryRow().Scan(&v, &s)
					var pe *pgconn.PgError
					switch {
					case errors.As(err, &pe):
						fmt.Fprintf(&logs[i], "%d.%d:%s ", b, k, pe.Code)
					case err != nil:
						fail(fmt.Errorf("conn %d batch %d item %d: %v", i, b, k, err))
						br.Close()
						return
					default:
						fmt.Fprintf(&logs[i], "%d.%d:%d/%d ", b, k, v, len(s))
						if v != int64(i*100000+b*1000+k)*2 || len(s) != (k*97)%4000 {
							fail(fmt.Errorf("conn %d batch %d item %d: got %d/%d bytes", i, b, k, v, len(s)))
						}
					}
				}
				br.Close()
			}
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if i < 10 {
			t.Error(err)
		}
	}
	var all strings.Builder
	for i := range logs {
		all.WriteString(logs[i].String())
		all.WriteString("\n")
	}
	if !strings.Contains(all.String(), codeBlocked) {
		t.Errorf("no blocked statement answered in the pipelines")
	}
	return all.String()
}
