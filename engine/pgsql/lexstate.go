package pgsql

// Session state that changes how PostgreSQL reads a message's text.
//
// The rest of the engine reads SQL as UTF-8 with standard_conforming_strings
// on. The server reads it with the session's settings: it first converts the
// message from client_encoding to the server encoding (src/backend/utils/mb/
// mbutils.c, pg_any_to_server), then lexes it, and with
// standard_conforming_strings off a plain '...' literal takes backslash
// escapes exactly like E'...' (src/backend/parser/scan.l, xqstart). Example,
// with standard_conforming_strings off:
//
//	SELECT 'a\'; DELETE FROM t; --'
//
// is one string literal to a standard reading and a SELECT, a DELETE and a
// comment to the server. In SJIS, 0x95 0x5C is one character whose second
// byte is a backslash to a byte-wise reading, so 'x<0x95>\'; DELETE ...' hides
// the DELETE the other way round.
//
// lexRead turns a message's text into the text the server lexes: the client
// encoding decoded to UTF-8 along PostgreSQL's own character boundaries (the
// pg_*_verifychar rules of src/common/wchar.c, which the conversion routines
// step by), and, with standard_conforming_strings off, every plain string
// literal rewritten as E'...'. The converted text reads the same to the rest
// of the engine as the original does to the server, so it is judged, and
// cached by its own text, like any other.
//
// backslash_quote and escape_string_warning need no tracking: the first only
// makes the server reject \' in some strings, the second only adds a warning;
// neither changes where a literal ends.

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"

	"github.com/sqlfw/sqlfw/engine"
)

// readsAsIs reports whether the rest of the engine reads text exactly as
// the server does under l, whatever the text: the common case, checked
// before anything else so that the cached path stays as it was.
func readsAsIs(l *engine.LexState) bool {
	return !l.NonStandardStrings && !l.Unconfirmed && rawEncoding(l.ClientEncoding)
}

// rawEncoding reports whether the server lexes text in client encoding enc
// byte for byte as the engine does: UTF8, and SQL_ASCII, for which the server
// converts nothing and only validates against the server encoding (every
// server encoding is ASCII-safe).
func rawEncoding(enc string) bool {
	return enc == "" || enc == "UTF8" || enc == "SQL_ASCII"
}

// Rule ids of the verdicts lexRead gives; they are not policy rules, like
// parse-error: the engine cannot judge what it cannot read.
const (
	LexUnconfirmedRuleID = "lexing-state-unconfirmed"
	LexUnsupportedRuleID = "client-encoding-unsupported"
	LexInvalidRuleID     = "client-encoding-invalid"
	LexAmbiguousRuleID   = "lexing-state-ambiguous"

	lexUnconfirmedReason = "the text has a backslash or non-ASCII bytes and was sent before the server confirmed standard_conforming_strings and client_encoding after an earlier message that may change them; send it after that message's result, or pass such values as bind parameters"
	lexAmbiguousReason   = "with standard_conforming_strings off, a string literal glued to a number or parameter cannot be read soundly; separate the quote from the number with a space"
)

// lexRead returns the text the server lexes when it receives sql in a
// session with state l, or a deny verdict when that cannot be known. Text
// that is pure ASCII without a backslash reads the same under every state
// and comes back unchanged without allocating.
func lexRead(sql []byte, l *engine.LexState) (_ []byte, ruleID, reason string, ok bool) {
	backslash, high := lexSensitive(sql)
	if !backslash && !high {
		return sql, "", "", true
	}
	deny := func(id, reason string) ([]byte, string, string, bool) {
		return nil, id, reason, false
	}
	if l.Unconfirmed {
		return deny(LexUnconfirmedRuleID, lexUnconfirmedReason)
	}
	text := sql
	if high && !rawEncoding(l.ClientEncoding) {
		enc := lookupEncoding(l.ClientEncoding)
		if enc == nil {
			return deny(LexUnsupportedRuleID, "sqlfw cannot read non-ASCII text in client encoding "+safeName(l.ClientEncoding)+"; use UTF8 or an encoding docs/policy.md lists as supported")
		}
		conv, ok := enc.toUTF8(text)
		if !ok {
			return deny(LexInvalidRuleID, "the text is not valid in client encoding "+enc.name+" or has a character sqlfw cannot map (the server rejects invalid text too)")
		}
		text = conv
	}
	if backslash && l.NonStandardStrings {
		esc, ok := escapeStrings(text)
		if !ok {
			return deny(LexAmbiguousRuleID, lexAmbiguousReason)
		}
		text = esc
	}
	return text, "", "", true
}

// safeName keeps a client-supplied encoding name printable and short for a
// reason string.
func safeName(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "(unprintable name)"
		}
	}
	return s
}

// lexSensitive reports whether sql has a backslash and whether it has a
// byte with the high bit set: the only bytes whose reading depends on the
// session's lexing state.
func lexSensitive(sql []byte) (backslash, high bool) {
	backslash = bytes.IndexByte(sql, '\\') >= 0
	for _, c := range sql {
		if c >= 0x80 {
			return backslash, true
		}
	}
	return backslash, false
}

// A clientEncoding reads text in one of PostgreSQL's client encodings.
type clientEncoding struct {
	name string
	// char returns the length of the character starting at s[0] (which
	// has the high bit set) by PostgreSQL's pg_<enc>_verifychar, or -1
	// when the server rejects the sequence.
	char func(s []byte) int
	// dec decodes one character; nil for single-byte encodings, which
	// use cm.
	dec encoding.Encoding
	cm  *charmap.Charmap
	// overrides are the characters whose decoding by dec or cm differs
	// from the server's (lexstate_tables.go).
	overrides map[string]rune
}

func init() {
	for name, m := range encodingOverrides {
		clientEncodings[name].overrides = m
	}
}

func isEUCRange(c byte) bool { return c >= 0xa1 && c <= 0xfe }

func singleByteChar([]byte) int { return 1 }

// twoByteChar is pg_big5/gbk/uhc_verifychar: a high byte starts a two-byte
// character whose second byte may be anything but NUL.
func twoByteChar(s []byte) int {
	if len(s) < 2 || s[1] == 0 {
		return -1
	}
	return 2
}

// sjisChar is pg_sjis_verifychar.
func sjisChar(s []byte) int {
	c := s[0]
	if c >= 0xa1 && c <= 0xdf {
		return 1 // half-width katakana
	}
	if len(s) < 2 || !(c >= 0x81 && c <= 0x9f || c >= 0xe0 && c <= 0xfc) {
		return -1
	}
	t := s[1]
	if !(t >= 0x40 && t <= 0x7e || t >= 0x80 && t <= 0xfc) {
		return -1
	}
	return 2
}

// gb18030Char is pg_gb18030_verifychar.
func gb18030Char(s []byte) int {
	if len(s) >= 4 && s[1] >= 0x30 && s[1] <= 0x39 {
		if s[0] >= 0x81 && s[0] <= 0xfe && s[2] >= 0x81 && s[2] <= 0xfe && s[3] >= 0x30 && s[3] <= 0x39 {
			return 4
		}
		return -1
	}
	if len(s) >= 2 && s[0] >= 0x81 && s[0] <= 0xfe && (s[1] >= 0x40 && s[1] <= 0x7e || s[1] >= 0x80 && s[1] <= 0xfe) {
		return 2
	}
	return -1
}

// eucjpChar is pg_eucjp_verifychar.
func eucjpChar(s []byte) int {
	switch s[0] {
	case 0x8e: // SS2: half-width katakana
		if len(s) < 2 || s[1] < 0xa1 || s[1] > 0xdf {
			return -1
		}
		return 2
	case 0x8f: // SS3: JIS X 0212
		if len(s) < 3 || !isEUCRange(s[1]) || !isEUCRange(s[2]) {
			return -1
		}
		return 3
	}
	if len(s) < 2 || !isEUCRange(s[0]) || !isEUCRange(s[1]) {
		return -1
	}
	return 2
}

// euckrChar is pg_euckr_verifychar (and pg_euccn_verifychar).
func euckrChar(s []byte) int {
	if len(s) < 2 || !isEUCRange(s[0]) || !isEUCRange(s[1]) {
		return -1
	}
	return 2
}

// clientEncodings are the encodings lexRead converts, by the names the
// server reports (src/common/encnames.c). Not here, so denied when a text
// has non-ASCII bytes: JOHAB, SHIFT_JIS_2004, EUC_JIS_2004, EUC_TW and
// MULE_INTERNAL, for which no decoder is at hand.
var clientEncodings = map[string]*clientEncoding{
	"SJIS":    {name: "SJIS", char: sjisChar, dec: japanese.ShiftJIS},
	"EUC_JP":  {name: "EUC_JP", char: eucjpChar, dec: japanese.EUCJP},
	"BIG5":    {name: "BIG5", char: twoByteChar, dec: traditionalchinese.Big5},
	"GBK":     {name: "GBK", char: twoByteChar, dec: simplifiedchinese.GBK},
	"GB18030": {name: "GB18030", char: gb18030Char, dec: simplifiedchinese.GB18030},
	"EUC_CN":  {name: "EUC_CN", char: euckrChar, dec: simplifiedchinese.GBK}, // GB2312 in EUC form, a subset of GBK
	"UHC":     {name: "UHC", char: twoByteChar, dec: korean.EUCKR},           // x/text's EUC-KR is code page 949, i.e. UHC
	"EUC_KR":  {name: "EUC_KR", char: euckrChar, dec: korean.EUCKR},

	"LATIN1":     {name: "LATIN1", char: singleByteChar, cm: charmap.ISO8859_1},
	"LATIN2":     {name: "LATIN2", char: singleByteChar, cm: charmap.ISO8859_2},
	"LATIN3":     {name: "LATIN3", char: singleByteChar, cm: charmap.ISO8859_3},
	"LATIN4":     {name: "LATIN4", char: singleByteChar, cm: charmap.ISO8859_4},
	"LATIN5":     {name: "LATIN5", char: singleByteChar, cm: charmap.ISO8859_9},
	"LATIN6":     {name: "LATIN6", char: singleByteChar, cm: charmap.ISO8859_10},
	"LATIN7":     {name: "LATIN7", char: singleByteChar, cm: charmap.ISO8859_13},
	"LATIN8":     {name: "LATIN8", char: singleByteChar, cm: charmap.ISO8859_14},
	"LATIN9":     {name: "LATIN9", char: singleByteChar, cm: charmap.ISO8859_15},
	"LATIN10":    {name: "LATIN10", char: singleByteChar, cm: charmap.ISO8859_16},
	"ISO_8859_5": {name: "ISO_8859_5", char: singleByteChar, cm: charmap.ISO8859_5},
	"ISO_8859_6": {name: "ISO_8859_6", char: singleByteChar, cm: charmap.ISO8859_6},
	"ISO_8859_7": {name: "ISO_8859_7", char: singleByteChar, cm: charmap.ISO8859_7},
	"ISO_8859_8": {name: "ISO_8859_8", char: singleByteChar, cm: charmap.ISO8859_8},
	"WIN1250":    {name: "WIN1250", char: singleByteChar, cm: charmap.Windows1250},
	"WIN1251":    {name: "WIN1251", char: singleByteChar, cm: charmap.Windows1251},
	"WIN1252":    {name: "WIN1252", char: singleByteChar, cm: charmap.Windows1252},
	"WIN1253":    {name: "WIN1253", char: singleByteChar, cm: charmap.Windows1253},
	"WIN1254":    {name: "WIN1254", char: singleByteChar, cm: charmap.Windows1254},
	"WIN1255":    {name: "WIN1255", char: singleByteChar, cm: charmap.Windows1255},
	"WIN1256":    {name: "WIN1256", char: singleByteChar, cm: charmap.Windows1256},
	"WIN1257":    {name: "WIN1257", char: singleByteChar, cm: charmap.Windows1257},
	"WIN1258":    {name: "WIN1258", char: singleByteChar, cm: charmap.Windows1258},
	"WIN866":     {name: "WIN866", char: singleByteChar, cm: charmap.CodePage866},
	"WIN874":     {name: "WIN874", char: singleByteChar, cm: charmap.Windows874},
	"KOI8R":      {name: "KOI8R", char: singleByteChar, cm: charmap.KOI8R},
	"KOI8U":      {name: "KOI8U", char: singleByteChar, cm: charmap.KOI8U},
}

// encodingAliases maps the cleaned spellings PostgreSQL also accepts for
// client_encoding (src/common/encnames.c) to the reported names, for
// callers that take a name from a person (fwctl check).
var encodingAliases = map[string]string{
	"utf8": "UTF8", "unicode": "UTF8", "sqlascii": "SQL_ASCII",
	"sjis": "SJIS", "shiftjis": "SJIS", "mskanji": "SJIS", "win932": "SJIS", "windows932": "SJIS",
	"eucjp": "EUC_JP", "big5": "BIG5", "win950": "BIG5", "windows950": "BIG5",
	"gbk": "GBK", "win936": "GBK", "windows936": "GBK", "cp936": "GBK", "gb18030": "GB18030",
	"euccn": "EUC_CN", "uhc": "UHC", "win949": "UHC", "windows949": "UHC", "euckr": "EUC_KR",
	"johab": "JOHAB", "shiftjis2004": "SHIFT_JIS_2004", "eucjis2004": "EUC_JIS_2004", "euctw": "EUC_TW",
	"muleinternal": "MULE_INTERNAL",
	"latin1":       "LATIN1", "iso88591": "LATIN1", "latin2": "LATIN2", "iso88592": "LATIN2",
	"latin3": "LATIN3", "iso88593": "LATIN3", "latin4": "LATIN4", "iso88594": "LATIN4",
	"latin5": "LATIN5", "iso88599": "LATIN5", "latin6": "LATIN6", "iso885910": "LATIN6",
	"latin7": "LATIN7", "iso885913": "LATIN7", "latin8": "LATIN8", "iso885914": "LATIN8",
	"latin9": "LATIN9", "iso885915": "LATIN9", "latin10": "LATIN10", "iso885916": "LATIN10",
	"iso88595": "ISO_8859_5", "iso88596": "ISO_8859_6", "iso88597": "ISO_8859_7", "iso88598": "ISO_8859_8",
	"win1250": "WIN1250", "win1251": "WIN1251", "win1252": "WIN1252", "win1253": "WIN1253",
	"win1254": "WIN1254", "win1255": "WIN1255", "win1256": "WIN1256", "win1257": "WIN1257",
	"win1258": "WIN1258", "win866": "WIN866", "win874": "WIN874", "koi8r": "KOI8R", "koi8": "KOI8R", "koi8u": "KOI8U",
	"windows1250": "WIN1250", "windows1251": "WIN1251", "windows1252": "WIN1252", "windows1253": "WIN1253",
	"windows1254": "WIN1254", "windows1255": "WIN1255", "windows1256": "WIN1256", "windows1257": "WIN1257",
	"windows1258": "WIN1258", "windows866": "WIN866", "windows874": "WIN874",
}

// CanonicalEncoding returns the name the server reports for a
// client_encoding spelled name (case, dashes and underscores ignored, as
// PostgreSQL does), and whether the name is known.
func CanonicalEncoding(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	canon, ok := encodingAliases[b.String()]
	return canon, ok
}

// lookupEncoding returns the converter for a reported encoding name, or nil.
func lookupEncoding(name string) *clientEncoding {
	if enc := clientEncodings[name]; enc != nil {
		return enc
	}
	if canon, ok := CanonicalEncoding(name); ok {
		return clientEncodings[canon]
	}
	return nil
}

// ClientTextToUTF8 converts text sent in client encoding enc (a name as the
// server reports it, or a spelling CanonicalEncoding knows) to the UTF-8 text
// engine.Judge judges. ok is false when Judge denies such text:
// an invalid or unmappable sequence, or an encoding it cannot read.
func ClientTextToUTF8(enc string, text []byte) ([]byte, bool) {
	if rawEncoding(enc) {
		return text, true
	}
	ce := lookupEncoding(enc)
	if ce == nil {
		return nil, false
	}
	return ce.toUTF8(text)
}

// toUTF8 converts text along PostgreSQL's character boundaries. ASCII bytes
// stay as they are (the server copies them too); each multibyte character
// must decode to exactly one non-ASCII character, else the text is refused:
// either the server rejects it as well, or the two tables disagree and the
// engine cannot be sure what the server will read.
func (enc *clientEncoding) toUTF8(text []byte) ([]byte, bool) {
	out := make([]byte, 0, len(text)+len(text)/2)
	var dec *encoding.Decoder
	if enc.dec != nil {
		dec = enc.dec.NewDecoder()
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < 0x80 {
			if c == 0 {
				return nil, false
			}
			out = append(out, c)
			i++
			continue
		}
		n := enc.char(text[i:])
		if n < 1 || i+n > len(text) {
			return nil, false
		}
		r, ok := enc.overrides[string(text[i:i+n])]
		if !ok {
			r = enc.decodeChar(dec, text[i:i+n])
		}
		if r < 0x80 || r == utf8.RuneError {
			return nil, false
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out, true
}

// decodeChar decodes one character with the Go tables (dec for multibyte
// encodings), or returns utf8.RuneError.
func (enc *clientEncoding) decodeChar(dec *encoding.Decoder, seq []byte) rune {
	if enc.cm != nil {
		return enc.cm.DecodeByte(seq[0])
	}
	var buf [16]byte
	dec.Reset()
	nDst, nSrc, err := dec.Transform(buf[:], seq, true)
	if err != nil || nSrc != len(seq) {
		return utf8.RuneError
	}
	r, size := utf8.DecodeRune(buf[:nDst])
	if size != nDst {
		return utf8.RuneError
	}
	return r
}

// escapeStrings rewrites every plain string literal of text (UTF-8) as an
// escape string literal, which is how PostgreSQL reads a plain literal with
// standard_conforming_strings off. It follows scan.l: comments (-- to the
// end of the line, nested /* */), quoted identifiers, dollar quotes, the
// literal prefixes E, B, X, N and U& (only at the start of a token), and
// literal continuation (a quote after white space holding a newline
// continues the literal before, in its own state). ok is false when a quote
// is glued to a number or parameter, whose reading differs between
// PostgreSQL versions.
func escapeStrings(text []byte) (out []byte, ok bool) {
	return escapeStringsMarks(text, nil)
}

// escapeStringsMarks is escapeStrings that also appends to marks (when not
// nil) the offset in out of the opening quote of each literal it rewrote.
func escapeStringsMarks(text []byte, marks *[]int) (out []byte, ok bool) {
	mark := func() {
		if marks != nil {
			*marks = append(*marks, len(out))
		}
	}
	out = make([]byte, 0, len(text)+16)
	n := len(text)
	last := 0 // text[last:i] is still to be copied
	i := 0
	for i < n {
		c := text[i]
		switch {
		case c == '-' && i+1 < n && text[i+1] == '-':
			i = lineCommentEnd(text, i)
		case c == '/' && i+1 < n && text[i+1] == '*':
			i = blockCommentEnd(text, i)
		case c == '"':
			i = quotedEnd(text, i+1, '"', false)
		case c == '\'':
			// A plain literal: the reading that changes.
			out = append(out, text[last:i]...)
			if i > 0 && isIdentPart(text[i-1]) {
				out = append(out, ' ') // a type name before it, as in date'...'
			}
			out = append(out, 'E')
			mark()
			last = i
			i = literalEnd(text, i+1)
		case c == '$':
			if j := dollarTagEnd(text, i); j > 0 {
				tag := text[i:j]
				k := bytes.Index(text[j:], tag)
				if k < 0 {
					i = n
				} else {
					i = j + k + len(tag)
				}
				break
			}
			j := i + 1
			for j < n && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			if j == i+1 {
				i++ // a lone $
				break
			}
			if k := junkEnd(text, j); k < n && text[k] == '\'' && k > j {
				return nil, false // $1x'...': trailing junk, read differently by versions
			} else {
				j = k
			}
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && text[i+1] >= '0' && text[i+1] <= '9':
			j0 := numberEnd(text, i)
			j := junkEnd(text, j0)
			if j < n && text[j] == '\'' && j > j0 {
				return nil, false // 1e'...': trailing junk, read differently by versions
			}
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentPart(text[j]) {
				j++
			}
			word := text[i:j]
			switch {
			case j < n && text[j] == '\'' && len(word) == 1:
				switch word[0] | 0x20 {
				case 'e':
					i = literalEnd(text, j+1)
				case 'b', 'x':
					i = bitLiteralEnd(text, j+1)
				case 'n':
					// NCHAR followed by a plain literal
					out = append(out, text[last:i]...)
					out = append(out, "NCHAR E"...)
					mark()
					last = j
					i = literalEnd(text, j+1)
				default:
					i = j // an identifier, then a plain literal
				}
			case len(word) == 1 && word[0]|0x20 == 'u' && j+1 < n && text[j] == '&' && (text[j+1] == '\'' || text[j+1] == '"'):
				// U&'...' (which the server rejects with these settings)
				// or U&"...": no backslash escapes either way.
				i = quotedEnd(text, j+2, text[j+1], text[j+1] == '\'')
			default:
				i = j
			}
		default:
			i++
		}
	}
	out = append(out, text[last:]...)
	return out, true
}

// lineCommentEnd returns the end of the -- comment at i: the next CR or LF.
func lineCommentEnd(text []byte, i int) int {
	for i < len(text) && text[i] != '\n' && text[i] != '\r' {
		i++
	}
	return i
}

// blockCommentEnd returns the end of the (nested) /* comment at i.
func blockCommentEnd(text []byte, i int) int {
	depth := 0
	for i < len(text) {
		if text[i] == '/' && i+1 < len(text) && text[i+1] == '*' {
			depth++
			i += 2
			continue
		}
		if text[i] == '*' && i+1 < len(text) && text[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return i
			}
			continue
		}
		i++
	}
	return i
}

// quotedEnd returns the end of a quoted identifier or standard literal whose
// body starts at i: the closing q not doubled. A standard literal may go on
// after a continuation.
func quotedEnd(text []byte, i int, q byte, literal bool) int {
	for i < len(text) {
		if text[i] == q {
			if i+1 < len(text) && text[i+1] == q {
				i += 2
				continue
			}
			i++
			if literal {
				if k := continuation(text, i); k > 0 {
					i = k
					continue
				}
			}
			return i
		}
		i++
	}
	return i
}

// literalEnd returns the end of an escape string literal (E'...', or a plain
// one read with standard_conforming_strings off) whose body starts at i.
func literalEnd(text []byte, i int) int {
	for i < len(text) {
		switch text[i] {
		case '\\':
			i += 2
			continue
		case '\'':
			if i+1 < len(text) && text[i+1] == '\'' {
				i += 2
				continue
			}
			i++
			if k := continuation(text, i); k > 0 {
				i = k
				continue
			}
			return i
		}
		i++
	}
	return len(text)
}

// bitLiteralEnd returns the end of a B'...' or X'...' literal whose body
// starts at i: the first quote (scan.l's xb and xh take no doubled quote).
func bitLiteralEnd(text []byte, i int) int {
	for i < len(text) {
		if text[i] == '\'' {
			i++
			if k := continuation(text, i); k > 0 {
				i = k
				continue
			}
			return i
		}
		i++
	}
	return i
}

// continuation returns the position after the opening quote of a literal
// continuation starting at i (scan.l's quotecontinue: blanks or -- comments
// holding at least one newline, then a quote), or 0.
func continuation(text []byte, i int) int {
	newline := false
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\n' || c == '\r':
			newline = true
			i++
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '\v' && newline:
			i++
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			i = lineCommentEnd(text, i)
		case c == '\'' && newline:
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// dollarTagEnd returns the end of a dollar-quote delimiter ($tag$ or $$)
// starting at i, or 0. (A $ inside an identifier, a$b, never gets here:
// identifiers are read whole.)
func dollarTagEnd(text []byte, i int) int {
	j := i + 1
	if j < len(text) && (text[j] >= '0' && text[j] <= '9') {
		return 0
	}
	for j < len(text) && isIdentPart(text[j]) && text[j] != '$' {
		j++
	}
	if j < len(text) && text[j] == '$' {
		return j + 1
	}
	return 0
}

// numberEnd returns the end of the numeric literal at i (scan.l: decimal,
// hexadecimal, octal and binary integers with underscores, a fraction, an
// exponent).
func numberEnd(text []byte, i int) int {
	n := len(text)
	digits := func(j int, ok func(byte) bool) int {
		for j < n && (ok(text[j]) || text[j] == '_') {
			j++
		}
		return j
	}
	dec := func(c byte) bool { return c >= '0' && c <= '9' }
	if text[i] == '0' && i+1 < n && strings.IndexByte("xXoObB", text[i+1]) >= 0 {
		return digits(i+2, func(c byte) bool { return dec(c) || c|0x20 >= 'a' && c|0x20 <= 'f' })
	}
	j := digits(i, dec)
	if j < n && text[j] == '.' && !(j+1 < n && text[j+1] == '.') {
		j = digits(j+1, dec)
	}
	if j < n && text[j]|0x20 == 'e' {
		k := j + 1
		if k < n && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < n && dec(text[k]) {
			j = digits(k, dec)
		}
	}
	return j
}

// junkEnd returns the end of an identifier glued to a number or parameter
// ending at j ("trailing junk", which the parser rejects), or j.
func junkEnd(text []byte, j int) int {
	if j < len(text) && isIdentStart(text[j]) {
		for j < len(text) && isIdentPart(text[j]) {
			j++
		}
	}
	return j
}

// offReading is for SQL text the server lexes later, when it runs, with the
// standard_conforming_strings of that moment rather than the message's: a
// DO block or function body, and SQL text a function or EXECUTE runs. Such
// text is judged under both readings. offReading returns the text as read
// with the setting off, when that differs from reading it with the setting
// on. The rewritten text reads the same either way, so offReading of it
// differs no more. Text escapeStrings refuses (a literal glued to a
// trailing-junk number) is refused by the parser in either reading.
func offReading(text string) (alt string, differs bool) {
	if strings.IndexByte(text, '\\') < 0 {
		return "", false
	}
	out, ok := escapeStrings([]byte(text))
	if !ok || string(out) == text {
		return "", false
	}
	return string(out), true
}

// alsoOff judges text, which the server lexes when it runs, also as read
// with standard_conforming_strings off (judge(alt)), when that reading
// differs. A reading the parser rejects is one the server rejects as a
// whole before running any of it, so an unparsed mark the other reading
// leaves is taken back; its other facts stay (more facts can only deny).
func (w *walker) alsoOff(text string, judge func(alt string)) {
	alt, differs := offReading(text)
	if !differs {
		return
	}
	before := w.f.Unparsed
	judge(alt)
	w.f.Unparsed = before
}

// withOffReadings returns PL/pgSQL bodies together with their readings
// with standard_conforming_strings off that differ and that the PL/pgSQL
// parser accepts (a body it rejects is rejected by the server when called,
// before any of it runs).
func withOffReadings(bodies []string) []string {
	out := bodies
	for _, b := range bodies {
		alt, differs := offReading(b)
		if !differs {
			continue
		}
		tag := "$sqlfw$"
		for i := 0; strings.Contains(alt, tag); i++ {
			tag = "$sqlfw" + strconv.Itoa(i) + "$"
		}
		if _, err := pg_query.ParsePlPgSqlToJSON("CREATE FUNCTION sqlfw_f() RETURNS void LANGUAGE plpgsql AS " + tag + alt + tag); err == nil {
			if len(out) == len(bodies) {
				out = append([]string(nil), bodies...)
			}
			out = append(out, alt)
		}
	}
	return out
}
