package bench

import (
	"fmt"
	"slices"
	"time"
)

// Fractions of S at which the cells run.
var DefaultFractions = []float64{0.10, 0.30, 0.50, 0.70, 0.80, 0.90, 1.00}

// WorkloadPlan is one workload's curve in a profile: either fractions of
// its closed-loop maximum S, or absolute rates (no S is measured). Targets,
// when set, names the targets that run it (direct always does); a name
// missing from the targets file is ignored. Empty means every target.
type WorkloadPlan struct {
	Workload  string    `json:"workload"`
	Fractions []float64 `json:"fractions,omitempty"`
	Rates     []float64 `json:"rates,omitempty"`
	Targets   []string  `json:"targets,omitempty"`
}

// Select returns the targets of ts that run this workload, in their order.
func (wp WorkloadPlan) Select(ts []*Target) []*Target {
	if len(wp.Targets) == 0 {
		return ts
	}
	var out []*Target
	for _, t := range ts {
		if t.Name == Baseline || slices.Contains(wp.Targets, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Profile is everything about a run except the targets.
type Profile struct {
	Name      string         `json:"name"`
	Workloads []WorkloadPlan `json:"workloads"`
	Reps      int            `json:"reps"`
	Warmup    time.Duration  `json:"warmup_ns"`
	Measure   time.Duration  `json:"measure_ns"`
	Conns     int            `json:"conns"` // open-loop connections per cell
	// ClosedLoop and ClosedConns measure S on the S target.
	ClosedLoop  time.Duration `json:"closed_loop_ns"`
	ClosedConns int           `json:"closed_conns"`
	Poisson     bool          `json:"poisson"`
	Seed        uint64        `json:"seed"`
	// Self-check: a run on the direct target at half of the first
	// workload's S with the server paused PauseLen at each of Pauses.
	SelfCheck    time.Duration   `json:"self_check_ns"`
	Pauses       []time.Duration `json:"pauses_ns"`
	PauseLen     time.Duration   `json:"pause_len_ns"`
	MaxRerun     int             `json:"max_rerun"`
	Calibration  string          `json:"calibration,omitempty"` // the CI gate's divisor: "workload@target"
	GateMinRatio float64         `json:"gate_ratio,omitempty"`
}

// Profiles returns the built-in profiles: quick (a few minutes), full (the
// publishable run, about an hour) and ci (the regression gate, about a minute).
func Profiles() map[string]Profile {
	half := []float64{0.5}
	quick := Profile{
		Name: "quick",
		Workloads: []WorkloadPlan{
			{Workload: "select-pk-prepared", Fractions: DefaultFractions},
			{Workload: "select-pk-unprepared", Fractions: []float64{0.5, 0.9}},
			{Workload: "insert-10", Fractions: half},
			{Workload: "insert-100", Fractions: half},
			{Workload: "insert-1000", Fractions: half},
			{Workload: "blocked-delete", Fractions: half},
		},
		Reps: 2, Warmup: time.Second, Measure: 4 * time.Second, Conns: 32,
		ClosedLoop: 3 * time.Second, ClosedConns: 4, Seed: 1,
		SelfCheck: 12 * time.Second, Pauses: []time.Duration{5 * time.Second}, PauseLen: time.Second,
		// No reruns: on a shared VM whose steal is above 1% all the time a
		// rerun is flagged again and only doubles a "few minutes".
		MaxRerun: 0,
	}
	// full: the publishable run, about an hour on a 2-CPU machine with
	// seven targets. The headline workload runs on every target at every
	// fraction of S; the rest run where they say something (sqlfwd next to
	// the cost of a hop) at fractions where a curve is not needed. On a
	// host of its own, stretch it: --reps 5 --measure 60s.
	hop := []string{"sqlfwd", "haproxy"}
	at := func(w string, fr ...float64) WorkloadPlan {
		return WorkloadPlan{Workload: w, Fractions: fr, Targets: hop}
	}
	full := Profile{
		Name: "full",
		Workloads: []WorkloadPlan{
			{Workload: "select-pk-prepared", Fractions: DefaultFractions},
			at("select-pk-unprepared", 0.3, 0.7, 0.9),
			at("rows-100", 0.5), at("rows-1000", 0.5),
			at("insert-10", 0.5), at("insert-100", 0.5), at("insert-500", 0.5), at("insert-1000", 0.5),
			at("blocked-delete", 0.5), at("connect", 0.5), at("orm-mix", 0.5),
		},
		Reps: 3, Warmup: 3 * time.Second, Measure: 10 * time.Second, Conns: 64,
		ClosedLoop: 5 * time.Second, ClosedConns: 4, Seed: 1,
		SelfCheck: 2 * time.Minute, Pauses: []time.Duration{30 * time.Second, 90 * time.Second}, PauseLen: time.Second,
		MaxRerun: 1,
	}
	// Absolute rates far below saturation on this kind of machine: sqlfwd
	// under its 0.5 vCPU quota parses a 100-row INSERT in about 2.5 ms, so
	// that one runs at 50/s.
	low, lower := []float64{200}, []float64{50}
	ci := Profile{
		Name: "ci",
		Workloads: []WorkloadPlan{
			{Workload: "select-pk-prepared", Rates: low},
			{Workload: "select-pk-unprepared", Rates: low},
			{Workload: "rows-100", Rates: low},
			{Workload: "insert-100", Rates: lower},
			{Workload: "blocked-delete", Rates: low},
		},
		Reps: 1, Warmup: time.Second, Measure: 5 * time.Second, Conns: 16, Seed: 1,
		Calibration: "select-pk-prepared@direct", GateMinRatio: 2.5,
	}
	// MySQL: sysbench oltp_read_only on direct MariaDB, sqlfwd and HAProxy
	// (scripts/bench.sh); S is sqlfwd's closed-loop maximum, as for
	// PostgreSQL.
	myQuick := quick
	myQuick.Name = "mysql-quick"
	myQuick.Workloads = []WorkloadPlan{{Workload: "oltp-read-only", Fractions: DefaultFractions}}
	myFull := full
	myFull.Name = "mysql-full"
	myFull.Workloads = myQuick.Workloads
	return map[string]Profile{"quick": quick, "full": full, "ci": ci, "mysql-quick": myQuick, "mysql-full": myFull}
}

// Validate checks a profile against the known workloads.
func (p Profile) Validate() error {
	if p.Reps < 1 || p.Measure <= 0 || p.Conns < 1 {
		return fmt.Errorf("profile %s: reps, measure and conns must be positive", p.Name)
	}
	for _, w := range p.Workloads {
		if _, ok := LookupWorkload(w.Workload); !ok {
			return fmt.Errorf("profile %s: unknown workload %q", p.Name, w.Workload)
		}
		if len(w.Rates) == 0 && len(w.Fractions) == 0 {
			return fmt.Errorf("profile %s: workload %s has no rates", p.Name, w.Workload)
		}
		if len(w.Rates) == 0 && p.ClosedLoop <= 0 {
			return fmt.Errorf("profile %s: workload %s needs S but closed_loop is 0", p.Name, w.Workload)
		}
	}
	return nil
}
