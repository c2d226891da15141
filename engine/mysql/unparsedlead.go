package mysql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// lead walks the leading tokens of a piece.
type lead struct {
	text string
	t    []token
	i    int
}

// at reports whether the current token is one of the bare words ws.
func (l *lead) at(ws ...string) bool {
	if l.i >= len(l.t) {
		return false
	}
	for _, w := range ws {
		if l.t[l.i].is(l.text, w) {
			return true
		}
	}
	return false
}

// eat advances past the current token when it is one of ws.
func (l *lead) eat(ws ...string) bool {
	if l.at(ws...) {
		l.i++
		return true
	}
	return false
}

func (l *lead) eatByte(c byte) bool {
	if l.i < len(l.t) && l.t[l.i].kind == c {
		l.i++
		return true
	}
	return false
}

// object eats the current token when it is one of os and returns it.
func (l *lead) object(os ...string) string {
	for _, o := range os {
		if l.eat(o) {
			return o
		}
	}
	return ""
}

// isName reports whether the current token can be a name.
func (l *lead) isName() bool {
	return l.i < len(l.t) && (l.t[l.i].kind == tokWord || l.t[l.i].kind == tokIdent)
}

// name reads [schema.]name.
func (l *lead) name() (schema, name string, ok bool) {
	if !l.isName() {
		return "", "", false
	}
	name = l.t[l.i].name(l.text)
	l.i++
	if l.eatByte('.') {
		if !l.isName() {
			return "", "", false
		}
		schema, name = name, l.t[l.i].name(l.text)
		l.i++
	}
	return schema, name, true
}

// definer reads an optional DEFINER = account; other is true when the
// account is not CURRENT_USER. ok is false when the clause is there but
// cannot be read.
func (l *lead) definer() (present, other, ok bool) {
	if !l.eat("definer") {
		return false, false, true
	}
	if !l.eatByte('=') {
		return true, false, false
	}
	if l.eat("current_user") {
		if l.eatByte('(') && !l.eatByte(')') {
			return true, false, false
		}
		return true, false, true
	}
	// 'user'@'host', `user`@`host`, user@host, 'user'
	if l.i >= len(l.t) || (l.t[l.i].kind != tokString && !l.isName()) {
		return true, false, false
	}
	l.i++
	if l.eatByte('@') {
		if l.i >= len(l.t) || (l.t[l.i].kind != tokString && !l.isName()) {
			return true, false, false
		}
		l.i++
	}
	return true, true, true
}

// options reads the clauses before a view's or routine's object word, in
// any order: ALGORITHM = a, DEFINER = account, SQL SECURITY x. other is
// true when the DEFINER is not CURRENT_USER.
func (l *lead) options() (other, ok bool) {
	for {
		switch {
		case l.at("definer"):
			_, o, good := l.definer()
			if !good {
				return false, false
			}
			other = other || o
		case l.eat("algorithm"):
			if !l.eatByte('=') || !l.isName() {
				return false, false
			}
			l.i++
		case l.at("sql") && l.i+1 < len(l.t) && l.t[l.i+1].is(l.text, "security"):
			l.i += 2
			if !l.eat("definer", "invoker") {
				return false, false
			}
		default:
			return other, true
		}
	}
}

// serverSetting reports whether a piece holds a SET of a server-wide
// setting as its words say: SET or a "," at depth 0 followed by GLOBAL,
// PERSIST or PERSIST_ONLY and a name, or @@ followed by one of those words
// and a ".". A text the server refuses either way is only denied by
// another rule.
func serverSetting(text string, pc *piece) bool {
	var ts []token
	for i := pc.lo; ; {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		ts = append(ts, t)
		i = t.hi
	}
	scope := func(k int) bool {
		return k < len(ts) && (ts[k].is(text, "global") || ts[k].is(text, "persist") || ts[k].is(text, "persist_only"))
	}
	set, depth := false, 0
	for k, t := range ts {
		switch {
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case t.is(text, "set"):
			set = true
			if scope(k+1) && k+2 < len(ts) && (ts[k+2].kind == tokWord || ts[k+2].kind == tokIdent) {
				return true
			}
		case set && depth == 0 && t.kind == ',' && scope(k+1) && k+2 < len(ts) && (ts[k+2].kind == tokWord || ts[k+2].kind == tokIdent):
			return true
		case set && t.kind == '@' && k+2 < len(ts) && ts[k+1].kind == '@' && scope(k+2):
			return true
		}
	}
	return false
}

// classifyLead recognizes a piece TiDB did not parse by its leading words
// (see the table above); ok is false when nothing about it is certain.
func classifyLead(text string, pc *piece) (st engine.StmtFacts, ok bool) {
	l := &lead{text: text, t: pc.lead}
	ddl := func(verb engine.DDLVerb, object string) {
		st.Kind, st.Verb, st.Object, ok = engine.KindDDL, verb, object, true
	}
	switch {
	case l.eat("install"):
		if l.at("plugin", "soname") {
			ddl(engine.VerbCreate, "plugin")
			st.Effects |= engine.EffLoadsCode
		}
	case l.eat("uninstall"):
		if l.at("plugin", "soname") {
			ddl(engine.VerbDrop, "plugin")
			st.Effects |= engine.EffLoadsCode
		}
	case l.eat("create"):
		if l.eat("or") && !l.eat("replace") {
			return st, false
		}
		other, good := l.options()
		if !good {
			return st, false
		}
		l.eat("aggregate")
		object := ""
		switch {
		case l.eat("function"):
			object = "function"
		case l.eat("procedure"):
			object = "procedure"
		case l.eat("trigger"):
			object = "trigger"
		case l.eat("event"):
			object = "event"
		case l.eat("view"):
			object = "view"
		case l.eat("server"):
			ddl(engine.VerbCreate, "server")
			st.Effects |= engine.EffOpensConnection
			return st, true
		case l.at("user", "role"):
			st.Kind, st.Verb, st.Object = engine.KindDCL, engine.VerbCreate, l.text[l.t[l.i].lo:l.t[l.i].hi]
			st.Object = strings.ToLower(st.Object)
			return st, true
		default:
			// CREATE TABLE and the others TiDB knows failed for a reason
			// of their own: nothing is certain.
			return st, false
		}
		ddl(engine.VerbCreate, object)
		if other && (object == "trigger" || object == "event" || !pc.invoker) {
			// Triggers and events always run as their definer; routines
			// and views unless SQL SECURITY INVOKER.
			st.Effects |= engine.EffChangesIdentity
		}
		if l.eat("if") && !(l.eat("not") && l.eat("exists")) {
			return st, true
		}
		schema, _, named := l.name()
		if !named {
			return st, true
		}
		if systemSchema(schema) {
			st.Effects |= engine.EffWritesCatalog // mysql.proc, mysql.event
		}
		if schema == "" && (object == "function" || object == "procedure") {
			// CREATE FUNCTION f ... in a session whose database is mysql
			// creates mysql.f (currentdb.go)
			routineInDatabases(&st)
		}
		if object == "trigger" && l.eat("before", "after") && l.eat("insert", "update", "delete") && l.eat("on") {
			if ts, tn, ok := l.name(); ok {
				st.Tables = append(st.Tables, engine.TableRef{Schema: ts, Name: tn, Write: true})
				tableEffects(&st)
			}
		}
	case l.at("alter") && l.i+1 < len(l.t) && l.t[l.i+1].is(text, "user"):
		// ALTER USER USER() / CURRENT_USER: the session's own account
		st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbAlter, "user", true
		own := func(k int) bool { // USER() or CURRENT_USER[()]
			return k < len(l.t) && (l.t[k].is(text, "current_user") ||
				l.t[k].is(text, "user") && k+2 < len(l.t) && l.t[k+1].kind == '(' && l.t[k+2].kind == ')')
		}
		if own(l.i + 2) {
			st.Object = ""
			for k := l.i + 3; k < len(l.t); k++ {
				if l.t[k].kind == ',' {
					st.Object = "user" // and another account after it
				}
			}
		}
	case l.eat("alter"):
		other, good := l.options()
		if !good {
			return st, false
		}
		if o := l.object("event", "function", "procedure", "server", "view"); o != "" {
			ddl(engine.VerbAlter, o)
			if other && (o == "event" || o == "view" && !pc.invoker) {
				st.Effects |= engine.EffChangesIdentity // ALTER DEFINER = u VIEW, EVENT
			}
			if o == "server" {
				st.Effects |= engine.EffOpensConnection
			} else if schema, _, _ := l.name(); systemSchema(schema) {
				st.Effects |= engine.EffWritesCatalog
			}
		}
	case l.eat("load"):
		if l.eat("data") || l.eat("xml") {
			l.eat("low_priority", "concurrent")
			st.Kind, st.Kinds, st.CopyDir = engine.KindCopy, 1<<engine.KindInsert, engine.CopyFrom
			switch {
			case l.eat("local"):
				st.Copy, ok = engine.CopyStdio, true
			case l.at("infile"):
				st.Copy, st.Effects, ok = engine.CopyFile, engine.EffReadsServerFile, true
			}
		}
	case l.eat("grant"):
		return grant(text, pc, engine.VerbGrant)
	case l.eat("revoke"):
		return grant(text, pc, engine.VerbRevoke)
	case l.eat("rename"):
		if l.at("user") {
			st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbAlter, "user", true
		}
	case l.at("drop") && l.i+1 < len(l.t) && (l.t[l.i+1].is(text, "user") || l.t[l.i+1].is(text, "role")):
		st.Kind, st.Verb, st.Object, ok = engine.KindDCL, engine.VerbDrop, l.t[l.i+1].name(text), true
	case l.eat("drop"):
		if o := l.object("function", "procedure", "trigger", "event", "server"); o != "" {
			ddl(engine.VerbDrop, o)
			if l.eat("if") && !l.eat("exists") {
				return st, true
			}
			if schema, _, _ := l.name(); systemSchema(schema) && o != "trigger" && o != "server" {
				st.Effects |= engine.EffWritesCatalog
			}
		}
	case l.eat("change"):
		if l.at("master") || l.eat("replication") && l.at("source") {
			st.Effects, ok = engine.EffOpensConnection, true
		}
	case l.eat("start"):
		if l.at("slave", "replica") || l.eat("all") && l.at("slaves", "replicas") {
			st.Effects, ok = engine.EffOpensConnection, true
		}
	case l.eat("execute"):
		if l.eat("immediate") {
			return immediate(text, l)
		}
	case l.eat("prepare"):
		// TiDB parses PREPARE s FROM 'text' and FROM @v: one here prepares
		// an expression (MariaDB: CONCAT(...), 'a' 'b'), text the server
		// assembles as it runs
		if _, _, named := l.name(); named && l.eat("from") {
			st.DynamicSQL, ok = true, true
		}
	case l.at("update", "delete"):
		if st, ok := portionOf(text, pc); ok {
			return st, true
		}
		if l.at("delete") {
			return returning(text, pc)
		}
	case l.at("insert", "replace"):
		return returning(text, pc)
	case l.eat("set"):
		if l.at("statement") {
			return setStatement(text, pc, l.t[l.i])
		}
		if l.eat("password") {
			// SET PASSWORD [FOR account] = OLD_PASSWORD(...) and the other
			// forms TiDB does not parse: another account's password is
			// its takeover (ddl.go classify).
			st.Kind, st.Verb = engine.KindDCL, engine.VerbAlter
			if l.eat("for") && !l.at("current_user") {
				st.Object = "user"
			}
			return st, true
		}
		if l.eat("default") && l.at("role") {
			// MariaDB's SET DEFAULT ROLE r [FOR account]: the roles the
			// account's sessions start with, which may hold anything.
			st.Kind, st.Effects = engine.KindSetStmt, engine.EffGrantsPrivilege
			return st, true
		}
	}
	return st, ok
}

// grant recognizes a GRANT or REVOKE TiDB does not parse (MariaDB's
// privileges: SET USER, BINLOG ADMIN, READ_ONLY ADMIN, ...; IDENTIFIED
// VIA; ON PACKAGE): as the parsed ones (effects.go), a GRANT hands out
// control of the server when it is global (ON *.*) or on the mysql schema,
// of SUPER, FILE, PROCESS, RELOAD, SHUTDOWN or CREATE USER, WITH GRANT
// OPTION, IDENTIFIED (it creates the account or sets its password) or
// PROXY. Without ON it grants roles.
func grant(text string, pc *piece, verb engine.DDLVerb) (st engine.StmtFacts, ok bool) {
	st.Kind, st.Verb, st.Object = engine.KindDCL, verb, "user"
	var privs, roles []string
	on, global, mysqlLevel, proxy, dangerous, unqualified := false, false, false, false, false, false
	depth, toSeen, expectName := 0, false, true
	var prev token
	for i, first := pc.lo, true; i < pc.hi; first = false {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		i = t.hi
		switch {
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case depth > 0:
		case first:
			// GRANT or REVOKE itself
		case !on && !toSeen && t.is(text, "on"):
			on = true
			// [TABLE | FUNCTION | PROCEDURE | PACKAGE [BODY]] level
			lv, _ := nextToken(text[:pc.hi], i)
			for lv.is(text, "table") || lv.is(text, "function") || lv.is(text, "procedure") || lv.is(text, "package") || lv.is(text, "body") {
				i = lv.hi
				lv, _ = nextToken(text[:pc.hi], i)
			}
			dot, _ := nextToken(text[:pc.hi], lv.hi)
			star, _ := nextToken(text[:pc.hi], dot.hi)
			switch {
			case lv.kind == '*' && dot.kind == '.' && star.kind == '*':
				global = true
			case (lv.kind == tokWord || lv.kind == tokIdent) && dot.kind == '.' && coversSystem(lv.name(text)):
				mysqlLevel = true // ON mysql.*, ON `m_sql`.*, ON `%`.t (currentdb.go)
			case dot.kind != '.':
				unqualified = true // ON * or ON t: the current database's
			}
		case !on && !toSeen && (t.is(text, "to") || t.is(text, "from")):
			toSeen = true
		case !on && !toSeen && t.kind == tokWord:
			if len(privs) == 0 && t.is(text, "proxy") {
				proxy = true
			}
			w := t.name(text)
			privs = append(privs, w)
			if prev.kind == tokWord && prev.is(text, "create") && w == "user" {
				dangerous = true
			}
			switch w {
			case "super", "file", "process", "reload", "shutdown", "grant":
				dangerous = true
			}
			if expectName {
				roles = append(roles, w)
			}
			expectName = false
		case !on && !toSeen && t.kind == tokIdent:
			if expectName {
				roles = append(roles, t.name(text))
			}
			expectName = false
		case !on && !toSeen && t.kind == ',':
			expectName = true
		case t.is(text, "identified"):
			if verb == engine.VerbGrant {
				st.Effects |= engine.EffGrantsPrivilege
			}
		case t.is(text, "option") && prev.is(text, "grant") && verb == engine.VerbGrant:
			st.Effects |= engine.EffGrantsPrivilege // WITH GRANT OPTION
		}
		prev = t
	}
	if !toSeen && !on {
		return st, false
	}
	if !on {
		// What a role holds is not in the text: it may be anything,
		// granted or revoked (REVOKE ALL PRIVILEGES, GRANT OPTION FROM u
		// takes every privilege).
		if verb == engine.VerbGrant {
			st.Object, st.Roles = "role", roles
		}
		st.Effects |= engine.EffGrantsPrivilege
		return st, true
	}
	if verb == engine.VerbGrant {
		// TO an account that may not exist (grantee.go): CURRENT_USER
		// is not told apart here, which can only deny more
		st.CreatesGrantee = engine.GranteeMay
	}
	if global || mysqlLevel || proxy && verb == engine.VerbGrant || dangerous {
		// (a REVOKE at these levels takes control of the server from
		// whoever held it: currentdb.go revokeEffects)
		st.Effects |= engine.EffGrantsPrivilege
	}
	if unqualified && st.Effects&engine.EffGrantsPrivilege == 0 {
		for _, db := range systemDatabases {
			in := st
			in.Effects |= engine.EffGrantsPrivilege
			st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: in})
		}
	}
	return st, true
}
