package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// Protocol is one protocol's entry in the table.
type Protocol struct {
	// Name is the configuration's protocol: value and fwctl's --protocol.
	Name string
	// Title is how messages name it ("PostgreSQL", "MySQL/MariaDB").
	Title string
	// DefaultPort is where its servers listen unless told otherwise.
	DefaultPort uint16
	// NewRelay makes the protocol's relay; a daemon makes one and serves
	// every database of the protocol with it.
	NewRelay func() relay.Protocol
	// Dialect reads the protocol's SQL for the engine.
	Dialect engine.Dialect
	// DefaultPolicy is the embedded policy of a database that names none;
	// DefaultPolicyYAML its text (fwctl policy default).
	DefaultPolicy     func() *engine.Policy
	DefaultPolicyYAML func() []byte
	// MaxMessageBytes and BufferBytes are a database's max_message_bytes
	// and buffer_bytes when its configuration gives none: the largest
	// client message held whole to be judged, and the relay buffer per
	// direction.
	MaxMessageBytes int
	BufferBytes     int
	// AllowableCommands are the protocol commands a database's
	// allow_commands may name (refused unless allowed), in the protocol's
	// own spelling; Command matches a name against them.
	AllowableCommands []string
	// ALPN are the protocol names the client leg's TLS offers, nil for
	// none (a server that lists protocols refuses a client offering
	// others).
	ALPN []string
	// Discover is what discovery calls the protocol's servers.
	Discover discover.Protocol
	// CatalogDriver is the database/sql driver of the catalog connection
	// (daemon/catalog.go); "" for none.
	CatalogDriver string
	// LexSettings are the server settings the session's lexing state is
	// made of, in the server's own names (standard_conforming_strings,
	// sql_mode); fwctl check takes each as a flag. Lex turns the values
	// given (by those names, client_encoding included when given) into the
	// engine's LexState.
	LexSettings []string
	Lex         func(settings map[string]string) (engine.LexState, error)
}

// Command returns the spelling of an allowable command that name is, in
// any case.
func (p *Protocol) Command(name string) (string, bool) {
	for _, c := range p.AllowableCommands {
		if strings.EqualFold(c, name) {
			return c, true
		}
	}
	return "", false
}

// check says what an entry lacks.
func (p *Protocol) check() error {
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"Name", p.Name != ""}, {"Title", p.Title != ""}, {"DefaultPort", p.DefaultPort != 0},
		{"NewRelay", p.NewRelay != nil}, {"Dialect", p.Dialect != nil},
		{"DefaultPolicy", p.DefaultPolicy != nil}, {"DefaultPolicyYAML", p.DefaultPolicyYAML != nil},
		{"MaxMessageBytes", p.MaxMessageBytes > 0}, {"BufferBytes", p.BufferBytes > 0},
		{"Discover", p.Discover != ""}, {"Lex", p.Lex != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("protocol %q: %s missing", p.Name, strings.Join(missing, ", "))
	}
	return nil
}

var (
	mu    sync.Mutex // serialises Register
	table atomic.Pointer[[]*Protocol]
)

// ErrNoneRegistered is what a lookup reports before Register: the program
// did not call protocol/builtin's Register.
var ErrNoneRegistered = errors.New("no protocols registered (the program must call builtin.Register from protocol/builtin first)")

// Register adds protocols to the table, in order. An entry that lacks a
// field, or a name already registered, panics: the table is the program's
// own code, fixed at build time.
func Register(ps ...Protocol) {
	mu.Lock()
	defer mu.Unlock()
	var cur []*Protocol
	if t := table.Load(); t != nil {
		cur = *t
	}
	next := slices.Clone(cur)
	for i := range ps {
		p := ps[i]
		if err := p.check(); err != nil {
			panic("protocol.Register: " + err.Error())
		}
		if slices.ContainsFunc(next, func(q *Protocol) bool { return q.Name == p.Name }) {
			panic(fmt.Sprintf("protocol.Register: %q registered twice", p.Name))
		}
		next = append(next, &p)
	}
	table.Store(&next)
}

// All returns the registered protocols in the order they were registered.
// The entries are shared: callers do not change them.
func All() []*Protocol {
	if t := table.Load(); t != nil {
		return *t
	}
	return nil
}

// Named returns the protocol called name.
func Named(name string) (*Protocol, error) {
	all := All()
	if len(all) == 0 {
		return nil, ErrNoneRegistered
	}
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("protocol %q is not supported (%s)", name, Names())
}

// Discovered returns the protocol of servers discovery calls d.
func Discovered(d discover.Protocol) (*Protocol, bool) {
	for _, p := range All() {
		if p.Discover == d {
			return p, true
		}
	}
	return nil, false
}

// Names lists the registered names for messages: "postgres or mysql".
func Names() string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	switch len(names) {
	case 0:
		return "none registered"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
