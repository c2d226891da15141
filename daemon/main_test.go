package daemon

import (
	"os"
	"testing"

	"github.com/sqlfw/sqlfw/protocol/builtin"
)

// The daemon's tests serve real sessions: the protocols built in, as
// cmd/sqlfwd registers them.
func TestMain(m *testing.M) {
	builtin.Register()
	os.Exit(m.Run())
}
