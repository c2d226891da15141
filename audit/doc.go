// Package audit is the audit trail's format: the JSON line of one event
// (Line), the hash chain that links each line to the one before it (Chain,
// keyed with audit.key_file), the chain heads the daemon logs outside the
// file (Anchor, ParseAnchors), and Verify, which checks a trail against its
// chain and those anchors.
//
// The daemon writes trails (daemon/audit.go: the queue, the writer, the
// repair of a torn tail); `fwctl audit verify` reads them with this
// package alone. audit imports nothing of sqlfw, so fwctl does not link
// the daemon to verify a trail.
package audit
