package corpora

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// Case is one kept injection or one benign statement, judged.
type Case struct {
	Slot    string
	Source  string
	Shape   string // "" for a benign case
	Payload string
	Stmt    string
	Blocked bool
	RuleID  string
	// ParseError is true when the engine's parser rejected a statement
	// the server parses (the policy's on_parse_error decided).
	ParseError bool
	Sig        string // the payload's shape signature (misses are grouped by it)
}

// Result is what one protocol's measure found.
type Result struct {
	Protocol string // "postgres" or "mysql"
	Server   string // the server's version
	// Payloads is how many payloads were tried; Placed how many
	// placements left their slot; Parsed how many of those the server
	// parses, Kept how many it accepts (parses and resolves: the
	// injections measured).
	Payloads, Placed, Parsed, Kept int
	Injections                     []Case
	Benign                         []Case
	// BenignUnparsed counts benign statements the server did not parse
	// (a defect of the placement; they are not judged).
	BenignUnparsed int
	BenignInputs   int
}

// Measure places every payload and benign input in every slot, keeps the
// injections srv parses, and judges each with eng.
func Measure(ctx context.Context, protocol string, srv Parser, eng *engine.Engine, sess *engine.Session, payloads []Payload, benign []string) (*Result, error) {
	pg := protocol == "postgres"
	r := &Result{Protocol: protocol, Payloads: len(payloads), BenignInputs: len(benign)}
	judge := func(c *Case) {
		v := eng.Judge([]byte(c.Stmt), sess)
		c.Blocked = v.Action != engine.ActionAllow
		c.RuleID, c.ParseError = v.RuleID, v.ParseError
	}
	for _, s := range Slots {
		for _, p := range payloads {
			left, l, broken := s.LeftSlot(p.Text, pg)
			if broken || !left {
				continue
			}
			r.Placed++
			stmt := s.Place(p.Text)
			parsed, ok, err := serverParses(ctx, srv, stmt, l)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", protocol, s.Name, err)
			}
			if parsed {
				r.Parsed++
			}
			if !ok {
				continue
			}
			r.Kept++
			c := Case{Slot: s.Name, Source: p.Source, Shape: Shape(s, p.Text, l), Payload: p.Text, Stmt: stmt}
			c.Sig = signature(s, l)
			judge(&c)
			r.Injections = append(r.Injections, c)
		}
		var values []string
		if s.Order {
			values = orderBenign
		} else {
			values = benign
		}
		for _, b := range values {
			var stmt string
			if s.Order {
				stmt = s.Place(b)
			} else {
				var ok bool
				if stmt, ok = s.PlaceBenign(b, pg); !ok {
					continue
				}
			}
			l := lex(stmt, pg)
			if len(l.stmts) != 1 || l.broken {
				r.BenignUnparsed++
				continue
			}
			// The server checks the placement in the first quoted slot,
			// the numeric and the ORDER BY slot; the other quoted slots
			// hold the same literal, which the lexer checks.
			if s.Name != "update" && s.Name != "login-user" && s.Name != "login-pass" {
				_, ok, err := serverParses(ctx, srv, stmt, l)
				if err != nil {
					return nil, fmt.Errorf("%s %s benign: %w", protocol, s.Name, err)
				}
				if !ok {
					r.BenignUnparsed++
					continue
				}
			} else if left, _, _ := s.LeftSlot(stmt[len(s.Prefix):len(stmt)-len(s.Suffix)], pg); left {
				r.BenignUnparsed++
				continue
			}
			c := Case{Slot: s.Name, Source: "benign", Payload: b, Stmt: stmt}
			judge(&c)
			r.Benign = append(r.Benign, c)
		}
	}
	return r, nil
}

// signature is the shape of what the payload added to the statement: its
// first tokens after the application's prefix, literals as '?'.
func signature(s Slot, l lexed) string {
	w := l.words()
	pre := len(lex(s.Prefix, l.pgRules).words())
	if s.Quoted && pre > 0 {
		pre--
	}
	if pre > len(w) {
		pre = len(w)
	}
	add := w[pre:]
	if len(add) > 10 {
		add = append(add[:10:10], "…")
	}
	return strings.Join(add, " ")
}
