package mysql

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// The session's current database. MariaDB resolves every unqualified name
// in it: after USE mysql (or COM_INIT_DB, a database in the handshake or in
// COM_CHANGE_USER) SELECT * FROM user reads mysql.user, INSERT INTO func
// registers a UDF for the next start, and GRANT ALL ON * TO app is GRANT
// ALL ON mysql.*. Facts are cached by text alone (engine/dialect.go), so a
// statement with an unqualified name gets, besides its facts in an
// application's database, its facts in each of the server's own databases
// where they differ (engine.StmtFacts.InDatabase), and the engine applies
// the one of the session's database on each call: without allocating, and
// comparing names without case, as lower_case_table_names may fold them.
//
// A USE earlier in the same text selects the database for the statements
// after it (USE mysql; SELECT * FROM user), which then have one set of
// facts only: the text says where their names resolve.

// systemDatabases are the server's own databases, where an unqualified
// name is a system object. The engine compares them without case.
var systemDatabases = [...]string{"mysql", "information_schema", "performance_schema", "sys"}

// schemaOf is the database a table name resolves in: its own qualifier,
// else the database the walker resolves unqualified names in ("": an
// application's), unless it names a WITH query in scope.
func (w *walker) schemaOf(t *ast.TableName) string {
	if t.Schema.L != "" || w.db == "" {
		return t.Schema.L
	}
	for _, c := range w.st.CTENames {
		if c == t.Name.L {
			return ""
		}
	}
	return w.db
}

// resolve fills the database of every unqualified relation (not a WITH
// query) with the one unqualified names resolve in, once the statement is
// walked and its WITH names are known.
func (w *walker) resolve() {
	if w.db == "" {
		return
	}
	for i := range w.st.Tables {
		t := &w.st.Tables[i]
		if t.Schema == "" && !t.CTE {
			t.Schema = w.db
		}
	}
}

// useDatabase is the database a USE selects, as the facts name it: one of
// systemDatabases, in any case, or "" for any other (an application's).
func useDatabase(name string) string {
	for _, d := range systemDatabases {
		if strings.EqualFold(name, d) {
			return d
		}
	}
	return ""
}

// mayDiffer reports whether the facts of st, filled for an application's
// database, can differ in one of the server's own: it has a GRANT level or
// a routine name that is unqualified (dependent), a set operation (a
// catalog arm: catalog_union), or an unqualified relation that it writes or
// whose name is a credential table's or performance_schema's setup_
// (effects.go tableEffects), or unqualified relations in a statement that
// reads the catalog or has a probe's shape (probes.go). A fact added that depends on reading a system
// database must be added here too; every other statement keeps its one
// set of facts, and its cold path the cost of one walk.
func mayDiffer(st *engine.StmtFacts, dependent bool) bool {
	if dependent || st.UnionArms > 0 {
		return true
	}
	unqualified := false
	for i := range st.Tables {
		t := &st.Tables[i]
		if t.Schema == "" && !t.CTE && (t.Write || credentialTables[t.Name] || strings.HasPrefix(t.Name, "setup_")) {
			return true
		}
		unqualified = unqualified || t.Schema == "" && !t.CTE
	}
	// probes.go: whether a statement that reads the catalog, or has a
	// probe's shape, reads an application table depends on what its
	// unqualified names are.
	return unqualified && (st.Probes != 0 || catalogRead(st))
}

// inDatabases adds to st, which was filled for an application's database,
// its facts in each of the server's own databases where they differ. When
// only the relations it writes depend on the database (byTables), its
// facts there are its tables resolved there, with their effects
// (tableEffects); otherwise the statement is walked again in each.
func inDatabases(st *engine.StmtFacts, s ast.StmtNode, dependent bool) {
	byTables := !dependent && byTables(st)
	var found [len(systemDatabases)]engine.DatabaseFacts // one allocation for all
	n := 0
	for _, db := range systemDatabases {
		var v engine.StmtFacts
		if byTables {
			v = detached(*st)
			v.Loc, v.Length = 0, 0 // the statement's place is st's
			v.Tables = slices.Clone(st.Tables)
			for i := range v.Tables {
				if t := &v.Tables[i]; t.Schema == "" && !t.CTE {
					t.Schema = db
				}
			}
			tableEffects(&v)
		} else {
			v = engine.StmtFacts{PrevKinds: st.PrevKinds}
			fillStmtIn(&v, s, 0, db)
		}
		if v.Effects == st.Effects && v.CatalogUnion == st.CatalogUnion && v.Probes == st.Probes && v.DynamicSQL == st.DynamicSQL {
			continue
		}
		v.TimeProbe = v.TimeProbe || st.TimeProbe // a sleep stacked after another statement (stmtFacts)
		found[n] = engine.DatabaseFacts{Database: db, Facts: v}
		n++
	}
	if n > 0 {
		st.InDatabase = append(st.InDatabase, found[:n]...)
	}
}

// grantDependent reports whether a GRANT names its level by the current
// database: ON * (every table of it) or ON tbl.
func grantDependent(x *ast.GrantStmt) bool { return levelDependent(x.Level) }

// levelDependent reports whether a GRANT or REVOKE level names the current
// database: ON * or ON tbl.
func levelDependent(l *ast.GrantLevel) bool {
	if l == nil {
		return false
	}
	switch l.Level {
	case ast.GrantLevelDB, ast.GrantLevelTable:
		return l.DBName == ""
	}
	return false
}

// grantEffects is what a GRANT hands out in a session whose current
// database is db (""; an application's, or none): control of the server
// when it is global (ON *.*), on a database whose name, as the pattern the
// server matches it as, covers one of the server's own (coversSystem: ON
// `m_sql`.*, ON `%`.*, ON * after USE mysql), WITH GRANT OPTION, of a
// privilege that is control of the server at any level (dangerousPrivs),
// IDENTIFIED (it creates the account or sets its password), REQUIRE or a
// resource limit (they alter the account), or TO PUBLIC
// (MariaDB 10.11: to every account there is and will be).
func grantEffects(x *ast.GrantStmt, db string) engine.EffectSet {
	grants := controlLevel(x.Level, x.Privs, db) || x.WithGrant
	for _, u := range x.Users {
		if u.AuthOpt != nil {
			// GRANT ... IDENTIFIED BY creates the account, or sets its
			// password, whatever sql_mode says (MariaDB).
			grants = true
		}
		if u.User != nil && strings.EqualFold(u.User.Username, "public") {
			grants = true
		}
	}
	// REQUIRE (SSL, X509, NONE, ...) and the resource limits (WITH
	// MAX_USER_CONNECTIONS n, ...) change the grantee account itself, at any
	// level, as ALTER USER would: GRANT SELECT ON app.* TO root@'%' REQUIRE
	// NONE. TiDB keeps REQUIRE and drops the limits, which only the text
	// still says (a name spelled like one is denied too).
	grants = grants || len(x.AuthTokenOrTLSOptions) > 0 || resourceLimit(x.Text())
	if grants {
		return engine.EffGrantsPrivilege
	}
	return 0
}

// controlLevel reports whether privileges at a GRANT or REVOKE level are
// control of the server: global (ON *.*), on a database whose name, as the
// pattern the server matches it as, covers one of the server's own
// (coversSystem), or a privilege that is control at any level
// (dangerousPrivs). db is the session's current database.
func controlLevel(l *ast.GrantLevel, privs []*ast.PrivElem, db string) bool {
	for _, p := range privs {
		if dangerousPrivs[p.Priv] {
			return true
		}
	}
	if l == nil {
		return true // REVOKE ALL PRIVILEGES, GRANT OPTION FROM u: every level
	}
	switch l.Level {
	case ast.GrantLevelGlobal:
		return true
	case ast.GrantLevelDB, ast.GrantLevelTable:
		name := l.DBName
		if name == "" {
			name = db // ON * and ON tbl: the current database
		}
		return name != "" && coversSystem(name)
	}
	return true // a level TiDB adds and this code does not know
}

// revokeEffects is what a REVOKE takes away in a session whose current
// database is db: control of the server, from whichever account held it,
// at the levels and of the privileges a GRANT of which hands it out
// (controlLevel): REVOKE ALL ON *.* FROM root@localhost leaves the server
// without its administrator.
func revokeEffects(x *ast.RevokeStmt, db string) engine.EffectSet {
	if controlLevel(x.Level, x.Privs, db) {
		return engine.EffGrantsPrivilege
	}
	return 0
}

// resourceLimits are the account options GRANT ... WITH takes besides
// GRANT OPTION.
var resourceLimits = [...]string{"max_queries_per_hour", "max_updates_per_hour", "max_connections_per_hour",
	"max_user_connections", "max_statement_time"}

// resourceLimit reports whether a GRANT's text names a resource limit.
func resourceLimit(text string) bool {
	for _, l := range resourceLimits {
		if len(text) >= len(l) && containsFold(text, l) {
			return true
		}
	}
	return false
}

// containsFold is strings.Contains without ASCII case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// coversSystem reports whether a database name in a GRANT, read as the
// pattern MariaDB matches grant names as (% any string, _ any character,
// \ makes the next one literal), matches one of the server's own
// databases, in any case: MariaDB matches the names of database-level
// grants as patterns, and whether it folds their case depends on
// lower_case_table_names; table- and routine-level names are taken as
// patterns too, which can only deny more. Trailing spaces, which the server
// refuses in a name, are ignored.
func coversSystem(pattern string) bool {
	pattern = strings.TrimRight(pattern, " ")
	for _, d := range systemDatabases {
		if likeFold(pattern, d) {
			return true
		}
	}
	return false
}

// likeFold matches s against a LIKE pattern with \ as its escape, folding
// case (Unicode simple folding: ſ matches s). s is ASCII.
func likeFold(p, s string) bool {
	for len(p) > 0 {
		r, n := utf8.DecodeRuneInString(p)
		switch r {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeFold(p, s[i:]) {
					return true
				}
			}
			return false
		case '_':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
			continue
		case '\\':
			if len(p) > 1 {
				p = p[1:]
				r, n = utf8.DecodeRuneInString(p)
			}
		}
		if s == "" || !strings.EqualFold(p[:n], s[:1]) {
			return false
		}
		p, s = p[n:], s[1:]
	}
	return s == ""
}

// selected returns the facts of st in the database db that a USE earlier
// in its text selected ("": an application's): they no longer depend on
// the session's.
func selected(st engine.StmtFacts, db string) engine.StmtFacts {
	for _, d := range st.InDatabase {
		if d.Database == db {
			f := d.Facts
			f.Loc, f.Length = st.Loc, st.Length
			return f
		}
	}
	st.InDatabase = nil
	return st
}

// mergeInDatabase merges what a statement nested in st (a routine's body
// statement, a PREPARE text) does in each system database into st's facts
// there, before merge adds in's own facts to st's: a database where either
// has facts of its own gets them, from st's and in's facts there (their own
// where they have none there).
func mergeInDatabase(st, in *engine.StmtFacts) {
	if len(st.InDatabase) == 0 && len(in.InDatabase) == 0 {
		return
	}
	for _, db := range systemDatabases {
		si := slices.IndexFunc(st.InDatabase, func(d engine.DatabaseFacts) bool { return d.Database == db })
		ii := slices.IndexFunc(in.InDatabase, func(d engine.DatabaseFacts) bool { return d.Database == db })
		if si < 0 && ii < 0 {
			continue
		}
		src := *in
		if ii >= 0 {
			src = in.InDatabase[ii].Facts
		}
		src.InDatabase = nil
		if si < 0 {
			f := detached(*st)
			st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: f})
			si = len(st.InDatabase) - 1
		}
		merge(&st.InDatabase[si].Facts, &src)
	}
}

// detached is a copy of f without its facts in other databases, whose
// slices do not share their free capacity with f's, so that appending to
// either leaves the other as it is.
func detached(f engine.StmtFacts) engine.StmtFacts {
	f.InDatabase = nil
	f.Tables, f.Funcs, f.Cols = slices.Clip(f.Tables), slices.Clip(f.Funcs), slices.Clip(f.Cols)
	f.Languages, f.Extensions, f.Settings = slices.Clip(f.Languages), slices.Clip(f.Extensions), slices.Clip(f.Settings)
	f.Roles, f.CTENames = slices.Clip(f.Roles), slices.Clip(f.CTENames)
	return f
}

// writeKinds are the kinds of statement that change the objects they name.
const writeKinds = engine.KindSet(1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete |
	1<<engine.KindMerge | 1<<engine.KindTruncate | 1<<engine.KindCopy | 1<<engine.KindDDL)

// unparsedInDatabase gives a statement TiDB does not parse, whose facts
// are what is certain from its words (unparsed.go), its facts in each
// system database, where its unqualified names would be the system
// objects: in mysql a bare word that names a credential table (user,
// global_priv, ...) reads credentials, and a statement that writes
// (insert, update, delete, DDL, ...) writes the catalog there, or, in
// performance_schema, may switch its instruments off. Which of its names
// are relations is not known, so any such word counts, in sessions whose
// database is a system one only.
func unparsedInDatabase(st *engine.StmtFacts, text string, pc *piece) {
	credential := false
	for i := pc.lo; i < pc.hi && !credential; {
		t, more := nextToken(text[:pc.hi], i)
		if !more {
			break
		}
		i = t.hi
		if (t.kind == tokWord || t.kind == tokIdent) && credentialTables[t.name(text)] {
			credential = true
		}
	}
	writes := (st.Kinds|1<<st.Kind)&writeKinds != 0
	for _, db := range systemDatabases {
		var add engine.EffectSet
		switch {
		case db == "mysql" && credential:
			add |= engine.EffReadsCredentials
		}
		if writes {
			if db == "performance_schema" {
				add |= engine.EffDisablesLogging
			} else {
				add |= engine.EffWritesCatalog
			}
		}
		if add == 0 {
			continue
		}
		i := slices.IndexFunc(st.InDatabase, func(d engine.DatabaseFacts) bool { return d.Database == db })
		if i < 0 {
			st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: detached(*st)})
			i = len(st.InDatabase) - 1
		}
		st.InDatabase[i].Facts.Effects |= add
	}
}

// routineInDatabases gives a CREATE of a routine whose name is not
// qualified its facts in each system database, where it is created:
// writes_catalog.
func routineInDatabases(st *engine.StmtFacts) {
	for _, db := range systemDatabases {
		i := slices.IndexFunc(st.InDatabase, func(d engine.DatabaseFacts) bool { return d.Database == db })
		if i < 0 {
			st.InDatabase = append(st.InDatabase, engine.DatabaseFacts{Database: db, Facts: detached(*st)})
			i = len(st.InDatabase) - 1
		}
		st.InDatabase[i].Facts.Effects |= engine.EffWritesCatalog
	}
}

// byTables reports whether what st does in another database follows from
// its tables alone: no set operation (catalog_union), no probe and no
// catalog read (probes.go), and no unqualified relation that it only reads
// (which there could be a catalog read, or a probe's).
func byTables(st *engine.StmtFacts) bool {
	if st.UnionArms > 0 || st.Probes != 0 || catalogRead(st) {
		return false
	}
	for i := range st.Tables {
		if t := &st.Tables[i]; t.Schema == "" && !t.CTE && !t.Write {
			return false
		}
	}
	return true
}

// callEffects: the sys schema's procedures that change performance_schema's
// instruments and consumers (ps_setup_disable_instrument('%'), ...,
// ps_setup_reset_to_default, ps_setup_reload_saved) or empty its history
// (ps_truncate_all_tables) change what the server records, whether named
// sys.p or p in a session whose database is sys (db). The ps_setup_show_*
// procedures only read.
func callEffects(x *ast.CallStmt, db string) engine.EffectSet {
	if x.Procedure == nil {
		return 0
	}
	schema := x.Procedure.Schema.L
	if schema == "" {
		schema = db
	}
	name := x.Procedure.FnName.L
	if schema == "sys" && (strings.HasPrefix(name, "ps_setup_") && !strings.HasPrefix(name, "ps_setup_show_") || name == "ps_truncate_all_tables") {
		return engine.EffDisablesLogging
	}
	return 0
}

// tablesInDatabases settles the facts in each system database of a
// statement read by mariadb.go: those its parsed parts brought (merge), made
// to agree with the whole statement's, and, from its table list, what its
// unqualified relations do there (a trigger's table, a RETURNING
// statement's target): the facts byTables gives.
func tablesInDatabases(st *engine.StmtFacts) {
	if len(st.InDatabase) == 0 && !slices.ContainsFunc(st.Tables, func(t engine.TableRef) bool { return t.Schema == "" && !t.CTE }) {
		return
	}
	var found [len(systemDatabases)]engine.DatabaseFacts
	n := 0
	for _, db := range systemDatabases {
		i := slices.IndexFunc(st.InDatabase, func(d engine.DatabaseFacts) bool { return d.Database == db })
		var v engine.StmtFacts
		if i >= 0 {
			v = st.InDatabase[i].Facts
		} else {
			v = detached(*st)
			v.Loc, v.Length = 0, 0
		}
		v.PrevKinds = st.PrevKinds
		v.Kinds |= st.Kinds
		v.Effects |= st.Effects
		v.TimeProbe = v.TimeProbe || st.TimeProbe
		v.Tables = slices.Clone(v.Tables)
		for k := range v.Tables {
			if t := &v.Tables[k]; t.Schema == "" && !t.CTE {
				t.Schema = db
			}
		}
		tableEffects(&v)
		if i >= 0 || v.Effects != st.Effects || v.CatalogUnion != st.CatalogUnion || v.Probes != st.Probes {
			found[n] = engine.DatabaseFacts{Database: db, Facts: v}
			n++
		}
	}
	st.InDatabase = nil
	if n > 0 {
		st.InDatabase = append(st.InDatabase, found[:n]...)
	}
}
