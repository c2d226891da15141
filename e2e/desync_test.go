package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPipelineDesync pipelines allowed statements around denied ones, each
// denied one carrying a unique marker, and checks that (1) every allowed
// statement gets its own answer in order and (2) the marker never appears in
// the server's statement log (log_statement=all), i.e. sqlfwd kept the denied
// text from PostgreSQL whatever the framing. A denied text would be logged
// either as executed or, since it names a table that does not exist, as the
// STATEMENT of a parse error.
func TestPipelineDesync(t *testing.T) {
	needSqlfwd(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := connect(t, ctx, targetDSN(t))
	pc := c.PgConn()
	marker := "mark" + randomHex(t)
	denied1 := fmt.Sprintf("delete from e2e_desync_%s_a", marker)
	denied2 := fmt.Sprintf("select pg_read_file('/tmp/%s_b')", marker)
	denied3 := fmt.Sprintf("delete from e2e_desync_%s_c", marker)

	t.Run("extended, Sync after each", func(t *testing.T) {
		p := pc.StartPipeline(ctx)
		p.SendQueryParams("select 'a1'", nil, nil, nil, nil)
		p.SendPipelineSync()
		p.SendQueryParams(denied1, nil, nil, nil, nil)
		p.SendPipelineSync()
		p.SendQueryParams("select 'a2'", nil, nil, nil, nil)
		p.SendPipelineSync()
		p.SendQueryParams(denied2, nil, nil, nil, nil)
		p.SendPipelineSync()
		p.SendQueryParams("select 'a3'", nil, nil, nil, nil)
		if err := p.Sync(); err != nil {
			t.Fatalf("sending the pipeline: %v", err)
		}
		got := drainPipeline(t, p, 10)
		want := []string{"a1", "sync", "err " + codeBlocked, "sync", "a2", "sync", "err " + codeBlocked, "sync", "a3", "sync"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input pipeline [a1 S %q S a2 S %q S a3 S]\ngot  %q\nwant %q", denied1, denied2, got, want)
		}
		if err := p.Close(); err != nil {
			t.Errorf("closing the pipeline: %v", err)
		}
	})

	t.Run("extended, one Sync", func(t *testing.T) {
		// PostgreSQL skips everything after an error up to the Sync; sqlfwd
		// must answer the same and forward nothing of the denied statement.
		p := pc.StartPipeline(ctx)
		p.SendQueryParams("select 'b1'", nil, nil, nil, nil)
		p.SendQueryParams(denied3, nil, nil, nil, nil)
		p.SendQueryParams("select 'b2'", nil, nil, nil, nil)
		if err := p.Sync(); err != nil {
			t.Fatalf("sending the pipeline: %v", err)
		}
		got := drainPipeline(t, p, 3)
		want := []string{"b1", "err " + codeBlocked, "sync"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input pipeline [b1 %q b2 S]\ngot  %q\nwant %q", denied3, got, want)
		}
		if err := p.Close(); err != nil {
			t.Errorf("closing the pipeline: %v", err)
		}
	})

	t.Run("simple, several statements", func(t *testing.T) {
		sql := fmt.Sprintf("select 'c1'; delete from e2e_desync_%s_d; select 'c2'", marker)
		_, err := pc.Exec(ctx, sql).ReadAll()
		checkDenied(t, sql, err)
	})

	// The connection is in step: a plain query gets its own answer.
	var got string
	if err := c.QueryRow(ctx, "select 'in step'").Scan(&got); err != nil || got != "in step" {
		t.Errorf("input select 'in step' after the pipelines: got %q, %v; want \"in step\", nil", got, err)
	}

	// Everything sent so far is in the log once a later sentinel is.
	for _, line := range strings.Split(serverLog(t), "\n") {
		if strings.Contains(line, marker) {
			t.Errorf("server log line %q holds the marker of a denied statement: PostgreSQL received it", line)
		}
	}
}

// drainPipeline reads n results and describes each: a row's first column,
// "err CODE", or "sync".
func drainPipeline(t *testing.T, p *pgconn.Pipeline, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		res, err := p.GetResults()
		if err != nil {
			got = append(got, "err "+errCode(err))
			continue
		}
		switch r := res.(type) {
		case *pgconn.ResultReader:
			rr := r.Read()
			if rr.Err != nil {
				got = append(got, "err "+errCode(rr.Err))
			} else if len(rr.Rows) == 1 && len(rr.Rows[0]) == 1 {
				got = append(got, string(rr.Rows[0][0]))
			} else {
				got = append(got, fmt.Sprintf("rows %d", len(rr.Rows)))
			}
		case *pgconn.PipelineSync:
			got = append(got, "sync")
		case nil:
			t.Fatalf("pipeline ran out of results after %q, want %d", got, n)
		default:
			got = append(got, fmt.Sprintf("%T", r))
		}
	}
	return got
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
