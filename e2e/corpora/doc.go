// Package corpora measures what the embedded default policies stop of the
// public SQL-injection corpora (sqlmap's payloads, wfuzz's list,
// libinjection's data, the OWASP Core Rule Set's SQLi regression tests,
// PayloadsAllTheThings), each payload placed in the statements a
// vulnerable application builds, and counts the false positives of benign
// inputs placed in the same statements (issue 22; docs/corpora.md).
//
// The pieces, in the order a payload meets them: Load reads the corpora
// (sources.go; nothing is vendored, scripts/corpora.sh says where they
// come from); Place puts it in each slot (Slots); lex reads the statement
// with the server's lexical rules (lex.go) to tell whether the payload
// left its slot; a Parser (server.go) asks the real PostgreSQL or MariaDB
// whether it parses each statement, without executing it; Measure (run.go)
// runs them all, Shape (measure.go) names the
// kind of injection; the engine with the dialect's default policy judges
// it; Report writes the tables (report.go).
//
// TestCorpora (corpora_test.go) is the measure: make test runs it on the
// Debian corpora against the throwaway servers scripts/test.sh starts,
// and fails on a false positive or a rate below testdata/floors.tsv.
package corpora
