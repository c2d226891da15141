package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifest is one YAML document of a file here, decoded strictly into its
// Kubernetes API type.
type manifest struct {
	file string
	obj  any // *appsv1.DaemonSet, *corev1.ConfigMap, *corev1.Namespace
}

// decodeStrict decodes one document into the API type its apiVersion and
// kind name. Unknown or duplicate fields are errors (sigs.k8s.io/yaml
// converts to JSON and decodes with DisallowUnknownFields), as is a kind
// without a type here.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 DaemonSet":
		obj = &appsv1.DaemonSet{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Namespace":
		obj = &corev1.Namespace{}
	default:
		return nil, &unknownKindError{tm.APIVersion, tm.Kind}
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

type unknownKindError struct{ apiVersion, kind string }

func (e *unknownKindError) Error() string {
	return "no schema for apiVersion " + e.apiVersion + " kind " + e.kind + " (add its type to decodeStrict)"
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// loadManifests decodes every document of every *.yaml file here.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var out []manifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docSep.Split(string(b), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				t.Errorf("%s document %d: %v", f, i, err)
				continue
			}
			out = append(out, manifest{f, obj})
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func find[T any](ms []manifest) []T {
	var out []T
	for _, m := range ms {
		if o, ok := m.obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	ms := loadManifests(t)
	if len(find[*appsv1.DaemonSet](ms)) != 1 || len(find[*corev1.ConfigMap](ms)) != 1 || len(find[*corev1.Namespace](ms)) != 1 {
		t.Fatalf("want one DaemonSet, one ConfigMap and one Namespace, got %d manifests", len(ms))
	}
}

// The checker itself: a misspelt field, a field at the wrong level, a
// wrong type and an unknown kind are all refused.
func TestDecodeStrictRefuses(t *testing.T) {
	good, err := os.ReadFile("daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new string
		want           string
	}{
		{"misspelt field", "hostNetwork: true", "hostNetwrok: true", "hostNetwrok"},
		{"field at the wrong level", "      hostPID: true", "      hostPID: true\n      readOnlyRootFilesystem: true", "readOnlyRootFilesystem"},
		{"wrong type", "hostPID: true", "hostPID: yes-please", "hostPID"},
		{"unknown kind", "kind: DaemonSet", "kind: DaemonSett", "no schema"},
		{"duplicate field", "      hostPID: true", "      hostPID: true\n      hostPID: false", "hostPID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(tt.old)) {
				t.Fatalf("daemonset.yaml no longer has %q", tt.old)
			}
			doc := bytes.Replace(good, []byte(tt.old), []byte(tt.new), 1)
			_, err := decodeStrict(doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decoding with %q: error %v, want one naming %q", tt.new, err, tt.want)
			}
		})
	}
}

// What interception on a node needs, and nothing more.
func TestDaemonSetShape(t *testing.T) {
	ms := loadManifests(t)
	dss := find[*appsv1.DaemonSet](ms)
	cms := find[*corev1.ConfigMap](ms)
	if len(dss) != 1 || len(cms) != 1 {
		t.Fatal("want one DaemonSet and one ConfigMap")
	}
	ds, cm := dss[0], cms[0]
	spec := ds.Spec.Template.Spec
	if !spec.HostNetwork || !spec.HostPID {
		t.Errorf("hostNetwork %v hostPID %v: want both (the node's network namespace; global pids for the own-socket check)", spec.HostNetwork, spec.HostPID)
	}
	if sel := ds.Spec.Selector; sel == nil || !mapSubset(sel.MatchLabels, ds.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the template's labels %v", sel, ds.Spec.Template.Labels)
	}
	if ds.Namespace != cm.Namespace {
		t.Errorf("DaemonSet in %q, ConfigMap in %q", ds.Namespace, cm.Namespace)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("no securityContext.capabilities")
	}
	var add []string
	for _, a := range sc.Capabilities.Add {
		add = append(add, string(a))
	}
	slices.Sort(add)
	if !slices.Equal(add, []string{"BPF", "NET_ADMIN", "PERFMON"}) {
		t.Errorf("capabilities added %v, want exactly BPF, NET_ADMIN, PERFMON", add)
	}
	if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("capabilities dropped %v, want ALL", sc.Capabilities.Drop)
	}
	if sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("privileged %v allowPrivilegeEscalation %v: want both false", sc.Privileged, sc.AllowPrivilegeEscalation)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; !ok || q.IsZero() {
		t.Errorf("no CPU limit")
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--pod-listen=$(NODE_IP):") }) {
		t.Errorf("args %v: want --pod-listen=$(NODE_IP):PORT", c.Args)
	}
	var nodeIP bool
	for _, e := range c.Env {
		nodeIP = nodeIP || (e.Name == "NODE_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.hostIP")
	}
	if !nodeIP {
		t.Errorf("env %v: want NODE_IP from status.hostIP", c.Env)
	}

	// The image's tag is the release's package version (scripts/
	// deb-version.sh, "+" written "-"): the newest deploy/debian/changelog
	// entry, so a release bumps both or this fails.
	chl, err := os.ReadFile("../debian/changelog")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^sqlfw \(([^)]+)\)`).FindSubmatch(chl)
	if m == nil {
		t.Fatalf("deploy/debian/changelog does not start with a sqlfw (VERSION) entry")
	}
	wantTag := strings.ReplaceAll(string(m[1]), "+", "-")
	if _, tag, _ := strings.Cut(c.Image, ":"); tag != wantTag {
		t.Errorf("image %s: want the tag %s (the changelog's version)", c.Image, wantTag)
	}

	// Metrics where Prometheus in the cluster reaches them: the node's
	// address (hostNetwork), a port named metrics, the probes on it.
	if !slices.Contains(c.Args, "--metrics-listen=$(NODE_IP):9187") {
		t.Errorf("args %v: want --metrics-listen=$(NODE_IP):9187 (127.0.0.1 cannot be scraped from the cluster)", c.Args)
	}
	var metricsPort bool
	for _, p := range c.Ports {
		metricsPort = metricsPort || (p.Name == "metrics" && p.ContainerPort == 9187)
	}
	if !metricsPort {
		t.Errorf("ports %v: want 9187 named metrics", c.Ports)
	}
	for name, pr := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Host != "" || pr.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %+v: want an httpGet on the port metrics at the pod (node) IP", name, pr)
		}
	}
	if ds.Spec.Template.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("pod annotations %v: want prometheus.io/scrape", ds.Spec.Template.Annotations)
	}

	// Volumes: the host's bpffs and cgroup2 tree, and the ConfigMap as a
	// whole directory (a subPath mount never sees a changed ConfigMap).
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("mount %s names no volume", m.Name)
		}
		mounts[m.MountPath] = m
	}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.HostPath.Path] = v.Name
		}
	}
	for _, p := range []string{"/sys/fs/bpf", "/sys/fs/cgroup"} {
		if hostPaths[p] == "" {
			t.Errorf("no hostPath volume for %s", p)
		}
	}
	if m, ok := mounts["/sys/fs/bpf"]; !ok || m.Name != hostPaths["/sys/fs/bpf"] {
		t.Errorf("the host's bpffs is not mounted at /sys/fs/bpf (where pin_dir is)")
	}
	cfgMount, ok := mounts["/etc/sqlfw"]
	if !ok {
		t.Fatal("nothing mounted at /etc/sqlfw")
	}
	if v := vols[cfgMount.Name]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name || cfgMount.SubPath != "" {
		t.Errorf("/etc/sqlfw: volume %+v subPath %q, want ConfigMap %s as a directory", v, cfgMount.SubPath, cm.Name)
	}

	// The configuration points at what the pod has.
	cfg, ok := cm.Data["sqlfwd.yaml"]
	if !ok {
		t.Fatal("ConfigMap has no sqlfwd.yaml")
	}
	for _, a := range c.Args {
		if p, ok := strings.CutPrefix(a, "--config="); ok && filepath.Join("/etc/sqlfw", filepath.Base(p)) != p {
			t.Errorf("--config %s is not in the ConfigMap's directory", p)
		}
	}
	for _, ref := range regexp.MustCompile(`/etc/sqlfw/([\w.-]+)`).FindAllStringSubmatch(cfg, -1) {
		if _, ok := cm.Data[ref[1]]; !ok {
			t.Errorf("sqlfwd.yaml names %s, which the ConfigMap does not have", ref[0])
		}
	}
	for _, ref := range regexp.MustCompile(`(?m)^\s*cgroup:\s*(\S+)`).FindAllStringSubmatch(cfg, -1) {
		if _, ok := mounts[ref[1]]; !ok && !strings.HasPrefix(ref[1], "/host/sys/fs/cgroup/") {
			t.Errorf("intercept.cgroup %s is not the mounted host cgroup tree", ref[1])
		}
	}
}

func mapSubset(sub, super map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if super[k] != v {
			return false
		}
	}
	return true
}
