package engine

import (
	"errors"
	"fmt"
	"strings"
)

// nameSet matches lower-cased names. An entry "name" matches name in any
// schema; "schema.name" matches that qualified name and the unqualified name
// (which may resolve to it through search_path); "*" in either part is a
// wildcard ("dblink*", "public.*", "*.secrets"). An unqualified name the
// dialect knows the schema of by the name alone (ImplicitSchemer:
// PostgreSQL's pg_* in pg_catalog, which it searches first) is taken to
// be in it.
type nameSet struct {
	bare      map[string]struct{}
	qualified map[string]struct{} // "schema.name"
	globs     []nameGlob
	n         int
}

// An ImplicitSchemer is a Dialect in which an unqualified name may be
// known to be one schema's by the name alone.
type ImplicitSchemer interface {
	// ImplicitSchema is the schema an unqualified name is in, "" when the
	// name alone does not say.
	ImplicitSchema(name string) string
}

type nameGlob struct {
	schema string // "" for an unqualified entry
	name   string
}

func (s *nameSet) empty() bool { return s.n == 0 }

func (s *nameSet) add(entry string) error {
	e := strings.ToLower(strings.TrimSpace(entry))
	if e == "" {
		return errors.New("empty name")
	}
	if e == "*" {
		return errors.New(`"*" alone matches everything: leave the key out instead`)
	}
	s.n++
	schema, name := "", e
	if i := strings.LastIndexByte(e, '.'); i >= 0 {
		if i == 0 || i == len(e)-1 {
			return fmt.Errorf("malformed qualified name %q", entry)
		}
		schema, name = e[:i], e[i+1:]
	}
	if strings.Contains(e, "*") {
		s.globs = append(s.globs, nameGlob{schema: schema, name: name})
		return nil
	}
	if schema != "" {
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

// exact reports whether no entry has a wildcard, and returns the name parts
// (for indexing rules by object name).
func (s *nameSet) exact() ([]string, bool) {
	if len(s.globs) > 0 || s.n == 0 {
		return nil, false
	}
	var out []string
	for b := range s.bare {
		out = append(out, b)
	}
	for q := range s.qualified {
		out = append(out, q[strings.LastIndexByte(q, '.')+1:])
	}
	return out, true
}

// match reports whether a name (schema may be "") is in the set, under
// the dialect's implicit schemas (im, or nil). It does not allocate: the
// qualified lookup builds its key on the stack.
func (s *nameSet) match(im ImplicitSchemer, schema, name string) bool {
	if _, ok := s.bare[name]; ok {
		return true
	}
	if schema == "" && im != nil {
		schema = im.ImplicitSchema(name)
	}
	for i := range s.globs {
		g := &s.globs[i]
		if !glob(g.name, name) {
			continue
		}
		if g.schema == "" || schema == "" || glob(g.schema, schema) {
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

// matchAny reports whether any of the strings is in the set.
func (s *nameSet) matchAny(im ImplicitSchemer, list []string) bool {
	for _, v := range list {
		if s.match(im, "", v) {
			return true
		}
	}
	return false
}

// glob matches s against a pattern where '*' is any run of bytes.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextP, nextS := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			c := pattern[px]
			if c == '*' {
				nextP, nextS = px, sx+1
				px++
				continue
			}
			if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if nextP >= 0 && nextS <= len(s) {
			px, sx = nextP+1, nextS
			nextS++
			continue
		}
		return false
	}
	return true
}

// globList matches plain strings (users, databases, comm, cgroup paths)
// against entries that may contain '*'.
type globList []string

func (g globList) match(s string) bool {
	for _, p := range g {
		if p == s || glob(p, s) {
			return true
		}
	}
	return false
}
