package daemon

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// The fallback's note is the reason interception is unavailable, found by
// type however the error was wrapped, not by cutting its text.
func TestInterceptUnavailableReason(t *testing.T) {
	err := fmt.Errorf("starting: %w", interceptUnavailable(fmt.Errorf("no cgroup2 mount: %w", io.EOF)))
	var u *interceptUnavailableError
	if !errors.As(err, &u) || u.Reason.Error() != "no cgroup2 mount: EOF" {
		t.Fatalf("errors.As(%v): %v, reason %v", err, u != nil, u)
	}
	if want := "starting: interception unavailable: no cgroup2 mount: EOF"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, io.EOF) {
		t.Error("the cause is not reachable with errors.Is")
	}
	if errors.As(fmt.Errorf("listening: %w", io.EOF), &u) {
		t.Error("an error that is not an unavailable interception matched")
	}
}
