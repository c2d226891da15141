package e2e

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestInterceptSpliceHalfClosePG: with the upstream leg spliced, a client
// that pipelines and then shuts down its write side still gets every
// answer, in order, then the close: a count, a WHERE-less DELETE (sqlfw's
// error in its place), a 4 MB result checked byte by byte, a sleep and a
// statement behind it; a last message sent only in part is
// never forwarded. The server's statement log shows the allowed statements
// and neither the DELETE nor the partial one; the rows stay. Several
// connections at once, so each is seen spliced (four sockets a connection).
func TestInterceptSpliceHalfClosePG(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	pgcg := makeCgroup(t, filepath.Dir(cg), cg+"-db")
	sp := startSplicePG(t, pgcg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsnPG := dsn("127.0.0.1", sp.port, "postgres", "")
	direct, err := pgconn.Connect(ctx, dsnPG)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec(ctx, "create table splice_rows (a int); insert into splice_rows values (1), (2), (3)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	d := startIntercepting(t, cg, "--sockmap", "on", "--splice-upstream", pgcg, "--upstream", net.JoinHostPort("127.0.0.1", strconv.Itoa(sp.port)))
	enterCgroup(t, cg)
	const conns = 8
	done := make(chan struct{}, conns)
	for i := range conns {
		go func() {
			defer func() { done <- struct{}{} }()
			c, err := pgconn.Connect(ctx, dsnPG)
			if err != nil {
				t.Error(err)
				return
			}
			hc, err := c.Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer hc.Conn.Close()
			halfClosePG(t, hc.Conn, hc.Frontend, "hc"+strconv.Itoa(i))
		}()
	}
	for range conns {
		<-done
	}
	st := stats(t, d)
	t.Logf("interception: %+v", st.Interception)
	if st.Interception.SockmapAdded < 4*conns {
		t.Errorf("sockmap_added = %d, want ≥ %d: the sessions were not spliced, so this tested the TCP leg", st.Interception.SockmapAdded, 4*conns)
	}
	res := direct.ExecParams(ctx, "select count(*) from splice_rows", nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "3" {
		t.Errorf("rows after the run: %v, %v; want 3", res.Rows, res.Err)
	}
	direct.Close(ctx)
	neverReached(t, sp.log, conns)
	b, err := os.ReadFile(sp.log)
	if err != nil {
		t.Fatal(err)
	}
	for i := range conns {
		tag := "hc" + strconv.Itoa(i)
		for _, s := range []string{" count */", " large */", " sleep */", " late */"} {
			if !strings.Contains(string(b), tag+s) {
				t.Errorf("the server never ran %s%s", tag, s)
			}
		}
		if strings.Contains(string(b), tag+" partial") {
			t.Errorf("the partial message of %s reached the server", tag)
		}
	}
}

// halfClosePG runs one half-closing session over conn (a hijacked,
// authenticated connection) and checks its answers (Errorf, not Fatal: it runs in a goroutine of its own).
func halfClosePG(t *testing.T, conn net.Conn, fe *pgproto3.Frontend, tag string) {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fe.Send(&pgproto3.Query{String: "select count(*) from splice_rows /* " + tag + " count */"})
	fe.Send(&pgproto3.Query{String: "delete from splice_rows /* " + tag + " */"})
	fe.Send(&pgproto3.Query{String: "select repeat(chr(65 + i % 26), 4000) from generate_series(1, 1000) i /* " + tag + " large */"})
	fe.Send(&pgproto3.Query{String: "select pg_sleep(0.3) /* " + tag + " sleep */"})
	fe.Send(&pgproto3.Query{String: "select 'late' /* " + tag + " late */"})
	if err := fe.Flush(); err != nil {
		t.Error(err)
		return
	}
	// A last Query cut three bytes short of its length: never forwarded.
	partial := &pgproto3.Query{String: "select 'partial' /* " + tag + " partial */"}
	buf, _ := partial.Encode(nil)
	if _, err := conn.Write(buf[:len(buf)-3]); err != nil {
		t.Error(err)
		return
	}
	if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Error(err)
		return
	}
	var rows []string
	var codes []string
	ready := 0
	for ready < 5 {
		m, err := fe.Receive()
		if err != nil {
			t.Errorf("%s: after %d answers (%d rows, errors %q): %v", tag, ready, len(rows), codes, err)
			return
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			rows = append(rows, string(m.Values[0]))
		case *pgproto3.ErrorResponse:
			codes = append(codes, strconv.Itoa(ready)+":"+m.Code)
		case *pgproto3.ReadyForQuery:
			ready++
		}
	}
	if len(rows) != 1+1000+2 || rows[0] != "3" || rows[1001] != "" || rows[1002] != "late" {
		t.Errorf("%s: %d rows %.60q, want the count 3, 1000 large rows, the sleep's void and 'late'", tag, len(rows), rows)
		return
	}
	for i, r := range rows[1:1001] {
		if r != strings.Repeat(string(rune(65+(i+1)%26)), 4000) {
			t.Errorf("%s: large row %d: %.20q", tag, i+1, r)
			return
		}
	}
	if strings.Join(codes, ",") != "1:"+codeBlocked {
		t.Errorf("%s: errors %q, want the DELETE's (answer 1) %s alone", tag, codes, codeBlocked)
	}
	if m, err := fe.Receive(); err == nil {
		t.Errorf("%s: after the answers got %T, want the close", tag, m)
	} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("%s: after the answers: %v, want the close (EOF)", tag, err)
	}
}
