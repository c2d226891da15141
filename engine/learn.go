package engine

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultLearnLimit bounds the fingerprints a Learner keeps.
const DefaultLearnLimit = 100000

// LearnBytes bounds the memory a Learner's shapes hold (an estimate:
// normalized texts, cut to maxNormalized bytes, and scopes); past it new
// shapes are dropped like those past the limit.
const LearnBytes = 64 << 20

// maxNormalized is the most of a shape's normalized text kept, for review.
const maxNormalized = 1024

// Learner records what each application sends, per application identity
// (Identity, chosen by LearnBy): the dialect's fingerprint of each statement
// (PostgreSQL: pg_query's) with its normalized text (literals replaced by
// placeholders), and the application's scope: the statement kinds it runs,
// the tables it reads and writes, the columns it reads and the functions it
// calls. It also counts, per identity, what the policy it was judged under
// denied or would have denied. It exports either form as a policy fragment
// (ExportPolicy). It is safe for concurrent use.
//
// Statements that differ only in literals, IN-list length or VALUES row
// count share a fingerprint; that is what makes the allowlist stable, and
// why limit rules must come before it in a policy.
type Learner struct {
	dialect Dialect // for Record
	limit   int
	by      LearnBy

	// mu guards the maps; a statement whose identity and shapes are all
	// known, with the verdict they had last time, only read-locks it and
	// counts atomically (record), so that learning on a busy server
	// serialises only on what is new.
	mu       sync.RWMutex
	apps     map[Identity]*learnedApp
	total    int
	bytes    int64 // estimated memory of the shapes kept
	maxBytes int64 // LearnBytes
	dropped  uint64
}

// LearnBy says which parts of a session the learner tells applications
// apart by (a bit set).
type LearnBy uint8

const (
	// LearnByUser: the database user the session authenticated as.
	LearnByUser LearnBy = 1 << iota
	// LearnByDatabase: the session's database.
	LearnByDatabase
	// LearnByUnit: the systemd unit (.service or .scope) of the client
	// process's cgroup, or the whole cgroup path when it is in no unit.
	// Known only for intercepted connections.
	LearnByUnit
	// LearnByCgroup: the client process's whole cgroup v2 path.
	LearnByCgroup
	// LearnByComm: the client process's command name.
	LearnByComm
	// LearnByUID: the client process's user id.
	LearnByUID
)

// DefaultLearnBy is user, database and unit.
const DefaultLearnBy = LearnByUser | LearnByDatabase | LearnByUnit

var learnByNames = []struct {
	name string
	bit  LearnBy
}{{"user", LearnByUser}, {"database", LearnByDatabase}, {"unit", LearnByUnit}, {"cgroup", LearnByCgroup}, {"comm", LearnByComm}, {"uid", LearnByUID}}

// ParseLearnBy reads a comma-separated list of user, database, unit,
// cgroup, comm and uid ("" is DefaultLearnBy).
func ParseLearnBy(s string) (LearnBy, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultLearnBy, nil
	}
	var by LearnBy
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		found := false
		for _, n := range learnByNames {
			if n.name == f {
				by |= n.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("learn by %q: want a list of user, database, unit, cgroup, comm, uid", f)
		}
	}
	if by&LearnByUnit != 0 && by&LearnByCgroup != 0 {
		return 0, errors.New("learn by: unit and cgroup both name the process's cgroup: choose one")
	}
	return by, nil
}

func (by LearnBy) String() string {
	var out []string
	for _, n := range learnByNames {
		if by&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, ",")
}

// Identity is what the learner tells one application from another by: the
// parts of the session LearnBy names. Process fields are set only when the
// connection was intercepted (Process is then true).
type Identity struct {
	User     string `json:"user,omitempty"`
	Database string `json:"database,omitempty"`
	// Process is true when the client process was known (interception)
	// and LearnBy names a process field.
	Process bool   `json:"process,omitempty"`
	Unit    string `json:"unit,omitempty"`
	Cgroup  string `json:"cgroup,omitempty"`
	Comm    string `json:"comm,omitempty"`
	UID     uint32 `json:"uid,omitempty"`
	HasUID  bool   `json:"has_uid,omitempty"`
}

// LearnScope is the (user, database) part of an identity.
type LearnScope struct {
	User     string
	Database string
}

func (by LearnBy) identity(s *Session) Identity {
	var id Identity
	if by&LearnByUser != 0 {
		id.User = s.User
	}
	if by&LearnByDatabase != 0 {
		id.Database = s.Database
	}
	if by&(LearnByUnit|LearnByCgroup|LearnByComm|LearnByUID) != 0 && s.Process.Known {
		p := &s.Process
		id.Process = true
		if by&LearnByUnit != 0 {
			if id.Unit = unitOf(p.Cgroup); id.Unit == "" {
				id.Cgroup = p.Cgroup
			}
		}
		if by&LearnByCgroup != 0 {
			id.Cgroup = p.Cgroup
		}
		if by&LearnByComm != 0 {
			id.Comm = p.Comm
		}
		if by&LearnByUID != 0 {
			id.UID, id.HasUID = p.UID, true
		}
	}
	return id
}

// String names the identity for people: app@shop unit=billing.service.
func (id Identity) String() string {
	var b strings.Builder
	b.WriteString(id.User)
	b.WriteByte('@')
	b.WriteString(id.Database)
	if id.Unit != "" {
		b.WriteString(" unit=" + id.Unit)
	}
	if id.Cgroup != "" {
		b.WriteString(" cgroup=" + id.Cgroup)
	}
	if id.Comm != "" {
		b.WriteString(" comm=" + id.Comm)
	}
	if id.HasUID {
		b.WriteString(" uid=" + strconv.FormatUint(uint64(id.UID), 10))
	}
	return b.String()
}

func (id Identity) less(o Identity) bool {
	if id.User != o.User {
		return id.User < o.User
	}
	if id.Database != o.Database {
		return id.Database < o.Database
	}
	if id.Process != o.Process {
		return id.Process // identities with a process first: they are narrower
	}
	return id.String() < o.String()
}

// learnedApp is what one identity was seen doing.
type learnedApp struct {
	statements atomic.Uint64
	prints     map[uint64]*learned
	denied     map[string]uint64 // rule id -> statements a deny verdict of it decided
}

type learned struct {
	normalized string
	count      atomic.Uint64
	// rule is the rule that decided the statement's verdict the last time
	// it was seen ("" when none did), denied whether that verdict denied
	// (whatever the mode made of it).
	rule   string
	denied bool
	// scope is what the statement touches: the same for every statement
	// of the fingerprint.
	scope *stmtScope
}

// stmtScope is what one statement shape touches (scopeOf).
type stmtScope struct {
	kinds     KindSet
	unionArms int32                    // the most set-operation arms of one statement
	tables    map[string]*learnedTable // "schema.name" or "name"
	funcs     map[string]struct{}      // "schema.name" or "name"
	settings  map[string]struct{}      // SET/RESET parameter names
}

type learnedTable struct {
	read, write bool
	cols        map[string]struct{} // columns read; "*" for a star or whole-row reference
}

// NewLearner returns a learner keyed by DefaultLearnBy that keeps at most
// limit fingerprints (0: DefaultLearnLimit); further new ones are counted
// as dropped (their scope is still learned).
func NewLearner(d Dialect, limit int) *Learner { return NewLearnerBy(d, limit, DefaultLearnBy) }

// NewLearnerBy is NewLearner keyed by by (0: DefaultLearnBy).
func NewLearnerBy(d Dialect, limit int, by LearnBy) *Learner {
	if limit <= 0 {
		limit = DefaultLearnLimit
	}
	if by == 0 {
		by = DefaultLearnBy
	}
	return &Learner{dialect: d, limit: limit, by: by, maxBytes: LearnBytes, apps: map[Identity]*learnedApp{}}
}

// By returns what the learner tells applications apart by.
func (l *Learner) By() LearnBy { return l.by }

// Record parses sql in the learner's dialect and records its statements for the session's identity.
// Texts the parser rejects are not recorded.
func (l *Learner) Record(sql string, s *Session) {
	d := l.dialect
	l.record(d, d.Analyze(sql, d.Prescan(sql, 0)), []byte(sql), s, "", false)
}

// record records the statements of text, whose facts d found, and the
// verdict they got: the rule that decided it ("" when none did or it was
// not judged) and whether it denied.
// It does not allocate for a shape it has seen (sql is converted to a
// string only for a new one).
func (l *Learner) record(d Dialect, tf *TextFacts, sql []byte, s *Session, rule string, denied bool) {
	if tf.ParseError || tf.Unparsed || len(tf.Stmts) == 0 {
		return
	}
	if s == nil {
		s = &noSession
	}
	prints := tf.fingerprintsOf(d, sql)
	id := l.by.identity(s)
	if l.known(id, prints, rule, denied) {
		return
	}
	l.mu.Lock()
	app := l.apps[id]
	if app == nil {
		if l.full() {
			// no new identities past the limit either: each would hold
			// memory and learn nothing
			l.dropped++
			l.mu.Unlock()
			return
		}
		app = &learnedApp{prints: map[uint64]*learned{}, denied: map[string]uint64{}}
		l.apps[id] = app
	}
	app.statements.Add(1)
	if denied {
		app.denied[rule]++
	}
	var fresh []int
	for i := range tf.Stmts {
		fp := prints[i]
		if fp == 0 {
			continue
		}
		if e, ok := app.prints[fp]; ok {
			e.count.Add(1)
			e.rule, e.denied = rule, denied
			continue
		}
		if l.full() {
			l.dropped++
			continue
		}
		fresh = append(fresh, i)
	}
	l.mu.Unlock()
	var text string
	if len(fresh) > 0 {
		text = string(sql)
	}
	for _, i := range fresh {
		// Normalizing parses again: outside the lock, once per new shape.
		norm, err := d.Normalize(stmtText(text, &tf.Stmts[i]))
		if err != nil {
			continue
		}
		norm = oneLine(norm, maxNormalized)
		sc := scopeOf(tf.Stmts[i].asUser(s.User).inDatabase(s.Database))
		l.mu.Lock()
		if e, ok := app.prints[prints[i]]; ok {
			e.count.Add(1)
		} else if !l.full() {
			e := &learned{normalized: norm, rule: rule, denied: denied, scope: sc}
			e.count.Store(1)
			app.prints[prints[i]] = e
			l.total++
			l.bytes += int64(len(norm)) + sc.cost()
		} else {
			l.dropped++
		}
		l.mu.Unlock()
	}
}

// full reports whether the learner keeps no new shape (l.mu held).
func (l *Learner) full() bool { return l.total >= l.limit || l.bytes >= l.maxBytes }

// cost estimates the memory of a shape's scope and entry.
func (sc *stmtScope) cost() int64 {
	n := int64(160) // the entry, its map slot, the scope's maps
	for name, t := range sc.tables {
		n += int64(len(name)) + 64
		for c := range t.cols {
			n += int64(len(c)) + 24
		}
	}
	for f := range sc.funcs {
		n += int64(len(f)) + 24
	}
	for v := range sc.settings {
		n += int64(len(v)) + 24
	}
	return n
}

// known counts a statement of identity id, with fingerprints prints and
// the verdict (rule, denied), under the read lock, when all of it is as
// it was last seen: a known identity, known shapes, the same allowing
// verdict. It reports false, counting nothing, otherwise.
func (l *Learner) known(id Identity, prints []uint64, rule string, denied bool) bool {
	if denied {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	app := l.apps[id]
	if app == nil {
		return false
	}
	for _, fp := range prints {
		if fp == 0 {
			continue
		}
		if e, ok := app.prints[fp]; !ok || e.denied || e.rule != rule {
			return false
		}
	}
	app.statements.Add(1)
	for _, fp := range prints {
		if fp != 0 {
			app.prints[fp].count.Add(1)
		}
	}
	return true
}

// scopeOf returns what statement f touches. Columns are attributed to
// tables as scopeCols resolves them.
func scopeOf(f *StmtFacts) *stmtScope {
	sc := &stmtScope{tables: map[string]*learnedTable{}, funcs: map[string]struct{}{}, settings: map[string]struct{}{}}
	sc.kinds = f.Kinds
	for _, name := range f.Settings {
		sc.settings[name] = struct{}{}
	}
	sc.unionArms = f.UnionArms
	for i := range f.Funcs {
		sc.funcs[qualName(f.Funcs[i].Schema, f.Funcs[i].Name)] = struct{}{}
	}
	for i := range f.Tables {
		t := &f.Tables[i]
		if t.CTE {
			continue
		}
		key := qualName(t.Schema, t.Name)
		lt := sc.tables[key]
		if lt == nil {
			lt = &learnedTable{cols: map[string]struct{}{}}
			sc.tables[key] = lt
		}
		if t.Write {
			lt.write = true
		} else {
			lt.read = true
		}
	}
	scopeCols(f, func(t *TableRef, col string) bool {
		if lt := sc.tables[qualName(t.Schema, t.Name)]; lt != nil {
			lt.cols[col] = struct{}{}
		}
		return true
	})
	return sc
}

// add adds o to sc.
func (sc *stmtScope) add(o *stmtScope) {
	sc.kinds |= o.kinds
	sc.unionArms = max(sc.unionArms, o.unionArms)
	for f := range o.funcs {
		sc.funcs[f] = struct{}{}
	}
	for v := range o.settings {
		sc.settings[v] = struct{}{}
	}
	for name, ot := range o.tables {
		t := sc.tables[name]
		if t == nil {
			t = &learnedTable{cols: map[string]struct{}{}}
			sc.tables[name] = t
		}
		t.read = t.read || ot.read
		t.write = t.write || ot.write
		for c := range ot.cols {
			t.cols[c] = struct{}{}
		}
	}
}

// scopeCols calls fn(table, column) for each column reference of f and the
// relations it may read it from: the table its qualifier names (by name or
// alias), else, unqualified or qualified by a name that is no relation of
// the statement (a derived table's or a CTE's alias), every relation of the
// statement. A star or whole-row reference is column "*". It stops when fn
// returns false.
func scopeCols(f *StmtFacts, fn func(t *TableRef, col string) bool) {
	for k := range f.Cols {
		c := &f.Cols[k]
		col := c.Name
		resolved := false
		if c.Qual != "" {
			for i := range f.Tables {
				t := &f.Tables[i]
				if t.CTE || (c.Qual != t.Name && c.Qual != t.Alias) {
					continue
				}
				resolved = true
				if !fn(t, col) {
					return
				}
			}
		}
		if resolved {
			continue
		}
		for i := range f.Tables {
			t := &f.Tables[i]
			if t.CTE {
				continue
			}
			cc := col
			if c.Qual == "" && (col == t.Name || (t.Alias != "" && col == t.Alias)) {
				cc = "*" // a whole-row reference
			}
			if !fn(t, cc) {
				return
			}
		}
	}
}

func qualName(schema, name string) string {
	if schema == "" {
		return name
	}
	return schema + "." + name
}

// Len returns the number of fingerprints recorded and of new ones dropped
// at the limit.
func (l *Learner) Len() (fingerprints int, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.dropped
}

// LearnForm is what a learned policy enforces.
type LearnForm string

const (
	// FormFingerprints allows exactly the statement shapes learned.
	FormFingerprints LearnForm = "fingerprints"
	// FormScope allows any statement within the learned scope: statement
	// kinds, tables with their access, columns read, functions.
	FormScope LearnForm = "scope"
)

// DriftRuleID is the id of the rule a learned policy ends with: it decides
// every statement no learned rule allows (drift).
const DriftRuleID = "learned-drift"

// LearnedRulePrefix starts the id of every rule ExportPolicy writes.
const LearnedRulePrefix = "learned-"

// ExportOptions says what ExportPolicy writes.
type ExportOptions struct {
	Form LearnForm // "" is FormFingerprints
	// Drift is the action of the closing rule on statements outside what
	// was learned: "deny", "log", or "" for no closing rule (a fragment to
	// combine by hand).
	Drift string
	// DriftMode is the closing rule's mode ("": the database's). Detect
	// lets drift through and reports what enforce would have denied.
	DriftMode Mode
	// Functions, in the scope form, also limits the functions called to
	// those learned.
	Functions bool
	// IncludeDrift also takes in the shapes whose last verdict was a deny
	// by DriftRuleID (a promoted learned policy's drift), which the
	// operator has reviewed (fwctl learn diff) and accepts. Shapes another
	// rule denied are never exported: the policy's own rules decide them
	// first anyway, and an attack seen while learning must not widen the
	// scope.
	IncludeDrift bool
}

// Export writes what was learned as fingerprint allow rules, one per
// identity, without a closing rule (ExportPolicy with the zero options).
func (l *Learner) Export() []byte { return l.ExportPolicy(ExportOptions{}) }

type appSnap struct {
	id         Identity
	statements uint64
	prints     []printSnap
	denied     []countSnap
}

type printSnap struct {
	fp uint64
	shapeSnap
}

// shapeSnap is a copy of a learned shape.
type shapeSnap struct {
	normalized string
	count      uint64
	rule       string
	denied     bool
	scope      *stmtScope
}

type countSnap struct {
	name  string
	count uint64
}

func sortedCounts(m map[string]uint64) []countSnap {
	out := make([]countSnap, 0, len(m))
	for k, v := range m {
		out = append(out, countSnap{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// snapshot copies what was learned, sorted: identities by Identity.less,
// shapes by count. Shape scopes are shared: they never change.
func (l *Learner) snapshot() (apps []appSnap, total int, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, a := range l.apps {
		s := appSnap{id: id, statements: a.statements.Load(), denied: sortedCounts(a.denied)}
		for fp, e := range a.prints {
			s.prints = append(s.prints, printSnap{fp, shapeSnap{e.normalized, e.count.Load(), e.rule, e.denied, e.scope}})
		}
		sort.Slice(s.prints, func(i, j int) bool {
			if s.prints[i].count != s.prints[j].count {
				return s.prints[i].count > s.prints[j].count
			}
			return s.prints[i].fp < s.prints[j].fp
		})
		apps = append(apps, s)
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].id.less(apps[j].id) })
	return apps, l.total, l.dropped
}

// exported reports whether a shape goes into an exported policy.
func (o *ExportOptions) exported(e *shapeSnap) bool {
	return !e.denied || (o.IncludeDrift && e.rule == DriftRuleID)
}

// scope returns the union of the scopes of the shapes that keep says.
func (a *appSnap) scope(keep func(*shapeSnap) bool) *stmtScope {
	sc := &stmtScope{tables: map[string]*learnedTable{}, funcs: map[string]struct{}{}, settings: map[string]struct{}{}}
	for i := range a.prints {
		if e := &a.prints[i].shapeSnap; keep(e) && e.scope != nil {
			sc.add(e.scope)
		}
	}
	return sc
}

// ExportPolicy writes what was learned as a policy fragment (YAML): per
// identity one allow rule, scoped to the identity (users, databases, and
// units, cgroups, comms, uids and intercepted as the identity has them), that
// matches the learned fingerprints (FormFingerprints; each followed by its
// normalized statement as a comment) or the learned scope (FormScope, match
// key `within`); then, when o.Drift is set, the closing rule DriftRuleID.
// Normalized text carries no literals. The fragment parses as a policy on
// its own; a learned policy is a database's policy with these rules
// appended (Policy.With), so that its protective rules decide first.
func (l *Learner) ExportPolicy(o ExportOptions) []byte {
	apps, total, dropped := l.snapshot()
	var b bytes.Buffer
	form := o.Form
	if form == "" {
		form = FormFingerprints
	}
	fmt.Fprintf(&b, "# Learned by sqlfw (%s form, applications told apart by %s): %d statement fingerprints of %d applications", form, l.by, total, len(apps))
	if dropped > 0 {
		fmt.Fprintf(&b, " (%d more dropped at the limit)", dropped)
	}
	b.WriteString(".\n# Fingerprints are of the " + l.dialect.Name() + " dialect; the comment shows the statement\n# normalized (literals replaced by placeholders) and how often it was seen.\n# Shapes a rule denied while learning are left out.\nrules:\n")
	n := 0
	for i := range apps {
		a := &apps[i]
		var kept []printSnap
		for _, e := range a.prints {
			if o.exported(&e.shapeSnap) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			continue
		}
		n++
		fmt.Fprintf(&b, "  - id: %s\n    action: allow\n    reason: %s\n", yamlQuote(fmt.Sprintf("%s%d-%s@%s", LearnedRulePrefix, n, a.id.User, a.id.Database)), yamlQuote("learned: "+string(form)+" of "+a.id.String()))
		writeIdentityScope(&b, a.id, l.by)
		fmt.Fprintf(&b, "    # %d statements seen, %d shapes exported\n", a.statements, len(kept))
		b.WriteString("    match:\n")
		if form == FormScope {
			writeWithin(&b, a.scope(o.exported), o.Functions)
			continue
		}
		b.WriteString("      fingerprints:\n")
		for _, e := range kept {
			fmt.Fprintf(&b, "        - \"%016x\" # %s (seen %d)\n", e.fp, oneLine(e.normalized, 200), e.count)
		}
	}
	if o.Drift != "" {
		n++
		fmt.Fprintf(&b, "  - id: %s\n    action: %s\n    reason: %s\n", DriftRuleID, o.Drift, yamlQuote("drift: the statement is outside what its application was seen doing while learning ("+string(form)+")"))
		if o.DriftMode != "" {
			fmt.Fprintf(&b, "    mode: %s\n", o.DriftMode)
		}
		b.WriteString("    match: {}\n")
	}
	if n == 0 {
		b.WriteString("  []\n")
	}
	return b.Bytes()
}

func writeIdentityScope(b *bytes.Buffer, id Identity, by LearnBy) {
	if by&LearnByUser != 0 {
		fmt.Fprintf(b, "    users: [%s]\n", yamlQuote(id.User))
	}
	if by&LearnByDatabase != 0 {
		fmt.Fprintf(b, "    databases: [%s]\n", yamlQuote(id.Database))
	}
	if by&(LearnByUnit|LearnByCgroup|LearnByComm|LearnByUID) == 0 {
		return
	}
	if !id.Process {
		b.WriteString("    intercepted: false\n")
		return
	}
	if id.Unit != "" {
		fmt.Fprintf(b, "    units: [%s]\n", yamlQuote(globQuote(id.Unit)))
	}
	if id.Cgroup != "" {
		fmt.Fprintf(b, "    cgroups: [%s]\n", yamlQuote(globQuote(id.Cgroup)))
	}
	if by&LearnByComm != 0 {
		fmt.Fprintf(b, "    comms: [%s]\n", yamlQuote(globQuote(id.Comm)))
	}
	if id.HasUID {
		fmt.Fprintf(b, "    uids: [%d]\n", id.UID)
	}
}

// globQuote makes a learned name match only itself as a scope glob. Glob
// lists treat '*' as a wildcard and have no escape, so such a name (rare in
// units and comms) is exported as is, with a comment in the docs.
func globQuote(s string) string { return s }

func writeWithin(b *bytes.Buffer, sc *stmtScope, funcs bool) {
	b.WriteString("      within:\n")
	var kinds []string
	for k := StmtKind(0); k < NumKinds; k++ {
		if sc.kinds.Has(k) {
			kinds = append(kinds, k.String())
		}
	}
	fmt.Fprintf(b, "        kinds: [%s]\n", strings.Join(kinds, ", "))
	fmt.Fprintf(b, "        union_arms: %d\n", sc.unionArms)
	if sc.kinds.Has(KindSetStmt) {
		var vs []string
		for _, v := range sortedSet(sc.settings) {
			vs = append(vs, yamlQuote(v))
		}
		fmt.Fprintf(b, "        settings: [%s]\n", strings.Join(vs, ", "))
	}
	if len(sc.tables) == 0 {
		b.WriteString("        tables: {}\n")
	} else {
		b.WriteString("        tables:\n")
	}
	for _, name := range sortedSet(sc.tables) {
		t := sc.tables[name]
		var acc []string
		if t.read {
			acc = append(acc, "read")
		}
		if t.write {
			acc = append(acc, "write")
		}
		var cols []string
		for _, c := range sortedSet(t.cols) {
			cols = append(cols, yamlQuote(c))
		}
		fmt.Fprintf(b, "          %s: {access: [%s], columns: [%s]}\n", yamlQuote(name), strings.Join(acc, ", "), strings.Join(cols, ", "))
	}
	if funcs {
		var fs []string
		for _, f := range sortedSet(sc.funcs) {
			fs = append(fs, yamlQuote(f))
		}
		fmt.Fprintf(b, "        functions: [%s]\n", strings.Join(fs, ", "))
	}
}

func sortedSet[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LearnReport is what was learned, for review (fwctl learn status and
// diff).
type LearnReport struct {
	By           string      `json:"by"`
	Fingerprints int         `json:"fingerprints"`
	Dropped      uint64      `json:"dropped,omitempty"`
	Apps         []AppReport `json:"applications"`
}

// AppReport is what one application identity was seen doing.
type AppReport struct {
	Identity   Identity      `json:"identity"`
	Name       string        `json:"name"`
	Statements uint64        `json:"statements"`
	Kinds      []string      `json:"kinds"`
	Tables     []TableReport `json:"tables"`
	Functions  []string      `json:"functions,omitempty"`
	// Denied counts, per rule, the statements a deny verdict decided: what
	// enforce mode blocks or would have blocked.
	Denied map[string]uint64 `json:"denied,omitempty"`
	Shapes []ShapeReport     `json:"shapes"`
}

// TableReport is one table an application used.
type TableReport struct {
	Name    string   `json:"name"`
	Read    bool     `json:"read,omitempty"`
	Write   bool     `json:"write,omitempty"`
	Columns []string `json:"columns,omitempty"`
}

// ShapeReport is one learned statement shape.
type ShapeReport struct {
	Fingerprint string `json:"fingerprint"`
	Normalized  string `json:"normalized"`
	Count       uint64 `json:"count"`
	// Rule decided its last verdict; Denied says that verdict denied.
	Rule   string `json:"rule,omitempty"`
	Denied bool   `json:"denied,omitempty"`
}

// Report returns what was learned, per application. Its kinds, tables and
// functions are the scope a scope-form export would allow (shapes no rule
// denied).
func (l *Learner) Report() LearnReport {
	apps, total, dropped := l.snapshot()
	r := LearnReport{By: l.by.String(), Fingerprints: total, Dropped: dropped, Apps: []AppReport{}}
	for i := range apps {
		a := &apps[i]
		ar := AppReport{Identity: a.id, Name: a.id.String(), Statements: a.statements, Kinds: []string{}, Tables: []TableReport{}, Shapes: []ShapeReport{}}
		sc := a.scope(func(e *shapeSnap) bool { return !e.denied })
		for k := StmtKind(0); k < NumKinds; k++ {
			if sc.kinds.Has(k) {
				ar.Kinds = append(ar.Kinds, k.String())
			}
		}
		for _, name := range sortedSet(sc.tables) {
			t := sc.tables[name]
			ar.Tables = append(ar.Tables, TableReport{Name: name, Read: t.read, Write: t.write, Columns: sortedSet(t.cols)})
		}
		ar.Functions = sortedSet(sc.funcs)
		if len(a.denied) > 0 {
			ar.Denied = map[string]uint64{}
			for _, d := range a.denied {
				ar.Denied[d.name] = d.count
			}
		}
		for _, e := range a.prints {
			ar.Shapes = append(ar.Shapes, ShapeReport{Fingerprint: fmt.Sprintf("%016x", e.fp), Normalized: oneLine(e.normalized, 400), Count: e.count, Rule: e.rule, Denied: e.denied})
		}
		r.Apps = append(r.Apps, ar)
	}
	return r
}

func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// oneLine makes text fit on a comment line.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + " ..."
	}
	return s
}
