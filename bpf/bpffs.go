package bpf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// bpffsMagic is BPF_FS_MAGIC from include/uapi/linux/magic.h.
const bpffsMagic = 0xcafe4a11

// EnsureBPFFS makes sure dir can hold pins: if its closest existing parent
// is not on a bpffs mount, it mounts one at /sys/fs/bpf (the conventional
// place, not mounted by default on some hosts) and checks again.
func EnsureBPFFS(dir string) error {
	onBPFFS := func() (bool, error) {
		p := dir
		for {
			var st unix.Statfs_t
			err := unix.Statfs(p, &st)
			if err == nil {
				return uint32(st.Type) == bpffsMagic, nil
			}
			if !errors.Is(err, unix.ENOENT) || p == "/" {
				return false, err
			}
			p = filepath.Dir(p)
		}
	}
	ok, err := onBPFFS()
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	if ok {
		return nil
	}
	if err := os.MkdirAll("/sys/fs/bpf", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"); err != nil {
		return classify(fmt.Errorf("mounting bpffs at /sys/fs/bpf: %w", err))
	}
	if ok, err := onBPFFS(); err != nil || !ok {
		return fmt.Errorf("%s is not on a bpffs mount (pins must live under /sys/fs/bpf)", dir)
	}
	return nil
}
