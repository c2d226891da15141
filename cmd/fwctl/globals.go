package main

// Global flags: --control-socket and --json may stand anywhere on the
// command line, before or after the command and its verbs (fwctl --json
// status, fwctl status --json, fwctl learn status --json). run takes them
// out before the command parses its own flags; the control socket then
// resolves flag > SQLFW_CONTROL_SOCKET > the configuration file's
// control_socket > the default.

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/control"
)

// envControlSocket names the control socket when no --control-socket is
// given.
const envControlSocket = control.EnvSocket

// defaultConfigFile is where fwctl reads control_socket when neither the
// flag nor the environment names the socket (the units' --config).
var defaultConfigFile = "/etc/sqlfw/sqlfwd.yaml"

// globals are the global flags of one invocation.
type globals struct {
	socket    string // --control-socket, "" when not given
	json      bool   // --json
	jsonGiven bool
}

// jsonCommands are the commands that print JSON with --json; elsewhere the
// flag is an error rather than ignored.
var jsonCommands = map[string]bool{
	"stats": true, "status": true, "connections": true, "check": true,
	"policy": true, "learn": true, "config": true,
}

// extractGlobals removes the global flags from args (up to a "--") and
// returns what is left. A flag's value must follow it: --control-socket
// PATH or --control-socket=PATH.
func extractGlobals(args []string) ([]string, globals, error) {
	var g globals
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "---") {
			rest = append(rest, a)
			continue
		}
		switch name {
		case "control-socket":
			if !hasVal {
				if i+1 >= len(args) {
					return nil, g, errors.New("flag needs an argument: --control-socket")
				}
				i++
				val = args[i]
			}
			if val == "" {
				return nil, g, errors.New("--control-socket: empty path")
			}
			g.socket = val
		case "json":
			switch {
			case !hasVal || val == "true" || val == "1":
				g.json = true
			case val == "false" || val == "0":
				g.json = false
			default:
				return nil, g, fmt.Errorf("--json=%s: want true or false", val)
			}
			g.jsonGiven = true
		default:
			rest = append(rest, a)
		}
	}
	return rest, g, nil
}

// cur is the invocation's global flags, set by run before a command runs.
var cur globals

// controlSocket resolves the control socket: --control-socket, else
// $SQLFW_CONTROL_SOCKET, else control_socket in /etc/sqlfw/sqlfwd.yaml
// (when the file is there and says one), else /run/sqlfw/control.sock.
func controlSocket() string {
	return control.ResolveSocket(cur.socket, func() string { return configControlSocket(defaultConfigFile) })
}

// configControlSocket is the control_socket a configuration file names;
// "" when the file is absent, unreadable, broken or names none ("none" too:
// a daemon with no socket is not reached at the default either, and
// fwctl's error then says where it looked).
func configControlSocket(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var c struct {
		ControlSocket string `yaml:"control_socket"`
	}
	if yaml.Unmarshal(b, &c) != nil || c.ControlSocket == "none" {
		return ""
	}
	return c.ControlSocket
}
