package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The bash script completes what the usage texts name: run it in a real
// bash with the words a user has typed.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipping: no bash")
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"completion", "bash"}, &out, &errb); rc != 0 {
		t.Fatalf("fwctl completion bash: rc %d %s", rc, errb.String())
	}
	script := filepath.Join(t.TempDir(), "fwctl.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line string // the words typed, the last one being completed
		want []string
		not  []string
	}{
		{"fwctl mo", []string{"mode"}, []string{"stats"}},
		{"fwctl ", []string{"stats", "check", "audit", "completion", "version"}, nil},
		{"fwctl mode ", []string{"enforce", "monitor", "detect", "policy"}, nil},
		{"fwctl learn s", []string{"start", "stop"}, []string{"export"}},
		{"fwctl check --pg", []string{"--pg-log"}, nil},
		{"fwctl check --", []string{"--policy", "--protocol", "--client-encoding", "--jsonl", "--verbose", "--help", "--json"}, []string{"--watch"}},
		// global flags before the command: the command is still found
		{"fwctl --", []string{"--json", "--control-socket"}, []string{"stats"}},
		{"fwctl --json st", []string{"stats", "status"}, []string{"mode"}},
		{"fwctl --control-socket /tmp/s mode ", []string{"enforce", "monitor", "detect", "policy"}, []string{"stats"}},
		{"fwctl --json learn s", []string{"start", "stop", "status"}, []string{"export"}},
		{"fwctl --control-socket ", nil, []string{"stats"}},
		{"fwctl bench ", []string{"run", "report", "gate", "baseline"}, nil},
		{"fwctl audit verify --", []string{"--anchors", "--key-file"}, nil},
		{"fwctl completion ", []string{"bash", "zsh", "fish"}, nil},
		{"fwctl stats --", []string{"--json", "--watch", "--control-socket"}, nil},
	} {
		words := strings.Split(tt.line, " ")
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_fwctl\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		res, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", tt.line, err, res)
		}
		got := strings.Fields(string(res))
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: got %v, want %s among them", tt.line, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: got %v, want no %s", tt.line, got, w)
			}
		}
	}
	// zsh's script is bash's behind bashcompinit; fish gets its own
	for _, sh := range []string{"zsh", "fish"} {
		out.Reset()
		if rc := run([]string{"completion", sh}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "mode") {
			t.Errorf("fwctl completion %s: rc %d\n%s", sh, rc, out.String())
		}
	}
	if rc := run([]string{"completion", "tcsh"}, &out, &errb); rc != 2 {
		t.Errorf("an unknown shell: rc %d, want 2", rc)
	}
}
