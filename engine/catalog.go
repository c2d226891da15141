package engine

// What the database's own objects do (issue 24): views, functions and
// procedures, triggers and rewrite rules that exist in the server, which a
// statement names without showing what they do. sqlfwd learns them from the
// server's catalog over a connection of its own (the daemon's catalog.go);
// the dialect reads the definitions into the facts below (its catalog.go),
// and the engine judges a statement with what its objects do:
//
//   - a relation that is a view is read (or written) through: its own
//     relations, columns, functions and effects are the statement's too, so
//     table rules and scopes see the tables behind it;
//   - a write to a table carries the effects of the triggers and rules that
//     fire on it for the statement's kinds, as if their bodies ran now;
//   - a call of a function or procedure carries its body's effects;
//   - a write whose condition is true for every row when some columns are
//     NOT NULL (StmtFacts.NotNullWhere) is unfiltered when the catalog says
//     they are;
//   - a relation or routine the catalog cannot resolve, or a body it cannot
//     read, is the fact unknown_object (StmtFacts.UnknownObject), which the
//     default policies log.
//
// The text's facts stay cached by text alone: the catalog is applied per
// call (throughCatalog) and its result remembered per text and catalog
// generation, so a verdict hit costs an atomic load and a pointer scan, and
// nothing at all without a catalog.

import (
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// CatalogKind is the kind of one catalog object.
type CatalogKind uint8

const (
	CatalogView     CatalogKind = iota + 1 // a view: Facts are what reading it reads
	CatalogRoutine                         // a function or procedure: Facts are its body's, as if it ran
	CatalogTrigger                         // a trigger on table On: Facts are its function's body, as if it ran
	CatalogRule                            // a rewrite rule on table On: Facts are its actions', as if they ran
	CatalogRelation                        // a table (or sequence, foreign table, ...): no Facts
)

var catalogKindNames = [...]string{"", "view", "function", "trigger", "rule", "table"}

func (k CatalogKind) String() string {
	if int(k) < len(catalogKindNames) {
		return catalogKindNames[k]
	}
	return "object"
}

// CatalogObject is one object the dialect read from the server's catalog.
// Names are lower-cased as the server folds them.
type CatalogObject struct {
	Kind         CatalogKind
	Schema, Name string
	// OnDDL: an event trigger (PostgreSQL's), which fires on DDL of any
	// object (Name is its name; no schema, no table).
	OnDDL bool
	// OnSchema, On: the table a trigger or rule fires on; Events the
	// statement kinds it fires for (KindInsert, KindUpdate, KindDelete,
	// KindTruncate; a MERGE fires insert, update and delete ones).
	OnSchema, On string
	Events       KindSet
	// Facts is what the object does when a statement uses it (see
	// CatalogKind).
	Facts StmtFacts
	// Unreadable says why the definition could not be read ("" when it
	// was): a body in a language the engine cannot read, one the parser
	// rejects, a definition the monitoring role may not see. A statement
	// that uses the object is then unknown_object.
	Unreadable string
	// Owner is the role that owns the object ("" when not read); Definer
	// says its code runs as Owner, not as the caller (a SECURITY DEFINER
	// function, a trigger of one; MySQL's SQL SECURITY DEFINER routines
	// and every trigger, Owner then DEFINER's user).
	Owner   string
	Definer bool
	// Def is the definition Facts were read from, by which the next
	// refresh reuses them when it has not changed (CatalogOptions.Previous).
	Def string
	// OwnPath: the routine (or a trigger's or event trigger's one
	// function) runs with its own search_path, SearchPath (PostgreSQL's
	// CREATE FUNCTION ... SET search_path; $user replaced, an empty path
	// empty), in which its body's unqualified names resolve: NewCatalog
	// qualifies them, where the path decides one.
	SearchPath []string
	OwnPath    bool
	// read is Facts as the dialect read them, before NewCatalog qualified
	// their names (OwnPath), for Reuse: the qualification depends on the
	// relations of the catalog it is in.
	read *StmtFacts
}

// NotNullColumn says that column Column of table Schema.Table cannot hold
// NULL (a NOT NULL constraint or a primary key).
type NotNullColumn struct {
	Schema, Table, Column string
}

// NotNullCond is a write's condition that is true for every row when each
// of Cols of the written table is NOT NULL (`WHERE id IS NOT NULL`):
// the dialect fills it (StmtFacts.NotNullWhere), the catalog decides it.
type NotNullCond struct {
	Kind          StmtKind // KindUpdate or KindDelete
	Schema, Table string
	Cols          []string
}

// Reach says that a write of kinds On to table FromSchema.From is also a
// write of kinds As to table Schema.Name, which fires that table's
// triggers: a partition or inheritance child of From (rows the statement
// routes or reaches there), or a table whose foreign key into From
// cascades (ON DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT; TRUNCATE
// ... CASCADE). Rules do not fire there: the rewriter applies only the
// named relation's.
type Reach struct {
	FromSchema, From string
	Schema, Name     string
	On, As           KindSet
}

// Implicit says that an access of kinds On to table Schema.Table runs
// routine FuncSchema.Func without the statement naming it: a column
// DEFAULT, a CHECK constraint, a trigger's WHEN condition or a row
// security policy whose expression calls it.
type Implicit struct {
	Schema, Table    string
	FuncSchema, Func string
	On               KindSet
}

// Catalog is what sqlfwd knows of one database's objects at one moment. It
// is immutable once made: a refresh makes a new one (Engine.SetCatalog).
type Catalog struct {
	gen       uint64
	views     map[string][]*CatalogObject // by name
	routines  map[string][]*CatalogObject // by name
	fires     map[string][]*CatalogObject // triggers and rules by the name of the table they fire on
	onDDL     []*CatalogObject            // event triggers
	reaches   map[string][]Reach          // by the name of the table written (Reach.From)
	implicit  map[string][]Implicit       // by the name of the table (Implicit.Table)
	relations map[string][]string         // every relation's schemas, by name
	notNull   map[string]struct{}         // "schema.table.column" and "table.column"
	trusted   map[string]struct{}         // schemas whose objects are taken as they are
	defs      map[string]*CatalogObject   // by definition (CatalogObject.Def)
	objects   int
	bytes     int64
	// How a statement's unqualified names resolve (CatalogOptions).
	resolve      Resolution
	pathDefaults map[string]string
	builtin      func(string) bool
	pathUnsafe   string
	// narrowed: some object's names were qualified by its own path
	// (ownPath); unsettled: they are not used (Unsettled).
	narrowed, unsettled bool
	// databases are the databases the catalog was read in (nil: it does
	// not say), compared without case when dbFold; a session in another
	// is judged with foreign (For).
	databases map[string]struct{}
	dbFold    bool
	foreign   *Catalog
	// foreignWhy, in a foreign catalog: why every name is unknown_object.
	foreignWhy string
}

// Resolution is how the server resolves an unqualified name, which the
// catalog applies per session.
type Resolution uint8

const (
	// ResolveAnywhere: every schema's object of the name is judged.
	ResolveAnywhere Resolution = iota
	// ResolveSearchPath: PostgreSQL's search_path (Session.SearchPath):
	// a relation is the first on the path that has one of the name
	// (temporary relations first unless the path names pg_temp, after
	// it; pg_catalog first unless the path names it), a routine any of
	// the name in a schema on the path (overloads in several schemas are
	// all candidates; pg_temp is never searched for routines).
	ResolveSearchPath
	// ResolveDatabase: MySQL's current database (Session.Database).
	ResolveDatabase
)

var catalogGen atomic.Uint64

// CatalogOptions tunes NewCatalog.
type CatalogOptions struct {
	// TrustSchemas lists schemas (lower-cased) whose objects are taken as
	// they are: neither expanded nor unknown_object (an extension's own
	// schema, a schema only DBAs write).
	TrustSchemas []string
	// SystemSchemas are the server's own schemas (pg_catalog,
	// information_schema; mysql, sys, performance_schema): a name the
	// statement qualifies with one of them is never unknown_object.
	SystemSchemas []string
	// Previous is the catalog this one replaces: a definition that has not
	// changed is not read again (Reuse).
	Previous *Catalog
	// Resolve is how unqualified names resolve; ResolveAnywhere judges
	// every schema's object of a name.
	Resolve Resolution
	// SearchPathDefaults is the search_path a login role starts with,
	// by role name; the entry "" is every other role's. A role without an
	// entry and without "" has a default the catalog does not know
	// (SearchPathDefault then resolves like an unknown path).
	SearchPathDefaults map[string]string
	// IsBuiltin reports whether an unqualified routine name is the
	// server's own (which changes no search_path): a call of any other
	// routine that the catalog does not hold may change it.
	IsBuiltin func(name string) bool
	// PathUnsafe, when not "", says why no session's search_path can be
	// followed (an expression the server runs implicitly changes it).
	PathUnsafe string
	// Reaches lists the tables a write to another reaches (Reach).
	Reaches []Reach
	// Implicit lists the routines an access to a table runs (Implicit).
	Implicit []Implicit
	// Databases are the databases the catalog covers (PostgreSQL: the one
	// its connection reads; MySQL: those information_schema shows the
	// monitoring account). A session in another database is judged with
	// For's foreign catalog: its objects are not these. Nil: not known
	// (a snapshot from before), every session judged with this catalog.
	Databases []string
	// DatabasesFold compares Databases without case (MySQL).
	DatabasesFold bool
}

// Reuse returns the facts and Unreadable of an object c read from the
// definition def, when c has one.
func (c *Catalog) Reuse(def string) (StmtFacts, string, bool) {
	if c == nil || def == "" {
		return StmtFacts{}, "", false
	}
	if ob, ok := c.defs[def]; ok {
		if ob.read != nil {
			return *ob.read, ob.Unreadable, true
		}
		return ob.Facts, ob.Unreadable, true
	}
	return StmtFacts{}, "", false
}

// NewCatalog makes a catalog of objs and the NOT NULL columns.
func NewCatalog(objs []CatalogObject, notNull []NotNullColumn, o CatalogOptions) *Catalog {
	c := &Catalog{
		gen:          catalogGen.Add(1),
		views:        map[string][]*CatalogObject{},
		routines:     map[string][]*CatalogObject{},
		fires:        map[string][]*CatalogObject{},
		relations:    map[string][]string{},
		notNull:      make(map[string]struct{}, 2*len(notNull)),
		trusted:      map[string]struct{}{},
		defs:         map[string]*CatalogObject{},
		objects:      len(objs),
		resolve:      o.Resolve,
		builtin:      o.IsBuiltin,
		pathUnsafe:   o.PathUnsafe,
		pathDefaults: o.SearchPathDefaults,
	}
	for _, s := range o.TrustSchemas {
		c.trusted[s] = struct{}{}
	}
	for _, s := range o.SystemSchemas {
		c.trusted[s] = struct{}{}
	}
	if o.Databases != nil {
		c.databases, c.dbFold = map[string]struct{}{}, o.DatabasesFold
		for _, d := range o.Databases {
			if c.dbFold {
				d = strings.ToLower(d)
			}
			c.databases[d] = struct{}{}
		}
	}
	for i := range objs {
		ob := &objs[i]
		c.bytes += int64(64 + len(ob.Schema) + len(ob.Name) + len(ob.On) + len(ob.Def) + 48*len(ob.Facts.Tables) + 32*len(ob.Facts.Funcs) + 32*len(ob.Facts.Cols))
		if ob.Def != "" {
			c.defs[ob.Def] = ob
		}
		switch ob.Kind {
		case CatalogView:
			c.views[ob.Name] = append(c.views[ob.Name], ob)
			c.relations[ob.Name] = append(c.relations[ob.Name], ob.Schema)
		case CatalogRoutine:
			c.routines[ob.Name] = append(c.routines[ob.Name], ob)
		case CatalogTrigger, CatalogRule:
			if ob.OnDDL {
				c.onDDL = append(c.onDDL, ob)
				continue
			}
			c.fires[ob.On] = append(c.fires[ob.On], ob)
		case CatalogRelation:
			c.relations[ob.Name] = append(c.relations[ob.Name], ob.Schema)
		}
	}
	c.reaches = make(map[string][]Reach, len(o.Reaches))
	for _, r := range o.Reaches {
		c.reaches[r.From] = append(c.reaches[r.From], r)
		c.bytes += int64(48 + len(r.FromSchema) + len(r.From) + len(r.Schema) + len(r.Name))
	}
	c.implicit = make(map[string][]Implicit, len(o.Implicit))
	for _, m := range o.Implicit {
		c.implicit[m.Table] = append(c.implicit[m.Table], m)
		c.bytes += int64(48 + len(m.Schema) + len(m.Table) + len(m.FuncSchema) + len(m.Func))
	}
	if c.resolve == ResolveSearchPath && c.pathUnsafe == "" {
		// No routine changes the path (PathUnsafe): a body's names
		// resolve in its own search_path throughout.
		for i := range objs {
			if objs[i].OwnPath {
				c.ownPath(&objs[i])
			}
		}
	}
	for _, n := range notNull {
		c.notNull[n.Schema+"."+n.Table+"."+n.Column] = struct{}{}
		c.bytes += int64(32 + len(n.Schema) + len(n.Table) + len(n.Column))
	}
	// An unqualified name's column is NOT NULL only when it is in every
	// schema's table of that name (the session's search path is not
	// known here).
	for _, n := range notNull {
		all := true
		for _, s := range c.relations[n.Table] {
			if _, ok := c.notNull[s+"."+n.Table+"."+n.Column]; !ok {
				all = false
			}
		}
		if all {
			c.notNull[n.Table+"."+n.Column] = struct{}{}
		}
	}
	if c.databases != nil {
		c.foreign = c.foreignOf(o.SystemSchemas)
	}
	return c
}

// foreignOf is the catalog a session in a database c does not cover is
// judged with: the server's own schemas' relations and nothing else, so
// that every other relation, every routine that is not a built-in, every
// CALL and every DDL's event triggers are unknown_object (that
// database's objects may be anything: a function of the same name that
// deletes every row, a view of the same name over a secret table). Its
// search_path defaults are not known either (ALTER DATABASE SET is per
// database).
//
// MySQL's catalog covers every database the monitoring account sees, so
// there the foreign catalog is c itself except that the session's own
// unqualified names, which resolve in its current database, are
// unknown_object (a relation, a CALL, a function of a name the catalog
// holds in some database); names qualified with a database are judged by
// its objects as in any session.
//
// It shares c's generation: a text's memo (catMemo) holds its facts through
// both, the foreign ones under their own key (resolutionKey), so sessions
// of two databases judging the same text do not make it anew each time.
func (c *Catalog) foreignOf(system []string) *Catalog {
	const why = "the session's database is not one the catalog was read in"
	if c.resolve == ResolveDatabase {
		f := *c
		f.foreign, f.databases, f.foreignWhy = nil, nil, why
		return &f
	}
	f := &Catalog{
		gen:        c.gen,
		relations:  map[string][]string{},
		trusted:    map[string]struct{}{},
		resolve:    c.resolve,
		builtin:    c.builtin,
		foreignWhy: why,
		pathUnsafe: why,
	}
	for _, s := range system {
		f.trusted[s] = struct{}{}
	}
	for name, schemas := range c.relations {
		for _, s := range schemas {
			if _, ok := f.trusted[s]; ok {
				f.relations[name] = append(f.relations[name], s)
			}
		}
	}
	return f
}

// For is the catalog session s is judged with: c, or, when s is in a
// database c was not read in, c's foreign catalog (foreignOf). It does not
// allocate.
func (c *Catalog) For(s *Session) *Catalog {
	if c.foreign == nil || s.Database == "" {
		return c
	}
	if _, ok := c.databases[s.Database]; ok {
		return c
	}
	if c.dbFold {
		for d := range c.databases {
			if strings.EqualFold(d, s.Database) {
				return c
			}
		}
	}
	return c.foreign
}

// ownPath qualifies the unqualified names of ob's facts by ob's own
// search_path, as the server resolves them when its body runs: a relation
// in the first schema on the path that has one of the name (pg_catalog
// first unless the path names it), a routine in each schema on the path
// that has one (the server picks among overloads by argument types), a
// built-in routine that no schema on the path has in pg_catalog. A name the path
// does not decide stays unqualified, judged in every schema: a temporary
// relation of the name (any session's, the temporary schema first unless
// the path names it later), or none on the path (the catalog may be
// behind, or the call fails). The copy is ob's; Reuse keeps the read one.
func (c *Catalog) ownPath(ob *CatalogObject) {
	sc := nameScope{known: true, path: ob.SearchPath}
	read := ob.Facts
	f := ob.Facts
	f.Tables, f.Funcs = nil, nil
	for _, t := range read.Tables {
		in := []string(nil)
		if t.Schema == "" && !t.CTE {
			in = sc.relation(c, t.Name)
		}
		if in == nil || slices.Contains(in, "pg_temp") {
			f.Tables = append(f.Tables, t)
			continue
		}
		for _, s := range in {
			q := t
			q.Schema = s
			f.Tables = append(f.Tables, q)
		}
	}
	for _, fn := range read.Funcs {
		if fn.Schema != "" {
			f.Funcs = append(f.Funcs, fn)
			continue
		}
		in := sc.routine(c, fn.Name)
		if in == nil && c.builtin != nil && c.builtin(fn.Name) {
			in = []string{"pg_catalog"}
		}
		if in == nil {
			f.Funcs = append(f.Funcs, fn)
			continue
		}
		for _, s := range in {
			q := fn
			q.Schema = s
			f.Funcs = append(f.Funcs, q)
		}
	}
	ob.read, ob.Facts = &read, f
	c.narrowed = true
}

// Unsettled returns c as it is judged while DDL that sqlfwd let through
// may have changed a routine's own search_path (ALTER FUNCTION ... SET
// search_path, CREATE OR REPLACE) since c was read: with every body's
// names as read, in every schema (a copy of a new generation; c itself
// when nothing of it was narrowed). The daemon puts it in force when it
// judges DDL, until its next read.
func (c *Catalog) Unsettled() *Catalog {
	if c == nil || !c.narrowed || c.unsettled {
		return c
	}
	u := *c
	u.gen, u.unsettled = catalogGen.Add(1), true
	return &u
}

// facts is what ob does as the expansion follows it: its facts as read
// when its names' own-path qualification may be out of date (Unsettled,
// or DDL earlier in the statement's message).
func (x *expansion) facts(ob *CatalogObject) *StmtFacts {
	if ob.read != nil && (x.c.unsettled || x.unnarrow) {
		return ob.read
	}
	return &ob.Facts
}

// Objects is the number of objects the catalog holds; Bytes an estimate of
// the memory it takes.
func (c *Catalog) Objects() int { return c.objects }
func (c *Catalog) Bytes() int64 { return c.bytes }

// SetCatalog puts c in force for the statements the engine judges from now
// on (nil: judge by the text alone). Safe for concurrent use.
func (e *Engine) SetCatalog(c *Catalog) { e.catalog.Store(c) }

// SetDatabaseCatalogs puts in force catalogs read in databases other than
// the one of SetCatalog's, by database name: a session in one of them is
// judged with its catalog instead of the foreign one (For). Safe for
// concurrent use; m is not changed after.
func (e *Engine) SetDatabaseCatalogs(m map[string]*Catalog) {
	if len(m) == 0 {
		e.dbCatalogs.Store(nil)
		return
	}
	e.dbCatalogs.Store(&m)
}

// catalogFor is the catalog session s is judged with: c's (For), or the
// catalog read in s's database when c does not cover it and one was put
// in force (SetDatabaseCatalogs). It does not allocate.
func (e *Engine) catalogFor(c *Catalog, s *Session) *Catalog {
	f := c.For(s)
	if f == c {
		return c
	}
	if m := e.dbCatalogs.Load(); m != nil {
		if o, ok := (*m)[s.Database]; ok && o != nil {
			return o.For(s)
		}
	}
	return f
}

// Covers reports whether a session in database is judged with c itself
// (For), rather than with its foreign catalog.
func (c *Catalog) Covers(database string) bool {
	return c.For(&Session{Database: database}) == c
}

// OneDatabase reports whether c, like every catalog of its resolution,
// holds the objects of the database it was read in only (PostgreSQL: a
// connection sees its own database's pg_proc, pg_class, ...), so that a
// session in another database needs a catalog read there. MySQL's
// information_schema shows every schema the account may see to one
// connection: its catalog is not OneDatabase.
func (c *Catalog) OneDatabase() bool {
	return c != nil && c.databases != nil && c.resolve != ResolveDatabase
}

// Catalog returns the catalog in force, or nil.
func (e *Engine) Catalog() *Catalog { return e.catalog.Load() }

// Unsettle puts the catalog in force as Unsettled: DDL may just have
// committed that the catalog has not read (a transaction with DDL ended).
// A read that started before a call is put in force unsettled too
// (Unsettles).
func (e *Engine) Unsettle() {
	e.unsettles.Add(1)
	for {
		c := e.catalog.Load()
		u := c.Unsettled()
		if u == c || e.catalog.CompareAndSwap(c, u) {
			return
		}
	}
}

// Unsettles counts the Unsettle calls so far: a catalog read begun before
// the count changed is put in force Unsettled.
func (e *Engine) Unsettles() uint64 { return e.unsettles.Load() }

// catMemo is a text's facts through the catalog of generation gen: for each
// statement facts judged (a pointer into the text's facts), what they are
// through it (itself when the catalog changes nothing).
type catMemo struct {
	gen   uint64
	pairs []catPair
}

type catPair struct {
	src, out *StmtFacts
	// the session's resolution context the pair was made in
	// (resolutionKey)
	k1, k2 string
}

// sameKey is a == b without a call for the empty keys of a session that
// resolves nothing (a cached verdict's path).
func sameKey(a, b string) bool { return len(a) == len(b) && (len(a) == 0 || a == b) }

// maxCatPairs bounds one text's memo (variants times resolution
// contexts); a memo that would grow past it starts again.
const maxCatPairs = 32

// resolutionKey is what of session s decides how c resolves names.
func (c *Catalog) resolutionKey(s *Session) (string, string) {
	if c.foreignWhy != "" {
		// The same in every session of a database it does not cover;
		// no search_path or database name holds a NUL.
		return foreignKey, ""
	}
	switch c.resolve {
	case ResolveSearchPath:
		if s.SearchPath == "" {
			return "", ""
		}
		return s.SearchPath, s.User
	case ResolveDatabase:
		return s.Database, ""
	}
	return "", ""
}

// throughCatalog returns the facts of st, the facts of statement i of tf
// (or a variant of them), with what the objects of c do. It does not
// allocate when it has seen st under c before.
func (e *Engine) throughCatalog(tf *TextFacts, i int, st *StmtFacts, c *Catalog, s *Session) *StmtFacts {
	k1, k2 := c.resolutionKey(s)
	m := tf.cat.Load()
	pending := s.SchemaPending && c.narrowed && !c.unsettled
	if pending {
		// after its own DDL not yet read: judged unsettled, and not
		// remembered
		m, c = nil, c.Unsettled()
	}
	if m != nil && m.gen == c.gen {
		for k := range m.pairs {
			if p := &m.pairs[k]; p.src == st && sameKey(p.k1, k1) && sameKey(p.k2, k2) {
				return p.out
			}
		}
	}
	out := c.expand(st, c.scopeOf(s))
	if out == nil {
		out = st
	} else {
		var fp uint64
		if i < len(tf.prints) {
			fp = tf.prints[i]
		}
		e.policy.match(out, tf, fp, e.implicit, nil)
		for k := len(st.Bodies); k < len(out.Bodies); k++ {
			// Code the objects run as another role (body).
			e.policy.matchBody(&out.Bodies[k], tf, e.implicit, nil)
		}
		// A rule the objects made match says what they are.
		for k := range out.matched {
			if !slicesHasRule(st.matched, out.matched[k].rule) {
				out.matched[k].reason += " (" + out.via + ")"
			}
		}
	}
	if pending {
		return out
	}
	for {
		old := tf.cat.Load()
		nm := &catMemo{gen: c.gen}
		if old != nil && old.gen == c.gen && len(old.pairs) < maxCatPairs {
			nm.pairs = append(append(make([]catPair, 0, len(old.pairs)+1), old.pairs...), catPair{st, out, k1, k2})
		} else {
			nm.pairs = []catPair{{st, out, k1, k2}}
		}
		if tf.cat.CompareAndSwap(old, nm) {
			return out
		}
	}
}

func slicesHasRule(ms []ruleMatch, r int32) bool {
	for _, m := range ms {
		if m.rule == r {
			return true
		}
	}
	return false
}

// maxExpansion bounds the objects followed for one statement (views of
// views, functions calling functions, triggers writing tables with
// triggers): beyond it the statement is unknown_object.
const maxExpansion = 256

// expand returns st with what its objects do, or nil when c changes
// nothing about it.
func (c *Catalog) expand(st *StmtFacts, sc nameScope) *StmtFacts {
	return c.expandAt(st, sc, 0, nil, st.PrevKinds.Has(KindDDL))
}

// maxDefinerDepth bounds code run as another role inside code run as
// another role (a SECURITY DEFINER function calling one): beyond it the
// statement is unknown_object.
const maxDefinerDepth = 4

// expandAt is expand inside depth definer bodies, the objects in seen (the
// ones being followed around it) not followed again; unnarrow: DDL earlier
// in the message (expansion.unnarrow).
func (c *Catalog) expandAt(st *StmtFacts, sc nameScope, depth int, seen map[*CatalogObject]bool, unnarrow bool) *StmtFacts {
	x := expansion{c: c, st: st, sc: sc, depth: depth, seen: seen, unnarrow: unnarrow}
	if c.pathUnsafe != "" {
		x.pathUnsure = true
	}
	for j := 0; j < len(st.Tables); j++ {
		x.table(st.Tables[j], true)
	}
	for j := 0; j < len(st.Funcs); j++ {
		if reownedRoutine(st, st.Funcs[j]) {
			continue // not called: judged as its new runner (reowned)
		}
		x.routine(st.Funcs[j], true)
	}
	if st.Kind == KindCall && len(st.Funcs) > 0 {
		// CALL names a stored procedure, never a built-in one.
		f := st.Funcs[0]
		if _, ok := c.trusted[f.Schema]; !ok && len(candidates(c.routines[f.Name], f.Schema)) == 0 {
			x.unknown("procedure " + qualified(f.Schema, f.Name) + " is not in the catalog" + c.foreignNote())
		}
	}
	for _, r := range st.Reowned {
		x.reowned(r)
	}
	if st.Kinds.Has(KindDDL) && c.foreignWhy != "" && c.resolve == ResolveSearchPath {
		x.unknown("its database's event triggers are not known" + c.foreignNote())
	}
	if st.Kinds.Has(KindDDL) {
		// Event triggers run their functions on the DDL.
		for _, ob := range c.onDDL {
			how := "event trigger " + ob.Name + " → " + doing(x.facts(ob))
			if ob.Definer {
				how += ", as " + ob.Owner
			}
			if !x.enter(ob, how) {
				continue
			}
			if ob.Definer {
				x.body(ob, ob.Owner, how)
				continue
			}
			x.merge(x.facts(ob), false, false)
		}
	}
	for _, nn := range st.NotNullWhere {
		if c.allNotNull(nn) {
			x.own()
			x.out.Unfiltered |= 1 << nn.Kind
			x.note("NOT NULL column " + qualified(nn.Schema, nn.Table) + "." + strings.Join(nn.Cols, ", "))
		}
	}
	// What the objects' facts named is followed too: x.out grows.
	if x.out != nil {
		for j, k := len(st.Tables), len(st.Funcs); j < len(x.out.Tables) || k < len(x.out.Funcs); {
			if x.n > maxExpansion {
				x.unknown("more objects than the engine follows for one statement")
				break
			}
			if j < len(x.out.Tables) {
				x.table(x.out.Tables[j], false)
				j++
				continue
			}
			x.routine(x.out.Funcs[k], false)
			k++
		}
	}
	// What the statement does to the search_path, now that the code it
	// runs is known (PathMay): only what that code does.
	if st.PathMay && !x.pathUnsure && x.out == nil {
		x.own()
	}
	if x.out == nil {
		return nil
	}
	x.out.PathMay = x.pathUnsure
	x.out.via = strings.Join(x.chain, "; ")
	return x.out
}

// expansion is one statement's walk through the catalog.
type expansion struct {
	c     *Catalog
	st    *StmtFacts
	sc    nameScope
	out   *StmtFacts
	seen  map[*CatalogObject]bool
	chain []string
	n     int
	// pathUnsure: code the statement runs may change the search_path
	// (StmtFacts.PathMay).
	pathUnsure bool
	depth      int // definer bodies this walk is inside (body)
	// unnarrow: DDL earlier in the message may have changed a routine's
	// own search_path (facts).
	unnarrow bool
	// reached: the tables a write reached, with its kinds (fire).
	reached map[reachKey]bool
}

// own makes x.out a copy of the statement's facts that can grow.
func (x *expansion) own() {
	if x.out != nil {
		return
	}
	f := *x.st
	f.matched = nil
	f.InDatabase, f.AsUser = nil, nil
	f.Tables = append([]TableRef(nil), f.Tables...)
	f.Funcs = append([]FuncRef(nil), f.Funcs...)
	f.Cols = append([]ColRef(nil), f.Cols...)
	x.out = &f
}

func (x *expansion) note(s string) {
	if len(x.chain) < 8 {
		x.chain = append(x.chain, s)
	} else if len(x.chain) == 8 {
		x.chain = append(x.chain, "…")
	}
}

func (x *expansion) unknown(why string) {
	x.pathUnsure = true
	x.own()
	if x.out.UnknownObject == "" {
		x.out.UnknownObject = why
		x.note(why)
	}
}

// foreignKey is the resolution key of a foreign catalog (foreignOf).
const foreignKey = "\x00foreign"

// foreignNote is the reason's tail in a foreign catalog (foreignOf).
func (c *Catalog) foreignNote() string {
	if c.foreignWhy == "" {
		return ""
	}
	return ": " + c.foreignWhy
}

func qualified(schema, name string) string {
	if schema == "" {
		return name
	}
	return schema + "." + name
}

// candidates returns the objects a possibly unqualified name may resolve to:
// every schema's when unqualified (the session's search path is not known
// here, so each is judged).
func candidates(list []*CatalogObject, schema string) []*CatalogObject {
	if schema == "" {
		return list
	}
	var out []*CatalogObject
	for _, ob := range list {
		if ob.Schema == schema {
			out = append(out, ob)
		}
	}
	return out
}

// enter reports whether ob is to be followed (not yet followed, not
// trusted), and notes it.
func (x *expansion) enter(ob *CatalogObject, how string) bool {
	if _, ok := x.c.trusted[ob.Schema]; ok {
		return false
	}
	if x.seen == nil {
		x.seen = map[*CatalogObject]bool{}
	}
	if x.seen[ob] {
		return false
	}
	x.seen[ob] = true
	x.n++
	x.own()
	x.note(how)
	if ob.Unreadable != "" {
		x.pathUnsure = true
	}
	if ob.Unreadable != "" && x.out.UnknownObject == "" {
		x.out.UnknownObject = ob.Kind.String() + " " + qualified(ob.Schema, ob.Name) + ": " + ob.Unreadable
	}
	return true
}

// table follows a relation the statement (own) or an object names.
func (x *expansion) table(t TableRef, own bool) {
	if t.CTE {
		return
	}
	c := x.c
	if _, ok := c.trusted[t.Schema]; ok && t.Schema != "" {
		return
	}
	if own && t.Schema == "" && c.foreignWhy != "" && c.resolve == ResolveDatabase {
		x.unknown("relation " + t.Name + " is in the session's database" + c.foreignNote())
		return
	}
	var in []string // the schemas the name resolves in; nil: any
	if own && t.Schema == "" {
		in = x.sc.relation(c, t.Name)
		if len(in) == 1 {
			if _, ok := c.trusted[in[0]]; ok {
				return // pg_catalog's, or a trusted schema's
			}
		}
	}
	views := candidates(c.views[t.Name], t.Schema)
	if in != nil {
		views = inSchemas(views, in)
	}
	for _, v := range views {
		if !x.enter(v, "view "+qualified(v.Schema, v.Name)+" → "+relations(&v.Facts)) {
			continue
		}
		x.merge(&v.Facts, t.Write, true)
	}
	if t.Write {
		kinds := x.out.kindsOr(x.st) & (1<<KindInsert | 1<<KindUpdate | 1<<KindDelete | 1<<KindMerge | 1<<KindTruncate | 1<<KindCopy)
		if kinds&(1<<KindMerge) != 0 {
			kinds |= 1<<KindInsert | 1<<KindUpdate | 1<<KindDelete
		}
		if kinds&(1<<KindCopy) != 0 {
			kinds |= 1 << KindInsert
		}
		x.fire(t.Schema, t.Name, in, kinds, false)
	} else {
		x.implicitCalls(t.Schema, t.Name, in, 1<<KindSelect)
	}
	if len(views) == 0 && len(candidates(c.relationsOf(t.Name), t.Schema)) == 0 {
		x.unknown("relation " + qualified(t.Schema, t.Name) + " is not in the catalog" + c.foreignNote())
	}
}

// fire follows the triggers (and, unless reached, rules) that a write of
// kinds to table schema.name fires ("" schema: any; in, when not nil, the
// schemas the name resolves in), and the tables the write reaches
// (Reach), whose row triggers fire too.
func (x *expansion) fire(schema, name string, in []string, kinds KindSet, reached bool) {
	c := x.c
	if kinds != 0 {
		// Not for DDL on the table (DROP TABLE of one whose policy
		// calls a wiping function must stay possible).
		x.implicitCalls(schema, name, in, kinds|1<<KindSelect)
	}
	for _, ob := range c.fires[name] {
		if schema != "" && ob.OnSchema != schema || in != nil && !slices.Contains(in, ob.OnSchema) {
			continue
		}
		if ob.Events&kinds == 0 || reached && ob.Kind == CatalogRule {
			continue
		}
		how := ob.Kind.String() + " " + qualified(ob.Schema, ob.Name) + " on " + qualified(ob.OnSchema, ob.On) + " → " + doing(x.facts(ob))
		if ob.Definer {
			how += ", as " + ob.Owner
		}
		if !x.enter(ob, how) {
			continue
		}
		if ob.Definer {
			x.body(ob, ob.Owner, how)
			continue
		}
		x.merge(x.facts(ob), false, false)
	}
	for _, r := range c.reaches[name] {
		if schema != "" && r.FromSchema != schema || in != nil && !slices.Contains(in, r.FromSchema) || r.On&kinds == 0 {
			continue
		}
		// Each table and kinds once: foreign keys may form cycles.
		k := reachKey{r.Schema, r.Name, r.As}
		if x.reached == nil {
			x.reached = map[reachKey]bool{}
		}
		if x.reached[k] {
			continue
		}
		x.reached[k] = true
		if x.n++; x.n > maxExpansion {
			x.unknown("more objects than the engine follows for one statement")
			return
		}
		x.fire(r.Schema, r.Name, nil, r.As, true)
	}
}

// implicitCalls follows the routines an access of kinds to table
// schema.name runs without naming them (Implicit).
func (x *expansion) implicitCalls(schema, name string, in []string, kinds KindSet) {
	for _, m := range x.c.implicit[name] {
		if schema != "" && m.Schema != schema || in != nil && !slices.Contains(in, m.Schema) || m.On&kinds == 0 {
			continue
		}
		x.routine(FuncRef{Schema: m.FuncSchema, Name: m.Func}, false)
	}
}

type reachKey struct {
	schema, name string
	kinds        KindSet
}

// relationsOf lists the relations named name as objects, for candidates.
func (c *Catalog) relationsOf(name string) []*CatalogObject {
	schemas := c.relations[name]
	if len(schemas) == 0 {
		return nil
	}
	out := make([]*CatalogObject, len(schemas))
	for i, s := range schemas {
		out[i] = &CatalogObject{Kind: CatalogRelation, Schema: s, Name: name}
	}
	return out
}

// routine follows a function or procedure call the statement (own) or an
// object makes.
func (x *expansion) routine(f FuncRef, own bool) {
	c := x.c
	if _, ok := c.trusted[f.Schema]; ok && f.Schema != "" {
		return
	}
	list := candidates(c.routines[f.Name], f.Schema)
	if own && f.Schema == "" && c.foreignWhy != "" && c.resolve == ResolveDatabase {
		// The current database's; a built-in is not told from one
		// the catalog holds no routine of the name.
		if len(list) > 0 {
			x.unknown("routine " + f.Name + " is in the session's database" + c.foreignNote())
		}
		return
	}
	if own && f.Schema == "" {
		if in := x.sc.routine(c, f.Name); in != nil {
			list = inSchemas(list, in)
		}
	}
	if len(list) == 0 && c.builtin != nil && !(f.Schema == "" && c.builtin(f.Name)) {
		if _, ok := c.trusted[f.Schema]; !ok || f.Schema == "" {
			// A routine the catalog does not hold may change the path.
			x.pathUnsure = true
		}
	}
	if c.foreignWhy != "" && c.resolve == ResolveSearchPath && len(list) == 0 && !(f.Schema == "" && c.builtin != nil && c.builtin(f.Name)) {
		if _, ok := c.trusted[f.Schema]; !ok || f.Schema == "" {
			x.unknown("routine " + qualified(f.Schema, f.Name) + " is not in the catalog" + c.foreignNote())
		}
	}
	for _, ob := range list {
		how := "call " + qualified(ob.Schema, ob.Name) + " → " + doing(x.facts(ob))
		if ob.Definer {
			how += ", as its owner " + ob.Owner
		}
		if !x.enter(ob, how) {
			continue
		}
		if ob.Definer {
			x.body(ob, ob.Owner, how)
			continue
		}
		x.merge(x.facts(ob), false, false)
	}
}

// merge adds what an object does to x.out. write: the statement writes
// through a view, so the view's relations are written. view: a view's own
// shape (a catalog UNION, a tautology) is the statement's as it is read.
func (x *expansion) merge(s *StmtFacts, write, view bool) {
	f := x.out
	f.Kinds |= s.Kinds &^ (1<<KindSelect | 1<<KindUtility)
	f.Unfiltered |= s.Unfiltered
	f.Effects |= s.Effects
	f.Probes |= s.Probes
	f.Copy |= s.Copy
	f.CopyDir |= s.CopyDir
	f.RoleAttrs |= s.RoleAttrs
	f.CatalogUnion = f.CatalogUnion || s.CatalogUnion
	f.TimeProbe = f.TimeProbe || s.TimeProbe
	f.DynamicSQL = f.DynamicSQL || s.DynamicSQL
	f.SleepSeconds += s.SleepSeconds
	if s.DynamicSQL || s.PathChange != PathKept || s.Kinds.Has(KindDDL) {
		x.pathUnsure = true
	}
	for _, n := range s.Settings {
		if n == "search_path" || n == "role" || n == "session_authorization" {
			x.pathUnsure = true
		}
	}
	if s.Unparsed != "" && f.UnknownObject == "" {
		f.UnknownObject = "a body " + s.Unparsed
	}
	if s.UnknownObject != "" && f.UnknownObject == "" {
		f.UnknownObject = s.UnknownObject
	}
	for _, t := range s.Tables {
		if t.CTE {
			continue
		}
		t.Alias = ""
		t.Write = t.Write || write
		if !hasTable(f.Tables, t) {
			f.Tables = append(f.Tables, t)
		}
	}
	for _, fn := range s.Funcs {
		if !hasFunc(f.Funcs, fn) {
			f.Funcs = append(f.Funcs, fn)
		}
	}
	if view {
		// A view's columns are read under the view's own table names,
		// which the statement's columns do not qualify.
		for _, c := range s.Cols {
			f.Cols = append(f.Cols, c)
		}
	}
	for _, n := range s.Settings {
		f.Settings = AppendUnique(f.Settings, n)
	}
	for _, n := range s.Roles {
		f.Roles = AppendUnique(f.Roles, n)
	}
	for _, n := range s.Languages {
		f.Languages = AppendUnique(f.Languages, n)
	}
}

func hasTable(ts []TableRef, t TableRef) bool {
	for _, u := range ts {
		if u.Schema == t.Schema && u.Name == t.Name && u.Write == t.Write && !u.CTE {
			return true
		}
	}
	return false
}

func hasFunc(fs []FuncRef, f FuncRef) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// AppendUnique appends s to list unless list holds it (the facts' name
// lists are short: a scan beats a map).
func AppendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// relations names a view's relations for the chain (view v → t, u).
func relations(f *StmtFacts) string {
	var names []string
	for _, t := range f.Tables {
		if !t.CTE && len(names) < 4 {
			names = append(names, qualified(t.Schema, t.Name))
		}
	}
	if len(names) == 0 {
		return "no relation"
	}
	return strings.Join(names, ", ")
}

// doing names what a body does for the chain (call f → DELETE without
// WHERE).
func doing(f *StmtFacts) string {
	var parts []string
	for k := StmtKind(0); k < NumKinds; k++ {
		if !f.Kinds.Has(k) || k == KindSelect || k == KindUtility {
			continue
		}
		p := strings.ToUpper(k.String())
		if f.Unfiltered.Has(k) {
			p += " without WHERE"
		}
		parts = append(parts, p)
	}
	if f.Effects != 0 {
		parts = append(parts, f.Effects.String())
	}
	if len(parts) == 0 {
		return "reads " + relations(f)
	}
	return strings.Join(parts, ", ")
}

// allNotNull reports whether every column of nn is NOT NULL in the catalog.
func (c *Catalog) allNotNull(nn NotNullCond) bool {
	if len(nn.Cols) == 0 {
		return false
	}
	for _, col := range nn.Cols {
		key := nn.Table + "." + col
		if nn.Schema != "" {
			key = nn.Schema + "." + key
		}
		if _, ok := c.notNull[key]; !ok {
			return false
		}
	}
	return true
}

// kindsOr is f's kinds, or st's when f is nil (the statement's, before
// its objects add theirs).
func (f *StmtFacts) kindsOr(st *StmtFacts) KindSet {
	if f == nil {
		return st.Kinds
	}
	return f.Kinds
}

// inSchemas keeps the objects of list in one of the schemas in.
func inSchemas(list []*CatalogObject, in []string) []*CatalogObject {
	var out []*CatalogObject
	for _, ob := range list {
		if slices.Contains(in, ob.Schema) || strings.HasPrefix(ob.Schema, "pg_temp_") && slices.Contains(in, "pg_temp") {
			out = append(out, ob)
		}
	}
	return out
}

// nameScope is how a statement's own unqualified names resolve in a session:
// known is false when they may resolve in any schema.
type nameScope struct {
	known bool
	path  []string // PostgreSQL: the search_path's schemas, in order ("$user" replaced)
	db    string   // MySQL: the current database
}

// scopeOf is the name scope of session s under c.
func (c *Catalog) scopeOf(s *Session) nameScope {
	switch c.resolve {
	case ResolveSearchPath:
		if c.pathUnsafe != "" || s.SearchPath == "" {
			return nameScope{}
		}
		v := s.SearchPath
		if v == SearchPathDefault {
			var ok bool
			if v, ok = c.pathDefaults[s.User]; !ok {
				if v, ok = c.pathDefaults[""]; !ok {
					return nameScope{}
				}
			}
		}
		path, ok := ParseSearchPath(v, s.User)
		if !ok {
			return nameScope{}
		}
		return nameScope{known: true, path: path}
	case ResolveDatabase:
		if s.Database == "" {
			return nameScope{}
		}
		return nameScope{known: true, db: strings.ToLower(s.Database)}
	}
	return nameScope{}
}

// ParseSearchPath reads a search_path value as PostgreSQL does
// (SplitIdentifierString: names separated by commas, unquoted ones folded
// to lower case, "..." quoted with "" for a quote) with $user replaced by
// user; false for a value PostgreSQL would reject.
func ParseSearchPath(v, user string) ([]string, bool) {
	var out []string
	for i := 0; ; {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
			i++
		}
		var name string
		if i < len(v) && v[i] == '"' {
			var b strings.Builder
			j := i + 1
			for {
				k := strings.IndexByte(v[j:], '"')
				if k < 0 {
					return nil, false
				}
				b.WriteString(v[j : j+k])
				j += k + 1
				if j < len(v) && v[j] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				break
			}
			name, i = b.String(), j
		} else {
			j := i
			for j < len(v) && v[j] != ',' && v[j] != ' ' && v[j] != '\t' && v[j] != '\n' && v[j] != '\r' && v[j] != '"' {
				j++
			}
			name, i = strings.ToLower(v[i:j]), j
		}
		if name == "" {
			if len(out) == 0 && strings.TrimSpace(v) == "" {
				return []string{}, true // an empty path
			}
			return nil, false
		}
		if name == "$user" {
			name = user
		}
		out = append(out, name)
		for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
			i++
		}
		if i == len(v) {
			return out, true
		}
		if v[i] != ',' {
			return nil, false
		}
		i++
	}
}

// relation is the schemas an unqualified relation name resolves in: the
// temporary schemas (any session's: the catalog cannot tell whose) when
// they come first, and the first schema after them that has a relation of
// the name. nil: any schema (the scope is not known, or no schema on the
// path has one, when the catalog may be behind).
func (sc nameScope) relation(c *Catalog, name string) []string {
	if !sc.known {
		return nil
	}
	if sc.db != "" || c.resolve == ResolveDatabase {
		return sc.pick(c.relations[name])
	}
	schemas := c.relations[name]
	var in []string
	order := sc.path
	if !slices.Contains(order, "pg_temp") {
		order = append([]string{"pg_temp"}, order...)
	}
	if !slices.Contains(order, "pg_catalog") {
		order = append([]string{"pg_catalog"}, order...)
		if order[1] == "pg_temp" {
			order[0], order[1] = "pg_temp", "pg_catalog"
		}
	}
	for _, p := range order {
		if p == "pg_temp" {
			for _, s := range schemas {
				if strings.HasPrefix(s, "pg_temp_") {
					in = AppendUnique(in, "pg_temp")
					break
				}
			}
			continue
		}
		if slices.Contains(schemas, p) {
			return append(in, p)
		}
	}
	return nil
}

// pick is the current database's of schemas (compared without case, as
// lower_case_table_names may fold them), or nil when it has none.
func (sc nameScope) pick(schemas []string) []string {
	for _, s := range schemas {
		if strings.EqualFold(s, sc.db) {
			return []string{s}
		}
	}
	return nil
}

// routine is the schemas an unqualified routine name may resolve in: each
// on the path that has one of the name (the server picks among their
// overloads by argument types), never a temporary schema. nil: any.
func (sc nameScope) routine(c *Catalog, name string) []string {
	if !sc.known {
		return nil
	}
	var schemas []string
	for _, ob := range c.routines[name] {
		schemas = AppendUnique(schemas, ob.Schema)
	}
	if c.resolve == ResolveDatabase {
		return sc.pick(schemas)
	}
	var in []string
	for _, p := range sc.path {
		if p != "pg_temp" && slices.Contains(schemas, p) {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		return nil
	}
	return in
}

// body adds the code of ob as a Body that runs as runsAs ("": the
// session's user), with what its own objects do, judged by the rules in
// that user's session (body.go decideBodies) instead of the caller's.
func (x *expansion) body(ob *CatalogObject, runsAs, how string) {
	x.own()
	if x.depth >= maxDefinerDepth {
		x.unknown("code run as another role nested deeper than the engine follows")
		return
	}
	f := *x.facts(ob)
	// Its own objects are followed in a walk of their own (judged as
	// runsAs), which does not follow ob, or what is around it, again.
	seen := maps.Clone(x.seen)
	if seen == nil {
		seen = map[*CatalogObject]bool{}
	}
	seen[ob] = true
	if sub := x.c.expandAt(x.facts(ob), nameScope{}, x.depth+1, seen, x.unnarrow); sub != nil {
		f = *sub
		if sub.PathMay {
			x.pathUnsure = true
		}
	}
	f.matched, f.via = nil, ""
	f.Bodies = freshBodies(f.Bodies)
	f.PathMay = false
	if f.UnknownObject != "" && x.out.UnknownObject == "" {
		x.out.UnknownObject = f.UnknownObject
	}
	if f.DynamicSQL || f.PathChange != PathKept {
		x.pathUnsure = true
	}
	x.out.Bodies = append(slices.Clip(x.out.Bodies), Body{Of: how, RunsAs: runsAs, Facts: f})
}

// freshBodies copies bodies with no rules matched, so that matching them
// (matchBody) does not write into the catalog's shared facts.
func freshBodies(bs []Body) []Body {
	if len(bs) == 0 {
		return nil
	}
	out := make([]Body, len(bs))
	for i, b := range bs {
		b.Facts.matched = nil
		b.Facts.Bodies = freshBodies(b.Facts.Bodies)
		out[i] = b
	}
	return out
}

// reownedRoutine reports whether f is a routine st changes the runner of.
func reownedRoutine(st *StmtFacts, f FuncRef) bool {
	for _, r := range st.Reowned {
		if r.Kind == CatalogRoutine && r.Name == f.Name && r.Schema == f.Schema {
			return true
		}
	}
	return false
}

// reowned judges again, as the role it will run as, stored code whose
// runner the statement changes (StmtFacts.Reowned).
func (x *expansion) reowned(r Reowned) {
	c := x.c
	if _, ok := c.trusted[r.Schema]; ok && r.Schema != "" {
		return
	}
	what := "function"
	var list []*CatalogObject
	if r.Kind == CatalogView {
		what = "view"
		list = candidates(c.views[r.Name], r.Schema)
		if r.Schema == "" {
			if in := x.sc.relation(c, r.Name); in != nil {
				list = inSchemas(list, in)
			}
		}
		if len(list) == 0 {
			if len(candidates(c.relationsOf(r.Name), r.Schema)) > 0 {
				return // a table: it runs no code
			}
		}
	} else {
		list = candidates(c.routines[r.Name], r.Schema)
		if r.Schema == "" {
			if in := x.sc.routine(c, r.Name); in != nil {
				list = inSchemas(list, in)
			}
		}
	}
	if len(list) == 0 {
		if r.Fires {
			x.unknown(what + " " + qualified(r.Schema, r.Name) + " is not in the catalog: what the trigger will run is not known")
			return
		}
		x.unknown(what + " " + qualified(r.Schema, r.Name) + " is not in the catalog: its code cannot be judged as the role that will run it")
		return
	}
	for _, ob := range list {
		runsAs := r.To
		switch {
		case r.Fires && ob.Definer:
			runsAs = ob.Owner
		case r.Fires:
			runsAs = ""
		case r.ToSession:
			runsAs = ""
		case runsAs == "" && ob.Owner == "":
			// Judged as the session's user, and said to be unsure.
			x.unknown(what + " " + qualified(ob.Schema, ob.Name) + ": its owner is not known, so who will run its code is not")
		case runsAs == "":
			runsAs = ob.Owner
		}
		who := runsAs
		if who == "" {
			who = "the session's user"
		}
		how := what + " " + qualified(ob.Schema, ob.Name) + " → " + doing(&ob.Facts) + ", now run as " + who
		if r.Fires {
			how = "function " + qualified(ob.Schema, ob.Name) + " → " + doing(&ob.Facts) + ", run by the trigger"
		}
		x.n++
		x.note(how)
		if ob.Unreadable != "" && x.out.UnknownObject == "" {
			x.out.UnknownObject = ob.Kind.String() + " " + qualified(ob.Schema, ob.Name) + ": " + ob.Unreadable
		}
		x.body(ob, runsAs, how)
	}
}
