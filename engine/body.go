package engine

// Code inside statements: DO blocks and function bodies, which the parser
// keeps as opaque strings. What such code does when it runs is judged with
// the statement that carries it.

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// doBody analyses the statements of a PL/pgSQL DO block with PostgreSQL's
// PL/pgSQL parser: a DO block runs at once, so what it does is judged like
// the statements themselves (an UPDATE without WHERE inside is one). Dynamic
// SQL (EXECUTE of a string) is covered only by the lexical scan.
func (w *walker) doBody(body string) {
	if w.depth >= 3 {
		return
	}
	tag := "$sqlfw$"
	for i := 0; strings.Contains(body, tag); i++ {
		tag = "$sqlfw" + strconv.Itoa(i) + "$"
	}
	js, err := pg_query.ParsePlPgSqlToJSON("CREATE FUNCTION sqlfw_do() RETURNS void LANGUAGE plpgsql AS " + tag + body + tag)
	if err != nil {
		return
	}
	for _, q := range plpgsqlQueries(js) {
		tree, err := pg_query.Parse(q)
		if err != nil {
			if tree, err = pg_query.Parse("SELECT " + q); err != nil {
				continue
			}
		}
		if w.sub == nil {
			w.sub = &walker{}
		}
		sw := &walker{depth: w.depth + 1}
		for _, raw := range tree.Stmts {
			sf := sw.statement(raw.GetStmt())
			w.merge(&sf)
		}
	}
}

// merge adds what a statement inside a DO body does to the DO statement.
func (w *walker) merge(s *stmtFacts) {
	f := w.f
	f.kinds |= s.kinds &^ (1<<kindSelect | 1<<kindUtility)
	f.unfiltered |= s.unfiltered
	f.copy |= s.copy
	f.copyDir |= s.copyDir
	f.roleAttrs |= s.roleAttrs
	f.tautology = f.tautology || s.tautology
	f.catalogUnion = f.catalogUnion || s.catalogUnion
	f.timeProbe = f.timeProbe || s.timeProbe
	f.joins += s.joins
	f.unionArms += s.unionArms
	f.ctes += s.ctes
	for _, t := range s.tables {
		w.table(t.schema, t.name, t.alias, t.write)
	}
	for _, fn := range s.funcs {
		w.addFunc(fn.schema, fn.name)
	}
	for _, c := range s.cols {
		if _, ok := w.seenC[c]; !ok {
			w.seenC[c] = struct{}{}
			f.cols = append(f.cols, c)
		}
	}
	for _, l := range s.languages {
		f.languages = appendUnique(f.languages, l)
	}
	for _, x := range s.extensions {
		f.extensions = appendUnique(f.extensions, x)
	}
	for _, x := range s.settings {
		f.settings = appendUnique(f.settings, x)
	}
	for _, x := range s.roles {
		f.roles = appendUnique(f.roles, x)
	}
}

// plpgsqlQueries pulls the "query" strings of every PLpgSQL_expr out of the
// PL/pgSQL parser's JSON, without decoding the whole document into maps.
func plpgsqlQueries(js string) []string {
	var out []string
	const key = `"query":"`
	for {
		i := strings.Index(js, key)
		if i < 0 {
			return out
		}
		js = js[i+len(key):]
		var b strings.Builder
		j := 0
		for ; j < len(js) && js[j] != '"'; j++ {
			if js[j] == '\\' && j+1 < len(js) {
				j++
				switch js[j] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				case 'u':
					if j+4 < len(js) {
						if v, err := strconv.ParseUint(js[j+1:j+5], 16, 32); err == nil {
							b.WriteRune(rune(v))
						}
						j += 4
					}
				default:
					b.WriteByte(js[j])
				}
				continue
			}
			b.WriteByte(js[j])
		}
		out = append(out, b.String())
		js = js[min(j, len(js)):]
	}
}

// body scans the source of a DO block or function body, which the parser
// keeps as an opaque string. Every identifier directly followed by "(" is
// taken as a call. This over-approximates (it also finds names inside string
// literals, which catches EXECUTE 'select f(...)'), and it cannot see names
// assembled at run time.
func (w *walker) body(arg *pg_query.Node) {
	if arg == nil {
		return
	}
	if s := arg.GetString_(); s != nil {
		w.scanBody(s.Sval)
		return
	}
	for _, it := range arg.GetList().GetItems() {
		w.scanBody(it.GetString_().GetSval())
	}
}

// scanBody looks through the text of a DO block or function body, which
// the parser keeps as a string: it records the functions called and a COPY
// ... PROGRAM, also inside dynamic SQL (EXECUTE 'copy ... to program ...').
// It is lexical, so a name assembled at run time is not found.
func (w *walker) scanBody(src string) {
	sawCopy := false
	for i := 0; i < len(src); {
		c := src[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		// A dotted name: ident(.ident)*, possibly quoted parts are not handled
		// beyond their letters, which is enough to find the final name.
		start := i
		for i < len(src) && (isIdentPart(src[i]) || src[i] == '.') {
			i++
		}
		word := src[start:i]
		switch {
		case strings.EqualFold(word, "copy"):
			sawCopy = true
		case sawCopy && strings.EqualFold(word, "program"):
			w.f.copy |= copyProgram
		}
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r' || src[j] == '"') {
			j++
		}
		if j < len(src) && src[j] == '(' {
			schema, name := "", word
			if k := strings.LastIndexByte(word, '.'); k >= 0 {
				schema, name = word[:k], word[k+1:]
				if k2 := strings.LastIndexByte(schema, '.'); k2 >= 0 {
					schema = schema[k2+1:]
				}
			}
			if name != "" {
				w.addFunc(schema, name)
			}
		}
	}
}
