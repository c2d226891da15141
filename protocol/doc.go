// Package protocol is the one table of the protocols sqlfwd speaks: for
// each, its name in the configuration, default port, relay, dialect,
// embedded default policy, buffer defaults, the commands a database may
// allow, what discovery calls its servers and how its session's lexing
// state is given. config/, daemon/ and cmd/fwctl read a protocol's facts
// here and name none themselves.
//
// The package names no protocol either: it is the plug's shape and the
// registry. The protocols built into sqlfwd are listed, in order, in
// protocol/builtin, whose Register the binaries (cmd/sqlfwd, cmd/fwctl)
// call first thing in main, explicitly: no registration happens in an
// init function, so there is no order of package initialisation to
// depend on, and a program or test that forgot to register gets an error
// naming the fix rather than a protocol silently missing. A new protocol
// is a relay, a wire package and a dialect, plus one entry in
// protocol/builtin.
package protocol
