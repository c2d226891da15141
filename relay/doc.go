// Package relay is the contract between the daemon and a protocol's
// session, in the manner of inetaf/tcpproxy's Target: the daemon accepts a
// connection and hands it over (Conn: the client as it arrived, and the
// Upstream to dial), together with what the protected database lends its
// sessions (Env: the engine a reload swaps, mode resolution, the dialer,
// the client-leg TLS, limits, logger, an Observer that counts, logs and
// audits, and a Meter that times); the Protocol serves the session and
// owns the connection from then on. The daemon keeps the sessions it can
// list (Info), drain and close through the Session interface and never
// knows a protocol's session type.
//
// relay does no I/O of its own beyond IO (rawio.go), the raw reads and
// writes both protocols' relay loops make on plain sockets. It never imports daemon, bpf, cgroupstats
// or a dialect package (engine/pgsql, engine/mysql); a protocol's relay
// (relay/pg) imports it and its wire package.
package relay
