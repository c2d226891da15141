package pgsql

import "github.com/sqlfw/sqlfw/engine"

// PrescanStable reports that prescan (lex.go) reads every literal the shape
// of text replaces as exactly one token of its own, from code: a string
// span is one literal the prescan found, a number span (after its minus
// sign, an operator token of its own) one number token, neither inside a
// comment, string or dollar quote. A text B of the same shape is text with
// other literals of the same classes in those spans, all other bytes the
// same; the prescan then reads B as it read text up to each span, reads
// the span as one token again (a string of the class has no backslash and
// ends at its first lone quote, as prescan's string does; a number's digits
// stop where text's did, at the same next byte), and what it records of a
// token (that the open list is not empty, its last byte's kind, where it
// starts and ends relative to comments) is the same. So B measures as
// text but for Bytes (FuzzPrescanStable checks it). Run once per shape
// entry, never on the hit path.
func (pgDialect) PrescanStable(text string) bool {
	_, spans, ok := shapeOf(text)
	if !ok {
		return false
	}
	var st engine.LexStats
	var trace []lexSpan
	scanLex(text, &st, 0, &trace)
	j := 0
	for _, sp := range spans {
		start, kind := sp.Start, byte(spanNumber)
		switch {
		case sp.Class == litStr:
			kind = spanLiteral
		case sp.Class >= 'A' && sp.Class <= 'Z':
			start++ // the minus sign
		}
		for j < len(trace) && trace[j].end <= start && trace[j].start < start {
			j++
		}
		if j >= len(trace) || trace[j] != (lexSpan{start, sp.End, kind}) {
			return false
		}
	}
	return true
}
