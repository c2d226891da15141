package e2e

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/mysql"
)

// TestMySQLReadAgreesWithServer checks engine/mysql's reading of a text
// (Dialect.Read: comments, executable comments, strings and quotes under
// the session's sql_mode) against MariaDB itself: for every text Read
// accepts, the server running the original in the session's sql_mode and
// the server running the text Read returned in the default sql_mode give
// the same result sets (or both a syntax error), and TiDB's parser splits
// the reading into as many statements as the server ran. The texts are built from
// fragments that exercise each reading: glued and line comments, control
// characters after "--", version comments every server runs and ones
// MariaDB skips, backslashes, doubled quotes, "..." as a string or an
// identifier.
func TestMySQLReadAgreesWithServer(t *testing.T) {
	my := mariadbEnv(t)
	frags := []string{
		"1", "'a\\'b'", "'a''b'", "\"x\"", "\"a\"\"b\"", "'x\\\\'", "'\\\\'", "'-- x'", "'/*'", "'*/'",
		"1 /*! , 2 */", "1 /*!40101 , 3 */", "1 /*!50700 , 4 */", "1 /*!80000 , 5 */", "1 /*M! , 6 */",
		"1 /*M!100100 , 7 */", "1 /*m! , 8 */", "1 /*T![x] , 9 */", "1 -- c\n", "1 # c\n", "1 /* c */",
		"1 --\x01 c\n", "1--1", "1 /*+ x */", "'a' 'b'", "1 /*!99999 , 10 */", "1 /*! , '*/' */",
		"1; SELECT 'a\\'b'", "1 /*!; SELECT 11 */", "1 --\x01 ' \n, 12 -- '",
	}
	modes := []string{"", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"}
	db := myDirect(t, my)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setMode := func(m string) {
		t.Helper()
		if _, err := conn.ExecContext(t.Context(), "SET SESSION sql_mode = '"+m+"'"); err != nil {
			t.Fatal(err)
		}
	}
	run := func(text string) string {
		rows, err := conn.QueryContext(t.Context(), text)
		if err != nil {
			var me *gomysql.MySQLError
			if errors.As(err, &me) {
				return fmt.Sprintf("error %d", me.Number)
			}
			t.Fatalf("%q: %v", text, err)
		}
		defer rows.Close()
		var out []string
		for {
			cols, _ := rows.Columns()
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				row := make([]string, len(vals))
				for i, v := range vals {
					row[i] = string(v)
				}
				out = append(out, strings.Join(row, "|"))
			}
			out = append(out, resultSetEnd)
			if !rows.NextResultSet() {
				break
			}
		}
		if err := rows.Err(); err != nil {
			var me *gomysql.MySQLError
			if errors.As(err, &me) {
				return strings.Join(out, "\n") + fmt.Sprintf("\nerror %d", me.Number)
			}
			t.Fatal(err)
		}
		return strings.Join(out, "\n")
	}
	// The server's version as sqlfwd reads it from the greeting: every text
	// is also read as this server reads executable comments.
	var ver string
	if err := conn.QueryRowContext(t.Context(), "SELECT VERSION()").Scan(&ver); err != nil {
		t.Fatal(err)
	}
	var maj, min, patch uint32
	if _, err := fmt.Sscanf(ver, "%d.%d.%d", &maj, &min, &patch); err != nil {
		t.Fatalf("version %q: %v", ver, err)
	}
	known := engine.LexState{ServerVersion: maj*10000 + min*100 + patch, MariaDB: strings.Contains(ver, "MariaDB")}
	checked, refused, agree, asIs := 0, 0, 0, 0
	for _, server := range []engine.LexState{{}, known} {
		for _, m := range modes {
			for _, a := range frags {
				for _, b := range frags {
					text := "SELECT " + a + ", " + b
					l := server
					l.SQLMode = m
					read, _, _, ok := mysql.Dialect.Read([]byte(text), &l)
					if !ok {
						refused++
						continue
					}
					checked++
					setMode(m)
					want := run(text)
					setMode("")
					got := run(string(read))
					if run(text) != want {
						asIs++ // read as written, the text would mean something else
					}
					if got != want {
						t.Errorf("sql_mode %q: %q\n  the server ran it as: %s\n  the engine's reading %q runs as: %s", m, text, want, read, got)
						continue
					}
					agree++
					// The parser splits the reading into the statements the
					// server ran (a result set each).
					tf := mysql.Dialect.Analyze(string(read), mysql.Dialect.Prescan(string(read), 0))
					if ran := strings.Count(want, resultSetEnd); !tf.ParseError && !strings.Contains(want, "error") && len(tf.Stmts) != ran {
						t.Errorf("sql_mode %q: %q: the server ran %d statements, the parser found %d in %q", m, text, ran, len(tf.Stmts), read)
					}
					if server.ServerVersion != 0 && mysql.Dialect.Prescan(string(read), 0).CommentTrick && !strings.ContainsAny(text, "'\"#-;") { // quotes and line comments make other tricks
						// a version comment read for the server it goes to is no trick
						t.Errorf("%q read for %s: %q still has a comment trick", text, ver, read)
					}
				}
			}
		}
	}
	t.Logf("%d texts read and run alike (%d of them mean something else read as written), %d refused by Read, %d disagreed", agree, asIs, refused, checked-agree)
	if checked == 0 || asIs == 0 {
		t.Fatalf("%d texts checked, %d whose reading matters: the test cannot fail", checked, asIs)
	}
}

// resultSetEnd ends each result set in run's output.
const resultSetEnd = "\x1e(end of result set)"

// myDirect opens a connection pool straight to MariaDB (no sqlfwd),
// allowing several statements per query, sending texts as given.
func myDirect(t *testing.T, my myEnv) *sql.DB {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = my.User, "tcp", my.addr(), my.Database
	cfg.MultiStatements = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db
}
