package main

// How fwctl's offline commands (check, policy, learn offline) choose the
// protocol whose dialect reads statements and checks a policy: all from
// the protocol table (package protocol, filled by protocol/builtin), none
// named here but the server log formats fwctl reads, each its server's.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

// logFormats are the server logs fwctl reads (checklog.go, mylog.go): the
// flag and the protocol whose server writes it, which it implies.
var logFormats = []struct{ flag, protocol string }{
	{"pg-log", "postgres"},
	{"mysql-log", "mysql"},
}

// protocolNames are the table's names, in its order.
func protocolNames() []string {
	var out []string
	for _, p := range protocol.All() {
		out = append(out, p.Name)
	}
	return out
}

// lexFlag is the fwctl check flag of a server setting the session's
// lexing state is made of (protocol.Protocol.LexSettings).
func lexFlag(setting string) string { return strings.ReplaceAll(setting, "_", "-") }

// lexFlags are every protocol's lexing settings as flags, once each.
func lexFlags() []string {
	var out []string
	for _, p := range protocol.All() {
		for _, s := range p.LexSettings {
			if f := lexFlag(s); !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// sessionLex is the lexing state the flags set give for p; a flag of
// another protocol's setting is an error that says whose it is.
func sessionLex(p *protocol.Protocol, fs *flag.FlagSet, set map[string]bool) (engine.LexState, error) {
	given := map[string]string{}
	for _, f := range lexFlags() {
		if !set[f] {
			continue
		}
		setting := strings.ReplaceAll(f, "-", "_")
		if !slices.Contains(p.LexSettings, setting) {
			return engine.LexState{}, fmt.Errorf("--%s is not a setting of protocol %s (%s)", f, p.Name, settingOwners(setting))
		}
		given[setting] = fs.Lookup(f).Value.String()
	}
	return p.Lex(given)
}

// settingOwners says which protocols have a lexing setting.
func settingOwners(setting string) string {
	var own []string
	for _, p := range protocol.All() {
		if slices.Contains(p.LexSettings, setting) {
			own = append(own, "--protocol "+p.Name)
		}
	}
	return "it is for " + strings.Join(own, " or ")
}

// chooseProtocol is the protocol of an offline command: --protocol when
// given; else the one the log read implies; else, with a configuration,
// that of its databases whose policy is the policy file; else, with a
// policy file, the one protocol that accepts it (a policy every protocol
// accepts, or none, leaves the choice to the table's first). A log of one
// protocol read as another's is an error, and so is a policy the
// configuration gives databases of two protocols.
func chooseProtocol(name string, set map[string]bool, policyPath, configPath string) (*protocol.Protocol, error) {
	for _, lf := range logFormats {
		if !set[lf.flag] {
			continue
		}
		if set["protocol"] && name != lf.protocol {
			return nil, fmt.Errorf("--%s is a log of protocol %s (--protocol %s)", lf.flag, lf.protocol, lf.protocol)
		}
		name = lf.protocol
	}
	if name != "" {
		return protocol.Named(name)
	}
	if configPath != "" {
		if policyPath == "" {
			return nil, errors.New("--config names the protocol of the databases whose policy --policy is: give --policy too")
		}
		ps, err := configProtocols(configPath, policyPath)
		if err != nil {
			return nil, err
		}
		if len(ps) > 1 {
			return nil, fmt.Errorf("%s: databases of %s and %s use %s: give --protocol", configPath, ps[0].Name, ps[1].Name, policyPath)
		}
		return ps[0], nil
	}
	all := protocol.All()
	if len(all) == 0 {
		return nil, protocol.ErrNoneRegistered
	}
	if policyPath != "" {
		if p, err := readPolicy(policyPath); err == nil {
			if ok := acceptingProtocols(p); len(ok) == 1 {
				return ok[0], nil
			}
		}
	}
	return all[0], nil
}

// readPolicy parses a policy file.
func readPolicy(path string) (*engine.Policy, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return engine.ParsePolicy(text)
}

// acceptingProtocols are the protocols whose dialect accepts p.
func acceptingProtocols(p *engine.Policy) []*protocol.Protocol {
	var ok []*protocol.Protocol
	for _, proto := range protocol.All() {
		if p.Check(proto.Dialect) == nil {
			ok = append(ok, proto)
		}
	}
	return ok
}

// configProtocols are the protocols of the databases in the configuration
// at configPath whose policy is the file at policyPath.
func configProtocols(configPath, policyPath string) ([]*protocol.Protocol, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	want, err := os.Stat(policyPath)
	if err != nil {
		return nil, err
	}
	var out []*protocol.Protocol
	for _, db := range cfg.Databases {
		if db.Policy == "" {
			continue
		}
		path := db.Policy
		if !filepath.IsAbs(path) {
			// a relative path is the daemon's working directory's; take
			// the configuration's directory too
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join(filepath.Dir(configPath), path)
			}
		}
		fi, err := os.Stat(path)
		if err != nil || !os.SameFile(fi, want) {
			continue
		}
		p, err := protocol.Named(db.Protocol)
		if err != nil {
			return nil, fmt.Errorf("%s: database %s: %w", configPath, db.Name, err)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(configPath + ": no database's policy is " + policyPath)
	}
	return out, nil
}
