package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogEventTriggerPG: an event trigger created in another session
// whose function deletes every row of a victim table on each DDL: DDL
// through sqlfwd carries that body and is denied with no-unfiltered-writes
// (absent from the statement log, the table not created, the rows there);
// CREATE EVENT TRIGGER of that function through sqlfwd is denied the same
// way; a plain read runs.
func TestCatalogEventTriggerPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	victim, fn, et, et2, made := "e2e_evt_victim_"+run, "e2e_evt_wipe_"+run, "e2e_evt_"+run, "e2e_evt2_"+run, "e2e_evt_made_"+run
	mon := "e2e_sp_mon"
	pgRoles(t, mon)
	freshTable(t, victim, 1, 2, 3)
	directExec(t, fmt.Sprintf("CREATE FUNCTION %s() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; END $$", fn, victim))
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP EVENT TRIGGER IF EXISTS %s; DROP EVENT TRIGGER IF EXISTS %s; DROP FUNCTION IF EXISTS %s(); DROP TABLE IF EXISTS %s", et, et2, fn, made))
	})
	directExec(t, fmt.Sprintf("CREATE EVENT TRIGGER %s ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION %s()", et, fn))
	d := pgCatalogDaemon(t, policyWith(t, pgsql.DefaultPolicyYAML(), "", ""), mon)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), pg.User, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	mk := newMarkedPG(t, "sqlfwevt_"+run)
	for _, c := range []struct{ sql, rule string }{
		{"SELECT id FROM " + victim + " WHERE id = 1", ""},
		{"CREATE TABLE " + made + " (id int)", "no-unfiltered-writes"},
		{"CREATE EVENT TRIGGER " + et2 + " ON ddl_command_start EXECUTE FUNCTION " + fn + "()", "no-unfiltered-writes"},
	} {
		mk.send(ctx, conn, c.sql, c.rule)
	}
	if !strings.Contains(d.log(), "event trigger "+et+" → DELETE without WHERE") {
		t.Errorf("the verdicts' reasons do not name the event trigger")
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3", victim, got)
	}
	if got := directInts(t, fmt.Sprintf("SELECT count(*)::int FROM pg_class WHERE relname = '%s'", made)); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("%s exists: %v", made, got)
	}
	mk.checkLog()
}
