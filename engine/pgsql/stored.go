package pgsql

// Stored code read on its own (engine.BodyReader), for code the engine
// learns from the server's catalog rather than from a CREATE it judged:
//
//	lang       text                                        what it is
//	"sql"      pg_proc.prosrc of a LANGUAGE sql function    its statements
//	"plpgsql"  pg_proc.prosrc of a LANGUAGE plpgsql one     its statements and expressions
//	"view"     pg_views.definition (a SELECT)               the view's query
//	"create"   pg_get_functiondef, pg_get_ruledef, a        the code each statement stores
//	           CREATE VIEW ...: whole statements            (the Bodies a CREATE gets)
//
// Any other language (plperl, plv8, C) cannot be read: the Body is unparsed
// (unparsedLanguage), as such a body is at CREATE. A "plpgsql" body is read
// as the body of a function returning void, then of a trigger function,
// then of one returning a set of records, whichever the PL/pgSQL parser
// accepts first (RETURN with a value, NEW and RETURN QUERY depend on it):
// "create" with pg_get_functiondef's text reads it with its real header.

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// ReadBody is engine.BodyReader's: what stored code does when it runs.
func (pgDialect) ReadBody(lang, text string) (engine.Body, bool) {
	var bf engine.StmtFacts
	w := &walker{msg: &msgState{}}
	acc := w.accumulator(&bf)
	acc.inBody = true
	of := ofFunction
	switch strings.ToLower(lang) {
	case "sql":
		acc.nestedSQL(text)
	case "plpgsql":
		tag := "$sqlfw$"
		for i := 0; strings.Contains(text, tag); i++ {
			tag = "$sqlfw" + strconv.Itoa(i) + "$"
		}
		for _, ret := range []string{"void", "trigger", "SETOF record"} {
			bf = engine.StmtFacts{}
			acc = w.accumulator(&bf)
			acc.inBody = true
			acc.plpgsqlBody(text, func(body string) (string, bool) {
				return "CREATE FUNCTION sqlfw_body() RETURNS " + ret + " LANGUAGE plpgsql AS " + tag + body + tag, true
			})
			if bf.Unparsed != unparsedPLpgSQL {
				break
			}
		}
	case "view":
		of = ofView
		tree, err := pg_query.Parse(text)
		if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].GetStmt().GetSelectStmt() == nil {
			bf.Unparsed = unparsedSQL
			break
		}
		acc.mergeTree(tree, false)
	case "create":
		tree, err := pg_query.Parse(text)
		if err != nil {
			bf.Unparsed = unparsedSQL
			break
		}
		// The code each statement stores, merged: a rule's actions, a
		// function's body, a view's query.
		of = ""
		sw := w.subWalker()
		for _, raw := range tree.Stmts {
			sf := sw.statement(raw.GetStmt())
			for _, b := range sf.Bodies {
				if of == "" {
					of = b.Of
				}
				acc.merge(&b.Facts, false)
			}
		}
		if of == "" {
			bf.Unparsed = unparsedSQL // nothing stored: not a CREATE of code
		}
	default:
		acc.unreadableBody(text)
	}
	bf.Kind = engine.BodyKind(bf.Kinds)
	return engine.Body{Of: of, Facts: bf}, bf.Unparsed == ""
}
