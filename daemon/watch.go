package daemon

// Reload on change: a ConfigMap mounted in a pod changes by kubelet swapping
// a ..data symlink to a new directory, so no file is written in place and an
// inotify watch on the file sees nothing. Polling the content of each file
// (opened by name, so through the symlinks) sees every way a file can
// change, at the cost of reading a few small files per interval.

import (
	"crypto/sha256"
	"io"
	"os"
	"time"
)

// WatchedFiles lists the files Reload reads (policies, certificates),
// after the configuration itself when configPath is set.
func WatchedFiles(cfg *Config, configPath string) []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p)
		}
	}
	add(configPath)
	for _, db := range cfg.Databases {
		add(db.Policy)
		if t := db.TLS; t != nil {
			add(t.Cert)
			add(t.Key)
			add(t.ClientCA)
		}
		if u := db.UpstreamTLS; u != nil {
			add(u.CA)
		}
	}
	return out
}

// WatchFiles calls changed when the content of any of paths has changed
// and then stayed the same for one more interval (so that a file being
// rewritten, or a ConfigMap's files swapped one after another, triggers one
// call), until stop is closed. A file that cannot be read counts as a
// content of its own: its disappearance and return are changes too.
func WatchFiles(stop <-chan struct{}, paths []string, every time.Duration, changed func()) {
	if len(paths) == 0 || every <= 0 {
		return
	}
	sums := func() string {
		h := sha256.New()
		for _, p := range paths {
			h.Write([]byte(p + "\x00"))
			f, err := os.Open(p)
			if err != nil {
				h.Write([]byte("unreadable\x00"))
				continue
			}
			io.Copy(h, f)
			f.Close()
			h.Write([]byte{0})
		}
		return string(h.Sum(nil))
	}
	t := time.NewTicker(every)
	defer t.Stop()
	applied := sums()
	pending := ""
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := sums()
		switch {
		case now == applied:
			pending = ""
		case now != pending:
			pending = now // changed: wait one interval for it to settle
		default:
			applied, pending = now, ""
			changed()
		}
	}
}
