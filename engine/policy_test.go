package engine

import (
	"strings"
	"testing"
)

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", "on_parse_eror: deny\n", []string{"line 1", "on_parse_eror"}},
		{"unknown rule key", "rules:\n  - id: a\n    action: deny\n    matches: {}\n", []string{"line 4", "matches"}},
		{"unknown match key", "rules:\n  - id: a\n    action: deny\n    match: {kinds: [update]}\n", []string{"line 4", "kinds"}},
		{"bad action", "rules:\n  - id: a\n    action: block\n", []string{"line 3 column 13", "block"}},
		{"bad on_parse_error", "on_parse_error: maybe\n", []string{"line 1 column 17", "maybe"}},
		{"bad kind", "rules:\n  - {id: a, action: deny, match: {kind: [select, upsert]}}\n", []string{"line 2", "upsert"}},
		{"bad probe", "rules:\n  - {id: a, action: deny, match: {probes: [catalog, blind]}}\n", []string{"line 2", "blind", "server_info"}},
		{"bad copy", "rules:\n  - {id: a, action: deny, match: {copy: [stdin]}}\n", []string{"line 2", "stdin"}},
		{"bad access", "rules:\n  - {id: a, action: deny, match: {tables: [t], access: modify}}\n", []string{"line 2", "modify"}},
		{"access without tables", "rules:\n  - {id: a, action: deny, match: {access: read}}\n", []string{"line 2 column 5", "access needs tables"}},
		{"missing id", "rules:\n  - {action: deny}\n", []string{"line 2", "missing id"}},
		{"missing action", "rules:\n  - id: a\n", []string{"line 2", "missing action"}},
		{"duplicate id", "rules:\n  - {id: a, action: deny}\n  - {id: a, action: allow}\n", []string{"line 3", "duplicate id"}},
		{"without_where on select", "rules:\n  - {id: a, action: deny, match: {kind: [select], without_where: true}}\n", []string{"without_where"}},
		{"bad version", "version: 2\n", []string{"version 2"}},
		{"empty", "", []string{"empty"}},
		{"not yaml", "rules: [\n", []string{"line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("ParsePolicy(%q): got no error, want one containing %q", tt.yaml, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParsePolicy(%q)\n got: %v\nwant it to contain %q", tt.yaml, err, w)
				}
			}
		})
	}
}

func TestParsePolicyDefaults(t *testing.T) {
	p, err := ParsePolicy([]byte("rules: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.onParseError != ActionDeny {
		t.Errorf("on_parse_error default: got %v, want deny", p.onParseError)
	}
}

func TestParsePolicyNewKeyErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad mode", "mode: block\n", []string{"line 1 column 7", "block"}},
		{"bad rule mode", "rules:\n  - {id: a, action: deny, mode: loud}\n", []string{"line 2", "loud"}},
		{"bad verb", "rules:\n  - {id: a, action: deny, match: {verbs: [smash]}}\n", []string{"line 2", "smash"}},
		{"bad object", "rules:\n  - {id: a, action: deny, match: {objects: [tabel]}}\n", []string{"line 2", "tabel"}},
		{"bad role attribute", "rules:\n  - {id: a, action: deny, match: {role_attributes: [god]}}\n", []string{"god"}},
		{"bad day", "rules:\n  - {id: a, action: deny, time: {days: [funday]}}\n", []string{"funday"}},
		{"bad hours", "rules:\n  - {id: a, action: deny, time: {hours: [\"9-5\"]}}\n", []string{"line 2", "HH:MM"}},
		{"bad timezone", "rules:\n  - {id: a, action: deny, time: {timezone: Mars/Olympus}}\n", []string{"Mars/Olympus"}},
		{"bad cidr", "rules:\n  - {id: a, action: deny, client_addrs: [10.0.0.0/99]}\n", []string{"10.0.0.0/99"}},
		{"bad fingerprint", "rules:\n  - {id: a, action: allow, match: {fingerprints: [xyz]}}\n", []string{"line 2", "xyz"}},
		{"bad column", "rules:\n  - {id: a, action: deny, match: {columns: [password]}}\n", []string{"table.column"}},
		{"unknown limit", "rules:\n  - {id: a, action: deny, match: {limits: {rows: 5}}}\n", []string{"line 2", "rows"}},
		{"empty limits", "rules:\n  - {id: a, action: deny, match: {limits: {}}}\n", []string{"no limit"}},
		{"rate without rate", "rules:\n  - {id: a, action: deny, match: {rate: {burst: 5}}}\n", []string{"per_second"}},
		{"rate bad key", "rules:\n  - {id: a, action: deny, match: {rate: {per_second: 1, per: [ip]}}}\n", []string{"ip"}},
		{"unknown scope key", "rules:\n  - {id: a, action: deny, user: [x]}\n", []string{"line 2", "user"}},
		{"star alone", "rules:\n  - {id: a, action: deny, match: {tables: [\"*\"]}}\n", []string{"leave the key out"}},
		{"bad deny_and_close spelling", "rules:\n  - {id: a, action: deny-and-close}\n", []string{"deny_and_close"}},
		{"bad effect", "rules:\n  - id: a\n    action: deny\n    match:\n      effects: [reads_server_file, runs_shell]\n", []string{"line 5 column 36", "runs_shell", "runs_program"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.yaml))
			if err == nil {
				err = p.Check(testDialect{}) // object types are the dialect's
			}
			if err == nil {
				t.Fatalf("ParsePolicy(%q): no error, want one containing %q", tt.yaml, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParsePolicy(%q)\n got: %v\nwant it to contain %q", tt.yaml, err, w)
				}
			}
		})
	}
}

func TestPolicyWarnings(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings, one per warning; none when empty
	}{
		{"catch-all first", "rules:\n  - {id: all, action: deny, match: {}}\n  - {id: x, action: allow, match: {kind: [select]}}\n",
			[]string{`line 3: rule "x" conflicts`}},
		{"kind subset", "rules:\n  - {id: ddl, action: deny, match: {kind: [ddl, dcl]}}\n  - {id: d2, action: deny, match: {kind: [ddl]}}\n",
			[]string{`rule "d2" is unreachable`}},
		{"duplicate conditions", "rules:\n  - {id: a, action: deny, users: [x], match: {functions: [f]}}\n  - {id: b, action: log, users: [x], match: {functions: [f]}}\n",
			[]string{`rule "b" conflicts`}},
		{"scoped catch-all does not shadow", "rules:\n  - {id: a, action: allow, users: [admin], match: {}}\n  - {id: b, action: deny, match: {kind: [ddl]}}\n", nil},
		{"narrower first is fine", "rules:\n  - {id: a, action: deny, match: {kind: [ddl]}}\n  - {id: b, action: deny, match: {kind: [ddl, dcl]}}\n", nil},
		{"allow kind does not cover a deny of the kind", "rules:\n  - {id: a, action: allow, match: {kind: [select]}}\n  - {id: b, action: deny, match: {kind: [select]}}\n", nil},
		{"allow kind covers a later allow", "rules:\n  - {id: a, action: allow, match: {kind: [select, insert]}}\n  - {id: b, action: allow, match: {kind: [select]}}\n", []string{`rule "b" is unreachable`}},
		{"rate rule never shadows", "rules:\n  - {id: a, action: deny, match: {rate: {per_second: 1}}}\n  - {id: b, action: deny, match: {}}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			w := p.Warnings()
			if len(w) != len(tt.want) {
				t.Fatalf("policy:\n%s\n got warnings: %q\nwant %d", tt.yaml, w, len(tt.want))
			}
			for i := range w {
				if !strings.Contains(w[i], tt.want[i]) {
					t.Errorf("warning %q, want it to contain %q", w[i], tt.want[i])
				}
			}
		})
	}
}

func TestLimitKeyValidation(t *testing.T) {
	for _, y := range []string{
		"rules:\n  - {id: a, action: deny, match: {limits: {bool_terms: -1}}}\n",
		"rules:\n  - {id: a, action: deny, match: {limits: {series_rows: -5}}}\n",
		"rules:\n  - {id: a, action: deny, match: {limits: {string_bytes: -5}}}\n",
		"rules:\n  - {id: a, action: deny, match: {limits: {series_rows: lots}}}\n",
	} {
		if _, err := ParsePolicy([]byte(y)); err == nil {
			t.Errorf("ParsePolicy(%q): no error", y)
		}
	}
	p, err := ParsePolicy([]byte("rules:\n  - {id: a, action: deny, match: {limits: {series_rows: 1000000000000, string_bytes: 1, bool_terms: 1}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.rules[0].limits; l.seriesRows != 1000000000000 || l.stringBytes != 1 || l.boolTerms != 1 {
		t.Errorf("limits = %+v", l)
	}
}
