package pgsql

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	pgparser "github.com/pganalyze/pg_query_go/v5/parser"

	"github.com/sqlfw/sqlfw/engine"
)

const parseErrorReason = "statement could not be parsed"

// analyze parses text and collects the facts of every statement in it.
func analyze(text string) *engine.TextFacts {
	return analyzeLex(text, prescan(text, 0))
}

func analyzeLex(text string, lex engine.LexStats) *engine.TextFacts {
	tree, bad := parseText(text, lex)
	if bad != nil {
		return bad
	}
	tf := treeFacts(tree, lex)
	tf.SQLOps = sqlOps(tree, text) // sqlprepare.go
	for _, op := range tf.SQLOps {
		// An EXECUTE runs a prepared statement, which may change the
		// path (searchpath.go).
		if op.Kind == engine.SQLExecute && op.Stmt < len(tf.Stmts) {
			tf.Stmts[op.Stmt].PathChange = engine.PathUnknown
		}
	}
	return tf
}

// parseText parses text; when it cannot, it returns the facts of a parse
// error instead of a tree.
func parseText(text string, lex engine.LexStats) (*pg_query.ParseResult, *engine.TextFacts) {
	// The parser reads a C string: it would stop at a NUL byte and judge only
	// the text before it. PostgreSQL rejects such messages too.
	if strings.IndexByte(text, 0) >= 0 {
		return nil, &engine.TextFacts{ParseError: true, ParseReason: parseErrorReason + " (NUL byte)", Lex: lex}
	}
	tree, err := parseSQL(text)
	if err != nil {
		// The parser's message quotes the text near the error, so only the
		// position is kept.
		reason := parseErrorReason
		var pe *pgparser.Error
		if errors.As(err, &pe) {
			if strings.HasPrefix(pe.Message, "memory exhausted") || strings.Contains(pe.Message, "stack depth") {
				reason = "statement nests deeper than the parser's stack limit"
			}
			if pe.Cursorpos > 0 {
				reason += " (at byte " + strconv.Itoa(pe.Cursorpos) + ")"
			}
		}
		return nil, &engine.TextFacts{ParseError: true, ParseReason: reason, Lex: lex}
	}
	return tree, nil
}

// parseSQL parses text as PostgreSQL does: where pg_query stops at a
// comment between two words the grammar reads together, the text is
// parsed again without it (lookaheadComments).
func parseSQL(text string) (*pg_query.ParseResult, error) {
	tree, err := pg_query.Parse(text)
	if err != nil {
		if alt, ok := lookaheadComments(text); ok {
			if t, err2 := pg_query.Parse(alt); err2 == nil {
				return t, nil
			}
		}
	}
	return tree, err
}

// lookaheadComments is text with the comments blanked that stand right
// after a word PostgreSQL's grammar reads together with the next one (NOT
// BETWEEN/IN/LIKE/ILIKE/SIMILAR, NULLS FIRST/LAST, WITH TIME/ORDINALITY,
// WITHOUT TIME, FORMAT JSON), and whether there was one. PostgreSQL's
// scanner drops comments before that lookahead; libpg_query's returns
// them as tokens (for its scan), and its lookahead reads the comment in
// place of the next word, so NOT/**/BETWEEN, which PostgreSQL runs, would
// be a parse error. The comments are found by the same scanner and
// replaced by as many blanks, so the positions stay those of text and the
// tree is the one PostgreSQL builds.
func lookaheadComments(text string) (string, bool) {
	if !strings.Contains(text, "/*") && !strings.Contains(text, "--") {
		return "", false
	}
	sc, err := pg_query.Scan(text)
	if err != nil {
		return "", false
	}
	var b []byte
	prev := pg_query.Token_NUL
	for _, t := range sc.Tokens {
		switch t.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			switch prev {
			case pg_query.Token_NOT, pg_query.Token_NULLS_P, pg_query.Token_WITH, pg_query.Token_WITHOUT, pg_query.Token_FORMAT:
				if t.Start < 0 || t.End > int32(len(text)) || t.Start >= t.End {
					return "", false
				}
				if b == nil {
					b = []byte(text)
				}
				for i := t.Start; i < t.End; i++ {
					if b[i] != '\n' {
						b[i] = ' '
					}
				}
			}
			continue // the word before the comment stays the one looked after
		}
		prev = t.Token
	}
	if b == nil {
		return "", false
	}
	return string(b), true
}

// treeFacts collects the facts of every statement of a parse tree.
func treeFacts(tree *pg_query.ParseResult, lex engine.LexStats) *engine.TextFacts {
	tf := &engine.TextFacts{Stmts: make([]engine.StmtFacts, 0, len(tree.Stmts)), Lex: lex}
	var w walker
	var prev engine.KindSet
	var slept float64
	stacked := false
	afterApp := false // an application statement came before
	for _, raw := range tree.Stmts {
		f := w.statement(raw.GetStmt())
		// A catalog or server-information read, or heavy work, stacked
		// after an application statement is how an injection that can
		// stack reads the server (probes.go).
		if afterApp {
			f.Probes |= w.stackProbe
			if f.SeriesRows >= heavySeriesRows {
				f.TimeProbe = true
			}
		}
		if w.lastApp && f.Kind != engine.KindDDL && f.Kind != engine.KindTransaction && f.Kind != engine.KindSetStmt {
			afterApp = true
		}
		f.Loc, f.Length = raw.StmtLocation, raw.StmtLen
		f.PrevKinds = prev
		w.afterStatement(raw.GetStmt(), &f) // body.go
		pathChange(raw.GetStmt(), &f)       // searchpath.go
		reowned(raw.GetStmt(), &f)          // reowned.go
		// A SELECT that reads no relation (SELECT pg_advisory_lock(1),
		// SELECT set_config(...)) is how migration scripts start, not an
		// application query an injection could extend.
		if f.Kind != engine.KindSelect || len(f.Tables) > 0 {
			prev |= 1 << f.Kind
		}
		// A sleep stacked after another statement (not BEGIN, SET or a
		// sleep) tells an injection's author that stacking works, and how
		// long the first one took.
		if stacked && sleeps(&f) {
			f.TimeProbe = true
		}
		if f.Kind != engine.KindTransaction && f.Kind != engine.KindSetStmt && !(sleeps(&f) && loneSleep(raw.GetStmt())) {
			stacked = true
		}
		// Sleeps of one message add up: five lone pg_sleep(5) are 25 s.
		slept += f.SleepSeconds
		if slept > longSleepSeconds {
			f.Effects |= engine.EffLongSleep
		}
		tf.Stmts = append(tf.Stmts, f)
	}
	return tf
}

// Frame flags: the context a node is in.
const (
	inPredicate   uint8 = 1 << iota // under a WHERE, HAVING, JOIN ON or CASE WHEN condition
	inFuncBody                      // under a CREATE FUNCTION ... BEGIN ATOMIC body (runs later, when called)
	inConditional                   // evaluated or not depending on data: CASE, AND/OR, COALESCE
	inPlanOnly                      // under EXPLAIN without ANALYZE: planned, never run
)

type frame struct {
	m     any
	flags uint8
	scope *cteScope // WITH names visible at this node
}

// cteScope is one WITH clause's names visible to a subtree, and the
// enclosing clause's.
type cteScope struct {
	names  []string
	parent *cteScope
}

func (sc *cteScope) has(name string) bool {
	for ; sc != nil; sc = sc.parent {
		if slices.Contains(sc.names, name) {
			return true
		}
	}
	return false
}

// walker collects facts from one parse tree. It walks iteratively with an
// explicit stack, so nesting depth costs heap, never goroutine stack; the
// stack is reused across statements. Children are found by pushChildren,
// generated from pg_query's types so that no node type is missed; each child
// inherits its parent's context flags, and visit can mark children (a WHERE
// clause) with more.
//
//go:generate go run walkgen.go
type walker struct {
	stack   []frame
	flags   uint8                // flags of the node whose children are being pushed
	targets []*pg_query.RangeVar // relations a statement writes, seen before their RangeVar is visited
	f       *engine.StmtFacts
	// Children of the current node that get extra flags (set by visit).
	mark      [3]*pg_query.Node
	markFlags uint8
	allFlags  uint8 // flags for every child of the current node (set by visit)
	scope     *cteScope
	withScope *pg_query.WithClause // the current node's WITH (set by visit)
	cteList   *pg_query.WithClause // the current node, a WITH clause (set by visit)

	// cteDefs maps WITH names seen so far to their queries, for set
	// operations whose arms read a CTE.
	cteDefs map[string][]*pg_query.Node
	cteMemo map[string]bool // cteProbes' answers
	// settingRows: set_config calls whose name argument is a pg_settings
	// row's name fixed by the WHERE (walker.settingRow).
	settingRows map[*pg_query.FuncCall]string

	seenT  map[engine.TableRef]struct{}
	seenF  map[engine.FuncRef]struct{}
	seenC  map[engine.ColRef]struct{}
	setops map[*pg_query.SelectStmt]struct{} // set-operation nodes already counted
	sub    *walker                           // for subtree scans and DO bodies
	// probeHint: the statement has a node the probe search needs
	// (probeNode); stackProbe: what the last statement read that a
	// statement stacked after an application's must not (stackedRead).
	probeHint  bool
	stackProbe engine.ProbeSet
	lastApp    bool // the last statement read or wrote an application table
	depth      int  // nesting of code in strings (body.go)
	// inBody: the walker analyses stored code as it will run
	// (storedBody): what a merged statement reads counts as a kind too.
	inBody bool
	msg    *msgState // what earlier statements of the message created (body.go)
}

func (w *walker) push(m any) { w.stack = append(w.stack, frame{m: m, flags: w.flags, scope: w.scope}) }

func (w *walker) statement(n *pg_query.Node) engine.StmtFacts {
	var f engine.StmtFacts
	if n == nil {
		return f
	}
	f.Kind = topKind(n)
	f.Kinds = 1 << f.Kind
	if f.Kind == engine.KindDDL || f.Kind == engine.KindDCL || f.Kind == engine.KindTruncate {
		f.Verb, f.Object = ddlInfo(n)
	}
	if n.GetExplainStmt() != nil {
		f.Kinds |= 1 << engine.KindExplain
	}
	if f.Kind == engine.KindDDL && f.Verb == engine.VerbNone && selectInto(n) {
		f.Verb, f.Object = engine.VerbCreate, "table"
	}
	w.f = &f
	w.targets = w.targets[:0]
	if w.seenT == nil {
		w.seenT = map[engine.TableRef]struct{}{}
		w.seenF = map[engine.FuncRef]struct{}{}
		w.seenC = map[engine.ColRef]struct{}{}
		w.setops = map[*pg_query.SelectStmt]struct{}{}
		w.cteDefs = map[string][]*pg_query.Node{}
	} else {
		clear(w.seenT)
		clear(w.seenF)
		clear(w.seenC)
		clear(w.setops)
		clear(w.cteDefs)
		clear(w.settingRows)
		clear(w.cteMemo)
	}
	w.probeHint = false
	w.stack = append(w.stack[:0], frame{m: n})
	for len(w.stack) > 0 {
		fr := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.flags, w.scope = fr.flags, fr.scope
		w.markFlags, w.allFlags, w.withScope = 0, 0, nil
		w.visit(fr.m)
		w.measureNode(fr.m)
		base := len(w.stack)
		w.pushChildren(fr.m)
		if w.withScope != nil {
			w.scopeChildren(base)
		}
		if w.cteList != nil {
			w.scopeCTEs(base)
			w.cteList = nil
		}
		if w.allFlags != 0 {
			for i := base; i < len(w.stack); i++ {
				w.stack[i].flags |= w.allFlags
			}
		}
		if w.markFlags != 0 {
			for i := base; i < len(w.stack); i++ {
				for _, mk := range w.mark {
					if mk != nil && w.stack[i].m == any(mk) {
						w.stack[i].flags |= w.markFlags
					}
				}
			}
			w.mark = [3]*pg_query.Node{}
		}
	}
	// A sleep that runs now is a probe unless the statement is nothing
	// but the sleep (a DDL statement's sleeps run when its object is used).
	if !f.TimeProbe && sleeps(&f) && (len(f.Tables) > 0 || (f.Kind != engine.KindDDL && !loneSleep(n) && !loneSleepDo(n))) {
		f.TimeProbe = true
	}
	w.stackProbe, w.lastApp = w.probeSearch(n, &f) // probes.go
	f.Effects = effectsOf(&f)
	w.f = nil
	return f
}

// scopeChildren gives the children just pushed (from base) of a node with
// a WITH clause the scope of its names: the statement's other parts see
// all of them; CTE i's own query sees the ones before it, or all of them
// under WITH RECURSIVE. The WITH clause itself keeps the outer scope.
func (w *walker) scopeChildren(base int) {
	wc := w.withScope
	names := make([]string, 0, len(wc.Ctes))
	for _, c := range wc.Ctes {
		names = append(names, strings.ToLower(c.GetCommonTableExpr().GetCtename()))
	}
	inner := &cteScope{names: names, parent: w.scope}
	for i := base; i < len(w.stack); i++ {
		if w.stack[i].m != any(wc) {
			w.stack[i].scope = inner
		}
	}
}

// scopeCTEs gives each CTE query of the WITH clause just visited the names
// it can see.
func (w *walker) scopeCTEs(base int) {
	wc := w.cteList
	for i := base; i < len(w.stack); i++ {
		for k, c := range wc.Ctes {
			if w.stack[i].m != any(c) {
				continue
			}
			n := k
			if wc.Recursive {
				n = len(wc.Ctes)
			}
			if n > 0 {
				names := make([]string, 0, n)
				for _, d := range wc.Ctes[:n] {
					names = append(names, strings.ToLower(d.GetCommonTableExpr().GetCtename()))
				}
				w.stack[i].scope = &cteScope{names: names, parent: w.scope}
			}
		}
	}
}

// markChildren gives the listed children (once pushed) the flag.
func (w *walker) markChildren(flag uint8, nodes ...*pg_query.Node) {
	w.markFlags = flag
	copy(w.mark[:], nodes)
}

// visit records the facts a single node contributes. Parents are visited
// before children, so write targets are known when their RangeVar comes up.
func (w *walker) visit(m any) {
	f := w.f
	// Code that runs when a function is called, not now, or that EXPLAIN
	// only plans.
	later := w.flags&(inFuncBody|inPlanOnly) != 0
	w.visitEffects(m)
	if !w.probeHint && probeNode(m) {
		w.probeHint = true
	}
	switch n := m.(type) {
	case *pg_query.RangeVar:
		alias := ""
		if n.Alias != nil {
			alias = n.Alias.Aliasname
		}
		write := w.isTarget(n)
		t := engine.TableRef{Schema: strings.ToLower(n.Schemaname), Name: strings.ToLower(n.Relname), Alias: strings.ToLower(alias), Write: write}
		t.CTE = !write && t.Schema == "" && w.scope.has(t.Name)
		w.addTable(t)
	case *pg_query.ColumnRef:
		w.column(n.Fields)
	case *pg_query.FuncCall:
		w.funcName(n.Funcname)
		w.execArgs(n) // body.go: functions that run their text argument
		w.call(n)
	case *pg_query.TypeCast:
		if namesFunction(n) {
			if s, k := constValue(n.Arg); k == constLiteral {
				w.regprocName(s)
			}
		}
	case *pg_query.CaseExpr, *pg_query.BoolExpr, *pg_query.CoalesceExpr:
		w.allFlags = inConditional
	case *pg_query.SelectStmt:
		w.with(n.WithClause)
		if n.WithClause != nil {
			w.withScope = n.WithClause
		}
		w.settingRow(n)
		if n.Op != pg_query.SetOperation_SETOP_NONE && n.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			w.setOperation(n)
		}
		if len(n.FromClause) > 1 {
			f.Joins += int32(len(n.FromClause) - 1)
		}
		w.predicates(n.WhereClause, n.HavingClause)
	case *pg_query.JoinExpr:
		f.Joins++
		w.predicates(n.Quals, nil)
	case *pg_query.CaseWhen:
		w.markChildren(inPredicate, n.Expr)
		w.allFlags = inConditional
	case *pg_query.WithClause:
		w.cteList = n
	case *pg_query.CommonTableExpr:
		f.CTEs++
		f.CTENames = engine.AppendUnique(f.CTENames, strings.ToLower(n.Ctename))
	case *pg_query.InsertStmt:
		w.with(n.WithClause)
		if n.WithClause != nil {
			w.withScope = n.WithClause
		}
		if !later {
			f.Kinds |= 1 << engine.KindInsert
		}
		w.target(n.Relation)
	case *pg_query.UpdateStmt:
		w.with(n.WithClause)
		if n.WithClause != nil {
			w.withScope = n.WithClause
		}
		if !later {
			f.Kinds |= 1 << engine.KindUpdate
			if unfilteredWhere(n.WhereClause, n.Relation) {
				f.Unfiltered |= 1 << engine.KindUpdate
			} else if cols := notNullWhere(n.WhereClause, n.Relation); len(cols) > 0 {
				f.NotNullWhere = append(f.NotNullWhere, engine.NotNullCond{Kind: engine.KindUpdate, Schema: strings.ToLower(n.Relation.Schemaname), Table: strings.ToLower(n.Relation.Relname), Cols: cols})
			}
		}
		w.target(n.Relation)
		w.predicates(n.WhereClause, nil)
	case *pg_query.DeleteStmt:
		w.with(n.WithClause)
		if n.WithClause != nil {
			w.withScope = n.WithClause
		}
		if !later {
			f.Kinds |= 1 << engine.KindDelete
			if lockTableReset(n) {
				// not a whole-table write (filters.go); the rest is judged
			} else if unfilteredWhere(n.WhereClause, n.Relation) {
				f.Unfiltered |= 1 << engine.KindDelete
			} else if cols := notNullWhere(n.WhereClause, n.Relation); len(cols) > 0 {
				f.NotNullWhere = append(f.NotNullWhere, engine.NotNullCond{Kind: engine.KindDelete, Schema: strings.ToLower(n.Relation.Schemaname), Table: strings.ToLower(n.Relation.Relname), Cols: cols})
			}
		}
		w.target(n.Relation)
		w.predicates(n.WhereClause, nil)
	case *pg_query.MergeStmt:
		w.with(n.WithClause)
		if n.WithClause != nil {
			w.withScope = n.WithClause
		}
		if !later {
			f.Kinds |= 1<<engine.KindMerge | mergeUnfiltered(n) // an update or delete of every row is one
			f.Unfiltered |= mergeUnfiltered(n)
		}
		w.target(n.Relation)
		w.predicates(n.JoinCondition, nil)
	case *pg_query.CopyStmt:
		switch {
		case n.IsProgram:
			f.Copy |= engine.CopyProgram
		case n.Filename != "":
			f.Copy |= engine.CopyFile
		default:
			f.Copy |= engine.CopyStdio
		}
		if n.IsFrom {
			f.CopyDir |= engine.CopyFrom
			w.target(n.Relation)
		} else {
			f.CopyDir |= engine.CopyTo
		}
	case *pg_query.TruncateStmt:
		for _, r := range n.Relations {
			w.target(r.GetRangeVar())
		}
	case *pg_query.CreateStmt:
		w.target(n.Relation)
	case *pg_query.AlterTableStmt:
		w.target(n.Relation)
	case *pg_query.IndexStmt:
		w.target(n.Relation)
	case *pg_query.RenameStmt:
		w.target(n.Relation)
	case *pg_query.ViewStmt:
		w.target(n.View)
		w.storedQuery(ofView, n.Query) // body.go
	case *pg_query.IntoClause:
		w.target(n.Rel)
	case *pg_query.CreateTableAsStmt:
		if n.Objtype == pg_query.ObjectType_OBJECT_MATVIEW {
			w.storedQuery(ofMatView, n.Query) // body.go: REFRESH runs it again
		}
	case *pg_query.RuleStmt:
		w.target(n.Relation)
		w.storedQuery(ofRule, n.Actions...) // body.go
	case *pg_query.CreateTrigStmt:
		// The trigger function runs on every later write to the table.
		w.target(n.Relation)
		w.funcName(n.Funcname)
	case *pg_query.CreateEventTrigStmt:
		w.funcName(n.Funcname)
	case *pg_query.DropStmt:
		w.dropped(n)
		w.catalogObjects(n.Objects...)
	case *pg_query.VariableSetStmt:
		if n.Name != "" {
			name := strings.ToLower(n.Name)
			if n.Kind == pg_query.VariableSetKind_VAR_SET_VALUE {
				values, known := constStrings(n.Args)
				w.setting(name, values, known)
			} else {
				f.Settings = engine.AppendUnique(f.Settings, name)
			}
		}
	case *pg_query.ExplainStmt:
		if !explainAnalyze(n) {
			w.markChildren(inPlanOnly, n.Query)
		}
	case *pg_query.CreateExtensionStmt:
		f.Extensions = engine.AppendUnique(f.Extensions, strings.ToLower(n.Extname))
	case *pg_query.CreatePLangStmt:
		f.Languages = engine.AppendUnique(f.Languages, strings.ToLower(n.Plname))
		w.funcName(n.Plhandler)
		w.funcName(n.Plinline)
		w.funcName(n.Plvalidator)
	case *pg_query.GrantRoleStmt:
		if n.IsGrant {
			for _, r := range n.GrantedRoles {
				if ap := r.GetAccessPriv(); ap != nil {
					f.Roles = engine.AppendUnique(f.Roles, strings.ToLower(ap.PrivName))
				} else if rs := r.GetRoleSpec(); rs != nil {
					f.Roles = engine.AppendUnique(f.Roles, strings.ToLower(rs.Rolename))
				}
			}
		}
	case *pg_query.CreateRoleStmt:
		w.roleOptions(n.Options)
		w.roleMembership(n.Options, "")
	case *pg_query.AlterRoleStmt:
		w.roleOptions(n.Options)
		if n.Action == 1 && n.Role != nil { // ALTER GROUP g ADD USER u grants g to u
			w.roleMembership(n.Options, strings.ToLower(n.Role.Rolename))
		}
	case *pg_query.DoStmt:
		w.doStmt(n) // body.go
	case *pg_query.CreateFunctionStmt:
		w.createFunction(n) // body.go
		w.createdFunc(n.Funcname)
	}
}

// predicates checks WHERE/HAVING/ON clauses for tautologies and marks them,
// so that functions called inside are known to be in a predicate.
func (w *walker) predicates(a, b *pg_query.Node) {
	if orTautology(a, 0) || orTautology(b, 0) {
		w.f.Tautology = true
	}
	if a != nil || b != nil {
		w.markChildren(inPredicate, a, b)
	}
}

func (w *walker) roleOptions(opts []*pg_query.Node) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		name := d.Defname
		if name == "isreplication" {
			name = "replication"
		}
		bit := engine.RoleAttr(name)
		if bit == 0 {
			continue
		}
		on := true
		switch a := d.Arg.GetNode().(type) {
		case *pg_query.Node_Boolean:
			on = a.Boolean.Boolval
		case *pg_query.Node_Integer:
			on = a.Integer.Ival != 0
		}
		if on {
			w.f.RoleAttrs |= bit
		}
	}
}

func isSleep(name string) bool {
	return name == "pg_sleep" || name == "pg_sleep_for" || name == "pg_sleep_until"
}

// setOperation counts the arms of a UNION/INTERSECT/EXCEPT tree (once, from
// its root) and flags trees that mix arms reading system catalogs with arms
// that do not: the shape of UNION-based catalog probing.
func (w *walker) setOperation(root *pg_query.SelectStmt) {
	if _, done := w.setops[root]; done {
		return
	}
	var catalog, other bool
	todo := []*pg_query.SelectStmt{root}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s == nil {
			continue
		}
		if s.Op != pg_query.SetOperation_SETOP_NONE && s.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			w.setops[s] = struct{}{}
			todo = append(todo, s.Larg, s.Rarg)
			continue
		}
		w.f.UnionArms++
		if w.touchesCatalog(s) {
			catalog = true
		} else if len(s.FromClause) > 0 {
			// An arm of constants (UNION SELECT 'ALL', VALUES (...)) is
			// neither the application's query nor a probe.
			other = true
		}
	}
	if catalog && other {
		w.f.CatalogUnion = true
	}
}

// touchesCatalog reports whether a set operation's arm probes the system:
// it reads a catalog relation (not a statistics view: see probesCatalog),
// a CTE that does, or calls a function that returns catalog or server data.
func (w *walker) touchesCatalog(s *pg_query.SelectStmt) bool {
	if w.sub == nil {
		w.sub = &walker{}
	}
	return w.probes(w.sub, s)
}

// probes walks root on sw's stack above what is already there (a CTE's
// check runs inside an arm's), so one stack serves every level.
func (w *walker) probes(sw *walker, root any) bool {
	base := len(sw.stack)
	sw.stack = append(sw.stack, frame{m: root})
	for len(sw.stack) > base {
		m := sw.stack[len(sw.stack)-1].m
		sw.stack = sw.stack[:len(sw.stack)-1]
		probe := false
		switch n := m.(type) {
		case *pg_query.RangeVar:
			schema, name := strings.ToLower(n.Schemaname), strings.ToLower(n.Relname)
			// A WITH name hides a relation only in its own scope, which the
			// statement-wide cteDefs does not know: a catalog's name is a
			// probe whether or not some CTE is also called that.
			probe = probesCatalog(schema, name)
			if _, ok := w.cteDefs[name]; ok && schema == "" && !probe {
				if w.cteProbes(sw, name) {
					sw.stack = sw.stack[:base]
					return true
				}
				continue
			}
		case *pg_query.FuncCall:
			schema, name := lastTwo(n.Funcname)
			probe = (schema == "" || schema == "pg_catalog") && catalogDataFunc(name)
			if probe && name == "current_setting" && len(n.Args) > 0 {
				// An application's own setting (current_setting('app.tenant'),
				// row-level security's idiom) is not server data.
				if v, k := constValue(n.Args[0]); k == constLiteral && strings.Contains(v, ".") {
					probe = false
				}
			}
		case *pg_query.SQLValueFunction:
			switch n.Op {
			case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER,
				pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
				pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
				probe = true
			}
		}
		if probe {
			sw.stack = sw.stack[:base]
			return true
		}
		sw.pushChildren(m)
	}
	return false
}

// cteProbes reports whether a CTE's query probes, once per name and
// statement (however many arms read it); a CTE that reads itself
// (WITH RECURSIVE) counts as not probing while it is being checked.
func (w *walker) cteProbes(sw *walker, name string) bool {
	if v, ok := w.cteMemo[name]; ok {
		return v
	}
	if w.cteMemo == nil {
		w.cteMemo = map[string]bool{}
	}
	w.cteMemo[name] = false
	r := false
	for _, d := range w.cteDefs[name] {
		if w.probes(sw, d) {
			r = true
			break
		}
	}
	w.cteMemo[name] = r
	return r
}

// probesCatalog: a catalog relation other than the statistics views
// (pg_stat_*, pg_statio_*), which dashboards put next to application
// tables. pg_stats and pg_statistic hold column values and stay catalog.
func probesCatalog(schema, name string) bool {
	return isCatalog(schema, name) && !isStatsView(schema, name)
}

func isStatsView(schema, name string) bool {
	return (schema == "" || schema == "pg_catalog") && (strings.HasPrefix(name, "pg_stat_") || strings.HasPrefix(name, "pg_statio_"))
}

// catalogDataFunc: functions that return what a probe wants to know about
// the server: its version and settings, object definitions (pg_get_*),
// privileges (has_*_privilege), addresses.
func catalogDataFunc(name string) bool {
	switch name {
	case "version", "current_setting", "pg_has_role", "current_schemas", "inet_server_addr", "inet_server_port",
		"current_database", "current_user", "session_user", "inet_client_addr", "pg_backend_pid",
		"pg_postmaster_start_time", "pg_conf_load_time", "pg_current_logfile", "pg_describe_object",
		"obj_description", "col_description", "shobj_description", "pg_read_file", "pg_ls_dir",
		"pg_show_all_settings", "pg_options_to_table":
		return true
	}
	return strings.HasPrefix(name, "pg_get_") || strings.HasPrefix(name, "pg_identify_object") ||
		(strings.HasPrefix(name, "has_") && strings.HasSuffix(name, "_privilege"))
}

// isCatalog: pg_catalog and information_schema, and unqualified pg_* names,
// which resolve to pg_catalog first.
func isCatalog(schema, name string) bool {
	switch schema {
	case "pg_catalog", "information_schema":
		return true
	case "":
		return strings.HasPrefix(name, "pg_")
	}
	return false
}

func (w *walker) target(r *pg_query.RangeVar) {
	if r != nil {
		w.targets = append(w.targets, r)
	}
}

func (w *walker) isTarget(r *pg_query.RangeVar) bool {
	for _, t := range w.targets {
		if t == r {
			return true
		}
	}
	return false
}

func (w *walker) table(schema, name, alias string, write bool) {
	w.addTable(engine.TableRef{Schema: strings.ToLower(schema), Name: strings.ToLower(name), Alias: strings.ToLower(alias), Write: write})
}

func (w *walker) addTable(t engine.TableRef) {
	if _, ok := w.seenT[t]; ok {
		return
	}
	w.seenT[t] = struct{}{}
	w.f.Tables = append(w.f.Tables, t)
}

func (w *walker) addFunc(schema, name string) {
	fr := engine.FuncRef{Schema: strings.ToLower(schema), Name: strings.ToLower(name)}
	if _, ok := w.seenF[fr]; ok {
		return
	}
	w.seenF[fr] = struct{}{}
	w.f.Funcs = append(w.f.Funcs, fr)
}

// addColumn records a column reference once.
func (w *walker) addColumn(c engine.ColRef) {
	if _, ok := w.seenC[c]; ok {
		return
	}
	w.seenC[c] = struct{}{}
	w.f.Cols = append(w.f.Cols, c)
}

// column records a column reference: [[schema.]table.]column or a star.
func (w *walker) column(fields []*pg_query.Node) {
	if len(fields) == 0 {
		return
	}
	var c engine.ColRef
	last := fields[len(fields)-1]
	if last.GetAStar() != nil {
		c.Name = "*"
	} else {
		c.Name = strings.ToLower(last.GetString_().GetSval())
	}
	if len(fields) >= 2 {
		c.Qual = strings.ToLower(fields[len(fields)-2].GetString_().GetSval())
	}
	if _, ok := w.seenC[c]; ok {
		return
	}
	w.seenC[c] = struct{}{}
	w.f.Cols = append(w.f.Cols, c)
}

// funcName records a function named by a list of String nodes
// ([catalog.]schema.name).
func (w *walker) funcName(parts []*pg_query.Node) {
	if len(parts) == 0 {
		return
	}
	name := parts[len(parts)-1].GetString_().GetSval()
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2].GetString_().GetSval()
	}
	w.addFunc(schema, name)
}

// dropped records the relations a DROP TABLE/VIEW/... removes; their names
// are lists of String nodes, not RangeVars.
func (w *walker) dropped(n *pg_query.DropStmt) {
	switch n.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW,
		pg_query.ObjectType_OBJECT_MATVIEW, pg_query.ObjectType_OBJECT_FOREIGN_TABLE,
		pg_query.ObjectType_OBJECT_SEQUENCE, pg_query.ObjectType_OBJECT_INDEX:
	default:
		return
	}
	for _, o := range n.Objects {
		items := o.GetList().GetItems()
		if len(items) == 0 {
			continue
		}
		name := items[len(items)-1].GetString_().GetSval()
		schema := ""
		if len(items) >= 2 {
			schema = items[len(items)-2].GetString_().GetSval()
		}
		w.table(schema, name, "", true)
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

// topKind classifies a top-level statement.
func topKind(n *pg_query.Node) engine.StmtKind {
	switch s := n.Node.(type) {
	case *pg_query.Node_SelectStmt:
		if s.SelectStmt.IntoClause != nil {
			return engine.KindDDL // SELECT ... INTO creates a table
		}
		return engine.KindSelect
	case *pg_query.Node_InsertStmt:
		return engine.KindInsert
	case *pg_query.Node_UpdateStmt:
		return engine.KindUpdate
	case *pg_query.Node_DeleteStmt:
		return engine.KindDelete
	case *pg_query.Node_MergeStmt:
		return engine.KindMerge
	case *pg_query.Node_TruncateStmt:
		return engine.KindTruncate
	case *pg_query.Node_CopyStmt:
		return engine.KindCopy
	case *pg_query.Node_VariableSetStmt:
		return engine.KindSetStmt
	case *pg_query.Node_TransactionStmt:
		return engine.KindTransaction
	case *pg_query.Node_CallStmt:
		return engine.KindCall
	case *pg_query.Node_DoStmt:
		return engine.KindDo
	case *pg_query.Node_ExplainStmt:
		// EXPLAIN ANALYZE runs its statement: judge it as that statement.
		if explainAnalyze(s.ExplainStmt) && s.ExplainStmt.Query != nil {
			return topKind(s.ExplainStmt.Query)
		}
		return engine.KindExplain
	case *pg_query.Node_AlterSystemStmt:
		return engine.KindAlterSystem
	case *pg_query.Node_VacuumStmt:
		if s.VacuumStmt.IsVacuumcmd {
			return engine.KindVacuum
		}
		return engine.KindAnalyze
	case *pg_query.Node_IndexStmt, *pg_query.Node_ViewStmt, *pg_query.Node_RuleStmt,
		*pg_query.Node_DefineStmt, *pg_query.Node_RenameStmt, *pg_query.Node_CommentStmt, *pg_query.Node_SecLabelStmt,
		*pg_query.Node_CompositeTypeStmt,
		*pg_query.Node_ImportForeignSchemaStmt, *pg_query.Node_RefreshMatViewStmt:
		return engine.KindDDL
	}
	if isDCL(n) {
		return engine.KindDCL
	}
	// The remaining DDL statements are all named Create*, Alter* or Drop*.
	name := string(n.ProtoReflect().WhichOneof(nodeOneof).Message().Name())
	if strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Alter") || strings.HasPrefix(name, "Drop") {
		return engine.KindDDL
	}
	return engine.KindUtility
}

func explainAnalyze(e *pg_query.ExplainStmt) bool {
	for _, o := range e.Options {
		d := o.GetDefElem()
		if d == nil || d.Defname != "analyze" {
			continue
		}
		if d.Arg == nil {
			return true
		}
		switch a := d.Arg.GetNode().(type) {
		case *pg_query.Node_Boolean:
			return a.Boolean.Boolval
		case *pg_query.Node_String_:
			v := strings.ToLower(a.String_.Sval)
			return v != "false" && v != "off" && v != "0" && v != "no"
		case *pg_query.Node_Integer:
			return a.Integer.Ival != 0
		}
		return true
	}
	return false
}

var nodeOneof = (&pg_query.Node{}).ProtoReflect().Descriptor().Oneofs().ByName("node")
