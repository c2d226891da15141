package engine

// A catalog snapshot: the rows a dialect's catalog queries returned, as
// `fwctl catalog dump` writes them (JSON) and `fwctl check --catalog`
// reads them, so that a statement can be judged, and its chain through
// the database's objects shown (Engine.Chains), offline with the catalog a
// running sqlfwd had or a monitoring role reads. The format is the
// queries' names and rows, not the objects: a snapshot is read again by
// the dialect that wrote it, as a refresh's answers are.
//
//	{"protocol": "postgres", "database": "shop",
//	 "queries": [{"name": "relations", "rows": [["public", "orders"], ...]}, ...]}

import (
	"errors"
	"strings"
)

// CatalogSnapshot is the answers to a CatalogReader's queries.
type CatalogSnapshot struct {
	Protocol string          `json:"protocol"`
	Database string          `json:"database,omitempty"`
	Queries  []SnapshotQuery `json:"queries"`
}

// SnapshotQuery is one catalog query's rows, every column as text.
type SnapshotQuery struct {
	Name string     `json:"name"`
	Rows [][]string `json:"rows"`
}

// NewSnapshot is the snapshot of rows, the answers to r's queries in order.
func NewSnapshot(r CatalogReader, protocol, database string, rows [][][]string) *CatalogSnapshot {
	s := &CatalogSnapshot{Protocol: protocol, Database: database}
	for i, q := range r.CatalogQueries() {
		var rs [][]string
		if i < len(rows) {
			rs = rows[i]
		}
		if rs == nil {
			rs = [][]string{}
		}
		s.Queries = append(s.Queries, SnapshotQuery{Name: q.Name, Rows: rs})
	}
	return s
}

// Catalog builds the catalog of the snapshot with r, which must be the
// dialect of the protocol that wrote it. A query the snapshot lacks (one
// an older sqlfw did not run) has no rows; the snapshot must hold at least
// one of r's queries.
func (s *CatalogSnapshot) Catalog(r CatalogReader, o CatalogOptions) (*Catalog, error) {
	byName := map[string][][]string{}
	for _, q := range s.Queries {
		byName[q.Name] = q.Rows
	}
	qs := r.CatalogQueries()
	rows := make([][][]string, len(qs))
	found := 0
	for i, q := range qs {
		if rs, ok := byName[q.Name]; ok {
			rows[i] = rs
			found++
		}
	}
	if found == 0 {
		return nil, errors.New("catalog snapshot: none of the dialect's catalog queries is in it (another protocol's snapshot?)")
	}
	return r.BuildCatalog(rows, o), nil
}

// Chains returns, for each statement of sql judged in session s, the
// objects the catalog in force followed for it, in the order followed
// ("view public.v → secrets", "call public.wipe → DELETE without WHERE"),
// or nil without a catalog. It is for diagnostics (fwctl check --explain):
// it reads the text as Judge does and remembers what Judge would.
func (e *Engine) Chains(sql []byte, s *Session) [][]string {
	cat := e.catalog.Load()
	if cat == nil {
		return nil
	}
	if s == nil {
		s = &noSession
	}
	sql, _, _, ok := e.dialect.Read(sql, &s.Lex)
	if !ok {
		return nil
	}
	tf := e.facts(sql)
	if tf.Unparsed {
		return nil
	}
	out := make([][]string, len(tf.Stmts))
	for i := range tf.Stmts {
		st := tf.Stmts[i].asUser(s.User).inDatabase(s.Database)
		if x := e.throughCatalog(tf, i, st, e.catalogFor(cat, s), s); x.via != "" {
			out[i] = strings.Split(x.via, "; ")
		}
	}
	return out
}
