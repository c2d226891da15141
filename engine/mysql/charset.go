package mysql

// Multibyte client character sets, read as the server reads them.
//
// A MySQL or MariaDB server lexes a text in the session's
// character_set_client: its lexer takes a multibyte character whole
// wherever it meets one (strings/ctype-*.c, ismbchar), so a byte that
// would be a quote or a backslash on its own is part of a character when it
// trails a lead byte. Example, in gbk:
//
//	SELECT * FROM t WHERE name = '<0xbf><0x5c>' OR 1=1 -- '
//
// is a one-character string followed by OR 1=1 to the server (0xbf 0x5c is
// one character), and one long string to a byte-wise UTF-8 reading (0x5c a
// backslash escaping the quote): the classic addslashes bypass the other way
// round. toUTF8 converts such a text to UTF-8 along the server's character
// boundaries, so that the rest of the engine reads the converted text as
// the server reads the original; the converted text is judged, and cached
// by its own text, like any other (as engine/pgsql does for PostgreSQL's
// client encodings).
//
// Each character must decode (golang.org/x/text's tables) to exactly one
// character above U+007F, else the text is refused: a lead byte without a
// valid trail byte (the server reads it as a byte on its own, which no
// UTF-8 text can stand for), a character the Go tables do not map, and the
// few characters the server converts to an ASCII character (serverASCII),
// which a PREPARE or EXECUTE IMMEDIATE text converted to another character
// set would read as that character. Where the server's table and Go's map
// a character to different characters above U+007F (measured on MariaDB
// 10.11 by e2e TestMySQLCharsetTablesAgree: big5 267, ujis and eucjpms
// about 380, sjis 6, gb2312 2 characters, mostly punctuation; gbk, cp932
// and euckr none), the character boundaries still agree, so the reading of
// the text does: only a name or literal spelled with such a character
// reads as a different name or literal.

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// A multibyteCharset is one of the server's multibyte client character
// sets.
type multibyteCharset struct {
	name string
	// char returns the length of the character starting at s[0] (a byte
	// above 0x7F) as the server's ismbchar finds it, 1 for a valid
	// single-byte character, or 0 for a byte the server takes on its own.
	char func(s []byte) int
	dec  encoding.Encoding
	// serverASCII are the characters the server converts to an ASCII
	// character (measured on MariaDB 10.11).
	serverASCII []string
}

func between(c, lo, hi byte) bool { return c >= lo && c <= hi }

// twoByte returns a char function for the sets whose characters are a
// lead byte and one trail byte.
func twoByte(lead, trail func(byte) bool) func([]byte) int {
	return func(s []byte) int {
		if len(s) >= 2 && lead(s[0]) && trail(s[1]) {
			return 2
		}
		return 0
	}
}

var (
	gbkChar = twoByte(func(c byte) bool { return between(c, 0x81, 0xfe) },
		func(c byte) bool { return between(c, 0x40, 0x7e) || between(c, 0x80, 0xfe) })
	big5Char = twoByte(func(c byte) bool { return between(c, 0xa1, 0xf9) },
		func(c byte) bool { return between(c, 0x40, 0x7e) || between(c, 0xa1, 0xfe) })
	gb2312Char = twoByte(func(c byte) bool { return between(c, 0xa1, 0xf7) },
		func(c byte) bool { return between(c, 0xa1, 0xfe) })
	euckrChar = twoByte(func(c byte) bool { return between(c, 0x81, 0xfe) },
		func(c byte) bool { return between(c, 0x41, 0x5a) || between(c, 0x61, 0x7a) || between(c, 0x81, 0xfe) })
	sjisPair = twoByte(func(c byte) bool { return between(c, 0x81, 0x9f) || between(c, 0xe0, 0xfc) },
		func(c byte) bool { return between(c, 0x40, 0x7e) || between(c, 0x80, 0xfc) })
)

// sjisChar: sjis and cp932, whose half-width katakana 0xA1-0xDF are one byte.
func sjisChar(s []byte) int {
	if between(s[0], 0xa1, 0xdf) {
		return 1
	}
	return sjisPair(s)
}

// ujisChar: ujis and eucjpms (EUC-JP): two bytes 0xA1-0xFE, SS2 0x8E and a
// half-width katakana, SS3 0x8F and two bytes 0xA1-0xFE.
func ujisChar(s []byte) int {
	euc := func(c byte) bool { return between(c, 0xa1, 0xfe) }
	switch {
	case len(s) >= 2 && euc(s[0]) && euc(s[1]):
		return 2
	case len(s) >= 2 && s[0] == 0x8e && between(s[1], 0xa1, 0xdf):
		return 2
	case len(s) >= 3 && s[0] == 0x8f && euc(s[1]) && euc(s[2]):
		return 3
	}
	return 0
}

// gb18030Char: MySQL's gb18030 (MariaDB 10.11 has none): two bytes as gbk's,
// or four bytes lead, digit, lead, digit.
func gb18030Char(s []byte) int {
	if len(s) >= 4 && between(s[0], 0x81, 0xfe) && between(s[1], 0x30, 0x39) && between(s[2], 0x81, 0xfe) && between(s[3], 0x30, 0x39) {
		return 4
	}
	return gbkChar(s)
}

// multibyteCharsets are the client character sets toUTF8 converts, by the
// names the server reports. x/text's GBK decodes GB2312 (a subset), its
// ShiftJIS is Windows-31J (cp932, a superset of sjis), its EUCKR code page
// 949 (MySQL's euckr has 949's extended range) and its EUCJP has JIS X 0212
// (SS3).
var multibyteCharsets = map[string]*multibyteCharset{
	"gbk":     {name: "gbk", char: gbkChar, dec: simplifiedchinese.GBK},
	"gb2312":  {name: "gb2312", char: gb2312Char, dec: simplifiedchinese.GBK},
	"gb18030": {name: "gb18030", char: gb18030Char, dec: simplifiedchinese.GB18030},
	"big5":    {name: "big5", char: big5Char, dec: traditionalchinese.Big5},
	"sjis":    {name: "sjis", char: sjisChar, dec: japanese.ShiftJIS, serverASCII: []string{"\x81\x5f"}},
	"cp932":   {name: "cp932", char: sjisChar, dec: japanese.ShiftJIS},
	"euckr":   {name: "euckr", char: euckrChar, dec: korean.EUCKR},
	"ujis":    {name: "ujis", char: ujisChar, dec: japanese.EUCJP, serverASCII: []string{"\xa1\xc0", "\x8f\xa2\xb7"}},
	"eucjpms": {name: "eucjpms", char: ujisChar, dec: japanese.EUCJP},
}

// lookupMultibyte returns the converter of a client character set, or nil.
func lookupMultibyte(charset string) *multibyteCharset {
	if cs := multibyteCharsets[charset]; cs != nil {
		return cs
	}
	return multibyteCharsets[strings.ToLower(charset)]
}

// toUTF8 converts text along the server's character boundaries, or returns
// false (see above). ASCII bytes are kept as they are.
func (cs *multibyteCharset) toUTF8(text []byte) ([]byte, bool) {
	out := make([]byte, 0, len(text)+len(text)/2)
	dec := cs.dec.NewDecoder()
	var buf [8]byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < 0x80 {
			out = append(out, c)
			i++
			continue
		}
		n := cs.char(text[i:])
		if n == 0 {
			return nil, false
		}
		seq := text[i : i+n]
		for _, a := range cs.serverASCII {
			if string(seq) == a {
				return nil, false
			}
		}
		dec.Reset()
		nDst, nSrc, err := dec.Transform(buf[:], seq, true)
		if err != nil || nSrc != n {
			return nil, false
		}
		r, size := utf8.DecodeRune(buf[:nDst])
		if size != nDst || r == utf8.RuneError || r < 0x80 {
			return nil, false
		}
		out = append(out, buf[:nDst]...)
		i += n
	}
	return out, true
}
