package e2e

// Reload of the configuration file (issue 23 item 4): a broken file is
// refused and the configuration in force stays; mode and log_level apply
// live; the keys that need a restart are named; fwctl status shows the
// checksum in force and whether the file on disk differs.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/control"
)

func TestReloadConfigFile(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctl := filepath.Join(dir, "control.sock")
	cfgPath := filepath.Join(dir, "sqlfwd.yaml")
	conf := func(mode, level, listen string, maxConns int) string {
		return fmt.Sprintf("log_level: %s\ncontrol_socket: %s\ndatabases:\n  - name: pg\n    protocol: postgres\n    listen: %s\n    upstream: %s\n    mode: %s\n    max_connections: %d\n",
			level, ctl, listen, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)), mode, maxConns)
	}
	write := func(text string) string {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}
	first := write(conf("enforce", "info", addr, 0))
	d, err := startConfigDaemon(addr, ctl, "--config", cfgPath, "--log-format", "json")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 30))
		}
		d.stop()
	})
	status := func() control.Status {
		t.Helper()
		res := fwctl(t, d, "status", "--json")
		var st control.Status
		if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil || st.Config == nil {
			t.Fatalf("fwctl status --json: %v %s", err, res)
		}
		return st
	}
	if st := status(); st.Config.SHA256 != first || st.Config.OnDiskDiffers {
		t.Fatalf("status at start: %+v, want sha256 %s, not differing", st.Config, first)
	}

	freshTable(t, "reload_cfg_t", 1, 2, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", port, pg.User, ""))
	_, err = c.Exec(ctx, "delete from reload_cfg_t")
	checkDenied(t, "delete from reload_cfg_t", err)
	if strings.Contains(d.log(), `"level":"DEBUG"`) {
		t.Fatalf("debug lines at log_level info:\n%s", tail(d.log(), 5))
	}

	// mode, log_level and max_connections change live; listen needs a
	// restart and is named
	other, _ := freePort()
	second := write(conf("monitor", "debug", net.JoinHostPort("127.0.0.1", strconv.Itoa(other)), 1))
	if st := status(); !st.Config.OnDiskDiffers || st.Config.SHA256 != first {
		t.Fatalf("status after the edit, before reload: %+v, want the old sha256 and on_disk_differs", st.Config)
	}
	res := fwctl(t, d, "reload")
	if res.Exit != 0 || !strings.Contains(res.Stdout, "databases[pg].mode=monitor") || !strings.Contains(res.Stdout, "log_level=debug") ||
		!strings.Contains(res.Stdout, "databases[pg].max_connections=1") ||
		!strings.Contains(res.Stdout, "restart") || !strings.Contains(res.Stdout, "databases[pg].listen") {
		t.Fatalf("fwctl reload: %s; want mode, log_level and max_connections applied, listen named as needing a restart", res)
	}
	// c is open: with max_connections 1 a second session is refused
	if c3, err := pgconn.Connect(ctx, dsn("127.0.0.1", port, pg.User, "")); err == nil {
		c3.Close(ctx)
		t.Errorf("a second session with max_connections 1 reloaded was admitted")
	} else if !strings.Contains(err.Error(), "53300") {
		t.Errorf("a second session with max_connections 1: %v, want 53300", err)
	}
	if _, err := c.Exec(ctx, "delete from reload_cfg_t where id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "delete from reload_cfg_t"); err != nil {
		t.Fatalf("monitor mode after reload must let the statement through: %v", err)
	}
	if got := directInts(t, "select count(*) from reload_cfg_t"); got[0] != 0 {
		t.Errorf("rows after the monitored delete: %v, want 0", got)
	}
	log := d.log()
	if !strings.Contains(log, "until sqlfwd restarts") || !strings.Contains(log, "databases[pg].listen") {
		t.Errorf("the log does not name the key that needs a restart:\n%s", tail(log, 5))
	}
	st := status()
	if st.Config.SHA256 != second || st.Config.OnDiskDiffers || len(st.Config.NeedRestart) != 1 || st.Databases[0].Mode != "monitor" {
		t.Errorf("status after reload: %+v mode %s; want sha256 %s, not differing, listen pending, mode monitor", st.Config, st.Databases[0].Mode, second)
	}

	// a broken file: fwctl reload exits non-zero with the error, SIGHUP
	// logs it, the configuration in force stays (monitor), and the file a
	// unit's ExecReload checks first fails --check-config
	// (a quote never closed: yaml.v3 names the last line and no column;
	// each of the four says FILE:LINE:COLUMN at the opening quote, with
	// no Go type name)
	write("databases:\n  - name: pg\n    protocol: \"postgres\n    listen: 127.0.0.1:1\n")
	at := cfgPath + ":3:15: the value quoted with"
	noGo := func(what, out string) {
		t.Helper()
		for _, goName := range []string{"yaml.", "*config", "config.", "[]string", "unmarshal", "!!str"} {
			if strings.Contains(out, goName) {
				t.Errorf("%s names Go's %s:\n%s", what, goName, out)
			}
		}
	}
	res = fwctl(t, d, "reload")
	if res.Exit == 0 || !strings.Contains(res.Stderr, "refused") || !strings.Contains(res.Stderr, at) {
		t.Fatalf("fwctl reload of a broken file: %s; want non-zero and %q", res, at)
	}
	noGo("fwctl reload", res.Stderr)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; strings.Count(d.log(), "the configuration file is not valid") < 2; i++ {
		if i > 100 {
			t.Fatalf("no error logged after SIGHUP with a broken file:\n%s", tail(d.log(), 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(d.log(), at); n < 2 {
		t.Errorf("%d log lines say %q, want 2 (fwctl reload's and SIGHUP's):\n%s", n, at, tail(d.log(), 4))
	}
	freshTable(t, "reload_cfg_t", 1)
	if _, err := c.Exec(ctx, "delete from reload_cfg_t"); err != nil {
		t.Fatalf("after a refused reload monitor mode must stay: %v", err)
	}
	if st := status(); st.Config.SHA256 != second || !st.Config.OnDiskDiffers || st.Databases[0].Mode != "monitor" {
		t.Errorf("status after a refused reload: %+v mode %s; want sha256 %s in force and on_disk_differs", st.Config, st.Databases[0].Mode, second)
	}
	if r := fwctl(t, d, "status"); !strings.Contains(r.Stdout, second) || !strings.Contains(r.Stdout, "differs") {
		t.Errorf("fwctl status does not show the checksum in force and that the file differs:\n%s", r.Stdout)
	}
	if r := runToolPath(t, filepath.Join(binDir, "sqlfwd"), "--check-config", "--config", cfgPath); r.Exit != 2 || !strings.Contains(r.Stderr, at) {
		t.Errorf("sqlfwd --check-config of the broken file (the units' first ExecReload): %s; want exit 2 and %q", r, at)
	} else {
		noGo("sqlfwd --check-config", r.Stderr)
	}
	// and a start with it refuses, saying the same
	if r := runToolPath(t, filepath.Join(binDir, "sqlfwd"), "--config", cfgPath); r.Exit != 2 || !strings.Contains(r.Stderr, at) {
		t.Errorf("sqlfwd started with the broken file: %s; want exit 2 and %q", r, at)
	} else {
		noGo("sqlfwd start", r.Stderr)
	}

	// back to enforce: applied live
	write(conf("enforce", "debug", net.JoinHostPort("127.0.0.1", strconv.Itoa(other)), 0))
	if res := fwctl(t, d, "reload"); res.Exit != 0 || !strings.Contains(res.Stdout, "databases[pg].mode=enforce") || !strings.Contains(res.Stdout, "databases[pg].max_connections=0") {
		t.Fatalf("fwctl reload back to enforce: %s", res)
	}
	freshTable(t, "reload_cfg_t", 1)
	_, err = c.Exec(ctx, "delete from reload_cfg_t")
	checkDenied(t, "delete from reload_cfg_t", err)
	c4 := connect(t, ctx, dsn("127.0.0.1", port, pg.User, "")) // no limit again
	c4.Close(ctx)
	// log_level debug (in force since the second reload): a session that
	// ends logs at debug level, and no debug line precedes that reload
	for i := 0; !strings.Contains(d.log(), `"level":"DEBUG"`); i++ {
		if i > 200 {
			t.Fatalf("no debug line after log_level debug was reloaded:\n%s", tail(d.log(), 5))
		}
		time.Sleep(50 * time.Millisecond)
	}
	log = d.log()
	if strings.Index(log, `"level":"DEBUG"`) < strings.Index(log, "configuration reloaded: applied live") {
		t.Errorf("a debug line before log_level debug was reloaded:\n%s", log)
	}
}
