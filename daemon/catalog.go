package daemon

// The catalog connection (issue 24; engine/catalog.go): for a database with
// a catalog: key, sqlfwd connects as a least-privileged monitoring role
// (docs/operations.md, "The catalog connection"), runs its dialect's catalog
// queries, and puts the catalog they make in force in the database's
// engine. It reads again on an interval and soon after DDL the relay let
// through (twice: once the DDL has likely run, once after it may have
// committed). A failed read keeps the catalog in force and is logged and
// counted; until the first read succeeds statements are judged by their
// text alone.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/internal/catalogread"
)

// catalogTimeout bounds one read of the catalog.
const catalogTimeout = 30 * time.Second

// catalogState is one database's catalog connection.
type catalogState struct {
	reader engine.CatalogReader
	db     *sql.DB
	cfg    CatalogConfig
	cur    atomic.Pointer[engine.Catalog]
	kick   chan struct{}
	once   sync.Once
	stop   chan struct{}
	done   chan struct{}
	// what fwctl status and the metrics show
	refreshes, failures atomic.Uint64
	lastNanos           atomic.Int64 // how long the last successful read took
	lastErr             atomic.Pointer[string]
	// rows are the answers of the read in force, for fwctl catalog dump
	rows atomic.Pointer[[][][]string]
	// dbname is the database a per-database catalog reads (catalogdb.go),
	// "" for the configured one; ready is closed by its first good read.
	dbname    string
	ready     chan struct{}
	readyOnce sync.Once
	unsettles atomic.Uint64
	// others are the per-database catalogs of the configured one.
	others *otherCatalogs
	// sessions and used, under others.mu: the sessions in dbname and when
	// the last began (per-database catalogs only).
	sessions int
	used     time.Time
}

// startCatalog opens db's catalog connection when it has one.
func (d *Daemon) startCatalog(db *database) error {
	cc := db.cfg.Catalog
	if cc == nil {
		return nil
	}
	r, ok := db.protocol.Dialect.(engine.CatalogReader)
	if !ok || db.protocol.CatalogDriver == "" {
		return fmt.Errorf("database %s: catalog: %s has no catalog reader", db.cfg.Name, db.protocol.Name)
	}
	dsn := cc.DSN
	if cc.DSNFile != "" {
		b, err := os.ReadFile(cc.DSNFile)
		if err != nil {
			return fmt.Errorf("database %s: catalog: %w", db.cfg.Name, err)
		}
		dsn = strings.TrimSpace(string(b))
	}
	conn, err := sql.Open(db.protocol.CatalogDriver, dsn)
	if err != nil {
		return fmt.Errorf("database %s: catalog: %w", db.cfg.Name, err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxIdleTime(2 * cc.Refresh)
	cs := &catalogState{reader: r, db: conn, cfg: *cc, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), ready: make(chan struct{})}
	cs.others = &otherCatalogs{dsn: dsn, m: map[string]*catalogState{}}
	db.catalog = cs
	go d.catalogLoop(db, cs)
	return nil
}

// stopCatalog ends the loop and closes the connection.
func (cs *catalogState) close() {
	if cs == nil {
		return
	}
	cs.once.Do(func() {
		close(cs.stop)
		<-cs.done
		cs.db.Close()
	})
	if o := cs.others; o != nil {
		o.closeAll()
	}
}

// schemaChanged asks for a read soon; it never blocks or allocates.
func (cs *catalogState) schemaChanged() {
	if cs == nil {
		return
	}
	select {
	case cs.kick <- struct{}{}:
	default:
	}
}

// unsettle puts the catalog in force as it is judged while DDL just judged
// may have changed a routine's own search_path (engine.Catalog.Unsettled),
// until the read that DDL asks for (schemaChanged) puts a new one in force.
func (db *database) unsettle() {
	if db.catalog != nil {
		db.engine.Load().Unsettle()
	}
}

func (d *Daemon) catalogLoop(db *database, cs *catalogState) {
	defer close(cs.done)
	t := time.NewTicker(cs.cfg.Refresh)
	defer t.Stop()
	d.refreshCatalog(db, cs)
	for {
		select {
		case <-cs.stop:
			return
		case <-t.C:
			d.refreshCatalog(db, cs)
		case <-cs.kick:
			// The DDL was judged, not yet run: read once it has, and
			// again once a transaction around it may have committed.
			for _, wait := range []time.Duration{250 * time.Millisecond, 2 * time.Second} {
				select {
				case <-cs.stop:
					return
				case <-time.After(wait):
				}
				d.refreshCatalog(db, cs)
			}
		}
	}
}

// refreshCatalog reads the catalog once and puts it in force.
func (d *Daemon) refreshCatalog(db *database, cs *catalogState) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	eng := db.engine.Load()
	unsettles := eng.Unsettles()
	if cs.dbname != "" {
		unsettles = cs.unsettles.Load()
	} // a transaction with DDL that ends during the read may not be in it
	names, sqls := queryLists(cs.reader)
	rows, err := catalogread.Read(ctx, cs.db, names, sqls)
	if err != nil {
		cs.failures.Add(1)
		msg := err.Error()
		cs.lastErr.Store(&msg)
		query := ""
		var qe *catalogread.QueryError
		if errors.As(err, &qe) {
			query, err = qe.Query, qe.Err
		}
		d.log.Warn("catalog read failed, keeping the catalog in force", "database", db.cfg.Name, "dbname", cs.dbname, "query", query, "err", err)
		return
	}
	c := cs.reader.BuildCatalog(rows, engine.CatalogOptions{TrustSchemas: cs.cfg.TrustSchemas, Previous: cs.cur.Load()})
	cs.rows.Store(&rows)
	if cs.dbname != "" {
		if !c.Covers(cs.dbname) {
			// the connection did not land in the database it was asked for
			cs.failures.Add(1)
			msg := "the catalog read is not of database " + cs.dbname
			cs.lastErr.Store(&msg)
			d.log.Warn("catalog read failed, keeping the catalog in force", "database", db.cfg.Name, "dbname", cs.dbname, "err", msg)
			return
		}
		if cs.unsettles.Load() != unsettles {
			c = c.Unsettled()
			cs.schemaChanged()
		}
		cs.cur.Store(c)
		db.catalog.others.publish(db)
	} else {
		cs.cur.Store(c)
	}
	if cs.dbname == "" && (db.engine.Load() != eng || eng.Unsettles() != unsettles) {
		db.engine.Load().SetCatalog(c.Unsettled())
		cs.schemaChanged() // read again, after it
	} else if cs.dbname == "" {
		eng.SetCatalog(c)
	}
	cs.refreshes.Add(1)
	cs.readyOnce.Do(func() { close(cs.ready) })
	cs.lastNanos.Store(int64(time.Since(start)))
	empty := ""
	cs.lastErr.Store(&empty)
	level := slog.LevelDebug
	if cs.refreshes.Load() == 1 {
		level = slog.LevelInfo
	}
	d.log.Log(ctx, level, "catalog read", "database", db.cfg.Name, "dbname", cs.dbname, "reads", cs.refreshes.Load(), "objects", c.Objects(), "bytes", c.Bytes(), "took", time.Since(start))
}

// setEngine puts e in force for db with the catalog in force.
func (db *database) setEngine(e *engine.Engine) {
	if cs := db.catalog; cs != nil {
		e.SetCatalog(cs.cur.Load())
		e.SetDatabaseCatalogs(cs.others.inForce())
	}
	db.engine.Store(e)
	if cs := db.catalog; cs != nil {
		// a read that finished between the two set the old engine's
		e.SetCatalog(cs.cur.Load())
		e.SetDatabaseCatalogs(cs.others.inForce())
	}
}

// CatalogSnapshot is the catalog in force for database name as the rows
// of its last successful read (GET /v1/catalog; fwctl catalog dump).
func (d *Daemon) CatalogSnapshot(name string) (*engine.CatalogSnapshot, error) {
	db, err := d.database(name)
	if err != nil {
		return nil, err
	}
	cs := db.catalog
	if cs == nil {
		return nil, fmt.Errorf("database %s has no catalog connection (catalog: in its configuration)", db.cfg.Name)
	}
	rows := cs.rows.Load()
	if rows == nil {
		return nil, fmt.Errorf("database %s: the catalog has not been read yet", db.cfg.Name)
	}
	return engine.NewSnapshot(cs.reader, db.protocol.Name, db.cfg.Name, *rows), nil
}

// queryLists is r's catalog queries' names and SQL.
func queryLists(r engine.CatalogReader) (names, sqls []string) {
	for _, q := range r.CatalogQueries() {
		names, sqls = append(names, q.Name), append(sqls, q.SQL)
	}
	return names, sqls
}
