package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ResultsVersion is bumped when the JSON layout changes incompatibly.
const ResultsVersion = 1

// Results is the results file: everything a report, a chart or the CI gate
// needs, with no reference back to the machine that produced it.
type Results struct {
	Version   int                `json:"version"`
	Profile   Profile            `json:"profile"`
	Protocol  string             `json:"protocol"`
	Meta      Meta               `json:"meta"`
	Targets   []TargetInfo       `json:"targets"`
	S         map[string]float64 `json:"s"`        // closed-loop maximum per workload, requests/s
	STarget   string             `json:"s_target"` // the target S was measured on
	Workloads []WorkloadInfo     `json:"workloads"`
	Cells     []Cell             `json:"cells"`
	SelfCheck *SelfCheckResult   `json:"self_check,omitempty"`
	Analysis  *Analysis          `json:"analysis,omitempty"`
	Notes     []string           `json:"notes,omitempty"`
}

// WorkloadInfo describes a workload in the results.
type WorkloadInfo struct {
	Name       string  `json:"name"`
	Doc        string  `json:"doc"`
	Statements float64 `json:"statements_per_request"`
}

// TargetInfo describes a target in the results.
type TargetInfo struct {
	Name      string `json:"name"`
	Addr      string `json:"addr"`
	Version   string `json:"version,omitempty"`
	Owned     bool   `json:"owned"`
	CPUSource string `json:"cpu_source,omitempty"`
}

// Meta is the machine and its conditions.
type Meta struct {
	Host          string     `json:"host"`
	Kernel        string     `json:"kernel"`
	CPUModel      string     `json:"cpu_model"`
	NumCPU        int        `json:"num_cpu"`
	GoVersion     string     `json:"go_version"`
	ServerVersion string     `json:"server_version,omitempty"`
	Commit        string     `json:"commit,omitempty"`
	Start         time.Time  `json:"start"`
	End           time.Time  `json:"end"`
	LoadStart     [3]float64 `json:"loadavg_start"`
	LoadEnd       [3]float64 `json:"loadavg_end"`
	StealBoot     float64    `json:"steal_since_boot"` // share of CPU time stolen since boot, at start
	StealStart    float64    `json:"steal_start"`      // share stolen in the second before the run
	StealEnd      float64    `json:"steal_end"`        // share stolen in the second after the run
	StealRun      float64    `json:"steal_run"`        // share stolen over the whole run
}

// IntervalSummary is one interval histogram: its percentiles and its
// non-empty buckets.
type IntervalSummary struct {
	Start   time.Duration      `json:"start_ns"` // from the end of the warm-up, by intended time
	Count   int64              `json:"count"`
	Latency map[string]float64 `json:"latency_us"`
	Hist    string             `json:"hist"` // EncodeHist
}

// Cell is one target at one rate in one repetition.
type Cell struct {
	Workload  string    `json:"workload"`
	Target    string    `json:"target"`
	RateIndex int       `json:"rate_index"`
	Fraction  float64   `json:"fraction,omitempty"` // of S; 0 for absolute rates
	Rate      float64   `json:"rate"`               // offered requests/s
	Rep       int       `json:"rep"`
	Position  int       `json:"position"` // place in the repetition's Latin-square order
	Rerun     bool      `json:"rerun"`    // the repetition was run again because this one was invalid
	Replaces  bool      `json:"replaces"` // this is the rerun
	Start     time.Time `json:"start"`

	Achieved   float64          `json:"achieved"`
	Requests   int64            `json:"requests"`
	Errors     int64            `json:"errors"`
	Unfinished int64            `json:"unfinished"`
	ConnWaits  int64            `json:"conn_waits"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	// Latency from the intended send time, µs: p50, p90, p99, p99.9, mean, max.
	Latency   map[string]float64 `json:"latency_us"`
	Hist      string             `json:"hist"` // EncodeHist, successful requests, ns
	Intervals []IntervalSummary  `json:"intervals"`
	PerSecond []int64            `json:"per_second"`
	LagP99    float64            `json:"dispatch_lag_p99_us"`
	LagMax    float64            `json:"dispatch_lag_max_us"`

	GenCPU        float64  `json:"generator_cpu"` // vCPU
	Steal         float64  `json:"steal"`
	TargetCPU     *float64 `json:"target_vcpu,omitempty"`
	Periods       int64    `json:"cfs_periods,omitempty"`
	Throttled     int64    `json:"cfs_throttled,omitempty"`
	ThrottledTime float64  `json:"cfs_throttled_ms,omitempty"`

	Saturated bool     `json:"saturated"`
	NonSteady bool     `json:"non_steady"`
	Flags     []string `json:"flags,omitempty"`
	Valid     bool     `json:"valid"`
}

func latencyMap(h *hdr.Histogram) map[string]float64 {
	m := map[string]float64{}
	if h.TotalCount() == 0 {
		return m
	}
	for i, p := range Percentiles {
		m[PercentileNames[i]] = float64(h.ValueAtPercentile(p)) / 1e3
	}
	m["mean"] = h.Mean() / 1e3
	m["max"] = float64(h.Max()) / 1e3
	return m
}

// EncodeHist writes a histogram in HdrHistogram's compressed V2 encoding
// (base64 of the deflated counts, "HISTF..."), which every HdrHistogram
// implementation and HistogramLogAnalyzer read. Values are nanoseconds.
func EncodeHist(h *hdr.Histogram) string {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeHist reads what EncodeHist wrote.
func DecodeHist(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}

// WriteJSON writes the results, indented.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// ReadResults reads a results file.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("reading results %s: %w", path, err)
	}
	if r.Version != ResultsVersion {
		return nil, fmt.Errorf("results %s: version %d, this fwctl reads %d", path, r.Version, ResultsVersion)
	}
	return &r, nil
}

// Host facts, each from one file under the procfs root.

func readLoadavg(proc string) [3]float64 {
	var l [3]float64
	b, err := os.ReadFile(filepath.Join(proc, "loadavg"))
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

func readCPUTimes(proc string) CPUTimes {
	f, err := os.Open(filepath.Join(proc, "stat"))
	if err != nil {
		return CPUTimes{}
	}
	defer f.Close()
	t, _ := ParseProcStatCPU(f)
	return t
}

func cpuModel(proc string) string {
	f, err := os.Open(filepath.Join(proc, "cpuinfo"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func kernel(proc string) string {
	b, _ := os.ReadFile(filepath.Join(proc, "sys/kernel/osrelease"))
	return strings.TrimSpace(string(b))
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

func hostMeta(proc string) Meta {
	host, _ := os.Hostname()
	return Meta{Host: host, Kernel: kernel(proc), CPUModel: cpuModel(proc), NumCPU: runtime.NumCPU(),
		GoVersion: runtime.Version(), Commit: gitCommit()}
}
