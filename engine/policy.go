package engine

// A policy file is YAML; docs/policy.md documents every key. Example:
//
//	version: 1
//	on_parse_error: deny
//	mode: enforce
//	rules:
//	  - id: no-unfiltered-writes
//	    action: deny
//	    reason: UPDATE or DELETE without WHERE rewrites or empties a whole table
//	    match: {kind: [update, delete], without_where: true}

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/internal/yamlpos"
)

// Mode says what a deny verdict does: the configured mode of a database,
// and the mode a policy or a rule may set (Verdict.Mode).
type Mode string

const (
	// ModeEnforce blocks denied statements.
	ModeEnforce Mode = "enforce"
	// ModeMonitor lets every statement through and logs the denied ones.
	ModeMonitor Mode = "monitor"
	// ModeDetect lets every statement through and reports what enforce
	// would have done, with the evaluation time.
	ModeDetect Mode = "detect"
)

// Policy is a parsed, validated policy. It is immutable and may be shared by
// several engines.
type Policy struct {
	onParseError Action
	mode         Mode
	rules        []rule
	// tableColumns lists the columns of tables, for `columns` rules and
	// SELECT * ("table" or "schema.table" → lower-cased column names).
	tableColumns map[string][]string
	index        ruleIndex
	// guard holds the smallest pre-parse limits of any rule (0: none): a
	// text beyond one is judged by limit rules without being parsed.
	guard            lexLimits
	usesTime         bool
	usesFingerprints bool
	warnings         []string
}

// rule is one compiled entry of `rules:`. All conditions present must hold;
// within a list, any entry may match.
type rule struct {
	id     string
	action Action
	reason string
	mode   Mode // "" or a Mode*
	line   int

	scope scope

	kinds         KindSet // 0: any kind
	verbs         uint16  // bit per ddlVerb; 0: any
	objects       map[string]struct{}
	objectsAt     []yamlObject // where each was written, for Check
	keys          []string     // the match keys used, for Check
	withoutWhere  bool
	copy          CopyTarget // 0: no COPY condition
	copyDir       CopyDirection
	functions     nameSet
	tables        nameSet
	tablesOutside nameSet
	access        tableAccess
	columns       []colPattern
	languages     nameSet
	extensions    nameSet
	settings      nameSet
	grantedRoles  nameSet
	roleAttrs     uint8
	tautology     bool
	catalogUnion  bool
	timeProbe     bool
	commentTrick  bool
	dynamicSQL    bool // dynamic_sql (body.go)
	unparsedBody  bool // unparsed_body (body.go)
	unknownObject bool // unknown_object (catalog.go)
	stackedAfter  KindSet
	effects       EffectSet
	probes        ProbeSet
	limits        limits
	fingerprints  map[uint64]struct{}
	within        *within // learned scope (within.go)
	rate          *rateSpec

	sig      string // canonical conditions, for validation warnings
	onlyKind bool   // no condition but kind (and scope)
}

type tableAccess uint8

const (
	accessAny tableAccess = iota
	accessRead
	accessWrite
)

// colPattern is one `columns:` entry: table (may be "*" or "schema.table",
// globs allowed) and column.
type colPattern struct {
	table  nameSet // empty: any table
	column string
}

type lexLimits struct{ bytes, list, depth int }

type limits struct {
	lexLimits
	joins, unionArms, ctes, boolTerms int
	seriesRows, stringBytes           int64
}

func (l *limits) set() bool {
	return l.bytes|l.list|l.depth|l.joins|l.unionArms|l.ctes|l.boolTerms != 0 || l.seriesRows|l.stringBytes != 0
}

// scope limits a rule to sessions. Empty lists mean any.
type scope struct {
	users, databases, applications globList
	nets                           []netip.Prefix
	comms, cgroups, units          globList
	uids                           []uint32
	window                         *timeWindow
	// intercepted: 1 only sessions whose client process is known
	// (interception), -1 only those whose is not, 0 either.
	intercepted int8
}

func (sc *scope) empty() bool {
	return len(sc.users)+len(sc.databases)+len(sc.applications)+len(sc.nets)+len(sc.comms)+len(sc.cgroups)+len(sc.units)+len(sc.uids) == 0 && sc.window == nil && sc.intercepted == 0
}

type timeWindow struct {
	days  uint8    // bit per time.Weekday; 0: every day
	hours [][2]int // minutes since local midnight, [from, to); from > to wraps past midnight
	loc   *time.Location
}

func (tw *timeWindow) contains(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	t = t.In(tw.loc)
	if tw.days != 0 && tw.days&(1<<uint(t.Weekday())) == 0 {
		return false
	}
	if len(tw.hours) == 0 {
		return true
	}
	m := t.Hour()*60 + t.Minute()
	for _, h := range tw.hours {
		if h[0] <= h[1] {
			if m >= h[0] && m < h[1] {
				return true
			}
		} else if m >= h[0] || m < h[1] {
			return true
		}
	}
	return false
}

// applies reports whether the rule's scope covers the session. It does not
// allocate.
func (sc *scope) applies(s *Session) bool {
	if len(sc.users) > 0 && !sc.users.match(s.User) {
		return false
	}
	if len(sc.databases) > 0 && !sc.databases.match(s.Database) {
		return false
	}
	if len(sc.applications) > 0 && !sc.applications.match(s.Application) {
		return false
	}
	if len(sc.nets) > 0 {
		a := s.ClientAddr.Unmap()
		found := false
		for _, p := range sc.nets {
			if p.Contains(a) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if sc.intercepted != 0 && s.Process.Known != (sc.intercepted > 0) {
		return false
	}
	if len(sc.comms)+len(sc.cgroups)+len(sc.units)+len(sc.uids) > 0 {
		p := &s.Process
		if !p.Known {
			return false
		}
		if len(sc.comms) > 0 && !sc.comms.match(p.Comm) {
			return false
		}
		if len(sc.cgroups) > 0 && !sc.cgroups.match(p.Cgroup) {
			return false
		}
		if len(sc.units) > 0 && !sc.units.match(unitOf(p.Cgroup)) {
			return false
		}
		if len(sc.uids) > 0 {
			found := false
			for _, u := range sc.uids {
				if u == p.UID {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	if sc.window != nil && !sc.window.contains(s.At) {
		return false
	}
	return true
}

// unitOf returns the systemd unit of a cgroup path: its last element that
// ends in .service or .scope ("" when there is none).
func unitOf(cgroup string) string {
	for len(cgroup) > 0 {
		i := strings.LastIndexByte(cgroup, '/')
		el := cgroup[i+1:]
		if strings.HasSuffix(el, ".service") || strings.HasSuffix(el, ".scope") {
			return el
		}
		if i < 0 {
			break
		}
		cgroup = cgroup[:i]
	}
	return ""
}

// ruleIndex finds the rules a statement could match without trying all of
// them: rules that name exact tables or functions are found by those names;
// the others by statement kind.
type ruleIndex struct {
	byKind  [NumKinds][]int32
	byTable map[string][]int32
	byFunc  map[string][]int32
}

// The YAML shape. Decoded with unknown keys rejected.
type yamlPolicy struct {
	Version      int                 `yaml:"version"`
	OnParseError *yamlAction         `yaml:"on_parse_error"`
	Mode         *yamlMode           `yaml:"mode"`
	TableColumns map[string][]string `yaml:"table_columns"`
	Rules        []yamlRule          `yaml:"rules"`
}

type yamlRule struct {
	ID           string      `yaml:"id"`
	Action       *yamlAction `yaml:"action"`
	Reason       string      `yaml:"reason"`
	Mode         *yamlMode   `yaml:"mode"`
	Users        []string    `yaml:"users"`
	Databases    []string    `yaml:"databases"`
	Applications []string    `yaml:"applications"`
	ClientAddrs  []string    `yaml:"client_addrs"`
	Comms        []string    `yaml:"comms"`
	Cgroups      []string    `yaml:"cgroups"`
	Units        []string    `yaml:"units"`
	UIDs         []uint32    `yaml:"uids"`
	Intercepted  *bool       `yaml:"intercepted"`
	Time         *yamlTime   `yaml:"time"`
	Match        yamlMatch   `yaml:"match"`
}

type yamlTime struct {
	Days     []yamlDay `yaml:"days"`
	Hours    []string  `yaml:"hours"`
	Timezone string    `yaml:"timezone"`
}

type yamlMatch struct {
	Kind           []yamlKind     `yaml:"kind"`
	Verbs          []yamlVerb     `yaml:"verbs"`
	Objects        []yamlObject   `yaml:"objects"`
	Functions      []string       `yaml:"functions"`
	Tables         []string       `yaml:"tables"`
	TablesOutside  []string       `yaml:"tables_outside"`
	Access         *yamlAccess    `yaml:"access"`
	Columns        []string       `yaml:"columns"`
	WithoutWhere   bool           `yaml:"without_where"`
	Copy           []yamlCopy     `yaml:"copy"`
	CopyDirection  []yamlCopyDir  `yaml:"copy_direction"`
	Languages      []string       `yaml:"languages"`
	Extensions     []string       `yaml:"extensions"`
	Settings       []string       `yaml:"settings"`
	GrantedRoles   []string       `yaml:"granted_roles"`
	RoleAttributes []yamlRoleAttr `yaml:"role_attributes"`
	Tautology      bool           `yaml:"tautology"`
	CatalogUnion   bool           `yaml:"catalog_union"`
	TimeProbe      bool           `yaml:"time_probe"`
	CommentTrick   bool           `yaml:"comment_trick"`
	DynamicSQL     bool           `yaml:"dynamic_sql"`
	UnparsedBody   bool           `yaml:"unparsed_body"`
	UnknownObject  bool           `yaml:"unknown_object"`
	StackedAfter   []yamlKind     `yaml:"stacked_after"`
	Effects        []yamlEffect   `yaml:"effects"`
	Probes         []yamlProbe    `yaml:"probes"`
	Limits         *yamlLimits    `yaml:"limits"`
	Fingerprints   []yamlPrint    `yaml:"fingerprints"`
	Within         *yamlWithin    `yaml:"within"`
	Rate           *yamlRate      `yaml:"rate"`
}

type yamlLimits struct {
	Bytes     int `yaml:"bytes"`
	InList    int `yaml:"in_list"`
	Depth     int `yaml:"depth"`
	Joins     int `yaml:"joins"`
	UnionArms int `yaml:"union_arms"`
	CTEs      int `yaml:"ctes"`
	BoolTerms int `yaml:"bool_terms"`
	// SeriesRows and StringBytes are int64: 10^12 rows is a value people write.
	SeriesRows  int64 `yaml:"series_rows"`
	StringBytes int64 `yaml:"string_bytes"`
}

type yamlRate struct {
	PerSecond float64       `yaml:"per_second"`
	PerMinute float64       `yaml:"per_minute"`
	Burst     int           `yaml:"burst"`
	Per       []yamlRateKey `yaml:"per"`
}

// Scalar types validate themselves so that errors carry yaml's position.

type yamlAction Action

func (a *yamlAction) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "allow":
		*a = yamlAction(ActionAllow)
	case "deny":
		*a = yamlAction(ActionDeny)
	case "log":
		*a = yamlAction(ActionLog)
	case "deny_and_close":
		*a = yamlAction(ActionDenyClose)
	default:
		return posErr(n, "unknown action %q (want allow, deny, log or deny_and_close)", n.Value)
	}
	return nil
}

type yamlMode string

func (m *yamlMode) UnmarshalYAML(n *yaml.Node) error {
	switch Mode(n.Value) {
	case ModeEnforce, ModeMonitor, ModeDetect:
		*m = yamlMode(n.Value)
		return nil
	}
	return posErr(n, "unknown mode %q (want enforce, monitor or detect)", n.Value)
}

type yamlKind StmtKind

func (k *yamlKind) UnmarshalYAML(n *yaml.Node) error {
	for i, name := range kindNames {
		if n.Value == name {
			*k = yamlKind(i)
			return nil
		}
	}
	return posErr(n, "unknown statement kind %q (want one of %s)", n.Value, strings.Join(kindNames[:], ", "))
}

type yamlVerb DDLVerb

func (v *yamlVerb) UnmarshalYAML(n *yaml.Node) error {
	for i, name := range verbNames {
		if i > 0 && n.Value == name {
			*v = yamlVerb(i)
			return nil
		}
	}
	return posErr(n, "unknown verb %q (want one of %s)", n.Value, strings.Join(verbNames[1:], ", "))
}

// yamlObject is an object type; the dialect says which exist (Check), so
// it keeps its position for the error.
type yamlObject struct {
	name         string
	line, column int
}

func (o *yamlObject) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return posErr(n, "an object type is a word")
	}
	*o = yamlObject{name: n.Value, line: n.Line, column: n.Column}
	return nil
}

type yamlAccess tableAccess

func (a *yamlAccess) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "any":
		*a = yamlAccess(accessAny)
	case "read":
		*a = yamlAccess(accessRead)
	case "write":
		*a = yamlAccess(accessWrite)
	default:
		return posErr(n, "unknown table access %q (want read, write or any)", n.Value)
	}
	return nil
}

type yamlCopy CopyTarget

func (c *yamlCopy) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "program":
		*c = yamlCopy(CopyProgram)
	case "file":
		*c = yamlCopy(CopyFile)
	case "stdio":
		*c = yamlCopy(CopyStdio)
	default:
		return posErr(n, "unknown copy target %q (want program, file or stdio)", n.Value)
	}
	return nil
}

type yamlCopyDir CopyDirection

func (c *yamlCopyDir) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "from":
		*c = yamlCopyDir(CopyFrom)
	case "to":
		*c = yamlCopyDir(CopyTo)
	default:
		return posErr(n, "unknown copy direction %q (want from or to)", n.Value)
	}
	return nil
}

type yamlRoleAttr uint8

func (r *yamlRoleAttr) UnmarshalYAML(n *yaml.Node) error {
	bit, ok := roleAttrNames[n.Value]
	if !ok {
		return posErr(n, "unknown role attribute %q (want one of %s)", n.Value, strings.Join(sortedKeys(roleAttrNames), ", "))
	}
	*r = yamlRoleAttr(bit)
	return nil
}

type yamlEffect EffectSet

func (e *yamlEffect) UnmarshalYAML(n *yaml.Node) error {
	for i, name := range effectNames {
		if n.Value == name {
			*e = yamlEffect(1 << i)
			return nil
		}
	}
	return posErr(n, "unknown effect %q (want one of %s)", n.Value, strings.Join(effectNames[:], ", "))
}

type yamlProbe ProbeSet

func (e *yamlProbe) UnmarshalYAML(n *yaml.Node) error {
	for i, name := range probeNames {
		if n.Value == name {
			*e = yamlProbe(1 << i)
			return nil
		}
	}
	return posErr(n, "unknown probe %q (want one of %s)", n.Value, strings.Join(probeNames[:], ", "))
}

type yamlDay time.Weekday

var dayNames = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

func (d *yamlDay) UnmarshalYAML(n *yaml.Node) error {
	wd, ok := dayNames[strings.ToLower(n.Value)]
	if !ok {
		return posErr(n, "unknown day %q (want mon, tue, wed, thu, fri, sat or sun)", n.Value)
	}
	*d = yamlDay(wd)
	return nil
}

type yamlRateKey string

func (k *yamlRateKey) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "user", "database", "client_addr", "application", "comm", "uid", "cgroup":
		*k = yamlRateKey(n.Value)
		return nil
	}
	return posErr(n, "unknown rate key %q (want user, database, client_addr, application, comm, uid or cgroup)", n.Value)
}

type yamlPrint uint64

func (p *yamlPrint) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(n.Value, "0x"), 16, 64)
	if err != nil || len(strings.TrimPrefix(n.Value, "0x")) > 16 {
		return posErr(n, "fingerprint %q is not 16 hex digits", n.Value)
	}
	*p = yamlPrint(v)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// matchKeys returns the keys of m that are set, as policies spell them.
func matchKeys(m *yamlMatch) []string {
	var keys []string
	v := reflect.ValueOf(m).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if !v.Field(i).IsZero() {
			keys = append(keys, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
		}
	}
	return keys
}

// Check reports whether the policy uses only what dialect d can tell: the
// object types it names exist in d, and d fills the facts of every match
// key its rules use. New checks the policy against the engine's dialect.
func (p *Policy) Check(d Dialect) error {
	var objs map[string]struct{}
	for i := range p.rules {
		r := &p.rules[i]
		for _, k := range r.keys {
			if !d.Fills(k) {
				return fmt.Errorf("policy: line %d: rule %q: match key %s is not something %s can tell", r.line, r.id, k, d.Name())
			}
		}
		if len(r.objectsAt) > 0 && objs == nil {
			objs = map[string]struct{}{}
			for _, o := range d.Objects() {
				objs[o] = struct{}{}
			}
		}
		for _, o := range r.objectsAt {
			if _, ok := objs[o.name]; !ok {
				return fmt.Errorf("policy: line %d column %d: unknown %s object type %q (want one of %s)", o.line, o.column, d.Name(), o.name, strings.Join(sortedKeys(objs), ", "))
			}
		}
	}
	return nil
}

// posErr reports a bad scalar. As a *yaml.TypeError it is collected with
// yaml's own errors (unknown keys), so one run reports them all.
func posErr(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d column %d: %s", n.Line, n.Column, fmt.Sprintf(format, args...))}}
}

// ParsePolicy parses and validates a policy. Unknown keys are errors, and
// errors name the line (and column where yaml reports one). Warnings about
// rules that can never match are available from Warnings.
func ParsePolicy(yamlText []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(yamlText))
	dec.KnownFields(true)
	var yp yamlPolicy
	if err := dec.Decode(&yp); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("parsing policy: empty document")
		}
		// at the line and column at fault, in the file's words
		return nil, fmt.Errorf("parsing policy: %w", yamlpos.Explain(yamlText, err))
	}
	// A second pass over the node tree only to find where each rule starts,
	// for errors that no single scalar explains.
	var root yaml.Node
	_ = yaml.Unmarshal(yamlText, &root)
	rulePos := rulePositions(&root)

	if yp.Version != 0 && yp.Version != 1 {
		return nil, fmt.Errorf("parsing policy: unsupported version %d", yp.Version)
	}
	p := &Policy{onParseError: ActionDeny}
	if yp.OnParseError != nil {
		p.onParseError = Action(*yp.OnParseError)
	}
	if yp.Mode != nil {
		p.mode = Mode(*yp.Mode)
	}
	if len(yp.TableColumns) > 0 {
		p.tableColumns = map[string][]string{}
		for t, cols := range yp.TableColumns {
			lc := make([]string, len(cols))
			for i, c := range cols {
				lc[i] = strings.ToLower(c)
			}
			p.tableColumns[strings.ToLower(t)] = lc
		}
	}
	seen := map[string]bool{}
	for i, yr := range yp.Rules {
		where := fmt.Sprintf("rule %d", i+1)
		line := 0
		if i < len(rulePos) {
			line = rulePos[i].Line
			where = fmt.Sprintf("line %d column %d: rule %d", rulePos[i].Line, rulePos[i].Column, i+1)
		}
		r, err := compileRule(yr)
		if err != nil {
			return nil, fmt.Errorf("parsing policy: %s: %w", where, err)
		}
		r.line = line
		if seen[r.id] {
			return nil, fmt.Errorf("parsing policy: %s: duplicate id %q", where, r.id)
		}
		seen[r.id] = true
		p.rules = append(p.rules, r)
	}
	if len(p.rules) > 1<<30 {
		return nil, errors.New("parsing policy: too many rules")
	}
	p.build()
	return p, nil
}

func rulePositions(root *yaml.Node) []*yaml.Node {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "rules" && m.Content[i+1].Kind == yaml.SequenceNode {
			return m.Content[i+1].Content
		}
	}
	return nil
}

func compileRule(yr yamlRule) (rule, error) {
	r := rule{id: strings.TrimSpace(yr.ID), reason: yr.Reason}
	if r.id == "" {
		return r, errors.New("missing id")
	}
	if yr.Action == nil {
		return r, fmt.Errorf("rule %q: missing action", r.id)
	}
	r.action = Action(*yr.Action)
	if r.reason == "" {
		r.reason = "matched policy rule " + r.id
	}
	if yr.Mode != nil {
		r.mode = Mode(*yr.Mode)
	}
	if err := compileScope(&r, yr); err != nil {
		return r, fmt.Errorf("rule %q: %w", r.id, err)
	}
	m := yr.Match
	for _, k := range m.Kind {
		r.kinds |= 1 << StmtKind(k)
	}
	for _, v := range m.Verbs {
		r.verbs |= 1 << DDLVerb(v)
	}
	if len(m.Objects) > 0 {
		r.objects = map[string]struct{}{}
		for _, o := range m.Objects {
			r.objects[o.name] = struct{}{}
		}
		r.objectsAt = m.Objects
	}
	r.keys = matchKeys(&m)
	for _, c := range m.Copy {
		r.copy |= CopyTarget(c)
	}
	for _, c := range m.CopyDirection {
		r.copyDir |= CopyDirection(c)
	}
	r.withoutWhere = m.WithoutWhere
	if r.withoutWhere && r.kinds&(1<<KindUpdate|1<<KindDelete) == 0 && r.kinds != 0 {
		return r, fmt.Errorf("rule %q: without_where needs kind update or delete", r.id)
	}
	lists := []struct {
		key  string
		src  []string
		dst  *nameSet
		glob bool
	}{
		{"functions", m.Functions, &r.functions, true},
		{"tables", m.Tables, &r.tables, true},
		{"tables_outside", m.TablesOutside, &r.tablesOutside, true},
		{"languages", m.Languages, &r.languages, true},
		{"extensions", m.Extensions, &r.extensions, true},
		{"settings", m.Settings, &r.settings, true},
		{"granted_roles", m.GrantedRoles, &r.grantedRoles, true},
	}
	for _, l := range lists {
		for _, e := range l.src {
			if err := l.dst.add(e); err != nil {
				return r, fmt.Errorf("rule %q: %s: %w", r.id, l.key, err)
			}
		}
	}
	if m.Access != nil {
		if r.tables.empty() && r.tablesOutside.empty() {
			return r, fmt.Errorf("rule %q: access needs tables or tables_outside", r.id)
		}
		r.access = tableAccess(*m.Access)
	}
	for _, c := range m.Columns {
		cp, err := compileColumn(c)
		if err != nil {
			return r, fmt.Errorf("rule %q: columns: %w", r.id, err)
		}
		r.columns = append(r.columns, cp)
	}
	for _, a := range m.RoleAttributes {
		r.roleAttrs |= uint8(a)
	}
	r.tautology, r.catalogUnion, r.timeProbe, r.commentTrick = m.Tautology, m.CatalogUnion, m.TimeProbe, m.CommentTrick
	r.dynamicSQL, r.unparsedBody, r.unknownObject = m.DynamicSQL, m.UnparsedBody, m.UnknownObject
	for _, k := range m.StackedAfter {
		r.stackedAfter |= 1 << StmtKind(k)
	}
	for _, e := range m.Effects {
		r.effects |= EffectSet(e)
	}
	for _, e := range m.Probes {
		r.probes |= ProbeSet(e)
	}
	if l := m.Limits; l != nil {
		for _, v := range []int64{int64(l.Bytes), int64(l.InList), int64(l.Depth), int64(l.Joins), int64(l.UnionArms), int64(l.CTEs), int64(l.BoolTerms), l.SeriesRows, l.StringBytes} {
			if v < 0 {
				return r, fmt.Errorf("rule %q: limits must not be negative", r.id)
			}
		}
		r.limits = limits{lexLimits{l.Bytes, l.InList, l.Depth}, l.Joins, l.UnionArms, l.CTEs, l.BoolTerms, l.SeriesRows, l.StringBytes}
		if !r.limits.set() {
			return r, fmt.Errorf("rule %q: limits sets no limit", r.id)
		}
	}
	if len(m.Fingerprints) > 0 {
		r.fingerprints = make(map[uint64]struct{}, len(m.Fingerprints))
		for _, fp := range m.Fingerprints {
			r.fingerprints[uint64(fp)] = struct{}{}
		}
	}
	if m.Within != nil {
		w, err := compileWithin(m.Within)
		if err != nil {
			return r, fmt.Errorf("rule %q: within: %w", r.id, err)
		}
		r.within = w
	}
	if m.Rate != nil {
		rs, err := compileRate(m.Rate)
		if err != nil {
			return r, fmt.Errorf("rule %q: rate: %w", r.id, err)
		}
		r.rate = rs
	}
	sigMatch := m
	sigMatch.Kind = nil
	r.onlyKind = isZeroMatch(sigMatch)
	sig, _ := yaml.Marshal(struct {
		M yamlMatch
		S []any
	}{m, []any{yr.Users, yr.Databases, yr.Applications, yr.ClientAddrs, yr.Comms, yr.Cgroups, yr.Units, yr.UIDs, yr.Intercepted, yr.Time}})
	r.sig = string(sig)
	return r, nil
}

func isZeroMatch(m yamlMatch) bool {
	b, _ := yaml.Marshal(m)
	z, _ := yaml.Marshal(yamlMatch{})
	return bytes.Equal(b, z)
}

func compileColumn(entry string) (colPattern, error) {
	e := strings.ToLower(strings.TrimSpace(entry))
	i := strings.LastIndexByte(e, '.')
	if i <= 0 || i == len(e)-1 {
		return colPattern{}, fmt.Errorf("%q: want table.column, schema.table.column or *.column", entry)
	}
	var cp colPattern
	cp.column = e[i+1:]
	if cp.column == "*" {
		return cp, fmt.Errorf("%q: name a column, not *", entry)
	}
	if t := e[:i]; t != "*" {
		if err := cp.table.add(t); err != nil {
			return cp, err
		}
	}
	return cp, nil
}

func compileScope(r *rule, yr yamlRule) error {
	sc := &r.scope
	sc.users, sc.databases, sc.applications = yr.Users, yr.Databases, yr.Applications
	sc.comms, sc.cgroups, sc.units, sc.uids = yr.Comms, yr.Cgroups, yr.Units, yr.UIDs
	if yr.Intercepted != nil {
		sc.intercepted = -1
		if *yr.Intercepted {
			sc.intercepted = 1
		}
	}
	for _, a := range yr.ClientAddrs {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			addr, err2 := netip.ParseAddr(a)
			if err2 != nil {
				return fmt.Errorf("client_addrs: %q is neither an address nor a CIDR prefix", a)
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		sc.nets = append(sc.nets, netip.PrefixFrom(p.Addr().Unmap(), min(p.Bits(), p.Addr().Unmap().BitLen())).Masked())
	}
	if t := yr.Time; t != nil {
		tw := &timeWindow{loc: time.UTC}
		if t.Timezone != "" {
			loc, err := time.LoadLocation(t.Timezone)
			if err != nil {
				return fmt.Errorf("time: timezone %q: %w", t.Timezone, err)
			}
			tw.loc = loc
		}
		for _, d := range t.Days {
			tw.days |= 1 << uint(d)
		}
		for _, h := range t.Hours {
			from, to, ok := parseHours(h)
			if !ok {
				return fmt.Errorf("time: hours %q: want HH:MM-HH:MM", h)
			}
			tw.hours = append(tw.hours, [2]int{from, to})
		}
		sc.window = tw
	}
	return nil
}

func parseHours(s string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "-")
	if !ok {
		return 0, 0, false
	}
	from, ok1 := parseClock(a)
	to, ok2 := parseClock(b)
	return from, to, ok1 && ok2 && from != to
}

func parseClock(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, false
	}
	return hh*60 + mm, true
}

// build indexes the rules and derives what the engine needs to know up front.
func (p *Policy) build() {
	p.index.byTable = map[string][]int32{}
	p.index.byFunc = map[string][]int32{}
	for i := range p.rules {
		r := &p.rules[i]
		ri := int32(i)
		if r.scope.window != nil || r.rate != nil {
			p.usesTime = true
		}
		if r.fingerprints != nil {
			p.usesFingerprints = true
		}
		for _, g := range []struct {
			lim   int
			guard *int
		}{{r.limits.bytes, &p.guard.bytes}, {r.limits.list, &p.guard.list}, {r.limits.depth, &p.guard.depth}} {
			if g.lim > 0 && (*g.guard == 0 || g.lim < *g.guard) {
				*g.guard = g.lim
			}
		}
		if names, ok := r.tables.exact(); ok {
			for _, n := range names {
				p.index.byTable[n] = append(p.index.byTable[n], ri)
			}
			continue
		}
		if names, ok := r.functions.exact(); ok {
			for _, n := range names {
				p.index.byFunc[n] = append(p.index.byFunc[n], ri)
			}
			continue
		}
		if names, ok := columnTables(r.columns); ok {
			for _, n := range names {
				p.index.byTable[n] = append(p.index.byTable[n], ri)
			}
			continue
		}
		for k := StmtKind(0); k < NumKinds; k++ {
			if r.kinds == 0 || r.kinds.Has(k) {
				p.index.byKind[k] = append(p.index.byKind[k], ri)
			}
		}
	}
	p.warnings = p.findShadowed()
}

// columnTables returns the table names of column patterns when every
// pattern names its table exactly: such a rule can only match statements
// that name one of them.
func columnTables(cols []colPattern) ([]string, bool) {
	if len(cols) == 0 {
		return nil, false
	}
	var out []string
	for i := range cols {
		names, ok := cols[i].table.exact()
		if !ok {
			return nil, false
		}
		out = append(out, names...)
	}
	return out, true
}

// findShadowed warns about rules an earlier rule always decides first.
func (p *Policy) findShadowed() []string {
	var out []string
	for j := range p.rules {
		rj := &p.rules[j]
		for i := 0; i < j; i++ {
			ri := &p.rules[i]
			if ri.rate != nil {
				continue
			}
			shadows := false
			switch {
			case ri.sig == rj.sig && !(ri.kinds != 0 && ri.action == ActionAllow && rj.action != ActionAllow):
				shadows = true
			// An allow rule's kind needs every kind of the statement listed
			// (match.go), so it covers a later rule's kinds only for another
			// allow rule; a deny matches on any one kind.
			case ri.scope.empty() && ri.onlyKind && (ri.kinds == 0 || (rj.kinds != 0 && rj.kinds&^ri.kinds == 0 && (ri.action != ActionAllow || rj.action == ActionAllow))):
				shadows = true
			}
			if !shadows {
				continue
			}
			what := "is unreachable"
			if ri.action != rj.action {
				what = fmt.Sprintf("conflicts with it (%s vs %s) and is unreachable", ri.action, rj.action)
			}
			out = append(out, fmt.Sprintf("line %d: rule %q %s: rule %q (line %d) matches every statement it matches and comes first", rj.line, rj.id, what, ri.id, ri.line))
			break
		}
	}
	return out
}

// Warnings lists problems that do not make the policy invalid: rules that
// can never decide because an earlier rule matches all they match.
func (p *Policy) Warnings() []string { return append([]string(nil), p.warnings...) }

// UsesTime reports whether some rule needs Session.At: a time window or a
// rate limit. The daemon fills At per statement only when it does.
func (p *Policy) UsesTime() bool { return p.usesTime }

// Mode is the policy-level mode ("" when the policy does not set one).
func (p *Policy) Mode() Mode { return p.mode }

// Len is the number of rules.
func (p *Policy) Len() int { return len(p.rules) }

// With returns a policy of p's rules followed by frag's (a learned
// fragment, Learner.ExportPolicy): p's settings, p's rules deciding first.
// Rule ids must stay unique.
func (p *Policy) With(frag *Policy) (*Policy, error) {
	q := &Policy{onParseError: p.onParseError, mode: p.mode, tableColumns: p.tableColumns}
	seen := make(map[string]bool, len(p.rules)+len(frag.rules))
	q.rules = make([]rule, 0, len(p.rules)+len(frag.rules))
	for _, rs := range [][]rule{p.rules, frag.rules} {
		for _, r := range rs {
			if seen[r.id] {
				return nil, fmt.Errorf("policy: rule id %q is in the policy and in the fragment added to it", r.id)
			}
			seen[r.id] = true
			q.rules = append(q.rules, r)
		}
	}
	q.build()
	return q, nil
}
