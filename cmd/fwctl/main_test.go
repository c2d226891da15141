package main

import (
	"os"
	"testing"

	"github.com/sqlfw/sqlfw/protocol/builtin"
)

// Tests call the commands below run, which registers the protocol table.
func TestMain(m *testing.M) {
	builtin.Register()
	os.Exit(m.Run())
}
