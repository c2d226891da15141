package mysql

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// likeMatch matches s against a LIKE pattern (% any run, _ one character,
// esc quotes the next), without case when ci. ok is false where the
// collation could matter (non-ASCII text that does not match by bytes).
func likeMatch(s, pat string, esc rune, ci bool) (match, ok bool) {
	if ci && (!isASCII(s) || !isASCII(pat)) {
		if m, _ := likeMatch(s, pat, esc, false); m {
			return true, true
		}
		if strings.Trim(pat, "%") == "" {
			return true, true
		}
		return false, false
	}
	if ci {
		s, pat = strings.ToLower(s), strings.ToLower(pat)
	}
	var rec func(si, pi, budget int) (bool, bool)
	steps := 0
	rec = func(si, pi, depth int) (bool, bool) {
		for pi < len(pat) {
			steps++
			if steps > 100000 || depth > 64 {
				return false, false
			}
			c, w := utf8.DecodeRuneInString(pat[pi:])
			switch {
			case c == '%':
				for pi < len(pat) && pat[pi] == '%' {
					pi++
				}
				if pi == len(pat) {
					return true, true
				}
				for k := si; k <= len(s); k++ {
					m, ok := rec(k, pi, depth+1)
					if !ok || m {
						return m, ok
					}
				}
				return false, true
			case c == '_':
				if si >= len(s) {
					return false, true
				}
				_, sw := utf8.DecodeRuneInString(s[si:])
				si += sw
				pi += w
			default:
				if c == esc && pi+w < len(pat) {
					pi += w
					c, w = utf8.DecodeRuneInString(pat[pi:])
				}
				sc, sw := utf8.DecodeRuneInString(s[si:])
				if si >= len(s) || sc != c {
					return false, true
				}
				si += sw
				pi += w
			}
		}
		return si == len(s), true
	}
	return rec(0, 0, 0)
}

// matchesEverything reports whether a REGEXP pattern matches every string
// (it finds a match anywhere): one that matches the empty string without
// any assertion (the empty pattern, '.*', 'a*', '(x|)'), or a lone ^ or $.
func matchesEverything(pat string) bool {
	if len(pat) > 256 {
		return false
	}
	switch pat {
	case "", "^", "$":
		return true
	}
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return false
	}
	return nullable(re, 0)
}

// regexpMatch matches an ASCII subject without line breaks against a
// pattern that Go's RE2 syntax reads as PCRE does (no backreferences or
// lookaround, which do not compile), without case when ci; ok is false
// otherwise.
func regexpMatch(s, pat string, ci bool) (match, ok bool) {
	if len(pat) > 256 || len(s) > maxFoldString || !isASCII(s) || !isASCII(pat) || strings.ContainsAny(s, "\n\r") {
		return false, false
	}
	if ci {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return false, false
	}
	return re.MatchString(s), true
}

func nullable(re *syntax.Regexp, depth int) bool {
	if depth > 32 {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0], depth+1)
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !nullable(s, depth+1) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if nullable(s, depth+1) {
				return true
			}
		}
	}
	return false
}
