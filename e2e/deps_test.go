package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scripts/deps.sh keeps package scripts from starting services with a
// policy-rc.d while it installs, and must take it away again, whether the
// install succeeds or fails: a policy-rc.d left behind keeps every service
// the host installs later from starting (issue 16: make demo leaves the
// host's package system as it found it). dpkg and apt-get are stubs here.
func TestDepsRemovesItsPolicyRC(t *testing.T) {
	script, err := filepath.Abs("../scripts/deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		aptExit string
		want    int // deps.sh exit status: 0, or non-zero (apt failed)
	}{
		{"install succeeds", "0", 0},
		{"install fails", "100", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			stubs := filepath.Join(dir, "bin")
			if err := os.Mkdir(stubs, 0o755); err != nil {
				t.Fatal(err)
			}
			rc := filepath.Join(dir, "policy-rc.d")
			seen := filepath.Join(dir, "seen")
			write := func(name, body string) {
				if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write("dpkg", "exit 1\n") // every package is missing
			// apt-get notes whether the policy-rc.d was in place and
			// denies starts while it ran
			write("apt-get", `if [ "$1" = install ]; then "`+rc+`" x start; echo "rc exit $?" >> "`+seen+`"; exit `+tt.aptExit+`; fi`+"\n")
			write("sudo", `exec "$@"`+"\n")
			env := []string{
				"PATH=" + stubs + ":" + os.Getenv("PATH"),
				"SQLFW_POLICY_RC=" + rc,
			}
			res := runCmd(t, 5*time.Minute, "", env, "bash", script)
			if (res.Exit == 0) != (tt.want == 0) {
				t.Fatalf("input deps.sh with apt-get exiting %s\ngot %s\nwant exit %d", tt.aptExit, res, tt.want)
			}
			got, _ := os.ReadFile(seen)
			if strings.TrimSpace(string(got)) != "rc exit 101" {
				t.Errorf("during apt-get install: got %q, want the policy-rc.d in place denying starts (rc exit 101)", got)
			}
			if _, err := os.Stat(rc); !os.IsNotExist(err) {
				t.Errorf("after deps.sh: %s still exists (%v); want it removed", rc, err)
			}
		})
	}
	// A policy-rc.d the host had before is the host's: left as it was.
	t.Run("host's own policy-rc.d", func(t *testing.T) {
		dir := t.TempDir()
		rc := filepath.Join(dir, "policy-rc.d")
		own := "#!/bin/sh\n# the host's\nexit 101\n"
		if err := os.WriteFile(rc, []byte(own), 0o755); err != nil {
			t.Fatal(err)
		}
		stubs := filepath.Join(dir, "bin")
		os.Mkdir(stubs, 0o755)
		os.WriteFile(filepath.Join(stubs, "dpkg"), []byte("#!/bin/sh\nexit 1\n"), 0o755)
		os.WriteFile(filepath.Join(stubs, "apt-get"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		os.WriteFile(filepath.Join(stubs, "sudo"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755)
		res := runCmd(t, 5*time.Minute, "", []string{"PATH=" + stubs + ":" + os.Getenv("PATH"), "SQLFW_POLICY_RC=" + rc}, "bash", script)
		if res.Exit != 0 {
			t.Fatalf("deps.sh: %s", res)
		}
		if got, _ := os.ReadFile(rc); string(got) != own {
			t.Errorf("the host's policy-rc.d: got %q, want it untouched", got)
		}
	})
}
