package pgsql

import (
	"fmt"
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// parseSessionSpec applies a corpus line's session column ("" for the
// default session) to s. Keys: user=NAME; scs=on|off
// (standard_conforming_strings); encoding=NAME (client_encoding, as the
// server reports it); unconfirmed=1 (sent before the server confirmed the
// settings).
func parseSessionSpec(spec string, s *engine.Session) error {
	if spec == "" {
		return nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "user":
			s.User = v
		case "scs":
			switch v {
			case "on":
				s.Lex.NonStandardStrings = false
			case "off":
				s.Lex.NonStandardStrings = true
			default:
				return fmt.Errorf("scs=%q: want on or off", v)
			}
		case "encoding":
			s.Lex.ClientEncoding = v
		case "unconfirmed":
			s.Lex.Unconfirmed = v == "1" || v == "true"
		default:
			return fmt.Errorf("unknown session key %q", k)
		}
	}
	return nil
}
