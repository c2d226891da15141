package pgsql

// Code inside statements: DO blocks, function bodies and SQL text handed to
// functions that run it (query_to_xml, dblink_exec, ...), which the parser
// keeps as opaque strings. What such code does is judged with the statement
// that carries it:
//
//   - a DO block runs now: its statements count fully (kinds, WHERE-less
//     writes, shapes), as if they had been sent;
//   - a CREATE FUNCTION/PROCEDURE body runs later, when called: its
//     statements contribute their capabilities (functions, tables, COPY
//     ends, languages, settings, granted roles, dynamic SQL) but not their
//     kinds;
//   - within one message, a later call of a function created earlier, a write
//     to a table given a trigger earlier, and DDL after an event trigger run
//     that body now (afterStatement);
//   - SQL text that is a constant (a literal, a concatenation of literals,
//     format() of literals) is parsed and judged like a nested statement;
//     text assembled at run time (a variable, a column, a parameter $1) is
//     the fact dynamicSQL; code the engine cannot parse, in a language it
//     cannot read, or nested beyond maxCodeDepth is the fact unparsed.
//
// Everything here depends on the text alone, so the facts stay cacheable by
// text. It runs only on a cache miss.

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/proto"

	"github.com/sqlfw/sqlfw/engine"
)

// maxCodeDepth bounds code nested in strings (a DO block that EXECUTEs a DO
// block that ...). Beyond it a statement is denied as unparsed, not skipped.
const maxCodeDepth = 8

// Why code could not be analysed (stmtFacts.unparsed). Literal-free: they
// go into verdict reasons.
const (
	unparsedPLpgSQL  = "the PL/pgSQL parser rejected a body"
	unparsedSQL      = "SQL text in a body or string argument could not be parsed"
	unparsedLanguage = "a body is in a language the engine cannot read"
	unparsedDepth    = "code nested in strings deeper than 8 levels"
	unparsedVolume   = "more code in strings than the engine analyses for one message (16 MiB)"
)

// maxCodeBytes bounds the code in strings analysed for one message, summed
// over every body and SQL text and every reading of it: nesting multiplies
// readings (lexstate.go reads code twice when backslashes make two readings
// differ), and the cold path must stay bounded for any text.
const maxCodeBytes = 16 << 20

// msgState is what one message's earlier statements tell its later ones:
// functions created in it (called later in the same message, their bodies
// run now) and cursors declared in it.
type msgState struct {
	created       map[string][]*engine.StmtFacts // by lower-cased function name: the bodies' facts as if they ran
	triggers      map[string][]string            // table name → trigger functions created on it
	eventTriggers []string                       // functions of event triggers
	cursors       map[string]struct{}
	codeBytes     int // code in strings analysed so far (maxCodeBytes)
	// moved: lower-cased name → the routines and relations an earlier
	// statement of the message renamed to it or moved into a schema under
	// it (ALTER … RENAME TO, SET SCHEMA), as they were named before: a
	// later statement naming it runs or reads what they are in the catalog.
	movedFuncs  map[string][]engine.FuncRef
	movedTables map[string][]engine.TableRef
}

// charge accounts for analysing n bytes of code in strings; beyond
// maxCodeBytes the code is unparsed instead.
func (w *walker) charge(n int) bool {
	if w.msg == nil {
		w.msg = &msgState{}
	}
	w.msg.codeBytes += n
	if w.msg.codeBytes > maxCodeBytes {
		w.setUnparsed(unparsedVolume)
		return false
	}
	return true
}

// subWalker returns a walker for a statement nested one level deeper.
func (w *walker) subWalker() *walker {
	if w.msg == nil {
		w.msg = &msgState{}
	}
	return &walker{depth: w.depth + 1, msg: w.msg, inBody: w.inBody}
}

// accumulator returns a walker whose facts collect merged statements.
func (w *walker) accumulator(f *engine.StmtFacts) *walker {
	a := w.subWalker()
	a.depth = w.depth // it only collects: the statements it merges are one level deeper
	a.f = f
	a.seenT = map[engine.TableRef]struct{}{}
	a.seenF = map[engine.FuncRef]struct{}{}
	a.seenC = map[engine.ColRef]struct{}{}
	return a
}

// measure records the list and nesting measures of code in a string, for
// the limits (the message's prescan sees the string as one token).
func (w *walker) measure(text string) {
	st := prescan(text, 0)
	w.f.CodeList = max(w.f.CodeList, int32(min(st.MaxList, 1<<30)))
	w.f.CodeDepth = max(w.f.CodeDepth, int32(min(st.MaxDepth, 1<<30)))
}

// setUnparsed records why code could not be analysed. Of several reasons
// the least is kept, so that the reason does not depend on the order the
// parts of a body are visited in.
func (w *walker) setUnparsed(why string) {
	w.f.Unparsed = leastReason(w.f.Unparsed, why)
}

func leastReason(have, why string) string {
	if have == "" || (why != "" && why < have) {
		return why
	}
	return have
}

// doStmt analyses a DO block: its body runs now.
func (w *walker) doStmt(n *pg_query.DoStmt) {
	lang, body, have := "plpgsql", "", false
	for _, a := range n.Args {
		if d := a.GetDefElem(); d != nil {
			switch d.Defname {
			case "as":
				body, have = d.Arg.GetString_().GetSval(), true
			case "language":
				lang = strings.ToLower(d.Arg.GetString_().GetSval())
			}
		}
	}
	w.f.Languages = engine.AppendUnique(w.f.Languages, lang)
	if !have {
		return
	}
	if lang != "plpgsql" {
		w.unreadableBody(body)
		return
	}
	w.doBody(body)
}

// doBody analyses the statements of a PL/pgSQL DO block and merges them, as
// run now, into the DO statement.
func (w *walker) doBody(body string) {
	w.alsoOff(body, w.doBody) // lexed when it runs (lexstate.go)
	w.plpgsqlBody(body, func(body string) (string, bool) {
		tag := "$sqlfw$"
		for i := 0; strings.Contains(body, tag); i++ {
			tag = "$sqlfw" + strconv.Itoa(i) + "$"
		}
		return "CREATE FUNCTION sqlfw_do() RETURNS void LANGUAGE plpgsql AS " + tag + body + tag, true
	})
}

// plpgsqlBody analyses a PL/pgSQL body; create builds the CREATE FUNCTION
// text the PL/pgSQL parser reads around a body. When the parser rejects the
// body, it is tried once more without what pg_query's parser cannot handle
// but which runs no SQL (pgRewrite); if that fails too, it is unparsed.
func (w *walker) plpgsqlBody(body string, create func(string) (string, bool)) {
	if !w.charge(len(body)) {
		return
	}
	w.measure(body)
	text, ok := create(body)
	if !ok {
		w.setUnparsed(unparsedPLpgSQL)
		return
	}
	var bf engine.StmtFacts
	acc := w.accumulator(&bf)
	acc.plpgsql(text)
	if bf.Unparsed == unparsedPLpgSQL {
		if rw, changed := pgRewrite(body); changed {
			if text, ok := create(rw); ok {
				bf = engine.StmtFacts{}
				acc = w.accumulator(&bf)
				acc.plpgsql(text)
			}
		}
	}
	w.merge(&bf, false)
}

// createFunction analyses CREATE FUNCTION/PROCEDURE: the body's facts go
// into the statement as capabilities (the body runs when called), and are
// kept for calls later in the same message, which run it now.
func (w *walker) createFunction(n *pg_query.CreateFunctionStmt) {
	lang := ""
	var bodies []string
	for _, o := range n.Options {
		if d := o.GetDefElem(); d != nil {
			switch d.Defname {
			case "as":
				if s := d.Arg.GetString_(); s != nil {
					bodies = append(bodies, s.Sval)
				}
				for _, it := range d.Arg.GetList().GetItems() {
					bodies = append(bodies, it.GetString_().GetSval())
				}
			case "language":
				lang = strings.ToLower(d.Arg.GetString_().GetSval())
			}
		}
	}
	if lang == "" {
		// PostgreSQL's default when LANGUAGE is left out (and the only
		// language of a BEGIN ATOMIC body).
		lang = "sql"
	}
	w.f.Languages = engine.AppendUnique(w.f.Languages, lang)
	if n.SqlBody != nil {
		// The walker goes on into the body with inFuncBody set (visit);
		// for same-message calls it is also walked as if it ran.
		w.markChildren(inFuncBody, n.SqlBody)
	}
	var bf engine.StmtFacts
	acc := w.accumulator(&bf)
	acc.inBody = true
	switch {
	case n.SqlBody != nil:
		sw := w.subWalker()
		sf := sw.statement(n.SqlBody)
		acc.merge(&sf, false)
	case lang == "plpgsql":
		for _, b := range withOffReadings(bodies) { // lexed when called (lexstate.go)
			if w.depth >= maxCodeDepth {
				acc.setUnparsed(unparsedDepth)
				break
			}
			acc.plpgsqlBody(b, func(b string) (string, bool) {
				// The statement itself, with this one body and the language
				// spelled as the PL/pgSQL parser expects it: the return type
				// and parameters decide what the body may say.
				c := proto.Clone(n).(*pg_query.CreateFunctionStmt)
				c.Options = nil
				for _, o := range n.Options {
					if d := o.GetDefElem(); d != nil && (d.Defname == "as" || d.Defname == "language") {
						continue
					}
					c.Options = append(c.Options, o)
				}
				c.Options = append(c.Options,
					pg_query.MakeSimpleDefElemNode("language", pg_query.MakeStrNode("plpgsql"), -1),
					pg_query.MakeSimpleDefElemNode("as", pg_query.MakeListNode([]*pg_query.Node{pg_query.MakeStrNode(b)}), -1))
				text, err := pg_query.Deparse(&pg_query.ParseResult{Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_CreateFunctionStmt{CreateFunctionStmt: c}}}}})
				return text, err == nil
			})
		}
	case lang == "sql":
		for _, b := range bodies {
			acc.nestedSQL(b)
		}
	default:
		for _, b := range bodies {
			acc.unreadableBody(b)
		}
	}
	// The body's own stored code (a function it creates when called) is
	// judged on its own, beside it.
	nested := bf.Bodies
	bf.Bodies = nil
	w.merge(&bf, true)
	b := engine.Body{Of: ofFunction, Facts: bf}
	b.Facts.Kind = engine.BodyKind(bf.Kinds)
	w.f.Bodies = append(append(w.f.Bodies, b), nested...)
	if len(n.Funcname) > 0 {
		if w.msg.created == nil {
			w.msg.created = map[string][]*engine.StmtFacts{}
		}
		// Overloads share the name: a call may run any of them.
		name := lastName(n.Funcname)
		w.msg.created[name] = append(w.msg.created[name], &bf)
	}
}

// What stored code is, in verdict reasons (engine.Body.Of).
const (
	ofFunction = "a statement in the body of the function or procedure this statement creates, judged as it will run when called"
	ofView     = "the query of the view this statement creates, judged as it will run when the view is read"
	ofMatView  = "the query of the materialized view this statement creates, judged as it will run at each refresh"
	ofRule     = "an action of the rewrite rule this statement creates, judged as it will run on each statement the rule fires on"
)

// storedQuery records code a statement stores that is SQL in its parse
// tree (a view's query, a rule's actions): walked again, as statements of
// their own, and merged as if they ran (engine.Body). The walk of the
// statement itself goes on into the same nodes for its own facts.
func (w *walker) storedQuery(of string, stmts ...*pg_query.Node) {
	if len(stmts) == 0 || w.depth >= maxCodeDepth {
		return
	}
	var bf engine.StmtFacts
	acc := w.accumulator(&bf)
	acc.inBody = true
	for _, n := range stmts {
		sw := acc.subWalker()
		sf := sw.statement(n)
		acc.merge(&sf, false)
	}
	nested := bf.Bodies
	bf.Bodies = nil
	b := engine.Body{Of: of, Facts: bf}
	b.Facts.Kind = engine.BodyKind(bf.Kinds)
	w.f.Bodies = append(append(w.f.Bodies, b), nested...)
}

// unreadableBody records a body in a language the engine cannot parse
// (plperl, pltcl, plv8, ...): it can run any SQL through its SPI, so it is
// unparsed. The lexical scan still names the functions it mentions, so that
// a more specific rule can say what it found.
func (w *walker) unreadableBody(src string) {
	w.setUnparsed(unparsedLanguage)
	w.scanBody(src)
}

// plpgsql runs PostgreSQL's PL/pgSQL parser over a CREATE FUNCTION text and
// merges, as run now, every SQL statement and expression of the body into
// w.f. A body the parser rejects is unparsed.
func (w *walker) plpgsql(createText string) {
	if w.depth >= maxCodeDepth {
		w.setUnparsed(unparsedDepth)
		return
	}
	js, err := pg_query.ParsePlPgSqlToJSON(createText)
	if err != nil {
		w.setUnparsed(unparsedPLpgSQL)
		return
	}
	var tree any
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		w.setUnparsed(unparsedPLpgSQL)
		return
	}
	if l, ok := tree.([]any); !ok || len(l) == 0 {
		w.setUnparsed(unparsedPLpgSQL)
		return
	}
	w.plpgsqlNode(tree, false)
}

// pgRewrite removes from a PL/pgSQL body what pg_query's PL/pgSQL parser
// rejects for want of a catalog, although PostgreSQL accepts it, and which
// runs no SQL of its own:
//
//   - COLLATE name (the parser cannot resolve collations of declared
//     variables);
//   - the cursor statements OPEN, FETCH, MOVE and CLOSE (it cannot tell that
//     a variable is a refcursor): "OPEN c [[NO] SCROLL] FOR query" and
//     "OPEN c FOR EXECUTE text USING ..." keep their query or EXECUTE as a
//     statement of their own; FETCH, MOVE, CLOSE and OPEN of a bound cursor
//     without arguments become NULL (the bound cursor's query is read in its
//     declaration).
//
// A cursor statement with anything but names, numbers and keywords that it
// would drop (OPEN c(args), FETCH ABSOLUTE f(x), an operator, a subscript)
// is left as it is, so the body stays unparsed. Every SQL
// statement and expression of the body is kept, so the rewritten body's
// facts hold all of the original's. Tokens come from PostgreSQL's own
// scanner: strings, dollar quotes and comments cannot hide a keyword.
func pgRewrite(body string) (string, bool) {
	toks, err := pg_query.Scan(body)
	if err != nil {
		return "", false
	}
	tk := toks.Tokens
	word := func(i int) string {
		if i < 0 || i >= len(tk) {
			return ""
		}
		return strings.ToLower(body[tk[i].Start:tk[i].End])
	}
	type edit struct {
		from, to int32
		with     string
	}
	var edits []edit
	for i := 0; i < len(tk); i++ {
		switch word(i) {
		case "collate":
			j := i + 1
			for j+2 < len(tk) && word(j+1) == "." {
				j += 2
			}
			if j < len(tk) {
				edits = append(edits, edit{tk[i].Start, tk[j].End, " "})
				i = j
			}
			continue
		case "open", "fetch", "move", "close":
		default:
			continue
		}
		switch word(i - 1) {
		case "", ";", "begin", "then", "else", "loop", ">>":
		default:
			continue
		}
		// The statement ends at the next ";".
		end := i + 1
		for end < len(tk) && word(end) != ";" {
			end++
		}
		if end >= len(tk) || end == i+1 {
			continue
		}
		if word(i) == "open" {
			j := i + 2 // past the cursor variable
			if word(j) == "no" {
				j++
			}
			if word(j) == "scroll" {
				j++
			}
			if word(j) == "for" && j+1 < end {
				edits = append(edits, edit{tk[i].Start, tk[j].End, " "})
				i = j
				continue
			}
		}
		// Only names, numbers, keywords, commas and dots (and "-" of
		// RELATIVE -1): nothing that could call a function or an operator.
		plain := true
		for k := i + 1; k < end; k++ {
			switch tk[k].Token {
			case pg_query.Token_IDENT, pg_query.Token_ICONST, pg_query.Token_ASCII_44, pg_query.Token_ASCII_46, pg_query.Token_ASCII_45:
			default:
				if tk[k].KeywordKind == pg_query.KeywordKind_NO_KEYWORD {
					plain = false
				}
			}
		}
		if plain {
			edits = append(edits, edit{tk[i].Start, tk[end-1].End, "NULL"})
		}
		i = end
	}
	if len(edits) == 0 {
		return "", false
	}
	var b strings.Builder
	last := int32(0)
	for _, e := range edits {
		b.WriteString(body[last:e.from])
		b.WriteString(e.with)
		last = e.to
	}
	b.WriteString(body[last:])
	return b.String(), true
}

// Parse modes of a PLpgSQL_expr (PostgreSQL's RawParseMode).
const (
	parseModeDefault = 0 // a whole statement
	parseModeExpr    = 2 // an expression: parsed as SELECT <expr>
	parseModeAssign1 = 3 // target := expr (3, 4, 5: by the target's parts)
	parseModeAssign3 = 5
)

// plpgsqlNode walks the PL/pgSQL parser's JSON. dyn marks the expression
// whose value is SQL text to run: EXECUTE, FOR ... IN EXECUTE, RETURN QUERY
// EXECUTE, OPEN ... FOR EXECUTE.
func (w *walker) plpgsqlNode(v any, dyn bool) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			w.plpgsqlNode(e, false)
		}
	case map[string]any:
		if e, ok := t["PLpgSQL_expr"].(map[string]any); ok {
			q, _ := e["query"].(string)
			mode, _ := e["parseMode"].(float64)
			w.plpgsqlExpr(q, int(mode), dyn)
			return
		}
		for k, c := range t {
			switch k {
			case "PLpgSQL_stmt_dynexecute", "PLpgSQL_stmt_dynfors":
				if m, ok := c.(map[string]any); ok {
					for k2, c2 := range m {
						w.plpgsqlNode(c2, k2 == "query")
					}
					continue
				}
			}
			w.plpgsqlNode(c, k == "dynquery")
		}
	}
}

func (w *walker) plpgsqlExpr(q string, mode int, dyn bool) {
	if dyn {
		tree, err := pg_query.Parse("SELECT " + q)
		if err != nil {
			w.setUnparsed(unparsedSQL)
			return
		}
		// The expression itself is walked too (its functions, subqueries).
		w.mergeTree(tree, false)
		if len(tree.Stmts) != 1 {
			w.f.DynamicSQL = true
			return
		}
		if s := tree.Stmts[0].GetStmt().GetSelectStmt(); s != nil && len(s.TargetList) == 1 && len(s.FromClause) == 0 {
			if text, ok := constText(s.TargetList[0].GetResTarget().GetVal()); ok {
				w.nestedSQL(text)
				return
			}
		}
		w.f.DynamicSQL = true
		return
	}
	switch {
	case mode == parseModeExpr && plainOperand(q):
		// A variable, a field of one, or a number (RETURN v, IF found,
		// USING x): it calls and reads nothing, so it is not parsed.
		return
	case mode == parseModeExpr:
		q = "SELECT " + q
	case mode >= parseModeAssign1 && mode <= parseModeAssign3:
		rhs, ok := assignValue(q)
		if !ok {
			w.setUnparsed(unparsedSQL)
			return
		}
		q = "SELECT " + rhs
	}
	tree, err := pg_query.Parse(q)
	if err != nil {
		w.setUnparsed(unparsedSQL)
		return
	}
	w.mergeTree(tree, false)
}

// plainOperand reports whether an expression is a name, a dotted name or
// an unsigned integer, and nothing else.
func plainOperand(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" {
		return false
	}
	if q[0] >= '0' && q[0] <= '9' {
		for i := 0; i < len(q); i++ {
			if q[i] < '0' || q[i] > '9' {
				return false
			}
		}
		return true
	}
	start := true
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '.' && !start:
			start = true
		case start && c < 0x80 && isIdentStart(c):
			start = false
		case !start && c < 0x80 && isIdentPart(c):
		default:
			return false
		}
	}
	return !start
}

// assignValue returns the expression of a PL/pgSQL assignment
// ("target[.field][subscript] := expr", or "=" for ":=").
func assignValue(q string) (string, bool) {
	toks, err := pg_query.Scan(q)
	if err != nil {
		return "", false
	}
	depth := 0
	for _, t := range toks.Tokens {
		switch q[t.Start:t.End] {
		case "[", "(":
			depth++
		case "]", ")":
			depth--
		case ":=", "=":
			if depth == 0 {
				return q[t.End:], true
			}
		}
	}
	return "", false
}

// nestedSQL parses SQL text that will run and merges its statements, as run
// now, into w.f.
func (w *walker) nestedSQL(text string) {
	if w.depth >= maxCodeDepth {
		w.setUnparsed(unparsedDepth)
		return
	}
	if strings.IndexByte(text, 0) >= 0 {
		w.setUnparsed(unparsedSQL)
		return
	}
	if !w.charge(len(text)) {
		return
	}
	w.alsoOff(text, w.nestedSQL) // lexed when it runs (lexstate.go)
	w.measure(text)
	tree, err := parseSQL(text)
	if err != nil {
		w.setUnparsed(unparsedSQL)
		return
	}
	w.mergeTree(tree, false)
}

// mergeTree walks every statement of a nested parse tree one level deeper
// and merges it into w.f.
func (w *walker) mergeTree(tree *pg_query.ParseResult, later bool) {
	sw := w.subWalker()
	for _, raw := range tree.Stmts {
		sf := sw.statement(raw.GetStmt())
		w.merge(&sf, later)
	}
}

// merge adds what a nested statement does to the statement being walked.
// later: the nested statement runs when a function is called, not now, so
// only its capabilities count, not its kinds or shapes.
func (w *walker) merge(s *engine.StmtFacts, later bool) {
	f := w.f
	f.Bodies = append(f.Bodies, s.Bodies...)
	if !later {
		f.Kinds |= s.Kinds &^ (1<<engine.KindSelect | 1<<engine.KindUtility)
		if w.inBody {
			f.Kinds |= s.Kinds
		}
		f.Unfiltered |= s.Unfiltered
		f.Tautology = f.Tautology || s.Tautology
		f.CatalogUnion = f.CatalogUnion || s.CatalogUnion
		f.TimeProbe = f.TimeProbe || s.TimeProbe
		f.Joins += s.Joins
		f.UnionArms += s.UnionArms
		f.CTEs += s.CTEs
		f.SleepSeconds += s.SleepSeconds
		if f.SleepSeconds > longSleepSeconds {
			f.Effects |= engine.EffLongSleep
		}
		f.BoolTerms += s.BoolTerms
		f.SeriesRows = max(f.SeriesRows, s.SeriesRows)
		f.StringBytes = max(f.StringBytes, s.StringBytes)
	}
	f.Copy |= s.Copy
	f.CopyDir |= s.CopyDir
	f.RoleAttrs |= s.RoleAttrs
	f.DynamicSQL = f.DynamicSQL || s.DynamicSQL
	f.CodeList = max(f.CodeList, s.CodeList)
	f.CodeDepth = max(f.CodeDepth, s.CodeDepth)
	f.Unparsed = leastReason(f.Unparsed, s.Unparsed)
	f.Effects |= s.Effects
	for _, t := range s.Tables {
		if t.CTE {
			continue // a CTE of the nested statement, not a relation
		}
		w.table(t.Schema, t.Name, t.Alias, t.Write)
	}
	for _, fn := range s.Funcs {
		w.addFunc(fn.Schema, fn.Name)
	}
	// Columns only of statements that read a relation: in a PL/pgSQL
	// expression without FROM (IF v > 1, RAISE ... password) a name is a
	// variable, not a column.
	for _, c := range s.Cols {
		if len(s.Tables) == 0 {
			break
		}
		if _, ok := w.seenC[c]; !ok {
			w.seenC[c] = struct{}{}
			f.Cols = append(f.Cols, c)
		}
	}
	for _, l := range s.Languages {
		f.Languages = engine.AppendUnique(f.Languages, l)
	}
	for _, x := range s.Extensions {
		f.Extensions = engine.AppendUnique(f.Extensions, x)
	}
	for _, x := range s.Settings {
		f.Settings = engine.AppendUnique(f.Settings, x)
	}
	for _, x := range s.Roles {
		f.Roles = engine.AppendUnique(f.Roles, x)
	}
}

// afterStatement links a top-level statement to what earlier statements of
// the same message created. A call of a function created earlier runs its
// body now (but inside a CREATE or GRANT, such as CREATE TRIGGER, later); a
// write to a table given a trigger earlier runs the trigger function now,
// and so does any DDL after an event trigger. A cursor declared here may be
// read by cursor_to_xml further on.
func (w *walker) afterStatement(n *pg_query.Node, f *engine.StmtFacts) {
	switch n.GetNode().(type) {
	case *pg_query.Node_DeclareCursorStmt, *pg_query.Node_CreateTrigStmt, *pg_query.Node_CreateEventTrigStmt,
		*pg_query.Node_RenameStmt, *pg_query.Node_AlterObjectSchemaStmt:
		if w.msg == nil {
			w.msg = &msgState{}
		}
	}
	m := w.msg
	if m == nil {
		return
	}
	if m.codeBytes > maxCodeBytes {
		// Marked here too: a reading that alsoOff takes back must not
		// take the mark with it.
		f.Unparsed = leastReason(f.Unparsed, unparsedVolume)
	}
	switch s := n.GetNode().(type) {
	case *pg_query.Node_DeclareCursorStmt:
		if m.cursors == nil {
			m.cursors = map[string]struct{}{}
		}
		m.cursors[strings.ToLower(s.DeclareCursorStmt.Portalname)] = struct{}{}
	case *pg_query.Node_CreateTrigStmt:
		if t := s.CreateTrigStmt; t.Relation != nil && len(t.Funcname) > 0 {
			if m.triggers == nil {
				m.triggers = map[string][]string{}
			}
			rel := strings.ToLower(t.Relation.Relname)
			m.triggers[rel] = append(m.triggers[rel], lastName(t.Funcname))
		}
	case *pg_query.Node_CreateEventTrigStmt:
		if len(s.CreateEventTrigStmt.Funcname) > 0 {
			m.eventTriggers = append(m.eventTriggers, lastName(s.CreateEventTrigStmt.Funcname))
		}
	case *pg_query.Node_RenameStmt:
		// ALTER FUNCTION/PROCEDURE/ROUTINE f RENAME TO g: g runs f's body.
		r := s.RenameStmt
		switch r.RenameType {
		case pg_query.ObjectType_OBJECT_FUNCTION, pg_query.ObjectType_OBJECT_PROCEDURE, pg_query.ObjectType_OBJECT_ROUTINE:
			if names := r.Object.GetObjectWithArgs().GetObjname(); len(names) > 0 && m.created != nil {
				old, nw := lastName(names), strings.ToLower(r.Newname)
				m.created[nw] = append(m.created[nw], m.created[old]...)
			}
		}
		m.move(r.RenameType, r.Object, r.Relation, strings.ToLower(r.Newname))
	case *pg_query.Node_AlterObjectSchemaStmt:
		r := s.AlterObjectSchemaStmt
		m.move(r.ObjectType, r.Object, r.Relation, "")
	}
	m.followMoved(f)
	if len(m.created) == 0 {
		return
	}
	ddl := f.Kind == engine.KindDDL || f.Kind == engine.KindDCL
	w.f = f
	done := map[string]bool{}
	run := func(name string, later bool) {
		if bodies, ok := m.created[name]; ok && !done[name] {
			done[name] = true
			for _, bf := range bodies {
				w.merge(bf, later)
			}
		}
	}
	if ddl {
		for _, name := range m.eventTriggers {
			run(name, false)
		}
	}
	// f.funcs and f.tables grow as bodies are merged: bodies calling
	// other functions, or writing tables with triggers, are followed too.
	for i, j := 0, 0; i < len(f.Funcs) || j < len(f.Tables); {
		if i < len(f.Funcs) {
			run(f.Funcs[i].Name, ddl)
			i++
			continue
		}
		if t := f.Tables[j]; t.Write {
			for _, name := range m.triggers[t.Name] {
				run(name, ddl)
			}
		}
		j++
	}
	w.f = nil
}

// move records a routine or relation an ALTER renames to name (or, with
// name "", moves to another schema under its own name) by its name before.
// The catalog still holds it by that name while the rest of the message
// runs, so a later statement naming name is judged by it as well (DROP
// FUNCTION good(); ALTER FUNCTION evil() RENAME TO good; SELECT good()).
func (m *msgState) move(typ pg_query.ObjectType, obj *pg_query.Node, rel *pg_query.RangeVar, name string) {
	switch {
	case routine(typ):
		parts := nameParts(obj)
		if len(parts) == 0 {
			return
		}
		schema, old := lastTwo(parts)
		if name == "" {
			name = old
		}
		if m.movedFuncs == nil {
			m.movedFuncs = map[string][]engine.FuncRef{}
		}
		m.movedFuncs[name] = append(m.movedFuncs[name], engine.FuncRef{Schema: schema, Name: old})
	case rel != nil && (typ == pg_query.ObjectType_OBJECT_TABLE || typ == pg_query.ObjectType_OBJECT_VIEW ||
		typ == pg_query.ObjectType_OBJECT_MATVIEW || typ == pg_query.ObjectType_OBJECT_FOREIGN_TABLE):
		old := strings.ToLower(rel.Relname)
		if name == "" {
			name = old
		}
		if m.movedTables == nil {
			m.movedTables = map[string][]engine.TableRef{}
		}
		m.movedTables[name] = append(m.movedTables[name], engine.TableRef{Schema: strings.ToLower(rel.Schemaname), Name: old})
	}
}

// followMoved adds to f the routines and relations, as named before, that
// earlier statements moved to the names f calls or uses (move).
func (m *msgState) followMoved(f *engine.StmtFacts) {
	if len(m.movedFuncs) > 0 {
		for i := 0; i < len(f.Funcs); i++ {
			for _, r := range m.movedFuncs[f.Funcs[i].Name] {
				if !slices.Contains(f.Funcs, r) {
					f.Funcs = append(f.Funcs, r)
				}
			}
		}
	}
	if len(m.movedTables) > 0 {
		for i := 0; i < len(f.Tables); i++ {
			t := f.Tables[i]
			if t.CTE {
				continue
			}
			for _, r := range m.movedTables[t.Name] {
				r.Write = t.Write
				if !slices.Contains(f.Tables, r) {
					f.Tables = append(f.Tables, r)
				}
			}
		}
	}
}

func lastName(parts []*pg_query.Node) string {
	return strings.ToLower(parts[len(parts)-1].GetString_().GetSval())
}

// Roles of the arguments of functions that run or read what a string names.
type execArg uint8

const (
	argSQL      execArg = iota + 1 // SQL text the function runs
	argRelation                    // a relation it reads (regclass or name)
	argCursor                      // a cursor it fetches from
	argAll                         // it reads relations it does not name (a schema, the database)
)

// execFuncs are the functions known to run SQL text given as an argument
// or to read relations named by a string. The callback returns, for a call
// with n arguments, the role of argument i (0: none).
var execFuncs = map[string]func(i, n int, args []*pg_query.Node) execArg{
	"query_to_xml":                  first(argSQL),
	"query_to_xmlschema":            first(argSQL),
	"query_to_xml_and_xmlschema":    first(argSQL),
	"cursor_to_xml":                 first(argCursor),
	"cursor_to_xmlschema":           first(argCursor),
	"table_to_xml":                  first(argRelation),
	"table_to_xmlschema":            first(argRelation),
	"table_to_xml_and_xmlschema":    first(argRelation),
	"schema_to_xml":                 first(argAll),
	"schema_to_xmlschema":           first(argAll),
	"schema_to_xml_and_xmlschema":   first(argAll),
	"database_to_xml":               always(argAll),
	"database_to_xmlschema":         always(argAll),
	"database_to_xml_and_xmlschema": always(argAll),
	"ts_stat":                       first(argSQL),
	"ts_rewrite": func(i, n int, _ []*pg_query.Node) execArg {
		if n == 2 && i == 1 { // ts_rewrite(tsquery, select text)
			return argSQL
		}
		return 0
	},
	// tablefunc
	"crosstab": func(i, n int, args []*pg_query.Node) execArg {
		if i == 0 || (i == 1 && !isIntConst(args[1])) {
			return argSQL
		}
		return 0
	},
	"crosstab2":            first(argSQL),
	"crosstab3":            first(argSQL),
	"crosstab4":            first(argSQL),
	"crosstab_hash":        func(i, n int, _ []*pg_query.Node) execArg { return sqlIf(i <= 1) },
	"connectby":            first(argRelation),
	"pg_background_launch": first(argSQL),
	"query_export_to_s3":   first(argSQL), // aws_s3 (Amazon RDS)
	// dblink: the SQL is the last text argument; a trailing boolean is
	// fail_on_error. It runs on another connection, outside the firewall.
	"dblink":            dblinkSQL(0),
	"dblink_exec":       dblinkSQL(0),
	"dblink_send_query": dblinkSQL(0),
	"dblink_open":       dblinkSQL(1),
}

func first(r execArg) func(i, n int, _ []*pg_query.Node) execArg {
	return func(i, _ int, _ []*pg_query.Node) execArg {
		if i == 0 {
			return r
		}
		return 0
	}
}

func always(r execArg) func(i, n int, _ []*pg_query.Node) execArg {
	return func(int, int, []*pg_query.Node) execArg { return r }
}

func sqlIf(b bool) execArg {
	if b {
		return argSQL
	}
	return 0
}

// dblinkSQL: the SQL argument of dblink(sql), dblink(conn, sql),
// dblink(sql, fail), dblink(conn, sql, fail); dblink_open takes a cursor
// name first (skip 1).
func dblinkSQL(skip int) func(i, n int, args []*pg_query.Node) execArg {
	return func(i, n int, args []*pg_query.Node) execArg {
		last := n - 1
		if last > 0 && isBoolConst(args[last]) {
			last--
		}
		if last < skip {
			return 0
		}
		return sqlIf(i == last)
	}
}

func isBoolConst(n *pg_query.Node) bool {
	if c := n.GetAConst(); c != nil {
		_, ok := c.Val.(*pg_query.A_Const_Boolval)
		return ok
	}
	if tc := n.GetTypeCast(); tc != nil && tc.TypeName != nil && len(tc.TypeName.Names) > 0 {
		t := strings.ToLower(tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_().GetSval())
		return t == "bool" || t == "boolean"
	}
	return false
}

func isIntConst(n *pg_query.Node) bool {
	if c := n.GetAConst(); c != nil {
		_, ok := c.Val.(*pg_query.A_Const_Ival)
		return ok
	}
	return false
}

// Named-notation parameter names of execFuncs' text arguments.
var execArgNames = map[string]execArg{
	"query": argSQL, "sqlquery": argSQL, "tbl": argRelation, "cursor": argCursor, "source_sql": argSQL,
}

// execArgs judges the text arguments of a call of a function that runs or
// reads what a string says: a constant is parsed (SQL) or recorded
// (relation), anything else is dynamic SQL.
func (w *walker) execArgs(n *pg_query.FuncCall) {
	if len(n.Funcname) == 0 {
		return
	}
	name := lastName(n.Funcname)
	schema := ""
	if len(n.Funcname) >= 2 {
		schema = strings.ToLower(n.Funcname[len(n.Funcname)-2].GetString_().GetSval())
	}
	role := execFuncs[name]
	switch {
	case role != nil:
	case strings.HasPrefix(name, "pgr_"):
		// pgRouting: the first argument is the edges query.
		role = first(argSQL)
	case schema == "cron" && name == "schedule":
		// pg_cron: cron.schedule([job,] schedule, command) runs command on
		// schedule, soon and without another statement: as if now.
		role = func(i, n int, _ []*pg_query.Node) execArg { return sqlIf(i == n-1 && n >= 2) }
	case schema == "cron" && name == "schedule_in_database":
		role = func(i, _ int, _ []*pg_query.Node) execArg { return sqlIf(i == 2) }
	case name == "xpath_table":
		w.xpathTable(n)
		return
	default:
		return
	}
	later := w.flags&(inFuncBody|inPlanOnly) != 0 // runs when called, or never (plain EXPLAIN)
	for i, a := range n.Args {
		r := role(i, len(n.Args), n.Args)
		if na := a.GetNamedArgExpr(); na != nil {
			r = execArgNames[strings.ToLower(na.Name)]
			a = na.Arg
		}
		if r == 0 {
			continue
		}
		if r == argAll {
			w.f.DynamicSQL = true
			continue
		}
		text, ok := constText(a)
		if !ok {
			w.f.DynamicSQL = true
			continue
		}
		switch r {
		case argSQL:
			if w.depth >= maxCodeDepth {
				w.setUnparsed(unparsedDepth)
				continue
			}
			if !w.charge(2 * len(text)) { // both readings
				continue
			}
			w.alsoOff(text, func(alt string) { // lexed when it runs (lexstate.go)
				if tree, err := pg_query.Parse(alt); err == nil {
					w.mergeTree(tree, later)
				}
			})
			w.measure(text)
			tree, err := parseSQL(text)
			if err != nil || strings.IndexByte(text, 0) >= 0 {
				w.setUnparsed(unparsedSQL)
				continue
			}
			w.mergeTree(tree, later)
		case argRelation:
			w.relationText(text)
		case argCursor:
			// The cursor's query was judged when it was declared, if that
			// was earlier in this message; otherwise (another message, a
			// cursor a function opened) the engine cannot see what it runs.
			if _, ok := w.msg.cursorDeclared(text); !ok {
				w.f.DynamicSQL = true
			}
		}
	}
}

// xpathTable: xml2's xpath_table(key, document, relation, xpaths,
// criteria) runs "SELECT key, document FROM relation WHERE criteria".
func (w *walker) xpathTable(n *pg_query.FuncCall) {
	var parts [5]string
	if len(n.Args) != 5 {
		w.f.DynamicSQL = true
		return
	}
	for i, a := range n.Args {
		t, ok := constText(a)
		if !ok {
			w.f.DynamicSQL = true
			return
		}
		parts[i] = t
	}
	w.nestedSQL("SELECT " + parts[0] + ", " + parts[1] + " FROM " + parts[2] + " WHERE " + parts[4])
}

func (m *msgState) cursorDeclared(name string) (struct{}, bool) {
	if m == nil {
		return struct{}{}, false
	}
	_, ok := m.cursors[strings.ToLower(name)]
	return struct{}{}, ok
}

// relationText records a relation named by a string (regclass input: a
// possibly qualified, possibly quoted name). An OID or anything else the
// engine cannot read as a name is dynamic.
func (w *walker) relationText(text string) {
	tree, err := pg_query.Parse("TABLE " + text)
	if err == nil && len(tree.Stmts) == 1 {
		s := tree.Stmts[0].GetStmt().GetSelectStmt()
		if s != nil && len(s.FromClause) == 1 && len(s.TargetList) == 1 {
			if rv := s.FromClause[0].GetRangeVar(); rv != nil && rv.Alias == nil && rv.Inh {
				w.table(rv.Schemaname, rv.Relname, "", false)
				return
			}
		}
	}
	w.f.DynamicSQL = true
}

// constText returns the value of an expression that is a text constant: a
// literal, a cast of one, a concatenation of constants (||, concat,
// concat_ws), or format() of constants.
func constText(n *pg_query.Node) (string, bool) {
	switch x := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		c := x.AConst
		if c.Isnull {
			return "", true
		}
		switch v := c.Val.(type) {
		case *pg_query.A_Const_Sval:
			return v.Sval.Sval, true
		case *pg_query.A_Const_Ival:
			return strconv.Itoa(int(v.Ival.Ival)), true
		case *pg_query.A_Const_Fval:
			return v.Fval.Fval, true
		case *pg_query.A_Const_Boolval:
			if v.Boolval.Boolval {
				return "true", true
			}
			return "false", true
		}
	case *pg_query.Node_TypeCast:
		return constText(x.TypeCast.Arg)
	case *pg_query.Node_CollateClause:
		return constText(x.CollateClause.Arg)
	case *pg_query.Node_AExpr:
		e := x.AExpr
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "||" || e.Lexpr == nil {
			return "", false
		}
		l, ok1 := constText(e.Lexpr)
		r, ok2 := constText(e.Rexpr)
		return l + r, ok1 && ok2
	case *pg_query.Node_FuncCall:
		fc := x.FuncCall
		if len(fc.Funcname) == 0 || fc.AggStar || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return "", false
		}
		if len(fc.Funcname) == 2 && !strings.EqualFold(fc.Funcname[0].GetString_().GetSval(), "pg_catalog") {
			return "", false
		}
		var args []string
		for _, a := range fc.Args {
			s, ok := constText(a)
			if !ok {
				return "", false
			}
			args = append(args, s)
		}
		switch strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval()) {
		case "concat":
			return strings.Join(args, ""), true
		case "concat_ws":
			if len(args) == 0 {
				return "", false
			}
			return strings.Join(args[1:], args[0]), true
		case "format":
			if len(args) == 0 {
				return "", false
			}
			return formatConst(args[0], args[1:])
		}
	}
	return "", false
}

// formatConst evaluates format() with constant arguments for the plain
// conversions %s, %I, %L and %%; anything else (positions, widths) is not
// evaluated. NULL arguments are not told apart from empty strings: the
// result only has to parse to what the server would run, up to literals.
func formatConst(f string, args []string) (string, bool) {
	var b strings.Builder
	next := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return "", false
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(args) {
			return "", false
		}
		a := args[next]
		next++
		switch f[i] {
		case 's':
			b.WriteString(a)
		case 'I':
			// quote_ident quotes only when needed; quoting always names
			// the same identifier.
			b.WriteString(`"` + strings.ReplaceAll(a, `"`, `""`) + `"`)
		case 'L':
			if strings.Contains(a, `\`) {
				b.WriteString(`E'` + strings.ReplaceAll(strings.ReplaceAll(a, `\`, `\\`), `'`, `''`) + `'`)
			} else {
				b.WriteString(`'` + strings.ReplaceAll(a, `'`, `''`) + `'`)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// scanBody looks through the text of a body the engine cannot parse (a
// language other than PL/pgSQL and SQL): it records the functions called
// and a COPY ... PROGRAM. It is lexical and only a fallback: such a body is
// unparsed anyway, the scan only lets a more specific rule name it.
func (w *walker) scanBody(src string) {
	sawCopy := false
	for i := 0; i < len(src); {
		c := src[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		start := i
		for i < len(src) && (isIdentPart(src[i]) || src[i] == '.') {
			i++
		}
		word := src[start:i]
		switch {
		case strings.EqualFold(word, "copy"):
			sawCopy = true
		case sawCopy && strings.EqualFold(word, "program"):
			w.f.Copy |= engine.CopyProgram
		}
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r' || src[j] == '\f' || src[j] == '\v' || src[j] == '"') {
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
