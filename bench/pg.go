package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DBConfig is how the workloads log in; the address comes from the target.
type DBConfig struct {
	User     string
	Password string
	Database string
	// SSLMode is libpq's sslmode for PostgreSQL workloads (pgx reads it
	// the same way); "" is disable. A target's sslmode key sets it.
	SSLMode, SSLRootCert string
}

func (c DBConfig) connString(addr string) string {
	mode := c.SSLMode
	if mode == "" {
		mode = "disable"
	}
	q := url.Values{"sslmode": {mode}}
	if c.SSLRootCert != "" {
		q.Set("sslrootcert", c.SSLRootCert)
	}
	u := url.URL{Scheme: "postgres", Host: addr, Path: "/" + c.Database, RawQuery: q.Encode()}
	if c.Password != "" {
		u.User = url.UserPassword(c.User, c.Password)
	} else {
		u.User = url.User(c.User)
	}
	return u.String()
}

func (c DBConfig) connect(ctx context.Context, addr string, mode pgx.QueryExecMode) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(c.connString(addr))
	if err != nil {
		return nil, fmt.Errorf("postgres config: %w", err)
	}
	cfg.DefaultQueryExecMode = mode
	cfg.ConnectTimeout = 0 // the caller's context bounds it
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return conn, nil
}

// Accounts is the number of rows in pgbench_accounts: pgbench's scale 1.
const Accounts = 100_000

// Protocols of the workloads. A run's workloads all speak one.
const (
	Postgres = "postgres"
	MySQL    = "mysql"
)

// Workload is one kind of request. Setup runs once per run on the direct
// target; BeforeCell (optional) runs on it before every cell, to keep
// tables from growing without bound.
type Workload struct {
	Name     string
	Doc      string
	Protocol string
	Schema   string // workloads with the same Schema share one Setup
	// Statements per request, for "vCPU per 1,000 statements/s".
	Statements float64
	Setup      func(ctx context.Context, cfg DBConfig, addr string) error
	BeforeCell func(ctx context.Context, cfg DBConfig, addr string) error
	Open       func(cfg DBConfig, addr string) OpenFunc
}

// mix is splitmix64: a cheap, stateless way to turn a request number into
// well-spread pseudo-random keys, so a cell's keys depend only on its
// numbers and every target sees the same ones.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func accountID(seq int64, span int) int64 {
	return int64(mix(uint64(seq))%uint64(Accounts-span+1)) + 1
}

// setupSchema creates pgbench's accounts table at scale 1 (same columns as
// pgbench -i) and the tables the write workloads use. Idempotent.
func setupSchema(ctx context.Context, conn *pgx.Conn) error {
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS pgbench_accounts (aid int PRIMARY KEY, bid int NOT NULL, abalance int NOT NULL, filler char(84))`,
		`INSERT INTO pgbench_accounts SELECT g, 1, 0, '' FROM generate_series(1, ` + strconv.Itoa(Accounts) + `) g ON CONFLICT DO NOTHING`,
		`VACUUM ANALYZE pgbench_accounts`,
		`CREATE UNLOGGED TABLE IF NOT EXISTS bench_ins (a bigint NOT NULL, b int NOT NULL, c text NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_victim (id int)`,
		`TRUNCATE bench_victim`,
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("creating the benchmark schema: %w", err)
		}
	}
	return nil
}

func truncateInserts(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, `TRUNCATE bench_ins`); err != nil {
		return fmt.Errorf("truncating bench_ins: %w", err)
	}
	return nil
}

// onDirect adapts a function of a connection to Setup and BeforeCell.
func onDirect(f func(context.Context, *pgx.Conn) error) func(context.Context, DBConfig, string) error {
	return func(ctx context.Context, cfg DBConfig, addr string) error {
		return withDirect(ctx, cfg, addr, f)
	}
}

// pgOp adapts a pgx connection and a request function to Op.
type pgOp struct {
	conn *pgx.Conn
	do   func(ctx context.Context, conn *pgx.Conn, seq int64) error
}

func (o *pgOp) Do(ctx context.Context, seq int64) error { return o.do(ctx, o.conn, seq) }
func (o *pgOp) Close() error                            { return o.conn.Close(context.Background()) }

func pgOpen(mode pgx.QueryExecMode, do func(ctx context.Context, conn *pgx.Conn, seq int64) error) func(DBConfig, string) OpenFunc {
	return func(cfg DBConfig, addr string) OpenFunc {
		return func(ctx context.Context) (Op, error) {
			conn, err := cfg.connect(ctx, addr, mode)
			if err != nil {
				return nil, err
			}
			return &pgOp{conn: conn, do: do}, nil
		}
	}
}

const selectPK = `SELECT abalance FROM pgbench_accounts WHERE aid = $1`

func doSelectPK(ctx context.Context, conn *pgx.Conn, seq int64) error {
	var bal int32
	return conn.QueryRow(ctx, selectPK, accountID(seq, 1)).Scan(&bal)
}

func doRows(n int) func(context.Context, *pgx.Conn, int64) error {
	return func(ctx context.Context, conn *pgx.Conn, seq int64) error {
		lo := accountID(seq, n)
		rows, err := conn.Query(ctx, `SELECT aid, bid, abalance, filler FROM pgbench_accounts WHERE aid BETWEEN $1 AND $2`, lo, lo+int64(n)-1)
		if err != nil {
			return err
		}
		var aid, bid, bal int32
		var filler string
		got := 0
		for rows.Next() {
			if err := rows.Scan(&aid, &bid, &bal, &filler); err != nil {
				rows.Close()
				return err
			}
			got++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("rows workload: got %d rows, want %d", got, n)
		}
		return nil
	}
}

// insertText builds a multi-row INSERT with literal values that differ per
// request, as an ORM's bulk insert does: the firewall sees a new text every
// time, which no cache of exact texts answers (sqlfwd's cache of INSERT
// shapes does: engine/pgsql/shape.go).
func insertText(n int, seq int64) string {
	var b strings.Builder
	b.Grow(40 + n*32)
	b.WriteString("INSERT INTO bench_ins (a, b, c) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		v := mix(uint64(seq)*1024 + uint64(i))
		b.WriteByte('(')
		b.WriteString(strconv.FormatInt(seq, 10))
		b.WriteString(", ")
		b.WriteString(strconv.FormatUint(v%1_000_000, 10))
		b.WriteString(", 'row-")
		b.WriteString(strconv.FormatUint(v%99991, 10))
		b.WriteString("')")
	}
	return b.String()
}

// execExtended sends one statement with the extended protocol (unnamed
// statement: Parse, Bind, Describe, Execute, Sync). pgx's Exec would fall
// back to the simple protocol for a statement without arguments.
func execExtended(ctx context.Context, conn *pgx.Conn, sql string) error {
	return conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
}

func doInsert(n int) func(context.Context, *pgx.Conn, int64) error {
	return func(ctx context.Context, conn *pgx.Conn, seq int64) error {
		return execExtended(ctx, conn, insertText(n, seq))
	}
}

// doBlocked sends a DELETE without WHERE. Through sqlfwd it must come back
// as SQLSTATE 42501 (insufficient_privilege), which is this workload's
// success; directly it deletes from an always-empty table.
func doBlocked(ctx context.Context, conn *pgx.Conn, seq int64) error {
	err := execExtended(ctx, conn, `DELETE FROM bench_victim`)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return nil
	}
	return err
}

// connectOp opens a new connection per request: TCP connect, startup,
// authentication, one statement, Terminate.
type connectOp struct {
	cfg  DBConfig
	addr string
}

func (o connectOp) Do(ctx context.Context, _ int64) error {
	conn, err := o.cfg.connect(ctx, o.addr, pgx.QueryExecModeExec)
	if err != nil {
		return err
	}
	var one int32
	err = conn.QueryRow(ctx, `SELECT 1`).Scan(&one)
	if cerr := conn.Close(ctx); err == nil {
		err = cerr
	}
	return err
}
func (connectOp) Close() error { return nil }

// doORM is an ORM-like mix by request number: 60% point selects, 15% IN
// lists of 10 keys, 10% updates by key, 10% single-row inserts and 5%
// transactions (BEGIN; SELECT ... FOR UPDATE; UPDATE; COMMIT), all
// prepared, as ORMs do.
func doORM(ctx context.Context, conn *pgx.Conn, seq int64) error {
	k := mix(uint64(seq)^0x5bd1e995) % 100
	aid := accountID(seq, 1)
	switch {
	case k < 60:
		return doSelectPK(ctx, conn, seq)
	case k < 75:
		args := make([]any, 10)
		ph := make([]string, 10)
		for i := range args {
			args[i] = accountID(seq*16+int64(i), 1)
			ph[i] = "$" + strconv.Itoa(i+1)
		}
		rows, err := conn.Query(ctx, `SELECT aid, abalance FROM pgbench_accounts WHERE aid IN (`+strings.Join(ph, ", ")+`)`, args...)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	case k < 85:
		_, err := conn.Exec(ctx, `UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2`, 1, aid)
		return err
	case k < 95:
		_, err := conn.Exec(ctx, `INSERT INTO bench_ins (a, b, c) VALUES ($1, $2, $3)`, seq, int32(k), "orm")
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var bal int32
	if err := tx.QueryRow(ctx, `SELECT abalance FROM pgbench_accounts WHERE aid = $1 FOR UPDATE`, aid).Scan(&bal); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE pgbench_accounts SET abalance = $1 WHERE aid = $2`, bal-1, aid); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// PGWorkloads lists the PostgreSQL workloads by name.
func PGWorkloads() []Workload {
	ws := []Workload{
		{Name: "select-pk-prepared", Statements: 1, Open: pgOpen(pgx.QueryExecModeCacheStatement, doSelectPK),
			Doc: "pgbench -S: SELECT abalance FROM pgbench_accounts WHERE aid = $1, named prepared statement (Bind/Execute only)"},
		{Name: "select-pk-unprepared", Statements: 1, Open: pgOpen(pgx.QueryExecModeExec, doSelectPK),
			Doc: "the same select, extended protocol with an unnamed statement: Parse every time"},
		{Name: "rows-100", Statements: 1, Open: pgOpen(pgx.QueryExecModeCacheStatement, doRows(100)),
			Doc: "100 rows of pgbench_accounts (about 10 KB), prepared"},
		{Name: "rows-1000", Statements: 1, Open: pgOpen(pgx.QueryExecModeCacheStatement, doRows(1000)),
			Doc: "1,000 rows (about 100 KB), prepared"},
		{Name: "blocked-delete", Statements: 1, Open: pgOpen(pgx.QueryExecModeExec, doBlocked),
			Doc: "DELETE without WHERE, extended protocol; SQLSTATE 42501 counts as success (sqlfwd blocks it, direct runs it on an empty table)"},
		{Name: "connect", Statements: 1,
			Open: func(cfg DBConfig, addr string) OpenFunc {
				return func(context.Context) (Op, error) { return connectOp{cfg: cfg, addr: addr}, nil }
			},
			Doc: "a new connection per request: connect, startup, auth, SELECT 1, Terminate"},
		{Name: "orm-mix", Statements: 1.15, Open: pgOpen(pgx.QueryExecModeCacheStatement, doORM), BeforeCell: onDirect(truncateInserts),
			Doc: "60% point select, 15% IN list of 10, 10% update by key, 10% insert, 5% transaction of 4 statements; prepared"},
	}
	for _, n := range []int{10, 100, 500, 1000} {
		ws = append(ws, Workload{Name: "insert-" + strconv.Itoa(n), Statements: 1, Open: pgOpen(pgx.QueryExecModeExec, doInsert(n)), BeforeCell: onDirect(truncateInserts),
			Doc: "INSERT of " + strconv.Itoa(n) + " rows with literal values new every time, extended protocol, unnamed statement"})
	}
	for i := range ws {
		ws[i].Setup = onDirect(setupSchema)
		ws[i].Protocol = Postgres
		ws[i].Schema = "pgbench"
	}
	return ws
}

// Workloads lists every workload, PostgreSQL first.
func Workloads() []Workload { return append(PGWorkloads(), MySQLWorkloads()...) }

// LookupWorkload finds a workload by name.
func LookupWorkload(name string) (Workload, bool) {
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// ServerVersion asks the database server for its version string.
func ServerVersion(ctx context.Context, protocol string, cfg DBConfig, addr string) (string, error) {
	if protocol == MySQL {
		return mysqlVersion(ctx, cfg, addr)
	}
	return pgVersion(ctx, cfg, addr)
}

func pgVersion(ctx context.Context, cfg DBConfig, addr string) (string, error) {
	conn, err := cfg.connect(ctx, addr, pgx.QueryExecModeExec)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var v string
	err = conn.QueryRow(ctx, `SHOW server_version`).Scan(&v)
	return v, err
}

// withDirect runs f on a fresh connection to addr.
func withDirect(ctx context.Context, cfg DBConfig, addr string, f func(context.Context, *pgx.Conn) error) error {
	conn, err := cfg.connect(ctx, addr, pgx.QueryExecModeExec)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return f(ctx, conn)
}
