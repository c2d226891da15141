package mysql

import "github.com/sqlfw/sqlfw/engine"

// PrescanStable reports that prescan reads every literal the shape of text
// replaces as tokens of its own from code, exactly: a string span is one
// token, an integer span one word (digits are word bytes to the prescan), a
// decimal span the word, "." and the word its digits make; no comment,
// other string or kept comment marker begins or ends inside a span.
//
// Why a text B of the same shape then measures as text (A) but for Bytes.
// Both are read texts (Read: lex.go), in TiDB's default sql_mode whatever
// the session's: "..." is a string, a backslash escapes, the client's
// multibyte character set is converted; sql_mode and character set decide
// nothing further here. The shape scan (shape.go) and the prescan skip
// comments alike: # and "-- " (a "--" without a blank after it is code to
// both) to the end of the line, /* to the first */ (an optimizer hint
// /*+ too); a /*! comment gives no shape at all. B is A with each span's
// literal swapped for another of its class, every other byte the same. The
// prescan reads B as it reads A up to the first span (the same bytes), and
// is then in code at the span's start, as in A. There it reads B's literal
// as it read A's: a string of either quote ends at its first unescaped
// closing quote (quotedStr, the function the shape scan found the span's
// end with), so it is one token ending at the span's end; an integer's
// digits are one word, which ends at the span's end because the shape scan
// replaces no number followed by a word byte or "."; a decimal is the word,
// "." and the word, likewise. What the prescan keeps of a token is where it
// starts and ends (against comments glued to it: the bytes around are B's
// as A's), that the open list is not empty, and the kind of its last byte
// for a line comment after it (a quote or a digit: neither is "," "(" or
// ";"), all the same for B's literal as for A's. From the span's end on it
// reads B as A again, to the next span. A line comment's checks read the
// bytes between it and the token before it (kept bytes), its own body (kept:
// no span is inside a comment) and whether only blanks follow it (a span is
// never blank). So MaxList, MaxDepth and CommentTrick are A's
// (FuzzPrescanStable checks it). Run once per shape entry, never on a hit.
func (myDialect) PrescanStable(text string) bool {
	spans, ok := scanShape(nil, text)
	if !ok {
		return false
	}
	var trace []token
	prescanTrace(text, 0, &trace)
	j := 0
	for _, sp := range spans {
		for j < len(trace) && trace[j].lo < sp.Start {
			j++
		}
		want := 1
		if sp.Class == shDec {
			want = 3
		}
		at := sp.Start
		for k := 0; k < want; k++ {
			if j >= len(trace) || trace[j].lo != at {
				return false
			}
			at = trace[j].hi
			j++
		}
		if at != sp.End {
			return false
		}
	}
	return true
}

var _ engine.PrescanStabler = myDialect{}
