package pgsql

// Startup parameters. A PostgreSQL StartupMessage may set any run-time
// parameter, directly (a key other than user, database, options,
// replication) or in `options` ("-c log_statement=none --search-path=x");
// the server applies them before the first statement, so they are judged
// like the SET statements they amount to. Example: options
// "-c session_preload_libraries=/tmp/x.so" is judged as
// SET "session_preload_libraries" TO '/tmp/x.so' (no-code-loading).

import (
	"strings"
)

// startupNotSettings are StartupMessage keys that are not run-time
// parameters, or that the session layer tracks itself (client_encoding
// and standard_conforming_strings: daemon/lexstate.go).
var startupNotSettings = map[string]bool{
	"user": true, "database": true, "options": true, "replication": true,
	"application_name": true, "client_encoding": true, "standard_conforming_strings": true,
}

// StartupSQL returns the SET statements the run-time parameters of a
// StartupMessage (name, value pairs as sent) amount to. An `options` value
// the server would not read as -c/-- settings is denied: what it sets
// cannot be told.
func (pgDialect) StartupSQL(params [][2]string) (sqls []string, ruleID, reason string) {
	for _, p := range params {
		if strings.HasPrefix(p[0], "_pq_.") {
			// A protocol extension, never a setting: the server lists the
			// ones it does not know in NegotiateProtocolVersion, and the
			// relay ends a session whose server accepts one
			// (relay/pg/protover.go).
			continue
		}
		name := strings.ToLower(p[0])
		if name == "options" {
			opts, ok := startupOptions(p[1])
			if !ok {
				return nil, startupRuleID, startupOptionsReason
			}
			for _, o := range opts {
				if !startupNotSettings[o[0]] {
					sqls = append(sqls, setStatement(o[0], o[1]))
				}
			}
			continue
		}
		if !startupNotSettings[name] {
			sqls = append(sqls, setStatement(name, p[1]))
		}
	}
	return sqls, "", ""
}

const (
	startupRuleID        = "startup-options"
	startupOptionsReason = "the startup packet's options are not -c name=value settings the firewall can read"
)

// setStatement spells a parameter setting as the SET statement it is.
func setStatement(name, value string) string {
	return `SET "` + strings.ReplaceAll(name, `"`, `""`) + `" TO '` + strings.ReplaceAll(value, `'`, `''`) + `'`
}

// startupOptions reads the options value as the server does
// (pg_split_opts: words split at unescaped white space, backslash escapes
// the next byte), then its -c name=value / -cname=value / --name=value
// switches (ParseLongOption: '-' in a name is '_'). ok is false for
// anything else, which the server would reject or read as another switch.
func startupOptions(s string) ([][2]string, bool) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			inWord = true
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	var out [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var kv string
		switch {
		case w == "-c":
			if i+1 >= len(words) {
				return nil, false
			}
			i++
			kv = words[i]
		case strings.HasPrefix(w, "-c"):
			kv = w[2:]
		case strings.HasPrefix(w, "--"):
			kv = w[2:]
		default:
			return nil, false
		}
		name, value, found := strings.Cut(kv, "=")
		if !found || name == "" {
			return nil, false
		}
		out = append(out, [2]string{strings.ToLower(strings.ReplaceAll(name, "-", "_")), value})
	}
	return out, true
}
