package pgsql

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestCatalogSnapshot: a snapshot written from a read's rows and read back
// (JSON) makes the same catalog: the same verdicts and the chain Chains
// shows; a snapshot of another dialect's queries is refused.
func TestCatalogSnapshot(t *testing.T) {
	r := Dialect.(engine.CatalogReader)
	b, err := json.Marshal(engine.NewSnapshot(r, "postgres", "shop", pgCatalogRows()))
	if err != nil {
		t.Fatal(err)
	}
	var snap engine.CatalogSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	c, err := snap.Catalog(r, engine.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Chains([]byte("SELECT wipe()"), nil); got != nil {
		t.Fatalf("chains without a catalog: %v", got)
	}
	e.SetCatalog(c)
	if v := e.Judge([]byte("SELECT wipe()"), nil); v.RuleID != "no-unfiltered-writes" {
		t.Errorf("SELECT wipe() through the snapshot: %s", v.RuleID)
	}
	want := [][]string{{"view public.v_v → v_secrets", "view public.v_secrets → secrets"}, nil, {"call public.wipe → DELETE without WHERE"}}
	if got := e.Chains([]byte("SELECT * FROM v_v; SELECT 1; SELECT wipe()"), nil); !reflect.DeepEqual(got, want) {
		t.Errorf("chains: %q, want %q", got, want)
	}
	other := engine.CatalogSnapshot{Protocol: "mysql", Queries: []engine.SnapshotQuery{{Name: "procs", Rows: [][]string{{"x"}}}}}
	if _, err := other.Catalog(r, engine.CatalogOptions{}); err == nil {
		t.Error("a snapshot with none of the dialect's queries was read")
	}
}
