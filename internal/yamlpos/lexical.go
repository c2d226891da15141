package yamlpos

import (
	"fmt"
	"regexp"
	"strings"
)

// Lexical finds the first mistake of YAML's tokens that yaml.v3 reports
// without a column (and for a quote opened on the first line, on the wrong
// line): a quoted value or a [ or { never closed, a ] or } that closes
// nothing, a second ": " in a plain value, an alias (*x) of no anchor
// before it, a character no value can start with (@, `). Its position is
// the place of the mistake: the opening quote or bracket, the colon, the
// alias. Block scalars (| and >) and comments are skipped; a document
// yaml.v3 accepts gives nothing (TestLexicalAcceptsWellFormed).
func Lexical(text []byte) (line, column int, msg string, ok bool) {
	f, _ := lexical(text, nil)
	return f.line, f.col, f.msg, f.ok
}

// continued is the set of lines (from 1) that start inside a quoted value
// or a [ ] or { } begun on a line before: their indentation is not the
// block structure's, so Indentation passes over them. Lines after a
// lexical mistake are not known.
func continued(text []byte) map[int]bool {
	cont := map[int]bool{}
	lexical(text, cont)
	return cont
}

// place is a mistake found at a line and column.
type place struct {
	line, col int
	msg       string
	ok        bool
}

type open struct {
	line, col int
	ch        byte
}

// span is a quoted value from its opening quote to the line it closes on.
type span struct {
	from open
	to   int
}

var keyLineRE = regexp.MustCompile(`^\s*(- )?[\w./-]+: `)

// lexical is Lexical, and besides a quoted value that went on over lines
// and took in a line that reads as a key (see the end); cont, when not
// nil, gets the lines that start inside a quote or a flow (continued).
func lexical(text []byte, cont map[int]bool) (found place, suspect *place) {
	var (
		flows   []open // open [ and { brackets
		quote   *open  // an open quoted value
		anchors = map[string]bool{}
		block   = -1 // the indent of the key whose | or > scalar is skipped
		blockAt = -1 // the indent of its first line
		// the line before is "? key", whose value may start ": "
		explicitKey bool
		multi       []span // quoted values that went on over lines
	)
	lines := strings.Split(string(text), "\n")
	for li, raw := range lines {
		n := li + 1
		s := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimLeft(s, " \t")
		indent := len(s) - len(trimmed)
		if block >= 0 {
			// a block scalar's lines are indented as its first one is
			if trimmed == "" || (blockAt < 0 && indent > block) || (blockAt >= 0 && indent >= blockAt) {
				if blockAt < 0 && trimmed != "" {
					blockAt = indent
				}
				continue
			}
			block, blockAt = -1, -1
		}
		i := 0
		if cont != nil && (quote != nil || len(flows) > 0) {
			cont[n] = true
		}
		if quote == nil && len(flows) == 0 {
			if trimmed == "" || trimmed[0] == '#' || strings.HasPrefix(trimmed, "---") || strings.HasPrefix(trimmed, "...") || strings.HasPrefix(trimmed, "%") {
				continue
			}
		}
		start := true               // at a place a value or key may start
		afterKey := false           // a "key: " on this line (block context) already
		lineExplicit := explicitKey // the line before is "? key"
		if quote == nil && len(flows) == 0 {
			explicitKey = strings.HasPrefix(trimmed, "? ")
		}
		for i < len(s) {
			if quote != nil {
				j := closeQuote(s, i, quote.ch)
				if j < 0 {
					break // the value goes on on the next line
				}
				if quote.line < n {
					multi = append(multi, span{*quote, n})
				}
				q := quote.ch
				i, quote, start = j+1, nil, false
				// after the closing quote: a blank, ": ", a comment, or in
				// a flow , ] }; anything else goes on the value
				k := i
				for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				if k < len(s) && !(s[k] == '#' && k > i) && s[k] != ':' && !(len(flows) > 0 && strings.IndexByte(",]}", s[k]) >= 0) {
					return place{n, k + 1, fmt.Sprintf("text after the value's closing %c: put it inside the quotes", q), true}, nil
				}
				continue
			}
			c := s[i]
			switch {
			case c == ' ' || c == '\t':
				i++
				continue
			case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
				i = len(s)
				continue
			}
			if start {
				switch c {
				case '"', '\'':
					quote = &open{n, i + 1, c}
					i++
					continue
				case '[', '{':
					flows = append(flows, open{n, i + 1, c})
					i++
					continue
				case '-', '?':
					if i+1 == len(s) || s[i+1] == ' ' {
						i++
						continue
					}
				case '&', '!':
					j := tokenEnd(s, i+1)
					if c == '&' {
						anchors[s[i+1:j]] = true
					}
					i = j
					continue
				case '*':
					j := tokenEnd(s, i+1)
					if name := s[i+1 : j]; !anchors[name] {
						return place{n, i + 1, fmt.Sprintf("*%s names no anchor: no &%s before it", name, name), true}, nil
					}
					i, start = j, false
					continue
				case '@', '`':
					return place{n, i + 1, fmt.Sprintf("a value cannot start with %c: quote it", c), true}, nil
				case '|', '>':
					if len(flows) == 0 {
						block = indent
						i = len(s)
						continue
					}
				}
			}
			if len(flows) > 0 {
				switch c {
				case '[', '{':
					return place{n, i + 1, fmt.Sprintf("a %c inside a value in %c %c: quote the value", c, flows[len(flows)-1].ch, closer(flows[len(flows)-1].ch)), true}, nil
				case ']', '}':
					top := flows[len(flows)-1]
					if want := closer(top.ch); c != want {
						return place{n, i + 1, fmt.Sprintf("%c where the %c opened at line %d, column %d wants %c", c, top.ch, top.line, top.col, want), true}, nil
					}
					flows = flows[:len(flows)-1]
					i, start = i+1, false
					// after the closing bracket: as after a closing quote
					k := i
					for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
						k++
					}
					if k < len(s) && !(s[k] == '#' && k > i) && s[k] != ':' && !(len(flows) > 0 && strings.IndexByte(",]}", s[k]) >= 0) {
						return place{n, k + 1, fmt.Sprintf("text after the closing %c: put the value inside the brackets, or quote it", c), true}, nil
					}
					continue
				case ',':
					i, start = i+1, true
					continue
				case ':':
					if i+1 == len(s) || strings.IndexByte(" \t,]}", s[i+1]) >= 0 {
						if start {
							return place{n, i + 1, `a ": " with no key before it`, true}, nil
						}
						i, start = i+1, true
						continue
					}
				}
			} else {
				switch c {
				case ']', '}':
					return place{n, i + 1, fmt.Sprintf("%c closes no %c", c, opener(c)), true}, nil
				case ':':
					if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t' {
						if afterKey {
							return place{n, i + 1, `a second ": " on this line: a value that holds ": " must be quoted`, true}, nil
						}
						if start && !lineExplicit {
							return place{n, i + 1, `a ": " with no key before it`, true}, nil
						}
						afterKey = true
						i, start = i+1, true
						continue
					}
				}
			}
			// a plain word: up to a blank, or a flow indicator in a flow
			start = false
			i++
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != ':' && !(len(flows) > 0 && strings.IndexByte(",[]{}", s[i]) >= 0) {
				i++
			}
		}
	}
	if quote != nil {
		return place{quote.line, quote.col, fmt.Sprintf("the value quoted with %c here is never closed", quote.ch), true}, nil
	}
	if len(flows) > 0 {
		top := flows[len(flows)-1]
		return place{top.line, top.col, fmt.Sprintf("the %c opened here is never closed with %c", top.ch, closer(top.ch)), true}, nil
	}
	// A quoted value may go on over lines; one that takes in a line that
	// reads as a key most likely lost its closing quote (and closes at a
	// quote further down, an apostrophe in a comment). yaml.v3 accepts
	// such a file when what follows still parses, so this is said only of
	// a file it refuses (Syntax), never as Lexical's own finding.
	for _, m := range multi {
		for k := m.from.line; k < m.to && k < len(lines); k++ {
			if keyLineRE.MatchString(lines[k]) {
				return place{}, &place{m.from.line, m.from.col, fmt.Sprintf("the value quoted with %c here goes on to line %d, where its quote closes: was a closing %c left out?", m.from.ch, m.to, m.from.ch), true}
			}
		}
	}
	return place{}, nil
}

// closeQuote is the index of the quote that closes a value quoted with q,
// searched from i on line s, or -1: " ends at an unescaped ", ' at a '
// not doubled.
func closeQuote(s string, i int, q byte) int {
	for ; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// tokenEnd is where an anchor, alias or tag name that starts at i ends.
func tokenEnd(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t,[]{}", s[i]) < 0 {
		i++
	}
	return i
}

func closer(c byte) byte {
	if c == '[' {
		return ']'
	}
	return '}'
}

func opener(c byte) byte {
	if c == ']' {
		return '['
	}
	return '{'
}
