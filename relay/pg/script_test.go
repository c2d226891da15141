package pg

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// Scripted-peer tests: the session between two scripts (pgtest.Script),
// the client's and the server's, over net.Pipe; no socket, no listener.

// piped runs sessions whose every dial (the upstream, a cancel's) gets the
// next connection of dials.
type piped struct {
	*proxy
	dials chan net.Conn
	// dialed records the addresses dialled.
	dialed chan string
}

func newPiped(t *testing.T) *piped {
	t.Helper()
	p := &piped{proxy: newProxy(t, config.Database{Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: "db.example:5432"}),
		dials: make(chan net.Conn, 4), dialed: make(chan string, 4)}
	p.opened = make(chan relay.Session, 4)
	p.env.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		p.dialed <- network + " " + addr
		select {
		case c := <-p.dials:
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t.Cleanup(p.wg.Wait)
	return p
}

// play runs script on one end of a new pipe and returns the other end and
// the script's outcome.
func play(t *testing.T, s *pgtest.Script) (net.Conn, <-chan error) {
	t.Helper()
	ours, theirs := net.Pipe()
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	done := make(chan error, 1)
	go func() {
		err := s.Run(ours)
		ours.Close()
		done <- err
	}()
	return theirs, done
}

// session plays the server's and the client's script through one session.
func (p *piped) session(t *testing.T, server, client []pgtest.Step) {
	t.Helper()
	srv, srvDone := play(t, &pgtest.Script{Steps: server})
	p.dials <- srv
	cli, cliDone := play(t, &pgtest.Script{Steps: client})
	p.serve(cli)
	if err := <-cliDone; err != nil {
		t.Errorf("client: %v", err)
	}
	if err := <-srvDone; err != nil {
		t.Errorf("server: %v", err)
	}
}

func enc(msgs ...pgproto3.Message) []byte {
	var b []byte
	for _, m := range msgs {
		b, _ = m.Encode(b)
	}
	return b
}

var (
	startupMessage = enc(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "app", "database": "shop"}})
	helloMessages = enc(&pgproto3.AuthenticationOk{}, &pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"},
		&pgproto3.BackendKeyData{ProcessID: 42, SecretKey: []byte{0, 0, 0, 7}}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	readyIdle  = enc(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	terminate  = enc(&pgproto3.Terminate{})
	syncMsg2   = enc(&pgproto3.Sync{})
	selectDone = enc(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
)

// startupSteps are both sides of a plain startup with trust
// authentication.
func startupSteps() (server, client []pgtest.Step) {
	return []pgtest.Step{pgtest.ExpectStartup(wantPacket(startupMessage)), pgtest.Send(helloMessages)},
		[]pgtest.Step{pgtest.Send(startupMessage), pgtest.ExpectAll(helloMessages)}
}

func wantPacket(want []byte) func([]byte) error {
	return func(got []byte) error {
		if !bytes.Equal(got, want) {
			return fmt.Errorf("got %q, want %q", got, want)
		}
		return nil
	}
}

// poisonOf checks that msg carries a poison in place of a blocked
// statement and remembers its text in *poison.
func poisonOf(typ byte, poison *string) pgtest.Step {
	return pgtest.ExpectFunc(func(msg []byte) error {
		if msg[0] != typ {
			return fmt.Errorf("got %q, want a %q carrying the poison", msg, typ)
		}
		var sql []byte
		var err error
		if typ == wire.MsgParse {
			_, sql, err = wire.ParseFields(msg)
		} else {
			sql, err = wire.QueryText(msg)
		}
		if err != nil || !strings.HasPrefix(string(sql), "sqlfw_blocked_") {
			return fmt.Errorf("got %q, want the poison", msg)
		}
		*poison = string(sql)
		return nil
	})
}

// syntaxError is what PostgreSQL answers a poison with.
func syntaxError(poison *string) pgtest.Step {
	return pgtest.SendFunc(func() []byte {
		return enc(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601",
			Message: fmt.Sprintf("syntax error at or near %q", *poison)}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	})
}

// blockedBy expects sqlfw's error for a statement blocked by rule.
func blockedBy(rule string) pgtest.Step {
	return pgtest.ExpectFunc(func(msg []byte) error {
		if msg[0] != wire.MsgErrorResponse || string(wire.ErrorField(msg, 'C')) != "42501" ||
			!strings.Contains(string(wire.ErrorField(msg, 'M')), rule) {
			return fmt.Errorf("got %q, want ERROR 42501 naming rule %s", msg, rule)
		}
		return nil
	})
}

func TestScriptedStartupAndAuthPassthrough(t *testing.T) {
	p := newPiped(t)
	sslRequest := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
	askPassword := enc(&pgproto3.AuthenticationCleartextPassword{})
	password := enc(&pgproto3.PasswordMessage{Password: "s3cret"})
	p.session(t,
		[]pgtest.Step{
			pgtest.ExpectStartup(wantPacket(startupMessage)), // the client's, as sent
			pgtest.Send(askPassword),
			pgtest.Expect(password), // the password, untouched
			pgtest.Send(helloMessages),
			pgtest.Expect(terminate),
		},
		[]pgtest.Step{
			pgtest.Send(sslRequest), pgtest.ExpectByte('N'), // no tls.cert: in clear
			pgtest.Send(startupMessage),
			pgtest.Expect(askPassword),
			pgtest.Send(password),
			pgtest.ExpectAll(helloMessages),
			pgtest.Send(terminate),
			pgtest.ExpectClosed(),
		})
	if got := <-p.dialed; got != "tcp db.example:5432" {
		t.Errorf("dialled %q, want the upstream", got)
	}
}

func TestScriptedBlockedQuery(t *testing.T) {
	p := newPiped(t)
	srv, cli := startupSteps()
	var poison string
	p.session(t,
		append(srv,
			poisonOf(wire.MsgQuery, &poison), syntaxError(&poison),
			pgtest.Expect(query("select 1")), pgtest.Send(selectDone),
			pgtest.Expect(terminate)),
		append(cli,
			pgtest.Send(query("delete from accounts")), blockedBy("no-unfiltered-writes"), pgtest.Expect(readyIdle),
			pgtest.Send(query("select 1")), pgtest.ExpectAll(selectDone),
			pgtest.Send(terminate), pgtest.ExpectClosed()))
	if p.denied.Load() != 1 {
		t.Errorf("%d verdicts enforced, want 1", p.denied.Load())
	}
}

// A blocked Parse inside a pipeline: the server gets the poison in its
// place and nothing else of the batch but the Sync, as it would skip the
// rest after the error; the client gets sqlfw's error, then the session
// goes on.
func TestScriptedBlockedParseSkipsToSync(t *testing.T) {
	p := newPiped(t)
	srv, cli := startupSteps()
	var poison string
	batch := bytes.Join([][]byte{
		wire.AppendParse(nil, "", "delete from accounts"), wire.AppendBind(nil, "", ""), wire.AppendExecute(nil, ""),
		enc(&pgproto3.Describe{ObjectType: 'P'}), syncMsg2,
	}, nil)
	p.session(t,
		append(srv,
			poisonOf(wire.MsgParse, &poison), pgtest.Expect(syncMsg2), syntaxError(&poison),
			pgtest.Expect(query("select 1")), pgtest.Send(selectDone),
			pgtest.Expect(terminate)),
		append(cli,
			pgtest.Send(batch), blockedBy("no-unfiltered-writes"), pgtest.Expect(readyIdle),
			pgtest.Send(query("select 1")), pgtest.ExpectAll(selectDone),
			pgtest.Send(terminate), pgtest.ExpectClosed()))
}

// A client whose every read brings one byte: the startup, a blocked Query
// and a pipeline with a blocked Parse are framed across reads.
func TestScriptedOneByteAtATime(t *testing.T) {
	p := newPiped(t)
	var poison1, poison2 string
	pipeline := bytes.Join([][]byte{
		query("select 1"),
		wire.AppendParse(nil, "s", "delete from accounts"), wire.AppendBind(nil, "", "s"), wire.AppendExecute(nil, ""), syncMsg2,
	}, nil)
	p.session(t,
		[]pgtest.Step{
			pgtest.ExpectStartup(wantPacket(startupMessage)), pgtest.Send(helloMessages),
			poisonOf(wire.MsgQuery, &poison1), syntaxError(&poison1),
			pgtest.Expect(query("select 1")), pgtest.Send(selectDone),
			poisonOf(wire.MsgParse, &poison2), pgtest.Expect(syncMsg2), syntaxError(&poison2),
			pgtest.Expect(terminate),
		},
		[]pgtest.Step{
			pgtest.SendBytewise(startupMessage), pgtest.ExpectAll(helloMessages),
			pgtest.SendBytewise(query("delete from accounts")), blockedBy("no-unfiltered-writes"), pgtest.Expect(readyIdle),
			pgtest.SendBytewise(pipeline), pgtest.ExpectAll(selectDone), blockedBy("no-unfiltered-writes"), pgtest.Expect(readyIdle),
			pgtest.SendBytewise(terminate), pgtest.ExpectClosed(),
		})
}

// A CancelRequest on a new connection goes to the upstream of the session
// whose BackendKeyData carried its key, byte for byte.
func TestScriptedCancelRouting(t *testing.T) {
	p := newPiped(t)
	srv, cli := startupSteps()
	cancel := enc(&pgproto3.CancelRequest{ProcessID: 42, SecretKey: []byte{0, 0, 0, 7}})
	unknown := enc(&pgproto3.CancelRequest{ProcessID: 43, SecretKey: []byte{0, 0, 0, 7}})
	inSession := make(chan struct{})
	cancelled := make(chan struct{})
	sessionDone := make(chan struct{})
	go func() {
		defer close(sessionDone)
		p.session(t,
			append(srv, pgtest.Expect(query("select 42")),
				waitFor(cancelled), pgtest.Send(selectDone), pgtest.Expect(terminate)),
			append(cli, pgtest.Send(query("select 42")), signal(inSession),
				pgtest.ExpectAll(selectDone), pgtest.Send(terminate), pgtest.ExpectClosed()))
	}()
	<-inSession
	<-p.dialed // the session's upstream

	// an unknown key is dropped without a dial
	c, done := play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.Send(unknown), pgtest.ExpectClosed()}})
	p.serve(c)
	if err := <-done; err != nil {
		t.Fatalf("cancel with an unknown key: %v", err)
	}
	up, upDone := play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.ExpectStartup(wantPacket(cancel))}})
	p.dials <- up
	c, done = play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.Send(cancel), pgtest.ExpectClosed()}})
	p.serve(c)
	if err := <-upDone; err != nil {
		t.Fatalf("the upstream's cancel connection: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the cancelling client: %v", err)
	}
	if got := <-p.dialed; got != "tcp db.example:5432" {
		t.Errorf("the cancel went to %q, want the session's upstream", got)
	}
	close(cancelled)
	<-sessionDone
	if n := p.count(relay.CancelRequests); n != 2 {
		t.Errorf("%d cancel requests counted, want 2", n)
	}
}

// Drain closes an idle session at once, and a busy one once its answer
// has come.
func TestScriptedDrain(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		p := newPiped(t)
		srv, cli := startupSteps()
		go func() { (<-p.opened).Drain() }()
		p.session(t, append(srv, pgtest.ExpectClosed()), append(cli, pgtest.ExpectClosed()))
	})
	t.Run("busy", func(t *testing.T) {
		p := newPiped(t)
		srv, cli := startupSteps()
		sent, drained := make(chan struct{}), make(chan struct{})
		go func() {
			s := <-p.opened
			<-sent
			s.Drain()
			close(drained)
		}()
		// drained once the server has the query: the session is busy
		p.session(t,
			append(srv, pgtest.Expect(query("select 1")), signal(sent), waitFor(drained), pgtest.Send(selectDone), pgtest.ExpectClosed()),
			append(cli, pgtest.Send(query("select 1")), pgtest.ExpectAll(selectDone), pgtest.ExpectClosed()))
	})
}

// signal and waitFor order two scripts' steps.
type signal chan struct{}

func (s signal) Play(net.Conn) error { close(s); return nil }

type waitFor chan struct{}

func (w waitFor) Play(net.Conn) error { <-w; return nil }
