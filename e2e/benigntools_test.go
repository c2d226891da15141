package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenignToolsE2E runs psql's describe commands, pg_dump (plain, custom,
// parallel directory) and the restores of a dump (psql -f, pg_restore)
// through sqlfwd (enforce, embedded default policy) and straight to
// PostgreSQL, and wants the same result both ways. The statements they send
// are also corpus lines (adversarial/90-benign-psql-pgdump.tsv, which
// scripts/capture-benign.sh captures from the same database); this test adds
// the sessions: pg_dump's PREPARE/EXECUTE pairs, its snapshot shared with
// parallel workers, COPY TO STDOUT, and a restore's DDL, COPY FROM STDIN and
// setval in the order the tools send them.
func TestBenignToolsE2E(t *testing.T) {
	needSqlfwd(t)
	fwHost, fwPort := target(t)
	const db = "e2e_tools"
	restored := []string{db + "_plain", db + "_fc"}
	for _, name := range append([]string{db}, restored...) {
		directExec(t, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	directExec(t, "CREATE DATABASE "+db)
	t.Cleanup(func() {
		for _, name := range append([]string{db}, restored...) {
			directExec(t, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
	})
	schema, err := filepath.Abs("../scripts/capture-benign.sql")
	if err != nil {
		t.Fatal(err)
	}
	direct := []string{"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User}
	fw := []string{"-h", fwHost, "-p", strconv.Itoa(fwPort), "-U", pg.User}
	if r := runTool(t, time.Minute, "", nil, "psql", append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, "-f", schema}, direct...)...); r.Exit != 0 {
		t.Fatalf("loading %s directly: %s", schema, r)
	}
	// both runs the tool straight to PostgreSQL and through sqlfwd and
	// fails unless both succeed alike; it returns sqlfwd's run.
	both := func(t *testing.T, what, name string, args ...string) psqlResult {
		t.Helper()
		want := runTool(t, 2*time.Minute, "", nil, name, append(append([]string(nil), args...), direct...)...)
		got := runTool(t, 2*time.Minute, "", nil, name, append(append([]string(nil), args...), fw...)...)
		if want.Exit != 0 {
			t.Fatalf("%s straight to PostgreSQL failed (the test's setup is wrong): %s", what, want)
		}
		if got.Exit != 0 || got.Stderr != want.Stderr {
			t.Errorf("%s through sqlfwd:\n%s\nstraight to PostgreSQL:\n%s", what, got, want)
		}
		if unrestrict(got.Stdout) != unrestrict(want.Stdout) {
			t.Errorf("%s: the output through sqlfwd differs from the output straight to PostgreSQL\n--- through sqlfwd:\n%s\n--- straight:\n%s", what, got.Stdout, want.Stdout)
		}
		return got
	}

	t.Run("psql", func(t *testing.T) {
		for _, cmd := range []string{
			`\d`, `\d t`, `\d+ t`, `\d+ v_t`, `\d mv_t`, `\d t_name_idx`, `\d order_seq`, `\d app.*`,
			`\dt`, `\dt+`, `\df`, `\df+`, `\dn+`, `\du`, `\l`, `\dv`, `\dm`, `\di`, `\ds`, `\dx`, `\dT+`,
			`\dD`, `\dc`, `\dC`, `\dd`, `\ddp`, `\da`, `\dA`, `\db`, `\dE`, `\des`, `\dF`, `\dL`, `\do`,
			`\dO`, `\dP`, `\dRp`, `\dRs`, `\dX`, `\dy`, `\dl`, `\sf add`, `\sf+ touch`, `\sv v_t`, `\z`,
			`\dp t`, `\dconfig`, `\drds`,
		} {
			both(t, "psql -c "+strconv.Quote(cmd), "psql", "-X", "-d", db, "-c", cmd)
		}
	})

	dir := t.TempDir()
	var plain string
	t.Run("pg_dump", func(t *testing.T) {
		plain = both(t, "pg_dump (plain)", "pg_dump", "-d", db).Stdout
		// The archive formats: dump through sqlfwd, list and print offline.
		for _, f := range []struct{ name, flags string }{
			{"custom", "-Fc"},
			{"directory, 2 parallel workers", "-Fd -j 2"},
		} {
			out := filepath.Join(dir, strings.NewReplacer(" ", "_", ",", "").Replace(f.name))
			args := append(append(strings.Fields(f.flags), "-d", db, "-f", out), fw...)
			if r := runTool(t, 2*time.Minute, "", nil, "pg_dump", args...); r.Exit != 0 || r.Stderr != "" {
				t.Errorf("pg_dump %s through sqlfwd: %s", f.flags, r)
				continue
			}
			r := runTool(t, time.Minute, "", nil, "pg_restore", "-f", "-", out)
			if r.Exit != 0 {
				t.Errorf("pg_restore -f - of the %s dump taken through sqlfwd: %s", f.name, r)
				continue
			}
			if unrestrict(r.Stdout) != unrestrict(plain) {
				t.Errorf("the %s dump taken through sqlfwd does not print as the plain dump\n--- pg_restore -f -:\n%s\n--- plain:\n%s", f.name, r.Stdout, plain)
			}
		}
	})
	if plain == "" {
		t.Fatal("no plain dump to restore")
	}

	t.Run("restore", func(t *testing.T) {
		for _, name := range restored {
			directExec(t, "CREATE DATABASE "+name)
		}
		dump := filepath.Join(dir, "dump.sql")
		if err := os.WriteFile(dump, []byte(plain), 0o644); err != nil {
			t.Fatal(err)
		}
		custom := filepath.Join(dir, "dump.custom")
		if r := runTool(t, time.Minute, "", nil, "pg_dump", append([]string{"-Fc", "-d", db, "-f", custom}, direct...)...); r.Exit != 0 {
			t.Fatalf("pg_dump -Fc straight to PostgreSQL: %s", r)
		}
		if r := runTool(t, 2*time.Minute, "", nil, "psql", append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", restored[0], "-f", dump}, fw...)...); r.Exit != 0 || r.Stderr != "" {
			t.Errorf("psql -f (restore of the plain dump) through sqlfwd: %s", r)
		}
		if r := runTool(t, 2*time.Minute, "", nil, "pg_restore", append([]string{"--exit-on-error", "-d", restored[1], custom}, fw...)...); r.Exit != 0 || r.Stderr != "" {
			t.Errorf("pg_restore through sqlfwd: %s", r)
		}
		for _, name := range restored {
			r := runTool(t, time.Minute, "", nil, "pg_dump", append([]string{"-d", name}, direct...)...)
			if r.Exit != 0 {
				t.Errorf("pg_dump of %s: %s", name, r)
			} else if unrestrict(r.Stdout) != unrestrict(plain) {
				t.Errorf("%s, restored through sqlfwd, does not dump as the original\n--- restored:\n%s\n--- original:\n%s", name, r.Stdout, plain)
			}
		}
	})
}

// unrestrict drops the \restrict and \unrestrict lines pg_dump writes (since
// 15.14) around a plain dump: their key is random per run.
func unrestrict(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(l, `\restrict `) || strings.HasPrefix(l, `\unrestrict `) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
