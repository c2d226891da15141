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

// quotedStr is quoted over a string.
func quotedStr(text string, i int, q byte, backslash bool) int {
	n := len(text)
	for j := i + 1; j < n; j++ {
		switch text[j] {
		case '\\':
			if backslash {
				j++
			}
		case q:
			if j+1 < n && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return n
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentByte: letters, digits, _, $ and every byte of a multibyte
// character, as MySQL's identifiers.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
