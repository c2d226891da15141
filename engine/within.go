package engine

import (
	"errors"
	"fmt"
	"strings"
)

// within is a learned scope (match key `within`, written by the learner's
// scope form): a statement matches when everything it does lies inside it.
// The statement kinds it runs are among kinds; it has no more
// set-operation arms (UNION, INTERSECT, EXCEPT) than union_arms, when set;
// the parameters it sets are among settings, when set; every relation it names
// (not a WITH name) is in tables with the access it uses (read or write);
// every column it reads is one of the columns listed for the relation it
// reads it from; and, when funcs is not nil, every function it calls is in
// funcs. It depends on the text alone, so it is decided when the text is
// first seen (precompute) and costs nothing on a cache hit.
type within struct {
	kinds KindSet
	// unionArms bounds the set-operation arms of a statement (the most the
	// application used) when hasUnion: an injected UNION is drift even
	// when it reads only what the application reads elsewhere.
	unionArms int32
	hasUnion  bool
	tables    map[string]withinTable // "schema.name" or "name", lower-case
	funcs     map[string]struct{}    // nil: functions are not checked
	// settings, when not nil, lists the parameters SET/RESET may name.
	settings map[string]struct{}
}

type withinTable struct {
	read, write bool
	cols        map[string]struct{} // "*": a star or whole-row read, and so any column
}

type yamlWithin struct {
	Kinds     []yamlKind                 `yaml:"kinds"`
	UnionArms *int32                     `yaml:"union_arms"`
	Tables    map[string]yamlWithinTable `yaml:"tables"`
	Functions *[]string                  `yaml:"functions"`
	Settings  *[]string                  `yaml:"settings"`
}

type yamlWithinTable struct {
	Access  []string `yaml:"access"`
	Columns []string `yaml:"columns"`
}

func compileWithin(y *yamlWithin) (*within, error) {
	if len(y.Kinds) == 0 {
		return nil, errors.New("kinds: list the statement kinds the scope allows")
	}
	w := &within{tables: map[string]withinTable{}}
	for _, k := range y.Kinds {
		w.kinds |= 1 << StmtKind(k)
	}
	if y.UnionArms != nil {
		if *y.UnionArms < 0 {
			return nil, errors.New("union_arms must not be negative")
		}
		w.unionArms, w.hasUnion = *y.UnionArms, true
	}
	for name, t := range y.Tables {
		n := strings.ToLower(strings.TrimSpace(name))
		if n == "" || strings.Contains(n, "*") {
			return nil, fmt.Errorf("tables: %q: name one table, without globs", name)
		}
		wt := withinTable{cols: map[string]struct{}{}}
		for _, a := range t.Access {
			switch a {
			case "read":
				wt.read = true
			case "write":
				wt.write = true
			default:
				return nil, fmt.Errorf("tables: %s: access %q: want read and/or write", name, a)
			}
		}
		if !wt.read && !wt.write {
			return nil, fmt.Errorf("tables: %s: access: want read and/or write", name)
		}
		for _, c := range t.Columns {
			wt.cols[strings.ToLower(strings.TrimSpace(c))] = struct{}{}
		}
		w.tables[n] = wt
	}
	if y.Settings != nil {
		w.settings = map[string]struct{}{}
		for _, v := range *y.Settings {
			w.settings[strings.ToLower(strings.TrimSpace(v))] = struct{}{}
		}
	}
	if y.Functions != nil {
		w.funcs = map[string]struct{}{}
		for _, f := range *y.Functions {
			w.funcs[strings.ToLower(strings.TrimSpace(f))] = struct{}{}
		}
	}
	return w, nil
}

// holds reports whether statement f lies inside the scope.
func (w *within) holds(f *StmtFacts) bool {
	if f.Kinds&^w.kinds != 0 || (w.hasUnion && f.UnionArms > w.unionArms) {
		return false
	}
	for i := range f.Tables {
		t := &f.Tables[i]
		if t.CTE {
			continue
		}
		wt, ok := w.tables[qualName(t.Schema, t.Name)]
		if !ok || (t.Write && !wt.write) || (!t.Write && !wt.read) {
			return false
		}
	}
	if w.settings != nil {
		for _, v := range f.Settings {
			if _, ok := w.settings[v]; !ok {
				return false
			}
		}
	}
	if w.funcs != nil {
		for i := range f.Funcs {
			if _, ok := w.funcs[qualName(f.Funcs[i].Schema, f.Funcs[i].Name)]; !ok {
				return false
			}
		}
	}
	return w.colsHold(f)
}

// colsHold reports whether every column f reads is in scope, resolved as
// scopeCols records them: a column whose qualifier names a relation of the
// statement must be listed for that relation; an unqualified one (or one
// qualified by a derived table's or CTE's name) for at least one relation
// of the statement, which is all the learner can tell of where it comes
// from. A relation whose columns include "*" allows any column.
func (w *within) colsHold(f *StmtFacts) bool {
	has := func(t *TableRef, col string) bool {
		wt := w.tables[qualName(t.Schema, t.Name)]
		if _, ok := wt.cols[col]; ok {
			return true
		}
		_, star := wt.cols["*"]
		return star
	}
	for k := range f.Cols {
		c := &f.Cols[k]
		resolved := false
		if c.Qual != "" {
			for i := range f.Tables {
				t := &f.Tables[i]
				if t.CTE || (c.Qual != t.Name && c.Qual != t.Alias) {
					continue
				}
				resolved = true
				if !has(t, c.Name) {
					return false
				}
			}
		}
		if resolved {
			continue
		}
		any, some := false, false
		for i := range f.Tables {
			t := &f.Tables[i]
			if t.CTE {
				continue
			}
			some = true
			col := c.Name
			if c.Qual == "" && (col == t.Name || (t.Alias != "" && col == t.Alias)) {
				col = "*"
			}
			if has(t, col) {
				any = true
				break
			}
		}
		if some && !any {
			return false
		}
	}
	return true
}
