package mysql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// prescan measures a text read (lex.go) into what TiDB's parser reads in
// its default sql_mode, before it is parsed: strings '...' and "..." with
// backslash escapes and doubled quotes, `identifiers`, comments (# and
// "-- " to the end of the line, /* ... */), and what remains of executable
// comments (/*! ... */: one some servers run and others skip). Example: in
//
//	SELECT * FROM t WHERE id IN (1, 2, (3)) -- x
//
// the largest list has 3 elements, the nesting depth is 2 and there is no
// comment trick. It measures what the parser would be slow on (TiDB takes
// ~1 ms for a 100-row INSERT), so that pathological texts are denied
// without being parsed, and the comment tricks: a comment glued to the
// tokens on both sides (UNION/**/SELECT), a line comment glued to the token
// before it ('admin'-- , 'admin'#) except after "," or "(" (a script's line
// note) or after a ";" with more text after it, and a kept /*! comment.
func prescan(text string, stopBytes int) engine.LexStats {
	return prescanTrace(text, stopBytes, nil)
}

// prescanTrace is prescan; with trace, it appends there each token it
// reads, text[lo:hi] (shapestable.go).
func prescanTrace(text string, stopBytes int, trace *[]token) engine.LexStats {
	st := engine.LexStats{Bytes: len(text)}
	if stopBytes > 0 && len(text) > stopBytes {
		return st
	}
	var counts []int
	var nonEmpty []bool
	lastEnd, lastTok := -1, byte(0)
	gluedLeft := -1
	n := len(text)
	token := func(start, end int) {
		if trace != nil {
			*trace = append(*trace, token{lo: start, hi: end})
		}
		if gluedLeft >= 0 && gluedLeft == start {
			st.CommentTrick = true
		}
		gluedLeft = -1
		lastEnd, lastTok = end, text[end-1]
		if len(nonEmpty) > 0 {
			nonEmpty[len(nonEmpty)-1] = true
		}
	}
	lineComment := func(start int) int {
		i := start
		for i < n && text[i] != '\n' {
			i++
		}
		if lastEnd >= 0 && lastEnd < start && cutsOff(text, lastEnd, start, i) {
			st.CommentTrick = true
		}
		if lastEnd == start {
			switch lastTok {
			case ',', '(':
			case ';':
				if strings.TrimLeft(text[i:], " \t\n\r\f\v") == "" {
					st.CommentTrick = true
				}
			default:
				st.CommentTrick = true
			}
		}
		gluedLeft = -1
		return i
	}
	for i := 0; i < n; {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			gluedLeft = -1
			i++
		case c == '#':
			i = lineComment(i)
		case c == '-' && i+1 < n && text[i+1] == '-' && (i+2 == n || isSpaceByte(text[i+2])):
			i = lineComment(i)
		case c == '/' && i+1 < n && text[i+1] == '*':
			start := i
			if i+2 < n && text[i+2] == '!' {
				// A kept executable comment: its text is SQL, measured
				// as such; the markers are the trick.
				st.CommentTrick = true
				i += 3
				for i < n && text[i] >= '0' && text[i] <= '9' {
					i++
				}
				continue
			}
			hint := i+2 < n && text[i+2] == '+'
			k := strings.Index(text[i+2:], "*/")
			if k < 0 {
				i = n
			} else {
				i += 2 + k + 2
			}
			if hint {
				gluedLeft = -1
				continue
			}
			if lastEnd == start && lastEnd > 0 {
				gluedLeft = i
			} else {
				gluedLeft = -1
			}
		case c == '*' && i+1 < n && text[i+1] == '/':
			i += 2 // the end of a kept /*! comment
			gluedLeft = -1
		case c == '\'' || c == '"' || c == '`':
			j := quotedStr(text, i, c, c != '`')
			token(i, j)
			i = j
		case c == '(':
			token(i, i+1)
			counts = append(counts, 0)
			nonEmpty = append(nonEmpty, false)
			if len(counts) > st.MaxDepth {
				st.MaxDepth = len(counts)
			}
			i++
		case c == ')':
			if d := len(counts); d > 0 {
				elems := counts[d-1]
				if nonEmpty[d-1] {
					elems++
				}
				st.MaxList = max(st.MaxList, elems)
				counts, nonEmpty = counts[:d-1], nonEmpty[:d-1]
			}
			token(i, i+1)
			i++
		case c == ',':
			if d := len(counts); d > 0 {
				counts[d-1]++
			}
			token(i, i+1)
			i++
		case isIdentByte(c):
			j := i + 1
			for j < n && isIdentByte(text[j]) {
				j++
			}
			token(i, j)
			i = j
		default:
			token(i, i+1)
			i++
		}
	}
	return st
}

// cutsOff reports whether the line comment text[start:end], after a token
// ending at lastEnd, cuts off the rest of a statement: it is the text's
// last thing, on the line of the token before it, and holds what the rest
// of a statement holds: it starts with a quote or ")", or holds "="
// (name = 'x' -- ' AND pass = '...', id = 1 -- AND owner = 3), or it says
// nothing (id = 1 -- , id = 1 #, id = 1 -- -: what an injected value ends
// with, whatever followed it). A note after a statement (SELECT 1 -- count,
// -- it's the first) is none.
func cutsOff(text string, lastEnd, start, end int) bool {
	if strings.ContainsAny(text[lastEnd:start], "\n\r") || strings.TrimLeft(text[end:], " \t\n\r\f\v") != "" {
		return false
	}
	body := text[start:end]
	if body[0] == '#' {
		body = body[1:]
	} else {
		body = body[2:]
	}
	body = strings.TrimLeft(body, " \t\f\v")
	if strings.Trim(body, "-#/* \t\f\v\r") == "" {
		return true // a comment that says nothing (id = 1 -- , id = 1 #, -- -): an injected value's tail
	}
	return strings.IndexByte("'\"`)", body[0]) >= 0 || strings.Contains(body, "=")
}

// quotedStr is quoted over a string.
func quotedStr(text string, i int, q byte, backslash bool) int {
	return min(quotedEnd(text, i, q, backslash), len(text))
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentByte: letters, digits, _, $ and every byte of a multibyte
// character, as MySQL's identifiers.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// A token of a text read (lex.go), as the recognizer of statements TiDB
// does not parse sees it (unparsed.go): a word (keyword or bare
// identifier), a `quoted identifier`, a '...' or "..." string, or one byte
// of punctuation. The scan follows prescan's rules: comments are skipped,
// and a kept executable comment's markers (/*!NNNNN and its */) too, since
// its text is SQL some server runs.
type token struct {
	kind   byte // tokWord, tokIdent, tokString, or the punctuation byte
	lo, hi int  // text[lo:hi]; a quoted identifier's or string's quotes included
}

const (
	tokWord   byte = 'w'
	tokIdent  byte = '`'
	tokString byte = 's'
)

// nextToken returns the token at or after i, and false at the end of text.
func nextToken(text string, i int) (token, bool) {
	n := len(text)
	for i < n {
		c := text[i]
		switch {
		case isSpaceByte(c):
			i++
		case c == '#', c == '-' && i+1 < n && text[i+1] == '-' && (i+2 == n || isSpaceByte(text[i+2])):
			for i < n && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && text[i+1] == '*':
			if i+2 < n && text[i+2] == '!' {
				i += 3
				for i < n && text[i] >= '0' && text[i] <= '9' {
					i++
				}
				continue
			}
			k := strings.Index(text[i+2:], "*/")
			if k < 0 {
				return token{}, false
			}
			i += 2 + k + 2
		case c == '*' && i+1 < n && text[i+1] == '/':
			i += 2 // the end of a kept /*! comment
		case c == '`':
			return token{kind: tokIdent, lo: i, hi: quotedStr(text, i, c, false)}, true
		case c == '\'' || c == '"':
			return token{kind: tokString, lo: i, hi: quotedStr(text, i, c, true)}, true
		case isIdentByte(c):
			j := i + 1
			for j < n && isIdentByte(text[j]) {
				j++
			}
			return token{kind: tokWord, lo: i, hi: j}, true
		default:
			return token{kind: c, lo: i, hi: i + 1}, true
		}
	}
	return token{}, false
}

// is reports whether t is the bare word w (lower case), in any case.
func (t token) is(text, w string) bool {
	return t.kind == tokWord && t.hi-t.lo == len(w) && strings.EqualFold(text[t.lo:t.hi], w)
}

// name is the identifier t stands for: a bare word lower-cased, a quoted
// one unquoted (MySQL's table names are case-sensitive on some systems;
// the engine's TableRefs are lower case, as TiDB's .L).
func (t token) name(text string) string {
	s := text[t.lo:t.hi]
	if t.kind == tokIdent {
		s = strings.ReplaceAll(strings.TrimSuffix(s[1:], "`"), "``", "`")
	}
	return strings.ToLower(s)
}
