package mysql

import (
	"errors"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // the value expressions parser.New needs

	"github.com/sqlfw/sqlfw/engine"
)

// parsers pools TiDB parsers: one is ~100 KB of state and not safe for
// concurrent use.
var parsers = sync.Pool{New: func() any { return parser.New() }}

// parseErrorReason starts every parse error's reason; only the position
// follows, never the text the parser quotes (it holds literals).
const parseErrorReason = "statement could not be parsed as MySQL"

// errParserPanic is the parse error of a text TiDB's parser panicked on
// (its test_driver's decimal panics on numbers of more than ~80 digits).
var errParserPanic = errors.New("the parser failed on this text")

// parse parses text with a pooled parser and calls use with the result,
// before the parser goes back to the pool: the statement slice it returns
// is the parser's own and is overwritten by its next parse. A parser that
// panicked is not returned to the pool: its state is unknown.
func parse(text string, use func([]ast.StmtNode, error)) {
	p := parsers.Get().(*parser.Parser)
	stmts, ok, err := parseWith(p, text)
	if !ok {
		use(nil, errParserPanic)
		return
	}
	use(stmts, err)
	parsers.Put(p)
}

func parseWith(p *parser.Parser, text string) (stmts []ast.StmtNode, ok bool, err error) {
	defer func() {
		if recover() != nil {
			stmts, ok, err = nil, false, errParserPanic
		}
	}()
	stmts, _, err = p.ParseSQL(text)
	return stmts, true, err
}

// analyze is Dialect.Analyze: it parses text and fills the facts of each of
// its statements.
func analyze(text string, lex engine.LexStats) *engine.TextFacts {
	tf := analyzeStmts(text, lex, nil)
	definers(text, lex, tf) // definer.go
	storedBodies(text, tf)  // stored.go
	return tf
}

// analyzeStmts is analyze; inspect, when not nil, is called with the
// parsed statements (while they are valid) once the facts are filled.
func analyzeStmts(text string, lex engine.LexStats, inspect func(*engine.TextFacts, []ast.StmtNode)) *engine.TextFacts {
	var tf *engine.TextFacts
	parse(text, func(stmts []ast.StmtNode, err error) {
		tf = stmtFacts(text, lex, stmts, err)
		if inspect != nil {
			inspect(tf, stmts)
		}
	})
	return tf
}

// stmtFacts fills the facts of a parsed text.
func stmtFacts(text string, lex engine.LexStats, stmts []ast.StmtNode, err error) *engine.TextFacts {
	tf := textFacts(text, lex, stmts, err)
	finishLimited(tf.Stmts)         // writes.go
	grantees(tf.Stmts)              // grantee.go
	routineExecutes(text, tf.Stmts) // routineexec.go
	return tf
}

func textFacts(text string, lex engine.LexStats, stmts []ast.StmtNode, err error) *engine.TextFacts {
	tf := &engine.TextFacts{Lex: lex}
	if err != nil {
		if st, ok := composed(text); ok {
			// MariaDB's SET STATEMENT ... FOR a query, whose two parts TiDB
			// parses (unparsed.go): parsed after all.
			tf.Stmts = []engine.StmtFacts{st}
			tf.SQLOps = unparsedOps(text)
			callOps(tf)
			return tf
		}
		if st, ok := immediateParsed(text); ok {
			// EXECUTE IMMEDIATE 'text': the statement text holds.
			tf.Stmts = []engine.StmtFacts{st}
			callOps(tf) // its CALL may EXECUTE a session's name (sqlprepare.go)
			return tf
		}
		if sts, ok := readMariaDB(text); ok {
			// MariaDB's own syntax, read as the server reads it
			// (mariadb.go, body.go).
			tf.Stmts = sts
			stackedByFacts(tf.Stmts)
			tf.SQLOps = unparsedOps(text)
			callOps(tf)
			return tf
		}
		tf.ParseError = true
		tf.ParseReason = parseErrorReason + errPosition(err)
		if what := knownUnparsed(text); what != "" {
			tf.ParseReason += ": sqlfw does not parse " + what
		}
		tf.Stmts = recognize(text)
		tf.SQLOps = unparsedOps(text)
		callOps(tf)
		return tf
	}
	tf.Stmts = make([]engine.StmtFacts, 0, len(stmts))
	var prev engine.KindSet
	loc := 0
	// db: the database a USE earlier in the text selected ("" for an
	// application's); selected once one did, after which the session's
	// database no longer matters.
	db, selected := "", false
	// app: an earlier statement of the text reads or writes an
	// application table (probes.go stackedProbe).
	app := false
	for _, s := range stmts {
		st := engine.StmtFacts{PrevKinds: prev}
		dependent := fillStmtIn(&st, s, 0, db)
		// Statement texts follow each other: "SELECT 1;" then " SELECT 2".
		t := s.Text()
		if strings.HasPrefix(text[loc:], t) {
			st.Loc, st.Length = int32(loc), int32(len(t))
			loc += len(t)
		} else if k := strings.Index(text[loc:], t); k >= 0 && t != "" {
			st.Loc, st.Length = int32(loc+k), int32(len(t))
			loc += k + len(t)
		}
		if st.Kind == engine.KindSelect && st.SleepSeconds > 0 && prev != 0 {
			st.TimeProbe = true // a sleep stacked after another statement
		}
		ownGrants(&st, s) // definer.go
		if !selected && mayDiffer(&st, dependent) {
			inDatabases(&st, s, dependent)
		}
		if app {
			stackedProbe(&st, s)
		}
		app = app || st.Kind != engine.KindUtility && appTable(&st, s)
		if u, ok := s.(*ast.UseStmt); ok {
			db, selected = useDatabase(u.DBName), true
		}
		prev |= 1 << st.Kind
		tf.Stmts = append(tf.Stmts, st)
	}
	tf.SQLOps = sqlOps(tf, stmts)
	// After the statements (sqlOps counts them by index): a parsed
	// procedure's body statements that have a verb of their own
	// (routine.go bodyEntries).
	for _, s := range stmts {
		if p, ok := s.(*ast.ProcedureInfo); ok {
			tf.Stmts = bodyEntries(tf.Stmts, text, p.ProcedureBody)
		}
	}
	return tf
}

// errPosition extracts "line L column C" from a TiDB parse error, whose
// text also quotes the statement near the error.
func errPosition(err error) string {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return ""
	}
	j := strings.Index(msg[i:], " near")
	if j < 0 {
		return ""
	}
	pos := msg[i : i+j]
	for _, c := range pos {
		if !(c == ' ' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return ""
		}
	}
	return " (at " + pos + ")"
}

// fillStmt fills st from the statement s. depth counts PREPARE texts
// analysed inside it.
func fillStmt(st *engine.StmtFacts, s ast.StmtNode, depth int) {
	fillStmtIn(st, s, depth, "")
}

// fillStmtIn is fillStmt with the statement's unqualified names resolved in
// the database db ("": an application's, or none: currentdb.go). It
// reports whether what the statement does depends on that database.
func fillStmtIn(st *engine.StmtFacts, s ast.StmtNode, depth int, db string) bool {
	st.Kind, st.Verb, st.Object = classify(s)
	st.Kinds |= 1 << st.Kind
	planOnly := false
	if ex, ok := s.(*ast.ExplainStmt); ok && ex.Stmt != nil {
		if ex.Analyze {
			// EXPLAIN ANALYZE runs its statement.
			k, _, _ := classify(ex.Stmt)
			st.Kind = k
			st.Kinds |= 1<<k | 1<<engine.KindExplain
		} else {
			planOnly = true
		}
	}
	w := &walker{st: st, depth: depth, db: db, xhex: hexForms(s.Text())}
	w.writes = map[*ast.TableName]bool{}
	w.aliases = map[*ast.TableName]string{}
	s.Accept(w)
	w.finish()
	w.resolve()
	if planOnly {
		planned(st)
	}
	statementEffectsIn(st, s, db)
	probes(st, s, w.probe, w.blind)
	if !planOnly {
		bareParams(st, s) // params.go
	}
	return w.dependent
}

// planned takes from the facts of a plain EXPLAIN what only running its
// statement would do: EXPLAIN UPDATE, DELETE, INSERT and REPLACE plan the
// write and change no row, so they have neither its kind, nor a WHERE-less
// write, nor written tables. What the plan reads stays, and so do the
// effects of its expressions: the optimizer evaluates constant subqueries
// and functions of constants while it plans (EXPLAIN SELECT ... WHERE a =
// (SELECT SLEEP(5)) sleeps).
func planned(st *engine.StmtFacts) {
	st.Kinds &^= 1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete
	st.Unfiltered, st.LimitedWhole = 0, 0
	for i := range st.Tables {
		st.Tables[i].Write = false
	}
}

// walker fills the facts every node of a statement contributes.
type walker struct {
	st    *engine.StmtFacts
	depth int
	// db is the database unqualified names resolve in ("": an
	// application's); dependent is set when a GRANT level or a routine
	// name is unqualified (currentdb.go mayDiffer: the tables are in st).
	db        string
	dependent bool
	writes    map[*ast.TableName]bool   // write targets of INSERT, UPDATE, DELETE, LOAD DATA
	aliases   map[*ast.TableName]string // AS names from the table sources
	sleeps    int
	// data: a sleep or benchmark sits where data decides whether or how
	// long it runs (a condition, CASE, IF, a subquery).
	data     bool
	condNest int
	conds    map[ast.Node]bool // WHERE, HAVING, ON, CASE and IF arguments being walked
	// probe: the statement calls a function or reads a system variable
	// that the probe shapes use (probes.go).
	probe bool
	// blind: a condition has a term whose value is known where query
	// builders put none (blind.go blindCond).
	blind bool
	xhex  map[string]bool // the bytes of the statement's X'...' literals (fold.go folder)
}

func (w *walker) Enter(n ast.Node) (ast.Node, bool) {
	st := w.st
	if w.conds[n] {
		w.condNest++
	}
	if procedural(n) {
		w.procedure(n)
		return n, true
	}
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.OrderBy != nil {
			for _, it := range x.OrderBy.Items {
				if _, col := it.Expr.(*ast.ColumnNameExpr); !col {
					w.probe = true // ORDER BY 1 OR 1=1 (blind.go constOrderItem)
				}
			}
		}
		w.cond(x.Where)
		if x.Having != nil {
			w.cond(x.Having.Expr)
			w.blindHaving(x.Having.Expr)
		}
		if x.SelectIntoOpt != nil {
			switch x.SelectIntoOpt.Tp {
			case ast.SelectIntoOutfile, ast.SelectIntoDumpfile:
				st.Effects |= engine.EffWritesServerFile
				st.Copy |= engine.CopyFile
				st.CopyDir |= engine.CopyTo
			}
		}
		if x.With != nil {
			w.with(x.With)
		}
	case *ast.SetOprStmt:
		if x.With != nil {
			w.with(x.With)
		}
		if x.SelectList != nil {
			st.UnionArms += int32(len(x.SelectList.Selects))
			w.setOpr(x.SelectList.Selects)
			w.probe = true // an arm of constants or UUID() (probes.go unionConstants)
		}
	case *ast.InsertStmt:
		st.Kinds |= 1 << engine.KindInsert
		if x.Table != nil {
			w.markWrites(x.Table.TableRefs)
		}
		if k := w.insertUnfiltered(x); k != 0 { // writes.go
			st.Kinds |= k
			st.Unfiltered |= k
		}
	case *ast.UpdateStmt:
		st.Kinds |= 1 << engine.KindUpdate
		w.cond(x.Where)
		if x.TableRefs != nil && x.TableRefs.TableRefs != nil {
			w.markWrites(x.TableRefs.TableRefs)
			if x.MultipleTable || x.TableRefs.TableRefs.Right != nil {
				w.updateTargets(x)
			}
		}
		if all, limitedAll := w.unfilteredUpdate(x); all { // writes.go
			st.Unfiltered |= 1 << engine.KindUpdate
		} else if limitedAll {
			st.LimitedWhole |= 1 << engine.KindUpdate
		} else if !x.MultipleTable && !limited(x.Limit) && x.TableRefs != nil { // LIMIT 1000000 limits nothing
			w.notNullWhere(st, engine.KindUpdate, x.Where, x.TableRefs.TableRefs) // catalog.go
		}
		if x.With != nil {
			w.with(x.With)
		}
	case *ast.DeleteStmt:
		st.Kinds |= 1 << engine.KindDelete
		if all, limitedAll := w.unfilteredDelete(x); all { // writes.go
			st.Unfiltered |= 1 << engine.KindDelete
		} else if limitedAll {
			st.LimitedWhole |= 1 << engine.KindDelete
		} else if !x.IsMultiTable && !limited(x.Limit) && x.TableRefs != nil {
			w.notNullWhere(st, engine.KindDelete, x.Where, x.TableRefs.TableRefs) // catalog.go
		}
		w.cond(x.Where)
		if x.IsMultiTable && x.Tables != nil {
			for _, t := range x.Tables.Tables {
				w.writes[t] = true
			}
		} else if x.TableRefs != nil {
			w.markWrites(x.TableRefs.TableRefs)
		}
		if x.With != nil {
			w.with(x.With)
		}
	case *ast.LoadDataStmt:
		st.Kinds |= 1<<engine.KindInsert | 1<<engine.KindCopy
		st.CopyDir |= engine.CopyFrom
		if x.FileLocRef == ast.FileLocClient {
			st.Copy |= engine.CopyStdio // the client's file, sent over the connection
		} else {
			st.Copy |= engine.CopyFile
			st.Effects |= engine.EffReadsServerFile
		}
		if x.Table != nil {
			w.writes[x.Table] = true
		}
		if x.OnDuplicate == ast.OnDuplicateKeyHandlingReplace {
			// LOAD DATA ... REPLACE deletes each row whose key a line of
			// the file repeats: the rows it rewrites are the file's,
			// which the engine never sees, so as many as every row of
			// the table (REPLACE ... SELECT of the whole table, writes.go)
			st.Kinds |= 1 << engine.KindDelete
			st.Unfiltered |= 1 << engine.KindDelete
		}
	case *ast.TruncateTableStmt:
		w.write(x.Table)
	// DDL changes the objects it names: they count as written.
	case *ast.CreateTableStmt:
		w.write(x.Table)
	case *ast.AlterTableStmt:
		w.write(x.Table)
	case *ast.DropTableStmt:
		w.write(x.Tables...)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			w.write(tt.OldTable, tt.NewTable)
		}
	case *ast.CreateIndexStmt:
		w.write(x.Table)
	case *ast.DropIndexStmt:
		w.write(x.Table)
	case *ast.CreateViewStmt:
		w.write(x.ViewName)
	case *ast.CreateSequenceStmt:
		w.write(x.Name)
	case *ast.DropSequenceStmt:
		w.write(x.Sequences...)
	case *ast.ProcedureInfo:
		w.routineIn(x.ProcedureName)
		w.routineBody(x.ProcedureBody)
	case *ast.DropProcedureStmt:
		w.routineIn(x.ProcedureName)
	case *ast.Join:
		if x.Right != nil {
			st.Joins++
		}
		if x.On != nil {
			w.cond(x.On.Expr)
		}
	case *ast.TableSource:
		if t, ok := x.Source.(*ast.TableName); ok && x.AsName.L != "" {
			w.aliases[t] = x.AsName.L
		}
	case *ast.TableName:
		ref := engine.TableRef{Schema: x.Schema.L, Name: x.Name.L, Alias: w.aliases[x], Write: w.writes[x]}
		st.Tables = append(st.Tables, ref)
	case *ast.FuncCallExpr:
		w.call(x.Schema.L, x.FnName.L, x.Args)
		switch x.FnName.L {
		case "if", "ifnull", "nullif", "coalesce", "elt", "field", "interval", "greatest", "least":
			for _, a := range x.Args {
				w.markCond(a)
			}
		}
	case *ast.AggregateFuncExpr:
		w.call("", strings.ToLower(x.F), nil)
	case *ast.WindowFuncExpr:
		w.call("", strings.ToLower(x.Name), nil)
	case *ast.ColumnNameExpr:
		if x.Name != nil {
			st.Cols = append(st.Cols, engine.ColRef{Qual: x.Name.Table.L, Name: x.Name.Name.L})
		}
	case *ast.SelectField:
		if x.WildCard != nil {
			st.Cols = append(st.Cols, engine.ColRef{Qual: x.WildCard.Table.L, Name: "*"})
		}
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			if valueOperand(x.L) || valueOperand(x.R) {
				w.probe = true // id = ('a' OR 'b'), SET name = 'x' OR '1'='1' (blind.go)
			}
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
			if comparison(x.L) || comparison(x.R) || literalMatch(x.L) || literalMatch(x.R) || literalValue(x.L) || literalValue(x.R) {
				w.probe = true // (name = 'x') = 'y', id = 1*56 (blind.go)
			}
		default:
			if stringLiteral(x.L) || stringLiteral(x.R) || isBoolLiteral(x.L) || isBoolLiteral(x.R) {
				w.probe = true // '' * '', id = 'a' * 1, 1 - true (blind.go)
			}
		}
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
			if overflow(x.L) || overflow(x.R) {
				w.probe = true // BIGINT overflow (probes.go)
			}
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			st.BoolTerms += 2
			if w.condNest > 0 {
				w.markCond(x.L)
				w.markCond(x.R)
			}
		}
	case *ast.CaseExpr:
		st.BoolTerms += int32(len(x.WhenClauses))
		w.selfCond(x)
		w.probe = true // a CASE choosing by constants (blind.go)
	case *ast.Assignment:
		switch x.Expr.(type) {
		case ast.ValueExpr, ast.ParamMarkerExpr, *ast.ColumnNameExpr:
		default:
			w.probe = true // SET name = 'x' OR '1'='1' (blind.go)
		}
	case *ast.PatternInExpr:
		if x.Sel == nil && len(x.List) == 1 {
			w.probe = true // id = (1 IN (BINARY 'b'))
		}
	case *ast.PatternLikeOrIlikeExpr:
		if comparison(x.Expr) {
			w.probe = true // name = 'A' NOT LIKE 'B' (blind.go)
		}
	case *ast.PatternRegexpExpr:
		if comparison(x.Expr) {
			w.probe = true
		}
	case *ast.SubqueryExpr:
		w.selfCond(x)
		w.probe = true // a scalar subquery matched against a pattern (blind.go)
	case *ast.ShowStmt:
		w.cond(x.Where) // SHOW TABLES WHERE SLEEP(5) sleeps once per row
	case *ast.PrepareStmt:
		w.prepare(x)
	case *ast.BinlogStmt:
		// BINLOG 'base64': binary-log events the server replays (row
		// changes to any table, mysql.global_priv included, and
		// statements), encoded where sqlfw cannot read them
		st.DynamicSQL = true
	case *ast.GrantStmt:
		if grantDependent(x) {
			w.dependent = true
		}
		if mayCreateGrantee(x) {
			st.CreatesGrantee = max(st.CreatesGrantee, engine.GranteeMay)
		}
	case *ast.RevokeStmt:
		if levelDependent(x.Level) {
			w.dependent = true
		}
	case *ast.OptimizeTableStmt:
		// OPTIMIZE and REPAIR (mariadb.go reads it as OPTIMIZE) rebuild
		// the table, REPAIR ... USE_FRM from its definition alone, which
		// may lose its rows: a write (of the catalog, for mysql.*). TiDB's
		// Accept does not visit the tables.
		for _, t := range x.Tables {
			st.Tables = append(st.Tables, engine.TableRef{Schema: t.Schema.L, Name: t.Name.L, Write: true})
		}
	case *ast.AlterDatabaseStmt:
		if x.AlterDefaultDatabase || x.Name.O == "" {
			w.dependent = true // the current database's options
		}
	case *ast.CallStmt:
		if x.Procedure != nil && x.Procedure.Schema.L == "" {
			w.dependent = true // CALL p: the current database's p
		}
	case *ast.VariableAssignment:
		setting(st, x)
	case *ast.VariableExpr:
		if x.IsSystem {
			w.probe = true
		}
	}
	return n, false
}

func (w *walker) Leave(n ast.Node) (ast.Node, bool) {
	if w.conds[n] {
		w.condNest--
	}
	return n, true
}

// routineIn: a routine created or dropped in the server's own schemas
// changes them (mysql.proc).
func (w *walker) routineIn(name *ast.TableName) {
	if name != nil && name.Schema.L == "" {
		w.dependent = true
	}
	if name != nil && systemSchema(w.schemaOf(name)) {
		w.st.Effects |= engine.EffWritesCatalog
	}
}

// write marks tables as written.
func (w *walker) write(ts ...*ast.TableName) {
	for _, t := range ts {
		if t != nil {
			w.writes[t] = true
		}
	}
}

// cond records that e is a condition: a sleep inside it is data-driven,
// and an always-true OR arm in it is a tautology.
func (w *walker) cond(e ast.ExprNode) {
	if e == nil {
		return
	}
	w.markCond(e)
	if w.orTautology(e) {
		w.st.Tautology = true
	} else {
		w.blindCond(e) // an always-true OR arm is no-tautology's
	}
}

// selfCond makes the node being entered a condition.
func (w *walker) selfCond(n ast.Node) {
	if !w.conds[n] {
		w.markCond(n)
		w.condNest++
	}
}

func (w *walker) markCond(n ast.Node) {
	if n == nil {
		return
	}
	if w.conds == nil {
		w.conds = map[ast.Node]bool{}
	}
	w.conds[n] = true
}

// with records the names of WITH queries and whether a recursive one has
// no end.
func (w *walker) with(wc *ast.WithClause) {
	for _, c := range wc.CTEs {
		w.st.CTEs++
		w.st.CTENames = append(w.st.CTENames, c.Name.L)
		if (wc.IsRecursive || c.IsRecursive) && c.Query != nil && unboundedRecursion(c) {
			w.st.SeriesRows = engine.UnboundedRows
		}
	}
}

// unboundedRecursion: a recursive CTE whose recursive arm (one that reads
// the CTE) has no WHERE and no LIMIT anywhere in the CTE. MariaDB's
// max_recursive_iterations defaults to 2^32; MySQL stops at
// cte_max_recursion_depth (1000).
func unboundedRecursion(c *ast.CommonTableExpression) bool {
	so, ok := c.Query.Query.(*ast.SetOprStmt)
	if !ok || so.SelectList == nil || so.Limit != nil || (so.SelectList.Limit != nil) {
		return false
	}
	for _, arm := range so.SelectList.Selects {
		sel, ok := arm.(*ast.SelectStmt)
		if !ok || sel.From == nil || !readsName(sel.From, c.Name.L) {
			continue
		}
		if sel.Where == nil && sel.Limit == nil && sel.Having == nil {
			return true
		}
	}
	return false
}

func readsName(n ast.Node, name string) bool {
	found := false
	n.Accept(visitFunc(func(x ast.Node) {
		if t, ok := x.(*ast.TableName); ok && t.Schema.L == "" && t.Name.L == name {
			found = true
		}
	}))
	return found
}

// visitFunc is an ast.Visitor calling f on every node.
type visitFunc func(ast.Node)

func (f visitFunc) Enter(n ast.Node) (ast.Node, bool) { f(n); return n, false }
func (f visitFunc) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// markWrites marks the tables of a table reference as written.
func (w *walker) markWrites(refs *ast.Join) {
	if refs == nil {
		return
	}
	refs.Accept(visitFunc(func(x ast.Node) {
		if t, ok := x.(*ast.TableName); ok {
			w.writes[t] = true
		}
	}))
}

// updateTargets, for a multi-table UPDATE, keeps as written only the
// tables whose name or alias qualifies a SET column (all when a SET column
// is unqualified).
func (w *walker) updateTargets(x *ast.UpdateStmt) {
	quals := map[string]bool{}
	for _, a := range x.List {
		if a.Column == nil || a.Column.Table.L == "" {
			return
		}
		quals[a.Column.Table.L] = true
	}
	x.TableRefs.TableRefs.Accept(visitFunc(func(n ast.Node) {
		if ts, ok := n.(*ast.TableSource); ok {
			if t, ok := ts.Source.(*ast.TableName); ok {
				w.writes[t] = quals[t.Name.L] || (ts.AsName.L != "" && quals[ts.AsName.L])
			}
		}
	}))
}

// setOpr records a set operation mixing system-schema arms with others.
func (w *walker) setOpr(arms []ast.Node) {
	catalog, other := false, false
	for _, a := range arms {
		c := false
		a.Accept(visitFunc(func(x ast.Node) {
			if t, ok := x.(*ast.TableName); ok && systemSchema(w.schemaOf(t)) {
				c = true
			}
		}))
		if c {
			catalog = true
		} else {
			other = true
		}
	}
	if catalog && other {
		w.st.CatalogUnion = true
	}
}

// systemSchema reports whether s is one of the server's own schemas.
func systemSchema(s string) bool {
	switch s {
	case "information_schema", "mysql", "performance_schema", "sys":
		return true
	}
	return false
}

// call records a function call and its effects.
func (w *walker) call(schema, name string, args []ast.ExprNode) {
	st := w.st
	st.Funcs = append(st.Funcs, engine.FuncRef{Schema: schema, Name: name})
	st.Effects |= funcEffects[name]
	if probeCall(name) {
		w.probe = true
	}
	if w.waitCall(name, args) {
		return
	}
	switch name {
	case "sleep":
		w.sleeps++
		secs, ok := constNumber(args, 0)
		if !ok || secs > longSleepSeconds {
			st.Effects |= engine.EffLongSleep
		}
		if !ok {
			st.TimeProbe = true // a length computed from data
		} else if secs > 0 {
			st.SleepSeconds += secs
		}
		if w.condNest > 0 {
			st.TimeProbe = true
		}
	case "benchmark":
		// Runs an expression n times: a CPU-bound sleep, which only a
		// probe calls.
		st.TimeProbe = true
		st.Effects |= engine.EffLongSleep
	case "repeat", "lpad", "rpad", "space":
		i := 1
		if name == "space" {
			i = 0
		}
		if n, ok := constNumber(args, i); ok && n > 0 {
			b := int64(n)
			if name == "repeat" && len(args) > 0 {
				if v, ok := args[0].(ast.ValueExpr); ok {
					b *= int64(max(1, len(v.GetDatumString())))
				}
			}
			st.StringBytes = max(st.StringBytes, b)
		}
	}
}

// longSleepSeconds is how long a sleep may be before it is a long sleep
// (the same as PostgreSQL's pg_sleep).
const longSleepSeconds = 5

// constNumber returns args[i] as a number when it is a constant.
func constNumber(args []ast.ExprNode, i int) (float64, bool) {
	if i >= len(args) {
		return 0, false
	}
	v, ok := value(args[i])
	if !ok {
		return 0, false
	}
	return toNumber(v)
}

// finish settles what needs the whole statement: CTE references and
// whether a sleep sits next to a table read.
func (w *walker) finish() {
	st := w.st
	for i := range st.Tables {
		t := &st.Tables[i]
		if t.Schema == "" {
			for _, c := range st.CTENames {
				if c == t.Name {
					t.CTE = true
				}
			}
		}
	}
	if w.sleeps > 0 {
		for i := range st.Tables {
			if !st.Tables[i].CTE {
				st.TimeProbe = true
			}
		}
	}
}

// prepare analyses PREPARE name FROM 'text' as the statements the text
// holds; FROM @variable is dynamic SQL.
func (w *walker) prepare(x *ast.PrepareStmt) {
	st := w.st
	if x.SQLVar != nil || x.SQLText == "" {
		st.DynamicSQL = true
		return
	}
	if w.depth >= 4 {
		st.Unparsed = "PREPARE texts nested more than 4 deep"
		return
	}
	text, ok := innerRun(x.SQLText)
	if !ok {
		st.Unparsed = "an executable comment in the text of a PREPARE is not read as the server would"
		return
	}
	if text != x.SQLText {
		w.prepareText(x.SQLText) // TiDB's reading: /*! comments run as MySQL runs them
	}
	w.prepareText(text)
}

// prepareText adds the facts of the statements of a PREPARE's text.
func (w *walker) prepareText(text string) {
	st := w.st
	parse(text, func(stmts []ast.StmtNode, err error) {
		if err != nil {
			st.Unparsed = "the text of a PREPARE could not be parsed"
			// What is certain of it still counts (unparsed.go).
			for _, in := range recognize(text) {
				merge(st, &in)
			}
			return
		}
		for _, s := range stmts {
			switch s.(type) {
			case *ast.PrepareStmt, *ast.ExecuteStmt, *ast.DeallocateStmt:
				// the server refuses them in a PREPARE (ER_UNSUPPORTED_PS);
				// were one run, it would act on a name sqlfw does not follow
				st.Unparsed = "a PREPARE or EXECUTE IMMEDIATE text that prepares, executes or deallocates a prepared statement"
			}
			if _, ok := s.(*ast.UseStmt); ok {
				// its EXECUTE changes the session's database, which the
				// relay follows from a USE text only (lex.go simpleUse)
				st.Unparsed = "a PREPAREd USE changes the database without the relay seeing it"
			}
			var in engine.StmtFacts
			if fillStmtIn(&in, s, w.depth+1, w.db) {
				w.dependent = true
			}
			merge(st, &in)
		}
	})
}

// innerRun returns the text of a PREPARE or EXECUTE IMMEDIATE as a MariaDB
// server of any version runs it: the server reads the executable comments
// of the text it prepares (PREPARE s FROM 'SELECT 1 /*M!100000 ,
// LOAD_FILE(...) */' reads a file), and TiDB's parser reads /*M! ... */ as
// a plain comment. The text is read with every /*!NNNNN and /*M! comment
// MariaDB runs (lex.go, the newest MariaDB); the callers judge TiDB's own
// reading too, which runs the /*!50700-/*!99999 comments MySQL runs and
// MariaDB skips: together they can only deny more. false when the reading
// is refused (lex.go's comment tricks). A text without "/*" is itself.
func innerRun(text string) (string, bool) {
	if !strings.Contains(text, "/*") {
		return text, true
	}
	out, _, _, ok := lexRead([]byte(text), &engine.LexState{ServerVersion: 999999, MariaDB: true})
	return string(out), ok
}

// merge adds what a statement nested in st does to st.
func merge(st, in *engine.StmtFacts) {
	mergeInDatabase(st, in)
	st.Kinds |= in.Kinds
	st.Unfiltered |= in.Unfiltered
	st.LimitedWhole |= in.LimitedWhole
	st.Copy |= in.Copy
	st.CopyDir |= in.CopyDir
	st.Tautology = st.Tautology || in.Tautology
	st.BareParams = append(st.BareParams, in.BareParams...) // one statement: the server prepares no more
	st.BareWhere |= in.BareWhere
	st.BareOr = st.BareOr || in.BareOr
	st.ParamWrite = st.ParamWrite || in.ParamWrite
	st.CatalogUnion = st.CatalogUnion || in.CatalogUnion
	st.TimeProbe = st.TimeProbe || in.TimeProbe
	st.Probes |= in.Probes
	st.DynamicSQL = st.DynamicSQL || in.DynamicSQL
	st.CreatesGrantee = max(st.CreatesGrantee, in.CreatesGrantee)
	st.Effects |= in.Effects
	st.SleepSeconds += in.SleepSeconds
	if st.Unparsed == "" {
		st.Unparsed = in.Unparsed
	}
	if in.Verb != engine.VerbNone && st.Verb == engine.VerbNone {
		st.Verb, st.Object = in.Verb, in.Object
	}
	st.Joins = max(st.Joins, in.Joins)
	st.UnionArms = max(st.UnionArms, in.UnionArms)
	st.CTEs = max(st.CTEs, in.CTEs)
	st.BoolTerms = max(st.BoolTerms, in.BoolTerms)
	st.SeriesRows = max(st.SeriesRows, in.SeriesRows)
	st.StringBytes = max(st.StringBytes, in.StringBytes)
	st.Tables = append(st.Tables, in.Tables...)
	st.Funcs = append(st.Funcs, in.Funcs...)
	st.Cols = append(st.Cols, in.Cols...)
	st.Settings = append(st.Settings, in.Settings...)
	st.Roles = append(st.Roles, in.Roles...)
	st.CTENames = append(st.CTENames, in.CTENames...)
}

// unparsedStatements are statements TiDB's parser has no grammar for, by
// their first words, named in the parse error's reason so that an audit
// trail says what was refused. Matched in order; "*" matches any words up
// to the next pattern word.
var unparsedStatements = []struct{ words, name string }{
	{"install plugin", "INSTALL PLUGIN"},
	{"install soname", "INSTALL SONAME"},
	{"uninstall", "UNINSTALL PLUGIN/SONAME"},
	{"create function * soname", "CREATE FUNCTION ... SONAME"},
	{"create aggregate function", "CREATE AGGREGATE FUNCTION ... SONAME"},
	{"create or replace function * soname", "CREATE FUNCTION ... SONAME"},
	{"create function", "CREATE FUNCTION"},
	{"create or replace function", "CREATE FUNCTION"},
	{"create definer * function", "CREATE FUNCTION"},
	{"create definer * procedure", "CREATE DEFINER ... PROCEDURE"},
	{"drop function", "DROP FUNCTION"},
	{"drop trigger", "DROP TRIGGER"},
	{"drop event", "DROP EVENT"},
	{"alter event", "ALTER EVENT"},
	{"create or replace table", "CREATE OR REPLACE TABLE"},
	{"show engine", "SHOW ENGINE"},
	{"check table", "CHECK TABLE"},
	{"checksum table", "CHECKSUM TABLE"},
	{"repair table", "REPAIR TABLE"},
	{"set statement", "SET STATEMENT ... FOR"},
	{"execute immediate", "EXECUTE IMMEDIATE"},
	{"create trigger", "CREATE TRIGGER"},
	{"create definer * trigger", "CREATE TRIGGER"},
	{"create event", "CREATE EVENT"},
	{"create definer * event", "CREATE EVENT"},
	{"create server", "CREATE SERVER"},
	{"alter server", "ALTER SERVER"},
	{"change master", "CHANGE MASTER"},
	{"change replication", "CHANGE REPLICATION SOURCE"},
	{"start slave", "START SLAVE"},
	{"start replica", "START REPLICA"},
	{"handler", "HANDLER"},
	{"xa", "XA"},
	{"* returning", "RETURNING"},
	{"* system versioning", "system versioning"},
	{"* system_time", "FOR SYSTEM_TIME"},
	{"* dumpfile", "INTO DUMPFILE"},
	{"* json_table", "JSON_TABLE"},
	{"* setval", "SETVAL"},
	{"* rows examined", "LIMIT ROWS EXAMINED"},
}

// knownUnparsed names the statement TiDB could not parse when it is one of
// unparsedStatements, else "".
func knownUnparsed(text string) string {
	var words []string
	for i, n := 0, len(text); i < n && len(words) < 64; {
		c := text[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' {
			j := i
			for j < n && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z' || text[j] == '_' || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			words = append(words, strings.ToLower(text[i:j]))
			i = j
			continue
		}
		if c == '\'' || c == '"' || c == '`' {
			i = quotedStr(text, i, c, c != '`')
			continue
		}
		if c == ';' {
			break
		}
		i++
	}
	for _, u := range unparsedStatements {
		if wordsMatch(words, strings.Fields(u.words)) {
			return u.name
		}
	}
	return ""
}

// wordsMatch matches pattern against the start of words; "*" skips words
// up to the next pattern word.
func wordsMatch(words, pattern []string) bool {
	if len(pattern) == 0 {
		return true
	}
	if pattern[0] == "*" {
		for k := range words {
			if wordsMatch(words[k:], pattern[1:]) {
				return true
			}
		}
		return false
	}
	return len(words) > 0 && words[0] == pattern[0] && wordsMatch(words[1:], pattern[1:])
}

// procedural reports whether n is a part of a stored procedure's body,
// whose Accept does not visit the statements in it ("Store Procedure
// doesn't check the justifiability for statements", TiDB ast/procedure.go).
func procedural(n ast.Node) bool {
	switch n.(type) {
	case *ast.ProcedureBlock, *ast.ProcedureIfInfo, *ast.ProcedureIfBlock, *ast.ProcedureElseIfBlock,
		*ast.ProcedureElseBlock, *ast.SimpleCaseStmt, *ast.SimpleWhenThenStmt, *ast.SearchCaseStmt,
		*ast.SearchWhenThenStmt, *ast.ProcedureRepeatStmt, *ast.ProcedureWhileStmt, *ast.ProcedureLabelBlock,
		*ast.ProcedureLabelLoop, *ast.ProcedureCursor, *ast.ProcedureErrorControl, *ast.ProcedureDecl:
		return true
	}
	return false
}

// procedure walks every node a procedure part holds, found by reflection
// so that no field is missed: the statements of a body are what CALL runs
// later, so they count as the CREATE PROCEDURE's own.
func (w *walker) procedure(n ast.Node) {
	eachChild(n, w.procedureChild)
}

func (w *walker) procedureChild(c ast.Node) {
	if s, ok := c.(ast.StmtNode); ok && !procedural(c) {
		k, _, _ := classify(s)
		w.st.Kinds |= 1 << k
		defer statementEffectsIn(w.st, s, w.db)
	}
	c.Accept(w)
}
