package main

import (
	"log/slog"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// notifier speaks systemd's notify protocol (Type=notify): READY once the
// listeners and interception are up, RELOADING/READY around a reload,
// STOPPING when draining, STATUS lines, and WATCHDOG pings at half the
// unit's WatchdogSec. Without NOTIFY_SOCKET every call is a no-op.
type notifier struct {
	log  *slog.Logger
	stop chan struct{}
}

func newNotifier(log *slog.Logger) *notifier {
	return &notifier{log: log, stop: make(chan struct{})}
}

func (n *notifier) send(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		n.log.Warn("systemd notify", "err", err)
	}
}

func (n *notifier) ready(status string) {
	n.send(sd.SdNotifyReady + "\nSTATUS=" + status)
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(interval / 2)
		defer t.Stop()
		for {
			select {
			case <-n.stop:
				return
			case <-t.C:
				n.send(sd.SdNotifyWatchdog)
			}
		}
	}()
}

// status sends a new STATUS line (what discovery leaves unprotected
// changed).
func (n *notifier) status(status string) {
	n.send("STATUS=" + status)
}

func (n *notifier) reloading() {
	n.send(sd.SdNotifyMonotonicUsec() + sd.SdNotifyReloading)
}

func (n *notifier) reloaded(status string) {
	n.send(sd.SdNotifyReady + "\nSTATUS=" + status)
}

func (n *notifier) stopping(status string) {
	close(n.stop)
	n.send(sd.SdNotifyStopping + "\nSTATUS=" + status)
}
