package corpora

import "strings"

// A token of a statement as the server's lexer sees it: comments are gone
// (a MySQL executable comment's content is lexed as text), literals are
// "?" and words are lower-cased. Off is the byte offset of the token in
// the text.
type token struct {
	text string
	off  int
	end  int  // the byte after a string literal
	str  bool // a string literal
}

// lexed is a text read the way PostgreSQL (pg) or MariaDB reads it.
type lexed struct {
	toks []token
	// stmts are the byte ranges of the text's statements, split at each
	// top-level ';' (empty ones, only blanks and comments, left out).
	stmts [][2]int
	// comments are the byte ranges of the comments (an executable
	// comment's own range is not one: its content runs).
	comments [][2]int
	// broken is true when a literal, quoted name or comment is not
	// closed.
	broken bool
	// pgRules is true when the text was read with PostgreSQL's rules.
	pgRules bool
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isWord(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

// lex reads text in PostgreSQL's lexical rules (pg true: standard strings,
// E'..', $tag$..$tag$, nested block comments, "name") or MariaDB's under
// its default sql_mode (backslash escapes, "..." and '...' strings,
// `name`, '#' and '-- ' comments, /*! ... */ and /*M! ... */ run).
func lex(text string, pg bool) lexed {
	l := lexed{pgRules: pg}
	n := len(text)
	stmtStart := 0
	stmtHasTok := false
	endStmt := func(at int) {
		if stmtHasTok {
			l.stmts = append(l.stmts, [2]int{stmtStart, at})
		}
		stmtStart, stmtHasTok = at+1, false
	}
	add := func(s string, off int) {
		l.toks = append(l.toks, token{text: s, off: off})
		stmtHasTok = true
	}
	// addString adds a string literal text[i:j], or joins it to the one
	// before: MariaDB reads 'a' 'b' as one literal, PostgreSQL when a
	// newline stands between them.
	addString := func(i, j int) {
		if k := len(l.toks) - 1; k >= 0 && l.toks[k].str && blankBetween(text[l.toks[k].end:i], pg) {
			l.toks[k].end = j
			return
		}
		l.toks = append(l.toks, token{text: "?", off: i, end: j, str: true})
		stmtHasTok = true
	}
	inExec := 0 // depth of MySQL executable comments open
	i := 0
	for i < n {
		c := text[i]
		switch {
		case isSpace(c):
			i++
		case c == '-' && i+1 < n && text[i+1] == '-' && (pg || i+2 >= n || isSpace(text[i+2]) || text[i+2] < 0x20):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = n - i
			}
			l.comments = append(l.comments, [2]int{i, i + j})
			i += j
		case c == '#' && !pg:
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = n - i
			}
			l.comments = append(l.comments, [2]int{i, i + j})
			i += j
		case c == '/' && i+1 < n && text[i+1] == '*':
			if !pg && (strings.HasPrefix(text[i:], "/*!") || strings.HasPrefix(text[i:], "/*M!")) {
				// Executable comment: its content runs; skip an
				// optional version number.
				j := i + 3
				if text[i+2] == 'M' {
					j++
				}
				for k := 0; k < 6 && j < n && isDigit(text[j]); k++ {
					j++
				}
				inExec++
				i = j
				continue
			}
			start := i
			depth := 0
			j := i
			for j < n {
				if j+1 < n && text[j] == '/' && text[j+1] == '*' {
					depth++
					j += 2
					if !pg && depth > 1 {
						depth = 1 // MySQL does not nest
					}
					continue
				}
				if j+1 < n && text[j] == '*' && text[j+1] == '/' {
					depth--
					j += 2
					if depth == 0 {
						break
					}
					continue
				}
				j++
			}
			if depth != 0 {
				l.broken = true
			}
			l.comments = append(l.comments, [2]int{start, j})
			i = j
		case !pg && inExec > 0 && c == '*' && i+1 < n && text[i+1] == '/':
			inExec--
			i += 2
		case c == '\'' || (c == '"' && !pg):
			j, ok := endQuoted(text, i, c, !pg)
			if !ok {
				l.broken = true
			}
			addString(i, j)
			i = j
		case pg && (c == 'e' || c == 'E') && i+1 < n && text[i+1] == '\'' && (i == 0 || !isWord(text[i-1])):
			j, ok := endQuoted(text, i+1, '\'', true)
			if !ok {
				l.broken = true
			}
			add("?", i)
			i = j
		case c == '"' && pg, c == '`' && !pg:
			j, ok := endQuoted(text, i, c, false)
			if !ok {
				l.broken = true
			}
			add("i:"+text[i:j], i)
			i = j
		case pg && c == '$' && (i == 0 || !isWord(text[i-1])) && dollarTag(text[i:]) != "":
			tag := dollarTag(text[i:])
			k := strings.Index(text[i+len(tag):], tag)
			j := n
			if k < 0 {
				l.broken = true
			} else {
				j = i + len(tag) + k + len(tag)
			}
			add("?", i)
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(text[i+1])):
			j := i
			if c == '0' && i+1 < n && (text[i+1]|0x20 == 'x' || text[i+1]|0x20 == 'b') {
				j += 2
			}
			for j < n && (isWord(text[j]) || text[j] == '.' ||
				((text[j] == '+' || text[j] == '-') && j > i && text[j-1]|0x20 == 'e' && isDigit(text[i]))) {
				j++
			}
			add("?", i)
			i = j
		case isWord(c):
			j := i
			for j < n && isWord(text[j]) {
				j++
			}
			w := strings.ToLower(text[i:j])
			// X'..', B'..', N'..', _charset'..' introducers.
			if j < n && text[j] == '\'' && (w == "x" || w == "b" || w == "n" || w == "u&" || strings.HasPrefix(w, "_")) {
				k, ok := endQuoted(text, j, '\'', !pg)
				if !ok {
					l.broken = true
				}
				add("?", i)
				i = k
				continue
			}
			add(w, i)
			i = j
		case c == ';':
			l.toks = append(l.toks, token{text: ";", off: i})
			endStmt(i)
			i++
		default:
			j := i + 1
			if strings.ContainsRune("<>=!|&:-+*/%^~@#?", rune(c)) {
				for j < n && strings.ContainsRune("<>=!|&:", rune(text[j])) && j-i < 3 {
					j++
				}
			}
			add(text[i:j], i)
			i = j
		}
	}
	endStmt(n)
	// The ';' tokens end statements and are no part of any.
	return l
}

// blankBetween reports whether between two string literals stands only
// what joins them: blanks and comments, with a newline for PostgreSQL.
func blankBetween(s string, pg bool) bool {
	if pg && !strings.Contains(s, "\n") {
		return false
	}
	l := lex(s, pg)
	return len(l.toks) == 0 && !l.broken && (!pg || len(l.comments) == 0)
}

// endQuoted returns the index after the literal or quoted name opened by q
// at text[i], and whether it is closed. A doubled quote is one; with
// backslash, a backslash escapes the next byte.
func endQuoted(text string, i int, q byte, backslash bool) (int, bool) {
	j := i + 1
	for j < len(text) {
		switch text[j] {
		case '\\':
			if backslash {
				j += 2
				continue
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j += 2
				continue
			}
			return j + 1, true
		}
		j++
	}
	return len(text), false
}

// dollarTag returns the $tag$ that opens s, or "".
func dollarTag(s string) string {
	if len(s) < 2 || s[0] != '$' {
		return ""
	}
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1]
		}
		if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80 || (j > 1 && isDigit(c))) {
			return ""
		}
	}
	return ""
}

// words returns the token texts, without the ';'s that end the text.
func (l lexed) words() []string {
	out := make([]string, 0, len(l.toks))
	for _, t := range l.toks {
		out = append(out, t.text)
	}
	for len(out) > 0 && out[len(out)-1] == ";" {
		out = out[:len(out)-1]
	}
	return out
}

// inComment reports whether byte offset off lies inside a comment.
func (l lexed) inComment(off int) bool {
	for _, c := range l.comments {
		if off >= c[0] && off < c[1] {
			return true
		}
	}
	return false
}
