package mysql

// The database's own objects, from information_schema (engine/catalog.go):
// the queries sqlfwd's monitoring role runs (docs/operations.md, "The
// catalog connection") and what their answers do, each definition read as
// the stored code it is (stored.go ReadBody): a view's query, a routine's
// body under the header it was created with, a trigger's action on its
// table.

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/sqlfw/sqlfw/engine"
)

var mySystemSchemas = []string{"mysql", "information_schema", "performance_schema", "sys"}

const myUserSchemas = `NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`

var myCatalogQueries = []engine.CatalogQuery{
	{Name: "relations", SQL: `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES LIMIT 100000`},
	{Name: "views", SQL: `SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA ` + myUserSchemas + ` LIMIT 100000`},
	{Name: "routines", SQL: `SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, DTD_IDENTIFIER, ROUTINE_DEFINITION, SECURITY_TYPE, DEFINER FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA ` + myUserSchemas + ` LIMIT 100000`},
	{Name: "not null columns", SQL: `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE IS_NULLABLE = 'NO' AND TABLE_SCHEMA ` + myUserSchemas + ` LIMIT 100000`},
	{Name: "triggers", SQL: `SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, EVENT_MANIPULATION, ACTION_TIMING, ACTION_STATEMENT, DEFINER FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA ` + myUserSchemas + ` LIMIT 100000`},
	// The databases the monitoring account sees: a session whose current
	// database is not one of them is judged as one whose objects are
	// unknown (engine.Catalog.For), not by another database's of the name.
	{Name: "databases", SQL: `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA LIMIT 100000`},
}

// CatalogQueries returns the queries the monitoring role runs.
func (myDialect) CatalogQueries() []engine.CatalogQuery { return myCatalogQueries }

// BuildCatalog reads the answers to CatalogQueries. Names are lower-cased
// (the facts' are); a server with lower_case_table_names=0 may hold two
// tables whose names differ only in case: both are judged for either.
func (d myDialect) BuildCatalog(rows [][][]string, o engine.CatalogOptions) *engine.Catalog {
	o.SystemSchemas = append(o.SystemSchemas, mySystemSchemas...)
	lc := strings.ToLower
	get := func(i int) [][]string {
		if i < len(rows) {
			return rows[i]
		}
		return nil
	}
	var objs []engine.CatalogObject
	for _, r := range get(0) {
		if len(r) >= 2 {
			objs = append(objs, engine.CatalogObject{Kind: engine.CatalogRelation, Schema: lc(r[0]), Name: lc(r[1])})
		}
	}
	read := func(ob *engine.CatalogObject, lang, text string) {
		// The schema is a part of what the definition does: its
		// unqualified names resolve there.
		ob.Def = lang + "\x00" + ob.Schema + "\x00" + text
		if f, why, ok := o.Previous.Reuse(ob.Def); ok {
			ob.Facts, ob.Unreadable = f, why
			return
		}
		if strings.TrimSpace(text) == "" {
			ob.Unreadable = "no definition visible to the monitoring role"
			return
		}
		b, ok := d.ReadBody(lang, text)
		ob.Facts = b.Facts
		if !ok {
			ob.Unreadable = b.Facts.Unparsed
			if ob.Unreadable == "" {
				ob.Unreadable = "its definition could not be parsed"
			}
		}
		ob.Facts.Unparsed = ""
		// Stored code resolves its unqualified names in its own database
		// (the routine's, the trigger's table's), not the session's.
		ob.Facts.Tables = slices.Clone(ob.Facts.Tables)
		for i := range ob.Facts.Tables {
			if t := &ob.Facts.Tables[i]; t.Schema == "" && !t.CTE {
				t.Schema = ob.Schema
			}
		}
	}
	for _, r := range get(1) {
		if len(r) < 3 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogView, Schema: lc(r[0]), Name: lc(r[1])}
		read(&ob, "view", r[2])
		objs = append(objs, ob)
	}
	for _, r := range get(2) {
		if len(r) < 5 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogRoutine, Schema: lc(r[0]), Name: lc(r[1])}
		if strings.EqualFold(r[2], "FUNCTION") {
			ret := r[3]
			if strings.TrimSpace(ret) == "" {
				ret = "TEXT"
			}
			read(&ob, "create", "CREATE FUNCTION sqlfw_body() RETURNS "+ret+" "+r[4])
		} else {
			read(&ob, "sql", r[4])
		}
		if len(r) >= 7 {
			// SQL SECURITY DEFINER (the default) runs the body as DEFINER.
			ob.Owner = definerName(r[6])
			ob.Definer = strings.EqualFold(r[5], "DEFINER") && ob.Owner != ""
		}
		objs = append(objs, ob)
	}
	var notNull []engine.NotNullColumn
	for _, r := range get(3) {
		if len(r) >= 3 {
			notNull = append(notNull, engine.NotNullColumn{Schema: lc(r[0]), Table: lc(r[1]), Column: lc(r[2])})
		}
	}
	for _, r := range get(4) {
		if len(r) < 7 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogTrigger, Schema: lc(r[0]), Name: lc(r[1]), OnSchema: lc(r[2]), On: lc(r[3])}
		switch strings.ToUpper(r[4]) {
		case "INSERT":
			ob.Events = 1 << engine.KindInsert
		case "UPDATE":
			ob.Events = 1 << engine.KindUpdate
		case "DELETE":
			ob.Events = 1 << engine.KindDelete
		default:
			ob.Events = 1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete
		}
		timing := "AFTER"
		if strings.EqualFold(r[5], "BEFORE") {
			timing = "BEFORE"
		}
		read(&ob, "create", "CREATE TRIGGER sqlfw_body "+timing+" "+strings.ToUpper(r[4])+" ON "+quoteName(r[2])+"."+quoteName(r[3])+" FOR EACH ROW "+r[6])
		if len(r) >= 8 {
			// A trigger always runs as its definer.
			ob.Owner = definerName(r[7])
			ob.Definer = ob.Owner != ""
		}
		objs = append(objs, ob)
	}
	o.Resolve = engine.ResolveDatabase
	if len(rows) > 5 && len(rows[5]) > 0 { // not a snapshot from before the query
		o.Databases, o.DatabasesFold = []string{}, true
		for _, r := range rows[5] {
			if len(r) >= 1 {
				o.Databases = append(o.Databases, r[0])
			}
		}
	}
	return engine.NewCatalog(objs, notNull, o)
}

// definerName is the user of information_schema's DEFINER (user@host), as
// sessions name their user (Session.User).
func definerName(d string) string {
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		return d[:i]
	}
	return d
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// notNullTarget is the one table a single-table UPDATE or DELETE writes,
// whose columns a NULL test takes as NOT NULL; cols collects the columns
// it did.
type notNullTarget struct {
	name, alias string
	cols        []string
}

// column reports whether a column reference names a column of t (and
// records it); false for a nil t.
func (t *notNullTarget) column(c *ast.ColumnName) bool {
	if t == nil || c == nil {
		return false
	}
	if q := c.Table.L; q != "" && q != t.name && q != t.alias {
		return false
	}
	for _, have := range t.cols {
		if have == c.Name.L {
			return true
		}
	}
	t.cols = append(t.cols, c.Name.L)
	return true
}

// notNullWhere records in st a write of kind k whose condition where is
// true for every row when the NULL tests of the written table's columns
// are decided as for NOT NULL columns (DELETE FROM t WHERE id IS NOT
// NULL): unfiltered when the catalog says they are (engine/catalog.go).
func (w *walker) notNullWhere(st *engine.StmtFacts, k engine.StmtKind, where ast.ExprNode, refs *ast.Join) {
	if where == nil || refs == nil || refs.Right != nil {
		return
	}
	ts, ok := refs.Left.(*ast.TableSource)
	if !ok {
		return
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return
	}
	var cols []string
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		fo.target = &notNullTarget{name: tn.Name.L, alias: ts.AsName.L}
		if !fo.alwaysTrue(where) || len(fo.target.cols) == 0 {
			return
		}
		for _, c := range fo.target.cols {
			cols = engine.AppendUnique(cols, c)
		}
	}
	st.NotNullWhere = append(st.NotNullWhere, engine.NotNullCond{Kind: k, Schema: tn.Schema.L, Table: tn.Name.L, Cols: cols})
	if !plainNullTests(where, 0) {
		// Without the catalog the engine cannot tell whether the columns
		// are NOT NULL, and the condition is then an ordinary filter or
		// every row. Applications write that filter as col IS [NOT] NULL;
		// (id IS NULL) IS FALSE, NOT ISNULL(id), ISNULL(id) = 0, NOT (id
		// <=> NULL), (id + 0) IS NOT NULL are the same test disguised: not
		// decided, so counted as every row, with or without the catalog.
		st.Unfiltered |= 1 << k
	}
}

// plainNullTests reports whether a condition tests columns for NULL only
// as applications do: col IS [NOT] NULL of a bare column, under AND, OR,
// NOT and parentheses, next to conditions that test nothing for NULL.
func plainNullTests(e ast.ExprNode, depth int) bool {
	if depth > maxFoldDepth {
		return false
	}
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return plainNullTests(x.Expr, depth+1)
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return plainNullTests(x.V, depth+1)
		}
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd || x.Op == opcode.LogicOr {
			return plainNullTests(x.L, depth+1) && plainNullTests(x.R, depth+1)
		}
	case *ast.IsNullExpr:
		_, ok := unparen(x.Expr).(*ast.ColumnNameExpr)
		return ok
	}
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		switch y := n.(type) {
		case *ast.IsNullExpr:
			found = true
		case *ast.BinaryOperationExpr:
			found = found || y.Op == opcode.NullEQ
		case *ast.FuncCallExpr:
			_, isNull := isNullCall(y)
			found = found || isNull || y.FnName.L == "ifnull" || y.FnName.L == "nvl" || y.FnName.L == "coalesce"
		}
	}))
	return !found
}
