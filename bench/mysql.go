package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The MySQL workload is sysbench oltp_read_only: one transaction of 16
// statements (BEGIN, 10 point selects, a simple range, a SUM range, an
// ordered range, a DISTINCT range of 100 rows each, COMMIT) on sbtest1,
// with server-side prepared statements as sysbench uses by default.

// SBTableSize is the number of rows in sbtest1.
const SBTableSize = 10_000

// sbRange is sysbench's range_size.
const sbRange = 100

// mysqlTLS is the client TLS of a target's sslmode, read as libpq reads
// it: disable (or none) plaintext; allow and prefer TLS when the server
// offers it; require TLS, the certificate unchecked; verify-ca the chain
// against sslrootcert; verify-full the chain and the address's name.
func (c DBConfig) mysqlTLS() (conf *tls.Config, fallback bool, err error) {
	var roots *x509.CertPool
	if c.SSLMode == "verify-ca" || c.SSLMode == "verify-full" {
		if c.SSLRootCert == "" {
			return nil, false, fmt.Errorf("sslmode %s needs sslrootcert", c.SSLMode)
		}
		pem, err := os.ReadFile(c.SSLRootCert)
		if err != nil {
			return nil, false, err
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("%s: no PEM certificate", c.SSLRootCert)
		}
	}
	switch c.SSLMode {
	case "", "disable":
		return nil, false, nil
	case "allow", "prefer":
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, true, nil
	case "require":
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, false, nil
	case "verify-ca":
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("server sent no certificate")
				}
				inter := x509.NewCertPool()
				for _, ic := range cs.PeerCertificates[1:] {
					inter.AddCert(ic)
				}
				_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
				return err
			}}, false, nil
	case "verify-full":
		// the driver sets ServerName from the address
		return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, false, nil
	}
	return nil, false, fmt.Errorf("sslmode %q", c.SSLMode)
}

func (c DBConfig) mysqlConnector(addr string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = c.User, c.Password, "tcp", addr, c.Database
	cfg.Timeout = 10 * time.Second
	var err error
	if cfg.TLS, cfg.AllowFallbackToPlaintext, err = c.mysqlTLS(); err != nil {
		return nil, fmt.Errorf("mysql TLS: %w", err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql config: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

func mysqlVersion(ctx context.Context, cfg DBConfig, addr string) (string, error) {
	db, err := cfg.mysqlConnector(addr)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&v); err != nil {
		return "", fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return v, nil
}

// setupSysbench creates and fills sbtest1 like sysbench's prepare.
func setupSysbench(ctx context.Context, cfg DBConfig, addr string) error {
	db, err := cfg.mysqlConnector(addr)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sbtest1 (
		id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,
		c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB`); err != nil {
		return fmt.Errorf("creating sbtest1: %w", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sbtest1`).Scan(&n); err != nil {
		return fmt.Errorf("counting sbtest1: %w", err)
	}
	for start := n + 1; start <= SBTableSize; start += 1000 {
		var b strings.Builder
		b.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
		for i := start; i < start+1000 && i <= SBTableSize; i++ {
			if i > start {
				b.WriteString(", ")
			}
			v := mix(uint64(i))
			fmt.Fprintf(&b, "(%d, %d, '%0120d', '%060d')", i, v%SBTableSize+1, v%1_000_000_007, v%999_983)
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("filling sbtest1: %w", err)
		}
	}
	return nil
}

type sbOp struct {
	db    *sql.DB
	conn  *sql.Conn
	point *sql.Stmt
	rng   [4]*sql.Stmt
}

var sbRangeQueries = [4]string{
	`SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?`,
	`SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?`,
	`SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c`,
	`SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c`,
}

func openSysbench(cfg DBConfig, addr string) OpenFunc {
	return func(ctx context.Context) (Op, error) {
		db, err := cfg.mysqlConnector(addr)
		if err != nil {
			return nil, err
		}
		o := &sbOp{db: db}
		if o.conn, err = db.Conn(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		if o.point, err = o.conn.PrepareContext(ctx, `SELECT c FROM sbtest1 WHERE id = ?`); err != nil {
			o.Close()
			return nil, fmt.Errorf("preparing: %w", err)
		}
		for i, q := range sbRangeQueries {
			if o.rng[i], err = o.conn.PrepareContext(ctx, q); err != nil {
				o.Close()
				return nil, fmt.Errorf("preparing: %w", err)
			}
		}
		return o, nil
	}
}

func drain(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	var v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
	}
	return rows.Err()
}

// Do runs one oltp_read_only transaction.
func (o *sbOp) Do(ctx context.Context, seq int64) error {
	tx, err := o.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i := range 10 {
		id := int64(mix(uint64(seq)*16+uint64(i))%SBTableSize) + 1
		if err := drain(tx.StmtContext(ctx, o.point).QueryContext(ctx, id)); err != nil {
			return err
		}
	}
	for i, st := range o.rng {
		lo := int64(mix(uint64(seq)*16+uint64(10+i))%(SBTableSize-sbRange+1)) + 1
		if err := drain(tx.StmtContext(ctx, st).QueryContext(ctx, lo, lo+sbRange-1)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (o *sbOp) Close() error {
	if o.conn != nil {
		o.conn.Close()
	}
	return o.db.Close()
}

// myConnectOp opens a new connection per request, as connectOp does for
// PostgreSQL: TCP connect, greeting, TLS if the target's sslmode asks,
// authentication, SELECT 1, COM_QUIT. Its pool keeps no idle connection,
// so each request's connection is closed when the request ends.
type myConnectOp struct{ db *sql.DB }

func openMyConnect(cfg DBConfig, addr string) OpenFunc {
	return func(context.Context) (Op, error) {
		db, err := cfg.mysqlConnector(addr)
		if err != nil {
			return nil, err
		}
		db.SetMaxIdleConns(0)
		return myConnectOp{db: db}, nil
	}
}

func (o myConnectOp) Do(ctx context.Context, _ int64) error {
	var one int
	return o.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
}

func (o myConnectOp) Close() error { return o.db.Close() }

// MySQLWorkloads lists the MySQL workloads.
func MySQLWorkloads() []Workload {
	return []Workload{{
		Name: "oltp-read-only", Protocol: MySQL, Schema: "sysbench", Statements: 16,
		Setup: setupSysbench, Open: openSysbench,
		Doc: "sysbench oltp_read_only: BEGIN, 10 point selects, 4 range selects of " + strconv.Itoa(sbRange) + " rows (plain, SUM, ORDER BY, DISTINCT), COMMIT; prepared, " + strconv.Itoa(SBTableSize) + " rows",
	}, {
		Name: "mysql-connect", Protocol: MySQL, Statements: 1, Open: openMyConnect,
		Doc: "a new connection per request: connect, greeting, TLS if the target's sslmode asks, auth, SELECT 1, COM_QUIT",
	}}
}
