package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

const policyUsage = `usage: fwctl policy validate [--protocol NAME | --config FILE] [--json] POLICY
                            check a policy: errors (exit 2), warnings (exit 0)
       fwctl policy default [--protocol NAME]
                            print a protocol's embedded default policy

The protocol whose dialect checks the policy is --protocol's; else that of
the databases whose policy the configuration --config names is POLICY; else
every protocol sqlfwd speaks (postgres, mysql) is tried, and the policy is
valid when one of them accepts it: the output says which. policy default
prints PostgreSQL's unless --protocol names another.

--json prints {"file", "valid", "error", "warnings", "protocols"} instead.`

func printPolicyUsage(w io.Writer) { fmt.Fprintln(w, policyUsage) }

// policyCmd implements `fwctl policy validate|default`.
func policyCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printPolicyUsage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("fwctl policy "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printPolicyUsage(stderr) }
	protoName := fs.String("protocol", "", "the protocol whose dialect checks the policy ("+protocol.Names()+")")
	configPath := fs.String("config", "", "validate: a sqlfwd configuration `file`: the protocol of the databases whose policy this is")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	switch args[0] {
	case "validate":
		if len(pos) != 1 || (*protoName != "" && *configPath != "") {
			printPolicyUsage(stderr)
			return 2
		}
		return policyValidate(pos[0], *protoName, *configPath, stdout, stderr)
	case "default":
		if len(pos) != 0 || *configPath != "" {
			printPolicyUsage(stderr)
			return 2
		}
		if cur.json {
			fmt.Fprintln(stderr, "fwctl: policy default prints YAML; --json is for policy validate")
			return 2
		}
		p, err := chooseProtocol(*protoName, nil, "", "")
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		stdout.Write(p.DefaultPolicyYAML())
		return 0
	}
	printPolicyUsage(stderr)
	return 2
}

// policyValidate checks the policy at path for the protocols asked for (one
// named, those of the configuration's databases that use it, or every
// protocol: then one accepting it is enough).
func policyValidate(path, protoName, configPath string, stdout, stderr io.Writer) int {
	text, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	var protos []*protocol.Protocol
	anyOne := false
	switch {
	case protoName != "":
		p, err := protocol.Named(protoName)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		protos = []*protocol.Protocol{p}
	case configPath != "":
		if protos, err = configProtocols(configPath, path); err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
	default:
		protos, anyOne = protocol.All(), true
	}
	if len(protos) == 0 {
		fmt.Fprintf(stderr, "fwctl: %v\n", protocol.ErrNoneRegistered)
		return 2
	}
	p, err := engine.ParsePolicy(text)
	var valid []string
	var errs []string
	if err == nil {
		for _, proto := range protos {
			if cerr := p.Check(proto.Dialect); cerr != nil {
				errs = append(errs, proto.Name+": "+cerr.Error())
			} else {
				valid = append(valid, proto.Name)
			}
		}
		switch {
		case len(valid) == 0 && len(errs) == 1:
			err = fmt.Errorf("%s", strings.TrimPrefix(errs[0], protos[0].Name+": "))
		case len(valid) == 0:
			err = fmt.Errorf("no protocol accepts it: %s", strings.Join(errs, "; "))
		case !anyOne && len(errs) > 0:
			err = fmt.Errorf("%s", strings.Join(errs, "; "))
		}
	}
	if cur.json {
		return writeValidJSON(stdout, path, err, p, valid)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 2
	}
	for _, w := range p.Warnings() {
		fmt.Fprintf(stdout, "%s: warning: %s\n", path, w)
	}
	fmt.Fprintf(stdout, "%s: valid for %s (%d warnings)\n", path, strings.Join(valid, " and "), len(p.Warnings()))
	if anyOne {
		for _, e := range errs {
			fmt.Fprintf(stdout, "%s: not for %s\n", path, e)
		}
	}
	return 0
}

// validJSON is what fwctl policy validate --json and fwctl config validate
// --json print.
type validJSON struct {
	File      string   `json:"file"`
	Valid     bool     `json:"valid"`
	Error     string   `json:"error,omitempty"`
	Warnings  []string `json:"warnings"`
	Protocols []string `json:"protocols,omitempty"`
	Databases *int     `json:"databases,omitempty"`
}

// writeValidJSON prints the result of validating file for protocols; exit
// 2 when err.
func writeValidJSON(w io.Writer, file string, err error, p *engine.Policy, protocols []string) int {
	out := validJSON{File: file, Valid: err == nil, Warnings: []string{}, Protocols: protocols}
	if err != nil {
		out.Error = err.Error()
		out.Protocols = nil
	} else if p != nil {
		out.Warnings = append(out.Warnings, p.Warnings()...)
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "%s\n", b)
	if err != nil {
		return 2
	}
	return 0
}
