package daemon

// The audit trail is a file of JSON lines, one event each:
//
//	{"seq":7,"time":"2026-11-30T17:40:01.5Z","event":"verdict","database":"main","session":3,
//	 "user":"app","db":"shop","client":"127.0.0.1:40112","process":{"pid":811,"comm":"psql",...},
//	 "outcome":"blocked","action":"deny","rule":"no-unfiltered-writes","reason":"...","statements":1,
//	 "prev":"9f2c…"}
//
// Each line carries in "prev" the SHA-256 of the line before it (the first
// line of a file: 64 zeros; a daemon that appends to an existing file
// continues its chain), so removing, inserting or editing a line breaks the
// chain at that point: `fwctl audit verify FILE` finds it. An attacker who
// rewrites the whole file can rebuild the chain, so the daemon also writes
// the chain head to its own log every audit_anchor records and at stop;
// comparing those anchors with the file detects a rewrite. Records name
// rules and reasons, never statement text or literals.
//
// The session path only hands a small record to a buffered channel; one
// goroutine formats, hashes and writes. When the queue is full the record
// is dropped and counted, and the next line written is a "gap" event with
// the count: the trail says what it lost instead of blocking statements.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/audit"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// auditLine is one event's JSON line (the format and its verification
// live in audit/, which fwctl uses without the daemon).
type auditLine = audit.Line

// auditRecord is what a session hands to the writer. It holds no copies:
// the strings are the verdict's static ones and the session's own.
type auditRecord struct {
	at      time.Time
	event   string // verdict, session_start, session_end
	s       relay.Session
	outcome string // blocked, allowed, logged, would_block
	v       engine.Verdict
}

type auditor struct {
	log     *slog.Logger
	f       *os.File
	ch      chan auditRecord
	dropped atomic.Uint64
	written atomic.Uint64
	allowed bool // record allowed verdicts too
	anchorN uint64
	chain   audit.Chain
	prev    [sha256.Size]byte
	seq     uint64
	// buf holds whole records not yet written: the file only ever gets
	// complete lines from one write, so a crash can tear at most the last
	// write, never interleave half records (a short write is repaired at
	// the next open).
	buf []byte
	// anchorDue: a record due for an anchor is in buf; the anchor is
	// logged once it is in the file, so no anchor names a record the file
	// never got.
	anchorDue bool
	// repair describes what openAudit cut from a torn tail; it becomes
	// the first event after start.
	repair   map[string]any
	done     chan struct{}
	stopOnce sync.Once
}

// auditFlushBytes: buffered records are written once they reach this size,
// when the queue is empty, and every second.
const auditFlushBytes = 64 << 10

// openAudit opens (or continues) the trail at path. A tail that is not
// whole records (a crash tore the last write, or someone appended garbage)
// is cut off; what was cut is recorded as a "repair" event in the chain.
//
// Path "-" is standard output (a container's log stream, which the
// cluster's log pipeline ships): a stream can be neither read back nor
// cut, so each start begins a new chain at seq 1.
func openAudit(c AuditConfig, log *slog.Logger) (*auditor, error) {
	stream := c.Path == "-"
	f := os.Stdout
	if !stream {
		var err error
		if f, err = os.OpenFile(c.Path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
	}
	var err error
	a := &auditor{log: log, f: f, ch: make(chan auditRecord, c.Queue),
		allowed: c.IncludeAllowed, anchorN: uint64(c.Anchor), done: make(chan struct{}),
		buf: make([]byte, 0, 2*auditFlushBytes)}
	if c.KeyFile != "" {
		if a.chain.Key, err = audit.ReadKey(c.KeyFile); err != nil {
			a.closeFile()
			return nil, err
		}
	}
	if stream {
		go a.run()
		return a, nil
	}
	t, err := auditTail(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s: %w", c.Path, err)
	}
	if t.cut > 0 {
		if err := f.Truncate(t.keep); err != nil {
			f.Close()
			return nil, fmt.Errorf("audit log %s: cutting a torn tail: %w", c.Path, err)
		}
		a.repair = map[string]any{"cut_bytes": t.cut, "cut_sha256": hex.EncodeToString(t.cutSum[:]), "kept_bytes": t.keep, "why": t.why}
		log.Warn("audit log: cut a tail that is not whole records; the repair is recorded in the chain",
			"path", c.Path, "cut_bytes", t.cut, "kept_bytes", t.keep, "why", t.why)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s: %w", c.Path, err)
	}
	if t.last != nil {
		// The line before the first new one was hashed with the mode in
		// force when the new line is written: the new start event's.
		a.prev = a.chain.Sum(t.last)
		a.seq = t.seq
	}
	go a.run()
	return a, nil
}

// tail is what auditTail found at the end of a trail.
type tail struct {
	last   []byte // the last whole record (nil: none)
	seq    uint64
	keep   int64 // bytes of whole records
	cut    int64 // bytes after them
	cutSum [sha256.Size]byte
	why    string
}

// auditTailWindow bounds how far back auditTail looks for the last whole
// record.
const auditTailWindow = 1 << 20

// auditTail finds the last whole record of f: a newline-terminated line
// that is a JSON audit record. What follows it is to be cut.
func auditTail(f *os.File) (tail, error) {
	var t tail
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return t, err
	}
	size := st.Size()
	n := min(size, auditTailWindow)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return t, err
	}
	end := len(buf) // buf[:end] ends after a candidate newline or is the start
	if buf[end-1] != '\n' {
		t.why = "last line has no newline (torn write)"
		end = bytes.LastIndexByte(buf, '\n') + 1
	}
	for end > 0 {
		line := buf[:end-1]
		start := bytes.LastIndexByte(line, '\n') + 1
		if start == 0 && size > n {
			break // the line may begin before the window
		}
		line = line[start:]
		var l auditLine
		if json.Unmarshal(line, &l) == nil && l.Seq > 0 {
			t.last, t.seq = bytes.Clone(line), l.Seq
			break
		}
		if t.why == "" {
			t.why = "last line is not an audit record"
		}
		end = start
	}
	if t.last == nil && (size > n || end > 0 || !bytes.HasPrefix(buf, []byte(`{"seq":1,`))) {
		// Only a torn first write may be cut whole: anything else is not
		// an audit trail, and cutting it would destroy someone's file.
		return t, errors.New("no whole audit record at its end: not an audit trail, refusing to append")
	}
	t.keep = size - n + int64(end)
	t.cut = size - t.keep
	if t.cut > 0 {
		t.cutSum = sha256.Sum256(buf[end:])
	}
	return t, nil
}

// record queues one event; it never blocks.
func (a *auditor) record(r auditRecord) {
	select {
	case a.ch <- r:
	default:
		a.dropped.Add(1)
	}
}

// verdict queues a verdict event when the trail records that outcome.
func (a *auditor) verdict(s relay.Session, at time.Time, v *engine.Verdict, outcome string) {
	if outcome == "allowed" && !a.allowed {
		return
	}
	a.record(auditRecord{at: at, event: "verdict", s: s, outcome: outcome, v: *v})
}

func (a *auditor) run() {
	defer close(a.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	a.write(auditLine{Event: "start", Time: now, Extra: map[string]any{"chain": a.chain.Name()}})
	// Every start is anchored, so that a start someone appended (to
	// continue a chain they rebuilt) has no anchor in the daemon log.
	a.anchorDue = true
	a.flush()
	if a.repair != nil {
		a.write(auditLine{Event: "repair", Time: now, Extra: a.repair})
		a.flush()
	}
	for {
		select {
		case r, ok := <-a.ch:
			if !ok {
				a.flush()
				return
			}
			a.write(a.line(r))
			if len(a.ch) == 0 || len(a.buf) >= auditFlushBytes {
				a.flush()
			}
		case <-tick.C:
			a.flush()
		}
	}
}

func (a *auditor) line(r auditRecord) auditLine {
	s := r.s.Info()
	l := auditLine{Time: r.at.UTC().Format(time.RFC3339Nano), Event: r.event, Database: s.Database,
		Session: s.ID, User: s.User, DB: s.DBName, App: s.Application,
		Client: s.Client, Via: string(s.Via)}
	if p := s.Process; p.Known {
		l.Process = &audit.Process{Pid: p.Tgid, UID: p.UID, Comm: p.Comm, Cgroup: p.Cgroup}
	}
	if r.event == "session_start" {
		l.ClientTLS, l.ServerTLS, l.ClientCert = s.ClientTLS, s.ServerTLS, s.ClientCert
	}
	if r.event == "verdict" {
		l.Outcome, l.Action, l.Rule, l.Reason = r.outcome, r.v.Action.String(), r.v.RuleID, r.v.Reason
		l.Statements, l.ParseError = r.v.Statements, r.v.ParseError
	}
	return l
}

// write appends one line to the chain, preceded by a gap event when
// records were dropped.
func (a *auditor) write(l auditLine) {
	if d := a.dropped.Swap(0); d > 0 {
		a.emit(auditLine{Event: "gap", Time: time.Now().UTC().Format(time.RFC3339Nano), Dropped: d})
		a.log.Error("audit queue full: records dropped", "dropped", d)
	}
	a.emit(l)
}

func (a *auditor) emit(l auditLine) {
	a.seq++
	l.Seq = a.seq
	l.Prev = hex.EncodeToString(a.prev[:])
	b, err := json.Marshal(l)
	if err != nil {
		a.log.Error("audit record", "err", err)
		return
	}
	a.prev = a.chain.Sum(b)
	a.buf = append(append(a.buf, b...), '\n')
	n := a.written.Add(1)
	if a.anchorN > 0 && n%a.anchorN == 0 {
		a.anchorDue = true
	}
}

// anchor writes the chain head to the daemon's log, outside the file.
func (a *auditor) anchor() {
	a.log.Info("audit chain head", "seq", a.seq, "chain", a.chain.Name(), "head", hex.EncodeToString(a.prev[:]))
}

// flush writes the buffered records in one write, then logs an anchor
// that became due.
func (a *auditor) flush() {
	if len(a.buf) == 0 {
		return
	}
	_, err := a.f.Write(a.buf)
	a.buf = a.buf[:0]
	if err != nil {
		a.log.Error("writing the audit log", "err", err)
		return
	}
	if a.anchorDue {
		a.anchorDue = false
		a.anchor()
	}
}

// close drains the queue, syncs the file and logs the final chain head.
// Sessions must have ended.
func (a *auditor) close() {
	a.stopOnce.Do(func() {
		close(a.ch)
		<-a.done
		a.emit(auditLine{Event: "stop", Time: time.Now().UTC().Format(time.RFC3339Nano), Dropped: a.dropped.Swap(0)})
		a.anchorDue = false
		a.flush()
		_ = a.f.Sync()
		a.anchor()
		a.closeFile()
	})
}

// closeFile closes the trail's file, never standard output (audit path "-").
func (a *auditor) closeFile() {
	if a.f != os.Stdout {
		a.f.Close()
	}
}
