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
	"bufio"
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

	"github.com/sqlfw/sqlfw/engine"
)

// auditRecord is what a session hands to the writer. It holds no copies:
// the strings are the verdict's static ones and the session's own.
type auditRecord struct {
	at      time.Time
	event   string // verdict, session_start, session_end
	s       *pgSession
	outcome string // blocked, allowed, logged, would_block
	v       engine.Verdict
}

type auditor struct {
	log      *slog.Logger
	f        *os.File
	w        *bufio.Writer
	ch       chan auditRecord
	dropped  atomic.Uint64
	written  atomic.Uint64
	allowed  bool // record allowed verdicts too
	anchorN  uint64
	prev     [sha256.Size]byte
	seq      uint64
	done     chan struct{}
	stopOnce sync.Once
}

// auditLine is the JSON layout of one event.
type auditLine struct {
	Seq        uint64         `json:"seq"`
	Time       string         `json:"time"`
	Event      string         `json:"event"`
	Database   string         `json:"database,omitempty"`
	Session    uint64         `json:"session,omitempty"`
	User       string         `json:"user,omitempty"`
	DB         string         `json:"db,omitempty"`
	App        string         `json:"application,omitempty"`
	Client     string         `json:"client,omitempty"`
	Via        string         `json:"via,omitempty"`
	Process    *auditProcess  `json:"process,omitempty"`
	Outcome    string         `json:"outcome,omitempty"`
	Action     string         `json:"action,omitempty"`
	Rule       string         `json:"rule,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Statements int            `json:"statements,omitempty"`
	ParseError bool           `json:"parse_error,omitempty"`
	Dropped    uint64         `json:"dropped,omitempty"`
	Extra      map[string]any `json:"extra,omitempty"`
	Prev       string         `json:"prev"`
}

type auditProcess struct {
	Pid    uint32 `json:"pid"`
	UID    uint32 `json:"uid"`
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"`
}

// openAudit opens (or continues) the trail at path.
func openAudit(c AuditConfig, log *slog.Logger) (*auditor, error) {
	f, err := os.OpenFile(c.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &auditor{log: log, f: f, w: bufio.NewWriterSize(f, 64<<10), ch: make(chan auditRecord, c.Queue),
		allowed: c.IncludeAllowed, anchorN: uint64(c.Anchor), done: make(chan struct{})}
	last, seq, err := lastLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s: %w", c.Path, err)
	}
	if last != nil {
		a.prev = sha256.Sum256(last)
		a.seq = seq
	}
	go a.run()
	return a, nil
}

// lastLine returns the last line of f (without its newline) and its seq.
func lastLine(f *os.File) ([]byte, uint64, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, 0, err
	}
	n := st.Size()
	if n > 1<<20 {
		n = 1 << 20
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	var l auditLine
	if err := json.Unmarshal(buf, &l); err != nil {
		return nil, 0, fmt.Errorf("last line is not an audit record (%v): refusing to append", err)
	}
	return buf, l.Seq, nil
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
func (a *auditor) verdict(s *pgSession, at time.Time, v *engine.Verdict, outcome string) {
	if outcome == "allowed" && !a.allowed {
		return
	}
	a.record(auditRecord{at: at, event: "verdict", s: s, outcome: outcome, v: *v})
}

func (a *auditor) run() {
	defer close(a.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	a.write(auditLine{Event: "start", Time: time.Now().UTC().Format(time.RFC3339Nano)})
	for {
		select {
		case r, ok := <-a.ch:
			if !ok {
				a.flush()
				return
			}
			a.write(a.line(r))
			if len(a.ch) == 0 {
				a.flush()
			}
		case <-tick.C:
			a.flush()
		}
	}
}

func (a *auditor) line(r auditRecord) auditLine {
	s := r.s
	l := auditLine{Time: r.at.UTC().Format(time.RFC3339Nano), Event: r.event, Database: s.db.cfg.Name,
		Session: s.id, User: s.sess.User, DB: s.sess.Database, App: s.sess.Application,
		Client: s.client.RemoteAddr().String(), Via: s.via}
	if s.proc.Known {
		l.Process = &auditProcess{Pid: s.proc.Tgid, UID: s.proc.UID, Comm: s.proc.Comm, Cgroup: s.proc.Cgroup}
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
	a.prev = sha256.Sum256(b)
	b = append(b, '\n')
	if _, err := a.w.Write(b); err != nil {
		a.log.Error("writing the audit log", "err", err)
	}
	n := a.written.Add(1)
	if a.anchorN > 0 && n%a.anchorN == 0 {
		a.anchor()
	}
}

// anchor writes the chain head to the daemon's log, outside the file.
func (a *auditor) anchor() {
	a.log.Info("audit chain head", "seq", a.seq, "sha256", hex.EncodeToString(a.prev[:]))
}

func (a *auditor) flush() {
	if err := a.w.Flush(); err != nil {
		a.log.Error("flushing the audit log", "err", err)
	}
}

// close drains the queue, syncs the file and logs the final chain head.
// Sessions must have ended.
func (a *auditor) close() {
	a.stopOnce.Do(func() {
		close(a.ch)
		<-a.done
		a.emit(auditLine{Event: "stop", Time: time.Now().UTC().Format(time.RFC3339Nano), Dropped: a.dropped.Swap(0)})
		a.flush()
		_ = a.f.Sync()
		a.anchor()
		a.f.Close()
	})
}

// VerifyAudit checks the chain of an audit trail read from r. It returns
// the number of records and the hash of the last one, or an error naming
// the first line where the chain breaks.
func VerifyAudit(r io.Reader) (int, string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var prev [sha256.Size]byte
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		n++
		var l auditLine
		if err := json.Unmarshal(line, &l); err != nil {
			return n - 1, "", fmt.Errorf("line %d: not an audit record: %w", n, err)
		}
		if l.Prev != hex.EncodeToString(prev[:]) {
			return n - 1, "", fmt.Errorf("line %d (seq %d): chain broken: prev %.16s… does not match the line before it", n, l.Seq, l.Prev)
		}
		prev = sha256.Sum256(line)
	}
	if err := sc.Err(); err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(prev[:]), nil
}
