// Package mysql is MySQL's and MariaDB's dialect for the engine: it turns SQL
// text, as a MySQL or MariaDB server reads it, into the engine's facts, with
// TiDB's MySQL parser (github.com/pingcap/tidb/pkg/parser, pooled: a parser
// is not safe for concurrent use). Dialect is the value engine.New takes;
// DefaultPolicy is the policy sqlfw uses for MySQL and MariaDB when none is
// configured (default_policy.yaml).
//
// The parts, in the order a text meets them: lex.go (Read: the text the
// server executes under the session's sql_mode and character set, with
// executable comments resolved as the session's server reads them, refused
// where the server's reading cannot be known), charset.go (multibyte client
// character sets converted to UTF-8 along the server's character
// boundaries), prescan.go (the measures before parsing and the comment
// tricks, and the tokens unparsed.go reads), facts.go (the parser pool and
// the walker over each statement).
//
// MariaDB's own syntax where TiDB's grammar stops (a text the parser
// rejects is read again as the server's statements, each rewritten to
// TiDB's spelling of the same facts): mariadb.go (the reader: statement by
// statement, parsed as is or rewritten), mariarewrite.go (the word and
// clause rewrites of one statement), mariastmt.go (statements read on their
// own: DROP of routines, CREATE OR REPLACE, RESET, XA, SET STATEMENT,
// RETURNING, BACKUP, FLUSH, CHECK/REPAIR TABLE, EXECUTE ... USING),
// mariaclause.go (clauses rewritten or skipped: INTO variables, JSON_TABLE,
// PERCENTILE_*, FETCH FIRST, VALUES rows, MATCH, FOR SYSTEM_TIME, PERIOD
// FOR, WEIGHT_STRING), mariaoperand.go (an operand's extent for SOUNDS
// LIKE), mariawords.go (the words and literals MariaDB has and TiDB does
// not) and body.go (stored programs: header and body statement by
// statement).
//
// What is certain of a text nothing reads: unparsed.go (the cut into
// pieces and the facts of each), unparsedlead.go (a piece recognized by its
// leading words: plugins, routines, servers, GRANT), composed.go (MariaDB's
// forms read in parts: RETURNING, FOR PORTION OF, SET STATEMENT ... FOR),
// immediate.go (EXECUTE IMMEDIATE of a literal judged as its statement).
//
// Then what the facts mean: definer.go (DEFINER = the session's own user
// read as CURRENT_USER for that session), routine.go (a routine's body
// counts as what its statements are), probes.go (the shapes of injected
// catalog, server-information and error-based probes, and disguised
// waits), blind.go (the shapes of blind extraction in an application's
// statements), ddl.go (statement kind, DDL verb and object type).
//
// Always-true conditions, folded as MariaDB and MySQL evaluate them:
// taut.go (the truth of a condition over all rows, three-valued),
// fold.go (constants: literals, operators, IN, CASE), foldfunc.go (CAST and
// the builtins of constants), foldcompare.go (conversions and comparisons
// as the server makes them), foldmatch.go (LIKE and REGEXP), tautself.go
// (an expression compared with itself, what leaves a value as it is),
// tautwrap.go (wrappers that keep a value, operands that absorb, rows in
// order, CONCAT templates under LIKE, JSON constructors, bounds),
// tautnull.go (NULL tests of columns decided by cases) and tautor.go (an
// OR with an arm true for every row, complements, optional filters).
//
// writes.go (the rows an UPDATE, DELETE, REPLACE or ON DUPLICATE KEY
// UPDATE writes: the whole table or not), effects.go (what a statement
// makes the server do, in the effect names engine/pgsql uses too),
// currentdb.go (what it does when the session's current database is one
// of the server's own, and the names a GRANT matches as patterns),
// grantee.go (a GRANT that creates its grantee), params.go (bare
// parameters, decided by the values bound at execution),
// sqlprepare.go (what a text does to SQL-level prepared statements by
// name: PREPARE, EXECUTE, DEALLOCATE, CALL, which relay/mysql follows),
// shape.go (the shapes of bulk INSERTs and why a shape hit is sound:
// Dialect is an engine.Shaper) and dialect.go (the Dialect methods and the
// default policy).
//
// What neither TiDB's parser nor mariadb.go reads (system-versioned
// tables, HANDLER, XA; INSTALL PLUGIN, CREATE FUNCTION ... SONAME, CHANGE
// MASTER, CREATE SERVER) is a parse error and gets the policy's
// on_parse_error, unless what is certain of it from its words
// (unparsed.go) matches a deny rule: docs/policy.md lists it, measured on
// MariaDB's own test suite (suite_test.go).
//
// It imports the engine core and TiDB's parser; it never imports a
// protocol's bytes or session (wire, relay), the daemon, engine/pgsql or
// pg_query.
package mysql
