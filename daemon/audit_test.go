package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/audit"
	"github.com/sqlfw/sqlfw/relay"
)

// infoSession is a relay.Session that only describes itself.
type infoSession struct{ info relay.Info }

func (s infoSession) Info() relay.Info { return s.info }
func (s infoSession) Drain()           {}
func (s infoSession) Close()           {}

// auditRun opens the trail at path, writes n plain events and stops, as a
// daemon run would. It returns what the daemon logged.
func auditRun(t *testing.T, path string, key string, anchor, n int) string {
	t.Helper()
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	c := AuditConfig{Path: path, Queue: 64, Anchor: anchor, KeyFile: key}
	a, err := openAudit(c, log)
	if err != nil {
		t.Fatalf("openAudit: %v", err)
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	s := infoSession{relay.Info{ID: 1, Database: "main", Client: c1.RemoteAddr().String(), Via: relay.ViaListen}}
	for i := 0; i < n; i++ {
		a.record(auditRecord{at: time.Now(), event: "session_start", s: s})
	}
	a.close()
	return logBuf.String()
}

func verifyFile(t *testing.T, path string, opt audit.VerifyOptions) (audit.VerifyResult, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return audit.Verify(f, opt)
}

func anchorsOf(t *testing.T, log string) []audit.Anchor {
	t.Helper()
	a, err := audit.ParseAnchors(strings.NewReader(log))
	if err != nil {
		t.Fatalf("audit.ParseAnchors: %v\n%s", err, log)
	}
	return a
}

func events(t *testing.T, path string) []auditLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	for _, l := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		var al auditLine
		if err := json.Unmarshal(l, &al); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, al)
	}
	return out
}

func TestAuditTornTailRecovered(t *testing.T) {
	for _, tc := range []struct {
		name, tail, why string
	}{
		{"torn write", `{"seq":9,"time":"2026-12-01T10:00:00Z","ev`, "torn write"},
		{"garbage line", "not a record\n", "not an audit record"},
		{"torn after garbage", "junk\n{\"seq\":", "torn write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			log1 := auditRun(t, path, "", 0, 3)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.tail)
			f.Close()
			log2 := auditRun(t, path, "", 0, 2)
			if !strings.Contains(log2, "cut a tail") {
				t.Errorf("the daemon log does not say it cut the tail:\n%s", log2)
			}
			res, err := verifyFile(t, path, audit.VerifyOptions{Anchors: anchorsOf(t, log1+log2)})
			if err != nil {
				t.Fatalf("verify after repair: %v", err)
			}
			if res.Repairs != 1 {
				t.Errorf("repairs %d, want 1", res.Repairs)
			}
			var rep *auditLine
			for _, e := range events(t, path) {
				if e.Event == "repair" {
					rep = &e
				}
			}
			if rep == nil {
				t.Fatal("no repair event")
			}
			sum := sha256.Sum256([]byte(tc.tail))
			if rep.Extra["cut_bytes"] != float64(len(tc.tail)) || rep.Extra["cut_sha256"] != hex.EncodeToString(sum[:]) {
				t.Errorf("repair extra %v, want cut_bytes %d and the tail's sha256", rep.Extra, len(tc.tail))
			}
			if why, _ := rep.Extra["why"].(string); !strings.Contains(why, tc.why) {
				t.Errorf("repair why %q, want %q", why, tc.why)
			}
		})
	}
}

func TestAuditRefusesForeignFile(t *testing.T) {
	for name, content := range map[string]string{
		"text file":         "root:x:0:0:root:/root:/bin/bash\n",
		"text without \\n":  "hello",
		"json not an audit": `{"a":1}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			os.WriteFile(path, []byte(content), 0o600)
			_, err := openAudit(AuditConfig{Path: path, Queue: 4}, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
			if err == nil {
				t.Fatal("openAudit appended to a file that is not an audit trail")
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file was changed to %q", b)
			}
		})
	}
}

func TestAuditTornFirstWriteCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, []byte(`{"seq":1,"time":"2026-`), 0o600)
	auditRun(t, path, "", 0, 1)
	res, err := verifyFile(t, path, audit.VerifyOptions{})
	if err != nil || res.Repairs != 1 || res.LastSeq != 4 {
		t.Fatalf("got %+v, %v; want intact, 1 repair, last seq 4 (start, repair, probe, stop)", res, err)
	}
}

// rewrite applies edit to the file's lines and rebuilds the unkeyed chain
// over the result, as an attacker with only the file can.
func rewrite(t *testing.T, path string, edit func([]auditLine) []auditLine) {
	t.Helper()
	ls := edit(events(t, path))
	var out bytes.Buffer
	var prev [sha256.Size]byte
	for i := range ls {
		ls[i].Prev = hex.EncodeToString(prev[:])
		b, _ := json.Marshal(ls[i])
		prev = sha256.Sum256(b)
		out.Write(b)
		out.WriteByte('\n')
	}
	os.WriteFile(path, out.Bytes(), 0o600)
}

func TestAuditVerifyAgainstAnchors(t *testing.T) {
	setup := func(t *testing.T) (string, []audit.Anchor) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		log := auditRun(t, path, "", 4, 10) + auditRun(t, path, "", 4, 3)
		a := anchorsOf(t, log)
		if _, err := verifyFile(t, path, audit.VerifyOptions{Anchors: a}); err != nil {
			t.Fatalf("intact trail: %v", err)
		}
		return path, a
	}
	for _, tc := range []struct {
		name string
		edit func([]auditLine) []auditLine
		want string
		// chainOnly: the file alone already gives it away.
		chainOnly bool
	}{
		{"edited last line", func(ls []auditLine) []auditLine {
			ls[len(ls)-1].Dropped = 0
			ls[len(ls)-1].Time = "2020-01-01T00:00:00Z"
			return ls
		}, "differs from the chain head", false},
		{"truncated tail", func(ls []auditLine) []auditLine { return ls[:len(ls)-2] }, "truncated", false},
		{"appended forged record", func(ls []auditLine) []auditLine {
			return append(ls, auditLine{Seq: ls[len(ls)-1].Seq + 1, Event: "verdict", Outcome: "allowed", Time: "2026-12-01T00:00:00Z"})
		}, "after a stop event", true},
		{"appended forged start", func(ls []auditLine) []auditLine {
			s := ls[len(ls)-1].Seq
			return append(ls, auditLine{Seq: s + 1, Event: "start", Time: "2026-12-01T00:00:00Z"},
				auditLine{Seq: s + 2, Event: "verdict", Outcome: "allowed", Time: "2026-12-01T00:00:01Z"})
		}, "no chain head for", false},
		{"edited middle line", func(ls []auditLine) []auditLine {
			ls[3].Client = "10.9.9.9:5555"
			return ls
		}, "differs from the chain head", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, a := setup(t)
			rewrite(t, path, tc.edit)
			if _, err := verifyFile(t, path, audit.VerifyOptions{}); (err == nil) == tc.chainOnly {
				t.Fatalf("without anchors: %v (the file alone should give it away: %v)", err, tc.chainOnly)
			}
			_, err := verifyFile(t, path, audit.VerifyOptions{Anchors: a})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify with anchors: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestAuditKeyedChain(t *testing.T) {
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key")
	os.WriteFile(keyPath, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	key, err := audit.ReadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	auditRun(t, path, "", 0, 2) // an unkeyed history first
	log := auditRun(t, path, keyPath, 0, 3)
	if strings.Contains(log, string(key)) {
		t.Fatal("the daemon log carries the key")
	}
	if _, err := verifyFile(t, path, audit.VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "keyed") {
		t.Errorf("verify without the key: %v, want it to ask for the key", err)
	}
	res, err := verifyFile(t, path, audit.VerifyOptions{Key: key, Anchors: anchorsOf(t, log)})
	if err != nil || res.Chain != audit.ChainHMAC || res.Unkeyed != 4 {
		t.Fatalf("verify with the key: %+v, %v; want intact, hmac, 4 unkeyed records", res, err)
	}
	if _, err := verifyFile(t, path, audit.VerifyOptions{Key: []byte("another key of 32 bytes........")}); err == nil {
		t.Error("verify with a wrong key passed")
	}
	// An attacker rebuilds the whole chain unkeyed.
	rewrite(t, path, func(ls []auditLine) []auditLine {
		for i := range ls {
			if ls[i].Event == "start" {
				ls[i].Extra = map[string]any{"chain": audit.ChainSHA256}
			}
		}
		return ls
	})
	if _, err := verifyFile(t, path, audit.VerifyOptions{Key: key}); err == nil {
		t.Error("an unkeyed rebuild passed verification with the key")
	}
	if _, err := audit.ReadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing key file was accepted")
	}
	os.WriteFile(keyPath, []byte("short"), 0o600)
	if _, err := audit.ReadKey(keyPath); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("short key: %v (want an error that does not quote the key)", err)
	}
}
