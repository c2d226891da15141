package daemon

import (
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// namedSession is the fake server's model of PostgreSQL's named objects,
// enough to test the verdict memory's bookkeeping (prepared.go): the
// extended protocol (Parse, Bind, Execute, Close, Describe, Sync) with
// one namespace of statements and one of portals, "already exists" and
// "does not exist" errors, skipping to Sync after an error; and, in simple
// Queries of one statement each, PREPARE n AS ..., EXECUTE n,
// DEALLOCATE n, BEGIN, COMMIT, ROLLBACK, DECLARE c [WITH HOLD] CURSOR FOR
// ..., FETCH ... c, CLOSE c, and "fail" (an error). Anything else in a
// Query runs as itself. Every statement that runs is recorded in ran, as
// the text the server holds for it. Portals and cursors without HOLD die
// at the end of their transaction; the status byte follows BEGIN/COMMIT.
func (fs *fakeServer) namedSession(c net.Conn, fr *pg.Framer) {
	stmts := map[string]string{}
	type portal struct {
		sql  string
		hold bool
	}
	portals := map[string]portal{}
	inTx, failed, skipping, copyIn := false, false, false, false
	var out []byte
	ran := func(sql string) {
		fs.mu.Lock()
		fs.ran = append(fs.ran, sql)
		fs.mu.Unlock()
	}
	fail := func(code, msg string) {
		out, _ = (&pgproto3.ErrorResponse{Severity: "ERROR", Code: code, Message: msg}).Encode(out)
		if inTx {
			failed = true
		}
	}
	status := func() byte {
		switch {
		case failed:
			return 'E'
		case inTx:
			return 'T'
		}
		return 'I'
	}
	endTx := func() {
		inTx, failed = false, false
		for n, p := range portals {
			if !p.hold {
				delete(portals, n)
			}
		}
	}
	complete := func(tag string) {
		out, _ = (&pgproto3.CommandComplete{CommandTag: []byte(tag)}).Encode(out)
	}
	// run executes one SQL statement the fake understands.
	run := func(sql string) {
		f := strings.Fields(strings.ToLower(strings.TrimSuffix(sql, ";")))
		if len(f) == 0 {
			complete("EMPTY")
			return
		}
		if f[0] == "sentinel" {
			complete(sql) // the tag tells the client this answer apart, in any state
			return
		}
		if failed && f[0] != "rollback" && f[0] != "commit" {
			fail("25P02", "current transaction is aborted")
			return
		}
		switch {
		case f[0] == "copy" && f[len(f)-1] == "stdin":
			// CopyInResponse: text, no columns
			out = append(out, 'G', 0, 0, 0, 7, 0, 0, 0)
			copyIn = true
		case strings.HasPrefix(f[0], "sqlfw_blocked_"):
			fail(sqlstateSyntaxError, `syntax error at or near "`+strings.Fields(sql)[0]+`"`)
		case f[0] == "fail":
			fail("22012", "division by zero")
		case f[0] == "begin":
			inTx = true
			complete("BEGIN")
		case f[0] == "commit" || f[0] == "rollback":
			endTx()
			complete(strings.ToUpper(f[0]))
		case f[0] == "prepare" && len(f) > 3:
			if _, ok := stmts[f[1]]; ok {
				fail("42P05", `prepared statement "`+f[1]+`" already exists`)
				return
			}
			i := strings.Index(strings.ToLower(sql), " as ")
			stmts[f[1]] = strings.TrimSpace(sql[i+4:])
			complete("PREPARE")
		case f[0] == "execute":
			q, ok := stmts[f[1]]
			if !ok {
				fail("26000", `prepared statement "`+f[1]+`" does not exist`)
				return
			}
			ran(q)
			complete("SELECT 1")
		case f[0] == "deallocate":
			delete(stmts, f[len(f)-1])
			complete("DEALLOCATE")
		case f[0] == "declare":
			if _, ok := portals[f[1]]; ok {
				fail("42P03", `cursor "`+f[1]+`" already exists`)
				return
			}
			hold := strings.Contains(strings.Join(f, " "), "with hold")
			if !inTx && !hold {
				fail("25P01", "DECLARE CURSOR can only be used in transaction blocks")
				return
			}
			i := strings.Index(strings.ToLower(sql), " for ")
			portals[f[1]] = portal{sql: strings.TrimSpace(sql[i+5:]), hold: hold}
			complete("DECLARE CURSOR")
		case f[0] == "fetch" || f[0] == "move":
			p, ok := portals[f[len(f)-1]]
			if !ok {
				fail("34000", `cursor "`+f[len(f)-1]+`" does not exist`)
				return
			}
			ran(p.sql)
			complete("FETCH 1")
		case f[0] == "close":
			delete(portals, f[1])
			complete("CLOSE CURSOR")
		default:
			ran(sql)
			complete("SELECT 1")
		}
	}
	for {
		if err := fr.Fill(); err != nil {
			return
		}
		for {
			m, err := fr.Next(wantAll())
			if err != nil || m == nil {
				break
			}
			if copyIn {
				// PostgreSQL ignores Sync and Flush during COPY FROM
				// STDIN (CopyGetData); a simple Query's COPY ends with
				// CopyDone.
				if m[0] == pg.MsgCopyDone {
					copyIn = false
					complete("COPY 0")
					out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
				}
				continue
			}
			if skipping && m[0] != pg.MsgSync {
				continue
			}
			switch m[0] {
			case pg.MsgQuery:
				q, _ := pg.QueryText(m)
				fs.mu.Lock()
				fs.got = append(fs.got, string(q))
				fs.mu.Unlock()
				run(string(q))
				if copyIn {
					continue // ReadyForQuery after CopyDone
				}
				if !inTx {
					// an implicit transaction
					endTx()
				}
				out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
			case pg.MsgParse:
				name, sql, _ := pg.ParseFields(m)
				switch {
				case strings.HasPrefix(string(sql), "sqlfw_blocked_"):
					fail(sqlstateSyntaxError, `syntax error at or near "`+string(sql)+`"`)
					skipping = true
				case len(name) > 0 && stmts[string(name)] != "":
					fail("42P05", `prepared statement "`+string(name)+`" already exists`)
					skipping = true
				default:
					stmts[string(name)] = string(sql)
					out = append(out, pg.MsgParseComplete, 0, 0, 0, 4)
				}
			case pg.MsgBind:
				portalName, stmt, _ := pg.BindNames(m)
				sql, ok := stmts[string(stmt)]
				_, busy := portals[string(portalName)]
				switch {
				case !ok:
					fail("26000", `prepared statement "`+string(stmt)+`" does not exist`)
					skipping = true
				case busy && len(portalName) > 0:
					fail("42P03", `cursor "`+string(portalName)+`" already exists`)
					skipping = true
				default:
					portals[string(portalName)] = portal{sql: sql}
					out = append(out, '2', 0, 0, 0, 4)
				}
			case pg.MsgExecute:
				name, _ := pg.ExecutePortal(m)
				p, ok := portals[string(name)]
				if !ok {
					fail("34000", `portal "`+string(name)+`" does not exist`)
					skipping = true
					break
				}
				before := len(out)
				run(p.sql)
				if len(out) > before && out[before] == 'E' {
					skipping = true
				}
			case pg.MsgClose:
				kind, name, _ := pg.CloseTarget(m)
				if kind == 'S' {
					delete(stmts, string(name))
				} else {
					delete(portals, string(name))
				}
				out = append(out, pg.MsgCloseComplete, 0, 0, 0, 4)
			case 'D':
				out = append(out, 'n', 0, 0, 0, 4)
			case pg.MsgSync:
				skipping = false
				if !inTx {
					endTx()
				}
				out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
			case pg.MsgTerminate:
				return
			}
		}
		fr.Take()
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
	}
}

// ranText reports whether the server ran sql.
func (fs *fakeServer) ranText(sql string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, r := range fs.ran {
		if r == sql {
			return true
		}
	}
	return false
}

func (fs *fakeServer) resetRan() {
	fs.mu.Lock()
	fs.ran = nil
	fs.mu.Unlock()
}
