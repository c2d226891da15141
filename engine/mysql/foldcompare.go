package mysql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

func toNumber(v folded) (float64, bool) {
	if v.null {
		return 0, false
	}
	return num(v), true
}

func num(v folded) float64 {
	if v.hex || v.date || !v.isStr {
		return v.num
	}
	n, _ := strNumber(v.str)
	return n
}

func text(v folded) string {
	if v.isStr || v.date {
		return v.str
	}
	if v.num == math.Trunc(v.num) && math.Abs(v.num) < 1<<63 {
		return strconv.FormatInt(int64(v.num), 10)
	}
	return strconv.FormatFloat(v.num, 'f', -1, 64)
}

// compare compares as MariaDB does: as strings (without case or trailing
// spaces, or by bytes when either is binary) when both are strings, as
// dates when either is a date and the other a date or a string in the
// same canonical form, else as numbers. ok is false where the folding
// cannot tell: numbers beyond 2^53 that come out equal, non-ASCII strings
// that differ in bytes (the collation may still equal them).
func compare(a, b folded) (int, bool) {
	if a.date || b.date {
		if a.date && b.date {
			if a.isTime != b.isTime {
				return 0, false
			}
			return strings.Compare(a.str, b.str), true
		}
		dv, other := a, b
		sign := 1
		if b.date {
			dv, other, sign = b, a, -1
		}
		if other.isStr && !other.hex {
			o, ok := dateFolded(other.str, dv.isTime)
			if !ok {
				return 0, false
			}
			return sign * strings.Compare(dv.str, o.str), true
		}
		// a date next to a number compares as its number (20200101)
		return numCompare(a, b)
	}
	if a.isStr && b.isStr && (a.bin || b.bin) {
		return strings.Compare(a.str, b.str), true
	}
	if a.isStr && b.isStr {
		x := strings.TrimRight(a.str, " ")
		y := strings.TrimRight(b.str, " ")
		if x == y {
			return 0, true
		}
		if !isASCII(x) || !isASCII(y) {
			return 0, false
		}
		return strings.Compare(strings.ToLower(x), strings.ToLower(y)), true
	}
	return numCompare(a, b)
}

func numCompare(a, b folded) (int, bool) {
	x, y := num(a), num(b)
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	if a.inexact || b.inexact || math.Abs(x) > 1<<53 {
		return 0, false
	}
	return 0, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// strNumber reads the longest numeric prefix of s, as MySQL converts a
// string to a number ('12abc' is 12, 'abc' is 0).
func strNumber(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	for end < len(s) {
		c := s[end]
		if c >= '0' && c <= '9' || c == '.' || (end == 0 && (c == '-' || c == '+')) || ((c == 'e' || c == 'E') && end > 0) ||
			((c == '-' || c == '+') && end > 0 && (s[end-1] == 'e' || s[end-1] == 'E')) {
			end++
			continue
		}
		break
	}
	for end > 0 {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil && !math.IsInf(f, 0) {
			return f, true
		}
		end--
	}
	return 0, false
}

// dateFolded reads a DATE/DATETIME ("2020-01-01", "2020-01-01 10:00:00")
// or, when isTime, a TIME ("10:00:00") literal in its canonical form only;
// anything else is not folded.
func dateFolded(s string, isTime bool) (folded, bool) {
	digits := func(t string) (float64, bool) {
		var n float64
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			n = n*10 + float64(t[i]-'0')
		}
		return n, true
	}
	if isTime {
		if len(s) != 8 || s[2] != ':' || s[5] != ':' {
			return folded{}, false
		}
		h, ok1 := digits(s[:2])
		m, ok2 := digits(s[3:5])
		sec, ok3 := digits(s[6:])
		if !ok1 || !ok2 || !ok3 || m > 59 || sec > 59 {
			return folded{}, false
		}
		return folded{date: true, isTime: true, str: s, num: h*10000 + m*100 + sec}, true
	}
	if len(s) == 10 {
		s += " 00:00:00"
	}
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return folded{}, false
	}
	y, ok1 := digits(s[:4])
	mo, ok2 := digits(s[5:7])
	dd, ok3 := digits(s[8:10])
	h, ok4 := digits(s[11:13])
	mi, ok5 := digits(s[14:16])
	se, ok6 := digits(s[17:])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || mo < 1 || mo > 12 || dd < 1 || dd > 31 || h > 23 || mi > 59 || se > 59 {
		return folded{}, false
	}
	n := y*1e4 + mo*100 + dd
	if h+mi+se != 0 {
		n = n*1e6 + h*1e4 + mi*100 + se
	}
	return folded{date: true, str: s, num: n}, true
}
