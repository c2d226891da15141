package pgsql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// prescan reads SQL text once, before the parser, with PostgreSQL's lexical
// rules for what matters here: string literals ('...' with '' escapes,
// E'...' with backslash escapes, B'', X'', N'', U&''), quoted identifiers
// ("..." with "" escapes, U&"..."), dollar quotes ($tag$...$tag$; $1 is a
// parameter, and a $ inside an identifier or after a number's digits does
// not start a quote), line comments (-- up to LF or CR, as PostgreSQL ends
// them) and nested block comments (/* ... /* ... */ ... */). Example: in
//
//	SELECT * FROM t WHERE id IN (1, 2, (3)) --x
//
// the largest list has 3 elements, the nesting depth is 2 and there is no
// comment trick (the comment is separated by a space).
//
// It measures what the parser would be slow or fragile on, so that
// pathological texts are denied without being parsed: pg_query takes ~45 ms
// for a 10,000-element IN list and fails with "memory exhausted" at ~10,000
// levels of nesting, while this scan takes microseconds. The text of a
// dollar-quoted string is measured as SQL too (up to maxDollarNesting
// levels), because that is how DO blocks and function bodies are written:
// a DO body with a 10,000-element list is as slow to parse as the list.
//
// FuzzPrescanAgreesWithScanner checks this reading against pg_query's
// scanner: the same comments, literals and statement-ending semicolons.

// maxDollarNesting bounds how deep dollar quotes inside dollar quotes are
// measured: each level re-reads its text once.
const maxDollarNesting = 8

// lexSpan is one comment, literal or statement end prescan found, for the
// differential test against pg_query's scanner.
type lexSpan struct {
	start, end int // text[start:end]; a literal starts at its quote, after any prefix
	kind       byte
}

const (
	spanComment = 'c'
	spanLiteral = 'l' // a string, dollar quote or quoted identifier
	spanSemi    = ';'
	spanNumber  = 'n' // a number token (not compared with the scanner's: PrescanStable reads it)
)

// prescan measures text. It stops early (returning what it has, with
// bytes set) once stopBytes > 0 and len(text) > stopBytes.
func prescan(text string, stopBytes int) engine.LexStats {
	st := engine.LexStats{Bytes: len(text)}
	if stopBytes > 0 && len(text) > stopBytes {
		return st
	}
	scanLex(text, &st, 0, nil)
	return st
}

// scanLex measures text into st. level > 0 is the text of a dollar quote:
// its lists and nesting count, its comments do not (a function body's
// comments are the function's own). trace, when not nil, collects spans
// (only at level 0).
func scanLex(text string, st *engine.LexStats, level int, trace *[]lexSpan) {
	// counts[d] is the element count of the open list at depth d; nonEmpty
	// says whether anything but blanks came since it opened.
	var counts []int
	var nonEmpty []bool
	lastEnd := -1 // end of the last token that was not a blank or comment
	lastTok := byte(0)
	gluedLeft := -1
	i := 0
	n := len(text)
	tokStart := 0
	top := level == 0
	span := func(start, end int, kind byte) {
		if trace != nil {
			*trace = append(*trace, lexSpan{start, end, kind})
		}
	}
	token := func(end int) {
		if gluedLeft >= 0 && gluedLeft == tokStart && top {
			st.CommentTrick = true
		}
		gluedLeft = -1
		lastEnd = end
		lastTok = text[end-1]
		if len(nonEmpty) > 0 {
			nonEmpty[len(nonEmpty)-1] = true
		}
	}
	strPrefix := byte(0) // E, B, X, N (lower-cased) or & right before a quote
	for i < n {
		c := text[i]
		tokStart = i
		prefix := strPrefix
		strPrefix = 0
		switch {
		case isBlank(c):
			gluedLeft = -1
			i++
		case c == '-' && i+1 < n && text[i+1] == '-':
			start := i
			for i < n && text[i] != '\n' && text[i] != '\r' {
				i++
			}
			span(start, i, spanComment)
			if lastEnd == start && top {
				switch lastTok {
				case ',', '(':
					// A script's line note (a int,-- key; CREATE TABLE t (-- cols):
					// cutting off the rest of the line would leave the list
					// open, which only more lines can close.
				case ';':
					// Cutting off the rest of the text after a statement
					// (WHERE id = 1;-- AND owner = 2) is the trick; a
					// comment on a script's line, with more after it, is not.
					if strings.TrimLeft(text[i:], " \t\n\r\f\v") == "" {
						st.CommentTrick = true
					}
				default:
					st.CommentTrick = true
				}
			}
			if top && lastEnd >= 0 && cutsOffTail(text, start, i) {
				st.CommentTrick = true
			}
			gluedLeft = -1
		case c == '/' && i+1 < n && text[i+1] == '*':
			start := i
			if i+2 < n && text[i+2] == '!' && top {
				st.CommentTrick = true
			}
			depth := 0
			for i < n {
				if text[i] == '/' && i+1 < n && text[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if text[i] == '*' && i+1 < n && text[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				i++
			}
			span(start, i, spanComment)
			if lastEnd == start && lastEnd > 0 {
				gluedLeft = i // a token starting right here is glued on both sides
			} else {
				gluedLeft = -1
			}
		case c == '\'':
			// E'...' (not xE'...', an identifier then a string) reads
			// backslash escapes.
			backslash := prefix == 'e'
			// Bit strings (B'...', X'...') know no doubled quote: B'''' is
			// B'' then ''.
			doubled := prefix != 'b' && prefix != 'x'
			start := i
			i++
			for i < n {
				if backslash && text[i] == '\\' {
					i += 2
					continue
				}
				if text[i] == '\'' {
					if doubled && i+1 < n && text[i+1] == '\'' {
						i += 2
						continue
					}
					if k := stringContinues(text, i+1); k >= 0 {
						i = k + 1 // 'a'<newline>'b' is one literal, 'ab'
						continue
					}
					i++
					break
				}
				i++
			}
			i = min(i, n)
			span(start, i, spanLiteral)
			token(i)
		case c == '"':
			start := i
			i++
			for i < n {
				if text[i] == '"' {
					if i+1 < n && text[i+1] == '"' {
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			span(start, i, spanLiteral)
			token(i)
		case c == '$':
			// $tag$ ... $tag$ (tag: a letter or _ then letters, digits, _),
			// or a parameter $1. A $ glued to an identifier is part of it
			// (handled there).
			j := i + 1
			if j < n && isIdentStart(text[j]) {
				for j < n && isIdentPart(text[j]) && text[j] != '$' {
					j++
				}
			}
			if j < n && text[j] == '$' {
				tag := text[i : j+1]
				k := indexFrom(text, tag, j+1)
				end := n
				if k >= 0 {
					end = k + len(tag)
				}
				if level < maxDollarNesting {
					bodyEnd := n
					if k >= 0 {
						bodyEnd = k
					}
					scanLex(text[j+1:bodyEnd], st, level+1, nil)
				}
				span(i, end, spanLiteral)
				i = end
			} else {
				j = i + 1
				for j < n && isDigit(text[j]) {
					j++
				}
				i = j
			}
			token(i)
		case c == '(' || c == '[':
			token(i + 1)
			counts = append(counts, 0)
			nonEmpty = append(nonEmpty, false)
			if len(counts) > st.MaxDepth {
				st.MaxDepth = len(counts)
			}
			i++
		case c == ')' || c == ']':
			if d := len(counts); d > 0 {
				elems := counts[d-1]
				if nonEmpty[d-1] {
					elems++
				}
				if elems > st.MaxList {
					st.MaxList = elems
				}
				counts, nonEmpty = counts[:d-1], nonEmpty[:d-1]
			}
			i++
			token(i)
		case c == ',':
			if d := len(counts); d > 0 {
				counts[d-1]++
			}
			i++
			token(i)
		case c == ';':
			span(i, i+1, spanSemi)
			i++
			token(i)
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(text[i+1])):
			// A number: digits[.digits][e[+-]digits]. What follows is read
			// as its own token, as PostgreSQL does (1$a$ is 1, then a
			// dollar quote; PostgreSQL 15 rejects 0x1F and 1_000).
			j := i
			for j < n && isDigit(text[j]) {
				j++
			}
			if j < n && text[j] == '.' && !(j+1 < n && text[j+1] == '.') {
				j++
				for j < n && isDigit(text[j]) {
					j++
				}
			}
			if j < n && (text[j] == 'e' || text[j] == 'E') {
				k := j + 1
				if k < n && (text[k] == '+' || text[k] == '-') {
					k++
				}
				if k < n && isDigit(text[k]) {
					for k < n && isDigit(text[k]) {
						k++
					}
					j = k
				}
			}
			span(i, j, spanNumber)
			i = j
			token(i)
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentPart(text[j]) {
				j++
			}
			if j < n && text[j] == '\'' && j-i == 1 {
				// E'...', B'...', X'...', N'...': the string follows.
				strPrefix = c | 0x20
				i = j
				continue
			}
			if j-i == 1 && (c == 'u' || c == 'U') && j+1 < n && text[j] == '&' && (text[j+1] == '\'' || text[j+1] == '"') {
				// U&'...' or U&"...": the literal follows.
				strPrefix = '&'
				i = j + 1
				continue
			}
			i = j
			token(i)
		default:
			i++
			token(i)
		}
	}
}

// stringContinues returns the position of the quote that continues a string
// literal ending at text[i]: only blanks between, at least one of them a
// newline ('a'<newline>'b' is 'ab'), or -1. Comments and vertical tabs
// break the continuation, as pg_query's scanner shows.
func stringContinues(text string, i int) int {
	newline := false
	for ; i < len(text); i++ {
		switch text[i] {
		case '\n', '\r':
			newline = true
		case ' ', '\t', '\f':
		case '\'':
			if newline {
				return i
			}
			return -1
		default:
			return -1
		}
	}
	return -1
}

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	k := strings.Index(s[from:], sub)
	if k < 0 {
		return -1
	}
	return from + k
}

// isBlank reports whether c is white space to PostgreSQL's lexer.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// cutsOffTail reports whether the line comment text[start:end] (from its
// "--") is an injection's cut: the last thing in the text, after a token
// on the same line, holding what looks like the rest of the statement it
// cut off or nothing: empty, starting with a quote, a parenthesis or a
// semicolon (the application's closing quote: name = ” -- ' AND pass =
// ...), an SQL keyword that continues a statement (-- AND owner = 2, --
// LIMIT 10), or ending with a quote (sqlmap's "-- [RANDSTR]" before a
// string slot's closing quote: -- XyZq'). A note after a statement (WHERE
// a.id = $1 -- trailing note, --x), a comment after a semicolon and a
// comment on a line of its own are not.
func cutsOffTail(text string, start, end int) bool {
	if strings.TrimLeft(text[end:], " \t\n\r\f\v") != "" {
		return false
	}
	j := start - 1
	for j >= 0 && (text[j] == ' ' || text[j] == '\t' || text[j] == '\f' || text[j] == '\v') {
		j--
	}
	if j < 0 || text[j] == '\n' || text[j] == '\r' || text[j] == ';' {
		// A comment on a line of its own, or after a statement's end
		// (whatever it cuts off would be a statement of its own: the
		// statements before it are judged as they are).
		return false
	}
	body := strings.TrimSpace(text[start+2 : end])
	body = strings.TrimLeft(body, "-") // --- and ---- as well
	body = strings.TrimSpace(body)
	if body == "" {
		return true
	}
	switch body[0] {
	case '\'', '"', ')', ';', '`':
		return true
	}
	if body[len(body)-1] == '\'' {
		return true // -- XyZq' : a string slot's closing quote cut off
	}
	word, _, _ := strings.Cut(strings.ReplaceAll(body, "\t", " "), " ")
	switch strings.ToLower(word) {
	case "and", "or", "limit", "offset", "order", "group", "having", "where", "union", "returning", "for",
		"fetch", "window", "on", "using", "join", "intersect", "except", "||":
		return true
	}
	return false
}
