package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInterceptSpliceUpstreamMariaDB: intercept.splice_upstream
// (experimental) with MariaDB, whose protocol the splice never reads (it
// moves bytes sqlfwd wrote): 40 intercepted connections each pipeline
// batches of commands (small selects, a 4 MB result, a WHERE-less DELETE,
// a count) in one write, all connections in flight at once. Every answer
// is right and in order, the big result byte for byte what MariaDB gives
// directly, every DELETE is refused by sqlfw and absent from MariaDB's
// general log, the rows stay, and all four sockets of each connection were
// spliced. MariaDB is started in a cgroup of its own, as for PostgreSQL
// (TestInterceptSpliceUpstream): sockops sees its accepted sockets only
// there.
func TestInterceptSpliceUpstreamMariaDB(t *testing.T) {
	needKernel(t)
	if _, err := exec.LookPath("mariadbd"); err != nil {
		t.Skip("skipping: no mariadbd (apt-get install mariadb-server)")
	}
	cg := childCgroup(t)
	mycg := makeCgroup(t, filepath.Dir(cg), cg+"-db")
	work, err := os.MkdirTemp("", "sqlfw-mysplice-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "my")
	script := filepath.Join("..", "scripts", "mariadb.sh")
	if res := runCmd(t, 2*time.Minute, "", nil, "sh", append(inCgroup(mycg)[1:], "bash", script, "start", "--dir", dir, "--log-statements")...); res.Exit != 0 {
		t.Fatalf("starting a MariaDB in its own cgroup: %s", res)
	}
	t.Cleanup(func() { runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", dir) })
	res := runCmd(t, time.Minute, "", nil, "bash", script, "env", "--dir", dir)
	my := myEnv{Host: "127.0.0.1", User: "root", Database: "sqlfw"}
	for _, f := range strings.Fields(strings.TrimPrefix(res.Stdout, "export ")) {
		k, v, _ := strings.Cut(f, "=")
		v = strings.Trim(v, `'"`)
		switch k {
		case "SQLFW_MY_PORT":
			my.Port = v
		case "SQLFW_MY_LOG":
			my.Log = v
		case "SQLFW_MY_DATABASE":
			my.Database = v
		case "SQLFW_MY_USER":
			my.User = v
		}
	}
	if _, err := strconv.Atoi(my.Port); err != nil || my.Log == "" {
		t.Fatalf("mariadb.sh env: %s", res)
	}

	// The tables, and the answers MariaDB gives directly (this process is
	// not intercepted yet).
	direct := myDB(t, my, my.addr(), true)
	for _, q := range []string{
		"create table splice_rows (id int primary key)",
		"insert into splice_rows values (1), (2), (3)",
		"create table splice_big (id int primary key, v varchar(200))",
		"set statement max_recursive_iterations = 100000 for insert into splice_big with recursive s(n) as (select 1 union all select n + 1 from s where n < 20000) " +
			"select n, repeat(char(65 + n % 26), 200) from s",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const bigQuery = "select id, v from splice_big order by id"
	raw := dialRaw(t, my.addr())
	raw.write(raw.handshake(my.User, "", my.Database, 45))
	raw.auth("")
	raw.write(rawQuery(bigQuery))
	wantBig := raw.result()
	if n := strings.Count(wantBig, ";") + 1; n != 20000 {
		t.Fatalf("the big result directly has %d rows, want 20000", n)
	}
	raw.c.Close()

	d := startMySQLIntercepting(t, my, cg, "--sockmap", "on", "--splice-upstream", mycg)
	enterCgroup(t, cg)

	const conns, batches, perBatch = 40, 4, 20
	cs := make([]*myRaw, conns)
	for i := range cs {
		cs[i] = dialRaw(t, my.addr()) // MariaDB's own address: intercepted
		cs[i].write(cs[i].handshake(my.User, "", my.Database, 45))
		cs[i].auth("")
	}
	for b := range batches {
		// Each connection's whole batch in one write, every connection's
		// before any answer is read.
		for i, c := range cs {
			var pkts [][]byte
			for k := range perBatch {
				pkts = append(pkts, rawQuery(fmt.Sprintf("select %d * 2", i*100000+b*1000+k)))
				if k == perBatch/2 {
					pkts = append(pkts, rawQuery(bigQuery),
						rawQuery(fmt.Sprintf("delete from splice_rows /* c%d b%d */", i, b)),
						rawQuery("select count(*) from splice_rows"))
				}
			}
			_ = c.c.SetDeadline(time.Now().Add(2 * time.Minute))
			c.write(pkts...)
		}
		for i, c := range cs {
			for k := range perBatch {
				if got, want := c.result(), strconv.Itoa((i*100000+b*1000+k)*2); got != want {
					t.Fatalf("connection %d batch %d item %d: got %.200q, want %q", i, b, k, got, want)
				}
				if k != perBatch/2 {
					continue
				}
				if got := c.result(); got != wantBig {
					t.Fatalf("connection %d batch %d: the big result differs from MariaDB's own (%d bytes against %d)", i, b, len(got), len(wantBig))
				}
				wantRawBlocked(t, fmt.Sprintf("connection %d batch %d: the DELETE", i, b), c.result(), "no-unfiltered-writes")
				if got := c.result(); got != "3" {
					t.Fatalf("connection %d batch %d: count after the DELETE %q, want 3", i, b, got)
				}
			}
		}
	}
	for _, c := range cs {
		c.c.Close()
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
	// A leg that sent before its peer was in the map stays on TCP
	// (sockmap_fallback, logged above): slower, never wrong.
	checkRows(t, direct, "splice_rows", 3)
	log := generalLog(t, my)
	if strings.Contains(log, "delete from splice_rows") {
		t.Errorf("a blocked statement reached MariaDB:\n%s", linesWith(log, "delete from splice_rows"))
	}
	if n := strings.Count(log, "select count(*) from splice_rows"); n < conns*batches {
		t.Errorf("MariaDB's general log holds %d of the %d counts sent through sqlfwd: is it the right log?", n, conns*batches)
	}
}

// checkRows wants table to hold n rows.
func checkRows(t *testing.T, db *sql.DB, table string, n int) {
	t.Helper()
	var got int
	if err := db.QueryRow("select count(*) from " + table).Scan(&got); err != nil || got != n {
		t.Errorf("rows in %s: %d, %v; want %d", table, got, err, n)
	}
}
