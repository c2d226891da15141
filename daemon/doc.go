// Package daemon is sqlfwd's glue: it reads the configuration, builds one
// engine per protected database, accepts connections on every listener
// with one loop (accept.go) and hands each to its protocol's relay
// (relay.Protocol, named in protocols.go, the one file that names a
// protocol), lending it what the database offers (relay.Env). It keeps the
// registry of sessions (relay.Session) it lists, drains and closes, counts,
// logs and audits what they report (observe.go), answers the control
// socket and keeps the counters and stats windows that fwctl stats shows.
//
// It never imports wire/ (only relays frame bytes) and never knows a
// protocol's session type.
//
// Parts follow provision → start → stop: New builds everything that can
// fail without side effects (policies, engines), Start opens listeners and
// the control socket, and Stop is safe after a partial Start.
package daemon
