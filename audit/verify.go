package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Anchor is one chain head the daemon logged ("audit chain head").
type Anchor struct {
	Seq  uint64
	Head string // hex
	Line int    // line of the log it came from
}

// ParseAnchors reads the anchors from a daemon log: slog text or JSON
// lines, as written to a file or printed by `journalctl -o cat`. Lines
// that are not anchors are skipped.
func ParseAnchors(r io.Reader) ([]Anchor, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []Anchor
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
		a := Anchor{Line: n}
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

// VerifyOptions: what Verify checks the file against besides its own
// chain.
type VerifyOptions struct {
	// Key is the audit.key_file content: the file's last start event must
	// declare a keyed chain, and no later start may drop the key.
	Key []byte
	// Anchors from the daemon log: each must match the record of its seq,
	// and none may lie beyond the file's end (a cut tail).
	Anchors []Anchor
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

// Verify checks the chain of an audit trail read from r: every line's
// prev must be the hash of the line before it (SHA-256, or HMAC-SHA256
// under the key where a start event declares a keyed chain), seqs must
// follow each other, and the file must agree with the anchors. It returns
// what it found, or an error naming the first line where the trail is not
// what the daemon wrote.
func Verify(r io.Reader, opt VerifyOptions) (VerifyResult, error) {
	var res VerifyResult
	anchors := map[uint64][]Anchor{}
	var maxAnchor uint64
	for _, a := range opt.Anchors {
		anchors[a.Seq] = append(anchors[a.Seq], a)
		maxAnchor = max(maxAnchor, a.Seq)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var prev [sha256.Size]byte
	var prevLine []byte
	chain := Chain{}
	mode := ChainSHA256
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
		var l Line
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
			case "", ChainSHA256:
				mode, chain = ChainSHA256, Chain{}
				if keyedSeen {
					return res, fmt.Errorf("line %d (seq %d): the chain drops its key here: records from this line on could be forged", n, l.Seq)
				}
			case ChainHMAC:
				if opt.Key == nil {
					return res, fmt.Errorf("line %d (seq %d): the chain is keyed (%s) from here: pass the audit key file", n, l.Seq, ChainHMAC)
				}
				mode, chain, keyedSeen = ChainHMAC, Chain{Key: opt.Key}, true
			default:
				return res, fmt.Errorf("line %d (seq %d): unknown chain %q", n, l.Seq, m)
			}
		}
		// A line's prev is the hash of the line before it in this
		// line's mode, which a start event may just have changed.
		if l.Event == "start" && n > 1 {
			prev = chain.Sum(prevLine)
		}
		if l.Prev != hex.EncodeToString(prev[:]) {
			return res, fmt.Errorf("line %d (seq %d): chain broken: prev %.16s… does not match the line before it", n, l.Seq, l.Prev)
		}
		if n > 1 && l.Seq != res.LastSeq+1 {
			return res, fmt.Errorf("line %d: seq %d follows seq %d", n, l.Seq, res.LastSeq)
		}
		prev = chain.Sum(line)
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
