package engine

// A policy file is YAML; docs/policy.md documents every key. Example:
//
//	version: 1
//	on_parse_error: deny
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
	"strings"

	"go.yaml.in/yaml/v3"
)

// Policy is a parsed, validated policy. It is immutable and may be shared by
// several engines.
type Policy struct {
	onParseError Action
	rules        []rule
}

// rule is one compiled entry of `rules:`. All conditions present must hold;
// within a list, any entry may match.
type rule struct {
	id     string
	action Action
	reason string

	users     []string // empty: any user
	databases []string // empty: any database

	kinds        kindSet // 0: any kind
	withoutWhere bool
	copy         copyTarget // 0: no COPY condition
	functions    nameSet
	tables       nameSet
	access       tableAccess
}

type tableAccess uint8

const (
	accessAny tableAccess = iota
	accessRead
	accessWrite
)

// nameSet matches lower-cased names. An entry "name" matches name in any
// schema; "schema.name" matches that qualified name and the unqualified name
// (which may resolve to it through search_path); "prefix*" matches by prefix.
type nameSet struct {
	bare      map[string]struct{}
	qualified map[string]struct{} // "schema.name"
	prefixes  []string
	n         int
}

func (s *nameSet) empty() bool { return s.n == 0 }

func (s *nameSet) add(entry string) error {
	e := strings.ToLower(strings.TrimSpace(entry))
	if e == "" || e == "*" {
		return errors.New("empty name")
	}
	s.n++
	if strings.HasSuffix(e, "*") {
		s.prefixes = append(s.prefixes, strings.TrimSuffix(e, "*"))
		return nil
	}
	if i := strings.LastIndexByte(e, '.'); i >= 0 {
		if i == 0 || i == len(e)-1 {
			return fmt.Errorf("malformed qualified name")
		}
		if s.qualified == nil {
			s.qualified = map[string]struct{}{}
		}
		s.qualified[e] = struct{}{}
		return nil
	}
	if s.bare == nil {
		s.bare = map[string]struct{}{}
	}
	s.bare[e] = struct{}{}
	return nil
}

// match reports whether a name (schema may be "") is in the set. It does not
// allocate: the qualified lookup builds its key on the stack.
func (s *nameSet) match(schema, name string) bool {
	if _, ok := s.bare[name]; ok {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if len(s.qualified) == 0 {
		return false
	}
	if schema == "" {
		// Unqualified: could be any schema's object of that name.
		for q := range s.qualified {
			if q[strings.LastIndexByte(q, '.')+1:] == name {
				return true
			}
		}
		return false
	}
	var buf [128]byte
	if len(schema)+1+len(name) > len(buf) {
		_, ok := s.qualified[schema+"."+name]
		return ok
	}
	k := append(append(append(buf[:0], schema...), '.'), name...)
	_, ok := s.qualified[string(k)]
	return ok
}

// The YAML shape. Decoded with unknown keys rejected.
type yamlPolicy struct {
	Version      int         `yaml:"version"`
	OnParseError *yamlAction `yaml:"on_parse_error"`
	Rules        []yamlRule  `yaml:"rules"`
}

type yamlRule struct {
	ID        string      `yaml:"id"`
	Action    *yamlAction `yaml:"action"`
	Reason    string      `yaml:"reason"`
	Users     []string    `yaml:"users"`
	Databases []string    `yaml:"databases"`
	Match     yamlMatch   `yaml:"match"`
}

type yamlMatch struct {
	Kind         []yamlKind  `yaml:"kind"`
	Functions    []string    `yaml:"functions"`
	Tables       []string    `yaml:"tables"`
	Access       *yamlAccess `yaml:"access"`
	WithoutWhere bool        `yaml:"without_where"`
	Copy         []yamlCopy  `yaml:"copy"`
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
	default:
		return posErr(n, "unknown action %q (want allow, deny or log)", n.Value)
	}
	return nil
}

type yamlKind stmtKind

func (k *yamlKind) UnmarshalYAML(n *yaml.Node) error {
	for i, name := range kindNames {
		if n.Value == name {
			*k = yamlKind(i)
			return nil
		}
	}
	return posErr(n, "unknown statement kind %q (want one of %s)", n.Value, strings.Join(kindNames[:], ", "))
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

type yamlCopy copyTarget

func (c *yamlCopy) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "program":
		*c = yamlCopy(copyProgram)
	case "file":
		*c = yamlCopy(copyFile)
	case "stdio":
		*c = yamlCopy(copyStdio)
	default:
		return posErr(n, "unknown copy target %q (want program, file or stdio)", n.Value)
	}
	return nil
}

// posErr reports a bad scalar. As a *yaml.TypeError it is collected with
// yaml's own errors (unknown keys), so one run reports them all.
func posErr(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d column %d: %s", n.Line, n.Column, fmt.Sprintf(format, args...))}}
}

// ParsePolicy parses and validates a policy. Unknown keys are errors, and
// errors name the line (and column where yaml reports one).
func ParsePolicy(yamlText []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(yamlText))
	dec.KnownFields(true)
	var yp yamlPolicy
	if err := dec.Decode(&yp); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("parsing policy: empty document")
		}
		return nil, fmt.Errorf("parsing policy: %w", err)
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
	seen := map[string]bool{}
	for i, yr := range yp.Rules {
		where := fmt.Sprintf("rule %d", i+1)
		if i < len(rulePos) {
			where = fmt.Sprintf("line %d column %d: rule %d", rulePos[i].Line, rulePos[i].Column, i+1)
		}
		r, err := compileRule(yr)
		if err != nil {
			return nil, fmt.Errorf("parsing policy: %s: %w", where, err)
		}
		if seen[r.id] {
			return nil, fmt.Errorf("parsing policy: %s: duplicate id %q", where, r.id)
		}
		seen[r.id] = true
		p.rules = append(p.rules, r)
	}
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
	r.users = yr.Users
	r.databases = yr.Databases
	m := yr.Match
	for _, k := range m.Kind {
		r.kinds |= 1 << stmtKind(k)
	}
	for _, c := range m.Copy {
		r.copy |= copyTarget(c)
	}
	r.withoutWhere = m.WithoutWhere
	if r.withoutWhere && r.kinds&(1<<kindUpdate|1<<kindDelete) == 0 && r.kinds != 0 {
		return r, fmt.Errorf("rule %q: without_where needs kind update or delete", r.id)
	}
	for _, f := range m.Functions {
		if err := r.functions.add(f); err != nil {
			return r, fmt.Errorf("rule %q: functions: %w", r.id, err)
		}
	}
	for _, t := range m.Tables {
		if err := r.tables.add(t); err != nil {
			return r, fmt.Errorf("rule %q: tables: %w", r.id, err)
		}
	}
	if m.Access != nil {
		if r.tables.empty() {
			return r, fmt.Errorf("rule %q: access needs tables", r.id)
		}
		r.access = tableAccess(*m.Access)
	}
	return r, nil
}

//go:embed default_policy.yaml
var defaultPolicyYAML []byte

var defaultPolicy = func() *Policy {
	p, err := ParsePolicy(defaultPolicyYAML)
	if err != nil {
		panic("engine: embedded default policy: " + err.Error())
	}
	return p
}()

// DefaultPolicy returns the embedded default policy (default_policy.yaml).
func DefaultPolicy() *Policy { return defaultPolicy }

// DefaultPolicyYAML returns the text of the embedded default policy, for
// operators who want to start their own from it.
func DefaultPolicyYAML() []byte { return bytes.Clone(defaultPolicyYAML) }

// appliesTo reports whether the rule's scope covers the session.
func (r *rule) appliesTo(s *Session) bool {
	if len(r.users) > 0 && !containsString(r.users, s.User) {
		return false
	}
	if len(r.databases) > 0 && !containsString(r.databases, s.Database) {
		return false
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// matches reports whether the statement satisfies every condition of the rule.
func (r *rule) matches(f *stmtFacts) bool {
	if r.kinds != 0 && f.kinds&r.kinds == 0 {
		return false
	}
	if r.withoutWhere {
		want := r.kinds & (1<<kindUpdate | 1<<kindDelete)
		if want == 0 {
			want = 1<<kindUpdate | 1<<kindDelete
		}
		if f.unfiltered&want == 0 {
			return false
		}
	}
	if r.copy != 0 && f.copy&r.copy == 0 {
		return false
	}
	if !r.functions.empty() {
		found := false
		for i := range f.funcs {
			if r.functions.match(f.funcs[i].schema, f.funcs[i].name) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if !r.tables.empty() {
		found := false
		for i := range f.tables {
			t := &f.tables[i]
			if (r.access == accessRead && t.write) || (r.access == accessWrite && !t.write) {
				continue
			}
			if r.tables.match(t.schema, t.name) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// decide returns the first rule that applies to the session and matches the
// statement, or nil.
func (p *Policy) decide(f *stmtFacts, s *Session) *rule {
	for i := range p.rules {
		r := &p.rules[i]
		if r.appliesTo(s) && r.matches(f) {
			return r
		}
	}
	return nil
}
