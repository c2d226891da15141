package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestConfigDiff(t *testing.T) {
	base := func() *Config {
		c := &Config{Databases: []Database{{Name: "pg", Protocol: "postgres", Listen: "127.0.0.1:1", Upstream: "127.0.0.1:2"}}}
		if err := c.Normalize(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name          string
		edit          func(*Config)
		live, restart []string
	}{
		{"nothing", func(*Config) {}, nil, nil},
		{"mode and level", func(c *Config) { c.LogLevel = "debug"; c.Databases[0].Mode = ModeMonitor }, []string{"log_level", "databases[pg].mode"}, nil},
		{"listen and drain", func(c *Config) { c.Databases[0].Listen = "127.0.0.1:3"; c.DrainTimeout++ }, nil, []string{"drain_timeout", "databases[pg].listen"}},
		{"tls added", func(c *Config) { c.Databases[0].TLS = &TLSConfig{Cert: "c", Key: "k"} }, nil, []string{"databases[pg].tls"}},
		{"database added", func(c *Config) { c.Databases = append(c.Databases, Database{Name: "my"}) }, nil, []string{"databases[my] (added)"}},
		{"database removed", func(c *Config) { c.Databases = nil }, nil, []string{"databases[pg] (removed)"}},
	} {
		c := base()
		tc.edit(c)
		live, restart := configDiff(base(), c)
		if !reflect.DeepEqual(live, tc.live) || !reflect.DeepEqual(restart, tc.restart) {
			t.Errorf("%s: live %q restart %q; want %q %q", tc.name, live, restart, tc.live, tc.restart)
		}
	}
}

// A policy file edited into something broken: the reload is refused and
// the status keeps the checksum of the policy in force, saying the file on
// disk differs.
func TestReloadKeepsPolicyInForce(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.yaml")
	good := []byte("rules: []\n")
	if err := os.WriteFile(pol, good, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{ControlSocket: "none", Databases: []Database{{Name: "pg", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1", Policy: pol}}}
	d, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256Hex(good)
	if st := d.Status().Databases[0]; st.PolicySHA256 != sum || st.PolicyOnDiskDiffers {
		t.Fatalf("at start: %+v", st)
	}
	if err := os.WriteFile(pol, []byte("rules:\n  - id: x\n    action: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(); err == nil {
		t.Fatal("a broken policy was reloaded")
	}
	if st := d.Status().Databases[0]; st.PolicySHA256 != sum || !st.PolicyOnDiskDiffers {
		t.Errorf("after a refused reload: %+v; want sha256 %s in force, differing on disk", st, sum)
	}
}
