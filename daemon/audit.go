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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
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
	log     *slog.Logger
	f       *os.File
	ch      chan auditRecord
	dropped atomic.Uint64
	written atomic.Uint64
	allowed bool // record allowed verdicts too
	anchorN uint64
	chain   chainHash
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

// chainHash links a line to the one before it: SHA-256 of the line, or,
// with audit.key_file, HMAC-SHA256 under that key, which an attacker who
// holds only the file cannot recompute. The mode is declared in every
// start event ("chain" in its extra) and applies from that line on.
type chainHash struct{ key []byte }

const (
	chainSHA256 = "sha256"
	chainHMAC   = "hmac-sha256"
)

func (c chainHash) name() string {
	if c.key != nil {
		return chainHMAC
	}
	return chainSHA256
}

func (c chainHash) sum(line []byte) [sha256.Size]byte {
	if c.key == nil {
		return sha256.Sum256(line)
	}
	m := hmac.New(sha256.New, c.key)
	m.Write(line)
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

// minAuditKey is the shortest key_file content accepted.
const minAuditKey = 16

// ReadAuditKey reads an audit chain key file: its bytes, without a final
// newline. The key is never logged.
func ReadAuditKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < minAuditKey {
		return nil, fmt.Errorf("audit key %s: %d bytes, want at least %d", path, len(b), minAuditKey)
	}
	return b, nil
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

// openAudit opens (or continues) the trail at path. A tail that is not
// whole records (a crash tore the last write, or someone appended garbage)
// is cut off; what was cut is recorded as a "repair" event in the chain.
func openAudit(c AuditConfig, log *slog.Logger) (*auditor, error) {
	f, err := os.OpenFile(c.Path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &auditor{log: log, f: f, ch: make(chan auditRecord, c.Queue),
		allowed: c.IncludeAllowed, anchorN: uint64(c.Anchor), done: make(chan struct{}),
		buf: make([]byte, 0, 2*auditFlushBytes)}
	if c.KeyFile != "" {
		if a.chain.key, err = ReadAuditKey(c.KeyFile); err != nil {
			f.Close()
			return nil, err
		}
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
		a.prev = a.chain.sum(t.last)
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
	now := time.Now().UTC().Format(time.RFC3339Nano)
	a.write(auditLine{Event: "start", Time: now, Extra: map[string]any{"chain": a.chain.name()}})
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
	a.prev = a.chain.sum(b)
	a.buf = append(append(a.buf, b...), '\n')
	n := a.written.Add(1)
	if a.anchorN > 0 && n%a.anchorN == 0 {
		a.anchorDue = true
	}
}

// anchor writes the chain head to the daemon's log, outside the file.
func (a *auditor) anchor() {
	a.log.Info("audit chain head", "seq", a.seq, "chain", a.chain.name(), "head", hex.EncodeToString(a.prev[:]))
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
		a.f.Close()
	})
}

// AuditAnchor is one chain head the daemon logged ("audit chain head").
type AuditAnchor struct {
	Seq  uint64
	Head string // hex
	Line int    // line of the log it came from
}

// ParseAuditAnchors reads the anchors from a daemon log: slog text or JSON
// lines, as written to a file or printed by `journalctl -o cat`. Lines
// that are not anchors are skipped.
func ParseAuditAnchors(r io.Reader) ([]AuditAnchor, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []AuditAnchor
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.Contains(line, "audit chain head") {
			continue
		}
		var j struct {
			Msg    string `json:"msg"`
			Seq    uint64 `json:"seq"`
			Head   string `json:"head"`
			SHA256 string `json:"sha256"` // logs before the keyed chain
		}
		a := AuditAnchor{Line: n}
		if i := strings.IndexByte(line, '{'); i >= 0 && json.Unmarshal([]byte(line[i:]), &j) == nil && j.Msg == "audit chain head" {
			a.Seq, a.Head = j.Seq, j.Head
			if a.Head == "" {
				a.Head = j.SHA256
			}
		} else {
			for _, f := range strings.Fields(line) {
				k, v, ok := strings.Cut(f, "=")
				if !ok {
					continue
				}
				switch k {
				case "seq":
					a.Seq, _ = strconv.ParseUint(v, 10, 64)
				case "head", "sha256":
					a.Head = v
				}
			}
		}
		if a.Seq == 0 || len(a.Head) != 2*sha256.Size {
			return out, fmt.Errorf("log line %d: an audit chain head without seq and head", n)
		}
		out = append(out, a)
	}
	return out, sc.Err()
}

// VerifyOptions: what VerifyAudit checks the file against besides its own
// chain.
type VerifyOptions struct {
	// Key is the audit.key_file content: the file's last start event must
	// declare a keyed chain, and no later start may drop the key.
	Key []byte
	// Anchors from the daemon log: each must match the record of its seq,
	// and none may lie beyond the file's end (a cut tail).
	Anchors []AuditAnchor
}

// VerifyResult describes an intact trail.
type VerifyResult struct {
	Records int
	LastSeq uint64
	Head    string
	Chain   string // mode of the last start event
	// Unkeyed counts records written before the first keyed start (with a
	// Key); Repairs counts repair events (tails cut after a crash).
	Unkeyed, Repairs int
	// AnchorsChecked and AfterLastAnchor: with anchors, how many matched
	// and how many records follow the highest anchored seq (covered by the
	// chain alone).
	AnchorsChecked, AfterLastAnchor int
}

// VerifyAudit checks the chain of an audit trail read from r: every line's
// prev must be the hash of the line before it (SHA-256, or HMAC-SHA256
// under the key where a start event declares a keyed chain), seqs must
// follow each other, and the file must agree with the anchors. It returns
// what it found, or an error naming the first line where the trail is not
// what the daemon wrote.
func VerifyAudit(r io.Reader, opt VerifyOptions) (VerifyResult, error) {
	var res VerifyResult
	anchors := map[uint64][]AuditAnchor{}
	var maxAnchor uint64
	for _, a := range opt.Anchors {
		anchors[a.Seq] = append(anchors[a.Seq], a)
		maxAnchor = max(maxAnchor, a.Seq)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var prev [sha256.Size]byte
	var prevLine []byte
	chain := chainHash{}
	mode := chainSHA256
	keyedSeen := false
	var minAnchor uint64
	for _, a := range opt.Anchors {
		if minAnchor == 0 || a.Seq < minAnchor {
			minAnchor = a.Seq
		}
	}
	n := 0
	lastEvent := ""
	for sc.Scan() {
		line := sc.Bytes()
		n++
		var l auditLine
		if err := json.Unmarshal(line, &l); err != nil {
			return res, fmt.Errorf("line %d: not an audit record: %w", n, err)
		}
		if lastEvent == "stop" && l.Event != "start" {
			return res, fmt.Errorf("line %d (seq %d): a %s record after a stop event: only a starting daemon writes there", n, l.Seq, l.Event)
		}
		lastEvent = l.Event
		if l.Event == "start" {
			m, _ := l.Extra["chain"].(string)
			switch m {
			case "", chainSHA256:
				mode, chain = chainSHA256, chainHash{}
				if keyedSeen {
					return res, fmt.Errorf("line %d (seq %d): the chain drops its key here: records from this line on could be forged", n, l.Seq)
				}
			case chainHMAC:
				if opt.Key == nil {
					return res, fmt.Errorf("line %d (seq %d): the chain is keyed (%s) from here: pass the audit key file", n, l.Seq, chainHMAC)
				}
				mode, chain, keyedSeen = chainHMAC, chainHash{key: opt.Key}, true
			default:
				return res, fmt.Errorf("line %d (seq %d): unknown chain %q", n, l.Seq, m)
			}
		}
		// A line's prev is the hash of the line before it in this
		// line's mode, which a start event may just have changed.
		if l.Event == "start" && n > 1 {
			prev = chain.sum(prevLine)
		}
		if l.Prev != hex.EncodeToString(prev[:]) {
			return res, fmt.Errorf("line %d (seq %d): chain broken: prev %.16s… does not match the line before it", n, l.Seq, l.Prev)
		}
		if n > 1 && l.Seq != res.LastSeq+1 {
			return res, fmt.Errorf("line %d: seq %d follows seq %d", n, l.Seq, res.LastSeq)
		}
		prev = chain.sum(line)
		prevLine = append(prevLine[:0], line...)
		res.Records, res.LastSeq = n, l.Seq
		if opt.Key != nil && !keyedSeen {
			res.Unkeyed++
		}
		if l.Event == "repair" {
			res.Repairs++
		}
		if l.Event == "start" && minAnchor > 0 && l.Seq > minAnchor && len(anchors[l.Seq]) == 0 {
			return res, fmt.Errorf("line %d (seq %d): a start event the daemon log has no chain head for: appended by someone else, or the log given does not cover this start", n, l.Seq)
		}
		for _, a := range anchors[l.Seq] {
			if a.Head != hex.EncodeToString(prev[:]) {
				return res, fmt.Errorf("line %d (seq %d): differs from the chain head the daemon logged for it (log line %d): the record or the lines before it were rewritten", n, l.Seq, a.Line)
			}
			res.AnchorsChecked++
		}
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	res.Head, res.Chain = hex.EncodeToString(prev[:]), mode
	if opt.Key != nil && !keyedSeen {
		return res, errors.New("a key was given but no start event declares a keyed chain: the file may have been rebuilt without the key")
	}
	if maxAnchor > res.LastSeq {
		a := anchors[maxAnchor][0]
		return res, fmt.Errorf("truncated: the daemon logged a chain head for seq %d (log line %d), the file ends at seq %d", maxAnchor, a.Line, res.LastSeq)
	}
	if len(opt.Anchors) > 0 {
		res.AfterLastAnchor = int(res.LastSeq - maxAnchor)
	}
	return res, nil
}
