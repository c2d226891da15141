// Package daemon is sqlfwd's glue: it reads the configuration, builds one
// engine per protected database, accepts connections, owns each session
// (relaying bytes with wire/ and asking engine/ for verdicts), answers the
// control socket and keeps the counters that fwctl stats shows.
//
// Parts follow provision → start → stop: New builds everything that can
// fail without side effects (policies, engines), Start opens listeners and
// the control socket, and Stop is safe after a partial Start.
package daemon
