package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// When stderr is connected to journald (systemd sets JOURNAL_STREAM to its
// device and inode), each line starts with a syslog priority prefix, "<4>",
// which journald strips and keeps as the entry's priority
// (SyslogLevelPrefix=, on by default): `journalctl -p warning` then finds
// sqlfwd's warnings, and the line itself is unchanged.

// journalStream reports whether f is the stream JOURNAL_STREAM names.
func journalStream(f *os.File) bool {
	js := os.Getenv("JOURNAL_STREAM")
	if js == "" {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return strings.TrimSpace(js) == fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// journalHandler sends each record to the handler of its priority; each
// writes through a prefixWriter of that priority.
type journalHandler struct {
	debug, info, warn, err slog.Handler
}

func newJournalHandler(w io.Writer, mk func(io.Writer) slog.Handler) *journalHandler {
	return &journalHandler{
		debug: mk(prefixWriter{w, "<7>"}),
		info:  mk(prefixWriter{w, "<6>"}),
		warn:  mk(prefixWriter{w, "<4>"}),
		err:   mk(prefixWriter{w, "<3>"}),
	}
}

func (h *journalHandler) pick(l slog.Level) slog.Handler {
	switch {
	case l >= slog.LevelError:
		return h.err
	case l >= slog.LevelWarn:
		return h.warn
	case l >= slog.LevelInfo:
		return h.info
	}
	return h.debug
}

func (h *journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.pick(l).Enabled(ctx, l)
}

func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.pick(r.Level).Handle(ctx, r)
}

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &journalHandler{h.debug.WithAttrs(as), h.info.WithAttrs(as), h.warn.WithAttrs(as), h.err.WithAttrs(as)}
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	return &journalHandler{h.debug.WithGroup(name), h.info.WithGroup(name), h.warn.WithGroup(name), h.err.WithGroup(name)}
}

// prefixWriter writes prefix before each write: slog's handlers write one
// whole record per call.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
