package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// The policy key of a database changes live: the engine is built from the
// newly named file, and status names it with its checksum; a broken file
// named by the new key is refused and the old one stays.
func TestReloadPolicyPath(t *testing.T) {
	dir := t.TempDir()
	polA, polB, polC := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
	a, b := []byte("rules: []\n"), []byte("rules:\n  - id: no-secret\n    action: deny\n    reason: r\n    match:\n      tables: [secret]\n")
	for p, text := range map[string][]byte{polA: a, polB: b, polC: []byte("rules:\n  - id: x\n    action: maybe\n")} {
		if err := os.WriteFile(p, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(dir, "sqlfwd.yaml")
	conf := func(pol string) []byte {
		return []byte("control_socket: none\ndatabases:\n  - name: pg\n    protocol: postgres\n    listen: 127.0.0.1:0\n    upstream: 127.0.0.1:1\n    policy: " + pol + "\n")
	}
	load := func(b []byte) (*Config, error) {
		c, err := ParseConfig(b)
		if err != nil {
			return nil, err
		}
		return c, c.Normalize()
	}
	first := conf(polA)
	cfg, err := load(first)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetConfigSource(ConfigSource{Path: cfgPath, Load: load}, first); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, conf(polB), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := d.ReloadReport()
	if err != nil || !reflect.DeepEqual(res.Applied, []string{"databases[pg].policy=" + polB}) || len(res.NeedRestart) != 0 {
		t.Fatalf("reload to b: %+v %v", res, err)
	}
	st := d.Status().Databases[0]
	if st.Policy != polB || st.PolicySHA256 != sha256Hex(b) || d.databases()[0].engine.Load().Policy().Len() != 1 {
		t.Fatalf("after reload to b: %+v, %d rules", st, d.databases()[0].engine.Load().Policy().Len())
	}
	if err := os.WriteFile(cfgPath, conf(polC), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReloadReport(); err == nil {
		t.Fatal("a policy key naming a broken file was reloaded")
	}
	if st := d.Status().Databases[0]; st.Policy != polB || st.PolicySHA256 != sha256Hex(b) {
		t.Errorf("after the refused reload: %+v, want b in force", st)
	}
}

// Started without a configuration file (zero-config): a reload while there
// is still none re-reads the policies as before; a file written since is
// checked, a broken one refused with its FILE:LINE:COLUMN, a valid one
// named as in force only after a restart (nothing of it applied), and the
// status says so. Before, a reload never read the file: a broken one was
// "reloaded" (fwctl reload exit 0) and a valid one silently ignored.
func TestReloadAfterStartWithoutFile(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "sqlfwd.yaml")
	cfg := &Config{ControlSocket: "none", Databases: []Database{{Name: "found", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"}}}
	d, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	level := new(slog.LevelVar)
	load := func(b []byte) (*Config, error) {
		c, err := ParseConfigFile(cfgPath, b)
		if err != nil {
			return nil, err
		}
		return c, c.Normalize()
	}
	if err := d.SetConfigSource(ConfigSource{Path: cfgPath, Load: load, Level: level, AbsentAtStart: true}, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := d.ReloadReport(); err != nil || len(res.NeedRestart) != 0 || len(res.Applied) != 0 {
		t.Fatalf("reload with no file yet: %+v %v", res, err)
	}
	if c := d.Status().Config; c == nil || c.SHA256 != "" || c.OnDiskDiffers || c.Path != cfgPath {
		t.Fatalf("status with no file: %+v", c)
	}
	os.WriteFile(cfgPath, []byte("log_level: \"debug\n"), 0o644)
	if _, err := d.ReloadReport(); err == nil || !strings.Contains(err.Error(), cfgPath+":1:12: the value quoted with") {
		t.Errorf("reload of a broken file written since: %v; want it refused at %s:1:12", err, cfgPath)
	}
	os.WriteFile(cfgPath, []byte("log_level: debug\ndatabases:\n  - name: pg\n    protocol: postgres\n    listen: 127.0.0.1:0\n    upstream: 127.0.0.1:1\n"), 0o644)
	res, err := d.ReloadReport()
	if err != nil || len(res.Applied) != 0 || !reflect.DeepEqual(res.NeedRestart, []string{absentNeedsRestart}) {
		t.Fatalf("reload of a valid file written since: %+v %v; want nothing applied, the file named as needing a restart", res, err)
	}
	if level.Level() != slog.LevelInfo || d.databases()[0].cfg.Name != "found" {
		t.Errorf("the file was applied: level %v, first database %s", level.Level(), d.databases()[0].cfg.Name)
	}
	if c := d.Status().Config; c.SHA256 != "" || !c.OnDiskDiffers || !reflect.DeepEqual(c.NeedRestart, []string{absentNeedsRestart}) {
		t.Errorf("status after: %+v", c)
	}
	if !strings.Contains(res.String(), "in force only after a restart of sqlfwd: the whole file") {
		t.Errorf("fwctl reload would say %q", res.String())
	}
}
