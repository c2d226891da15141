package daemon

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/bpf"
)

// Why no unix-name guard loads, in fwctl status and the WARN line: the
// kernel's answer and what each guard needs, not the loader's chain as
// this kernel gave it to sqlfwd run as the unit's user (seen by hand in
// fwctl status: "no privilege for eBPF (need CAP_BPF and CAP_NET_ADMIN,
// ...): assign values: field Guard: program guard_unix_stream_connect:
// load program: operation not permitted (MEMLOCK may be too low, consider
// rlimit.RemoveMemlock)", with the unit's capabilities and as root alike).
func TestGuardRefusalInOperatorWords(t *testing.T) {
	load := func(prog string) error {
		return fmt.Errorf("loading the %s guard (needs ...): %w", prog, fmt.Errorf("%w: %w", bpf.ErrNoPrivilege,
			fmt.Errorf("assign values: field Guard: program %s: load program: %w (MEMLOCK may be too low, consider rlimit.RemoveMemlock)", prog, unix.EPERM)))
	}
	err := fmt.Errorf("%w: %w; and %w", bpf.ErrGuardRefused, load("guard_unix_stream_connect"), load("guard_unix_connect_ret"))
	got := guardRefusal(err)
	for _, want := range []string{"the kernel refuses both guard programs (EPERM, operation not permitted)", "lsm_cgroup needs the BPF LSM", "fmod_ret needs BPF trampolines"} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want %q in it", got, want)
		}
	}
	for _, goWord := range []string{"field Guard", "rlimit.", "RemoveMemlock", "assign values", "need CAP_BPF"} {
		if strings.Contains(got, goWord) {
			t.Errorf("%q says %q", got, goWord)
		}
	}
	// an error that is not the kernel's refusal is said as it is
	other := errors.New("map unix_bufs: too big")
	if got := guardRefusal(other); got != other.Error() {
		t.Errorf("got %q, want %q", got, other.Error())
	}
}
