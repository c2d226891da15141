package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

var update = flag.Bool("update", false, "rewrite testdata/captures from TestMariaDBPump")

// boundaries is what a capture's NAME.json holds: where the client's
// packets end and where each response was complete, live.
type boundaries struct {
	Note string `json:"note"`
	C2S  []int  `json:"c2s_packet_ends"`
	S2C  []int  `json:"s2c_response_ends"`
}

type myServer struct{ addr, user, pass, db string }

func mariadbFromEnv(t *testing.T) myServer {
	t.Helper()
	port := os.Getenv("SQLFW_MY_PORT")
	if port == "" {
		t.Skip("skipping: no SQLFW_MY_PORT (run through scripts/test.sh with SQLFW_TEST_MARIADB not 0)")
	}
	s := myServer{
		addr: net.JoinHostPort(os.Getenv("SQLFW_MY_HOST"), port),
		user: os.Getenv("SQLFW_MY_PW_USER"), pass: os.Getenv("SQLFW_MY_PW_PASSWORD"),
		db: os.Getenv("SQLFW_MY_DATABASE"),
	}
	if s.user == "" {
		s.user = os.Getenv("SQLFW_MY_USER")
	}
	return s
}

func (s myServer) config(addr string) *gomysql.Config {
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = s.user, s.pass, "tcp", addr, s.db
	c.MultiStatements = true
	c.InterpolateParams = false
	c.Timeout = 10 * time.Second
	return c
}

// session runs script over one driver connection through a pump that
// strips strip from the greeting, checking after every step that each
// command's response was found complete exactly by the time the driver's
// call returned, and that the recorded bytes replay to the same boundaries.
func session(t *testing.T, srv myServer, strip Caps, script func(c *sql.Conn, step func(string, func() error))) *pump {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		mu    sync.Mutex
		pumps []*pump
		wg    sync.WaitGroup
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", srv.addr)
			if err != nil {
				c.Close()
				continue
			}
			p := newPump(strip)
			mu.Lock()
			pumps = append(pumps, p)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); p.run(c, s) }()
		}
	}()
	conn, err := gomysql.NewConnector(srv.config(ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(pumps) != 1 {
		t.Fatalf("%d connections, want 1", len(pumps))
	}
	p := pumps[0]
	mu.Unlock()
	check := func(name string) {
		t.Helper()
		sent, done, errs := p.counts()
		if len(errs) > 0 {
			t.Fatalf("%s: pump: %v", name, errs)
		}
		if sent != done {
			t.Fatalf("%s: %d commands sent, %d responses complete when the driver returned", name, sent, done)
		}
	}
	check("connect")
	script(c, func(name string, fn func() error) {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(name)
	})
	c.Close()
	db.Close()
	wg.Wait()
	_, _, errs := p.counts()
	if len(errs) > 0 {
		t.Fatalf("pump: %v", errs)
	}
	for _, size := range []int{minBuffer, 64, DefaultBufferSize} {
		ends, done, err := replay(p.c2s, p.s2c, size)
		if err != nil {
			t.Fatalf("replay (buffer %d): %v", size, err)
		}
		if !slices.Equal(ends, p.c2sEnds) || !slices.Equal(done, p.s2cDone) {
			t.Fatalf("replay (buffer %d): client packets end at %v, responses at %v; live %v and %v", size, ends, done, p.c2sEnds, p.s2cDone)
		}
	}
	t.Logf("%d commands (%d bytes to the server, %d back), %d responses", p.sent, len(p.c2s), len(p.s2c), len(p.s2cDone))
	return p
}

func writeCapture(t *testing.T, name string, p *pump) {
	dir := filepath.Join("testdata", "captures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(boundaries{
		Note: "recorded by TestMariaDBPump -update: go-sql-driver/mysql and MariaDB; offsets into NAME.c2s and NAME.s2c",
		C2S:  p.c2sEnds, S2C: p.s2cDone,
	}, "", "\t")
	for ext, data := range map[string][]byte{".c2s": p.c2s, ".s2c": p.s2c, ".json": append(b, '\n')} {
		if err := os.WriteFile(filepath.Join(dir, name+ext), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMariaDBPump(t *testing.T) {
	srv := mariadbFromEnv(t)
	ctx := context.Background()
	// A 17 MiB row needs a max_allowed_packet above MariaDB's 16 MiB
	// default; it applies to connections opened after it.
	direct, err := gomysql.NewConnector(srv.config(srv.addr))
	if err != nil {
		t.Fatal(err)
	}
	ddb := sql.OpenDB(direct)
	defer ddb.Close()
	var oldMax int64
	if err := ddb.QueryRowContext(ctx, "SELECT @@global.max_allowed_packet").Scan(&oldMax); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.ExecContext(ctx, "SET GLOBAL max_allowed_packet = 64*1024*1024"); err != nil {
		t.Fatal(err)
	}
	defer ddb.ExecContext(ctx, fmt.Sprintf("SET GLOBAL max_allowed_packet = %d", oldMax))
	gomysql.RegisterReaderHandler("sqlfw", func() io.Reader { return strings.NewReader("1001,a\n1002,b\n1003,c\n") })
	defer gomysql.DeregisterReaderHandler("sqlfw")

	for _, mode := range []struct {
		name  string
		strip Caps
	}{
		{"deprecate-eof", DefaultStrip},
		{"eof", DefaultStrip | CapDeprecateEOF},
	} {
		t.Run(mode.name, func(t *testing.T) {
			p := session(t, srv, mode.strip, script)
			if *update {
				writeCapture(t, "driver-"+mode.name, p)
			}
			session(t, srv, mode.strip, largeScript)
		})
	}
	// What the pump answered itself never reached the server.
	if log := os.Getenv("SQLFW_MY_LOG"); log != "" {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "wire_t") {
			t.Fatalf("general log %s has none of the test's statements", log)
		}
		if strings.Contains(string(b), blockMark) {
			t.Fatalf("a blocked statement reached the server (general log %s)", log)
		}
	}
}

// count reads every row of every result set of rows and closes it.
func count(rows *sql.Rows, err error) ([]int, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var n []int
	for {
		k := 0
		for rows.Next() {
			k++
		}
		n = append(n, k)
		if !rows.NextResultSet() {
			break
		}
	}
	return n, rows.Err()
}

func want(got []int, err error, w ...int) error {
	if err != nil {
		return err
	}
	if !slices.Equal(got, w) {
		return fmt.Errorf("rows per result %v, want %v", got, w)
	}
	return nil
}

// script is the small statements whose bytes become the captures.
func script(c *sql.Conn, step func(string, func() error)) {
	ctx := context.Background()
	exec := func(q string, args ...any) func() error {
		return func() error { _, err := c.ExecContext(ctx, q, args...); return err }
	}
	step("drop", exec("DROP TABLE IF EXISTS wire_t"))
	step("create", exec("CREATE TABLE wire_t (id INT PRIMARY KEY, v VARCHAR(100), b LONGBLOB)"))
	step("prepared inserts", func() error {
		st, err := c.PrepareContext(ctx, "INSERT INTO wire_t (id, v) VALUES (?, ?)")
		if err != nil {
			return err
		}
		defer st.Close()
		for i := 1; i <= 20; i++ {
			if _, err := st.ExecContext(ctx, i, fmt.Sprintf("row %d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	step("text select", func() error {
		n, err := count(c.QueryContext(ctx, "SELECT id, v, b FROM wire_t ORDER BY id"))
		return want(n, err, 20)
	})
	step("binary select", func() error {
		n, err := count(c.QueryContext(ctx, "SELECT id, v FROM wire_t WHERE id > ?", 5))
		return want(n, err, 15)
	})
	step("empty result", func() error {
		n, err := count(c.QueryContext(ctx, "SELECT id FROM wire_t WHERE id < 0"))
		return want(n, err, 0)
	})
	step("multi-statements", func() error {
		n, err := count(c.QueryContext(ctx, "SELECT 1; SELECT id FROM wire_t WHERE id < 3; UPDATE wire_t SET v = 'y' WHERE id = 1; SELECT 2, 'x'"))
		return want(n, err, 1, 2, 1)
	})
	step("error", func() error {
		_, err := c.QueryContext(ctx, "SELECT * FROM no_such_table")
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1146 {
			return fmt.Errorf("got %v, want error 1146", err)
		}
		return nil
	})
	step("error in multi-statements", func() error {
		_, err := count(c.QueryContext(ctx, "SELECT 1; SELECT * FROM no_such_table; SELECT 3"))
		if err == nil {
			return errors.New("no error")
		}
		return nil
	})
	isBlocked := func(err error) error {
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != ErrBlockedTest || string(me.SQLState[:]) != "42000" {
			return fmt.Errorf("got %v, want the pump's ERR", err)
		}
		return nil
	}
	step("blocked query", func() error {
		_, err := c.ExecContext(ctx, "DELETE FROM wire_t "+blockMark)
		return isBlocked(err)
	})
	step("blocked prepare", func() error {
		_, err := c.PrepareContext(ctx, "SELECT * FROM wire_t WHERE id = ? "+blockMark)
		return isBlocked(err)
	})
	step("blocked inside a transaction", func() error {
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO wire_t (id, v) VALUES (200, 'kept')"); err != nil {
			return err
		}
		if err := isBlocked(func() error { _, err := tx.ExecContext(ctx, "DELETE FROM wire_t "+blockMark); return err }()); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		var v string
		return c.QueryRowContext(ctx, "SELECT v FROM wire_t WHERE id = 200").Scan(&v)
	})
	step("connection still works", func() error {
		n, err := count(c.QueryContext(ctx, "SELECT 1"))
		return want(n, err, 1)
	})
	step("prepare error", func() error {
		if _, err := c.PrepareContext(ctx, "SELECT * FROM no_such_table WHERE id = ?"); err == nil {
			return errors.New("no error")
		}
		return nil
	})
	step("transaction", func() error {
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO wire_t (id, v) VALUES (100, 'tx')"); err != nil {
			return err
		}
		return tx.Commit()
	})
	step("procedure", exec("CREATE OR REPLACE PROCEDURE wire_p() BEGIN SELECT 1; SELECT id FROM wire_t WHERE id <= 3; END"))
	step("call", func() error {
		n, err := count(c.QueryContext(ctx, "CALL wire_p()"))
		return want(n, err, 1, 3)
	})
	step("load data local", func() error {
		_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::sqlfw' INTO TABLE wire_t FIELDS TERMINATED BY ',' (id, v)")
		var me *gomysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1148 || me.Number == 4166 || me.Number == 3948) {
			return nil // the server does not allow LOCAL: its ERR is a response too
		}
		return err
	})
	step("ping", func() error { return c.PingContext(ctx) })
}

// largeScript moves packets longer than 16 MiB both ways and a result of
// about 20 MB; its bytes are checked but not kept.
func largeScript(c *sql.Conn, step func(string, func() error)) {
	ctx := context.Background()
	big := strings.Repeat("z", 17<<20)
	step("long query", func() error {
		_, err := c.ExecContext(ctx, "INSERT INTO wire_t (id, b) VALUES (5000, '"+big+"') ON DUPLICATE KEY UPDATE b = VALUES(b)")
		return err
	})
	step("long text row", func() error {
		var b []byte
		if err := c.QueryRowContext(ctx, "SELECT b FROM wire_t WHERE id = 5000").Scan(&b); err != nil {
			return err
		}
		if len(b) != len(big) {
			return fmt.Errorf("%d bytes, want %d", len(b), len(big))
		}
		return nil
	})
	step("long binary row", func() error {
		var b []byte
		if err := c.QueryRowContext(ctx, "SELECT b, id FROM wire_t WHERE id = ?", 5000).Scan(&b, new(int)); err != nil {
			return err
		}
		if len(b) != len(big) {
			return fmt.Errorf("%d bytes, want %d", len(b), len(big))
		}
		return nil
	})
	step("large result", func() error {
		n, err := count(c.QueryContext(ctx, "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 200) "+
			"SELECT a.n, b.n, REPEAT('x', 1000) FROM s a, s b WHERE b.n <= 100"))
		return want(n, err, 20000)
	})
	step("drop", func() error {
		_, err := c.ExecContext(ctx, "DROP TABLE wire_t; DROP PROCEDURE wire_p")
		return err
	})
}
