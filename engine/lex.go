package engine

import "strings"

// prescan reads SQL text once, before the parser, with PostgreSQL's lexical
// rules for what matters here: string literals ('...' with '' escapes,
// E'...' with backslash escapes), quoted identifiers ("..."), dollar quotes
// ($tag$...$tag$), line comments (-- ...) and nested block comments
// (/* ... */). Example: in
//
//	SELECT * FROM t WHERE id IN (1, 2, (3)) --x
//
// the largest list has 3 elements, the nesting depth is 2 and there is no
// comment trick (the comment is separated by a space).
//
// It measures what the parser would be slow or fragile on, so that
// pathological texts are denied without being parsed: pg_query takes ~45 ms
// for a 10,000-element IN list and fails with "memory exhausted" at ~10,000
// levels of nesting, while this scan takes microseconds.

// lexStats are the pre-parse measures of one message's text.
type lexStats struct {
	bytes    int
	maxList  int // elements of the largest parenthesised or bracketed list
	maxDepth int // deepest nesting of parentheses and brackets
	// commentTrick: a comment glued to the tokens around it (SELECT/**/1,
	// UNION/**/SELECT), a -- comment glued to the token before it
	// ('admin'--), or a MySQL-style /*! comment.
	commentTrick bool
}

// prescan measures text. It stops early (returning what it has, with
// bytes set) once stopBytes > 0 and len(text) > stopBytes.
func prescan(text string, stopBytes int) lexStats {
	st := lexStats{bytes: len(text)}
	if stopBytes > 0 && len(text) > stopBytes {
		return st
	}
	// counts[d] is the element count of the open list at depth d; nonEmpty
	// says whether anything but blanks came since it opened.
	var counts []int
	var nonEmpty []bool
	lastEnd := -1 // end of the last token that was not a blank or comment
	gluedLeft := -1
	i := 0
	n := len(text)
	tokStart := 0
	token := func(end int) {
		if gluedLeft >= 0 && gluedLeft == tokStart {
			st.commentTrick = true
		}
		gluedLeft = -1
		lastEnd = end
		if len(nonEmpty) > 0 {
			nonEmpty[len(nonEmpty)-1] = true
		}
	}
	for i < n {
		c := text[i]
		tokStart = i
		switch {
		case isBlank(c):
			gluedLeft = -1
			i++
		case c == '-' && i+1 < n && text[i+1] == '-':
			if lastEnd == i {
				st.commentTrick = true
			}
			for i < n && text[i] != '\n' {
				i++
			}
			gluedLeft = -1
		case c == '/' && i+1 < n && text[i+1] == '*':
			start := i
			if i+2 < n && text[i+2] == '!' {
				st.commentTrick = true
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
			if lastEnd == start && lastEnd > 0 {
				gluedLeft = i // a token starting right here is glued on both sides
			} else {
				gluedLeft = -1
			}
		case c == '\'':
			backslash := i > 0 && (text[i-1] == 'E' || text[i-1] == 'e') && (i < 2 || !isIdentPart(text[i-2]))
			i++
			for i < n {
				if backslash && text[i] == '\\' {
					i += 2
					continue
				}
				if text[i] == '\'' {
					if i+1 < n && text[i+1] == '\'' {
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			token(i)
		case c == '"':
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
			token(i)
		case c == '$' && (lastEnd != i || i == 0 || !isIdentPart(text[i-1])):
			// $tag$ ... $tag$, or a parameter $1.
			j := i + 1
			for j < n && isIdentPart(text[j]) && text[j] != '$' {
				j++
			}
			if j < n && text[j] == '$' && (j == i+1 || !(text[i+1] >= '0' && text[i+1] <= '9')) {
				tag := text[i : j+1]
				k := indexFrom(text, tag, j+1)
				if k < 0 {
					i = n
				} else {
					i = k + len(tag)
				}
			} else {
				i = j
			}
			token(i)
		case c == '(' || c == '[':
			token(i + 1)
			counts = append(counts, 0)
			nonEmpty = append(nonEmpty, false)
			if len(counts) > st.maxDepth {
				st.maxDepth = len(counts)
			}
			i++
		case c == ')' || c == ']':
			if d := len(counts); d > 0 {
				elems := counts[d-1]
				if nonEmpty[d-1] {
					elems++
				}
				if elems > st.maxList {
					st.maxList = elems
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
		case isIdentPart(c):
			j := i + 1
			for j < n && (isIdentPart(text[j]) || text[j] == '.' && j+1 < n && text[j+1] >= '0' && text[j+1] <= '9') {
				j++
			}
			if j < n && text[j] == '\'' && j-i == 1 {
				// E'...', B'...', X'...', N'...': the string follows.
				i = j
				continue
			}
			i = j
			token(i)
		default:
			i++
			token(i)
		}
	}
	return st
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
