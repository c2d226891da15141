package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"os"
)

// Line is the JSON layout of one event.
type Line struct {
	Seq      uint64 `json:"seq"`
	Time     string `json:"time"`
	Event    string `json:"event"`
	Database string `json:"database,omitempty"`
	Session  uint64 `json:"session,omitempty"`
	User     string `json:"user,omitempty"`
	DB       string `json:"db,omitempty"`
	App      string `json:"application,omitempty"`
	Client   string `json:"client,omitempty"`
	Via      string `json:"via,omitempty"`
	// ClientTLS and ServerTLS are each leg's TLS version and cipher
	// suite on session_start ("" for plaintext).
	ClientTLS string `json:"client_tls,omitempty"`
	ServerTLS string `json:"server_tls,omitempty"`
	// ClientCert is the subject of the client's certificate on
	// session_start, when it sent one (tls.client_ca).
	ClientCert string         `json:"client_cert,omitempty"`
	Process    *Process       `json:"process,omitempty"`
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

// Process is the client process of a session, when interception saw it.
type Process struct {
	Pid    uint32 `json:"pid"`
	UID    uint32 `json:"uid"`
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"`
}

// Chain links a line to the one before it: SHA-256 of the line, or,
// with audit.key_file, HMAC-SHA256 under that key, which an attacker who
// holds only the file cannot recompute. The mode is declared in every
// start event ("chain" in its extra) and applies from that line on.
type Chain struct {
	// Key is audit.key_file's content; nil means plain SHA-256.
	Key []byte
}

// The chain modes a start event declares.
const (
	ChainSHA256 = "sha256"
	ChainHMAC   = "hmac-sha256"
)

// Name is the mode, as a start event declares it.
func (c Chain) Name() string {
	if c.Key != nil {
		return ChainHMAC
	}
	return ChainSHA256
}

// Sum is the hash the next line carries in its prev for line.
func (c Chain) Sum(line []byte) [sha256.Size]byte {
	if c.Key == nil {
		return sha256.Sum256(line)
	}
	m := hmac.New(sha256.New, c.Key)
	m.Write(line)
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

// MinKeyBytes is the shortest key_file content accepted.
const MinKeyBytes = 16

// ReadKey reads an audit chain key file: its bytes, without a final
// newline. The key is never logged.
func ReadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < MinKeyBytes {
		return nil, fmt.Errorf("audit key %s: %d bytes, want at least %d", path, len(b), MinKeyBytes)
	}
	return b, nil
}
