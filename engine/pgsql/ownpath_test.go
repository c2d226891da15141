package pgsql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// ownPathRoutine is the row of the routines query for function x.name
// with the SET clause set ("" none), SECURITY DEFINER when owner is not "",
// and the plpgsql body.
func ownPathRoutine(schema, name, set, owner, body string) []string {
	def := fmt.Sprintf("CREATE OR REPLACE FUNCTION %s.%s()\n RETURNS integer\n LANGUAGE plpgsql\n", schema, name)
	definer := "false"
	if owner != "" {
		def += " SECURITY DEFINER\n"
		definer = "true"
	} else {
		owner = "postgres"
	}
	if set != "" {
		def += " SET search_path TO " + set + "\n"
	}
	def += "AS $function$ begin " + body + "; return 1; end $function$\n"
	return []string{schema, name, "f", def, definer, owner}
}

// TestRoutineOwnSearchPath: a routine whose definition sets its own
// search_path (CREATE FUNCTION ... SET search_path) runs its body in that
// path, so the body's unqualified names are the objects that path picks,
// not every schema's (engine.Catalog ownPath): safe.v and safe.f are
// harmless, evil.v reads the secrets, evil.f deletes every row. The
// adversarial variants: quoted names (case kept), $user (the owner of a
// SECURITY DEFINER routine; not narrowed in an invoker's), pg_temp first
// (named or implicit: any session's temporary relation of the name counts),
// an empty path (a user name resolves nowhere: every schema's; a built-in
// routine is pg_catalog's), a trigger's function, a routine elsewhere that
// changes the path (nothing narrowed), and a refresh that adds or removes
// the object the path picks (the names qualified again, not reused).
func TestRoutineOwnSearchPath(t *testing.T) {
	rows := twoSchemaRows()
	rows[1] = append(rows[1],
		[]string{"Mixed", "w", " SELECT secrets.s\n   FROM secrets;"},
		[]string{"mixed", "w", " SELECT items.id\n   FROM public.items;"},
	)
	rows[2] = append(rows[2],
		[]string{"public", "lower", "f", "CREATE OR REPLACE FUNCTION public.lower(text)\n RETURNS text\n LANGUAGE sql\nAS $function$ delete from public.orders; select 'x' $function$\n"},
		ownPathRoutine("x", "g_safe", "'safe'", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_evil", "'evil'", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_safe_evil", "'safe', 'evil'", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_evil_safe", "'evil', 'safe'", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_none", "", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_qualified", "'safe'", "", "perform count(*) from evil.v"),
		ownPathRoutine("x", "g_mixed_upper", "'Mixed'", "", "perform count(*) from w"),
		ownPathRoutine("x", "g_mixed_lower", "'mixed'", "", "perform count(*) from w"),
		ownPathRoutine("x", "g_f_safe", "'safe'", "", "perform f()"),
		ownPathRoutine("x", "g_f_evil", "'evil', 'pg_temp'", "", "perform f()"),
		ownPathRoutine("x", "g_f_both", "'safe', 'evil'", "", "perform f()"), // overloads: each on the path
		ownPathRoutine("x", "g_user_definer_safe", "'$user'", "safe", "perform f()"),
		ownPathRoutine("x", "g_user_definer_evil", "'$user'", "evil", "perform f()"),
		ownPathRoutine("x", "g_user_invoker", "'$user'", "", "perform f()"),
		ownPathRoutine("x", "g_temp_named", "'pg_temp', 'public'", "", "perform count(*) from items"),
		ownPathRoutine("x", "g_temp_implicit", "'public'", "", "perform count(*) from items"),
		ownPathRoutine("x", "g_temp_last", "'public', 'pg_temp'", "", "perform count(*) from items"),
		ownPathRoutine("x", "g_empty_v", "''", "", "perform count(*) from v"),
		ownPathRoutine("x", "g_empty_lower", "''", "", "perform lower('A')"),
		ownPathRoutine("x", "g_public_lower", "'public'", "", "perform lower('A')"),
		ownPathRoutine("x", "tg_safe", "'safe'", "", "perform f()"),
		ownPathRoutine("x", "tg_evil", "'evil'", "", "perform f()"),
	)
	// triggers: tgtype 5 = ROW | INSERT
	rows[3] = append(rows[3], []string{"public", "t_items", "public", "items", "5", "x", "tg_safe"}, []string{"public", "t_secrets", "public", "secrets", "5", "x", "tg_evil"})
	reader := Dialect.(engine.CatalogReader)
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
	cat := reader.BuildCatalog(rows, engine.CatalogOptions{})
	scoped.SetCatalog(cat)
	def.SetCatalog(cat)
	tests := []struct {
		name string
		e    *engine.Engine
		sql  string
		want string
	}{
		{"safe path", scoped, "SELECT x.g_safe()", ""},
		{"evil path", scoped, "SELECT x.g_evil()", "app-no-secrets"},
		{"safe before evil: the first relation", scoped, "SELECT x.g_safe_evil()", ""},
		{"evil before safe", scoped, "SELECT x.g_evil_safe()", "app-no-secrets"},
		{"no SET: every schema's", scoped, "SELECT x.g_none()", "app-no-secrets"},
		{"a qualified name stays", scoped, "SELECT x.g_qualified()", "app-no-secrets"},
		{"quoted: case kept", scoped, "SELECT x.g_mixed_upper()", "app-no-secrets"},
		{"quoted: the lower-case schema", scoped, "SELECT x.g_mixed_lower()", ""},
		{"routine: safe", def, "SELECT x.g_f_safe()", ""},
		{"routine: evil", def, "SELECT x.g_f_evil()", "no-unfiltered-writes"},
		{"routine: every schema on the path", def, "SELECT x.g_f_both()", "no-unfiltered-writes"},
		{"$user of a definer owned by safe", def, "SELECT x.g_user_definer_safe()", ""},
		{"$user of a definer owned by evil", def, "SELECT x.g_user_definer_evil()", "no-unfiltered-writes"},
		{"$user of an invoker: not narrowed", def, "SELECT x.g_user_invoker()", "no-unfiltered-writes"},
		{"pg_temp named first: the temporary view counts", scoped, "SELECT x.g_temp_named()", "app-no-secrets"},
		{"pg_temp implicitly first", scoped, "SELECT x.g_temp_implicit()", "app-no-secrets"},
		{"pg_temp last: public.items", scoped, "SELECT x.g_temp_last()", ""},
		{"empty path: a user name resolves nowhere known", scoped, "SELECT x.g_empty_v()", "app-no-secrets"},
		{"empty path: a built-in is pg_catalog's", def, "SELECT x.g_empty_lower()", ""},
		{"public on the path: its lower counts", def, "SELECT x.g_public_lower()", "no-unfiltered-writes"},
		{"a trigger's function: safe", def, "INSERT INTO public.items (id) VALUES (1)", ""},
		{"a trigger's function: evil", def, "INSERT INTO public.secrets (id) VALUES (1)", "no-unfiltered-writes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 {
				if v := tc.e.Judge([]byte(tc.sql), &engine.Session{User: "app"}); v.RuleID != tc.want {
					t.Fatalf("%s: %s (%s), want %q", tc.sql, v.RuleID, v.Reason, tc.want)
				}
			}
		})
	}

	// DDL may have changed a routine's path: in the same message after
	// it, and while the daemon holds the catalog unsettled (after it
	// judged DDL, until its next read), bodies' names are every schema's.
	for _, c := range []struct {
		name string
		cat  *engine.Catalog
		sql  string
		want string
	}{
		{"after an ALTER in the message", cat, "ALTER FUNCTION x.g_safe() SET search_path = evil; SELECT x.g_safe()", "app-no-secrets"},
		{"after other DDL in the message", cat, "CREATE TABLE t1 (id int); SELECT x.g_safe()", "app-no-secrets"},
		{"unsettled", cat.Unsettled(), "SELECT x.g_safe()", "app-no-secrets"},
		{"settled again", cat, "SELECT x.g_safe()", ""},
	} {
		scoped.SetCatalog(c.cat)
		if v := scoped.Judge([]byte(c.sql), &engine.Session{User: "app"}); v.RuleID != c.want {
			t.Errorf("%s: %s: %s, want %q", c.name, c.sql, v.RuleID, c.want)
		}
	}
	if u := cat.Unsettled(); u.Unsettled() != u {
		t.Errorf("Unsettled of an unsettled catalog is another copy")
	}

	// A routine elsewhere that changes the path: no body's path is
	// followed (it may run inside any body).
	unsafe := append([][][]string(nil), rows...)
	unsafe[2] = append(append([][]string(nil), rows[2]...), ownPathRoutine("x", "setter", "", "", "perform set_config('search_path', 'evil', false)"))
	scoped.SetCatalog(reader.BuildCatalog(unsafe, engine.CatalogOptions{}))
	if v := scoped.Judge([]byte("SELECT x.g_safe()"), &engine.Session{User: "app"}); v.RuleID != "app-no-secrets" {
		t.Errorf("with a routine that sets the path: %s, want app-no-secrets (every schema's v)", v.RuleID)
	}

	// A refresh qualifies again: w2 first only in evil, then also in
	// safe (before evil on the path), then in evil only again.
	w2 := func(inSafe bool) [][][]string {
		r := append([][][]string(nil), rows...)
		r[1] = append(append([][]string(nil), rows[1]...), []string{"evil", "w2", " SELECT secrets.s\n   FROM secrets;"})
		if inSafe {
			r[1] = append(r[1], []string{"safe", "w2", " SELECT items.id\n   FROM public.items;"})
		}
		r[2] = append(append([][]string(nil), rows[2]...), ownPathRoutine("x", "g_w2", "'safe', 'evil'", "", "perform count(*) from w2"))
		return r
	}
	var prev *engine.Catalog
	for i, inSafe := range []bool{false, true, false} {
		prev = reader.BuildCatalog(w2(inSafe), engine.CatalogOptions{Previous: prev})
		scoped.SetCatalog(prev)
		want := "app-no-secrets"
		if inSafe {
			want = ""
		}
		if v := scoped.Judge([]byte("SELECT x.g_w2()"), &engine.Session{User: "app"}); v.RuleID != want {
			t.Errorf("read %d (safe.w2 %v): %s, want %q", i, inSafe, v.RuleID, want)
		}
	}
}

// TestRoutinePath: the search_path a routine's definition sets, as
// pg_get_functiondef prints it.
func TestRoutinePath(t *testing.T) {
	for _, c := range []struct {
		set, owner string
		definer    bool
		want       string // "-": none read
	}{
		{"'app', 'pg_temp'", "o", false, "app,pg_temp"},
		{"'App'", "o", false, "App"},
		{"''", "o", false, ""},
		{"'$user', 'public'", "bob", true, "bob,public"},
		{"'$user', 'public'", "bob", false, "-"},
		{"'a,b'", "o", false, "-"},
		{"'a\"b'", "o", false, "-"},
	} {
		def := "CREATE OR REPLACE FUNCTION s.f()\n RETURNS integer\n LANGUAGE sql\n SET search_path TO " + c.set + "\nAS $function$ select 1 $function$\n"
		p, ok := routinePath(def, c.owner, c.definer)
		got := "-"
		if ok {
			got = strings.Join(p, ",")
		}
		if got != c.want {
			t.Errorf("SET search_path TO %s (owner %s, definer %v): %q, want %q", c.set, c.owner, c.definer, got, c.want)
		}
	}
	if _, ok := routinePath("CREATE OR REPLACE FUNCTION s.f()\n RETURNS integer\n LANGUAGE sql\n SET work_mem TO '1MB'\nAS $function$ select 1 $function$\n", "o", false); ok {
		t.Errorf("a routine without a search_path of its own has one")
	}
}
