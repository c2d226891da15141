package engine

import (
	"fmt"
	"strings"
)

// parseSessionSpec applies a corpus line's session column ("" for the
// default session) to s.
func parseSessionSpec(spec string, s *Session) error {
	if spec == "" {
		return nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "user":
			s.User = v
		default:
			return fmt.Errorf("unknown session key %q", k)
		}
	}
	return nil
}
