// Package relaytest is the kit every relay's tests use, and the
// conformance suite every relay passes (in the manner of testing/fstest's
// TestFS and x/net/nettest's TestConn).
//
// The kit: Script, a scripted peer that plays either side of a session
// step by step over any net.Conn (after pgx's internal/pgmock), with steps
// that send bytes, expect the next message of a protocol's Framing, run a
// TLS handshake on the script's connection (StartTLS), half-close it or
// expect it closed; Harness, which serves one relay.Protocol's sessions
// between two scripts with an engine of its own (Dialect, a toy dialect
// that reads a statement's kind from its first word: relay packages
// import no dialect), and records what the sessions count, judge and log;
// SelfSigned and NewPKI for the TLS legs.
//
// The suite: TestRelay runs a relay through the behaviours every protocol
// keeps (a blocked statement answered and the connection kept,
// pipelining, half-close, drain, the idle timeout, one byte per write, TLS
// on each leg and its handshake bound by startup_timeout, oversized and
// truncated messages), driven by a small per-protocol Peer that knows the
// protocol's messages and nothing of the relay.
package relaytest
