package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// kubeletDir lays out files the way kubelet mounts a ConfigMap: each file is
// a symlink through ..data to a timestamped directory, and an update writes a
// new directory and renames a new ..data link over the old one.
type kubeletDir struct {
	t   *testing.T
	dir string
	gen int
}

func (k *kubeletDir) write(files map[string]string) {
	k.t.Helper()
	k.gen++
	ts := filepath.Join(k.dir, "..2026_12_01_"+string(rune('a'+k.gen)))
	if err := os.Mkdir(ts, 0o755); err != nil {
		k.t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ts, name), []byte(text), 0o644); err != nil {
			k.t.Fatal(err)
		}
		link := filepath.Join(k.dir, name)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				k.t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(k.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		k.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(k.dir, "..data")); err != nil {
		k.t.Fatal(err)
	}
}

func TestWatchFilesSeesConfigMapSwap(t *testing.T) {
	k := &kubeletDir{t: t, dir: t.TempDir()}
	k.write(map[string]string{"sqlfwd.yaml": "a: 1\n", "policy.yaml": "rules: []\n"})
	calls := make(chan struct{}, 10)
	stop := make(chan struct{})
	done := make(chan struct{})
	paths := []string{filepath.Join(k.dir, "sqlfwd.yaml"), filepath.Join(k.dir, "policy.yaml")}
	const every = 20 * time.Millisecond
	go func() {
		WatchFiles(stop, paths, every, func() { calls <- struct{}{} })
		close(done)
	}()
	defer func() { close(stop); <-done }()

	expect := func(what string, want int) {
		t.Helper()
		time.Sleep(10 * every)
		if got := len(calls); got != want {
			t.Fatalf("%s: %d reloads, want %d", what, got, want)
		}
		for len(calls) > 0 {
			<-calls
		}
	}
	expect("nothing changed", 0)
	k.write(map[string]string{"sqlfwd.yaml": "a: 1\n", "policy.yaml": "rules: [x]\n"})
	expect("policy swapped in", 1)
	k.write(map[string]string{"sqlfwd.yaml": "a: 1\n", "policy.yaml": "rules: [x]\n"})
	expect("same content in a new directory", 0)
	os.Remove(paths[1])
	expect("policy removed", 1)
}

func TestWatchedFiles(t *testing.T) {
	cfg := &Config{Databases: []Database{
		{Policy: "/p1", TLS: &TLSConfig{Cert: "/c", Key: "/k"}},
		{UpstreamTLS: &UpstreamTLS{CA: "/ca"}},
	}}
	got := WatchedFiles(cfg, "/etc/sqlfw/sqlfwd.yaml")
	want := []string{"/etc/sqlfw/sqlfwd.yaml", "/p1", "/c", "/k", "/ca"}
	if len(got) != len(want) {
		t.Fatalf("WatchedFiles = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("WatchedFiles = %v, want %v", got, want)
		}
	}
}
