package protocol

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// entry is a complete entry called name; its dialect is never asked
// anything here.
func entry(name string) Protocol {
	return Protocol{Name: name, Title: name, DefaultPort: 1, NewRelay: func() relay.Protocol { return nil },
		Dialect: nilDialect{}, DefaultPolicy: func() *engine.Policy { return nil }, DefaultPolicyYAML: func() []byte { return nil },
		MaxMessageBytes: 1, BufferBytes: 1, Discover: discover.Protocol(name),
		AllowableCommands: []string{"COM_" + strings.ToUpper(name)},
		Lex:               func(map[string]string) (engine.LexState, error) { return engine.LexState{}, nil }}
}

type nilDialect struct{ engine.Dialect }

// The registry: empty it says how to fill it; entries come back in order
// by name and by discovery name; a second entry of a name, or one lacking
// a field, is refused at Register.
func TestRegistry(t *testing.T) {
	if _, err := Named("a"); err != ErrNoneRegistered {
		t.Fatalf("Named before Register: %v, want ErrNoneRegistered", err)
	}
	if got := Names(); got != "none registered" {
		t.Errorf("Names before Register: %q", got)
	}
	Register(entry("a"))
	Register(entry("b"), entry("c"))
	if got := Names(); got != "a, b or c" {
		t.Errorf("Names: %q, want \"a, b or c\"", got)
	}
	for i, p := range All() {
		if want := string(rune('a' + i)); p.Name != want {
			t.Errorf("All()[%d] = %s, want %s", i, p.Name, want)
		}
	}
	if p, err := Named("b"); err != nil || p.Name != "b" {
		t.Errorf("Named(b): %v, %v", p, err)
	}
	if _, err := Named("oracle"); err == nil || !strings.Contains(err.Error(), `"oracle" is not supported (a, b or c)`) {
		t.Errorf("Named(oracle): %v", err)
	}
	if p, ok := Discovered("c"); !ok || p.Name != "c" {
		t.Errorf("Discovered(c): %v, %v", p, ok)
	}
	if _, ok := Discovered("x"); ok {
		t.Error("Discovered(x) found one")
	}
	a, _ := Named("a")
	if c, ok := a.Command("com_a"); !ok || c != "COM_A" {
		t.Errorf("Command(com_a) = %q, %v", c, ok)
	}
	if _, ok := a.Command("COM_B"); ok {
		t.Error("a allows b's command")
	}
	for _, tc := range []struct {
		name string
		p    Protocol
		want string
	}{
		{"twice", entry("a"), `"a" registered twice`},
		{"no dialect", func() Protocol { p := entry("d"); p.Dialect = nil; return p }(), "Dialect missing"},
		{"no name", func() Protocol { p := entry(""); p.Title, p.Discover = "e", "e"; return p }(), "Name missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("Register: panic %v, want one saying %q", r, tc.want)
				}
			}()
			Register(tc.p)
		})
	}
	if n := len(All()); n != 3 {
		t.Errorf("%d registered after refused entries, want 3", n)
	}
}
