package e2e

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogRenameInMessagePG: good() is a harmless function and evil()
// deletes every row of a victim table, both created in another session.
// Sent straight to the server, one message that drops good, renames evil to
// good and calls good empties the table; through sqlfwd the same message
// (and one that moves evil into another schema under good's name) is denied
// with no-unfiltered-writes, absent from the statement log, the rows there
// and good() still good; renaming good and calling it by the new name runs.
func TestCatalogRenameInMessagePG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	victim, proof, good, evil, evil2, sch := "e2e_ren_victim_"+run, "e2e_ren_proof_"+run, "e2e_ren_good_"+run, "e2e_ren_evil_"+run, "e2e_ren_evilx_"+run, "e2e_ren_s_"+run
	mon := "e2e_sp_mon"
	pgRoles(t, mon)
	freshTable(t, victim, 1, 2, 3)
	freshTable(t, proof, 1, 2, 3)
	directExec(t, fmt.Sprintf(`CREATE FUNCTION %[1]s() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION %[2]s() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %[3]s; RETURN 1; END $$;
CREATE FUNCTION %[4]s() RETURNS int LANGUAGE sql AS $$ DELETE FROM %[3]s; SELECT 1 $$;
CREATE SCHEMA %[5]s; CREATE FUNCTION %[5]s.%[1]s() RETURNS int LANGUAGE sql AS $$ DELETE FROM public.%[3]s; SELECT 1 $$;
CREATE FUNCTION %[1]s_p() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION %[2]s_p() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %[6]s; RETURN 1; END $$`, good, evil, victim, evil2, sch, proof))
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP SCHEMA IF EXISTS %[5]s CASCADE; DROP FUNCTION IF EXISTS %[1]s(); DROP FUNCTION IF EXISTS %[1]s_p(); DROP FUNCTION IF EXISTS %[1]s_2(); DROP FUNCTION IF EXISTS %[2]s(); DROP FUNCTION IF EXISTS %[2]s_p(); DROP FUNCTION IF EXISTS %[3]s()", good, evil, evil2, victim, sch))
	})
	// The attack works on the server itself.
	directExec(t, fmt.Sprintf("DROP FUNCTION %[1]s_p(); ALTER FUNCTION %[2]s_p() RENAME TO %[1]s_p; SELECT %[1]s_p()", good, evil))
	if got := directInts(t, "SELECT count(*)::int FROM "+proof); !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("sent straight to the server the message left %v rows in %s, want 0", got, proof)
	}
	d := pgCatalogDaemon(t, policyWith(t, pgsql.DefaultPolicyYAML(), "", ""), mon)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), pg.User, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	mk := newMarkedPG(t, "sqlfwren_"+run)
	for _, c := range []struct{ sql, rule string }{
		{fmt.Sprintf("DROP FUNCTION %[1]s(); ALTER FUNCTION %[2]s() RENAME TO %[1]s; SELECT %[1]s()", good, evil), "no-unfiltered-writes"},
		{fmt.Sprintf("BEGIN; DROP FUNCTION %[1]s(); ALTER FUNCTION %[2]s() RENAME TO %[1]s; SELECT %[1]s(); COMMIT", good, evil2), "no-unfiltered-writes"},
		{fmt.Sprintf("DROP FUNCTION public.%[1]s(); ALTER FUNCTION %[2]s.%[1]s() SET SCHEMA public; SELECT %[1]s()", good, sch), "no-unfiltered-writes"},
		{"SELECT " + good + "()", ""},
		{fmt.Sprintf("ALTER FUNCTION %[1]s() RENAME TO %[1]s_2; SELECT %[1]s_2()", good), ""},
	} {
		mk.send(ctx, conn, c.sql, c.rule)
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3", victim, got)
	}
	mk.checkLog()
}
