package corpora

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Database is the throwaway database the measure creates on each server:
// the vulnerable application's tables and a secrets table it never reads.
const Database = "sqlfw_corpora"

var schema = []string{
	"CREATE TABLE items (id int PRIMARY KEY, name varchar(64) NOT NULL, price int NOT NULL)",
	"CREATE TABLE users (id int PRIMARY KEY, name varchar(64) NOT NULL, pass varchar(64) NOT NULL)",
	"CREATE TABLE secrets (id int PRIMARY KEY, name varchar(64) NOT NULL, value varchar(128) NOT NULL)",
}

// Parser asks a real server whether it parses a statement, without
// running it: PostgreSQL's Parse message (extended protocol; analysis of
// queries, raw parsing of utility statements) and MariaDB's
// COM_STMT_PREPARE. Neither executes anything.
type Parser interface {
	// Parses reports whether the server's parser accepts stmt (one
	// statement), and whether the server accepts it whole: the grammar
	// and every name it resolves before running (tables, columns,
	// functions, types; PostgreSQL resolves a utility statement's names
	// only when it runs it).
	Parses(ctx context.Context, stmt string) (parsed, accepted bool, err error)
	// Another opens one more connection to the same database.
	Another(ctx context.Context) (Parser, error)
	Close()
}

// PGParser parses on a PostgreSQL server.
type PGParser struct {
	c   *pgx.Conn
	cfg *pgx.ConnConfig
}

// NewPGParser connects to the server (connString names any database it
// may create one in) and creates Database with the schema, afresh.
func NewPGParser(ctx context.Context, connString string) (*PGParser, error) {
	admin, err := pgx.Connect(ctx, connString)
	if err != nil {
		return nil, err
	}
	defer admin.Close(ctx)
	for _, q := range []string{"DROP DATABASE IF EXISTS " + Database + " WITH (FORCE)", "CREATE DATABASE " + Database} {
		if _, err := admin.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cfg.Database = Database
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, q := range schema {
		if _, err := c.Exec(ctx, q); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return &PGParser{c, cfg}, nil
}

// Another connects once more to Database.
func (p *PGParser) Another(ctx context.Context) (Parser, error) {
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, err
	}
	return &PGParser{c, p.cfg}, nil
}

// Parses sends stmt in a Parse message (the unnamed statement). PostgreSQL
// only parses and analyses it, runs nothing, so the caller's per-statement
// deadline (MariaDB's, which may evaluate while preparing) is not applied:
// on a loaded machine a Parse can take longer than it, and a cancelled
// Parse closes the connection. The generous bound stays.
func (p *PGParser) Parses(ctx context.Context, stmt string) (bool, bool, error) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	_, err := p.c.PgConn().Prepare(pctx, "", stmt, nil)
	if err == nil {
		return true, true, nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 42601 syntax_error (also "cannot insert multiple commands");
		// every other error comes after the grammar accepted the text.
		return pe.Code != "42601", false, nil
	}
	return false, false, err
}

// Close closes the connection.
func (p *PGParser) Close() { p.c.Close(context.Background()) }

// MyParser parses on a MariaDB or MySQL server.
type MyParser struct {
	db      *sql.DB
	c       *sql.Conn
	shared  bool // db belongs to the parser Another was called on
	Version string
	SQLMode string
	// Slow counts the prepares MariaDB stopped at max_statement_time
	// or that ran past their deadline.
	Slow      int
	SlowTexts []string
}

// NewMyParser connects with dsn (go-sql-driver form, no database) and
// creates Database with the schema, afresh.
func NewMyParser(ctx context.Context, dsn string) (*MyParser, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	p := &MyParser{db: db, c: c}
	for _, q := range append([]string{"DROP DATABASE IF EXISTS " + Database, "CREATE DATABASE " + Database, "USE " + Database}, schema...) {
		if _, err := c.ExecContext(ctx, q); err != nil {
			p.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := p.setup(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := c.QueryRowContext(ctx, "SELECT VERSION(), @@SESSION.sql_mode").Scan(&p.Version, &p.SQLMode); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Parses prepares stmt (COM_STMT_PREPARE) and closes it again. MariaDB
// evaluates some constant subqueries while preparing (a SLEEP in a
// derived table): a prepare still busy after the deadline got past the
// parser, and the connection is opened again.
func (p *MyParser) Parses(ctx context.Context, stmt string) (bool, bool, error) {
	st, err := p.c.PrepareContext(ctx, stmt)
	if err == nil {
		st.Close()
		return true, true, nil
	}
	if ctx.Err() != nil {
		p.Slow++
		p.SlowTexts = append(p.SlowTexts, "deadline: "+stmt)
		p.c.Close()
		c, err := p.db.Conn(context.Background())
		if err != nil {
			return false, false, err
		}
		p.c = c
		if err := p.setup(context.Background(), "USE "+Database); err != nil {
			return false, false, err
		}
		return true, true, nil
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1064, 1149: // ER_PARSE_ERROR, ER_SYNTAX_ERROR
			return false, false, nil
		case 1295, 1969: // ER_UNSUPPORTED_PS (after parsing), ER_STATEMENT_TIMEOUT (it ran)
			if me.Number == 1969 {
				p.Slow++
				p.SlowTexts = append(p.SlowTexts, "max_statement_time: "+stmt)
			}
			return true, true, nil
		}
		// Unknown table, column or function, wrong column count...
		return true, false, nil
	}
	return false, false, err
}

// setup runs the session's settings (and qs) on the connection:
// max_statement_time stops what MariaDB evaluates while preparing; the
// general log, when the server keeps one, need not hold the corpora.
func (p *MyParser) setup(ctx context.Context, qs ...string) error {
	for _, q := range append([]string{"SET SESSION max_statement_time = 0.5", "SET SESSION sql_log_off = 1"}, qs...) {
		if _, err := p.c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Another opens one more connection to Database.
func (p *MyParser) Another(ctx context.Context) (Parser, error) {
	c, err := p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	q := &MyParser{db: p.db, c: c, shared: true, Version: p.Version, SQLMode: p.SQLMode}
	if err := q.setup(ctx, "USE "+Database); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

// Close drops the connection.
func (p *MyParser) Close() {
	if p.c != nil {
		p.c.Close()
	}
	if !p.shared {
		p.db.Close()
	}
}

// serverParses asks srv about each statement of l (the text of stmt):
// whether it parses them all, and whether it accepts them all.
func serverParses(ctx context.Context, srv Parser, stmt string, l lexed) (parsed, accepted bool, err error) {
	if len(l.stmts) == 0 {
		return false, false, nil
	}
	parsed, accepted = true, true
	for _, r := range l.stmts {
		one := strings.TrimSpace(stmt[r[0]:r[1]])
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		p, a, err := srv.Parses(cctx, one)
		cancel()
		if err != nil || !p {
			return false, false, err
		}
		accepted = accepted && a
	}
	return parsed, accepted, nil
}
