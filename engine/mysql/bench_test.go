package mysql

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// Benchmarks report costs; nothing here asserts a timing.

const (
	benchPointSelect = "SELECT c FROM sbtest1 WHERE id=4990"
	bench3Join       = "SELECT a.id, a.k, b.c, t.pad, LOWER(a.c) " +
		"FROM sbtest1 a JOIN sbtest2 b ON b.id = a.id " +
		"JOIN sbtest3 t ON t.k = b.k " +
		"WHERE a.id BETWEEN 100 AND 200 AND t.id IN (1, 2, 3) AND COALESCE(b.c, '') <> 'x' " +
		"ORDER BY a.id DESC, t.id LIMIT 50"
)

var benchSession = &engine.Session{User: "app", Database: "sbtest", Application: "sysbench"}

func benchEngine(b *testing.B, cacheBytes int64) *engine.Engine {
	b.Helper()
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: cacheBytes})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkVerdictRepeatedPointSelect(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	e.Judge(sql, benchSession)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

// BenchmarkVerdictRepeatedPointSelectModes: a session with a reported
// sql_mode (as MariaDB's session tracking sends it) costs the mode's
// parse on every message.
func BenchmarkVerdictRepeatedPointSelectMode(b *testing.B) {
	e := benchEngine(b, 0)
	sql := []byte(benchPointSelect)
	s := *benchSession
	s.Lex.SQLMode = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
	e.Judge(sql, &s)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, &s); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

func benchCold(b *testing.B, text string) {
	e := benchEngine(b, -1)
	sql := []byte(text)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

func BenchmarkVerdictColdPointSelect(b *testing.B) { benchCold(b, benchPointSelect) }
func BenchmarkVerdictCold3Join(b *testing.B)       { benchCold(b, bench3Join) }

// A write to an unqualified table: its facts in the system databases are
// filled too (currentdb.go), unlike a read's.
func BenchmarkVerdictColdPointUpdate(b *testing.B) {
	benchCold(b, "UPDATE sbtest1 SET k=k+1 WHERE id=4990")
}

func benchBulkInsert(rows int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
	for i := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(" + strconv.Itoa(i) + ", 4988, '72081237566-41524963738-42155437596-48432412520', '50994618719-46919101744')")
	}
	return sb.String()
}

func BenchmarkVerdictCold100RowInsert(b *testing.B) { benchCold(b, benchBulkInsert(100)) }

// The folding's cold cost (taut.go, writes.go): an application's filter
// with ORs, functions and a variable that fold to nothing always true, and
// writes it judges for the rows they touch.
const (
	benchFoldOr = "SELECT id, c FROM sbtest1 WHERE (k = 10 OR k = 20 OR c LIKE 'x%' OR UPPER(pad) = CONCAT('A', 'B')) " +
		"AND (c = @filter OR @filter IS NULL) AND id BETWEEN 1 AND 100 AND pad <> HEX('z')"
	benchFoldUpdate  = "UPDATE sbtest1 JOIN sbtest2 ON sbtest1.id = sbtest2.id SET sbtest1.k = sbtest1.k + 1 WHERE sbtest2.c = 'x' OR sbtest2.k IN (1, 2, 3)"
	benchFoldReplace = "REPLACE INTO sbtest1 (id, k, c, pad) SELECT id, k + 1, c, pad FROM sbtest2 WHERE id < 100"
)

func BenchmarkVerdictColdFoldOr(b *testing.B) { benchCold(b, benchFoldOr) }

// Conditions past what the limits rule lets through (bool_terms 512) are
// analysed before that rule denies them: the folding stays linear in them.
func BenchmarkAnalyzeFold500And(b *testing.B) {
	benchAnalyze(b, benchConds("DELETE FROM sbtest1 WHERE ", " AND ", 500))
}
func BenchmarkAnalyzeFold500Or(b *testing.B) {
	benchAnalyze(b, benchConds("SELECT c FROM sbtest1 WHERE ", " OR ", 500))
}

func benchAnalyze(b *testing.B, text string) {
	b.ReportAllocs()
	for b.Loop() {
		if tf := analyze(text, engine.LexStats{}); tf.ParseError {
			b.Fatal(tf.ParseReason)
		}
	}
}

func benchConds(prefix, op string, n int) string {
	var sb strings.Builder
	sb.WriteString(prefix)
	for i := range n {
		if i > 0 {
			sb.WriteString(op)
		}
		sb.WriteString("(k = " + strconv.Itoa(i) + " OR c = @v" + strconv.Itoa(i%7) + ")")
	}
	return sb.String()
}
func BenchmarkVerdictColdFoldUpdate(b *testing.B)  { benchCold(b, benchFoldUpdate) }
func BenchmarkVerdictColdFoldReplace(b *testing.B) { benchCold(b, benchFoldReplace) }

func benchBare(b *testing.B, text string) {
	b.ReportAllocs()
	for b.Loop() {
		parse(text, func(_ []ast.StmtNode, err error) {
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkBareParsePointSelect(b *testing.B)  { benchBare(b, benchPointSelect) }
func BenchmarkBareParse3Join(b *testing.B)        { benchBare(b, bench3Join) }
func BenchmarkBareParse100RowInsert(b *testing.B) { benchBare(b, benchBulkInsert(100)) }

func BenchmarkRead3Join(b *testing.B) {
	sql := []byte(bench3Join + " /* app=web */ -- note")
	var l engine.LexState
	b.ReportAllocs()
	for b.Loop() {
		Dialect.Read(sql, &l)
	}
}

func BenchmarkPrescan3Join(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		prescan(bench3Join, 0)
	}
}

// BenchmarkAnalyzeShaped100RowInsert: a 100-row INSERT whose shape is
// cached (the cost of a bulk INSERT with new values): prescan, shape key,
// shape hit, rules.
func BenchmarkAnalyzeShaped100RowInsert(b *testing.B) {
	e := benchEngine(b, 0)
	text := benchBulkInsert(100)
	e.Analyze(text)
	e.Analyze(text)
	b.ReportAllocs()
	for b.Loop() {
		e.Analyze(text)
	}
}

// A parse error of many statements costs a bounded number of parses
// (unparsed.go maxPieceParses): 100,000 pieces are judged in well under a
// second's worth of parsing each.
func BenchmarkRecognizeManyPieces(b *testing.B) {
	text := strings.Repeat("x;", 100000) + "INSTALL SONAME 'x'"
	for b.Loop() {
		if sts := recognize(text); len(sts) == 0 {
			b.Fatal("the INSTALL at the end was not recognized")
		}
	}
}

// MariaDB's own syntax (mariadb.go, body.go): TiDB's parse fails first, then
// the text is read again. Cold verdicts, against the TiDB spelling of the
// same statement (VerdictColdExplain).
func BenchmarkVerdictColdExplain(b *testing.B) {
	benchCold(b, "EXPLAIN SELECT c FROM sbtest1 WHERE id=4990")
}

func BenchmarkVerdictColdExplainExtended(b *testing.B) {
	benchCold(b, "EXPLAIN EXTENDED SELECT c FROM sbtest1 WHERE id=4990")
}

func BenchmarkVerdictColdReturning(b *testing.B) {
	benchCold(b, "DELETE FROM sbtest1 WHERE id=4990 RETURNING id, c")
}

func BenchmarkVerdictColdFunctionBody(b *testing.B) {
	benchCold(b, "CREATE FUNCTION f(a INT) RETURNS INT BEGIN DECLARE x INT DEFAULT 0; "+
		"FOR i IN 1..a DO SET x = x + (SELECT k FROM sbtest1 WHERE id = i); END FOR; "+
		"IF x > 10 THEN RETURN 1; END IF; RETURN x; END")
}

// BenchmarkReadGBK: a point select with a Chinese value in a gbk session,
// converted to UTF-8 along the server's character boundaries (charset.go).
func BenchmarkReadGBK(b *testing.B) {
	sql := []byte("SELECT id, name FROM users WHERE name = '\xd6\xd0\xce\xc4\xd5\xc5\xc8\xfd' AND id = 42")
	l := engine.LexState{ClientEncoding: "gbk"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := Dialect.Read(sql, &l); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkVerdictColdDefiner: mariadb-dump's trigger, whose DEFINER is read
// a second time as CURRENT_USER (definer.go): the cold path of such a
// statement parses twice.
func BenchmarkVerdictColdDefiner(b *testing.B) {
	e := benchEngine(b, -1)
	sql := []byte("CREATE DEFINER=`root`@`localhost` TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO audit (tid, note) VALUES (NEW.id, 'ins'); END")
	s := &engine.Session{User: "root"}
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, s); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

// BenchmarkVerdictColdTriggerCurrentUser is the trigger with DEFINER =
// CURRENT_USER, read once: what the second reading adds is the difference.
func BenchmarkVerdictColdTriggerCurrentUser(b *testing.B) {
	e := benchEngine(b, -1)
	sql := []byte("CREATE DEFINER=CURRENT_USER TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO audit (tid, note) VALUES (NEW.id, 'ins'); END")
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, benchSession); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

// An execution of a prepared write whose parameters decide its rows
// (params.go ParamWrite): the text's facts are cached, the statement with
// the values in place is parsed every time. The filter by the row (id =
// ?) costs what a cached judgement costs.
func BenchmarkJudgeBoundParamWrite(b *testing.B) {
	benchBound(b, "UPDATE sbtest1 SET k = k + 1 WHERE ? IS NULL OR id = ?", testValues{"5", "5"})
}

func BenchmarkJudgeBoundFilter(b *testing.B) {
	benchBound(b, "UPDATE sbtest1 SET k = k + 1 WHERE id = ?", testValues{"5"})
}

func benchBound(b *testing.B, text string, vals engine.ParamValues) {
	e := benchEngine(b, 0)
	sql := []byte(text)
	e.JudgeBound(sql, benchSession, vals)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.JudgeBound(sql, benchSession, vals); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}
