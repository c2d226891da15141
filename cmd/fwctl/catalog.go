package main

// fwctl catalog dump: a snapshot of a database's catalog (engine
// snapshot.go) for `fwctl check --catalog FILE --explain`, from a running
// sqlfwd (its catalog in force, over the control socket) or read directly
// with a monitoring role's DSN (the queries sqlfwd's catalog connection
// runs, docs/operations.md "The catalog connection").

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/internal/catalogread"
	"github.com/sqlfw/sqlfw/protocol"
)

const catalogUsage = `usage: fwctl catalog dump [--database NAME] [--control-socket PATH] > snap.json
       fwctl catalog dump --protocol postgres|mysql --dsn DSN | --dsn-file FILE > snap.json

The first form asks a running sqlfwd for the catalog in force of a database
with a catalog connection; the second reads it directly as a monitoring role
(the DSN as catalog.dsn takes it). Either snapshot is read by
fwctl check --catalog snap.json [--explain].`

func catalogCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "dump" {
		fmt.Fprintln(stderr, catalogUsage)
		return 2
	}
	fs := flag.NewFlagSet("fwctl catalog dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, catalogUsage); fs.PrintDefaults() }
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	database := fs.String("database", "", "the configured database `name` (needed when sqlfwd has several)")
	protoName := fs.String("protocol", "", "with --dsn: the protocol whose catalog queries run ("+protocol.Names()+")")
	dsn := fs.String("dsn", "", "read directly with this monitoring role's `DSN`")
	dsnFile := fs.String("dsn-file", "", "read directly with the DSN in this `file`")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		return 2
	}
	var snap *engine.CatalogSnapshot
	if *dsn == "" && *dsnFile == "" {
		q := url.Values{}
		if *database != "" {
			q.Set("database", *database)
		}
		body, err := controlCall(*sock, http.MethodGet, "/v1/catalog", q)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: catalog dump: %v\n", err)
			return 2
		}
		snap = new(engine.CatalogSnapshot)
		if err := json.Unmarshal(body, snap); err != nil {
			fmt.Fprintf(stderr, "fwctl: catalog dump: %v\n", err)
			return 2
		}
	} else {
		var err error
		if snap, err = dumpDirect(*protoName, *dsn, *dsnFile); err != nil {
			fmt.Fprintf(stderr, "fwctl: catalog dump: %v\n", err)
			return 2
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(snap); err != nil {
		fmt.Fprintf(stderr, "fwctl: catalog dump: %v\n", err)
		return 2
	}
	return 0
}

// dumpDirect reads the catalog with the DSN (or the DSN in file).
func dumpDirect(protoName, dsn, file string) (*engine.CatalogSnapshot, error) {
	if protoName == "" {
		return nil, fmt.Errorf("--dsn needs --protocol (%s)", protocol.Names())
	}
	p, err := protocol.Named(protoName)
	if err != nil {
		return nil, err
	}
	r, ok := p.Dialect.(engine.CatalogReader)
	if !ok || p.CatalogDriver == "" {
		return nil, fmt.Errorf("%s has no catalog reader", p.Name)
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		dsn = strings.TrimSpace(string(b))
	}
	db, err := sql.Open(p.CatalogDriver, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var names, sqls []string
	for _, q := range r.CatalogQueries() {
		names, sqls = append(names, q.Name), append(sqls, q.SQL)
	}
	rows, err := catalogread.Read(ctx, db, names, sqls)
	if err != nil {
		return nil, err
	}
	return engine.NewSnapshot(r, p.Name, "", rows), nil
}

// loadSnapshot reads a snapshot file for the protocol's dialect and puts
// its catalog in force in eng.
func loadSnapshot(eng *engine.Engine, p *protocol.Protocol, path string, trust []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var snap engine.CatalogSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if snap.Protocol != "" && snap.Protocol != p.Name {
		return fmt.Errorf("%s is a %s catalog; the statements are judged as %s (--protocol)", path, snap.Protocol, p.Name)
	}
	r, ok := p.Dialect.(engine.CatalogReader)
	if !ok {
		return fmt.Errorf("%s has no catalog reader", p.Name)
	}
	c, err := snap.Catalog(r, engine.CatalogOptions{TrustSchemas: trust})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	eng.SetCatalog(c)
	return nil
}

// printChains prints, under a verdict, the objects the catalog followed for
// each statement (fwctl check --explain).
func printChains(w io.Writer, chains [][]string) {
	for i, ch := range chains {
		for _, step := range ch {
			fmt.Fprintf(w, "  chain: statement %d → %s\n", i+1, step)
		}
	}
}
