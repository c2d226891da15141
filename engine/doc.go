// Package engine decides whether a SQL statement may run.
//
// It is pure: SQL text and a Session go in, a Verdict comes out; it opens no
// sockets, reads no files after start-up and never looks at a clock.
// JudgePostgres parses the text with pg_query (PostgreSQL's own parser),
// walks the whole tree to collect facts per statement (kind, tables read and
// written, functions called, UPDATE/DELETE without WHERE, COPY target), and
// tries the policy's rules in order: the first match decides, and a
// statement no rule matches is allowed. Text the parser rejects gets the
// policy's on_parse_error action (deny unless configured otherwise).
//
// Facts depend only on the text, so they are cached by text (full-text
// compare on every hit, bounded by bytes, CLOCK eviction); rules are applied
// to the cached facts and the session on every call. Verdict reasons come
// from the policy and never contain the statement's literals.
package engine
