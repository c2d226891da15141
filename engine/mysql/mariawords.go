package mysql

import (
	"strings"
)

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// isNameWord reports whether w is spelt as a bare name.
func isNameWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isIdentByte(w[i]) {
			return false
		}
	}
	return w != ""
}

// maxTiDBDigits is the longest integer literal TiDB's parser reads (its
// decimal has 81 digits); MariaDB reads a longer one as a DECIMAL.
const maxTiDBDigits = 81

// longInteger is the value MariaDB gives an integer literal of more digits
// than TiDB reads: the number without its leading zeros, or, past
// DECIMAL's 65 digits, DECIMAL's largest, 65 nines (str2my_decimal
// saturates on overflow: main.type_newdecimal).
func longInteger(w string) string {
	w = strings.TrimLeft(w, "0")
	switch {
	case w == "":
		return "0"
	case len(w) > 65:
		return strings.Repeat("9", 65)
	}
	return w
}

// windowName reports whether w is a window function's name, which TiDB
// reserves and MariaDB does not.
func windowName(w string) bool {
	switch w {
	case "rank", "dense_rank", "row_number", "ntile", "lead", "lag", "first_value", "last_value", "nth_value", "cume_dist", "percent_rank":
		return true
	}
	return false
}

// spatialType reports whether w names one of MariaDB's spatial types.
func spatialType(w string) bool {
	switch w {
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return true
	}
	return false
}

// hexish reports whether a word is a hex or bit literal (0x41, x or b
// before a quoted string is its own word: X'41').
func hexish(w string) bool {
	lw := strings.ToLower(w)
	return lw == "x" || lw == "b" || strings.HasPrefix(lw, "0x") || strings.HasPrefix(lw, "0b")
}

// mariaCharset reports whether name is a character set MariaDB 10.11 has
// and TiDB's parser does not (SHOW CHARACTER SET).
func mariaCharset(name string) bool {
	switch name {
	case "big5", "dec8", "cp850", "hp8", "koi8r", "latin2", "swe7", "ujis", "sjis", "hebrew", "tis620", "euckr",
		"koi8u", "gb2312", "greek", "cp1250", "latin5", "armscii8", "ucs2", "cp866", "keybcs2", "macce", "macroman",
		"cp852", "latin7", "cp1251", "utf16", "utf16le", "cp1256", "cp1257", "utf32", "geostd8", "cp932", "eucjpms", "gbk", "utf8mb3", "filename":
		return true
	}
	return false
}
