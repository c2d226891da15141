package corpora

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/sqlfw/sqlfw/engine"
)

// Case is one kept injection or one benign statement, judged.
type Case struct {
	Slot    string
	Source  string
	File    string // the corpus file
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
// injections srvs parse and accept, and judges each with eng. The
// servers' connections (all to the same server) share the statements.
func Measure(ctx context.Context, protocol string, srvs []Parser, eng *engine.Engine, sess *engine.Session, payloads []Payload, benign []string) (*Result, error) {
	pg := protocol == "postgres"
	r := &Result{Protocol: protocol, Payloads: len(payloads), BenignInputs: len(benign)}
	type job struct {
		c              Case
		l              lexed
		benign, server bool // server: the server checks it
		parsed, ok     bool
	}
	var jobs []job
	for _, s := range Slots {
		for _, p := range payloads {
			left, l, broken := s.LeftSlot(p.Text, pg)
			if broken || !left {
				continue
			}
			r.Placed++
			jobs = append(jobs, job{c: Case{Slot: s.Name, Source: p.Source, File: p.File, Payload: p.Text, Stmt: s.Place(p.Text)}, l: l, server: true})
		}
		values := benign
		if s.Order {
			values = orderBenign
		}
		for _, b := range values {
			stmt := s.Place(b)
			if !s.Order {
				var ok bool
				if stmt, ok = s.PlaceBenign(b, pg); !ok {
					continue
				}
			}
			l := lex(stmt, pg)
			j := job{c: Case{Slot: s.Name, Source: "benign", Payload: b, Stmt: stmt}, l: l, benign: true, ok: true}
			switch {
			case len(l.stmts) != 1 || l.broken:
				j.ok = false
			case s.Name == "update" || s.Name == "login-user" || s.Name == "login-pass":
				// The same literal as in the quoted slot, which the
				// server checks: the lexer checks it here.
				if left, _, _ := s.LeftSlot(stmt[len(s.Prefix):len(stmt)-len(s.Suffix)], pg); left {
					j.ok = false
				}
			default:
				j.server = true
			}
			jobs = append(jobs, j)
		}
	}

	// Ask the servers, each connection taking the next statement.
	next := make(chan int)
	errs := make(chan error, len(srvs))
	var wg sync.WaitGroup
	for _, srv := range srvs {
		wg.Add(1)
		go func(srv Parser) {
			defer wg.Done()
			for i := range next {
				parsed, ok, err := serverParses(ctx, srv, jobs[i].c.Stmt, jobs[i].l)
				if err != nil {
					errs <- fmt.Errorf("%s %s: %w", protocol, jobs[i].c.Slot, err)
					for range next {
					}
					return
				}
				jobs[i].parsed, jobs[i].ok = parsed, ok
			}
		}(srv)
	}
	for i := range jobs {
		if jobs[i].server {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}

	for i := range jobs {
		j := &jobs[i]
		if j.benign {
			if !j.ok {
				r.BenignUnparsed++
				continue
			}
		} else {
			if j.parsed {
				r.Parsed++
			}
			if !j.ok {
				continue
			}
			r.Kept++
			s := slotNamed(j.c.Slot)
			j.c.Shape = Shape(s, j.c.Payload, j.l)
			j.c.Sig = signature(s, j.l)
		}
		v := eng.Judge([]byte(j.c.Stmt), sess)
		j.c.Blocked = v.Action != engine.ActionAllow
		j.c.RuleID, j.c.ParseError = v.RuleID, v.ParseError
		if j.benign {
			r.Benign = append(r.Benign, j.c)
		} else {
			r.Injections = append(r.Injections, j.c)
		}
	}
	return r, nil
}

func slotNamed(name string) Slot {
	for _, s := range Slots {
		if s.Name == name {
			return s
		}
	}
	panic("no slot " + name)
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
