package builtin

import (
	"bytes"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

// Every built-in protocol's entry holds together: its dialect accepts its
// default policy, the embedded text is that policy, and its lexing
// settings all read.
func TestBuiltinEntries(t *testing.T) {
	Register()
	Register() // a second call does nothing
	if got := protocol.Names(); got != "postgres or mysql" {
		t.Fatalf("Names: %q", got)
	}
	for _, p := range protocol.All() {
		t.Run(p.Name, func(t *testing.T) {
			if err := p.DefaultPolicy().Check(p.Dialect); err != nil {
				t.Errorf("its dialect refuses its default policy: %v", err)
			}
			text := p.DefaultPolicyYAML()
			parsed, err := engine.ParsePolicy(text)
			if err != nil {
				t.Fatalf("default policy text: %v", err)
			}
			if a, b := parsed.Len(), p.DefaultPolicy().Len(); a != b || a == 0 {
				t.Errorf("the text has %d rules, the policy %d", a, b)
			}
			text[0] ^= 0xff
			if !bytes.Equal(p.DefaultPolicyYAML()[1:], text[1:]) || p.DefaultPolicyYAML()[0] == text[0] {
				t.Error("DefaultPolicyYAML hands out the embedded bytes themselves")
			}
			set := map[string]string{}
			for _, s := range p.LexSettings {
				set[s] = map[string]string{"standard_conforming_strings": "off", "client_encoding": "latin1", "sql_mode": "ANSI_QUOTES"}[s]
			}
			lex, err := p.Lex(set)
			if err != nil || lex == (engine.LexState{}) {
				t.Errorf("Lex(%v) = %+v, %v: want a state from every setting", set, lex, err)
			}
			if _, err := p.Lex(map[string]string{"search_path": "x"}); err == nil {
				t.Error("Lex takes a setting it does not lex by")
			}
		})
	}
	my, _ := protocol.Named("mysql")
	for _, c := range []string{"COM_REGISTER_SLAVE", "com_binlog_dump", "COM_BINLOG_DUMP_GTID"} {
		if _, ok := my.Command(c); !ok {
			t.Errorf("mysql does not allow %s", c)
		}
	}
	if _, ok := my.Command("COM_SHUTDOWN"); ok {
		t.Error("mysql allows COM_SHUTDOWN")
	}
	if pg, _ := protocol.Named("postgres"); len(pg.AllowableCommands) != 0 {
		t.Errorf("postgres allows %v", pg.AllowableCommands)
	}
}
