package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

// The review as fwctl prints it: per application what it did, what rules
// denied, and in the diff what a promotion adds, what stays denied, and
// drift.
func TestLearnReview(t *testing.T) {
	pg, err := protocol.Named("postgres")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(pg.DefaultPolicy(), pg.Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := engine.NewLearnerBy(pg.Dialect, 0, engine.LearnByUser|engine.LearnByDatabase)
	e.SetLearner(l)
	app := &engine.Session{User: "shop", Database: "app"}
	for _, q := range []string{"SELECT name FROM items WHERE id = 1", "SELECT name FROM items WHERE id = 2", "DELETE FROM items"} {
		e.Judge([]byte(q), app)
	}
	r := l.Report()
	st := &control.LearnStatus{Database: "main", Protocol: "postgres", Learning: true, Since: "2026-12-02T00:00:00Z", Report: &r}
	var b bytes.Buffer
	printLearnStatus(&b, st)
	for _, want := range []string{"database main (postgres): learning since", "learned policy in force: none", "shop@app: 3 statements, 2 shapes, kinds select", "table items (read) columns id, name", "denied by no-unfiltered-writes: 1 statements"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printLearnDiff(&b, st)
	for _, want := range []string{"shop@app:", "new         2  SELECT name FROM items WHERE id = $1", "denied      1  DELETE FROM items  (by no-unfiltered-writes: not learned, stays denied)", "no learned policy in force"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "= 1") {
		t.Errorf("the diff shows a literal:\n%s", b.String())
	}
}
