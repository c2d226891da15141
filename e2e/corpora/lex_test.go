package corpora

import (
	"strings"
	"testing"
)

func TestLex(t *testing.T) {
	for _, c := range []struct {
		text  string
		pg    bool
		words string
		stmts int
	}{
		{"SELECT 1 -- x\n, 'a''b'", true, "select ? , ?", 1},
		{"SELECT 1 --x", false, "select ? - - i", 1}, // placeholder; fixed below
		{"SELECT 'a\\'; DROP' ; SELECT 2", false, "select ? ; select ?", 2},
		{"SELECT 'a\\'; DROP' ; SELECT 2", true, "", 0}, // broken: PostgreSQL ends the literal at \'
		{"SELECT /*!50000UNION*/ 1", false, "select union ?", 1},
		{"SELECT /*!50000UNION*/ 1", true, "select ?", 1},
		{"SELECT 1 # c\n; SELECT $$a;b$$", true, "", 0},
		{"SELECT $$a;b$$; SELECT E'x\\';y'", true, "select ? ; select ?", 2},
		{"SELECT x::int", true, "select x :: int", 1},
		{"SELECT a /* x /* y */ z */ b", true, "select a b", 1},
		{"SELECT a /* x /* y */ z */ b", false, "select a z * / b", 1},
		{"SELECT id FROM t WHERE a='' #x' AND b='y'", false, "select id from t where a = ?", 1},
		{"SELECT 1;;; ", true, "select ?", 1},
		{"SELECT 'a' 'b', 'c' /* x */ 'd'", false, "select ? , ?", 1}, // MariaDB joins adjacent literals
		{"SELECT 'a' 'b'", true, "select ? ?", 1},                     // PostgreSQL only across a newline
		{"SELECT 'a'\n 'b'", true, "select ?", 1},
	} {
		if strings.HasSuffix(c.text, "--x") {
			c.words = "select ? - - x"
		}
		l := lex(c.text, c.pg)
		if c.words == "" {
			if c.pg && strings.Contains(c.text, "#") {
				// '#' is an operator in PostgreSQL, $$..$$ a literal.
				if got := strings.Join(l.words(), " "); got != "select ? # c ; select ?" {
					t.Errorf("lex(%q): %q", c.text, got)
				}
				continue
			}
			if !l.broken {
				t.Errorf("lex(%q, pg=%v): want broken, got %q", c.text, c.pg, l.words())
			}
			continue
		}
		if got := strings.Join(l.words(), " "); got != c.words || len(l.stmts) != c.stmts || l.broken {
			t.Errorf("lex(%q, pg=%v) = %q, %d statements, broken %v; want %q, %d", c.text, c.pg, got, len(l.stmts), l.broken, c.words, c.stmts)
		}
	}
}

func TestLeftSlotAndShape(t *testing.T) {
	slot := func(n string) Slot {
		for _, s := range Slots {
			if s.Name == n {
				return s
			}
		}
		t.Fatalf("no slot %s", n)
		return Slot{}
	}
	for _, c := range []struct {
		slot, payload string
		pg            bool
		left          bool
		shape         string
	}{
		{"numeric", "42", true, false, ""},
		{"numeric", "-42", false, false, ""},
		{"numeric", "1 OR 1=1", true, true, ShapeBoolean},
		{"numeric", "id", true, true, ShapeOther},
		{"numeric", "1 AND SLEEP(5)", false, true, ShapeTime},
		{"numeric", "1; SELECT pg_sleep(5)", true, true, ShapeTime},
		{"numeric", "1; DROP TABLE items", true, true, ShapeStacked},
		{"numeric", "-1 UNION SELECT version(), 1", true, true, ShapeUnion},
		{"numeric", "1 AND extractvalue(1, concat(0x7e, version()))", false, true, ShapeError},
		{"numeric", "1 AND 1=CAST((SELECT version()) AS int)", true, true, ShapeError},
		{"quoted", "O''Brien", true, false, ""},
		{"quoted", "bolt' OR '1'='1", true, true, ShapeBoolean},
		{"quoted", "bolt' #", false, false, ""}, // the same statement: only the closing quote is cut
		{"login-user", "admin' #", false, true, ShapeComment},
		{"quoted", "bolt' #", true, false, ""}, // not a comment in PostgreSQL: stays a string? no: broken
		{"login-user", "admin' -- ", true, true, ShapeComment},
		{"login-user", "admin'--", false, false, ""}, // MariaDB needs a blank after --: broken literal
		{"orderby", "price DESC", true, false, ""},
		{"orderby", "name, price", false, false, ""},
		{"orderby", "(SELECT 1)", true, true, ShapeOrderBy},
		{"orderby", "IF(1=1, name, price)", false, true, ShapeOrderBy},
		{"update", "x' WHERE 1=1 -- ", true, true, ShapeComment},
		{"update", "x', price = 0 -- ", true, true, ShapeComment},
		{"quoted", "3' ' 1", false, false, ""},            // one literal to MariaDB
		{"quoted", "A' || 'B", true, true, ShapeOther},    // PostgreSQL: concatenation
		{"quoted", "A' || 'B", false, true, ShapeBoolean}, // MariaDB: OR
	} {
		s := slot(c.slot)
		left, l, _ := s.LeftSlot(c.payload, c.pg)
		if left != c.left {
			t.Errorf("%s %q pg=%v: left %v, want %v (%q)", c.slot, c.payload, c.pg, left, c.left, l.words())
			continue
		}
		if left {
			if got := Shape(s, c.payload, l); got != c.shape {
				t.Errorf("%s %q pg=%v: shape %s, want %s", c.slot, c.payload, c.pg, got, c.shape)
			}
		}
	}
}

func TestPlaceBenign(t *testing.T) {
	s := Slots[1]
	for _, pg := range []bool{true, false} {
		for _, v := range []string{"O'Brien", `back\slash`, `a'; DROP TABLE x; --`, `'`, `\'`} {
			stmt, ok := s.PlaceBenign(v, pg)
			if !ok {
				t.Fatalf("%q not placed", v)
			}
			if left, _, broken := s.LeftSlot(stmt[len(s.Prefix):len(stmt)-len(s.Suffix)], pg); left || broken {
				t.Errorf("pg=%v: benign %q escaped as %q left its slot", pg, v, stmt)
			}
		}
	}
	if _, ok := Slots[0].PlaceBenign("hello", true); ok {
		t.Error("a word placed in the numeric slot")
	}
}

func TestFloorViolations(t *testing.T) {
	r := &Result{Protocol: "mysql", Kept: 4, Injections: []Case{
		{Slot: "numeric", Shape: ShapeUnion, Blocked: true},
		{Slot: "numeric", Shape: ShapeUnion, Blocked: false},
		{Slot: "quoted", Shape: ShapeTime, Blocked: true},
		{Slot: "quoted", Shape: ShapeTime, Blocked: true},
	}}
	floors := "# header\n" +
		"a,b\tmysql\ttotal\tall\t75.0\n" + // 3/4: holds
		"a,b\tmysql\tshape\tUNION\t60.0\n" + // 1/2: below
		"a,b\tmysql\tslot\tquoted\t100\n" + // 2/2: holds
		"a,b\tmysql\tkept\tall\t10\n" + // 4 kept: below
		"a,b\tpostgres\ttotal\tall\t99\n" + // other protocol: not applied
		"x\tmysql\ttotal\tall\t99\n" // other corpora set: not applied
	bad, applied, err := floorViolations(floors, "a,b", []*Result{r})
	if err != nil {
		t.Fatal(err)
	}
	if applied != 4 || len(bad) != 2 || !strings.Contains(bad[0], "UNION") || !strings.Contains(bad[1], "kept") {
		t.Errorf("applied %d, violations %q", applied, bad)
	}
	if got := floorLines(Sources{Sqlmap: "s", Dict: "d"}, []*Result{r}); !strings.Contains(got, "dict,sqlmap\tmysql\tshape\tUNION\t0.0\n") ||
		!strings.Contains(got, "dict,sqlmap\tmysql\ttotal\tall\t50.0\n") || !strings.Contains(got, "dict,sqlmap\tmysql\tkept\tall\t3\n") {
		t.Errorf("floorLines:\n%s", got)
	}
}
