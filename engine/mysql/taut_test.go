package mysql

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// whereOf parses SELECT 1 FROM t WHERE cond and calls use with its WHERE
// and the statement's X'...' literals.
func whereOf(t *testing.T, cond string, use func(ast.ExprNode, map[string]bool)) {
	t.Helper()
	text := "SELECT 1 FROM t WHERE " + cond
	parse(text, func(stmts []ast.StmtNode, err error) {
		if err != nil {
			t.Fatalf("%q: %v", cond, err)
		}
		use(stmts[0].(*ast.SelectStmt).Where, hexForms(text))
	})
}

// TestFoldValues: constants fold to the value MariaDB 10.11 computes
// (checked with SELECT on the server; see testdata/adversarial/11-folding.tsv).
func TestFoldValues(t *testing.T) {
	type want struct {
		null bool
		num  float64
		str  string // compared when isStr
		str2 bool   // the value is a string
	}
	tests := []struct {
		name, expr string
		mariadb    bool // fold with MariaDB's reading of X'' literals
		ok         bool
		want       want
	}{
		{"bit not", "~0 > 18446744073709551614", false, false, want{}}, // beyond 2^53: not decided
		{"bit not is true", "~0 > 0", false, true, want{num: 1}},
		{"bit or", "1 | 2", false, true, want{num: 3}},
		{"bit and", "6 & 3", false, true, want{num: 2}},
		{"bit xor", "5 ^ 1", false, true, want{num: 4}},
		{"shift left", "1 << 4", false, true, want{num: 16}},
		{"shift past 64", "1 << 64", false, true, want{num: 0}},
		{"shift right", "256 >> 4", false, true, want{num: 16}},
		{"negative in two's complement", "-1 | 0 > 0", false, true, want{num: 1}},
		{"bit op rounds", "1.5 | 0", false, true, want{num: 2}},
		{"string in bit op", "'3abc' | 0", false, true, want{num: 3}},
		{"div", "7 / 2", false, true, want{num: 3.5}},
		{"intdiv", "7 DIV 2", false, true, want{num: 3}},
		{"mod", "-7 % 3", false, true, want{num: -1}},
		{"MOD keyword", "7 MOD 3", false, true, want{num: 1}},
		{"div by zero is NULL", "1 / 0", false, true, want{null: true}},
		{"intdiv by zero is NULL", "1 DIV 0", false, true, want{null: true}},
		{"mod by zero is NULL", "1 % 0", false, true, want{null: true}},
		{"row equal", "(1, 'a') = (1, 'A')", false, true, want{num: 1}},
		{"row differs", "(1, 1) = (1, 2)", false, true, want{num: 0}},
		{"row null", "(1, NULL) = (1, 1)", false, true, want{null: true}},
		{"row null-safe", "(NULL, 1) <=> (NULL, 1)", false, true, want{num: 1}},
		{"case searched", "CASE WHEN 0 THEN 5 WHEN 1 THEN 7 END", false, true, want{num: 7}},
		{"case simple", "CASE 'b' WHEN 'a' THEN 1 WHEN 'B' THEN 2 END", false, true, want{num: 2}},
		{"case no else", "CASE WHEN 0 THEN 1 END", false, true, want{null: true}},
		{"if", "IF(0, 1, 2)", false, true, want{num: 2}},
		{"ifnull", "IFNULL(NULL, 3)", false, true, want{num: 3}},
		{"coalesce", "COALESCE(NULL, NULL, 'x')", false, true, want{str2: true, str: "x"}},
		{"nullif equal", "NULLIF(1, 1)", false, true, want{null: true}},
		{"elt", "ELT(2, 'a', 'b')", false, true, want{str2: true, str: "b"}},
		{"elt out of range", "ELT(3, 'a')", false, true, want{null: true}},
		{"field", "FIELD('b', 'a', 'b')", false, true, want{num: 2}},
		{"date literal", "DATE'2020-01-01' = '2020-01-01'", false, true, want{num: 1}},
		{"odbc date", "{d '2020-01-01'} < {d '2021-01-01'}", false, true, want{num: 1}},
		{"date vs datetime", "TIMESTAMP'2020-01-01 00:00:00' = DATE'2020-01-01'", false, true, want{num: 1}},
		{"date as number", "DATE'2020-01-01' = 20200101", false, true, want{num: 1}},
		{"time literal", "TIME'10:00:00' = '10:00:00'", false, true, want{num: 1}},
		{"date literal non-canonical string", "DATE'2020-01-01' = '2020-1-1'", false, false, want{}},
		{"ci collation", "'a' = 'A'", false, true, want{num: 1}},
		{"bin collation", "'a' = 'A' COLLATE utf8mb4_bin", false, true, want{num: 0}},
		{"_binary introducer", "_binary'a' = 'A'", false, true, want{num: 0}},
		{"BINARY", "BINARY 'a' = 'A'", false, true, want{num: 0}},
		{"N''", "N'a' = 'A'", false, true, want{num: 1}},
		{"trailing spaces", "'a ' = 'a'", false, true, want{num: 1}},
		{"non-ASCII undecided", "'é' = 'e'", false, false, want{}},
		{"string as number", "'1abc' = 1", false, true, want{num: 1}},
		{"word is zero", "'a' = 0", false, true, want{num: 1}},
		{"exponent", "'1e1' = 10", false, true, want{num: 1}},
		{"0x is a number next to a number", "0x31 = 49", false, true, want{num: 1}},
		{"0x is a string next to a string", "0x61 = 'a'", false, true, want{num: 1}},
		{"X'' in MySQL's reading", "X'01'", false, true, want{num: 1}},
		{"X'' in MariaDB's reading", "X'01'", true, true, want{num: 0}},
		{"X'' as a string in MariaDB", "X'31' = 1", true, true, want{num: 1}},
		{"X'' as a number in MySQL", "X'31' = 1", false, true, want{num: 0}},
		{"bit literal", "b'11' = 3", false, true, want{num: 1}},
		{"char", "CHAR(65, 0x42)", false, true, want{str2: true, str: "AB"}},
		{"char using", "CHAR(97 USING utf8mb4) = 'a'", false, true, want{num: 1}},
		{"concat null", "CONCAT('a', NULL)", false, true, want{null: true}},
		{"concat_ws", "CONCAT_WS('-', 'a', NULL, 'b')", false, true, want{str2: true, str: "a-b"}},
		{"ascii", "ASCII('a')", false, true, want{num: 97}},
		{"length", "LENGTH('abc')", false, true, want{num: 3}},
		{"isnull", "ISNULL(NULL)", false, true, want{num: 1}},
		{"pi", "PI() > 3.14", false, true, want{num: 1}},
		{"upper", "UPPER('ab')", false, true, want{str2: true, str: "AB"}},
		{"reverse", "REVERSE('ab')", false, true, want{str2: true, str: "ba"}},
		{"hex string", "HEX('a')", false, true, want{str2: true, str: "61"}},
		{"hex number", "HEX(255)", false, true, want{str2: true, str: "FF"}},
		{"unhex", "UNHEX('6162')", false, true, want{str2: true, str: "ab"}},
		{"abs floor ceil round", "ABS(-1) + FLOOR(1.5) + CEIL(1.2) + ROUND(1.5)", false, true, want{num: 6}},
		{"truncate", "TRUNCATE(1.99, 1)", false, true, want{num: 1.9}},
		{"greatest numbers", "GREATEST(1, '10', 3)", false, true, want{num: 10}},
		{"least strings", "LEAST('b', 'a')", false, true, want{str2: true, str: "a"}},
		{"strcmp", "STRCMP('a', 'b')", false, true, want{num: -1}},
		{"instr", "INSTR('abc', 'C')", false, true, want{num: 3}},
		{"locate from", "LOCATE('a', 'aba', 2)", false, true, want{num: 3}},
		{"position", "POSITION('b' IN 'abc')", false, true, want{num: 2}},
		{"left right", "CONCAT(LEFT('abc', 1), RIGHT('abc', 1))", false, true, want{str2: true, str: "ac"}},
		{"substr negative", "SUBSTR('abcd', -2)", false, true, want{str2: true, str: "cd"}},
		{"substring from for", "SUBSTRING('abc' FROM 2 FOR 1)", false, true, want{str2: true, str: "b"}},
		{"trim leading", "TRIM(LEADING 'x' FROM 'xxa')", false, true, want{str2: true, str: "a"}},
		{"repeat", "REPEAT('ab', 2)", false, true, want{str2: true, str: "abab"}},
		{"repeat too large", "REPEAT('a', 100000)", false, false, want{}},
		{"cast signed", "CAST('12x' AS SIGNED)", false, true, want{num: 12}},
		{"convert unsigned", "CONVERT('-1', UNSIGNED) > 0", false, true, want{num: 1}},
		{"subquery without FROM", "(SELECT 5)", false, true, want{num: 5}},
		{"exists without FROM", "EXISTS (SELECT 1)", false, true, want{num: 1}},
		{"not exists without FROM", "NOT EXISTS (SELECT 1)", false, true, want{num: 0}},
		{"in subquery", "1 IN (SELECT 1)", false, true, want{num: 1}},
		{"any subquery", "2 > ANY (SELECT 1)", false, true, want{num: 1}},
		{"subquery with FROM", "(SELECT 1 FROM u)", false, false, want{}},
		{"like", "'abc' LIKE 'a_c'", false, true, want{num: 1}},
		{"like no case", "'ABC' LIKE 'a%'", false, true, want{num: 1}},
		{"like escape", "'a%' LIKE 'a|%' ESCAPE '|'", false, true, want{num: 1}},
		{"like escaped wildcard", "'ab' LIKE 'a\\%'", false, true, want{num: 0}},
		{"regexp empty", "'a' REGEXP ''", false, true, want{num: 1}},
		{"rlike dot star", "'a' RLIKE '.*'", false, true, want{num: 1}},
		{"regexp anchored", "'ab' REGEXP '^$'", false, true, want{num: 0}},
		{"regexp no case", "'a' REGEXP 'A'", false, true, want{num: 1}},
		{"not", "NOT 0", false, true, want{num: 1}},
		{"bang", "!!1", false, true, want{num: 1}},
		{"double minus", "-(-1)", false, true, want{num: 1}},
		{"xor", "1 XOR 1", false, true, want{num: 0}},
		{"xor null", "1 XOR NULL", false, true, want{null: true}},
		{"or null", "NULL OR 1", false, true, want{num: 1}},
		{"and null", "NULL AND 0", false, true, want{num: 0}},
		{"null-safe", "NULL <=> NULL", false, true, want{num: 1}},
		{"between", "'b' BETWEEN 'a' AND 'c'", false, true, want{num: 1}},
		{"in null", "1 IN (2, NULL)", false, true, want{null: true}},
		{"is true", "2 IS TRUE", false, true, want{num: 1}},
		{"is not false null", "NULL IS NOT FALSE", false, true, want{num: 1}},
		{"is unknown", "NULL IS UNKNOWN", false, true, want{num: 1}},
		{"assignment", "(@a := 1)", false, true, want{num: 1}},
		{"variable", "@a", false, false, want{}},
		{"system variable", "@@version > 0", false, false, want{}},
		{"server function", "VERSION()", false, false, want{}},
		{"parameter", "? = 1", false, false, want{}},
		{"stored function", "db.f(1)", false, false, want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whereOf(t, tt.expr, func(e ast.ExprNode, xhex map[string]bool) {
				fo := &folder{xhex: xhex, xStr: tt.mariadb}
				v, ok := fo.fold(e, 0)
				if ok != tt.ok {
					t.Fatalf("%s: folded %v (%+v), want %v", tt.expr, ok, v, tt.ok)
				}
				if !ok {
					return
				}
				switch {
				case v.null != tt.want.null:
					t.Errorf("%s: null %v, want %v", tt.expr, v.null, tt.want.null)
				case tt.want.str2 && (!v.isStr || v.str != tt.want.str):
					t.Errorf("%s: %+v, want string %q", tt.expr, v, tt.want.str)
				case !tt.want.str2 && !v.null && (num(v) < tt.want.num-1e-9 || num(v) > tt.want.num+1e-9):
					t.Errorf("%s: %v (%+v), want %v", tt.expr, num(v), v, tt.want.num)
				}
			})
		})
	}
}

// TestTruth: conditions that are true for every row without being
// constant, and ones that are not.
func TestTruth(t *testing.T) {
	tests := []struct {
		name, cond string
		always     bool
	}{
		{"column equals itself", "id = id", true},
		{"plus zero", "id = id + 0", true},
		{"zero plus", "id = 0 + id", true},
		{"times one", "name = name * 1", true},
		{"divided by one", "id = id / 1", true},
		{"binary self", "name = BINARY name", true},
		{"in itself", "id IN (1, id)", true},
		{"null-safe self", "id <=> id", true},
		{"between itself", "id BETWEEN id AND id", true},
		{"function of itself", "LOWER(name) = LOWER(name)", true},
		{"rand is not itself", "RAND() = RAND()", false},
		{"parameters differ", "? = ?", false},
		{"not equal itself", "id <> id", false},
		{"x or not x", "a = 1 OR NOT a = 1", true},
		{"complement ops", "id < 5 OR id >= 5", true},
		{"null test pair", "id IS NULL OR id IS NOT NULL", true},
		{"truth test pair", "a IS TRUE OR a IS NOT TRUE", true},
		{"like pair", "name LIKE 'a%' OR name NOT LIKE 'a%'", true},
		{"like percent", "name LIKE '%'", true},
		{"like empty", "name LIKE ''", false},
		{"not like percent", "name NOT LIKE '%'", false},
		{"regexp empty", "name REGEXP ''", true},
		{"regexp anchored", "name REGEXP '^a'", false},
		{"if both true", "IF(id > 0, 1, 'x' = 'x')", true},
		{"case all true", "CASE WHEN id > 0 THEN 1 ELSE 2 END", true},
		{"case may be null", "CASE WHEN id > 0 THEN 1 END", false},
		{"coalesce first true", "COALESCE(1, id)", true},
		{"and of trues", "id = id AND 1", true},
		{"and with a filter", "1 = 1 AND id = 5", false},
		{"or with true arm", "id = 5 OR 1", true},
		{"xor with false", "(id = id) XOR 0", true},
		{"not not", "NOT NOT (id = id)", true},
		{"ifnull never null", "IFNULL(name, 1) IS NOT NULL", true},
		{"coalesce never null", "COALESCE(a, b, 0) IS NOT NULL", true},
		{"is test never null", "(a IS NULL) IS NOT NULL", true},
		{"null-safe never null", "(a <=> 1) IS NOT NULL", true},
		{"isnull never null", "ISNULL(a) IS NOT NULL", true},
		{"ifnull of columns may be null", "IFNULL(a, b) IS NOT NULL", false},
		{"never null is null", "IFNULL(a, 1) IS NULL", false},
		{"not differs from itself", "NOT (id <> id)", true},
		{"collate self", "name = name COLLATE utf8mb4_bin", true},
		{"minus minus", "id = - - id", true},
		{"is not null alone", "id IS NOT NULL", false}, // true only on a NOT NULL column: not decidable without the schema
		// The same expression through identity operations, plus constants,
		// and values the same for every row (counted as x = x is where
		// the column is NULL).
		{"difference with itself", "id - id = 0", true},
		{"times zero", "a * 0 = 0", true},
		{"xor with itself", "id ^ id = 0", true},
		{"and zero", "id & 0 = 0", true},
		{"times two is not zero", "a * 2 = 0", false},
		{"difference of columns", "id - a = 0", false},
		{"cast signed", "id = CAST(id AS SIGNED)", true},
		{"cast char is not identity", "id = CAST(id AS CHAR(1))", false},
		{"round", "id = ROUND(id)", true},
		{"round to 2 places is not folded", "id = ROUND(id, 2)", false},
		{"floor ceil truncate", "FLOOR(id) = CEILING(TRUNCATE(id, 0))", true},
		{"div one", "id = id DIV 1", true},
		{"div two", "id = id DIV 2", false},
		{"or zero", "id = id | 0", true},
		{"or one", "id = id | 1", false},
		{"and itself", "id = id & id", true},
		{"and other", "id = id & a", false},
		{"greatest of itself", "id = GREATEST(id, id)", true},
		{"greatest of two", "id = GREATEST(id, a)", false},
		{"coalesce first", "id = COALESCE(id, 0)", true},
		{"coalesce of another", "id = COALESCE(a, id)", false},
		{"if true", "id = IF(1, id, 0)", true},
		{"if null takes else", "id = IF(NULL, 0, id)", true},
		{"if on the row", "id = IF(a, id, 0)", false},
		{"concat one", "CONCAT(id) = id", true},
		{"concat two", "CONCAT(id, 'x') = id", false},
		{"like itself", "name LIKE name", true},
		{"not like itself", "name NOT LIKE name", false},
		{"like another", "name LIKE role", false},
		{"row with itself", "ROW(id, a) = ROW(id, a)", true},
		{"row in itself", "(id, a) IN ((id, a))", true},
		{"row with another", "(id, a) = (id, 5)", false},
		{"comparison equals one", "(id = id) = 1", true},
		{"comparison equals zero", "(id <> id) = 0", true},
		{"comparison on the row", "(id = a) = 1", false},
		{"less than plus one", "id < id + 1", true},
		{"plus one greater", "id + 1 > id", true},
		{"minus one less", "id - 1 < id", true},
		{"offsets sum", "id + 2 - 1 > id", true},
		{"greater than plus one", "id > id + 1", false},
		{"equal plus one", "id = id + 1", false},
		{"differs from plus one", "id <> id + 1", true},
		{"not in plus one", "id NOT IN (id + 1, id - 1)", true},
		{"in plus one", "id IN (id + 1)", false},
		{"not in with a constant", "id NOT IN (id + 1, 5)", false},
		{"isnull or is not null", "ISNULL(name) OR name IS NOT NULL", true},
		{"not both null tests", "NOT (name IS NULL AND name IS NOT NULL)", true},
		{"length is value-dependent", "LENGTH(name) > 0", false},    // LENGTH('') = 0
		{"regexp dot is value-dependent", "name REGEXP '.'", false}, // '' does not match
		{"comparison is not null", "(a = 1) IS NOT NULL", false},    // a IS NOT NULL, as above
		{"variable", "@a", false},
		// NULL tests decided by cases (tautnull.go): true whether a is
		// NULL or not.
		{"isnull = 0 or is null", "ISNULL(a) = 0 OR a IS NULL", true},
		{"isnull in 0, 1", "ISNULL(a) IN (0, 1)", true},
		{"isnull at least 0", "ISNULL(a) >= 0", true},
		{"isnull at most 1", "ISNULL(a) <= 1", true},
		{"isnull not 2", "ISNULL(a) <> 2", true},
		{"isnull plus 1 positive", "ISNULL(a) + 1 > 0", true},
		{"isnull = 0 or = 1", "ISNULL(a) = 0 OR ISNULL(a) = 1", true},
		{"null-safe null and is not null", "a <=> NULL OR a IS NOT NULL", true},
		{"null and null-safe null", "NULL <=> a OR NOT ISNULL(a)", true},
		{"not null-safe null or null-safe null", "NOT a <=> NULL OR a <=> NULL", true},
		{"null-safe null = 0 or is null", "(a <=> NULL) = 0 OR a IS NULL", true},
		{"is null equals isnull", "(a IS NULL) = ISNULL(a)", true},
		{"isnull xor is not null", "ISNULL(a) XOR a IS NOT NULL", true},
		{"is null is not true or is null", "a IS NULL IS NOT TRUE OR a IS NULL", true},
		{"null test of a computed null", "a <=> (SELECT NULL) OR a IS NOT NULL", true},
		{"two columns", "(a IS NULL OR b IS NULL) OR (NOT ISNULL(a) AND b IS NOT NULL) OR (a IS NULL AND b IS NOT NULL)", true},
		{"many columns, one decides", "b IS NULL AND 0 OR c IS NULL AND 0 OR d IS NULL AND 0 OR e IS NULL AND 0 OR ISNULL(a) = 0 OR a IS NULL", true},
		{"isnull = 0 alone", "ISNULL(a) = 0", false},            // a IS NOT NULL
		{"not isnull alone", "NOT ISNULL(a)", false},            // the same
		{"null-safe null alone", "a <=> NULL", false},           // a IS NULL
		{"not null-safe null alone", "NOT (a <=> NULL)", false}, // a IS NOT NULL
		{"isnull = 0 or another column", "ISNULL(a) = 0 OR b IS NULL", false},
		{"isnull and a filter", "ISNULL(a) >= 0 AND a = 5", false},
		{"isnull of a qualified other name", "ISNULL(t.a) = 0 OR a IS NULL", false}, // two names to the split
		{"in a subquery", "ISNULL(a) = 0 OR EXISTS (SELECT * FROM u WHERE a IS NULL)", false},
		// Tenth round (tautwrap.go): rows in order, absorbing operands,
		// wrappers, templates, JSON constructors, NULL guards, bounds.
		{"row decided by its second pair", "ROW(id, 1) > ROW(id, 0)", true},
		{"row less than", "(id, 0) < (id, 1)", true},
		{"row at most itself", "(id, a) <= (id, a)", true},
		{"row differs in a pair", "(id, 1) <> (id, 2)", true},
		{"row decided the other way", "(id, 0) > (id, 1)", false},
		{"row first pair on the row", "(id, 1) > (a, 0)", false},
		{"row of constants first", "(id, 1) > (5, 0)", false},
		{"or all ones", "id | ~0 = ~0", true},
		{"or all ones as a truth", "id | ~0", true},
		{"or minus one as a truth", "id | -1", true},
		{"or minus one is not minus one", "id | -1 = -1", false}, // 18446744073709551615
		{"shift past 64", "id << 64 = 0", true},
		{"and zero then or", "(id & 0) | 1 = 1", true},
		{"or one", "id | 1 = 1", false},
		{"xor itself", "NOT (a = 1 XOR a = 1)", true},
		{"xor complement", "a = 1 XOR a <> 1", true},
		{"xor against = 0", "id XOR id = 0", true}, // id XOR (id = 0)
		{"xor of two", "a XOR b", false},
		{"cast char", "CAST(id AS CHAR) = id", true},
		{"convert using", "CONVERT(id USING latin1) = id", true},
		{"cast decimal", "CAST(id AS DECIMAL) = id", true},
		{"cast decimal of one digit cuts", "CAST(id AS DECIMAL(1)) = id", false},
		{"trim", "TRIM(id) = id", true},
		{"trim spaces both", "TRIM(BOTH ' ' FROM id) = id", true},
		{"trim another character", "TRIM(LEADING '1' FROM id) = id", false},
		{"substring from 1", "SUBSTRING(id, 1) = id", true},
		{"substring from 2", "SUBSTRING(id, 2) = id", false},
		{"concat with empty", "CONCAT('', id, '') = id", true},
		{"json extract of its object", "JSON_EXTRACT(JSON_OBJECT('k', id), '$.k') = id", true},
		{"json extract of another key", "JSON_EXTRACT(JSON_OBJECT('k', id), '$.j') = id", false},
		{"json extract of a repeated key", "JSON_EXTRACT(JSON_OBJECT('k', id, 'k', 1), '$.k') = id", false},
		{"json extract of its array", "JSON_EXTRACT(JSON_ARRAY(a, id), '$[1]') = id", true},
		{"json extract past the array", "JSON_EXTRACT(JSON_ARRAY(id), '$[1]') = id", false},
		{"trim differs", "TRIM(name) <> name", false},
		{"concat suffix", "CONCAT(id, 'x') LIKE '%x'", true},
		{"concat prefix and suffix", "CONCAT('a', id, 'b') LIKE 'a%b'", true},
		{"concat case", "CONCAT(id, 'X') LIKE '%x'", true},
		{"concat binary case", "CONCAT(id, _binary'X') LIKE '%x'", false},
		{"concat one character before", "CONCAT(id, 'x') LIKE '%_x'", false}, // the gap may be empty
		{"concat prefix under percent", "CONCAT('x', id) LIKE '%x'", false},
		{"concat escape", "CONCAT(id, '%') LIKE '%|%' ESCAPE '|'", true},
		{"concat not like", "CONCAT(id, 'x') NOT LIKE '%x'", false},
		{"json valid of an array", "JSON_VALID(JSON_ARRAY(id))", true},
		{"json valid of a column", "JSON_VALID(doc)", false},
		{"json type of an object", "JSON_TYPE(JSON_OBJECT('k', id)) = 'OBJECT'", true},
		{"json length of an array", "JSON_LENGTH(JSON_ARRAY(id, a)) = 2", true},
		{"ifnull guard", "IFNULL(a, 1) OR a IS NOT NULL", true},
		{"ifnull guard to 0", "IFNULL(a, 0) OR a IS NOT NULL", false}, // false where a is NULL
		{"arithmetic of null", "a + 1 IS NULL OR a IS NOT NULL", true},
		{"greatest bound", "GREATEST(id, 1) >= 1", true},
		{"greatest above its bound", "GREATEST(id, 1) > 1", false},
		{"least bound", "LEAST(id, 3) <> 4", true},
		{"or bound", "id | 4 >= 4", true},
		{"crc32 bound", "CRC32(name) < 4294967296", true},
		{"past every integer below", "id > -1e30", true},
		{"past every integer above", "id <> 1e300", true},
		{"between past integers", "id BETWEEN -1e30 AND 1e30", true},
		{"between plus and minus", "id BETWEEN id - 1 AND id + 1", true},
		{"equal past integers", "id = 1e30", false},
		{"within bigint", "id > -9000000000000000000", false},
		{"at bigint's least", "id > -9223372036854775809", true},
		{"at bigint unsigned's greatest", "id < 18446744073709551615", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whereOf(t, tt.cond, func(e ast.ExprNode, _ map[string]bool) {
				fo := &folder{}
				if got := fo.alwaysTrue(e); got != tt.always {
					t.Errorf("%s: alwaysTrue %v, want %v (truth %b)", tt.cond, got, tt.always, fo.truthOf(e, 0))
				}
			})
		})
	}
}

// TestTautologyFacts: the Tautology fact of whole statements.
func TestTautologyFacts(t *testing.T) {
	tests := []struct {
		name, sql string
		taut      bool
	}{
		{"or one", "SELECT * FROM t WHERE id = 9 OR 1", true},
		{"or bit not", "SELECT * FROM t WHERE id = 9 OR ~0", true},
		{"or variable", "SELECT * FROM t WHERE id = 9 OR @a", true},
		{"or system variable", "SELECT * FROM t WHERE id = 9 OR @@version > 0", true},
		{"or server function", "SELECT * FROM t WHERE id = 9 OR VERSION()", true},
		{"or uncorrelated count", "SELECT * FROM t WHERE id = 9 OR (SELECT COUNT(*) FROM u) > 0", true},
		{"or exists whole table", "SELECT * FROM t WHERE id = 9 OR EXISTS (SELECT * FROM u)", true},
		{"or exists filtered", "SELECT * FROM t WHERE id = 9 OR EXISTS (SELECT 1 FROM u WHERE u.x = 1)", false},
		{"or false", "SELECT * FROM t WHERE id = 9 OR 1 = 0", false},
		{"or null", "SELECT * FROM t WHERE id = 9 OR NULL", false},
		{"or parameter", "SELECT * FROM t WHERE id = 9 OR ?", false},
		{"all arms row-free", "SELECT 1 FROM dual WHERE @x = 1 OR @x = 2", false},
		{"all arms row-free but one true", "SELECT 1 FROM dual WHERE @x = 1 OR 1 = 1", true},
		{"or sleep", "SELECT * FROM t WHERE id = 9 OR SLEEP(1)", false}, // a time probe's
		{"complement", "SELECT * FROM t WHERE a IS NULL OR a IS NOT NULL", true},
		{"x or not x", "SELECT * FROM t WHERE a = 1 OR NOT (a = 1)", true},
		{"builder idiom", "SELECT * FROM t WHERE 1=1 AND id = 5", false},
		{"optional filter variable", "SELECT * FROM t WHERE (name = @n OR @n IS NULL)", false},
		{"optional filter empty", "SELECT * FROM t WHERE (name = @n OR @n = '')", false},
		{"optional filter inlined null", "SELECT * FROM t WHERE (name = NULL OR NULL IS NULL)", false},
		{"lone null is null", "SELECT * FROM t WHERE id = 1 OR NULL IS NULL", true},
		{"variable elsewhere", "SELECT * FROM t WHERE (name = 'x' OR @n IS NULL)", true},
		{"wrapped in IS TRUE", "SELECT * FROM t WHERE (id = 9 OR 0x01) IS TRUE", true},
		{"wrapped in IF", "SELECT * FROM t WHERE IF(id = 9 OR 1|0, 1, 0)", true},
		{"in ON", "SELECT * FROM t JOIN u ON t.id = u.tid OR DATE'2020-01-01'", true},
		{"in HAVING", "SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1 OR ~0", true},
		{"X'' true in MariaDB only", "SELECT * FROM t WHERE id = 9 OR X'31' = 1", true},
		{"X'' true in MySQL only", "SELECT * FROM t WHERE id = 9 OR X'01'", true},
		{"X'' false in both", "SELECT * FROM t WHERE id = 9 OR X'00'", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql, engine.LexStats{})
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("%q: parse error %v", tt.sql, tf.ParseReason)
			}
			if got := tf.Stmts[0].Tautology; got != tt.taut {
				t.Errorf("%q: Tautology %v, want %v", tt.sql, got, tt.taut)
			}
		})
	}
}

// FuzzFoldCondition: folding, the truth of a condition, the tautology and
// the written rows of any WHERE never panic (the corpus' conditions and
// the functions of foldFunc with extreme arguments seed it).
func FuzzFoldCondition(f *testing.F) {
	for _, s := range []string{
		"~0", "1 << 64", "-1 | 0", "5 DIV 0", "(1, 2) = (1, 2)", "CASE 1 WHEN 1 THEN 2 END", "DATE'2020-01-01' = '2020-01-01'",
		"X'31' = 1", "_binary'a' = 'A'", "'a' RLIKE '(x|)*'", "'a%' LIKE 'a|%' ESCAPE '|'", "SUBSTR('abc', -1e300)",
		"LEFT('abc', 1e300)", "REPEAT('ab', 5e18)", "SPACE(1e300)", "LOCATE('a', 'b', -1e300)", "ELT(1e300, 1)",
		"ROUND(1, 1e300)", "CHAR(-1, 1e300)", "UNHEX('zz')", "HEX(-1)", "TRIM(LEADING '' FROM 'a')", "id = id + 0",
		"a = 1 OR NOT a = 1", "(name = @n OR @n IS NULL)", "EXISTS (SELECT * FROM u)", "id IN (SELECT id FROM t)",
		"IFNULL(a, 1) IS NOT NULL", "TIME'25:00:00'", "TIMESTAMP'2020-13-01 00:00:00'", "CONCAT_WS(NULL, 1)",
		"id < id + 1e300", "id - id = 0", "IF(NULL, 0, id) = ROUND(id, 0)", "(id, a) IN ((id, a))", "(id = id) = 1",
		"id NOT IN (id + 1, id - 1)", "id IN (SELECT id FROM (SELECT id FROM t) x)", "t.id = t2.id",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		if len(cond) > 512 {
			return
		}
		for _, q := range []string{"SELECT * FROM t WHERE id = 9 OR " + cond, "DELETE FROM t WHERE " + cond,
			"UPDATE t, u SET t.a = 1 WHERE " + cond, "REPLACE INTO t SELECT * FROM t WHERE " + cond} {
			analyze(q, engine.LexStats{})
		}
	})
}
