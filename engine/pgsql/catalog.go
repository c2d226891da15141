package pgsql

// The database's own objects, from its catalog (engine/catalog.go): the
// queries sqlfwd's monitoring role runs (docs/operations.md, "The catalog
// connection") and what their answers do, read by the same walker that
// judges statements. A function's body is judged as if it ran, exactly as a
// call in the message that created it is (body.go afterStatement): the
// definition pg_get_functiondef prints, followed by a call.

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// catalogRows bounds each catalog query's rows, so that the catalog's
// memory is bounded for any database; a catalog that reaches it is read
// as far as it goes and says so (a relation past it is unknown_object).
const catalogRows = 100000

var systemSchemas = []string{"pg_catalog", "information_schema"}

const userSchemas = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'`

var catalogQueries = []engine.CatalogQuery{
	// The first query also sets the session's lock_timeout: a later one
	// (pg_get_viewdef, pg_get_expr) takes a relation's AccessShareLock,
	// and waiting for one behind a migration's DDL while holding another
	// made a deadlock in which PostgreSQL cancelled pg_restore's ALTER
	// TABLE (TestMigrationsCatalogPG); so the read gives up first (a
	// failed read keeps the catalog in force and is tried again).
	{Name: "relations", SQL: `SELECT n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN (SELECT pg_catalog.set_config('lock_timeout', '100ms', false)) l
WHERE c.relkind IN ('r', 'p', 'm', 'f', 'S') AND n.nspname NOT LIKE 'pg\_toast%' LIMIT 100000`},
	{Name: "views", SQL: `SELECT n.nspname, c.relname, pg_catalog.pg_get_viewdef(c.oid) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'v' LIMIT 100000`},
	{Name: "routines", SQL: `SELECT n.nspname, p.proname, p.prokind, pg_catalog.pg_get_functiondef(p.oid), p.prosecdef::text, pg_catalog.pg_get_userbyid(p.proowner) FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.prokind IN ('f', 'p') AND ` + userSchemas + ` LIMIT 100000`},
	{Name: "triggers", SQL: `SELECT n.nspname, t.tgname, n.nspname, c.relname, t.tgtype::text, fn.nspname, p.proname FROM pg_catalog.pg_trigger t
JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid JOIN pg_catalog.pg_namespace fn ON fn.oid = p.pronamespace
WHERE NOT t.tgisinternal LIMIT 100000`},
	{Name: "rules", SQL: `SELECT n.nspname, r.rulename, n.nspname, c.relname, r.ev_type::text, pg_catalog.pg_get_ruledef(r.oid) FROM pg_catalog.pg_rewrite r
JOIN pg_catalog.pg_class c ON c.oid = r.ev_class JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE r.rulename <> '_RETURN' LIMIT 100000`},
	{Name: "not null columns", SQL: `SELECT n.nspname, c.relname, a.attname FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnotnull AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND ` + userSchemas + ` LIMIT 100000`},
	// The search_path a login role starts with (searchpath.go): ALTER ROLE
	// [IN DATABASE] / ALTER DATABASE ... SET rows, and the server's own
	// value as this role's session sees it with its source.
	{Name: "search_path settings", SQL: `SELECT COALESCE(r.rolname, ''), (s.setdatabase <> 0)::text, c FROM pg_catalog.pg_db_role_setting s
LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.setrole CROSS JOIN LATERAL pg_catalog.unnest(s.setconfig) c
WHERE s.setdatabase IN (0, (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())) AND c LIKE 'search!_path=%' ESCAPE '!' LIMIT 100000`},
	{Name: "search_path", SQL: `SELECT reset_val, source, pg_catalog.current_database() FROM pg_catalog.pg_settings WHERE name = 'search_path'`},
	// Expressions the server runs without a statement naming them (column
	// defaults, CHECK constraints, index expressions, row security
	// policies) that call set_config: they may change any session's path.
	{Name: "implicit set_config", SQL: `SELECT 'a column default' FROM pg_catalog.pg_attrdef d WHERE pg_catalog.pg_get_expr(d.adbin, d.adrelid) ILIKE '%set!_config%' ESCAPE '!'
UNION ALL SELECT 'a CHECK constraint' FROM pg_catalog.pg_constraint c WHERE c.conbin IS NOT NULL AND pg_catalog.pg_get_expr(c.conbin, c.conrelid) ILIKE '%set!_config%' ESCAPE '!'
UNION ALL SELECT 'an index expression' FROM pg_catalog.pg_index i WHERE i.indexprs IS NOT NULL AND pg_catalog.pg_get_expr(i.indexprs, i.indrelid) ILIKE '%set!_config%' ESCAPE '!'
UNION ALL SELECT 'a row security policy' FROM pg_catalog.pg_policy p WHERE pg_catalog.pg_get_expr(p.polqual, p.polrelid) ILIKE '%set!_config%' ESCAPE '!' OR pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) ILIKE '%set!_config%' ESCAPE '!'
LIMIT 1`},
	// Event triggers: their functions run on DDL (any statement of kind
	// ddl; disabled ones count, ENABLE is DDL too).
	{Name: "event triggers", SQL: `SELECT e.evtname, e.evtevent, n.nspname, p.proname FROM pg_catalog.pg_event_trigger e
JOIN pg_catalog.pg_proc p ON p.oid = e.evtfoid JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace LIMIT 100000`},
	// Writes that reach other tables, whose row triggers fire there
	// (engine.Reach): partitions and inheritance children (p: of a
	// partitioned table, i: of a plain one), and foreign keys into a
	// table (f, then the ON DELETE and ON UPDATE actions).
	{Name: "reached tables", SQL: `SELECT pn.nspname, p.relname, cn.nspname, c.relname, CASE p.relkind WHEN 'p' THEN 'p' ELSE 'i' END FROM pg_catalog.pg_inherits h
JOIN pg_catalog.pg_class p ON p.oid = h.inhparent JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
JOIN pg_catalog.pg_class c ON c.oid = h.inhrelid JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
UNION ALL SELECT pn.nspname, p.relname, cn.nspname, c.relname, 'f' || k.confdeltype::text || k.confupdtype::text FROM pg_catalog.pg_constraint k
JOIN pg_catalog.pg_class p ON p.oid = k.confrelid JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
WHERE k.contype = 'f' LIMIT 100000`},
	// Routines an access to a table runs without naming them (engine.
	// Implicit), from pg_depend: column DEFAULTs and CHECKs (w: INSERT and
	// UPDATE), trigger WHEN conditions (t: any write), row security
	// policies (a: any access).
	{Name: "implicit calls", SQL: `SELECT n.nspname, c.relname, fn.nspname, p.proname, x.k FROM (
SELECT a.adrelid AS rel, d.refobjid AS fn, 'w' AS k FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_attrdef a ON a.oid = d.objid
WHERE d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
UNION ALL SELECT k.conrelid, d.refobjid, 'w' FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_constraint k ON k.oid = d.objid
WHERE d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND k.conrelid <> 0
UNION ALL SELECT t.tgrelid, d.refobjid, 't' FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_trigger t ON t.oid = d.objid
WHERE d.classid = 'pg_catalog.pg_trigger'::pg_catalog.regclass AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.refobjid <> t.tgfoid
UNION ALL SELECT y.polrelid, d.refobjid, 'a' FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_policy y ON y.oid = d.objid
WHERE d.classid = 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
) x JOIN pg_catalog.pg_class c ON c.oid = x.rel JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_proc p ON p.oid = x.fn JOIN pg_catalog.pg_namespace fn ON fn.oid = p.pronamespace
WHERE fn.nspname NOT IN ('pg_catalog', 'information_schema') LIMIT 100000`},
}

// CatalogQueries returns the queries the monitoring role runs.
func (pgDialect) CatalogQueries() []engine.CatalogQuery { return catalogQueries }

// BuildCatalog reads the answers to CatalogQueries.
func (pgDialect) BuildCatalog(rows [][][]string, o engine.CatalogOptions) *engine.Catalog {
	o.SystemSchemas = append(o.SystemSchemas, systemSchemas...)
	var objs []engine.CatalogObject
	var notNull []engine.NotNullColumn
	get := func(i int) [][]string {
		if i < len(rows) {
			return rows[i]
		}
		return nil
	}
	for _, r := range get(0) {
		if len(r) >= 2 {
			objs = append(objs, engine.CatalogObject{Kind: engine.CatalogRelation, Schema: r[0], Name: r[1]})
		}
	}
	for _, r := range get(1) {
		if len(r) < 3 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogView, Schema: r[0], Name: r[1]}
		ob.Def = r[2]
		ob.Facts, ob.Unreadable = readOne(o.Previous, r[2])
		objs = append(objs, ob)
	}
	// Functions by name, for triggers.
	funcs := map[string][]int{}
	for _, r := range get(2) {
		if len(r) < 4 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogRoutine, Schema: r[0], Name: r[1]}
		call := "SELECT "
		if r[2] == "p" {
			call = "CALL "
		}
		call += quoteIdent(r[0]) + "." + quoteIdent(r[1]) + "()"
		ob.Def = r[3] + "\x00" + call
		ob.Facts, ob.Unreadable = ranAfter(o.Previous, r[3], call)
		if len(r) >= 6 {
			ob.Definer, ob.Owner = r[4] == "true", r[5]
		}
		ob.SearchPath, ob.OwnPath = routinePath(r[3], ob.Owner, ob.Definer)
		funcs[r[0]+"."+r[1]] = append(funcs[r[0]+"."+r[1]], len(objs))
		objs = append(objs, ob)
	}
	for _, r := range get(3) {
		if len(r) < 7 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogTrigger, Schema: r[0], Name: r[1], OnSchema: r[2], On: r[3], Events: triggerEvents(r[4])}
		idx := funcs[r[5]+"."+r[6]]
		if len(idx) == 0 {
			ob.Unreadable = "its function " + r[5] + "." + r[6] + " is not readable by the monitoring role"
		}
		for _, i := range idx {
			mergeObject(&ob, &objs[i])
		}
		if len(idx) == 1 {
			// the body runs in its function's own search_path
			ob.SearchPath, ob.OwnPath = objs[idx[0]].SearchPath, objs[idx[0]].OwnPath
		}
		objs = append(objs, ob)
	}
	for _, r := range get(4) {
		if len(r) < 6 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogRule, Schema: r[0], Name: r[1], OnSchema: r[2], On: r[3], Events: ruleEvents(r[4])}
		ob.Def = r[5]
		ob.Facts, ob.Unreadable = readOne(o.Previous, r[5])
		// The rule's actions, not its CREATE.
		ob.Facts.Kinds &^= 1 << engine.KindDDL
		ob.Facts.Kind, ob.Facts.Verb, ob.Facts.Object = engine.KindUtility, engine.VerbNone, ""
		objs = append(objs, ob)
	}
	for _, r := range get(5) {
		if len(r) >= 3 {
			notNull = append(notNull, engine.NotNullColumn{Schema: r[0], Table: r[1], Column: r[2]})
		}
	}
	for _, r := range get(9) {
		if len(r) < 4 {
			continue
		}
		ob := engine.CatalogObject{Kind: engine.CatalogTrigger, Schema: r[2], Name: r[0], Events: 1 << engine.KindDDL, OnDDL: true}
		idx := funcs[r[2]+"."+r[3]]
		if len(idx) == 0 {
			ob.Unreadable = "its function " + r[2] + "." + r[3] + " is not readable by the monitoring role"
		}
		for _, i := range idx {
			mergeObject(&ob, &objs[i])
		}
		if len(idx) == 1 {
			ob.SearchPath, ob.OwnPath = objs[idx[0]].SearchPath, objs[idx[0]].OwnPath
		}
		objs = append(objs, ob)
	}
	for _, r := range get(10) {
		if len(r) >= 5 {
			o.Reaches = append(o.Reaches, reaches(r)...)
		}
	}
	for _, r := range get(11) {
		if len(r) < 5 {
			continue
		}
		on := engine.KindSet(1<<engine.KindSelect | 1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete | 1<<engine.KindTruncate)
		switch r[4] {
		case "w":
			on = 1<<engine.KindInsert | 1<<engine.KindUpdate
		case "t":
			on &^= 1 << engine.KindSelect
		}
		o.Implicit = append(o.Implicit, engine.Implicit{Schema: r[0], Table: r[1], FuncSchema: r[2], Func: r[3], On: on})
	}
	o.Resolve, o.IsBuiltin = engine.ResolveSearchPath, isBuiltinFunc
	o.SearchPathDefaults = pathDefaults(get(6), get(7))
	if r := get(7); len(r) > 0 && len(r[0]) >= 3 {
		// The one database the connection reads: a session in another
		// is judged as one whose objects are unknown (Catalog.For).
		o.Databases = []string{r[0][2]}
	}
	if r := get(8); len(r) > 0 && len(r[0]) > 0 {
		o.PathUnsafe = r[0][0] + " calls set_config"
	}
	for i := range objs {
		// A routine that changes the path may run where no statement
		// names it (a column default, a trigger of a trigger).
		if ob := &objs[i]; ob.Kind == engine.CatalogRoutine && ob.Facts.PathChange != engine.PathKept && o.PathUnsafe == "" && !slices.Contains(o.TrustSchemas, ob.Schema) {
			o.PathUnsafe = "function " + ob.Schema + "." + ob.Name + " changes the search_path"
		}
	}
	return engine.NewCatalog(objs, notNull, o)
}

// pathDefaults reads the search_path each login role starts with in this
// database: ALTER ROLE IN DATABASE, else ALTER ROLE, else ALTER DATABASE,
// else ALTER ROLE ALL, else the server's (known only when the monitoring
// role's own value comes from the server: its source is not a role's or
// database's setting).
func pathDefaults(settings, server [][]string) map[string]string {
	type key struct {
		role string
		inDB bool
	}
	set := map[key]string{}
	roles := map[string]bool{}
	for _, r := range settings {
		if len(r) < 3 || !strings.HasPrefix(r[2], "search_path=") {
			continue
		}
		set[key{r[0], r[1] == "true"}] = strings.TrimPrefix(r[2], "search_path=")
		if r[0] != "" {
			roles[r[0]] = true
		}
	}
	out := map[string]string{}
	first := func(ks ...key) (string, bool) {
		for _, k := range ks {
			if v, ok := set[k]; ok {
				return v, true
			}
		}
		return "", false
	}
	if v, ok := first(key{"", true}, key{"", false}); ok {
		out[""] = v
	} else if len(server) > 0 && len(server[0]) >= 2 {
		switch server[0][1] {
		case "default", "configuration file", "command line", "environment variable":
			out[""] = server[0][0]
		}
	}
	for role := range roles {
		if v, ok := first(key{role, true}, key{role, false}); ok {
			out[role] = v
		} else if v, ok := out[""]; ok {
			out[role] = v
		} else {
			// Its default is the server's, which is not known: no entry.
			continue
		}
	}
	return out
}

// readOne returns the facts of a definition's one statement (a view's
// query, a rule's CREATE RULE), or why it could not be read.
func readOne(prev *engine.Catalog, text string) (engine.StmtFacts, string) {
	if strings.TrimSpace(text) == "" {
		return engine.StmtFacts{}, "no definition visible to the monitoring role"
	}
	if f, why, ok := prev.Reuse(text); ok {
		return f, why
	}
	tf := analyze(text)
	if tf.ParseError || len(tf.Stmts) == 0 {
		return engine.StmtFacts{}, "its definition could not be parsed"
	}
	f := tf.Stmts[0]
	return f, unparsedWhy(&f)
}

// routinePath returns the search_path a routine's definition (as
// pg_get_functiondef prints it) sets for its own run, `SET search_path TO
// 's', 'pg_temp'` (CREATE FUNCTION ... SET, ALTER FUNCTION ... SET): its
// schemas in order, $user as owner when the routine runs as its owner
// (SECURITY DEFINER); false when it sets none, or one the engine does not
// read: $user in an invoker's path (the caller's name), a name PostgreSQL
// would reject, a list in one string. An empty path (the empty string) is
// an empty list.
// The body's unqualified names resolve in it (engine.CatalogObject.OwnPath).
func routinePath(def, owner string, definer bool) ([]string, bool) {
	if !strings.Contains(def, "search_path") {
		return nil, false
	}
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false
	}
	cf := tree.Stmts[0].Stmt.GetCreateFunctionStmt()
	if cf == nil {
		return nil, false
	}
	var path []string
	found := false
	for _, o := range cf.Options {
		d := o.GetDefElem()
		if d == nil || d.Defname != "set" {
			continue
		}
		vs := d.Arg.GetVariableSetStmt()
		if vs == nil || !strings.EqualFold(vs.Name, "search_path") {
			continue
		}
		values, ok := constStrings(vs.Args)
		if vs.Kind != pg_query.VariableSetKind_VAR_SET_VALUE || !ok {
			return nil, false
		}
		path, found = nil, true
		if len(values) == 1 && values[0] == "" {
			path = []string{}
			continue
		}
		v, ok := pathValue(values)
		if !ok {
			return nil, false
		}
		if !definer && slices.Contains(values, "$user") {
			return nil, false
		}
		if path, ok = engine.ParseSearchPath(v, owner); !ok {
			return nil, false
		}
	}
	if path == nil {
		path = []string{}
	}
	return path, found
}

// ranAfter returns the facts of call, run right after the definition def
// in one message: the body's, as if it ran (body.go afterStatement).
func ranAfter(prev *engine.Catalog, def, call string) (engine.StmtFacts, string) {
	if strings.TrimSpace(def) == "" {
		return engine.StmtFacts{}, "no definition visible to the monitoring role"
	}
	if f, why, ok := prev.Reuse(def + "\x00" + call); ok {
		return f, why
	}
	tf := analyze(strings.TrimRight(def, "; \n\t") + ";\n" + call)
	if tf.ParseError || len(tf.Stmts) != 2 {
		return engine.StmtFacts{}, "its definition could not be parsed"
	}
	f := tf.Stmts[1]
	return f, unparsedWhy(&f)
}

func unparsedWhy(f *engine.StmtFacts) string {
	if f.Unparsed != "" {
		why := f.Unparsed
		f.Unparsed = ""
		return why
	}
	return ""
}

// mergeObject adds function fn's body to trigger ob.
func mergeObject(ob, fn *engine.CatalogObject) {
	f := &ob.Facts
	s := &fn.Facts
	f.Kinds |= s.Kinds
	f.Unfiltered |= s.Unfiltered
	f.Effects |= s.Effects
	f.DynamicSQL = f.DynamicSQL || s.DynamicSQL
	f.Tables = append(f.Tables, s.Tables...)
	f.Funcs = append(f.Funcs, s.Funcs...)
	f.Cols = append(f.Cols, s.Cols...)
	if ob.Unreadable == "" {
		ob.Unreadable = fn.Unreadable
	}
	// A SECURITY DEFINER trigger function runs as its owner.
	if fn.Definer {
		ob.Definer, ob.Owner = true, fn.Owner
	}
}

// reaches reads one row of the reached tables query: a write to a
// partitioned table reaches its partitions (an UPDATE may move a row to
// another: a DELETE there and an INSERT), one to a plain table with
// children its children (INSERT stays in the parent), and a DELETE or
// UPDATE of a row a foreign key references the referencing rows by the
// key's action (CASCADE: the same write; SET NULL or SET DEFAULT: an
// UPDATE), a TRUNCATE ... CASCADE every referencing table.
func reaches(r []string) []engine.Reach {
	const (
		ins, upd, del, trunc = 1 << engine.KindInsert, 1 << engine.KindUpdate, 1 << engine.KindDelete, 1 << engine.KindTruncate
	)
	at := func(on, as engine.KindSet) engine.Reach {
		return engine.Reach{FromSchema: r[0], From: r[1], Schema: r[2], Name: r[3], On: on, As: as}
	}
	how := r[4]
	switch {
	case how == "p":
		return []engine.Reach{at(ins|del|trunc, ins|del|trunc), at(upd, upd|ins|del)}
	case how == "i":
		return []engine.Reach{at(upd|del|trunc, upd|del|trunc)}
	case len(how) == 3 && how[0] == 'f':
		out := []engine.Reach{at(trunc, trunc)}
		switch how[1] {
		case 'c':
			out = append(out, at(del, del))
		case 'n', 'd':
			out = append(out, at(del, upd))
		}
		switch how[2] {
		case 'c', 'n', 'd':
			out = append(out, at(upd, upd))
		}
		return out
	}
	// Not known: every write reaches it as any write.
	return []engine.Reach{at(ins|upd|del|trunc, ins|upd|del|trunc)}
}

// triggerEvents reads pg_trigger.tgtype: INSERT 1<<2, DELETE 1<<3, UPDATE
// 1<<4, TRUNCATE 1<<5.
func triggerEvents(tgtype string) engine.KindSet {
	n := 0
	for _, c := range tgtype {
		if c < '0' || c > '9' {
			return 1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete | 1<<engine.KindTruncate
		}
		n = n*10 + int(c-'0')
	}
	var k engine.KindSet
	for bit, kind := range map[int]engine.StmtKind{2: engine.KindInsert, 3: engine.KindDelete, 4: engine.KindUpdate, 5: engine.KindTruncate} {
		if n&(1<<bit) != 0 {
			k |= 1 << kind
		}
	}
	return k
}

// ruleEvents reads pg_rewrite.ev_type: 1 SELECT, 2 UPDATE, 3 INSERT, 4
// DELETE.
func ruleEvents(ev string) engine.KindSet {
	switch ev {
	case "1":
		return 1 << engine.KindSelect
	case "2":
		return 1 << engine.KindUpdate
	case "3":
		return 1 << engine.KindInsert
	case "4":
		return 1 << engine.KindDelete
	}
	return 1<<engine.KindInsert | 1<<engine.KindUpdate | 1<<engine.KindDelete
}

// quoteIdent quotes a name for the synthesized call.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
