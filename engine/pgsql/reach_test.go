package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestReachedTables: a write reaches tables the statement does not name,
// and their row triggers fire there: a partitioned table's partitions, a
// plain table's inheritance children, the tables whose foreign keys into
// it cascade (and cascade again). A trigger that deletes every row on
// such a table is the statement's no-unfiltered-writes; a key whose
// action does not write (NO ACTION, RESTRICT), a trigger on another event
// and a rule on the reached table (the rewriter applies only the named
// relation's) are not.
func TestReachedTables(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 11 {
		rows = append(rows, nil)
	}
	rows[0] = append(rows[0], []string{"public", "m"}, []string{"public", "m_2026"}, []string{"public", "base"}, []string{"public", "base_kid"},
		[]string{"public", "parent"}, []string{"public", "child"}, []string{"public", "grandchild"}, []string{"public", "strict_kid"}, []string{"public", "nulled_kid"}, []string{"public", "tree"})
	rows[3] = append(rows[3],
		[]string{"public", "t_m", "public", "m_2026", "5", "public", "touch"},           // ROW INSERT on the partition
		[]string{"public", "t_base", "public", "base_kid", "9", "public", "touch"},      // ROW DELETE on the child
		[]string{"public", "t_grand", "public", "grandchild", "9", "public", "touch"},   // ROW DELETE two keys away
		[]string{"public", "t_strict", "public", "strict_kid", "9", "public", "touch"},  // ROW DELETE behind NO ACTION
		[]string{"public", "t_nulled", "public", "nulled_kid", "17", "public", "touch"}, // ROW UPDATE behind SET NULL
		[]string{"public", "t_tree", "public", "tree", "17", "public", "touch"},         // ROW UPDATE on a self-referencing table
	)
	rows[4] = append(rows[4], []string{"public", "r_kid", "public", "m_2026", "3", "CREATE RULE r_kid AS\n    ON INSERT TO public.m_2026 DO  DELETE FROM orders;"})
	rows[10] = [][]string{
		{"public", "m", "public", "m_2026", "p"},
		{"public", "base", "public", "base_kid", "i"},
		{"public", "parent", "public", "child", "fcc"},
		{"public", "child", "public", "grandchild", "fca"},
		{"public", "parent", "public", "strict_kid", "faa"},
		{"public", "parent", "public", "nulled_kid", "fna"},
		{"public", "tree", "public", "tree", "fcc"},
	}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	for _, tc := range []struct {
		sql        string
		rule, says string
	}{
		{"INSERT INTO m VALUES (1, '2026-01-01')", "no-unfiltered-writes", "trigger public.t_m on public.m_2026 → UPDATE without WHERE"},
		{"COPY m FROM STDIN", "no-unfiltered-writes", "t_m"},
		{"UPDATE m SET d = '2026-02-01' WHERE id = 1", "no-unfiltered-writes", "t_m"}, // may move the row: an INSERT there
		{"DELETE FROM base WHERE id = 1", "no-unfiltered-writes", "t_base on public.base_kid"},
		{"INSERT INTO base VALUES (1)", "", ""}, // stays in the parent
		{"DELETE FROM parent WHERE id = 1", "no-unfiltered-writes", "t_grand on public.grandchild"},
		{"DELETE FROM parent WHERE id = 2", "no-unfiltered-writes", "t_nulled on public.nulled_kid"}, // SET NULL: an UPDATE there
		{"UPDATE parent SET id = 2 WHERE id = 1", "", ""},                                            // cascades to child, not on to grandchild
		{"DELETE FROM tree WHERE id = 1", "", ""},                                                    // its trigger is ON UPDATE; the key cycles
		{"UPDATE tree SET x = 1 WHERE id = 1", "no-unfiltered-writes", "t_tree"},
		{"INSERT INTO parent VALUES (1)", "", ""}, // a new row is referenced by nothing
		{"DELETE FROM child WHERE id = 1", "no-unfiltered-writes", "t_grand"},
		{"DELETE FROM strict_kid WHERE id = 1", "no-unfiltered-writes", "t_strict"},
	} {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "app"})
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
			t.Errorf("%s: %s (%s), want %q naming %q", tc.sql, v.RuleID, v.Reason, tc.rule, tc.says)
		}
	}
	// Behind NO ACTION only: t_strict does not fire for the parent's
	// DELETE; the rule on the partition does not for an INSERT into m.
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	if v := e.Judge([]byte("DELETE FROM parent WHERE id = 1"), &engine.Session{User: "app"}); strings.Contains(v.Reason, "t_strict") {
		t.Errorf("DELETE FROM parent: %s names t_strict behind NO ACTION", v.Reason)
	}
	if v := e.Judge([]byte("INSERT INTO m VALUES (1)"), &engine.Session{User: "app"}); strings.Contains(v.Reason, "r_kid") {
		t.Errorf("INSERT INTO m: %s names the partition's rule", v.Reason)
	}
}

// TestImplicitCalls: an access runs the routines a table's column
// DEFAULTs, CHECKs, trigger WHEN conditions and row security policies call
// (pg_depend), and carries their bodies: wipe() in a DEFAULT is an
// INSERT's no-unfiltered-writes, in a policy a SELECT's too, and in a
// DEFAULT not a DELETE's (no row gets a default).
func TestImplicitCalls(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 12 {
		rows = append(rows, nil)
	}
	rows[0] = append(rows[0], []string{"public", "defaulted"}, []string{"public", "checked"}, []string{"public", "guarded"}, []string{"public", "m"}, []string{"public", "m_1"})
	rows[10] = [][]string{{"public", "m", "public", "m_1", "p"}}
	rows[11] = [][]string{
		{"public", "defaulted", "public", "wipe", "w"},
		{"public", "checked", "public", "wipe", "w"},
		{"public", "guarded", "public", "wipe", "a"},
		{"public", "m_1", "public", "wipe", "w"},
		{"public", "items", "public", "add1", "w"},
	}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	for _, tc := range []struct {
		sql        string
		rule, says string
	}{
		{"INSERT INTO defaulted (id) VALUES (1)", "no-unfiltered-writes", "call public.wipe → DELETE without WHERE"},
		{"UPDATE defaulted SET x = DEFAULT WHERE id = 1", "no-unfiltered-writes", "wipe"},
		{"DELETE FROM defaulted WHERE id = 1", "", ""},
		{"SELECT * FROM defaulted WHERE id = 1", "", ""},
		{"INSERT INTO checked VALUES (1)", "no-unfiltered-writes", "wipe"},
		{"SELECT * FROM guarded WHERE id = 1", "no-unfiltered-writes", "wipe"},
		{"DELETE FROM guarded WHERE id = 1", "no-unfiltered-writes", "wipe"},
		{"INSERT INTO m VALUES (1)", "no-unfiltered-writes", "wipe"}, // the partition's CHECK
		{"INSERT INTO items VALUES (1)", "", ""},
	} {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "app"})
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
			t.Errorf("%s: %s (%s), want %q naming %q", tc.sql, v.RuleID, v.Reason, tc.rule, tc.says)
		}
	}
}

// TestImplicitCallsNotDDL: DDL on a table does not run its DEFAULTs or
// policies: dropping the table whose policy calls a wiping function stays
// possible; a read by DDL (CREATE TABLE AS runs it) is judged with them.
func TestImplicitCallsNotDDL(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 12 {
		rows = append(rows, nil)
	}
	rows[0] = append(rows[0], []string{"public", "guarded"})
	rows[11] = [][]string{{"public", "guarded", "public", "wipe", "a"}}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	for sql, rule := range map[string]string{
		"DROP TABLE guarded":                             "",
		"ALTER TABLE guarded DISABLE ROW LEVEL SECURITY": "",
		"DROP POLICY p ON guarded":                       "",
		"CREATE TABLE copy AS SELECT * FROM guarded":     "no-unfiltered-writes",
	} {
		if v := e.Judge([]byte(sql), &engine.Session{User: "dba"}); v.RuleID != rule {
			t.Errorf("%s: %s (%s), want %q", sql, v.RuleID, v.Reason, rule)
		}
	}
}
