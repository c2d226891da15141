package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine/enginetest"
)

// TestParseBound runs the engine's parse-bound test (enginetest.ParseBound)
// on this dialect's parser.
func TestParseBound(t *testing.T) { enginetest.ParseBound(t, Dialect, benchSession) }
