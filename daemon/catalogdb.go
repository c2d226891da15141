package daemon

// Per-database catalogs (issue 24): a PostgreSQL catalog connection sees
// only the database it is connected to (engine.Catalog.OneDatabase), so a
// session that starts in another database of the same server is judged,
// without more, with every routine, view and CALL unknown_object, which
// the default policy only logs. Instead, when such a session starts,
// sqlfwd opens a catalog connection of its own to that database (the
// configured DSN with its dbname replaced, the same monitoring role),
// waits for its first read (at most firstReadWait) and judges the
// session's statements with it. At most catalog.max_databases such
// catalogs are kept; beyond it the least recently used one without
// sessions is closed, and when every one has sessions the new session is
// refused, saying so. A session whose database's catalog cannot be read
// in time is refused too: judging it by its text alone would let a
// routine there do what its body does.
//
// MySQL and MariaDB need none of this: information_schema shows one
// connection the objects of every schema the account may see, and the
// catalog resolves a session's names in its current database (OneDatabase
// is false).

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
)

// firstReadWait bounds how long a session in a database without a catalog
// waits for the first read of its catalog.
const firstReadWait = 10 * time.Second

// otherCatalogs are a catalog connection's per-database catalogs.
type otherCatalogs struct {
	dsn string
	mu  sync.Mutex
	m   map[string]*catalogState
}

// inForce is the per-database catalogs read so far, by database.
func (o *otherCatalogs) inForce() map[string]*engine.Catalog {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m map[string]*engine.Catalog
	for name, cs := range o.m {
		if c := cs.cur.Load(); c != nil {
			if m == nil {
				m = map[string]*engine.Catalog{}
			}
			m[name] = c
		}
	}
	return m
}

// publish puts the per-database catalogs read so far in force in db's
// engine.
func (o *otherCatalogs) publish(db *database) {
	db.engine.Load().SetDatabaseCatalogs(o.inForce())
}

// has reports whether database dbname has a per-database catalog.
func (o *otherCatalogs) has(dbname string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[dbname] != nil
}

func (o *otherCatalogs) closeAll() {
	o.mu.Lock()
	all := make([]*catalogState, 0, len(o.m))
	for _, cs := range o.m {
		all = append(all, cs)
	}
	o.m = map[string]*catalogState{}
	o.mu.Unlock()
	for _, cs := range all {
		cs.close()
	}
}

// errCatalogsFull is catalogSession's error when every per-database
// catalog the bound allows is in use.
var errCatalogsFull = errors.New("sqlfw has as many database catalogs open as it may")

// catalogSession is called when a session in database dbname (the client's
// startup dbname) begins: it returns what to call when it ends, or an error
// saying why the session cannot be judged with its database's catalog.
func (d *Daemon) catalogSession(db *database, dbname string) (func(), error) {
	main := db.catalog
	if main == nil || dbname == "" || main.others == nil {
		return func() {}, nil
	}
	c := main.cur.Load()
	if c == nil || !c.OneDatabase() || c.Covers(dbname) {
		// before the first read statements are judged by their text
		// alone (catalog.go); MySQL's catalog covers every schema
		return func() {}, nil
	}
	o := main.others
	o.mu.Lock()
	cs := o.m[dbname]
	evicted := false
	if cs == nil {
		if len(o.m) >= main.cfg.MaxDatabases {
			evicted = o.evictLocked()
		}
		if len(o.m) >= main.cfg.MaxDatabases {
			o.mu.Unlock()
			return nil, fmt.Errorf("%w: catalog.max_databases (%d) per-database catalogs are open, each with sessions", errCatalogsFull, main.cfg.MaxDatabases)
		}
		var err error
		if cs, err = d.openOther(db, main, dbname); err != nil {
			o.mu.Unlock()
			return nil, err
		}
		o.m[dbname] = cs
	}
	cs.sessions++
	cs.used = time.Now()
	o.mu.Unlock()
	if evicted {
		o.publish(db)
	}
	end := func() {
		o.mu.Lock()
		cs.sessions--
		o.mu.Unlock()
	}
	t := time.NewTimer(firstReadWait)
	defer t.Stop()
	select {
	case <-cs.ready:
		return end, nil
	case <-t.C:
	case <-cs.stop:
	}
	end()
	msg := "no read yet"
	if p := cs.lastErr.Load(); p != nil && *p != "" {
		msg = *p
	}
	return nil, fmt.Errorf("the catalog of database %s was not read in %s: %s", dbname, firstReadWait, msg)
}

// evictLocked closes the least recently used per-database catalog that has
// no sessions; false when every one has some.
func (o *otherCatalogs) evictLocked() bool {
	var old *catalogState
	for _, cs := range o.m {
		if cs.sessions == 0 && (old == nil || cs.used.Before(old.used)) {
			old = cs
		}
	}
	if old == nil {
		return false
	}
	delete(o.m, old.dbname)
	go old.close() // waits for its loop, which may be reading
	return true
}

// openOther starts the catalog connection of main's for database dbname.
func (d *Daemon) openOther(db *database, main *catalogState, dbname string) (*catalogState, error) {
	dsn, err := withDBName(main.others.dsn, dbname)
	if err != nil {
		return nil, fmt.Errorf("database %s: catalog of %s: %w", db.cfg.Name, dbname, err)
	}
	conn, err := sql.Open(db.protocol.CatalogDriver, dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: catalog of %s: %w", db.cfg.Name, dbname, err)
	}
	conn.SetMaxOpenConns(1)
	// No idle connection is kept: one would make DROP DATABASE of dbname
	// fail while sqlfwd holds it.
	conn.SetMaxIdleConns(0)
	cs := &catalogState{reader: main.reader, db: conn, cfg: main.cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), ready: make(chan struct{}), dbname: dbname}
	d.log.Info("catalog connection opened for another database", "database", db.cfg.Name, "dbname", dbname)
	go d.catalogLoop(db, cs)
	return cs, nil
}

// schemaChangedIn asks for a read of the catalog of database dbname after
// DDL a session there let through, and judges by it as Unsettled until.
func (db *database) schemaChangedIn(dbname string) {
	main := db.catalog
	if main == nil {
		return
	}
	o := main.others
	o.mu.Lock()
	cs := o.m[dbname]
	o.mu.Unlock()
	if cs == nil {
		main.schemaChanged()
		return
	}
	cs.unsettles.Add(1)
	if c := cs.cur.Load(); c != nil {
		cs.cur.Store(c.Unsettled())
		o.publish(db)
	}
	cs.schemaChanged()
}

// withDBName is the PostgreSQL DSN dsn (a URL or a keyword/value string)
// connecting to database name instead.
func withDBName(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("dsn is not a URL") // the error would show the password
		}
		u.Path, u.RawPath = "/"+name, ""
		q := u.Query()
		if q.Has("dbname") {
			q.Del("dbname")
			u.RawQuery = q.Encode()
		}
		return u.String(), nil
	}
	// In a keyword/value string the last of a keyword wins.
	v := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name)
	return strings.TrimSpace(dsn) + " dbname='" + v + "'", nil
}

// CatalogDatabases describes database name's per-database catalogs for
// fwctl status and the metrics, by database, sorted.
func (d *Daemon) CatalogDatabases(name string) ([]CatalogInfo, error) {
	db, err := d.database(name)
	if err != nil {
		return nil, err
	}
	return db.catalogInfos(), nil
}

// CatalogInfo is one catalog connection as fwctl status shows it.
type CatalogInfo = control.CatalogStatus

func (cs *catalogState) info() CatalogInfo {
	i := CatalogInfo{DBName: cs.dbname, Reads: cs.refreshes.Load(), Failures: cs.failures.Load(), LastMicros: cs.lastNanos.Load() / 1000, Sessions: cs.sessions, PerDatabase: cs.dbname != ""}
	if c := cs.cur.Load(); c != nil {
		i.Objects, i.Bytes = c.Objects(), c.Bytes()
	}
	if p := cs.lastErr.Load(); p != nil {
		i.LastError = *p
	}
	return i
}

// catalogInfos is db's catalog connections: the configured one first, then
// the per-database ones by database.
func (db *database) catalogInfos() []CatalogInfo {
	main := db.catalog
	if main == nil {
		return nil
	}
	out := []CatalogInfo{main.info()}
	o := main.others
	o.mu.Lock()
	for _, cs := range o.m {
		out = append(out, cs.info())
	}
	o.mu.Unlock()
	slices.SortFunc(out[1:], func(a, b CatalogInfo) int { return strings.Compare(a.DBName, b.DBName) })
	return out
}
