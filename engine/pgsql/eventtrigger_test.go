package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestEventTriggers: an event trigger's function runs on every DDL
// statement: DDL carries its body's effects; CREATE EVENT TRIGGER of an
// existing function is judged by the function's body, as CREATE FUNCTION
// with that body would be.
func TestEventTriggers(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 10 {
		rows = append(rows, nil)
	}
	rows[2] = append(rows[2],
		[]string{"public", "log_ddl", "f", "CREATE OR REPLACE FUNCTION public.log_ddl()\n RETURNS event_trigger\n LANGUAGE plpgsql\nAS $function$ begin insert into items values (1); end $function$\n"},
		[]string{"public", "wipe_ddl", "f", "CREATE OR REPLACE FUNCTION public.wipe_ddl()\n RETURNS event_trigger\n LANGUAGE plpgsql\nAS $function$ begin delete from orders; end $function$\n"},
	)
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	harmless := append([][][]string(nil), rows...)
	harmless[9] = [][]string{{"et_log", "ddl_command_end", "public", "log_ddl"}}
	dangerous := append([][][]string(nil), rows...)
	dangerous[9] = [][]string{{"et_log", "ddl_command_end", "public", "log_ddl"}, {"et_wipe", "sql_drop", "public", "wipe_ddl"}}
	for _, tc := range []struct {
		rows       [][][]string
		sql        string
		rule, says string
	}{
		{harmless, "CREATE INDEX ON items (id)", "", ""},
		{harmless, "ALTER TABLE items ADD COLUMN c int", "", ""},
		{dangerous, "CREATE TABLE t2 (id int)", "no-unfiltered-writes", "event trigger et_wipe → DELETE without WHERE"},
		{dangerous, "DROP TABLE items", "no-unfiltered-writes", "et_wipe"},
		{dangerous, "SELECT id FROM items WHERE id = 1", "", ""}, // not DDL
		{harmless, "CREATE EVENT TRIGGER et2 ON ddl_command_start EXECUTE FUNCTION wipe_ddl()", "no-unfiltered-writes", "wipe_ddl"},
		{harmless, "CREATE EVENT TRIGGER et2 ON ddl_command_start EXECUTE FUNCTION log_ddl()", "", ""},
		{harmless, "CREATE EVENT TRIGGER et2 ON ddl_command_start EXECUTE FUNCTION nowhere()", "unknown-object", "what the trigger will run is not known"},
		{harmless, "CREATE TRIGGER t2 AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION touch()", "no-unfiltered-writes", "run by the trigger"},
		{harmless, "CREATE TRIGGER t2 AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION nowhere()", "unknown-object", "nowhere"},
	} {
		e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(tc.rows, engine.CatalogOptions{}))
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "dba"})
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
			t.Errorf("%s: %s (%s), want %q naming %q", tc.sql, v.RuleID, v.Reason, tc.rule, tc.says)
		}
	}
}
