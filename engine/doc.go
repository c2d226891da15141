// Package engine decides whether a SQL statement may run.
//
// It is pure: SQL text and a Session go in, a Verdict comes out; it opens no
// sockets, reads no files after start-up and never looks at a clock (time
// windows and rate limits use Session.At, which the caller fills).
// JudgePostgres first turns the text into what the server lexes under the
// session's Lex state (client encoding, standard_conforming_strings;
// lexstate.go), then measures it lexically (bytes, list sizes, nesting,
// comment tricks), parses it with pg_query (PostgreSQL's own parser), walks
// the whole tree to collect facts per statement (kinds, DDL verb and object,
// tables read and written, columns, functions, COPY ends, always-true
// conditions folded as the server evaluates them (taut.go), catalog probing,
// stacked statements, DO bodies, the measures of the limits: boolean terms,
// generated rows and built strings (limits.go)), and tries the
// policy's rules in order: the first that applies and matches decides, and a
// statement no rule matches is allowed. Text the parser rejects gets the
// policy's on_parse_error action (deny unless configured otherwise).
//
// Facts depend only on the text, so they are cached by text (full-text
// compare on every hit, bounded by bytes, CLOCK eviction), together with the
// rules whose text conditions hold; a hit checks only scope, time and rate,
// without allocating. Verdict reasons come from the policy (plus measured
// numbers for limits) and never contain the statement's literals.
//
// A Learner records fingerprints of the statements judged, for allowlists.
package engine
