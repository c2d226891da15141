package e2e

// Pods on a Kubernetes node: one sqlfwd in the node's network namespace
// judges the connections of processes in other namespaces (network
// namespaces joined to the node by veth pairs stand for pods) to the
// database's non-loopback address.

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// e2ePod is a network namespace standing for a pod: a veth pair to the
// node (this namespace), host side host/24, pod side addr/24, default route
// via the host side, as a CNI plugin sets a pod up.
type e2ePod struct {
	netns, host, addr string
	host6, addr6      string // fd00:232:x::1 and ::2, /64
}

// newE2EPod creates pod n (1, 2, ...) and removes its namespace and veth
// when the test ends, also after a failure half-way. Subnets 10.232.x.0/24
// (the bpf tests use 10.231.x).
func newE2EPod(t *testing.T, n int) e2ePod {
	t.Helper()
	hostIf := fmt.Sprintf("sqe%d-%d", os.Getpid()%100000, n)
	podIf := fmt.Sprintf("sqf%d-%d", os.Getpid()%100000, n)
	subnet := fmt.Sprintf("10.232.%d", (os.Getpid()%120)*2+n)
	// Registered first: netns' own cleanup runs after this one.
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() })
	subnet6 := fmt.Sprintf("fd00:232:%x:", (os.Getpid()%120)*2+n)
	p := e2ePod{netns: netns(t, "pod"+strconv.Itoa(n)), host: subnet + ".1", addr: subnet + ".2", host6: subnet6 + ":1", addr6: subnet6 + ":2"}
	ip(t, "link", "add", hostIf, "type", "veth", "peer", "name", podIf)
	ip(t, "link", "set", podIf, "netns", p.netns)
	ip(t, "addr", "add", p.host+"/24", "dev", hostIf)
	ip(t, "-6", "addr", "add", p.host6+"/64", "dev", hostIf, "nodad")
	ip(t, "link", "set", hostIf, "up")
	for _, args := range [][]string{
		{"addr", "add", p.addr + "/24", "dev", podIf},
		{"link", "set", podIf, "up"},
		{"link", "set", "lo", "up"},
		{"route", "add", "default", "via", p.host},
		{"-6", "addr", "add", p.addr6 + "/64", "dev", podIf, "nodad"},
		{"-6", "route", "add", "default", "via", p.host6},
	} {
		ip(t, append([]string{"-n", p.netns}, args...)...)
	}
	return p
}

// psqlInPod runs psql in the pod's namespace and in cgroup cg (joined
// first: ip netns exec mounts the namespace's own /sys).
func psqlInPod(t *testing.T, cg string, p e2ePod, host, sql string) psqlResult {
	t.Helper()
	args := append(inCgroup(cg)[1:], "ip", "netns", "exec", p.netns,
		tool(t, "psql"), "-X", "-h", host, "-p", strconv.Itoa(pg.Port), "-U", pg.User, "-d", pg.Database,
		"-v", "VERBOSITY=verbose", "-Atc", sql)
	return runCmd(t, time.Minute, "", nil, "sh", args...)
}

// TestInterceptPods: two pods connect to the database's address as pods
// know it (here the node address, standing for a node, service or remote
// IP: like a ClusterIP, it is not where the server listens; sqlfwd dials
// the upstream). Both are judged by the one sqlfwd: the blocked DELETE gets
// its SQLSTATE and never reaches the server's statement log. A pod's own
// loopback is not intercepted.
func TestInterceptPods(t *testing.T) {
	needKernel(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	cg := childCgroup(t)
	pods := []e2ePod{newE2EPod(t, 1), newE2EPod(t, 2)}
	node := pods[0].host // every pod routes to it
	node6 := pods[0].host6
	dbAddr := node + ":" + strconv.Itoa(pg.Port)
	dbAddr6 := "[" + node6 + "]:" + strconv.Itoa(pg.Port)
	// The loopback address too: from a pod it must still be skipped.
	loop := "127.0.0.1:" + strconv.Itoa(pg.Port)
	d := startIntercepting(t, cg, "--protect", dbAddr+","+dbAddr6+","+loop, "--pod-listen", node+":0,["+node6+"]:0")
	if strings.Count(d.log(), `"msg":"intercepting pods"`) != 2 {
		t.Fatalf("sqlfwd did not open the pod listener; its log:\n%s", tail(d.log(), 20))
	}
	freshTable(t, "icept_pods", 1, 2, 3)
	marker := "podmark" + randomHex(t)

	// Pod 1 over IPv4, pod 2 over IPv4 and IPv6 (a pod listener per family).
	runs := []struct {
		name     string
		pod      e2ePod
		dst, src string
	}{
		{"pod1", pods[0], node, pods[0].addr},
		{"pod2", pods[1], node, pods[1].addr},
		{"pod2-ipv6", pods[1], node6, pods[1].addr6},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if res := psqlInPod(t, cg, r.pod, r.dst, "select count(*) from icept_pods"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
				t.Fatalf("input: psql in pod %s -h %s 'select count(*) from icept_pods'\ngot %s\nwant 3", r.src, r.dst, res)
			}
			sql := fmt.Sprintf("delete /* %s */ from icept_pods", marker)
			res := psqlInPod(t, cg, r.pod, r.dst, sql)
			if res.Exit == 0 || !strings.Contains(res.Stderr, codeBlocked) || !strings.Contains(res.Stderr, blockedPrefix) {
				t.Fatalf("input: psql in pod %s -h %s %q\ngot %s\nwant ERROR %s from sqlfw", r.src, r.dst, sql, res, codeBlocked)
			}
			if !strings.Contains(d.log(), r.src) {
				t.Errorf("sqlfwd's log does not name the pod's address %s as the client:\n%s", r.src, tail(d.log(), 10))
			}
		})
	}
	// The pod's 127.0.0.1 is its own (nothing listens there), although
	// the node's is protected.
	if res := psqlInPod(t, cg, pods[0], "127.0.0.1", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "refused") {
		t.Errorf("psql in a pod to its own 127.0.0.1:%d\ngot %s\nwant connection refused (a pod's loopback is never intercepted)", pg.Port, res)
	}

	checkServerLogClean(t, marker)
	if got := directInts(t, "select count(*) from icept_pods"); len(got) != 1 || got[0] != 3 {
		t.Errorf("rows after the blocked deletes: got %v, want [3]", got)
	}
	st := stats(t, d)
	ic := st.Interception
	if ic.PodRedirected < 6 || ic.Redirected < ic.PodRedirected || ic.SkippedNetns == 0 {
		t.Errorf("interception counters %+v: want ≥ 6 pod_redirected (2 per run), skipped_netns > 0 (the pod's loopback)", ic)
	}
	if n := st.Databases[0].Denied; n < uint64(len(runs)) {
		t.Errorf("denied = %d, want ≥ %d", n, len(runs))
	}
}

// TestKubernetesPodManifests: deploy/kubernetes is a module of its own (so
// that the Kubernetes API types never enter this module's requirements);
// its tests decode every manifest strictly into the k8s.io/api types and
// check the DaemonSet's shape. Here they run, and the ConfigMap's
// configuration and policy pass sqlfwd --check-config as the pod would load
// them (/etc/sqlfw is the ConfigMap's mount).
func TestKubernetesPodManifests(t *testing.T) {
	needSqlfwd(t)
	dir, err := filepath.Abs("../deploy/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: no go tool to run deploy/kubernetes' tests")
	}
	cmd := exec.Command(goTool, "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go test in deploy/kubernetes: %v\n%s", err, out)
	}

	b, err := os.ReadFile(filepath.Join(dir, "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil || cm.Data["sqlfwd.yaml"] == "" {
		t.Fatalf("configmap.yaml: %v, data keys %v", err, cm.Data)
	}
	etc := t.TempDir()
	for name, text := range cm.Data {
		text = strings.ReplaceAll(text, "/etc/sqlfw/", etc+"/")
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// --pod-listen as the DaemonSet passes it, with a node address.
	res := runToolPath(t, filepath.Join(binDir, "sqlfwd"), "--check-config", "--config", filepath.Join(etc, "sqlfwd.yaml"), "--pod-listen", "10.0.0.1:15432")
	if res.Exit != 0 {
		t.Errorf("sqlfwd --check-config on the ConfigMap's sqlfwd.yaml: %s", res)
	}
}

// TestPodPolicyReloadOnChange: a policy mounted from a ConfigMap changes by
// kubelet writing a new directory and swapping the ..data symlink to it;
// with --reload-on-change sqlfwd sees the new content and reloads without a
// signal.
func TestPodPolicyReloadOnChange(t *testing.T) {
	dir := t.TempDir()
	gen := 0
	swap := func(policy string) { // kubelet's atomic writer, in short
		t.Helper()
		gen++
		ts := fmt.Sprintf("..2026_12_01_%02d", gen)
		if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ts, "policy.yaml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
		if gen == 1 {
			if err := os.Symlink("..data/policy.yaml", filepath.Join(dir, "policy.yaml")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(ts, filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	const base = "version: 1\nrules:\n  - id: no-unfiltered-writes\n    action: deny\n    reason: every row\n    match: {kind: [update, delete], without_where: true}\n"
	swap(base)
	d, err := startDaemon("--policy", filepath.Join(dir, "policy.yaml"), "--reload-on-change", "100ms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 20))
		}
		_ = d.stop()
	})
	host, port, _ := strings.Cut(d.addr, ":")
	query := func() psqlResult {
		return runTool(t, time.Minute, "", nil, "psql", "-X", "-h", host, "-p", port, "-U", pg.User, "-d", pg.Database,
			"-v", "VERBOSITY=verbose", "-Atc", "select 41 + 1")
	}
	if res := query(); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "42" {
		t.Fatalf("before the swap: select 41 + 1\ngot %s\nwant 42", res)
	}
	swap(base + "  - id: no-selects-now\n    action: deny\n    reason: swapped in\n    match: {kind: [select]}\n")
	for i := 0; !strings.Contains(d.log(), "policy reloaded"); i++ {
		if i > 100 {
			t.Fatalf("no reload within 10 s of the ..data swap; log:\n%s", tail(d.log(), 10))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res := query(); res.Exit == 0 || !strings.Contains(res.Stderr, codeBlocked) || !strings.Contains(res.Stderr, "no-selects-now") {
		t.Fatalf("after the swap: select 41 + 1\ngot %s\nwant ERROR %s by rule no-selects-now", res, codeBlocked)
	}
}

// TestPodAuditToStdout: with --audit-log - the audit trail is standard
// output, a container's log stream (the log itself is on standard error),
// and what the stream carried verifies as a chain.
func TestPodAuditToStdout(t *testing.T) {
	needSqlfwd(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	outPath, errPath := filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	// A pipe, as a container runtime gives: it cannot seek.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() { io.Copy(out, pr); close(copied) }()
	cmd := exec.Command(filepath.Join(binDir, "sqlfwd"), "--protocol", "postgres", "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--upstream", net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)), "--control-socket", "none", "--audit-log", "-")
	cmd.Stdout, cmd.Stderr = pw, errf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			<-copied
		}
	}
	defer stop()
	for i := 0; ; i++ {
		b, _ := os.ReadFile(errPath)
		if strings.Contains(string(b), "sqlfwd started") {
			break
		}
		if i > 100 {
			t.Fatalf("sqlfwd did not start:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res := runTool(t, time.Minute, "", nil, "psql", "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pg.User, "-d", pg.Database,
		"-v", "VERBOSITY=verbose", "-Atc", "delete from pg_catalog.pg_class")
	if !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("delete without where: got %s, want %s", res, codeBlocked)
	}
	stop()
	b, _ := os.ReadFile(outPath)
	for _, want := range []string{`"event":"start"`, `"outcome":"blocked"`, `"event":"stop"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("standard output lacks %s:\n%s", want, b)
		}
	}
	if logs, _ := os.ReadFile(errPath); strings.Contains(string(logs), `{"seq":`) {
		t.Errorf("audit records on standard error:\n%s", logs)
	}
	if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "audit", "verify", outPath); res.Exit != 0 || !strings.Contains(res.Stdout, "chain intact") {
		t.Errorf("fwctl audit verify on what standard output carried: %s", res)
	}
}
