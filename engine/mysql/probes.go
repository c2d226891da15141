package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sqlfw/sqlfw/engine"
)

// The shapes of an injected extraction step (engine.ProbeSet), decided by
// where a statement puts what it reads, not by the names alone: the
// mariadb client, mariadb-dump, ORMs and dashboards read the catalog and
// the server's version too, but in statements of their own.
//
//	catalog      a table of information_schema, mysql, performance_schema
//	             or sys (schema-qualified) read by a statement that also
//	             reads or writes an application table (any other name, not
//	             a WITH name): in a subquery, a derived table, a CTE, a
//	             join, a UNION arm, IN/EXISTS, a function argument, ORDER
//	             BY, INSERT ... SELECT, CREATE TABLE ... SELECT; the view
//	             a CREATE VIEW creates is not an application table (its
//	             query's tables are). Utility statements (LOCK TABLES,
//	             SHOW) do not count.
//	server_info  what describes the server — USER(), CURRENT_USER,
//	             SYSTEM_USER(), SESSION_USER(), DATABASE(), SCHEMA(),
//	             VERSION(), CONNECTION_ID(), CURRENT_ROLE(), a system
//	             variable naming the server's host, version, directories,
//	             files or identity (serverVariables), any @@GLOBAL.x — in
//	             the select list of an arm of a set operation, or in what
//	             the arm selects from (a derived table); or, in a
//	             statement that reads or writes an application table, a
//	             server variable anywhere, or such a function tested: one
//	             side of a comparison (=, <, LIKE, REGEXP, BETWEEN, IN, IS
//	             NULL, IS TRUE) whose other side is a constant, or the
//	             argument of ASCII, ORD, HEX, BIN, CONV, LENGTH and the
//	             other functions that turn it into a number
//	             (extractWrappers). owner = USER(), INSERT ... VALUES
//	             (CURRENT_USER()) and SELECT VERSION() alone are not.
//	error_based  a function whose error message carries the value it was
//	             fed, fed what is not a constant: the XPath of UPDATEXML
//	             and EXTRACTVALUE, the name of NAME_CONST, GTID_SUBSET and
//	             GTID_SUBTRACT, the document of a JSON function
//	             (JSON_KEYS, JSON_EXTRACT, ...: not the constructors)
//	             or a geometry constructor (POLYGON, LINESTRING,
//	             MULTIPOINT, ...) fed a subquery or server information,
//	             ST_LatFromGeoHash and its kin likewise; EXP() of a "~" or
//	             a subquery; arithmetic on ~x or a number of 2^63 or more
//	             with a subquery or server information on the other side
//	             (BIGINT overflow: the error quotes the evaluated operand);
//	             GROUP BY an expression with RAND() (the duplicate-key
//	             error of FLOOR(RAND(0)*2)), by alias or position too.
//
// A SELECT that cross-joins two or more catalog tables without a condition
// is heavy work, a wait without a sleep function: a time probe
// (heavyCatalogJoin).
//
// Disguised waits are sleeps (waitCall): MASTER_GTID_WAIT, MASTER_POS_WAIT,
// SOURCE_POS_WAIT, WAIT_FOR_EXECUTED_GTID_SET and
// WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS wait for their timeout (for ever
// without one); GET_LOCK waits while another session holds the lock.
//
// The walker (facts.go) only notes that a statement calls one of the
// functions or reads a system variable (walker.probe); the search below
// runs for those statements alone, so the others pay nothing for it.

// serverInfoFuncs return the session's account, database or the server's
// version: what an injected probe reads first.
var serverInfoFuncs = map[string]bool{
	"user": true, "current_user": true, "system_user": true, "session_user": true, "database": true,
	"schema": true, "version": true, "connection_id": true, "current_role": true,
}

// serverVariables describe the server: its host, version and build,
// directories and files, identity.
var serverVariables = map[string]bool{
	"hostname": true, "datadir": true, "basedir": true, "plugin_dir": true, "secure_file_priv": true,
	"tmpdir": true, "slave_load_tmpdir": true, "character_sets_dir": true, "lc_messages_dir": true,
	"version": true, "version_comment": true, "version_compile_os": true, "version_compile_machine": true,
	"version_malloc_library": true, "version_source_revision": true, "version_ssl_library": true,
	"innodb_version": true, "protocol_version": true, "license": true,
	"socket": true, "port": true, "pid_file": true, "log_error": true, "general_log_file": true,
	"slow_query_log_file": true, "log_bin_basename": true, "log_bin_index": true, "relay_log": true,
	"relay_log_basename": true, "relay_log_index": true, "innodb_data_home_dir": true,
	"innodb_log_group_home_dir": true, "innodb_undo_directory": true, "aria_log_dir_path": true,
	"server_id": true, "server_uuid": true, "report_host": true, "bind_address": true,
	"wsrep_node_address": true, "wsrep_cluster_address": true, "have_ssl": true, "have_openssl": true,
	"have_symlink": true, "have_dynamic_loading": true,
}

// extractWrappers turn a string into numbers a blind probe compares one by
// one (ASCII(SUBSTR(USER(), 1, 1)) > 64).
var extractWrappers = map[string]bool{
	"ascii": true, "ord": true, "hex": true, "bin": true, "conv": true, "length": true, "char_length": true,
	"character_length": true, "bit_length": true, "octet_length": true, "crc32": true, "strcmp": true,
	// positions and comparisons of their own: AND INSTR(USER(), 'root')
	"instr": true, "locate": true, "position": true, "find_in_set": true, "field": true, "nullif": true,
	"interval": true, "regexp_instr": true, "regexp_like": true,
}

// errorArg: for the functions whose error message carries an argument,
// which argument (-1: any).
var errorArg = map[string]int{
	"updatexml": 1, "extractvalue": 1, "name_const": 0, "gtid_subset": -1, "gtid_subtract": -1,
}

// geometry constructors and geohash decoders: an argument that is not
// geometry (or not a geohash) is quoted in the error.
var geometryFuncs = map[string]bool{
	"linestring": true, "polygon": true, "multipoint": true, "multilinestring": true, "multipolygon": true,
	"geometrycollection": true, "st_latfromgeohash": true, "st_longfromgeohash": true, "st_pointfromgeohash": true,
}

// jsonConstructors build JSON from values and do not parse their
// arguments: no error carries one.
var jsonConstructors = map[string]bool{
	"json_object": true, "json_array": true, "json_quote": true, "json_arrayagg": true, "json_objectagg": true,
}

// probeCall reports whether a call of name makes the walker run the probe
// search.
func probeCall(name string) bool {
	if serverInfoFuncs[name] || name == "rand" || name == "exp" || geometryFuncs[name] || charFuncs[name] || choosers[name] ||
		name == "column_get" {
		return true
	}
	if _, ok := errorArg[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "json_") && !jsonConstructors[name]
}

// waitFuncs wait for a replication position up to a timeout: the index of
// the timeout argument (none: for ever).
var waitFuncs = map[string]int{
	"master_gtid_wait": 1, "master_pos_wait": 2, "source_pos_wait": 2, "wait_for_executed_gtid_set": 1,
	"wait_until_sql_thread_after_gtids": 1,
}

// getLockLongSeconds is the GET_LOCK timeout beyond which it is a long
// sleep: migration tools wait seconds for their lock (Rails 0, Flyway 10).
const getLockLongSeconds = 600

// waitCall adds what a call of a waiting function does: it is a sleep of
// its timeout, data-driven when its timeout is computed or it sits in a
// condition. It reports whether name is one.
func (w *walker) waitCall(name string, args []ast.ExprNode) bool {
	st := w.st
	if i, ok := waitFuncs[name]; ok {
		w.sleeps++
		secs, known := constNumber(args, i)
		switch {
		case i >= len(args) || secs < 0:
			st.Effects |= engine.EffLongSleep // no timeout: waits for ever
		case !known:
			st.Effects |= engine.EffLongSleep
			st.TimeProbe = true
		case secs > longSleepSeconds:
			st.Effects |= engine.EffLongSleep
		}
		if known && secs > 0 {
			st.SleepSeconds += secs
		}
		if w.condNest > 0 {
			st.TimeProbe = true
		}
		return true
	}
	if name != "get_lock" {
		return false
	}
	if len(args) > 1 {
		if _, param := args[1].(ast.ParamMarkerExpr); !param {
			secs, known := constNumber(args, 1)
			switch {
			case !known:
				st.TimeProbe = true // a wait computed from data
				st.Effects |= engine.EffLongSleep
			case secs < 0 || secs > getLockLongSeconds:
				st.Effects |= engine.EffLongSleep // negative: for ever
			}
		}
	}
	if w.condNest > 0 {
		st.TimeProbe = true
	}
	return true
}

// appTable reports whether the statement reads or writes a table that is
// not one of the server's own schemas (schema-qualified) or a WITH name.
// The view a CREATE VIEW names is not one: a view over the catalog is a
// report an operator reads (a statement reading it looks like any other).
func appTable(st *engine.StmtFacts, s ast.StmtNode) bool {
	_, view := s.(*ast.CreateViewStmt)
	for i := range st.Tables {
		t := &st.Tables[i]
		if t.CTE || systemSchema(t.Schema) || t.Schema == "" && t.Name == "dual" || view && t.Write {
			continue
		}
		return true
	}
	return false
}

// catalogRead reports whether the statement reads a table of the
// server's own schemas.
func catalogRead(st *engine.StmtFacts) bool {
	for i := range st.Tables {
		if systemSchema(st.Tables[i].Schema) {
			return true
		}
	}
	return false
}

// probes fills st.Probes of the statement s, whose walk is done; search is
// the walker's note that s calls a function or reads a variable the probe
// shapes use.
func probes(st *engine.StmtFacts, s ast.StmtNode, search, blind bool) {
	if st.Kind == engine.KindUtility {
		return
	}
	app := appTable(st, s)
	if app && blind && !st.Tautology {
		// an always-true OR arm (OR 'a' LIKE 'a') is no-tautology's
		st.Probes |= engine.ProbeBooleanBlind
	}
	if app && catalogCall(st) {
		st.Probes |= engine.ProbeCatalog // sys.version_major(), sys.format_path(...)
	}
	if catalogRead(st) {
		if app {
			st.Probes |= engine.ProbeCatalog
		}
		if heavyCatalogJoin(s) {
			st.TimeProbe = true
		}
	}
	if !search {
		return
	}
	s.Accept(&probeVisitor{st: st, app: app})
	if st.Tautology {
		// OR 'a' LIKE 'a': no-tautology's, whose reason says more
		st.Probes &^= engine.ProbeBooleanBlind
	}
}

// probeVisitor calls probeNode on every node, also those of a stored
// procedure's body, which their Accept does not visit (procedural).
type probeVisitor struct {
	st  *engine.StmtFacts
	app bool
}

func (v *probeVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if procedural(n) {
		eachChild(n, func(c ast.Node) { c.Accept(v) })
		return n, true
	}
	probeNode(v.st, n, v.app)
	return n, false
}

func (v *probeVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// probeNode adds the probe shape the node n has; app: the statement reads
// or writes an application table.
func probeNode(st *engine.StmtFacts, n ast.Node, app bool) {
	if app {
		blindNode(st, n)
	}
	switch x := n.(type) {
	case *ast.SetOprStmt:
		if x.SelectList == nil || len(x.SelectList.Selects) < 2 {
			return
		}
		for _, arm := range x.SelectList.Selects {
			if armReturnsServerInfo(arm) {
				st.Probes |= engine.ProbeServerInfo
			}
		}
		if app && st.Kind == engine.KindSelect {
			switch unionConstants(x.SelectList.Selects) {
			case armConstants:
				st.Probes |= engine.ProbeUnionConstants
			case armUUID:
				st.Probes |= engine.ProbeServerInfo
			}
		}
	case *ast.SelectStmt:
		if randGrouping(x) {
			st.Probes |= engine.ProbeErrorBased
		}
		if app && selectsServerInfo(x) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.FuncCallExpr:
		name := x.FnName.L
		if errorFed(name, x.Args) {
			st.Probes |= engine.ProbeErrorBased
		}
		if app && extractWrappers[name] {
			for _, a := range x.Args {
				if serverInfo(a) {
					st.Probes |= engine.ProbeServerInfo
				}
			}
		}
	case *ast.VariableExpr:
		if app && serverVariable(x) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
			if overflow(x.L) && fed(x.R) || overflow(x.R) && fed(x.L) || (hasBig(x.L) || hasBig(x.R)) && (fed(x.L) || fed(x.R)) {
				st.Probes |= engine.ProbeErrorBased
			}
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
			if app && tested(x.L, x.R) {
				st.Probes |= engine.ProbeServerInfo
			}
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			// a bare truth value of server information: AND ELT(...)
			if app && (infoPredicate(leafTerm(x.L)) || infoPredicate(leafTerm(x.R))) {
				st.Probes |= engine.ProbeServerInfo
			}
		}
	case *ast.UnaryOperationExpr:
		if app && (x.Op == opcode.Not || x.Op == opcode.Not2) && infoPredicate(x.V) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.PatternLikeOrIlikeExpr:
		if app && tested(x.Expr, x.Pattern) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.PatternRegexpExpr:
		if app && tested(x.Expr, x.Pattern) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.BetweenExpr:
		if app && serverInfo(x.Expr) && constant(x.Left) && constant(x.Right) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.PatternInExpr:
		if app && serverInfo(x.Expr) && x.Sel == nil {
			all := true
			for _, v := range x.List {
				all = all && constant(v)
			}
			if all {
				st.Probes |= engine.ProbeServerInfo
			}
		}
	case *ast.IsNullExpr:
		if app && serverInfo(x.Expr) {
			st.Probes |= engine.ProbeServerInfo
		}
	case *ast.IsTruthExpr:
		if app && serverInfo(x.Expr) {
			st.Probes |= engine.ProbeServerInfo
		}
	}
}

// armReturnsServerInfo reports whether an arm of a set operation (a
// SELECT, or a parenthesised set operation's arms) selects server
// information, in its select list or in what it selects from.
func armReturnsServerInfo(arm ast.Node) bool {
	switch x := arm.(type) {
	case *ast.SelectStmt:
		if x.Fields != nil {
			for _, f := range x.Fields.Fields {
				if f.Expr != nil && serverInfo(f.Expr) {
					return true
				}
			}
		}
		// what it selects from: SELECT * FROM (SELECT user()) x
		return x.From != nil && x.From.TableRefs != nil && serverInfo(x.From.TableRefs)
	case *ast.SetOprSelectList:
		for _, a := range x.Selects {
			if armReturnsServerInfo(a) {
				return true
			}
		}
	case *ast.SetOprStmt:
		return x.SelectList != nil && armReturnsServerInfo(x.SelectList)
	}
	return false
}

// infoPredicate reports whether e, used as a truth value, is decided by
// server information alone: it holds some and no column or parameter.
func infoPredicate(e ast.ExprNode) bool {
	if e == nil || !serverInfo(e) {
		return false
	}
	ok := true
	e.Accept(visitFunc(func(n ast.Node) {
		switch n.(type) {
		case *ast.ColumnNameExpr, ast.ParamMarkerExpr:
			ok = false
		}
	}))
	return ok
}

// tested: one side holds server information, the other is a constant.
func tested(l, r ast.ExprNode) bool {
	return serverInfo(l) && constant(r) || serverInfo(r) && constant(l)
}

// serverVariable reports whether v is a system variable that describes the
// server, or any global one.
func serverVariable(v *ast.VariableExpr) bool {
	return v.IsSystem && (v.IsGlobal && v.ExplicitScope || serverVariables[strings.ToLower(v.Name)])
}

// serverInfo reports whether e holds, anywhere in it, a server-describing
// function or variable.
func serverInfo(e ast.Node) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		switch x := n.(type) {
		case *ast.FuncCallExpr:
			if serverInfoFuncs[x.FnName.L] || x.Schema.L == "sys" {
				found = true
			}
		case *ast.VariableExpr:
			if serverVariable(x) {
				found = true
			}
		}
	}))
	return found
}

// constant reports whether e's value is known before it runs: no column,
// parameter, variable, table, server information or random number in it.
func constant(e ast.Node) bool {
	ok := true
	e.Accept(visitFunc(func(n ast.Node) {
		switch x := n.(type) {
		case *ast.ColumnNameExpr, ast.ParamMarkerExpr, *ast.VariableExpr, *ast.TableName, *ast.DefaultExpr:
			ok = false
		case *ast.FuncCallExpr:
			if len(x.Args) == 0 || serverInfoFuncs[x.FnName.L] || x.FnName.L == "rand" {
				ok = false
			}
		case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
			ok = false
		}
	}))
	return ok
}

// fed reports whether e carries a value a probe wants out: a subquery or
// server information.
func fed(e ast.Node) bool {
	if serverInfo(e) {
		return true
	}
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if _, ok := n.(*ast.SubqueryExpr); ok {
			found = true
		}
	}))
	return found
}

// errorFed reports whether the call of name is a function whose error
// message carries an argument, fed what is not a constant.
func errorFed(name string, args []ast.ExprNode) bool {
	if i, ok := errorArg[name]; ok {
		for k, a := range args {
			if (i < 0 || k == i) && (!constant(a) || computed(a) || name != "name_const" && badXPath(a)) {
				return true
			}
		}
		return false
	}
	switch {
	case name == "column_get":
		// COLUMN_GET(blob, name AS type): the blob or name fed a
		// subquery or server information
		for _, a := range args {
			if fed(a) {
				return true
			}
		}
	case name == "exp":
		return len(args) > 0 && (fed(args[0]) || hasBitNeg(args[0]))
	case geometryFuncs[name]:
		for _, a := range args {
			if fed(a) {
				return true
			}
		}
	case strings.HasPrefix(name, "json_") && !jsonConstructors[name]:
		return len(args) > 0 && fed(args[0])
	}
	return false
}

// overflow reports whether e is ~x or a number of 2^63 or more: added to,
// subtracted from or multiplied by anything but 0, it overflows BIGINT,
// and the error quotes the other operand's value.
func overflow(e ast.ExprNode) bool {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.BitNeg {
		return true
	}
	if v, ok := value(e); ok {
		if n, ok := toNumber(v); ok && n >= 9223372036854775807 {
			return true
		}
	}
	return false
}

func hasBitNeg(e ast.Node) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if u, ok := n.(*ast.UnaryOperationExpr); ok && u.Op == opcode.BitNeg {
			found = true
		}
	}))
	return found
}

// randGrouping reports whether a SELECT groups by an expression with
// RAND() in it, named in GROUP BY, by a select-list alias or by position.
func randGrouping(sel *ast.SelectStmt) bool {
	if sel.GroupBy == nil {
		return false
	}
	for _, it := range sel.GroupBy.Items {
		if it == nil || it.Expr == nil {
			continue
		}
		if hasRand(it.Expr) {
			return true
		}
		if sel.Fields == nil {
			continue
		}
		switch x := it.Expr.(type) {
		case *ast.ColumnNameExpr:
			if x.Name == nil || x.Name.Table.L != "" {
				continue
			}
			for _, f := range sel.Fields.Fields {
				if f.AsName.L == x.Name.Name.L && f.Expr != nil && hasRand(f.Expr) {
					return true
				}
			}
		case *ast.PositionExpr:
			if k := x.N - 1; k >= 0 && k < len(sel.Fields.Fields) {
				if f := sel.Fields.Fields[k]; f.Expr != nil && hasRand(f.Expr) {
					return true
				}
			}
		}
	}
	return false
}

func hasRand(e ast.Node) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == "rand" {
			found = true
		}
	}))
	return found
}

// heavyCatalogJoin reports whether a SELECT in s cross-joins two or more
// tables of the server's own schemas without a condition (no ON, USING or
// WHERE, or one known true: ON 1=1): rows multiply, a wait without a sleep function
// (information_schema.columns A, information_schema.columns B, ...).
func heavyCatalogJoin(s ast.Node) bool {
	found := false
	s.Accept(visitFunc(func(n ast.Node) {
		sel, ok := n.(*ast.SelectStmt)
		if !ok || found || sel.Where != nil && !alwaysTrueConst(sel.Where) || sel.From == nil || sel.From.TableRefs == nil {
			return
		}
		count, plain := 0, true
		var walk func(r ast.ResultSetNode)
		walk = func(r ast.ResultSetNode) {
			switch x := r.(type) {
			case *ast.Join:
				if x.Right != nil && (x.On != nil && !alwaysTrueConst(x.On.Expr) || len(x.Using) > 0 || x.NaturalJoin) {
					plain = false // ON 1=1 is a cross join still
				}
				if x.Left != nil {
					walk(x.Left)
				}
				if x.Right != nil {
					walk(x.Right)
				}
			case *ast.TableSource:
				if t, ok := x.Source.(*ast.TableName); ok && systemSchema(t.Schema.L) {
					count++
				}
			}
		}
		walk(sel.From.TableRefs)
		found = plain && count >= 2
	}))
	return found
}

// selectsServerInfo reports whether a SELECT returns or orders by server
// information: in its select list (a scalar subquery, a derived table, an
// arm, the statement's own list), its GROUP BY or its ORDER BY.
func selectsServerInfo(sel *ast.SelectStmt) bool {
	if sel.Fields != nil {
		for _, f := range sel.Fields.Fields {
			if f.Expr != nil && serverInfo(f.Expr) {
				return true
			}
		}
	}
	if sel.GroupBy != nil {
		for _, it := range sel.GroupBy.Items {
			if it != nil && it.Expr != nil && serverInfo(it.Expr) {
				return true
			}
		}
	}
	if sel.OrderBy != nil {
		for _, it := range sel.OrderBy.Items {
			if it != nil && it.Expr != nil && serverInfo(it.Expr) {
				return true
			}
		}
	}
	return false
}

// catalogCall reports whether the statement calls a function of the
// server's own schemas (sys.version_major(), sys.format_path()).
func catalogCall(st *engine.StmtFacts) bool {
	for i := range st.Funcs {
		if systemSchema(st.Funcs[i].Schema) {
			return true
		}
	}
	return false
}

// stackedProbe adds what a statement stacked after one on application
// tables, in the same text, reads of the server: the catalog (SELECT
// 1; SELECT table_name FROM information_schema.tables) or server
// information it returns (; SELECT @@datadir); or a DO (1; DO (1=1)):
// it returns nothing, so after an application's statement its only use
// is the error or the wait the page shows (DO IF((SELECT ...), 1,
// (SELECT 1 UNION SELECT 2))), a boolean-blind probe. Its InDatabase
// variants get the same.
func stackedProbe(st *engine.StmtFacts, s ast.StmtNode) {
	if st.Kind == engine.KindUtility {
		return
	}
	var p engine.ProbeSet
	if _, ok := s.(*ast.DoStmt); ok {
		p |= engine.ProbeBooleanBlind
	}
	if catalogRead(st) || catalogCall(st) {
		p |= engine.ProbeCatalog
	}
	if returnsServerInfo(s) {
		p |= engine.ProbeServerInfo
	}
	st.Probes |= p
	for i := range st.InDatabase {
		st.InDatabase[i].Facts.Probes |= p
	}
}

// returnsServerInfo reports whether a query statement returns server
// information anywhere in what it selects.
func returnsServerInfo(s ast.StmtNode) bool {
	found := false
	s.Accept(visitFunc(func(n ast.Node) {
		if sel, ok := n.(*ast.SelectStmt); ok && !found && selectsServerInfo(sel) {
			found = true
		}
	}))
	return found
}

// computed reports whether e is worked out from other values (a
// function, an operator, a subquery) rather than written as a value: an
// XPath or GTID set an application passes is a string or a parameter;
// CONCAT(0x5c, ...) builds the invalid one whose error quotes it.
func computed(e ast.ExprNode) bool {
	switch unparen(e).(type) {
	case *ast.FuncCallExpr, *ast.BinaryOperationExpr, *ast.SubqueryExpr, *ast.FuncCastExpr, *ast.UnaryOperationExpr:
		return true
	}
	return false
}

// badXPath reports whether e is a literal no XPath or GTID set starts
// with (\, ~, :, ...): its error quotes it (EXTRACTVALUE(1, 0x5c71...)).
func badXPath(e ast.ExprNode) bool {
	v, ok := value(e)
	if !ok || v.null {
		return false
	}
	t := text(v)
	if t == "" {
		return false
	}
	switch t[0] {
	case '\\', '~', '!', '#', '$', '%', '^', '&', ';', ':', ',', '?', '`', '\'', '"', '}', '{', ']':
		return true
	}
	return false
}

// hasBig reports whether e holds a number literal of 2^62 or more: doubled
// or added to its like it overflows BIGINT, and the error quotes the
// expression, its subqueries evaluated (2*IF((SELECT ...), 8446744073709551610, ...)).
func hasBig(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if x, ok := n.(ast.ValueExpr); ok && !found {
			if v, ok := value(x); ok && !v.isStr {
				if f, ok := toNumber(v); ok && (f >= 4611686018427387904 || f <= -4611686018427387904) {
					found = true
				}
			}
		}
	}))
	return found
}

// stackedByFacts is stackedProbe for statements read without a syntax
// tree (mariadb.go: id = 1; SELECT CAST(version() AS INT)): after a
// statement on application tables, a SELECT that reads the catalog, or
// calls a server-information function anywhere.
func stackedByFacts(sts []engine.StmtFacts) {
	app := false
	for i := range sts {
		st := &sts[i]
		if app && st.Kind == engine.KindSelect {
			var p engine.ProbeSet
			if catalogRead(st) || catalogCall(st) {
				p |= engine.ProbeCatalog
			}
			for _, f := range st.Funcs {
				if serverInfoFuncs[f.Name] {
					p |= engine.ProbeServerInfo
				}
			}
			st.Probes |= p
			for k := range st.InDatabase {
				st.InDatabase[k].Facts.Probes |= p
			}
		}
		app = app || st.Kind != engine.KindUtility && appTableFacts(st)
	}
}

// appTableFacts is appTable without the syntax tree.
func appTableFacts(st *engine.StmtFacts) bool {
	for i := range st.Tables {
		t := &st.Tables[i]
		if !t.CTE && !systemSchema(t.Schema) && !(t.Schema == "" && t.Name == "dual") {
			return true
		}
	}
	return false
}

// leafTerm is e, or nil when e is itself an AND, OR or XOR: its own
// operands are looked at when the visitor reaches it, so a long chain is
// not walked once per link.
func leafTerm(e ast.ExprNode) ast.ExprNode {
	if x, ok := e.(*ast.BinaryOperationExpr); ok {
		switch x.Op {
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			return nil
		}
	}
	return e
}

// alwaysTrueConst: a condition whose value is known to be true before it
// runs (1=1, TRUE, 'a'='a').
func alwaysTrueConst(e ast.ExprNode) bool {
	v, ok := value(e)
	return ok && !v.null && truthy(v)
}

// uuidFuncs describe the server without naming it: UUID()'s node is the
// server's MAC address (version 1 UUIDs), UUID_SHORT() holds its server_id
// and start time, SYS_GUID() is UUID() without dashes.
var uuidFuncs = map[string]bool{"uuid": true, "uuid_short": true, "sys_guid": true}

// What a UNION arm after an application read returns (unionConstants).
const (
	armOther     = iota
	armConstants // NULL, numbers, hex literals, their CONCAT
	armUUID      // UUID(), UUID_SHORT(), SYS_GUID()
)

// unionConstants returns what the first arm after one that reads an
// application table with a condition returns, when that is constants an
// injected UNION probes with (SELECT a FROM t WHERE id = -78 UNION SELECT
// 1,2; ... UNION ALL SELECT NULL,CONCAT(0x71,0x71)), or a UUID: armOther
// else. An arm of constants first (SELECT 0 UNION SELECT id FROM t), one
// with a string other than hex ('All', the sentinel row a list adds), an
// arm reading a table, and the arms of INSERT ... SELECT (a bulk insert's
// rows: the caller's kind test) are none. Strings that only mark columns
// ('a','b'; '1','2': placeholderString) count as constants in an arm of two
// or more columns.
func unionConstants(arms []ast.Node) int {
	read := false
	for _, sel := range flatArms(arms, nil, 0) {
		if read && sel.From == nil && sel.Where == nil && sel.GroupBy == nil && sel.Having == nil && sel.Fields != nil &&
			len(sel.Fields.Fields) > 0 {
			kind := armConstants
			marks := 0
			for _, f := range sel.Fields.Fields {
				switch {
				case f.Expr != nil && uuidCall(f.Expr):
					return armUUID
				case f.Expr != nil && placeholderString(f.Expr):
					marks++
				case f.Expr == nil || !probeConstant(f.Expr, 0):
					kind = armOther
				}
			}
			// 'a','b' or '1','2' stand for columns as NULL and 1,2 do; a
			// lone one may be a list's sentinel, as 'All' is
			if kind != armOther && (marks == 0 || len(sel.Fields.Fields) >= 2) {
				return kind
			}
		}
		if sel.Where != nil && sel.From != nil && sel.From.TableRefs != nil && readsAppTable(sel.From.TableRefs) {
			read = true
		}
	}
	return armOther
}

// flatArms appends the SELECTs of arms, in their order, also those of
// parenthesised lists ((SELECT ...) UNION (SELECT 1)).
func flatArms(arms []ast.Node, out []*ast.SelectStmt, depth int) []*ast.SelectStmt {
	if depth > maxFoldDepth {
		return out
	}
	for _, a := range arms {
		switch x := a.(type) {
		case *ast.SelectStmt:
			out = append(out, x)
		case *ast.SetOprSelectList:
			out = flatArms(x.Selects, out, depth+1)
		case *ast.SetOprStmt:
			if x.SelectList != nil {
				out = flatArms(x.SelectList.Selects, out, depth+1)
			}
		}
	}
	return out
}

// uuidCall reports whether e calls UUID(), UUID_SHORT() or SYS_GUID().
func uuidCall(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if f, ok := n.(*ast.FuncCallExpr); ok && uuidFuncs[f.FnName.L] {
			found = true
		}
	}))
	return found
}

// placeholderString reports whether e is a string literal that marks a
// column the way a manual UNION probe does: one or two ASCII letters or
// digits ('a', 'b', 'x1'), or digits only ('1', '22'); not a word a list's
// sentinel row shows ('All', '(none)', ”).
func placeholderString(e ast.ExprNode) bool {
	v, ok := unparen(e).(*test_driver.ValueExpr)
	if !ok || v.Kind() != test_driver.KindString {
		return false
	}
	s := v.GetString()
	if s == "" || len(s) > 20 {
		return false
	}
	digits, alnum := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		isDigit := c >= '0' && c <= '9'
		digits = digits && isDigit
		alnum = alnum && (isDigit || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}
	return digits || (alnum && len(s) <= 2)
}

// probeConstant reports whether e is NULL, a number, a hex or bit literal,
// or CONCAT, CONCAT_WS or CHAR of those.
func probeConstant(e ast.ExprNode, depth int) bool {
	if depth > maxFoldDepth {
		return false
	}
	switch x := unparen(e).(type) {
	case *test_driver.ValueExpr:
		switch x.Kind() {
		case test_driver.KindNull, test_driver.KindInt64, test_driver.KindUint64, test_driver.KindFloat32,
			test_driver.KindFloat64, test_driver.KindMysqlDecimal, test_driver.KindBinaryLiteral:
			return true
		}
	case *ast.UnaryOperationExpr:
		return (x.Op == opcode.Minus || x.Op == opcode.Plus) && probeConstant(x.V, depth+1)
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "concat", "concat_ws", "char_func":
			for _, a := range x.Args {
				if !probeConstant(a, depth+1) {
					return false
				}
			}
			return len(x.Args) > 0
		}
	}
	return false
}

// readsAppTable reports whether a FROM clause names a table that is not
// one of the server's own schemas' or DUAL.
func readsAppTable(refs ast.Node) bool {
	found := false
	refs.Accept(visitFunc(func(n ast.Node) {
		if t, ok := n.(*ast.TableName); ok && !systemSchema(t.Schema.L) && !(t.Schema.L == "" && t.Name.L == "dual") {
			found = true
		}
	}))
	return found
}
