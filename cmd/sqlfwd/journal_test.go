package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestJournalPriorities(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stream string
		prefixed     bool
	}{
		{"journald", fmt.Sprintf("%d:%d", st.Dev, st.Ino), true},
		{"another stream", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1), false},
		{"no journald", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", tc.stream)
			f.Truncate(0)
			f.Seek(0, 0)
			log := newLogger(f, new(slog.LevelVar), "debug", "json").With("database", "main")
			log.Debug("d")
			log.Info("i")
			log.Warn("w")
			log.Error("e")
			b, _ := os.ReadFile(f.Name())
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			want := []string{"<7>", "<6>", "<4>", "<3>"}
			if len(lines) != 4 {
				t.Fatalf("got %d lines, want 4:\n%s", len(lines), b)
			}
			for i, l := range lines {
				has := strings.HasPrefix(l, want[i]+"{")
				if has != tc.prefixed || !strings.Contains(l, `"database":"main"`) {
					t.Errorf("line %d %q: prefixed %v, want %v (and the attributes kept)", i, l, has, tc.prefixed)
				}
			}
		})
	}
}
