package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestControlSocketResolution: sqlfwd resolves its control socket as fwctl
// does (control.ResolveSocket): --control-socket, else
// $SQLFW_CONTROL_SOCKET, else the file's control_socket, else the default;
// fwctl with the same environment and no flag reaches it.
func TestControlSocketResolution(t *testing.T) {
	dir := t.TempDir()
	env, file, flag := filepath.Join(dir, "env.sock"), filepath.Join(dir, "file.sock"), filepath.Join(dir, "flag.sock")
	cases := []struct {
		name       string
		fileSocket string
		env        string
		args       []string
		want       string
		absent     []string
	}{
		{"environment, the file names none", "", env, nil, env, []string{file, flag}},
		{"environment beats the file", file, env, nil, env, []string{file, flag}},
		{"the flag beats the environment", file, env, []string{"--control-socket", flag}, flag, []string{env, file}},
		{"the file without environment", file, "", nil, file, []string{env, flag}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SQLFW_CONTROL_SOCKET", tc.env)
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			yaml := fmt.Sprintf("databases:\n  - protocol: postgres\n    listen: %s\n    upstream: %s\n", addr, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)))
			if tc.fileSocket != "" {
				yaml = "control_socket: " + tc.fileSocket + "\n" + yaml
			}
			cfg := filepath.Join(t.TempDir(), "sqlfwd.yaml")
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := startConfigDaemon(addr, tc.want, append([]string{"--config", cfg}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer d.stop()
			// the control socket opens after the listener: wait for the start
			for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
				if i > 200 {
					t.Fatalf("sqlfwd did not start:\n%s", tail(d.log(), 10))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if fi, err := os.Stat(tc.want); err != nil || fi.Mode()&os.ModeSocket == 0 {
				t.Errorf("no control socket at %s: %v", tc.want, err)
			}
			for _, p := range tc.absent {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("a control socket at %s too", p)
				}
			}
			if tc.env != "" && len(tc.args) == 0 {
				// fwctl, same environment, no flag
				if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "status"); res.Exit != 0 {
					t.Errorf("fwctl status with SQLFW_CONTROL_SOCKET=%s: %s", tc.env, res)
				}
			}
		})
	}
}
