package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sqlfw/sqlfw/audit"
)

// auditCmd: fwctl audit verify [--anchors LOG] [--key-file K] FILE — check
// an audit trail's chain, and against the chain heads the daemon logged.
// Exit 0 intact, 1 not what the daemon wrote, 2 error.
func auditCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: fwctl audit verify [--anchors LOG|-] [--key-file FILE] AUDIT-FILE")
		return 2
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	anchors := fs.String("anchors", "", "check against the chain heads in the daemon's `log` (a file, or - for standard input, e.g. journalctl -u sqlfwd -o cat)")
	keyFile := fs.String("key-file", "", "the audit key `file` the daemon chains with (audit.key_file)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: fwctl audit verify [--anchors LOG|-] [--key-file FILE] AUDIT-FILE")
		return 2
	}
	path := pos[0]
	var opt audit.VerifyOptions
	if *keyFile != "" {
		k, err := audit.ReadKey(*keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		opt.Key = k
	}
	if *anchors != "" {
		var r io.Reader = os.Stdin
		if *anchors != "-" {
			f, err := os.Open(*anchors)
			if err != nil {
				fmt.Fprintf(stderr, "fwctl: %v\n", err)
				return 2
			}
			defer f.Close()
			r = f
		}
		a, err := audit.ParseAnchors(r)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: anchors: %v\n", err)
			return 2
		}
		if len(a) == 0 {
			fmt.Fprintf(stderr, "fwctl: anchors: no \"audit chain head\" line in %s\n", *anchors)
			return 2
		}
		opt.Anchors = a
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	defer f.Close()
	res, err := audit.Verify(f, opt)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: audit %s: %v (after %d intact records)\n", path, err, res.Records)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d records (last seq %d), chain intact (%s); head %s\n", path, res.Records, res.LastSeq, res.Chain, res.Head)
	if res.Repairs > 0 {
		fmt.Fprintf(stdout, "  %d repair event(s): a torn tail was cut after a crash (see their extra)\n", res.Repairs)
	}
	if opt.Key != nil && res.Unkeyed > 0 {
		fmt.Fprintf(stdout, "  %d records before the first keyed start are chained without the key\n", res.Unkeyed)
	}
	if len(opt.Anchors) > 0 {
		fmt.Fprintf(stdout, "  %d anchors matched; %d records after the last anchor are covered by the chain alone\n", res.AnchorsChecked, res.AfterLastAnchor)
	}
	return 0
}
