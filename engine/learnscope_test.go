package engine_test

// Learned policies in both dialects: per-application identities, the
// fingerprint and the scope form, drift, and the cached path.

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

type learnDialect struct {
	name    string
	d       engine.Dialect
	base    *engine.Policy
	secrets string // how the dialect spells a tautology that the default policy denies
}

var learnDialects = []learnDialect{
	{"pgsql", pgsql.Dialect, pgsql.DefaultPolicy(), "SELECT name FROM items WHERE id = 1 OR 1 = 1 UNION SELECT secret FROM secrets"},
	{"mysql", mysql.Dialect, mysql.DefaultPolicy(), "SELECT name FROM items WHERE id = 1 OR 1 = 1 UNION SELECT secret FROM secrets"},
}

var (
	shopApp   = &engine.Session{User: "shop", Database: "app"}
	reportApp = &engine.Session{User: "report", Database: "app"}
	strangers = &engine.Session{User: "intruder", Database: "app"}
)

// shopTraffic is what the shop application sends while learning.
var shopTraffic = []string{
	"SELECT name, price FROM items WHERE id = 1",
	"SELECT name, price FROM items WHERE id = 2",
	"SELECT id FROM users WHERE name = 'ann' AND pass = 'x'",
	"INSERT INTO orders (item, qty) VALUES (1, 2)",
	"SELECT count(*) FROM items",
	"SELECT i.name FROM items i WHERE i.price < 10 ORDER BY i.name",
}

var reportTraffic = []string{
	"SELECT day, total FROM reports WHERE day > '2024-01-01'",
}

// learnFrom judges the traffic of both applications and an attack under
// the dialect's default policy with a learner keyed by by.
func learnFrom(t *testing.T, ld learnDialect, by engine.LearnBy) *engine.Learner {
	t.Helper()
	e, err := engine.New(ld.base, ld.d, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := engine.NewLearnerBy(ld.d, 0, by)
	e.SetLearner(l)
	for _, q := range shopTraffic {
		if v := e.Judge([]byte(q), shopApp); v.Action.Denies() {
			t.Fatalf("%s: the default policy denies the application's %q: %s", ld.name, q, v.RuleID)
		}
	}
	for _, q := range reportTraffic {
		e.Judge([]byte(q), reportApp)
	}
	// An injection while learning, which the default policy denies: it must
	// not widen the shop's scope to secrets.
	if v := e.Judge([]byte(ld.secrets), shopApp); !v.Action.Denies() {
		t.Fatalf("%s: the default policy allows %q", ld.name, ld.secrets)
	}
	return l
}

func learnedEngine(t *testing.T, ld learnDialect, l *engine.Learner, o engine.ExportOptions) *engine.Engine {
	t.Helper()
	frag := l.ExportPolicy(o)
	fp, err := engine.ParsePolicy(frag)
	if err != nil {
		t.Fatalf("%s: the export does not parse: %v\n%s", ld.name, err, frag)
	}
	p, err := ld.base.With(fp)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, ld.d, engine.Options{})
	if err != nil {
		t.Fatalf("%s: %v\n%s", ld.name, err, frag)
	}
	return e
}

func TestLearnedScopeAndFingerprints(t *testing.T) {
	for _, ld := range learnDialects {
		l := learnFrom(t, ld, engine.LearnByUser|engine.LearnByDatabase)
		scope := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		scopeF := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny", Functions: true})
		prints := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormFingerprints, Drift: "deny"})
		frag := string(l.ExportPolicy(engine.ExportOptions{Form: engine.FormScope}))
		if strings.Contains(frag, "secrets") || strings.Contains(frag, "'ann'") {
			t.Errorf("%s: the scope has the denied injection's table or a literal:\n%s", ld.name, frag)
		}
		for _, tt := range []struct {
			sql           string
			s             *engine.Session
			scope, prints bool // allowed in the form
		}{
			// learned shapes, other literals
			{"SELECT name, price FROM items WHERE id = 99", shopApp, true, true},
			{"INSERT INTO orders (item, qty) VALUES (7, 1)", shopApp, true, true},
			// new shapes of known tables and columns
			{"SELECT price FROM items WHERE name = 'nut' ORDER BY price", shopApp, true, false},
			{"SELECT x.name, x.price FROM items x WHERE x.id IN (1, 2)", shopApp, true, false},
			{"SELECT name FROM users WHERE id = 3", shopApp, true, false},
			{"SELECT 1", shopApp, true, false},
			// tables, columns and kinds the application never used
			{"SELECT secret FROM secrets", shopApp, false, false},
			{"SELECT * FROM secrets", shopApp, false, false},
			{"SELECT name FROM items WHERE id = (SELECT max(id) FROM secrets)", shopApp, false, false},
			{"SELECT name FROM items WHERE id = 1 AND EXISTS (SELECT 1 FROM secrets WHERE secret LIKE 'a%')", shopApp, false, false},
			{"WITH s AS (SELECT secret FROM secrets) SELECT name FROM items, s", shopApp, false, false},
			{"SELECT name, price FROM items WHERE id = 1 UNION SELECT secret, 1 FROM secrets", shopApp, false, false},
			// a UNION of what the application reads elsewhere: it never ran a UNION
			{"SELECT name, price FROM items WHERE id = 1 UNION SELECT name, pass FROM users", shopApp, false, false},
			{"SELECT name FROM users WHERE id = 1 UNION ALL SELECT pass FROM users", shopApp, false, false},
			{"SELECT * FROM items", shopApp, false, false},                     // star: more columns than it read
			{"SELECT pass FROM items", shopApp, false, false},                  // a column of another table
			{"SELECT i.pass FROM items i", shopApp, false, false},              // qualified
			{"SELECT item FROM orders", shopApp, false, false},                 // written, never read
			{"UPDATE items SET price = 1 WHERE id = 2", shopApp, false, false}, // kind
			{"DELETE FROM orders WHERE item = 1", shopApp, false, false},       // kind
			{"INSERT INTO items (name) VALUES ('x')", shopApp, false, false},   // read, never written
			{"SELECT day FROM reports", shopApp, false, false},                 // the other application's table
			// per-application separation
			{"SELECT total FROM reports WHERE day = '2024-02-02'", reportApp, true, false},
			{"SELECT day, total FROM reports WHERE day > '2025-01-01'", reportApp, true, true},
			{"SELECT name, price FROM items WHERE id = 1", reportApp, false, false},
			// an identity that was never seen
			{"SELECT name, price FROM items WHERE id = 1", strangers, false, false},
		} {
			for _, c := range []struct {
				form  string
				e     *engine.Engine
				allow bool
			}{{"scope", scope, tt.scope}, {"fingerprints", prints, tt.prints}} {
				v := c.e.Judge([]byte(tt.sql), tt.s)
				if !c.allow && v.RuleID != engine.DriftRuleID {
					// the learned rules decide these, not the default policy
					t.Errorf("%s %s: %q denied by %s, want %s", ld.name, c.form, tt.sql, v.RuleID, engine.DriftRuleID)
				}
				if got := !v.Action.Denies(); got != c.allow {
					t.Errorf("%s %s: %q as %s: got %v %s, want allowed %v", ld.name, c.form, tt.sql, tt.s.User, v.Action, v.RuleID, c.allow)
				}
			}
		}
		// With functions in the scope, a function the application never
		// called is drift; without, it is not.
		for _, q := range []string{"SELECT version()", "SELECT upper(name) FROM items WHERE id = 1"} {
			if v := scopeF.Judge([]byte(q), shopApp); v.RuleID != engine.DriftRuleID {
				t.Errorf("%s: %q with functions in the scope: got %v %s, want drift", ld.name, q, v.Action, v.RuleID)
			}
		}
		if v := scopeF.Judge([]byte("SELECT count(*) FROM items WHERE price > 3"), shopApp); v.Action.Denies() {
			t.Errorf("%s: a learned function: got %v %s", ld.name, v.Action, v.RuleID)
		}
	}
}

// What a learned policy does with drift is the operator's choice: deny,
// or log; and in detect mode, denied only in the report.
func TestLearnedDriftAction(t *testing.T) {
	for _, ld := range learnDialects {
		l := learnFrom(t, ld, engine.DefaultLearnBy)
		q := []byte("SELECT secret FROM secrets")
		if v := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "log"}).Judge(q, shopApp); v.Action != engine.ActionLog || v.RuleID != engine.DriftRuleID {
			t.Errorf("%s: drift log: got %v %s", ld.name, v.Action, v.RuleID)
		}
		if v := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny", DriftMode: engine.ModeDetect}).Judge(q, shopApp); v.Action != engine.ActionDeny || v.Mode != engine.ModeDetect || v.RuleID != engine.DriftRuleID {
			t.Errorf("%s: drift in detect mode: got %v %s %s", ld.name, v.Action, v.Mode, v.RuleID)
		}
		if v := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope}).Judge(q, shopApp); v.Action.Denies() {
			t.Errorf("%s: without a drift rule the fragment only allows: got %v %s", ld.name, v.Action, v.RuleID)
		}
	}
}

// The review: per application, how often each shape was seen, and what the
// policy it was learned under denied.
func TestLearnReport(t *testing.T) {
	for _, ld := range learnDialects {
		r := learnFrom(t, ld, engine.LearnByUser|engine.LearnByDatabase).Report()
		if len(r.Apps) != 2 || r.Apps[0].Name != "report@app" || r.Apps[1].Name != "shop@app" {
			t.Fatalf("%s: applications %+v", ld.name, r.Apps)
		}
		shop := r.Apps[1]
		if shop.Statements != uint64(len(shopTraffic)+1) {
			t.Errorf("%s: %d statements, want %d", ld.name, shop.Statements, len(shopTraffic)+1)
		}
		var denied uint64
		for _, n := range shop.Denied {
			denied += n
		}
		if denied != 1 {
			t.Errorf("%s: denied %v, want the injection once", ld.name, shop.Denied)
		}
		found := false
		for _, s := range shop.Shapes {
			if strings.Contains(strings.ReplaceAll(strings.ToLower(s.Normalized), "`", ""), "from items where id =") && s.Count == 2 && !s.Denied {
				found = true
			}
			if strings.Contains(s.Normalized, "secrets") && !s.Denied {
				t.Errorf("%s: the injection's shape is not marked denied: %+v", ld.name, s)
			}
		}
		if !found {
			t.Errorf("%s: no items shape seen twice: %+v", ld.name, shop.Shapes)
		}
		var tables []string
		for _, tb := range shop.Tables {
			tables = append(tables, tb.Name)
		}
		if strings.Join(tables, ",") != "items,orders,users" {
			t.Errorf("%s: shop's tables %v, want items,orders,users", ld.name, tables)
		}
	}
}

// Identities of intercepted connections: the unit of the client's cgroup
// tells two applications with one database user apart, and a connection
// that was not intercepted is a third identity (intercepted: false).
func TestLearnByUnit(t *testing.T) {
	billing := &engine.Session{User: "app", Database: "app", Process: engine.ProcessInfo{Known: true, Comm: "billing", Cgroup: "/system.slice/billing.service"}}
	shop := &engine.Session{User: "app", Database: "app", Process: engine.ProcessInfo{Known: true, Comm: "shop", Cgroup: "/system.slice/shop.service"}}
	tcp := &engine.Session{User: "app", Database: "app"}
	for _, ld := range learnDialects {
		l := engine.NewLearnerBy(ld.d, 0, engine.DefaultLearnBy)
		l.Record("SELECT amount FROM invoices WHERE id = 1", billing)
		l.Record("SELECT name FROM items WHERE id = 1", shop)
		l.Record("SELECT 1", tcp)
		frag := string(l.ExportPolicy(engine.ExportOptions{Form: engine.FormScope, Drift: "deny"}))
		for _, want := range []string{`units: ["billing.service"]`, `units: ["shop.service"]`, "intercepted: false"} {
			if !strings.Contains(frag, want) {
				t.Errorf("%s: the export lacks %s:\n%s", ld.name, want, frag)
			}
		}
		e := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		for _, tt := range []struct {
			sql   string
			s     *engine.Session
			allow bool
		}{
			{"SELECT amount FROM invoices WHERE id = 2 OR id = 3", billing, true},
			{"SELECT amount FROM invoices WHERE id = 2", shop, false},
			{"SELECT name FROM items WHERE id > 2", shop, true},
			{"SELECT name FROM items WHERE id > 2", billing, false},
			{"SELECT amount FROM invoices WHERE id = 2", tcp, false},
			{"SELECT 1", tcp, true},
		} {
			if v := e.Judge([]byte(tt.sql), tt.s); !v.Action.Denies() != tt.allow {
				t.Errorf("%s: %q from %s: got %v %s, want allowed %v", ld.name, tt.sql, tt.s.Process.Cgroup, v.Action, v.RuleID, tt.allow)
			}
		}
	}
}

func TestParseLearnBy(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want engine.LearnBy
		ok   bool
	}{
		{"", engine.DefaultLearnBy, true},
		{"user", engine.LearnByUser, true},
		{"user, database,comm", engine.LearnByUser | engine.LearnByDatabase | engine.LearnByComm, true},
		{"unit,cgroup", 0, false},
		{"pod", 0, false},
	} {
		got, err := engine.ParseLearnBy(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseLearnBy(%q) = %v, %v", tt.in, got, err)
		}
	}
}

// A within rule that is malformed is refused with the reason.
func TestWithinValidation(t *testing.T) {
	for _, bad := range []string{
		"rules:\n  - {id: a, action: allow, match: {within: {tables: {t: {access: [read]}}}}}\n",
		"rules:\n  - {id: a, action: allow, match: {within: {kinds: [select], tables: {t: {access: [delete]}}}}}\n",
		"rules:\n  - {id: a, action: allow, match: {within: {kinds: [select], tables: {\"t*\": {access: [read]}}}}}\n",
		"rules:\n  - {id: a, action: allow, match: {within: {kinds: [select], tables: {t: {columns: [a]}}}}}\n",
	} {
		if _, err := engine.ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
	p, err := engine.ParsePolicy([]byte("rules:\n  - {id: a, action: allow, match: {within: {kinds: [select], tables: {t: {access: [read], columns: [a]}}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.With(p); err == nil {
		t.Errorf("With: a duplicate rule id is accepted")
	}
}

// The cached path of a learned policy does not allocate, with learning on
// or off.
func TestLearnedPolicyHitAllocs(t *testing.T) {
	for _, ld := range learnDialects {
		l := learnFrom(t, ld, engine.DefaultLearnBy)
		for _, form := range []engine.LearnForm{engine.FormScope, engine.FormFingerprints} {
			e := learnedEngine(t, ld, l, engine.ExportOptions{Form: form, Drift: "deny"})
			q := []byte("SELECT name, price FROM items WHERE id = 1")
			e.Judge(q, shopApp)
			if n := testing.AllocsPerRun(200, func() { e.Judge(q, shopApp) }); n != 0 {
				t.Errorf("%s %s: %v allocations per cached judgement", ld.name, form, n)
			}
			e.SetLearner(engine.NewLearner(ld.d, 0))
			e.Judge(q, shopApp)
			if n := testing.AllocsPerRun(200, func() { e.Judge(q, shopApp) }); n != 0 {
				t.Errorf("%s %s: %v allocations per cached judgement while learning a known shape", ld.name, form, n)
			}
		}
	}
}

func BenchmarkLearnedPolicyHit(b *testing.B) {
	for _, ld := range learnDialects {
		for _, form := range []engine.LearnForm{engine.FormScope, engine.FormFingerprints} {
			b.Run(ld.name+"/"+string(form), func(b *testing.B) {
				t := &testing.T{}
				l := learnFrom(t, ld, engine.DefaultLearnBy)
				e := learnedEngine(t, ld, l, engine.ExportOptions{Form: form, Drift: "deny"})
				q := []byte("SELECT name, price FROM items WHERE id = 1")
				e.Judge(q, shopApp)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					e.Judge(q, shopApp)
				}
			})
		}
	}
}

// The learner's bound holds for identities too.
func TestLearnLimit(t *testing.T) {
	l := engine.NewLearnerBy(pgsql.Dialect, 2, engine.LearnByUser)
	for i := 0; i < 50; i++ {
		l.Record("SELECT a FROM t WHERE id = 1; SELECT b FROM t", &engine.Session{User: "u" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	n, dropped := l.Len()
	if r := l.Report(); n != 2 || dropped == 0 || len(r.Apps) != 1 {
		t.Errorf("limit 2: %d fingerprints, %d dropped, %d identities", n, dropped, len(r.Apps))
	}
}

// An application that runs UNIONs keeps them, up to as many arms as it
// used.
func TestLearnedScopeUnion(t *testing.T) {
	for _, ld := range learnDialects {
		l := engine.NewLearnerBy(ld.d, 0, engine.LearnByUser)
		l.Record("SELECT name FROM items WHERE id = 1 UNION SELECT name FROM archive WHERE id = 2", shopApp)
		e := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		for _, tt := range []struct {
			sql   string
			allow bool
		}{
			{"SELECT name FROM archive WHERE name = 'x' UNION ALL SELECT name FROM items", true},
			{"SELECT name FROM items UNION SELECT name FROM archive UNION SELECT name FROM items", false},
		} {
			if v := e.Judge([]byte(tt.sql), shopApp); !v.Action.Denies() != tt.allow {
				t.Errorf("%s: %q: got %v %s, want allowed %v", ld.name, tt.sql, v.Action, v.RuleID, tt.allow)
			}
		}
	}
}

// Learning a known shape, from many goroutines: the read-locked path.
func BenchmarkLearningKnownShape(b *testing.B) {
	for _, ld := range learnDialects {
		b.Run(ld.name, func(b *testing.B) {
			e, err := engine.New(ld.base, ld.d, engine.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e.SetLearner(engine.NewLearner(ld.d, 0))
			q := []byte("SELECT name, price FROM items WHERE id = 1")
			e.Judge(q, shopApp)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					e.Judge(q, shopApp)
				}
			})
		})
	}
}

// Columns in every position count against the scope: a column the
// application never read is drift wherever it stands, also behind a
// whole-row reference (PostgreSQL's (items).col).
func TestLearnedScopeColumnPositions(t *testing.T) {
	for _, ld := range learnDialects {
		l := learnFrom(t, ld, engine.LearnByUser|engine.LearnByDatabase)
		e := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		qs := []string{
			"SELECT name FROM items WHERE id = 1 AND length(hidden) > 0",
			"SELECT name FROM items WHERE id = 1 ORDER BY hidden",
			"SELECT name FROM items GROUP BY hidden",
			"SELECT CASE WHEN hidden > 0 THEN 1 END FROM items",
			"SELECT name FROM items WHERE id = (SELECT max(hidden) FROM items)",
			"SELECT count(hidden) FROM items",
			"SELECT i.name FROM items i JOIN users u ON u.hidden = i.id",
			"SELECT row_number() OVER (ORDER BY hidden) FROM items",
			"SELECT name FROM items WHERE id IN (SELECT hidden FROM items)",
			"SELECT name FROM items WHERE EXISTS (SELECT 1 FROM items WHERE hidden = 1)",
			"SELECT name FROM items HAVING max(hidden) > 1",
			"SELECT items.hidden FROM items",
			"SELECT name FROM items WHERE CAST(hidden AS char) = '1'",
			"SELECT name FROM items WHERE (id, hidden) = (1, 2)",
		}
		if ld.name == "pgsql" {
			qs = append(qs, "SELECT (items).hidden FROM items", "SELECT (i).hidden FROM items i")
		}
		for _, q := range qs {
			if v := e.Judge([]byte(q), shopApp); v.RuleID != engine.DriftRuleID {
				t.Errorf("%s: %q: got %v %s, want drift", ld.name, q, v.Action, v.RuleID)
			}
		}
	}
}

// What reads a table without naming it in the statement's own FROM is
// denied under a learned scope: by the scope (the dialect's facts name the
// tables of SQL text it runs) or by the policy's own rules first.
func TestLearnedScopeIndirectReads(t *testing.T) {
	cases := map[string][]string{
		"pgsql": {
			"SELECT query_to_xml('select secret from secrets', true, true, '')",
			"TABLE secrets",
			"SELECT to_jsonb(s) FROM secrets s",
			"PREPARE p AS SELECT secret FROM secrets",
			"DO $$ BEGIN PERFORM secret FROM secrets; END $$",
			"EXPLAIN ANALYZE SELECT secret FROM secrets",
			"COPY secrets TO STDOUT",
			"SELECT name FROM items WHERE id = 1; SELECT secret FROM secrets",
			"DECLARE c CURSOR FOR SELECT secret FROM secrets",
		},
		"mysql": {
			"PREPARE s FROM 'select secret from secrets'",
			"EXECUTE IMMEDIATE 'select secret from secrets'",
			"HANDLER secrets OPEN",
			"SELECT name FROM items WHERE id = 1; SELECT secret FROM secrets",
			"EXPLAIN SELECT secret FROM secrets",
			"SELECT secret FROM secrets INTO OUTFILE '/tmp/x'",
			"CALL leak()",
		},
	}
	for _, ld := range learnDialects {
		l := learnFrom(t, ld, engine.LearnByUser|engine.LearnByDatabase)
		e := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		for _, q := range cases[ld.name] {
			if v := e.Judge([]byte(q), shopApp); !v.Action.Denies() {
				t.Errorf("%s: %q: got %v %s, want denied", ld.name, q, v.Action, v.RuleID)
			}
		}
	}
}

// An application that sets one parameter may set it again, and no other.
func TestLearnedScopeSettings(t *testing.T) {
	for _, ld := range learnDialects {
		l := engine.NewLearnerBy(ld.d, 0, engine.LearnByUser)
		l.Record("SELECT name FROM items WHERE id = 1", shopApp)
		set, other := "SET extra_float_digits = 3", "SET search_path = evil"
		if ld.name == "mysql" {
			set, other = "SET sql_select_limit = 10", "SET sql_mode = ''"
		}
		l.Record(set, shopApp)
		e := learnedEngine(t, ld, l, engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		if v := e.Judge([]byte(set), shopApp); v.Action.Denies() {
			t.Errorf("%s: the learned %q: %v %s", ld.name, set, v.Action, v.RuleID)
		}
		if v := e.Judge([]byte(other), shopApp); v.RuleID != engine.DriftRuleID {
			t.Errorf("%s: %q, a parameter the application never set: %v %s, want drift", ld.name, other, v.Action, v.RuleID)
		}
	}
}
