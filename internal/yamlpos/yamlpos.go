// Package yamlpos says where a YAML file is wrong in the file's own terms:
// the line whose indentation is wrong (the parser names the line where it
// gave up, often the enclosing block's), and yaml.v3's decoding errors
// without Go's type names. config (sqlfwd.yaml) and engine (policies) use
// it. Pure: no I/O.
package yamlpos

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Indentation finds the first line whose indentation fits no enclosing
// block: a tab in the indentation, a line indented under a key that
// already has a value, or a dedent to a column no enclosing key is at.
// Block scalars (| and >) and comments are skipped.
func Indentation(text []byte) (line, column int, msg string, ok bool) {
	var stack []int // indents of the open blocks, increasing
	opens := true   // the previous line opens a block (or this is the first)
	prevIndent := -1
	blockScalar := -1 // the indent of the key whose | or > scalar is being skipped
	for i, raw := range strings.Split(string(text), "\n") {
		n := i + 1
		trimmed := strings.TrimLeft(raw, " \t")
		ws := raw[:len(raw)-len(trimmed)]
		if strings.TrimSpace(trimmed) == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "---") || strings.HasPrefix(trimmed, "...") {
			stack, opens, prevIndent = nil, true, -1
			continue
		}
		if tab := strings.IndexByte(ws, '\t'); tab >= 0 {
			if blockScalar >= 0 && tab > blockScalar {
				continue
			}
			return n, tab + 1, "a tab in the indentation: YAML indents with spaces", true
		}
		indent := len(ws)
		if blockScalar >= 0 {
			if indent > blockScalar {
				continue
			}
			blockScalar = -1
		}
		switch {
		case opens && indent > prevIndent:
			stack = append(stack, indent)
		case opens && indent == prevIndent && strings.HasPrefix(trimmed, "- "):
			// key:\n- item, the sequence at the key's own column
		case indent > prevIndent && prevIndent >= 0:
			return n, indent + 1, fmt.Sprintf("indented more (%d spaces) than the line before, whose key already has a value", indent), true
		default:
			for len(stack) > 0 && stack[len(stack)-1] > indent {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 || stack[len(stack)-1] != indent {
				cols := make([]string, 0, len(stack))
				for _, s := range stack {
					cols = append(cols, strconv.Itoa(s))
				}
				return n, indent + 1, fmt.Sprintf("indentation of %d spaces matches no enclosing key (the keys above are at %s spaces)", indent, strings.Join(cols, ", ")), true
			}
		}
		// what this line opens: "key:" (nothing after), "- " items (the
		// item's keys sit after the dash), "key: |" block scalars
		content := trimmed
		itemIndent := indent
		for strings.HasPrefix(content, "- ") || content == "-" {
			itemIndent += 2
			content = strings.TrimLeft(strings.TrimPrefix(content, "-"), " ")
			if content != "" {
				stack = append(stack, itemIndent)
			}
		}
		c := stripComment(content)
		opens = c == "" || strings.HasSuffix(c, ":")
		if strings.HasSuffix(c, "|") || strings.HasSuffix(c, ">") || strings.HasSuffix(c, "|-") || strings.HasSuffix(c, ">-") {
			blockScalar, opens = indent, false
		}
		prevIndent = indent
		if content != trimmed && content != "" {
			prevIndent = itemIndent // the item's own keys continue at its column
		}
	}
	return 0, 0, "", false
}

// stripComment cuts a " #" comment outside quotes from a line's content.
func stripComment(s string) string {
	inS, inD := false, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			if !inD {
				inS = !inS
			}
		case '"':
			if !inS {
				inD = !inD
			}
		case '#':
			if !inS && !inD && (i == 0 || s[i-1] == ' ') {
				return strings.TrimSpace(s[:i])
			}
		}
	}
	return strings.TrimSpace(s)
}

var (
	syntaxRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	unknownRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
	typeRE    = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `([^`]*)`)? into (\\S+)$")
)

// Explain rewrites an error of decoding text with yaml.v3: a syntax error
// on the line whose indentation is wrong when that is the cause; decoding
// errors one a line, each "line L, column C: message" in words (unknown
// key "mach"; want a whole number, got "lots"). Other errors are returned
// as they are.
func Explain(text []byte, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if m := syntaxRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if l, c, why, ok := Indentation(text); ok && l >= line {
			return fmt.Errorf("line %d, column %d: %s (YAML: %s)", l, c, why, m[2])
		}
		return fmt.Errorf("line %d: %s", line, m[2])
	}
	te, ok := err.(*yaml.TypeError)
	if !ok {
		return err
	}
	var root yaml.Node
	_ = yaml.Unmarshal(text, &root)
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := unknownRE.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			out = append(out, fmt.Sprintf("line %d%s: unknown key %q", line, keyColumn(&root, line, m[2]), m[2]))
			continue
		}
		if m := typeRE.FindStringSubmatch(e); m != nil {
			got := kindWords[m[2]]
			if got == "" || m[3] != "" {
				got = strconv.Quote(m[3])
			}
			out = append(out, fmt.Sprintf("line %s: want %s, got %s", m[1], want(m[4]), got))
			continue
		}
		out = append(out, e)
	}
	return fmt.Errorf("%s", strings.Join(out, "\n"))
}

var kindWords = map[string]string{"!!seq": "a list", "!!map": "keys (a mapping)", "!!null": "nothing"}

// want says in words what a Go type takes.
func want(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration like 30s, 500ms or 1m30s"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a single value"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "keys (a mapping)"
	}
	return "keys (a mapping)" // a structure
}

// keyColumn finds the column of the mapping key name on line.
func keyColumn(n *yaml.Node, line int, name string) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Line == line && k.Value == name {
				return fmt.Sprintf(", column %d", k.Column)
			}
		}
	}
	for _, c := range n.Content {
		if s := keyColumn(c, line, name); s != "" {
			return s
		}
	}
	return ""
}
