package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// Learning, promotion and demotion on a daemon's database, without
// connections: a promotion in memory survives a reload, one written to
// learned_policy is read again by a new daemon, a fragment the policy
// cannot take changes nothing, and demote restores the policy alone.
func TestPromoteDemote(t *testing.T) {
	for _, file := range []bool{false, true} {
		dc := Database{Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"}
		if file {
			dc.LearnedPolicy = filepath.Join(t.TempDir(), "learned.yaml")
		}
		cfg := &Config{ControlSocket: "none", Databases: []Database{dc}}
		d, err := New(cfg, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), "test")
		if err != nil {
			t.Fatal(err)
		}
		db, _ := d.database("t")
		app := &engine.Session{User: "app", Database: "shop"}
		judge := func(q string) engine.Verdict { return db.engine.Load().Judge([]byte(q), app) }
		if err := d.Learn("t", true, "user,database"); err != nil {
			t.Fatal(err)
		}
		judge("SELECT name FROM items WHERE id = 1")
		if v := judge("SELECT secret FROM secrets"); v.Action.Denies() {
			t.Fatalf("learning changed a verdict: %+v", v)
		}
		// what was learned includes secrets now: promote a reviewed
		// fragment instead, with only the items scope
		frag, err := d.LearnExport("t", engine.ExportOptions{Form: engine.FormScope, Drift: "deny"})
		if err != nil {
			t.Fatal(err)
		}
		reviewed := strings.ReplaceAll(string(frag), `          "secrets": {access: [read], columns: ["secret"]}`+"\n", "")
		if reviewed == string(frag) {
			t.Fatalf("no secrets line to remove from:\n%s", frag)
		}
		if _, err := d.Promote("t", engine.ExportOptions{}, []byte("rules:\n  - {id: limits, action: allow, match: {}}\n")); err == nil {
			t.Error("a fragment reusing a policy rule id was promoted")
		}
		if v := judge("SELECT secret FROM secrets"); v.Action.Denies() {
			t.Fatalf("a refused promotion changed the policy: %+v", v)
		}
		if _, err := d.Promote("t", engine.ExportOptions{Form: engine.FormScope, Drift: "deny"}, []byte(reviewed)); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			if v := judge("SELECT secret FROM secrets"); v.RuleID != engine.DriftRuleID {
				t.Errorf("file %v, %s: a read of secrets: %+v, want drift", file, when, v)
			}
			if v := judge("SELECT name FROM items WHERE id > 3"); v.Action.Denies() {
				t.Errorf("file %v, %s: a new shape in scope: %+v", file, when, v)
			}
		}
		check("promoted")
		if err := d.Reload(); err != nil {
			t.Fatal(err)
		}
		check("after a reload")
		if db.engine.Load().Learner() == nil {
			t.Errorf("file %v: learning stopped at promotion or reload", file)
		}
		if file {
			d2, err := New(&Config{ControlSocket: "none", Databases: []Database{dc}}, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), "test")
			if err != nil {
				t.Fatal(err)
			}
			db2, _ := d2.database("t")
			if v := db2.engine.Load().Judge([]byte("SELECT secret FROM secrets"), app); v.RuleID != engine.DriftRuleID {
				t.Errorf("a new daemon does not read learned_policy: %+v", v)
			}
		}
		if err := d.Demote("t"); err != nil {
			t.Fatal(err)
		}
		if v := judge("SELECT secret FROM secrets"); v.Action.Denies() {
			t.Errorf("file %v: after demote: %+v", file, v)
		}
		if file {
			if _, err := os.Stat(dc.LearnedPolicy); !os.IsNotExist(err) {
				t.Errorf("demote left %s", dc.LearnedPolicy)
			}
		}
		if err := d.Reload(); err != nil {
			t.Fatal(err)
		}
		if v := judge("SELECT secret FROM secrets"); v.Action.Denies() {
			t.Errorf("file %v: a reload after demote brought the learned policy back: %+v", file, v)
		}
	}
}
