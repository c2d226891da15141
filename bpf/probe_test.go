package bpf

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// probeResult is what the "probe" helper reports.
type probeResult struct {
	ProbeErr, LoadErr       string
	ProbeNoPriv, LoadNoPriv bool
	ProbeUnsupported        bool
}

func probeMain() int {
	var res probeResult
	if err := Probe(); err != nil {
		res.ProbeErr = err.Error()
		res.ProbeNoPriv = errors.Is(err, ErrNoPrivilege)
		res.ProbeUnsupported = errors.Is(err, ErrUnsupported)
	}
	r, err := LoadRedirect(RedirectConfig{Cgroup: os.Getenv("SQLFW_CGROUP"), Listen4: netip.MustParseAddrPort("127.0.0.1:6432")})
	if err == nil {
		r.Close()
	} else {
		res.LoadErr = err.Error()
		res.LoadNoPriv = errors.Is(err, ErrNoPrivilege)
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func TestProbe(t *testing.T) {
	mnt := requireKernel(t)
	if err := Probe(); err != nil {
		t.Fatalf("Probe as root: %v", err)
	}

	// Without capabilities the same calls must say "no privilege", not
	// "unsupported": callers fall back differently.
	// The go-build directory is private to root: run a world-readable copy.
	dir, err := os.MkdirTemp("", "sqlfw-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, filepath.Base(os.Args[0]))
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SQLFW_BPF_HELPER=probe", "SQLFW_CGROUP="+mnt)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("skipping unprivileged half: cannot run the test binary as nobody: %v", err)
	}
	var res probeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	t.Logf("unprivileged Probe(): %s", res.ProbeErr)
	if !res.ProbeNoPriv || res.ProbeUnsupported {
		t.Errorf("unprivileged Probe() = %q; want ErrNoPrivilege and not ErrUnsupported", res.ProbeErr)
	}
	if !res.LoadNoPriv {
		t.Errorf("unprivileged LoadRedirect() = %q; want ErrNoPrivilege", res.LoadErr)
	}
	if !strings.Contains(res.ProbeErr, "CAP_BPF") {
		t.Errorf("Probe() error %q does not name the capabilities", res.ProbeErr)
	}
}
