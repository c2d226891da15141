package pgsql

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// The shape cache. Bulk INSERT ... VALUES texts differ only in their
// literals, so the exact-text cache never hits and each one was parsed
// (about 13 ms of CPU for 1,000 rows). The shape cache keys such a text by
// its shape: the text with each plain literal replaced by a marker of its
// token class, every other byte kept. Facts found through a shape are
// reused only when the lone statement is an INSERT whose every replaced
// literal is a whole row item of its VALUES list (or the operand of a cast
// that is), because no rule looks at the value there; a literal anywhere
// else (WHERE, ON CONFLICT, a function argument, a DO body) keeps the text
// out of the shape cache. Conditions on the text itself (byte and list
// limits) are still evaluated on each text; fingerprints are reused, as
// they ignore constants (FuzzShapeSound checks that they agree). A text
// that is not valid UTF-8 is never served from a shape: the parser's
// output is decoded as UTF-8, so such a text fails to parse (and gets
// on_parse_error) whatever its shape says.
//
// Why a hit is sound. Let A be the text that made the entry and B a text
// with the same key: B is A with each replaced literal swapped for another
// of the same class. Each class is one token sequence whatever its value:
// an integer that fits in 32 bits (ICONST, as PostgreSQL's lexer decides),
// a longer one (FCONST), digits.digits (FCONST), a '...' string without
// backslashes and not prefixed (E, B, X, N, U&) nor followed by another
// string (SCONST); a number right after "(" or "," may carry a minus sign,
// which is then part of the class ('-' then the number's token). None is
// next to a character that would extend a token. PostgreSQL's lexer
// therefore reads B as A's token sequence with other literal values, and
// the grammar builds the same tree with other constants in the same places
// (a negated constant is folded into one constant at the sign). The entry
// is made only after A's parse tree showed that every replaced span starts
// where an inert constant starts and carries the same value, so the spans
// are PostgreSQL's tokens; this file's simpler lexer may misread the bytes
// between them (a comment PostgreSQL ends differently, a continuation it
// joins), but those bytes are the same in A and B, and the facts never
// read an inert constant's value.

// Literal classes in a shape key, each after a NUL byte (which no cached
// text contains: the parser rejects it). Upper case: the same with a minus.
const (
	litInt    = 'i' // fits in 32 bits: ICONST
	litBigInt = 'n' // an integer beyond 32 bits: FCONST
	litFloat  = 'f' // digits.digits: FCONST
	litStr    = 's'
	negative  = 'a' - 'A'
)

// litSpan is a replaced literal: text[Start:End], of a Class.
type litSpan = engine.ShapeSpan

// shapeOf returns text's shape key and the literals it replaced. ok is
// false when nothing was replaced or the text has a NUL byte or an
// unterminated quote, dollar quote or comment.
func shapeOf(text string) (key []byte, spans []litSpan, ok bool) {
	spans, ok = shapeSpans(nil, text)
	if !ok {
		return nil, spans, false
	}
	return engine.AppendShapeKey(nil, text, spans), spans, true
}

// shapeSpans appends to spans the literals text's shape replaces (shapeOf).
func shapeSpans(spans []litSpan, text string) ([]litSpan, bool) {
	spans = spans[:0]
	if strings.IndexByte(text, 0) >= 0 {
		return spans, false
	}
	n := len(text)
	lastStrEnd := -1 // end of the last string literal
	for i := 0; i < n; {
		c := text[i]
		if shapePlain[c] { // no case below but the last takes it
			i++
			continue
		}
		switch {
		case c == '-' && i+1 < n && text[i+1] == '-':
			for i < n && text[i] != '\n' && text[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && text[i+1] == '*':
			depth := 0
			for {
				if i+1 >= n {
					return spans, false
				}
				if text[i] == '/' && text[i+1] == '*' {
					depth++
					i += 2
				} else if text[i] == '*' && text[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		case c == '\'':
			prefixed := i > 0 && (isIdentPart(text[i-1]) || text[i-1] == '&')
			escapes := prefixed && (text[i-1] == 'e' || text[i-1] == 'E') && (i < 2 || !isIdentPart(text[i-2]))
			end, backslash := scanString(text, i, escapes)
			if end < 0 {
				return spans, false
			}
			// 'a'<newline>'b' is one literal: neither part is replaced.
			continued := lastStrEnd >= 0 && allBlank(text[lastStrEnd:i])
			if !prefixed && !backslash && !stringFollows(text, end) && !continued {
				spans = append(spans, litSpan{Start: i, End: end, Class: litStr})
			}
			i, lastStrEnd = end, end
		case c == '"':
			j := i + 1
			for {
				k := strings.IndexByte(text[j:], '"')
				if k < 0 {
					return spans, false
				}
				j += k + 1
				if j < n && text[j] == '"' {
					j++
					continue
				}
				break
			}
			i = j
		case c == '$':
			j := i + 1
			if j < n && isDigit(text[j]) { // a parameter, $1
				for j < n && isDigit(text[j]) {
					j++
				}
				i = j
				break
			}
			if j < n && isIdentStart(text[j]) {
				for j < n && isIdentPart(text[j]) && text[j] != '$' {
					j++
				}
			}
			if j < n && text[j] == '$' { // a dollar quote, $tag$ ... $tag$
				tag := text[i : j+1]
				k := strings.Index(text[j+1:], tag)
				if k < 0 {
					return spans, false
				}
				i = j + 1 + k + len(tag)
				break
			}
			i++
		case isIdentStart(c):
			for i < n && isIdentPart(text[i]) {
				i++
			}
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(text[i+1])) ||
			(c == '-' && i+1 < n && isDigit(text[i+1]) && afterListStart(text, i)):
			start, j := i, i
			if c == '-' {
				j++
			}
			digits := j
			for j < n && isDigit(text[j]) {
				j++
			}
			class := byte(litInt)
			if !fitsInt32(text[digits:j]) {
				class = litBigInt
			}
			if c != '.' && j+1 < n && text[j] == '.' && isDigit(text[j+1]) {
				j++
				for j < n && isDigit(text[j]) {
					j++
				}
				class = litFloat
			}
			if e := exponentEnd(text, j); e > j { // 1.5e-3 is one token
				for i = e; i < n && (isIdentPart(text[i]) || text[i] == '.'); i++ {
				}
				break
			}
			plain := c != '.' && (j == n || !(isIdentPart(text[j]) || text[j] == '.')) &&
				(start == 0 || text[start-1] != '.')
			if plain {
				if c == '-' {
					class -= negative
				}
				spans = append(spans, litSpan{Start: start, End: j, Class: class})
				i = j
				break
			}
			if c == '-' { // an operator after all: read on from the digits
				i = digits
				break
			}
			// Not plain (1e5, 12abc, 1.2.3, .5): keep the whole run, so
			// that its tail is not read as a token.
			for j < n && (isIdentPart(text[j]) || text[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return spans, len(spans) > 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// shapePlain marks the bytes appendShape's switch passes over one by one
// (its default case): every byte but those its other cases start with.
// Blanks, commas and parentheses are most of a bulk INSERT's bytes outside
// its literals; the table spares them the cases' tests.
var shapePlain = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = !(b == '-' || b == '/' || b == '\'' || b == '"' || b == '$' || b == '.' || isIdentStart(b) || isDigit(b))
	}
	return t
}()

// exponentEnd returns the end of an exponent (e5, E+5, e-3) at text[j], or
// j when there is none.
func exponentEnd(text string, j int) int {
	if j >= len(text) || (text[j] != 'e' && text[j] != 'E') {
		return j
	}
	k := j + 1
	if k < len(text) && (text[k] == '+' || text[k] == '-') {
		k++
	}
	if k >= len(text) || !isDigit(text[k]) {
		return j
	}
	for k < len(text) && isDigit(text[k]) {
		k++
	}
	return k
}

// afterListStart reports whether only blanks separate text[i] from a
// preceding "(" or ",", where a minus can only be a sign.
func afterListStart(text string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if !isBlank(text[j]) {
			return text[j] == '(' || text[j] == ','
		}
	}
	return false
}

// scanString returns the end of the quoted string starting at text[i]
// (-1 if unterminated) and whether a backslash occurs in it. With escapes
// (an E'...' string) a backslash escapes the next byte. Past its first
// 64 bytes it jumps from quote to quote (strings.IndexByte), the scan's
// hot loop in a bulk INSERT of long strings.
func scanString(text string, i int, escapes bool) (end int, backslash bool) {
	n := len(text)
	// Most of a bulk INSERT's strings are short: their first bytes eight
	// at a time, looking for a quote or a backslash in a word (a call of
	// IndexByte costs more than a short string).
	j := i + 1
	for lim := min(n-8, i+64); j <= lim; {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(text), n)[j:])
		q, b := x^0x2727272727272727, x^0x5c5c5c5c5c5c5c5c // zero where ' or \
		hit := ((q-0x0101010101010101)&^q | (b-0x0101010101010101)&^b) & 0x8080808080808080
		if hit == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(hit) / 8 // the first such byte: the lowest flag is exact
		if text[j] == '\'' {
			if j+1 < n && text[j+1] == '\'' {
				j += 2
				continue
			}
			return j + 1, backslash
		}
		backslash = true
		if escapes {
			j += 2 // the escaped byte, a quote or not
		} else {
			j++
		}
	}
	for j < n {
		k := strings.IndexByte(text[j:], '\'')
		if k < 0 {
			return -1, backslash || strings.IndexByte(text[j:], '\\') >= 0
		}
		if b := strings.IndexByte(text[j:j+k], '\\'); b >= 0 {
			backslash = true
			if escapes {
				j += b + 2 // the escaped byte, a quote or not
				continue
			}
		}
		j += k
		if j+1 < n && text[j+1] == '\'' {
			j += 2
			continue
		}
		return j + 1, backslash
	}
	return -1, backslash
}

// allBlank reports whether s holds only blanks.
func allBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isBlank(s[i]) {
			return false
		}
	}
	return true
}

// fitsInt32 reports whether the decimal digits fit in 32 bits, as
// strconv.ParseInt(digits, 10, 32) would find, without its error value.
func fitsInt32(digits string) bool {
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	return len(digits) < 10 || len(digits) == 10 && digits <= "2147483647"
}

// stringFollows reports whether only blanks separate text[end:] from
// another quote: PostgreSQL joins 'a'<newline>'b' into one literal.
func stringFollows(text string, end int) bool {
	for j := end; j < len(text); j++ {
		if !isBlank(text[j]) {
			return text[j] == '\''
		}
	}
	return false
}

// inertLiterals reports whether every span of text is a constant that
// PostgreSQL parsed, with the same value, as a whole row item (or a cast
// row item's operand) of the VALUES list of the text's only statement, an
// INSERT, or as a comparison operand of a point select (shapeselect.go).
func inertLiterals(tree *pg_query.ParseResult, text string, spans []litSpan) bool {
	if len(tree.Stmts) != 1 {
		return false
	}
	if sel := tree.Stmts[0].GetStmt().GetSelectStmt(); sel != nil {
		return spansAre(inertSelect(sel), text, spans) // shapeselect.go
	}
	ins := tree.Stmts[0].GetStmt().GetInsertStmt()
	if ins == nil {
		return false
	}
	sel := ins.GetSelectStmt().GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		return false
	}
	at := make(map[int32]*pg_query.A_Const, len(spans))
	for _, row := range sel.ValuesLists {
		for _, it := range row.GetList().GetItems() {
			c := it.GetAConst()
			if tc := it.GetTypeCast(); c == nil && !namesFunction(tc) {
				c = tc.GetArg().GetAConst()
			}
			if c != nil {
				at[c.Location] = c
			}
		}
	}
	return spansAre(at, text, spans)
}

// spansAre reports whether every span of text is a constant of at, by
// location, with the same value.
func spansAre(at map[int32]*pg_query.A_Const, text string, spans []litSpan) bool {
	if at == nil {
		return false
	}
	for _, s := range spans {
		c, ok := at[int32(s.Start)]
		if !ok || !sameLiteral(c, text[s.Start:s.End], s.Class) {
			return false
		}
	}
	return true
}

// sameLiteral reports whether the parser's constant c is the literal lit
// of class: the same token kind and value (a negative constant is the
// parser's folding of the sign into it).
func sameLiteral(c *pg_query.A_Const, lit string, class byte) bool {
	if c.Isnull {
		return false
	}
	neg := class >= 'A' && class <= 'Z'
	if neg {
		class += negative
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		digits := lit
		if neg {
			digits = lit[1:]
		}
		want, err := strconv.ParseInt(digits, 10, 32)
		if neg {
			want = -want
		}
		return class == litInt && err == nil && int64(v.Ival.GetIval()) == want
	case *pg_query.A_Const_Fval:
		return (class == litFloat || class == litBigInt) && v.Fval.GetFval() == lit
	case *pg_query.A_Const_Sval:
		return class == litStr && !neg && v.Sval.GetSval() == strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	return false
}

// shapedLead reports whether text begins, after blanks, with the
// word INSERT or SELECT: the only statements worth a shape.
func shapedLead(text string) bool {
	t := text
	for len(t) > 0 && isBlank(t[0]) {
		t = t[1:]
	}
	return len(t) > 6 && (strings.EqualFold(t[:6], "insert") || strings.EqualFold(t[:6], "select")) && !isIdentPart(t[6])
}

// shapeBufs holds span buffers between AnalyzeShape calls.
var shapeBufs = sync.Pool{New: func() any { return new([]litSpan) }}

// ShapeSpans is engine.Shaper's: the literals of an INSERT or SELECT text
// that its shape replaces. A text that is not valid UTF-8 has no shape:
// the parser's output is decoded as UTF-8, so such a text fails to parse
// whatever its shape says.
func (pgDialect) ShapeSpans(spans []engine.ShapeSpan, text string) ([]engine.ShapeSpan, bool) {
	if !shapedLead(text) || !utf8.ValidString(text) {
		return spans[:0], false
	}
	return shapeSpans(spans, text)
}

// AnalyzeShape parses a text ShapeSpans gave spans and reports whether
// every literal they replace is inert: a whole row item of the lone
// INSERT's VALUES list, with the value the parser read.
func (pgDialect) AnalyzeShape(text string, lex engine.LexStats) (*engine.TextFacts, bool) {
	tree, bad := parseText(text, lex)
	if bad != nil {
		return bad, false
	}
	tf := treeFacts(tree, lex)
	tf.SQLOps = sqlOps(tree, text) // sqlprepare.go; their spans are not shapes
	if tf.SQLOps != nil {
		return tf, false
	}
	buf := shapeBufs.Get().(*[]litSpan)
	spans, ok := shapeSpans(*buf, text)
	inert := ok && inertLiterals(tree, text, spans)
	if cap(spans) <= 16<<10 {
		*buf = spans[:0]
		shapeBufs.Put(buf)
	}
	return tf, inert
}

// MatchShape is engine.ShapeMatcher's: whether text's shape key is key,
// read without finding text's spans. The kept bytes must be key's, and at
// each marker text must hold one literal of the marker's class: a '...'
// string without backslashes, or digits (after a minus for a negative
// class) that fit in 32 bits or do not, or digits.digits.
//
// Why that is ShapeSpans(text) giving key. key is the key of a text A with
// ShapeSpans' spans at the markers; text B holds A's kept bytes with such
// literals between them. ShapeSpans reads B as A up to A's first span (the
// same bytes, and what it reads ahead of a byte reaches at most the next
// one, a literal's first: a quote, a digit or a minus in A and B alike),
// so it is in code at the literal's start, as in A. There it reads B's
// literal as one span of the class: a string ends at its first lone quote
// (scanString, the match's own reading) and is not prefixed, continued or
// followed by another (the bytes around it are kept, the literals around
// it of the same kinds); a number's digits end where the next kept byte,
// neither a digit, a word byte nor "." (else A's number had been no span),
// begins, and its class follows from its digits as the match checked. What
// ShapeSpans keeps of a literal, where it ends and the kind of its last
// byte (a quote, a digit), is A's, so it reads the kept bytes after it as
// in A again (a dollar quote's or comment's end is searched in kept bytes:
// no span is inside one in A). So B's spans are at the markers with their
// classes and its key is key (FuzzMatchShape checks the equivalence).
// Like ShapeSpans, a text with a NUL byte or that is not valid UTF-8 has
// no shape.
func (pgDialect) MatchShape(key string, pieces []engine.ShapePiece, text string) bool {
	if strings.IndexByte(text, 0) >= 0 || !shapedLead(text) || !utf8.ValidString(text) {
		return false
	}
	p, q := 0, 0 // where key and text are read
	for _, pc := range pieces {
		n := pc.Kept
		if p+n+2 > len(key) || q+n > len(text) {
			return false
		}
		if n <= 6 && p+8 <= len(key) && q+8 <= len(text) {
			// text's n bytes, then the marker: n+2 bytes of key in a word.
			want := load8(text, q)&(1<<(8*n)-1) | uint64(pc.Class)<<(8*(n+1))
			if (load8(key, p)^want)&(1<<(8*(n+2))-1) != 0 {
				return false
			}
		} else if key[p+n] != 0 || key[p+n+1] != pc.Class || key[p:p+n] != text[q:q+n] {
			return false
		}
		p, q = p+n+2, q+n
		if q = shapeLiteralEnd(text, q, pc.Class); q < 0 {
			return false
		}
	}
	return key[p:] == text[q:]
}

// load8 returns the 8 bytes of s at i, the first lowest.
func load8(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), len(s))[i:])
}

// shapeLiteralEnd returns the end of the literal of class at text[i] that
// ShapeSpans would replace there, or -1.
func shapeLiteralEnd(text string, i int, class byte) int {
	n := len(text)
	if i >= n {
		return -1
	}
	if class == litStr {
		if text[i] != '\'' {
			return -1
		}
		end, backslash := scanString(text, i, false)
		if end < 0 || backslash {
			return -1
		}
		return end
	}
	if class >= 'A' && class <= 'Z' { // negative: the minus, then the digits
		if text[i] != '-' {
			return -1
		}
		class += negative
		i++
	}
	j := i
	for j < n && isDigit(text[j]) {
		j++
	}
	if j == i {
		return -1
	}
	switch class {
	case litInt:
		if !fitsInt32(text[i:j]) {
			return -1
		}
	case litBigInt:
		if fitsInt32(text[i:j]) {
			return -1
		}
	case litFloat:
		if j+1 >= n || text[j] != '.' || !isDigit(text[j+1]) {
			return -1
		}
		for j++; j < n && isDigit(text[j]); j++ {
		}
	default:
		return -1
	}
	return j
}
