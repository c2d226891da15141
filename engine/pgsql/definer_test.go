package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// definerRows: pgCatalogRows with SECURITY DEFINER functions (peek_dba
// owned by dba and peek_app owned by app read secrets; wipe_dba owned by
// dba deletes every row of orders) beside the invoker ones.
func definerRows() [][][]string {
	rows := pgCatalogRows()
	def := func(name, owner, secdef, body string) []string {
		return []string{"public", name, "f", "CREATE OR REPLACE FUNCTION public." + name + "()\n RETURNS SETOF text\n LANGUAGE sql\n" +
			"AS $function$ " + body + " $function$\n", secdef, owner}
	}
	rows[2] = append(rows[2],
		def("peek_dba", "dba", "true", "select s from secrets"),
		def("peek_app", "app", "true", "select s from secrets"),
		def("peek_inv", "dba", "false", "select s from secrets"),
		def("wipe_dba", "dba", "true", "delete from orders; select 'x'"),
		def("outer_dba", "dba", "true", "select * from peek_app()"),
	)
	return rows
}

// TestDefinerAtCall: a SECURITY DEFINER function's body is judged as its
// owner when it is called, not as the session's user: rules scoped to the
// caller do not meet it, rules scoped to the owner do, unscoped rules do
// either way. An ALTER that changes who runs a body (SECURITY DEFINER,
// OWNER TO, a view's OWNER TO) judges the catalog's definition again as
// the new runner; one the catalog does not hold is unknown_object.
func TestDefinerAtCall(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(definerRows(), engine.CatalogOptions{})
	pol, err := engine.ParsePolicy([]byte(scopedPolicy))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		e          *engine.Engine
		user, sql  string
		rule, says string
	}{
		{scoped, "app", "SELECT peek_dba()", "", ""},
		{scoped, "app", "SELECT * FROM peek_dba()", "", ""},
		{scoped, "app", "SELECT peek_inv()", "app-no-secrets", "call public.peek_inv"},
		{scoped, "app", "SELECT peek()", "app-no-secrets", "call public.peek"},
		{scoped, "dba", "SELECT peek_inv()", "", ""},
		{scoped, "dba", "SELECT peek_app()", "app-no-secrets", "as its owner app"},  // the owner's scope, whoever calls
		{scoped, "dba", "SELECT outer_dba()", "app-no-secrets", "as its owner app"}, // nested: the inner owner's
		{scoped, "app", "SELECT peek_dba(), peek_inv()", "app-no-secrets", "peek_inv"},
		{def, "app", "SELECT wipe_dba()", "no-unfiltered-writes", "as its owner dba"},
		{def, "dba", "SELECT wipe_dba()", "no-unfiltered-writes", "as its owner dba"},
		// Who runs it changes; its code is judged again as the new runner.
		{scoped, "dba", "ALTER FUNCTION peek_inv() OWNER TO app", "app-no-secrets", "now run as app"},
		{scoped, "dba", "ALTER FUNCTION public.peek_app() OWNER TO dba", "", ""},
		{scoped, "dba", "ALTER FUNCTION peek_app() SECURITY DEFINER", "app-no-secrets", "now run as app"},
		{scoped, "app", "ALTER FUNCTION peek_dba() SECURITY DEFINER", "", ""},
		{scoped, "dba", "ALTER ROUTINE peek_inv OWNER TO app", "app-no-secrets", "now run as app"},
		{scoped, "app", "ALTER FUNCTION peek_inv() OWNER TO CURRENT_USER", "app-no-secrets", "now run as the session's user"},
		{scoped, "dba", "ALTER FUNCTION peek_inv() OWNER TO SESSION_USER", "", ""},
		{scoped, "dba", "ALTER VIEW v_secrets OWNER TO app", "app-no-secrets", "view public.v_secrets"},
		{scoped, "dba", "ALTER TABLE public.v_secrets OWNER TO app", "app-no-secrets", "v_secrets"},
		{scoped, "dba", "ALTER VIEW v_items OWNER TO app", "", ""},
		{scoped, "dba", "ALTER TABLE items OWNER TO app", "", ""},
		{def, "dba", "ALTER FUNCTION wipe() SECURITY DEFINER", "no-unfiltered-writes", "wipe"}, // owner not read: as the session, and unknown
		{def, "dba", "ALTER PROCEDURE purge() OWNER TO app", "no-unfiltered-writes", "purge"},
		{def, "dba", "ALTER FUNCTION nowhere() OWNER TO app", "unknown-object", "nowhere is not in the catalog"},
		{def, "dba", "ALTER VIEW nowhere OWNER TO app", "unknown-object", "nowhere"},
		{def, "dba", "ALTER FUNCTION add1(int) SECURITY DEFINER", "unknown-object", "its owner is not known"},
		{def, "dba", "ALTER FUNCTION peek_dba() OWNER TO app", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.user+" "+tc.sql, func(t *testing.T) {
			tc.e.SetCatalog(cat)
			defer tc.e.SetCatalog(nil)
			for range 2 {
				v := tc.e.Judge([]byte(tc.sql), &engine.Session{User: tc.user})
				if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
					t.Fatalf("%s as %s: %s (%s), want %q naming %q", tc.sql, tc.user, v.RuleID, v.Reason, tc.rule, tc.says)
				}
			}
		})
	}
}
