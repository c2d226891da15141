package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The image definition cannot be built here (no container engine on these
// machines), so this checks what can go stale without one: every file it
// copies from the repository exists, it builds with make build, and the
// binary it starts is where the DaemonSet expects it.
func TestContainerfile(t *testing.T) {
	root := filepath.Join("..")
	f, err := os.Open(filepath.Join(root, "deploy/container/Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var copies, runs []string
	entry := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "COPY":
			if strings.HasPrefix(fields[1], "--from=") {
				continue // from the build stage
			}
			copies = append(copies, fields[1:len(fields)-1]...)
		case "RUN":
			runs = append(runs, strings.Join(fields[1:], " "))
		case "ENTRYPOINT":
			entry = strings.Join(fields[1:], " ")
		}
	}
	for _, src := range copies {
		if src == "." {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, src)); err != nil {
			t.Errorf("Containerfile copies %s: %v", src, err)
		}
	}
	if !strings.Contains(strings.Join(runs, "\n"), "make build") {
		t.Errorf("Containerfile does not build with make build: %q", runs)
	}
	ds, err := os.ReadFile(filepath.Join(root, "deploy/kubernetes/daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if entry != `["/usr/bin/sqlfwd"]` || !strings.Contains(string(ds), "/usr/bin") {
		t.Errorf("ENTRYPOINT %s; want /usr/bin/sqlfwd, where the DaemonSet's image comment says the binaries are", entry)
	}
}
