// Command injectapp is a TEST FIXTURE: a deliberately SQL-injectable web
// application that scripts/sqlmap.sh and e2e/sqlmap_test.go point sqlmap at,
// directly and through sqlfwd (docs/sqlmap.md). Never run it anywhere but a
// throwaway test machine: it listens on a loopback address only and refuses
// any other, and it connects only to a database on a loopback address.
//
//	injectapp setup   -driver postgres|mysql -addr 127.0.0.1:5432 -user U -db D -admin-db A -secrets-out FILE
//	injectapp serve   -driver postgres|mysql -addr 127.0.0.1:6432 -user U -db D -listen 127.0.0.1:8080
//	injectapp traffic -url http://127.0.0.1:8080
//	injectapp teardown -driver postgres|mysql -addr 127.0.0.1:5432 -user U -db D -admin-db A
//
// setup (re)creates, in database D (created from A when missing), the
// tables items, users and secrets; secrets holds random values, written one
// a line to FILE, that the application never reads: whoever prints one got
// it by injection. serve answers four endpoints that build their SQL by
// pasting the request's text into it, the way vulnerable applications do:
//
//	GET  /item?id=1       SELECT name, price FROM items WHERE id = <id>
//	GET  /search?q=bolt   SELECT name, price FROM items WHERE name = '<q>'
//	GET  /list?sort=name  SELECT name, price FROM items ORDER BY <sort>
//	POST /login user=&pass=  SELECT id FROM users WHERE name='<user>' AND pass='<pass>'
//
// and shows the database's error text, as careless applications do (what
// error-based extraction needs). PostgreSQL is reached with pgx's simple
// protocol and MySQL with multiStatements, so stacked statements reach the
// server as they do from PHP's pg_query and mysqli_multi_query.
//
// teardown drops database D again (from A), so that a run against shared
// test servers leaves them as it found them.
//
// traffic sends the application's legitimate requests (what a learned
// allowlist is learned from) and exits 1 if any of them does not give the
// expected answer.
package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: injectapp setup|serve|traffic [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "setup", "serve", "teardown":
		err = dbCommand(os.Args[1], os.Args[2:])
	case "traffic":
		err = trafficCommand(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "injectapp:", err)
		os.Exit(1)
	}
}

// loopback fails unless host:port names a loopback address.
func loopback(what, hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, hostport, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s %q: only a loopback IP address is allowed (this is a deliberately vulnerable test fixture)", what, hostport)
	}
	return nil
}

func dbCommand(cmd string, args []string) error {
	fs := flag.NewFlagSet("injectapp "+cmd, flag.ContinueOnError)
	driver := fs.String("driver", "postgres", "postgres or mysql")
	addr := fs.String("addr", "", "database `host:port` (loopback; sqlfwd's listener or the server)")
	user := fs.String("user", "", "database user")
	db := fs.String("db", "sqlmap_app", "database")
	adminDB := fs.String("admin-db", "", "setup: an existing database to create -db from")
	secretsOut := fs.String("secrets-out", "", "setup: file the secret values are written to")
	listen := fs.String("listen", "127.0.0.1:0", "serve: loopback `host:port` to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := loopback("-addr", *addr); err != nil {
		return err
	}
	if *driver != "postgres" && *driver != "mysql" {
		return fmt.Errorf("-driver %q: want postgres or mysql", *driver)
	}
	switch cmd {
	case "setup":
		return setup(*driver, *addr, *user, *adminDB, *db, *secretsOut)
	case "teardown":
		return teardown(*driver, *addr, *user, *adminDB, *db)
	}
	if err := loopback("-listen", *listen); err != nil {
		return err
	}
	return serve(*driver, *addr, *user, *db, *listen)
}

func open(driver, addr, user, db string) (*sql.DB, error) {
	if driver == "mysql" {
		cfg := gomysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = user, "tcp", addr, db
		cfg.MultiStatements = true
		cfg.Timeout = 10 * time.Second
		return sql.Open("mysql", cfg.FormatDSN())
	}
	u := url.URL{Scheme: "postgres", User: url.User(user), Host: addr, Path: "/" + db,
		RawQuery: "sslmode=disable&connect_timeout=10&default_query_exec_mode=simple_protocol"}
	return sql.Open("pgx", u.String())
}

func setup(driver, addr, user, adminDB, db, secretsOut string) error {
	if secretsOut == "" {
		return errors.New("setup: -secrets-out is required")
	}
	if adminDB != "" {
		a, err := open(driver, addr, user, adminDB)
		if err != nil {
			return err
		}
		defer a.Close()
		if driver == "mysql" {
			_, err = a.Exec("CREATE DATABASE IF NOT EXISTS " + db)
		} else {
			var n int
			if err = a.QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", db).Scan(&n); err == nil && n == 0 {
				_, err = a.Exec("CREATE DATABASE " + db)
			}
		}
		if err != nil {
			return fmt.Errorf("creating database %s: %w", db, err)
		}
	}
	c, err := open(driver, addr, user, db)
	if err != nil {
		return err
	}
	defer c.Close()
	secrets := make([]string, 3)
	for i := range secrets {
		b := make([]byte, 12)
		rand.Read(b)
		secrets[i] = "sqlfwsecret" + hex.EncodeToString(b)
	}
	money := "numeric(10,2)"
	stmts := []string{
		"DROP TABLE IF EXISTS items", "DROP TABLE IF EXISTS users", "DROP TABLE IF EXISTS secrets",
		"CREATE TABLE items (id int PRIMARY KEY, name varchar(64) NOT NULL, price " + money + " NOT NULL)",
		"CREATE TABLE users (id int PRIMARY KEY, name varchar(64) NOT NULL, pass varchar(64) NOT NULL)",
		"CREATE TABLE secrets (id int PRIMARY KEY, label varchar(64) NOT NULL, value varchar(64) NOT NULL)",
		"INSERT INTO items VALUES (1, 'bolt', 0.25), (2, 'nut', 0.10), (3, 'washer', 0.05), (4, 'hinge', 3.50), (5, 'bracket', 7.00)",
		"INSERT INTO users VALUES (1, 'alice', 'wonderland'), (2, 'bob', 'builder')",
		fmt.Sprintf("INSERT INTO secrets VALUES (1, 'api-key', '%s'), (2, 'db-password', '%s'), (3, 'signing-key', '%s')", secrets[0], secrets[1], secrets[2]),
	}
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			return fmt.Errorf("setup: %s: %w", strings.SplitN(s, "(", 2)[0], err)
		}
	}
	return os.WriteFile(secretsOut, []byte(strings.Join(secrets, "\n")+"\n"), 0o600)
}

func teardown(driver, addr, user, adminDB, db string) error {
	if adminDB == "" || adminDB == db {
		return errors.New("teardown: -admin-db must name another database than -db")
	}
	a, err := open(driver, addr, user, adminDB)
	if err != nil {
		return err
	}
	defer a.Close()
	q := "DROP DATABASE IF EXISTS " + db
	if driver == "postgres" {
		q += " WITH (FORCE)" // sqlfwd's and the application's sessions may still be closing
	}
	if _, err := a.Exec(q); err != nil {
		return fmt.Errorf("dropping database %s: %w", db, err)
	}
	return nil
}

func serve(driver, addr, user, db, listen string) error {
	c, err := open(driver, addr, user, db)
	if err != nil {
		return err
	}
	c.SetMaxOpenConns(8)
	c.SetConnMaxIdleTime(30 * time.Second)
	mux := http.NewServeMux()
	// Each handler pastes the request's text into its SQL: the injection
	// points sqlmap is pointed at.
	mux.HandleFunc("GET /item", func(w http.ResponseWriter, r *http.Request) {
		rows(w, c, "SELECT name, price FROM items WHERE id = "+r.URL.Query().Get("id"))
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		rows(w, c, "SELECT name, price FROM items WHERE name = '"+r.URL.Query().Get("q")+"'")
	})
	mux.HandleFunc("GET /list", func(w http.ResponseWriter, r *http.Request) {
		rows(w, c, "SELECT name, price FROM items ORDER BY "+r.URL.Query().Get("sort"))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		q := "SELECT id FROM users WHERE name='" + r.PostFormValue("user") + "' AND pass='" + r.PostFormValue("pass") + "'"
		var id int
		switch err := c.QueryRow(q).Scan(&id); {
		case errors.Is(err, sql.ErrNoRows):
			fmt.Fprint(w, "<html><body><p>login failed</p></body></html>\n")
		case err != nil:
			dbError(w, err)
		default:
			fmt.Fprintf(w, "<html><body><p>welcome, user %d</p></body></html>\n", id)
		}
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

func rows(w http.ResponseWriter, c *sql.DB, q string) {
	rs, err := c.Query(q)
	if err != nil {
		dbError(w, err)
		return
	}
	defer rs.Close()
	var b strings.Builder
	b.WriteString("<html><body><table>\n")
	for rs.Next() {
		var name, price string
		if err := rs.Scan(&name, &price); err != nil {
			dbError(w, err)
			return
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>\n", html.EscapeString(name), html.EscapeString(price))
	}
	if err := rs.Err(); err != nil {
		dbError(w, err)
		return
	}
	b.WriteString("</table></body></html>\n")
	io.WriteString(w, b.String())
}

// dbError shows the database's error text in the page, as careless
// applications do.
func dbError(w http.ResponseWriter, err error) {
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, "<html><body><p>database error: %s</p></body></html>\n", html.EscapeString(err.Error()))
}

// legit are the application's ordinary requests and a word each answer
// must contain.
var legit = []struct{ method, path, form, want string }{
	{"GET", "/item?id=1", "", "bolt"},
	{"GET", "/item?id=4", "", "hinge"},
	{"GET", "/item?id=99", "", "<table>"},
	{"GET", "/search?q=nut", "", "nut"},
	{"GET", "/search?q=washer", "", "washer"},
	{"GET", "/search?q=nothing", "", "<table>"},
	{"GET", "/list?sort=name", "", "bracket"},
	{"GET", "/list?sort=price", "", "washer"},
	{"GET", "/list?sort=id", "", "bolt"},
	{"POST", "/login", "user=alice&pass=wonderland", "welcome, user 1"},
	{"POST", "/login", "user=bob&pass=builder", "welcome, user 2"},
	{"POST", "/login", "user=alice&pass=wrong", "login failed"},
}

func trafficCommand(args []string) error {
	fs := flag.NewFlagSet("injectapp traffic", flag.ContinueOnError)
	base := fs.String("url", "", "the application's base `URL` (loopback)")
	rounds := fs.Int("rounds", 3, "times each request is sent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	if err := loopback("-url", u.Host); err != nil {
		return err
	}
	client := &http.Client{Timeout: 20 * time.Second}
	failed := 0
	for range *rounds {
		for _, l := range legit {
			var resp *http.Response
			if l.method == "POST" {
				resp, err = client.Post(*base+l.path, "application/x-www-form-urlencoded", strings.NewReader(l.form))
			} else {
				resp, err = client.Get(*base + l.path)
			}
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), l.want) {
				failed++
				fmt.Fprintf(os.Stderr, "injectapp traffic: %s %s %s: status %d, want %q in:\n%s", l.method, l.path, l.form, resp.StatusCode, l.want, body)
			}
		}
	}
	fmt.Printf("legitimate requests: %d sent, %d failed\n", *rounds*len(legit), failed)
	if failed > 0 {
		return fmt.Errorf("%d legitimate requests failed", failed)
	}
	return nil
}
