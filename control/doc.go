// Package control is sqlfwd's control socket as its clients see it: the
// JSON types of its answers (Status, Stats, Connection and the stats
// window's figures) and a Client that calls it over the unix socket.
//
// The daemon computes these types and serves them (daemon/control.go,
// daemon/metrics.go); fwctl decodes them. So that fwctl does not link the
// daemon, control imports nothing of sqlfw: no daemon, engine, relay, bpf
// or cgroupstats, only the standard library.
package control
