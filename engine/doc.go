// Package engine decides whether a SQL statement may run. It is the
// dialect-neutral core: the policy language (policy.go, docs/policy.md), the
// fact vocabulary a dialect fills (vocab.go), the Dialect interface
// (dialect.go), matching (match.go), the fact and shape caches (cache.go,
// shapes.go), rate limits (rate.go), the learner (learn.go), and Verdict,
// Session and Mode (verdict.go).
//
// It is pure: SQL text and a Session go in, a Verdict comes out; it opens no
// sockets, reads no files after start-up and never looks at a clock (time
// windows and rate limits use Session.At, which the caller fills).
//
// It never parses SQL. A dialect package (engine/pgsql for PostgreSQL,
// engine/mysql for MySQL and MariaDB) imports this one and hands New a Dialect, the way image/png registers
// with image: engine.New(policy, pgsql.Dialect, opts). Judge then asks the
// dialect for the text the server will lex under the session's LexState
// (Read), measures it before parsing (Prescan: bytes, list sizes, nesting,
// comment tricks), has it parsed into facts per statement (Analyze: kinds,
// DDL verb and object, tables read and written, columns, functions, COPY
// ends and file effects, always-true conditions, catalog probing, stacked
// statements, code in strings, the measures of the limits), and tries the
// policy's rules in order: the first that applies and matches decides, and a
// statement no rule matches is allowed. Text the parser rejects gets the
// policy's on_parse_error action (deny unless configured otherwise). New
// refuses a policy that uses a match key the dialect cannot fill, or an
// object type it does not have (Policy.Check), naming the rule's line.
//
// Facts depend only on the text, so they are cached by text (full-text
// compare on every hit, bounded by bytes, CLOCK eviction), together with the
// rules whose text conditions hold; a hit checks only scope, time and rate,
// without allocating. Verdict reasons come from the policy (plus measured
// numbers for limits) and never contain the statement's literals.
//
// A Learner records the statements judged per application identity
// (learn.go: fingerprints and what each touches) and exports a learned
// policy in two forms: fingerprint allow rules, or a learned scope (match
// key within, within.go), closed by a learned-drift rule.
//
// engine never imports a SQL parser (pg_query, TiDB), a dialect package, a
// protocol's bytes or session (wire, relay), the daemon, bpf, cgroupstats,
// or net (net/netip only): go list -deps ./engine shows none of them.
package engine
