package pgsql

// LIKE, ILIKE and SIMILAR TO of constants, folded as PostgreSQL matches
// them (fold.go folds the rest).

import (
	"regexp"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

func (fo *folder) foldLike(e *pg_query.A_Expr, op string, d int) cval {
	l := fo.fold(e.Lexpr, d)
	patNode, escNode := e.Rexpr, (*pg_query.Node)(nil)
	// LIKE ... ESCAPE and SIMILAR TO wrap the pattern in a function call.
	if fc := e.Rexpr.GetFuncCall(); fc != nil {
		name := funcName(fc.Funcname)
		if (name != "like_escape" && name != "similar_to_escape") || len(fc.Args) == 0 || len(fc.Args) > 2 {
			return unknownVal
		}
		patNode = fc.Args[0]
		if len(fc.Args) == 2 {
			escNode = fc.Args[1]
		}
	}
	p := fo.fold(patNode, d)
	esc := cval{kind: cvStr, str: `\`}
	if escNode != nil {
		esc = fo.fold(escNode, d)
	}
	if l.kind == cvNull || p.kind == cvNull || esc.kind == cvNull {
		return cval{kind: cvNull}
	}
	if l.kind != cvStr || p.kind != cvStr || esc.kind != cvStr || utf8.RuneCountInString(esc.str) > 1 {
		return unknownVal
	}
	escR := rune(-1)
	if esc.str != "" {
		escR, _ = utf8.DecodeRuneInString(esc.str)
	}
	var m, ok bool
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		m, ok = similarMatch(l.str, p.str, escR)
	case pg_query.A_Expr_Kind_AEXPR_ILIKE:
		if !isASCII(l.str) || !isASCII(p.str) {
			return unknownVal // case folding of other letters depends on the locale
		}
		m, ok = likeMatch(strings.ToLower(l.str), strings.ToLower(p.str), escR)
	default:
		m, ok = likeMatch(l.str, p.str, escR)
	}
	if !ok {
		return unknownVal
	}
	if strings.HasPrefix(op, "!") { // NOT LIKE: !~~, !~~*, !~
		m = !m
	}
	return boolVal(m)
}

// likeMatch matches s against a LIKE pattern (% any run, _ one character,
// esc quotes the next character). ok is false for a pattern PostgreSQL
// rejects (an escape at the end).
func likeMatch(s, pat string, esc rune) (match, ok bool) {
	sr, pr := []rune(s), []rune(pat)
	// Iterative matching with one backtrack point for the last %.
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(sr) {
		if pi < len(pr) {
			c := pr[pi]
			switch {
			case c == esc:
				if pi+1 >= len(pr) {
					return false, false
				}
				if pr[pi+1] == sr[si] {
					si++
					pi += 2
					continue
				}
			case c == '%':
				starP, starS = pi, si
				pi++
				continue
			case c == '_' || c == sr[si]:
				si++
				pi++
				continue
			}
		}
		if starP < 0 {
			return false, true
		}
		starS++
		si, pi = starS, starP+1
	}
	for pi < len(pr) && pr[pi] == '%' {
		pi++
	}
	if pi < len(pr) && pr[pi] == esc && pi+1 >= len(pr) {
		return false, false
	}
	return pi == len(pr), true
}

// similarMatch matches s against a SIMILAR TO pattern by translating it to
// a regular expression, as PostgreSQL's similar_to_escape does.
func similarMatch(s, pat string, esc rune) (match, ok bool) {
	var b strings.Builder
	b.WriteString(`^(?:`)
	inClass := false
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == esc:
			if i+1 >= len(rs) {
				return false, false
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inClass:
			if c == ']' {
				inClass = false
			}
			if c == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(c)
		case c == '[':
			inClass = true
			b.WriteRune(c)
		case c == '%':
			b.WriteString(`.*`)
		case c == '_':
			b.WriteString(`.`)
		case strings.ContainsRune("|*+?{}()", c):
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return false, false
	}
	return re.MatchString(s), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
