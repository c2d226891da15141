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
	var stack []int       // indents of the open blocks, increasing
	var kinds []byte      // each block's kind: 's' a list, 'm' keys, 0 not known
	var firsts []place    // each block's first line
	var scalarItem *place // the last "- value" item, whose column takes no keys
	opens := true         // the previous line opens a block (or this is the first)
	prevIndent := -1
	blockScalar := -1 // the indent of the key whose | or > scalar is being skipped
	blockAt := -1     // the indent of that scalar's first line
	cont := continued(text)
	for i, raw := range strings.Split(string(text), "\n") {
		n := i + 1
		if cont[n] {
			continue // inside a quote or [ ] begun above
		}
		trimmed := strings.TrimLeft(raw, " \t")
		ws := raw[:len(raw)-len(trimmed)]
		if strings.TrimSpace(trimmed) == "" {
			continue
		}
		indent := len(ws)
		if blockScalar >= 0 {
			// a block scalar's lines are indented as its first one is
			if blockAt < 0 && indent > blockScalar {
				blockAt = indent
			}
			if blockAt >= 0 && indent >= blockAt {
				continue
			}
			if indent > blockScalar {
				return n, indent + 1, fmt.Sprintf("indented less (%d spaces) than the first line of the | or > value above (%d): its lines are indented alike", indent, blockAt), true
			}
			blockScalar, blockAt = -1, -1
		}
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "---") || strings.HasPrefix(trimmed, "...") {
			stack, opens, prevIndent = nil, true, -1
			continue
		}
		if tab := strings.IndexByte(ws, '\t'); tab >= 0 {
			return n, tab + 1, "a tab in the indentation: YAML indents with spaces", true
		}

		item := strings.HasPrefix(trimmed, "- ") || trimmed == "-"
		key := keyRE.MatchString(trimmed)
		switch {
		case opens && indent > prevIndent:
			stack = append(stack, indent)
			kinds = append(kinds, kindOf(item, key))
			firsts = append(firsts, place{n, indent + 1, strings.TrimSpace(stripComment(trimmed)), true})
		case opens && indent == prevIndent && strings.HasPrefix(trimmed, "- "):
			// key:\n- item, the sequence at the key's own column
		case indent > prevIndent && prevIndent >= 0:
			return n, indent + 1, fmt.Sprintf("indented more (%d spaces) than the line before, whose key already has a value", indent), true
		default:
			for len(stack) > 0 && stack[len(stack)-1] > indent {
				stack, kinds, firsts = stack[:len(stack)-1], kinds[:len(kinds)-1], firsts[:len(firsts)-1]
			}
			if (len(stack) == 0 || stack[len(stack)-1] != indent) && scalarItem != nil && indent == scalarItem.col-1 && key {
				return scalarItem.line, scalarItem.col, fmt.Sprintf("%q has no \": \" after it, so the keys below at its column belong to no item", scalarItem.msg), true
			}
			if len(stack) > 0 && stack[len(stack)-1] == indent {
				switch k := kinds[len(kinds)-1]; {
				case k == 's' && !item:
					return n, indent + 1, fmt.Sprintf("%q among list items, not one: a list item starts \"- \"", strings.TrimSpace(stripComment(trimmed))), true
				case k == 'm' && !key && !item:
					return n, indent + 1, fmt.Sprintf("%q has no \": \" after it: write key: value", strings.TrimSpace(stripComment(trimmed))), true
				case k == 0 && (key || item):
					f := firsts[len(firsts)-1]
					return f.line, f.col, fmt.Sprintf("%q is neither a key nor a list item (\"- \"), but the lines below it at its column are", f.msg), true
				}
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
			rest := strings.TrimLeft(strings.TrimPrefix(content, "-"), " ")
			itemIndent += len(content) - len(rest) // the item's keys sit where its first one starts
			content = rest
			scalarItem = nil
			switch {
			case keyRE.MatchString(content):
				stack, kinds = append(stack, itemIndent), append(kinds, 'm')
				firsts = append(firsts, place{n, itemIndent + 1, content, true})
			case strings.HasPrefix(content, "- "):
				stack, kinds = append(stack, itemIndent), append(kinds, 's')
				firsts = append(firsts, place{n, itemIndent + 1, content, true})
			case content != "":
				scalarItem = &place{n, itemIndent + 1, strings.TrimSpace(stripComment(content)), true}
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

// keyRE is a line of a key: "key:" or "key: value", the key plain or
// quoted, or "? key".
var keyRE = regexp.MustCompile(`^(\? |("[^"]*"|'[^']*'|[^\s"'#:-][^#]*?|-[^\s#][^#]*?)[ \t]*:([ \t]|$))`)

func kindOf(item, key bool) byte {
	switch {
	case item:
		return 's'
	case key:
		return 'm'
	}
	return 0
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

// SyntaxError reads yaml.v3's syntax error, "yaml: line N: problem", as
// the line of the file it names (1 for the first): yaml.v3 prints a
// parser's mark as it counts it, from 0, a scanner's from 1, and no line
// at all for a mark on the first line. ok is false for an error of
// another kind (a decoding error).
func SyntaxError(err error) (line int, problem string, ok bool) {
	msg := err.Error()
	if strings.HasPrefix(msg, "yaml: unmarshal errors:") {
		return 0, "", false
	}
	m := syntaxRE.FindStringSubmatch(msg)
	if m == nil {
		p, found := strings.CutPrefix(msg, "yaml: ")
		if !found {
			return 0, "", false
		}
		return 1, p, true
	}
	line, _ = strconv.Atoi(m[1])
	if parserProblems[m[2]] {
		line++
	}
	return line, m[2], true
}

// parserProblems are yaml.v3's parser's problems (parserc.go), whose
// lines it prints counted from 0.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// Syntax places yaml.v3's syntax error (its problem, and the line
// SyntaxError read) in the file's terms, with the parser's words after.
// What it looks for: a lexical mistake (Lexical) at its place; an
// indentation mistake (Indentation) at or after that line, for the parser
// names the enclosing block; a quoted value that took in the lines after
// it. The earliest of those found, for the parser stops at the first;
// else where on its line the parser stopped (onLine); else the parser's
// line and words, column 0.
func Syntax(text []byte, line int, problem string) (l, c int, msg string) {
	var found []place
	lx, suspect := lexical(text, nil)
	if lx.ok {
		found = append(found, lx)
	}
	if il, ic, why, ok := Indentation(text); ok && il >= line {
		found = append(found, place{il, ic, why, true})
	}
	if suspect != nil {
		found = append(found, *suspect)
	}
	if len(found) == 0 {
		if pl, pc, why, ok := onLine(text, line, problem); ok {
			found = append(found, place{pl, pc, why, true})
		}
	}
	if len(found) == 0 {
		return line, 0, problem
	}
	best := found[0]
	for _, f := range found[1:] {
		if f.line < best.line {
			best = f
		}
	}
	return best.line, best.col, best.msg + " (YAML: " + problem + ")"
}

// onLine places a scanner's problem on the line yaml.v3 names, which for
// these is the line of the mistake (or, for a value that goes on onto a
// key's line, the line before): where on it the parser stopped.
func onLine(text []byte, line int, problem string) (l, c int, msg string, ok bool) {
	lines := strings.Split(string(text), "\n")
	if line < 1 || line > len(lines) {
		return 0, 0, "", false
	}
	s := strings.TrimRight(lines[line-1], "\r")
	content := strings.TrimLeft(s, " \t")
	switch problem {
	case "found a tab character that violates indentation", "found a tab character where an indentation space is expected", "found character that cannot start any token":
		// a tab before a line's content (or its "- "), on that line or the
		// next with content: the scanner may name the last line it read
		for n := line; n <= len(lines); n++ {
			s := strings.TrimRight(lines[n-1], "\r")
			for i := 0; i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '-' || s[i] == '?'); i++ {
				if s[i] == '\t' {
					return n, i + 1, "a tab in the indentation: YAML indents with spaces", true
				}
			}
			// in a block scalar (| or >) the parser names its first line
			if n > line && strings.TrimSpace(s) != "" && problem != "found a tab character where an indentation space is expected" {
				break
			}
		}
	case "did not find expected comment or line break":
		// text after a block scalar's | or > (and its indicators)
		if i := strings.LastIndexAny(stripComment(s), "|>"); i >= 0 {
			j := i + 1
			for j < len(s) && strings.IndexByte("+-0123456789", s[j]) >= 0 {
				j++
			}
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j < len(s) {
				return line, j + 1, "text after | or >: the value starts on the next line", true
			}
		}
	case "could not find expected ':'":
		// a key's line without ": ": the key starts after any "- "
		i := len(s) - len(content)
		for strings.HasPrefix(s[i:], "- ") || strings.HasPrefix(s[i:], "? ") {
			i += 2
			for i < len(s) && s[i] == ' ' {
				i++
			}
		}
		if i < len(s) {
			return line, i + 1, fmt.Sprintf("%q has no \": \" after it: write key: value", strings.TrimSpace(stripComment(s[i:]))), true
		}
	case "mapping values are not allowed in this context":
		indent := len(s) - len(content)
		for p := line - 1; p >= 1; p-- { // the line before, if it is a key without ": "
			ps := strings.TrimRight(lines[p-1], "\r")
			pc := strings.TrimLeft(ps, " ")
			if strings.TrimSpace(pc) == "" || strings.HasPrefix(pc, "#") {
				continue
			}
			k := stripComment(pc)
			at := len(ps) - len(pc)
			for strings.HasPrefix(k, "- ") { // an item's content: its column is after the "- "
				rest := strings.TrimLeft(k[1:], " ")
				at, k = at+len(k)-len(rest), rest
			}
			if at == indent && !strings.Contains(k, ": ") && !strings.HasSuffix(k, ":") {
				return p, indent + 1, fmt.Sprintf("%q has no \": \" after it, so the next line's key is read as its value going on", k), true
			}
			break
		}
		if i := strings.Index(s, ": "); i >= 0 || strings.HasSuffix(s, ":") {
			if i < 0 {
				i = len(s) - 1
			}
			return line, i + 1, `a ": " where this value cannot take a key: quote the value if it holds ": "`, true
		}
	}
	return 0, 0, "", false
}

var (
	syntaxRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	dupRE     = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)
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
	if line, problem, ok := SyntaxError(err); ok {
		l, c, why := Syntax(text, line, problem)
		if c == 0 {
			return fmt.Errorf("line %d: %s", l, why)
		}
		return fmt.Errorf("line %d, column %d: %s", l, c, why)
	}
	te, ok := err.(*yaml.TypeError)
	if !ok {
		return err
	}
	var root yaml.Node
	_ = yaml.Unmarshal(text, &root)
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := dupRE.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			out = append(out, fmt.Sprintf("line %d%s: %q given twice (first at line %s)", line, keyColumn(&root, line, m[2]), m[2], m[3]))
			continue
		}
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
