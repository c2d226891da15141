package cgroupstats

import (
	"strings"
	"testing"
	"time"
)

func checkErr(t *testing.T, input string, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("input %q: unexpected error %v", input, err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("input %q: got err %v, want it to contain %q", input, err, want)
	}
	return true
}

func TestParseCPUStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     CPUStat
		wantErr  string
	}{
		{
			name: "v1 with burst fields",
			in:   "nr_periods 10\nnr_throttled 4\nthrottled_time 2500000\nnr_bursts 1\nburst_time 700\n",
			want: CPUStat{Periods: Known[uint64](10), Throttled: Known[uint64](4), ThrottledTime: Known(2500 * time.Microsecond),
				Bursts: Known[uint64](1), BurstTime: Known(700 * time.Nanosecond)},
		},
		{
			name: "v1 old kernel without burst fields",
			in:   "nr_periods 10\nnr_throttled 0\nthrottled_time 0\n",
			want: CPUStat{Periods: Known[uint64](10), Throttled: Known[uint64](0), ThrottledTime: Known(time.Duration(0))},
		},
		{
			name: "v2 full",
			in:   "usage_usec 3\nuser_usec 2\nsystem_usec 1\nnr_periods 10\nnr_throttled 4\nthrottled_usec 2500\nnr_bursts 1\nburst_usec 7\n",
			want: CPUStat{Usage: Known(3 * time.Microsecond), User: Known(2 * time.Microsecond), System: Known(time.Microsecond),
				Periods: Known[uint64](10), Throttled: Known[uint64](4), ThrottledTime: Known(2500 * time.Microsecond),
				Bursts: Known[uint64](1), BurstTime: Known(7 * time.Microsecond)},
		},
		{
			name: "v2 without cpu controller: only the core keys",
			in:   "usage_usec 3\nuser_usec 2\nsystem_usec 1\n",
			want: CPUStat{Usage: Known(3 * time.Microsecond), User: Known(2 * time.Microsecond), System: Known(time.Microsecond)},
		},
		{
			name: "unknown keys skipped, even with odd values",
			in:   "nice_usec 0\ncore_sched.force_idle_usec 12\nwait_sum 1 2 3\nfuture_key x\n\nnr_periods 5\n",
			want: CPUStat{Periods: Known[uint64](5)},
		},
		{name: "empty", in: "", want: CPUStat{}},
		{name: "malformed number names the line", in: "nr_periods 10\nnr_throttled 4x\n", wantErr: `line 2: nr_throttled: invalid number "4x"`},
		{name: "negative", in: "throttled_usec -1\n", wantErr: `line 1: throttled_usec: invalid number "-1"`},
		{name: "missing value", in: "usage_usec 1\nnr_periods\n", wantErr: `line 2: want "nr_periods value"`},
		{name: "extra field", in: "nr_periods 1 2\n", wantErr: `line 1: want "nr_periods value"`},
		{name: "overflow", in: "usage_usec 18446744073709551615\n", wantErr: "line 1: usage_usec: 18446744073709551615 overflows a duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPUStat(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if got != tc.want {
				t.Errorf("input %q\ngot  %+v\nwant %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseCPUMax(t *testing.T) {
	tests := []struct {
		name, in string
		want     Quota
		wantErr  string
	}{
		{name: "no limit", in: "max 100000\n", want: Quota{Unlimited: true, Period: 100 * time.Millisecond}},
		{name: "half a CPU", in: "50000 100000\n", want: Quota{Runtime: 50 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 0.5}},
		{name: "two CPUs, short period", in: "20000 10000", want: Quota{Runtime: 20 * time.Millisecond, Period: 10 * time.Millisecond, CPUs: 2}},
		{name: "trailing burst field ignored", in: "10000 100000 0\n", want: Quota{Runtime: 10 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 0.1}},
		{name: "one field", in: "max\n", wantErr: `line 1: want "$MAX $PERIOD", got "max"`},
		{name: "bad max", in: "lots 100000\n", wantErr: `line 1: max: invalid number "lots"`},
		{name: "bad period", in: "max 1OOOOO\n", wantErr: `line 1: period: invalid number "1OOOOO"`},
		{name: "zero period", in: "max 0\n", wantErr: "line 1: period is 0"},
		{name: "empty", in: "\n", wantErr: "line 1: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCPUMax(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if got != tc.want {
				t.Errorf("input %q\ngot  %+v\nwant %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseCFSQuota(t *testing.T) {
	tests := []struct {
		name, in string
		want     int64
		wantErr  string
	}{
		{name: "none", in: "-1\n", want: -1},
		{name: "tenth of a CPU", in: "10000\n", want: 10000},
		{name: "below -1", in: "-2\n", wantErr: "line 1: quota -2: want -1 or a positive number"},
		{name: "not a number", in: "max\n", wantErr: `line 1: invalid number "max": invalid syntax`},
		{name: "empty", in: "", wantErr: "line 1: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCFSQuota(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if got != tc.want {
				t.Errorf("input %q: got %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseSingleUint(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		wantErr  string
	}{
		{name: "usage", in: "1565558963756\n", want: 1565558963756},
		{name: "no newline", in: "100000", want: 100000},
		{name: "garbage", in: "1e9\n", wantErr: `line 1: invalid number "1e9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSingleUint(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if got != tc.want {
				t.Errorf("input %q: got %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name, in   string
		some, full Opt[PSI]
		wantErr    string
	}{
		{
			name: "some and full",
			in:   "some avg10=4.65 avg60=19.77 avg300=28.50 total=509869375\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			some: Known(PSI{Avg10: 4.65, Avg60: 19.77, Avg300: 28.50, Total: 509869375 * time.Microsecond}),
			full: Known(PSI{}),
		},
		{
			name: "kernel before full for cpu",
			in:   "some avg10=0.10 avg60=0.20 avg300=0.30 total=42\n",
			some: Known(PSI{Avg10: 0.10, Avg60: 0.20, Avg300: 0.30, Total: 42 * time.Microsecond}),
		},
		{
			name: "unknown keys and lines skipped",
			in:   "some avg10=1.00 avg60=2.00 avg30=9 avg300=3.00 total=5 extra\nnone avg10=x\n",
			some: Known(PSI{Avg10: 1, Avg60: 2, Avg300: 3, Total: 5 * time.Microsecond}),
		},
		{name: "bad total", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", wantErr: `line 1: some total: invalid number "-1"`},
		{name: "bad avg", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=NaN avg60=0.00 avg300=0.00 total=0\n", wantErr: `line 2: full avg10: invalid value "NaN"`},
		{name: "missing total", in: "some avg10=0.00 avg60=0.00 avg300=0.00\n", wantErr: "line 1: some: want avg10, avg60, avg300 and total"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			some, full, err := parsePressure(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if some != tc.some || full != tc.full {
				t.Errorf("input %q\ngot  some %+v full %+v\nwant some %+v full %+v", tc.in, some, full, tc.some, tc.full)
			}
		})
	}
}

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		name, in    string
		onCPU, wait time.Duration
		slices      uint64
		wantErr     string
	}{
		{name: "three numbers", in: "194719984 53676439 377\n", onCPU: 194719984, wait: 53676439, slices: 377},
		{name: "fresh thread", in: "0 0 1\n", slices: 1},
		{name: "extra fields ignored", in: "1 2 3 4\n", onCPU: 1, wait: 2, slices: 3},
		{name: "two numbers", in: "1 2\n", wantErr: `line 1: want three numbers, got "1 2"`},
		{name: "bad number", in: "1 seven 3\n", wantErr: `line 1: field 2: invalid number "seven"`},
		{name: "empty", in: "", wantErr: "line 1: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on, wait, slices, err := parseSchedstat(strings.NewReader(tc.in))
			if checkErr(t, tc.in, err, tc.wantErr) {
				return
			}
			if on != tc.onCPU || wait != tc.wait || slices != tc.slices {
				t.Errorf("input %q: got %v %v %d, want %v %v %d", tc.in, on, wait, slices, tc.onCPU, tc.wait, tc.slices)
			}
		})
	}
}
