// Package catalogread runs a dialect's catalog queries (engine.CatalogReader's,
// passed as their SQL) on a database/sql connection and returns their rows as text: what
// sqlfwd's catalog connection reads on each refresh (daemon/catalog.go) and
// what `fwctl catalog dump --dsn` reads once.
package catalogread

import (
	"context"
	"database/sql"
	"fmt"
)

// Read runs the queries in order on db and returns each one's rows. An
// error is a *QueryError naming the query that failed by names[i].
func Read(ctx context.Context, db *sql.DB, names, queries []string) ([][][]string, error) {
	rows := make([][][]string, len(queries))
	for i, q := range queries {
		rs, err := queryText(ctx, db, q)
		if err != nil {
			name := fmt.Sprint(i)
			if i < len(names) {
				name = names[i]
			}
			return nil, &QueryError{Query: name, Err: err}
		}
		rows[i] = rs
	}
	return rows, nil
}

// QueryError is a catalog query that failed.
type QueryError struct {
	Query string
	Err   error
}

func (e *QueryError) Error() string { return fmt.Sprintf("%s: %v", e.Query, e.Err) }
func (e *QueryError) Unwrap() error { return e.Err }

// queryText runs q and returns its rows with every column as text.
func queryText(ctx context.Context, db *sql.DB, q string) ([][]string, error) {
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	return out, rs.Err()
}
