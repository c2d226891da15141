package relay

import (
	"net"
	"testing"
	"time"
)

// Expired decides by the session's state and the time since Arm, never
// by the deadline alone.
func TestIdleTimerExpired(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	long := time.Hour
	for _, tc := range []struct {
		name string
		arm  bool
		ago  time.Duration // since Arm
		d    time.Duration
		idle bool
		want bool
	}{
		{"not armed", false, 2 * long, long, true, false},
		{"busy", true, 2 * long, long, false, false},
		{"no timeout now", true, 2 * long, 0, true, false},
		{"idle for less", true, time.Minute, long, true, false},
		{"idle for longer", true, 2 * long, long, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var it IdleTimer
			if tc.arm {
				it.Arm(a, long)
				it.since.Store(time.Now().Add(-tc.ago).UnixNano())
			}
			if got := it.Expired(a, tc.d, tc.idle); got != tc.want {
				t.Errorf("Expired(%v, idle %v) after %v armed %v = %v, want %v", tc.d, tc.idle, tc.ago, tc.arm, got, tc.want)
			}
			it.Disarm(a)
			if it.armed.Load() {
				t.Error("armed after Disarm")
			}
		})
	}
}
