package config

// Errors in the file's own terms: a configuration problem is reported at
// its line and column, with the YAML key path (databases[0].protocol), what
// the key wants in words (a duration like 30s), never a Go type name; a
// YAML syntax error caused by indentation is reported on the line whose
// indentation is wrong, not where the parser gave up.

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/internal/yamlpos"
)

// PosError is one problem at a place in a configuration file. Column is 0
// when the parser did not say.
type PosError struct {
	Line, Column int
	Msg          string
}

func (e *PosError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Errors are the problems of one file, in file order.
type Errors []*PosError

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// FileError is Errors in a named file, printed as the compilers' and
// editors' file:line:column: message, one problem a line.
type FileError struct {
	File string
	Errs Errors
}

func (e *FileError) Error() string {
	s := make([]string, len(e.Errs))
	for i, pe := range e.Errs {
		if pe.Line == 0 { // about the file as a whole
			s[i] = fmt.Sprintf("%s: %s", e.File, pe.Msg)
		} else if pe.Column > 0 {
			s[i] = fmt.Sprintf("%s:%d:%d: %s", e.File, pe.Line, pe.Column, pe.Msg)
		} else {
			s[i] = fmt.Sprintf("%s:%d: %s", e.File, pe.Line, pe.Msg)
		}
	}
	return strings.Join(s, "\n")
}

func (e *FileError) Unwrap() error { return e.Errs }

// inFile names the file of a Parse error; other errors get "file: ".
func inFile(file string, err error) error {
	var es Errors
	if errors.As(err, &es) {
		return &FileError{File: file, Errs: es}
	}
	return fmt.Errorf("%s: %w", file, err)
}

// syntaxError places the parser's "yaml: line N: msg" in the file's terms
// (yamlpos.Syntax): an indentation mistake on the line whose indentation
// is wrong, an unclosed quote at its opening quote, with a column.
func syntaxError(text []byte, err error) error {
	line, problem, ok := yamlpos.SyntaxError(err)
	if !ok {
		return Errors{{Line: 1, Msg: err.Error()}}
	}
	l, c, msg := yamlpos.Syntax(text, line, problem)
	return Errors{{Line: l, Column: c, Msg: msg}}
}

var durationType = reflect.TypeOf(time.Duration(0))

// checkNode checks a YAML node against the configuration type t: unknown
// and repeated keys, and values of the wrong kind, each at its place.
func checkNode(n *yaml.Node, t reflect.Type, path string, errs *Errors) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // key: with nothing: the default
	}
	add := func(n *yaml.Node, format string, a ...any) {
		*errs = append(*errs, &PosError{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, a...)})
	}
	name := path
	if name == "" {
		name = "the configuration"
	}
	if t == durationType {
		if n.Kind != yaml.ScalarNode {
			add(n, "%s: want a duration like 30s, 500ms or 1m30s, got %s", name, kindWord(n))
		} else if _, err := time.ParseDuration(n.Value); err != nil && !(n.Tag == "!!int" && n.Value == "0") {
			add(n, "%s: %q is not a duration: write it like 30s, 500ms or 1m30s", name, n.Value)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			add(n, "%s: want keys (%s), got %s", name, strings.Join(knownKeys(t), ", "), kindWord(n))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if seen[key] {
				add(k, "%s: given twice", sub)
				continue
			}
			seen[key] = true
			f, ok := fieldByKey(t, key)
			if !ok {
				msg := fmt.Sprintf("unknown key %q", key)
				if path != "" {
					msg += " in " + path
				}
				if s := closest(key, knownKeys(t)); s != "" {
					msg += fmt.Sprintf(": did you mean %s?", s)
				} else {
					msg += fmt.Sprintf(": the keys here are %s", strings.Join(knownKeys(t), ", "))
				}
				add(k, "%s", msg)
				continue
			}
			checkNode(v, f.Type, sub, errs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			add(n, "%s: want a list (lines starting with \"- \", or [a, b]), got %s", name, kindWord(n))
			return
		}
		for i, e := range n.Content {
			checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			add(n, "%s: want true or false, got %s", name, valueWord(n))
		}
	case reflect.Int, reflect.Int64, reflect.Uint32:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			add(n, "%s: want a whole number, got %s", name, valueWord(n))
			return
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || (t.Kind() == reflect.Uint32 && (v < 0 || v > 1<<32-1)) || (t.Kind() == reflect.Int && int64(int(v)) != v) {
			add(n, "%s: %s is out of range", name, n.Value)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			add(n, "%s: want a single value, got %s", name, kindWord(n))
		}
	}
}

func kindWord(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "keys (a mapping)"
	case yaml.SequenceNode:
		return "a list"
	}
	return valueWord(n)
}

func valueWord(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return kindWord(n)
	}
	return strconv.Quote(n.Value)
}

// fieldByKey finds the struct field whose yaml tag is key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key && name != "" && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func knownKeys(t reflect.Type) []string {
	var ks []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			ks = append(ks, name)
		}
	}
	return ks
}

// closest is the known key within two edits of key, if one is.
func closest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// keyError is a problem Normalize finds with one key's value (its path as
// the messages spell it: databases[0].mode), placed at that value in the
// file the configuration came from.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

func atKey(key string, err error) error { return &keyError{key: key, err: err} }

// dbKey is a key of databases[i].
func dbKey(i int, key string) string { return fmt.Sprintf("databases[%d].%s", i, key) }

// source is a parsed configuration file.
type source struct {
	file string
	root *yaml.Node
}

// place turns Normalize's problems into the file's: a key's problem at its
// value (or, for a key the file leaves out, at the entry that lacks it),
// the others about the file as a whole.
func (src *source) place(errs []error) error {
	fe := &FileError{File: src.file}
	for _, err := range errs {
		pe := &PosError{Msg: err.Error()}
		var ke *keyError
		if errors.As(err, &ke) {
			if n := src.lookup(ke.key); n != nil {
				pe.Line, pe.Column = n.Line, n.Column
			}
		}
		fe.Errs = append(fe.Errs, pe)
	}
	return fe
}

var keyPartRE = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// lookup finds the node of key (a.b[2].c) in the document: the value, or
// the deepest node on the way that is there; nil for none at all.
func (src *source) lookup(key string) *yaml.Node {
	if src.root == nil || len(src.root.Content) == 0 {
		return nil
	}
	n := src.root.Content[0]
	var found *yaml.Node
	for _, m := range keyPartRE.FindAllStringSubmatch(key, -1) {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		switch {
		case m[1] != "" && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == m[1] {
					next = n.Content[i+1]
				}
			}
		case m[2] != "" && n.Kind == yaml.SequenceNode:
			if i, _ := strconv.Atoi(m[2]); i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			break
		}
		n, found = next, next
	}
	return found
}
