package engine

import (
	"errors"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	pgparser "github.com/pganalyze/pg_query_go/v5/parser"
)

// stmtKind is the coarse class of a statement, as rules name it in `kind:`.
type stmtKind uint8

const (
	kindUtility     stmtKind = iota // anything not listed below (VACUUM, SHOW, LOCK, PREPARE, LISTEN, ...)
	kindSelect                      // SELECT, VALUES, TABLE
	kindInsert                      // INSERT
	kindUpdate                      // UPDATE
	kindDelete                      // DELETE
	kindMerge                       // MERGE
	kindTruncate                    // TRUNCATE
	kindCopy                        // COPY
	kindDDL                         // CREATE, ALTER, DROP, GRANT, REVOKE, COMMENT, ...
	kindSetStmt                     // SET, RESET
	kindTransaction                 // BEGIN, COMMIT, ROLLBACK, SAVEPOINT, ...
	kindCall                        // CALL
	kindDo                          // DO
	kindExplain                     // EXPLAIN
	kindAlterSystem                 // ALTER SYSTEM (writes postgresql.auto.conf)
	numKinds
)

var kindNames = [numKinds]string{
	kindUtility:     "utility",
	kindSelect:      "select",
	kindInsert:      "insert",
	kindUpdate:      "update",
	kindDelete:      "delete",
	kindMerge:       "merge",
	kindTruncate:    "truncate",
	kindCopy:        "copy",
	kindDDL:         "ddl",
	kindSetStmt:     "set",
	kindTransaction: "transaction",
	kindCall:        "call",
	kindDo:          "do",
	kindExplain:     "explain",
	kindAlterSystem: "alter_system",
}

func (k stmtKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// kindSet is a bit set of stmtKind.
type kindSet uint32

func (s kindSet) has(k stmtKind) bool { return s&(1<<k) != 0 }

// copyTarget is a bit set of where a COPY reads from or writes to.
type copyTarget uint8

const (
	copyStdio   copyTarget = 1 << iota // FROM STDIN / TO STDOUT: data travels over the connection
	copyFile                           // a file on the database server
	copyProgram                        // a shell command run by the database server
)

// tableRef is one relation a statement names. Names are lower-cased.
type tableRef struct {
	schema string // "" when the statement did not qualify the name
	name   string
	write  bool
}

// funcRef is one function a statement calls. Names are lower-cased.
type funcRef struct {
	schema string // "" when unqualified
	name   string
}

// stmtFacts is what rules look at for one statement. It depends only on the
// statement text, so it is cached by text; rules add the session each time.
type stmtFacts struct {
	kind  stmtKind // the top-level statement's kind
	kinds kindSet  // kind plus every data-modifying statement nested inside (CTE, EXPLAIN, PREPARE, RULE)
	// unfiltered holds kindUpdate and/or kindDelete when an UPDATE or
	// DELETE without WHERE occurs anywhere in the statement.
	unfiltered kindSet
	copy       copyTarget
	tables     []tableRef
	funcs      []funcRef
}

// textFacts is the analysis of one protocol message's SQL text.
type textFacts struct {
	stmts      []stmtFacts
	parseError bool
	// parseReason is literal-free: it carries the cursor position only.
	parseReason string
}

const parseErrorReason = "statement could not be parsed"

// analyze parses text and collects the facts of every statement in it.
func analyze(text string) *textFacts {
	// The parser reads a C string: it would stop at a NUL byte and judge only
	// the text before it. PostgreSQL rejects such messages too.
	if strings.IndexByte(text, 0) >= 0 {
		return &textFacts{parseError: true, parseReason: parseErrorReason + " (NUL byte)"}
	}
	tree, err := pg_query.Parse(text)
	if err != nil {
		// The parser's message quotes the text near the error, so only the
		// position is kept.
		reason := parseErrorReason
		var pe *pgparser.Error
		if errors.As(err, &pe) && pe.Cursorpos > 0 {
			reason += " (at byte " + strconv.Itoa(pe.Cursorpos) + ")"
		}
		return &textFacts{parseError: true, parseReason: reason}
	}
	tf := &textFacts{stmts: make([]stmtFacts, 0, len(tree.Stmts))}
	var w walker
	for _, raw := range tree.Stmts {
		tf.stmts = append(tf.stmts, w.statement(raw.GetStmt()))
	}
	return tf
}

// walker collects facts from one parse tree. It walks iteratively with an
// explicit stack, so nesting depth costs heap, never goroutine stack; the
// stack is reused across statements. Children are found by pushChildren,
// generated from pg_query's types so that no node type is missed.
//
//go:generate go run walkgen.go
type walker struct {
	stack   []any                // parse-tree messages (pointers) still to visit
	targets []*pg_query.RangeVar // relations a statement writes, seen before their RangeVar is visited
	f       *stmtFacts
}

func (w *walker) statement(n *pg_query.Node) stmtFacts {
	var f stmtFacts
	if n == nil {
		return f
	}
	f.kind = topKind(n)
	f.kinds = 1 << f.kind
	w.f = &f
	w.targets = w.targets[:0]
	w.stack = append(w.stack[:0], n)
	for len(w.stack) > 0 {
		m := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.visit(m)
		w.pushChildren(m)
	}
	w.f = nil
	return f
}

// visit records the facts a single node contributes. Parents are visited
// before children, so write targets are known when their RangeVar comes up.
func (w *walker) visit(m any) {
	f := w.f
	switch n := m.(type) {
	case *pg_query.RangeVar:
		w.table(n.Schemaname, n.Relname, w.isTarget(n))
	case *pg_query.FuncCall:
		w.funcName(n.Funcname)
	case *pg_query.InsertStmt:
		f.kinds |= 1 << kindInsert
		w.target(n.Relation)
	case *pg_query.UpdateStmt:
		f.kinds |= 1 << kindUpdate
		if n.WhereClause == nil {
			f.unfiltered |= 1 << kindUpdate
		}
		w.target(n.Relation)
	case *pg_query.DeleteStmt:
		f.kinds |= 1 << kindDelete
		if n.WhereClause == nil {
			f.unfiltered |= 1 << kindDelete
		}
		w.target(n.Relation)
	case *pg_query.MergeStmt:
		f.kinds |= 1 << kindMerge
		w.target(n.Relation)
	case *pg_query.CopyStmt:
		switch {
		case n.IsProgram:
			f.copy |= copyProgram
		case n.Filename != "":
			f.copy |= copyFile
		default:
			f.copy |= copyStdio
		}
		if n.IsFrom {
			w.target(n.Relation)
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
	case *pg_query.IntoClause:
		w.target(n.Rel)
	case *pg_query.RuleStmt:
		w.target(n.Relation)
	case *pg_query.CreateTrigStmt:
		// The trigger function runs on every later write to the table.
		w.target(n.Relation)
		w.funcName(n.Funcname)
	case *pg_query.CreateEventTrigStmt:
		w.funcName(n.Funcname)
	case *pg_query.DropStmt:
		w.dropped(n)
	case *pg_query.DoStmt:
		for _, a := range n.Args {
			if d := a.GetDefElem(); d != nil && d.Defname == "as" {
				w.body(d.Arg)
			}
		}
	case *pg_query.CreateFunctionStmt:
		for _, o := range n.Options {
			if d := o.GetDefElem(); d != nil && d.Defname == "as" {
				w.body(d.Arg)
			}
		}
	}
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

func (w *walker) table(schema, name string, write bool) {
	t := tableRef{schema: strings.ToLower(schema), name: strings.ToLower(name), write: write}
	for _, have := range w.f.tables {
		if have == t {
			return
		}
	}
	w.f.tables = append(w.f.tables, t)
}

func (w *walker) addFunc(schema, name string) {
	fr := funcRef{schema: strings.ToLower(schema), name: strings.ToLower(name)}
	for _, have := range w.f.funcs {
		if have == fr {
			return
		}
	}
	w.f.funcs = append(w.f.funcs, fr)
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
		w.table(schema, name, true)
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

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

// topKind classifies a top-level statement.
func topKind(n *pg_query.Node) stmtKind {
	switch n.Node.(type) {
	case *pg_query.Node_SelectStmt:
		return kindSelect
	case *pg_query.Node_InsertStmt:
		return kindInsert
	case *pg_query.Node_UpdateStmt:
		return kindUpdate
	case *pg_query.Node_DeleteStmt:
		return kindDelete
	case *pg_query.Node_MergeStmt:
		return kindMerge
	case *pg_query.Node_TruncateStmt:
		return kindTruncate
	case *pg_query.Node_CopyStmt:
		return kindCopy
	case *pg_query.Node_VariableSetStmt:
		return kindSetStmt
	case *pg_query.Node_TransactionStmt:
		return kindTransaction
	case *pg_query.Node_CallStmt:
		return kindCall
	case *pg_query.Node_DoStmt:
		return kindDo
	case *pg_query.Node_ExplainStmt:
		return kindExplain
	case *pg_query.Node_AlterSystemStmt:
		return kindAlterSystem
	case *pg_query.Node_IndexStmt, *pg_query.Node_ViewStmt, *pg_query.Node_RuleStmt,
		*pg_query.Node_DefineStmt, *pg_query.Node_RenameStmt, *pg_query.Node_GrantStmt,
		*pg_query.Node_GrantRoleStmt, *pg_query.Node_CommentStmt, *pg_query.Node_SecLabelStmt,
		*pg_query.Node_CompositeTypeStmt, *pg_query.Node_ReassignOwnedStmt,
		*pg_query.Node_ImportForeignSchemaStmt, *pg_query.Node_RefreshMatViewStmt:
		return kindDDL
	}
	// The remaining DDL statements are all named Create*, Alter* or Drop*.
	name := string(n.ProtoReflect().WhichOneof(nodeOneof).Message().Name())
	if strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Alter") || strings.HasPrefix(name, "Drop") {
		return kindDDL
	}
	return kindUtility
}

var nodeOneof = (&pg_query.Node{}).ProtoReflect().Descriptor().Oneofs().ByName("node")
