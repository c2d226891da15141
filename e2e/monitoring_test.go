package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPrometheusRules runs promtool's unit tests of the alert rules, and
// checks that every sqlfw_ metric the rules and the Grafana dashboard name
// is one a running sqlfwd exports.
func TestPrometheusRules(t *testing.T) {
	if promtool, err := exec.LookPath("promtool"); err != nil {
		t.Log("promtool not installed (Debian package prometheus): the rules' unit tests are not run")
	} else {
		cmd := exec.Command(promtool, "test", "rules", "alerts_test.yaml")
		cmd.Dir = "../deploy/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool test rules: %v\n%s", err, out)
		}
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	d := ownDaemon(t, "--metrics-listen", addr)
	// a verdict, so that the per-rule series exist
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	_, err = c.Exec(ctx, "delete from monitoring_t")
	checkDenied(t, "delete from monitoring_t", err)
	var body string
	for i := 0; i < 50; i++ {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (sqlfw_\w+) (\w+)`).FindAllStringSubmatch(body, -1) {
		exported[m[1]] = true
		if m[2] == "histogram" {
			exported[m[1]+"_bucket"], exported[m[1]+"_count"], exported[m[1]+"_sum"] = true, true, true
		}
	}
	if len(exported) == 0 {
		t.Fatalf("no sqlfw_ metric in the scrape:\n%s", body)
	}
	for _, f := range []string{"../deploy/prometheus/alerts.yaml", "../deploy/grafana/sqlfw-dashboard.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range regexp.MustCompile(`sqlfw_[a-z_]+`).FindAllString(string(b), -1) {
			// exported only under conditions this test does not set up:
			// the cgroup figures (after a stats window), the audit trail's,
			// the fallback (only when interception fell back) and the
			// unprotected paths (only with discovery: daemon's
			// TestRediscoveryMetrics scrapes it)
			conditional := strings.HasPrefix(name, "sqlfw_cgroup_") || strings.HasPrefix(name, "sqlfw_audit_") || name == "sqlfw_interception_fallback" || name == "sqlfw_unprotected_paths"
			if !exported[name] && !conditional {
				t.Errorf("%s names %s, which sqlfwd does not export", f, name)
			}
		}
	}
}
