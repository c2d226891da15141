// Package pgsql is PostgreSQL's dialect for the engine: it turns SQL text,
// as a PostgreSQL server reads it, into the engine's facts, with pg_query
// (PostgreSQL's own parser). Dialect is the value engine.New takes;
// DefaultPolicy is the policy sqlfw uses for PostgreSQL when none is
// configured (default_policy.yaml).
//
// The parts, in the order a text meets them: lexstate.go (the session's
// client_encoding and standard_conforming_strings: the text the server
// lexes; CanonicalEncoding and ClientTextToUTF8 for tools and tests), lex.go
// (the prescan: measures before parsing), facts.go with walk_generated.go
// (the walker over the whole parse tree; walkgen.go writes the generated
// walk), ddl.go (DDL verb and object type), the always-true conditions
// folded as the server evaluates them: fold.go (constants, three-valued,
// with foldcompare.go's operators and casts, foldmatch.go's LIKE and
// SIMILAR TO, foldfunc.go's builtins), taut.go (a condition's truth over
// all rows, OR tautologies), tautself.go (x = x, complementary arms, a
// table looked up in itself) and filters.go (whether a write's WHERE tells
// its table's rows apart), effects.go and builtin_names.go
// (what a statement makes the server do), body.go (DO blocks, function
// bodies and SQL in strings), limits.go (boolean terms, generated rows,
// built strings), sqlprepare.go (PREPARE, EXECUTE, DECLARE, FETCH ...:
// engine.SQLOp), shape.go (the shapes of bulk INSERTs and why a shape hit is
// sound), startup.go (StartupMessage parameters as SET statements) and
// dialect.go (the Dialect methods and the fast-path function OIDs).
//
// It imports the engine core and pg_query; it never imports a protocol's
// bytes or session (wire, relay) or the daemon.
package pgsql
