package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSystemdNotify runs sqlfwd as systemd would with Type=notify and
// WatchdogSec: a datagram socket in NOTIFY_SOCKET must receive READY (with a
// STATUS) once it listens, WATCHDOG pings, RELOADING then READY around a
// SIGHUP, and STOPPING on SIGTERM.
func TestSystemdNotify(t *testing.T) {
	needSqlfwd(t)
	sock := filepath.Join(t.TempDir(), "notify.sock")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := ln.ReadFromUnix(buf)
			if err != nil {
				close(got)
				return
			}
			got <- string(buf[:n])
		}
	}()
	d, err := startDaemonWrapped([]string{"env", "NOTIFY_SOCKET=" + sock, "WATCHDOG_USEC=200000"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	expect := func(what string) string {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case m := <-got:
				if strings.Contains(m, what) {
					return m
				}
			case <-deadline:
				t.Fatalf("no %q notification within 10 s; log:\n%s", what, tail(d.log(), 20))
			}
		}
	}
	if m := expect("READY=1"); !strings.Contains(m, "STATUS=") {
		t.Errorf("READY without a STATUS line: %q", m)
	}
	expect("WATCHDOG=1")
	expect("WATCHDOG=1")
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if m := expect("RELOADING=1"); !strings.Contains(m, "MONOTONIC_USEC=") {
		t.Errorf("RELOADING without MONOTONIC_USEC (systemd's notify-reload needs it): %q", m)
	}
	expect("READY=1")
	if code, err := d.signal(syscall.SIGTERM, 15*time.Second); err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit %d, %v", code, err)
	}
	expect("STOPPING=1")
}
