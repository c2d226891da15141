package mysql

// TLS on both legs against scripted peers (tls.go): the SSL request, the
// handshake, the sequence ids on each leg, tls.require, bad input, and
// caching_sha2_password's full authentication (MySQL 8 only: no MariaDB
// has it) over TLS, built from MySQL's protocol documentation
// ("Protocol::SSLRequest", "caching_sha2_password information").

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// tlsHarness is a harness over TCP whose client leg serves sqlfw.test's
// certificate; the scripted client trusts its CA.
func tlsHarness(t *testing.T) (*harness, *testPKI, *tls.Config) {
	h := newHarness(t)
	h.TCP = true
	pki := newPKI(t)
	srv := pki.ServerConfig(t, "sqlfw.test")
	h.Env.ClientTLS = func() *tls.Config { return srv }
	return h, pki, &tls.Config{RootCAs: pki.Pool, ServerName: "sqlfw.test"}
}

// tlsRefused runs a client handshake that must fail, here or at the first
// read (TLS 1.3 verifies the client's certificate after the client is
// done).
func tlsRefused(cfg *tls.Config, server bool) step {
	return relaytest.StepFunc(func(c net.Conn) error {
		b := c.(*relaytest.Conn)
		var tc *tls.Conn
		if server {
			tc = tls.Server(b.Conn, cfg)
		} else {
			tc = tls.Client(b.Conn, cfg)
		}
		err := tc.Handshake()
		if err == nil {
			_, err = readPkt(tc)
		}
		if err == nil {
			return fmt.Errorf("the TLS handshake succeeded, want it refused")
		}
		return nil
	})
}

// sslRequest is a client's SSL request (seq 1) with caps.
func sslRequest(caps wire.Caps) []byte {
	p := binary.LittleEndian.AppendUint32(nil, uint32(uint64(caps|wire.CapSSL)))
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 19)...)
	p = binary.LittleEndian.AppendUint32(p, (caps | wire.CapSSL).Extended())
	return pkt(1, p...)
}

// withSeq is packet b renumbered.
func withSeq(b []byte, seq int) []byte {
	b = append([]byte(nil), b...)
	b[3] = byte(seq)
	return b
}

func checkTLSGreeting(m []byte) error {
	h, err := wire.ParseHandshake(m[4:])
	if err != nil {
		return err
	}
	if want := serverCaps&^wire.DefaultStrip | wire.CapSSL; h.Caps != want {
		return fmt.Errorf("greeting offers %#x, want %#x (CLIENT_SSL, nothing the relay strips)", uint64(h.Caps), uint64(want))
	}
	return nil
}

// The client asks for TLS; the server leg stays in clear. The client's
// ids run one ahead of the server's until authentication ends.
func TestTLSClientLeg(t *testing.T) {
	h, _, cli := tlsHarness(t)
	h.Env.Limits.RequireTLS = true
	response := handshakeResponse(clientCaps|wire.CapSSL, "app", "shop")
	switchReq := pktS(2, wire.AuthSwitchRequest, "mysql_native_password\x00abcdefghijklmnopqrst\x00")
	answer := pktS(3, 'x', "0123456789012345678")
	s := h.run(t, []step{send(greeting(serverCaps)), expect(handshakeResponse(clientCaps, "app", "shop")),
		send(switchReq), expect(answer), send(ok(4, autocommit)),
		expect(query("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false), send(withSeq(response, 2)),
			expect(withSeq(switchReq, 3)), send(withSeq(answer, 4)), expect(ok(5, autocommit)),
			send(query("delete from t")), expectErr(1, errBlocked, "42000", "no-delete"),
			send(query("select 1")), expect(resultSet(autocommit))})
	if info := s.Info(); !strings.HasPrefix(info.ClientTLS, "TLS 1.3 ") || info.ServerTLS != "" {
		t.Errorf("Info: client_tls %q, server_tls %q; want TLS 1.3 and clear", info.ClientTLS, info.ServerTLS)
	}
	underIO(t, "client", s.(*session).Client)
	if n := h.count(relay.TLSClientOK); n != 1 {
		t.Errorf("TLSClientOK %d, want 1", n)
	}
}

// tls.require: a client that answers the greeting in clear gets MySQL's
// ER_SECURE_TRANSPORT_REQUIRED, and the server never sees its response.
func TestTLSRequire(t *testing.T) {
	h, _, _ := tlsHarness(t)
	h.Env.Limits.RequireTLS = true
	h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
		[]step{expectFunc(checkTLSGreeting), send(handshakeResponse(clientCaps, "app", "shop")),
			expectErr(2, errSecureTransport, "HY000", "insecure transport"), expectClosed()})
}

// Bad input on the client leg: each closes its connection with one log
// line and counts the failure by cause.
func TestTLSClientBadInput(t *testing.T) {
	other := newPKI(t)
	for _, tc := range []struct {
		name   string
		client func(cli *tls.Config, pki *testPKI, h *harness) []step
		reason relay.TLSFailure
		log    string
	}{
		{"plaintext after the SSL request", func(*tls.Config, *testPKI, *harness) []step {
			return []step{send(sslRequest(clientCaps)), send(withSeq(handshakeResponse(clientCaps, "app", "shop"), 2)),
				expectErr(2, errHandshake, "08S01", "expected a TLS handshake"), expectClosed()}
		}, relay.TLSFailProtocol, "TLS handshake failed"},
		{"a ClientHello for a handshake response", func(cli *tls.Config, _ *testPKI, _ *harness) []step {
			return []step{tlsRefused(cli, false), relaytest.ExpectEnd()}
		}, relay.TLSFailProtocol, "a TLS handshake where the handshake response belongs"},
		{"silence after the SSL request", func(_ *tls.Config, _ *testPKI, h *harness) []step {
			h.Env.Limits.StartupTimeout = 200 * time.Millisecond
			return []step{send(sslRequest(clientCaps)), expectClosed()}
		}, relay.TLSFailTimeout, "TLS handshake failed"},
		{"a certificate from another CA", func(*tls.Config, *testPKI, *harness) []step {
			return []step{send(sslRequest(clientCaps)), tlsRefused(&tls.Config{RootCAs: other.Pool, ServerName: "sqlfw.test"}, false), relaytest.ExpectEnd()}
		}, relay.TLSFailCertificate, "TLS handshake failed"},
		{"an expired certificate", func(cli *tls.Config, pki *testPKI, h *harness) []step {
			expired := &tls.Config{Certificates: []tls.Certificate{pki.Leaf(t, "sqlfw.test", false, time.Now().Add(-time.Hour))}}
			h.Env.ClientTLS = func() *tls.Config { return expired }
			return []step{send(sslRequest(clientCaps)), tlsRefused(cli, false), relaytest.ExpectEnd()}
		}, relay.TLSFailCertificate, "TLS handshake failed"},
		{"no client certificate", func(cli *tls.Config, pki *testPKI, h *harness) []step {
			cfg := h.Env.ClientTLS().Clone()
			cfg.ClientCAs, cfg.ClientAuth = pki.Pool, tls.RequireAndVerifyClientCert
			h.Env.ClientTLS = func() *tls.Config { return cfg }
			return []step{send(sslRequest(clientCaps)), tlsRefused(cli, false), relaytest.ExpectEnd()}
		}, relay.TLSFailCertificate, "TLS handshake failed"},
		{"a client certificate from another CA", func(cli *tls.Config, pki *testPKI, h *harness) []step {
			cfg := h.Env.ClientTLS().Clone()
			cfg.ClientCAs, cfg.ClientAuth = pki.Pool, tls.RequireAndVerifyClientCert
			h.Env.ClientTLS = func() *tls.Config { return cfg }
			rogue := cli.Clone()
			rogue.Certificates = []tls.Certificate{other.Leaf(t, "mallory", true, time.Now().Add(time.Hour))}
			return []step{send(sslRequest(clientCaps)), tlsRefused(rogue, false), relaytest.ExpectEnd()}
		}, relay.TLSFailCertificate, "TLS handshake failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, pki, cli := tlsHarness(t)
			client := tc.client(cli, pki, h)
			h.run(t, []step{send(greeting(serverCaps)), expectClosed()}, append([]step{expectFunc(checkTLSGreeting)}, client...))
			if n := h.count(relay.TLSClientFailBy + relay.Counter(tc.reason)); n != 1 || h.count(relay.TLSClientFail) != 1 {
				t.Errorf("client-leg failures by %s: %d (of %d), want 1", tc.reason, n, h.count(relay.TLSClientFail))
			}
			logs := h.Logs.String()
			if strings.Count(logs, "level=WARN") != 1 || !strings.Contains(logs, tc.log) {
				t.Errorf("want one warning saying %q; the log:\n%s", tc.log, logs)
			}
			if strings.Contains(logs, "PRIVATE KEY") {
				t.Error("key material in the log")
			}
		})
	}
}

// A client that finishes the TLS handshake and then sends nothing is
// closed at the startup timeout, as one in clear is (the handshake cleared
// the deadline: such a client held a goroutine and a descriptor forever,
// before admission counted it).
func TestTLSSilenceAfterHandshake(t *testing.T) {
	h, _, cli := tlsHarness(t)
	h.Env.Limits.StartupTimeout = 300 * time.Millisecond
	closedByRelay := relaytest.StepFunc(func(c net.Conn) error {
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		m, err := readPkt(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return fmt.Errorf("still open 3s after a %v startup timeout", h.Env.Limits.StartupTimeout)
		}
		if err == nil {
			return fmt.Errorf("got %q, want the connection closed", m)
		}
		return nil
	})
	h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
		[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false), closedByRelay})
	if logs := h.Logs.String(); !strings.Contains(logs, "no handshake response after TLS") {
		t.Errorf("want the log to say why; the log:\n%s", logs)
	}
}

// A client certificate from the CA is accepted, and the log names its
// subject.
func TestTLSClientCertificate(t *testing.T) {
	h, pki, cli := tlsHarness(t)
	cfg := h.Env.ClientTLS().Clone()
	cfg.ClientCAs, cfg.ClientAuth = pki.Pool, tls.RequireAndVerifyClientCert
	h.Env.ClientTLS = func() *tls.Config { return cfg }
	cli.Certificates = []tls.Certificate{pki.Leaf(t, "app", true, time.Now().Add(time.Hour))}
	s := h.run(t, []step{send(greeting(serverCaps)), expect(handshakeResponse(clientCaps, "app", "shop")), send(ok(2, autocommit))},
		[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false),
			send(withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)), expect(ok(3, autocommit))})
	if got := s.Info().ClientCert; got != "CN=app" {
		t.Errorf("Info().ClientCert %q, want CN=app", got)
	}
	if !strings.Contains(h.Logs.String(), `client_cert="CN=app"`) {
		t.Errorf("the log does not name the client certificate:\n%s", h.Logs.String())
	}
}

// upstreamTLS points the harness's upstream at a server named db.test
// whose CA sqlfw trusts, with mode.
func upstreamTLS(h *harness, pki *testPKI, mode, name string) {
	h.Upstream = relay.Upstream{Network: "tcp", Addr: "db.test:3306", TLSMode: mode,
		TLS: &tls.Config{RootCAs: pki.Pool, ServerName: name, MinVersion: tls.VersionTLS12}}
}

// sqlfwSSLRequest is the SSL request sqlfw sends the server: the client's
// response cut after its filler, with CLIENT_SSL.
func sqlfwSSLRequest(response []byte) []byte {
	b := withSeq(response[:wire.HeaderLen+wire.SSLRequestLen], 1)
	b[0], b[1], b[2] = wire.SSLRequestLen, 0, 0
	setSSLCap(b, true)
	return b
}

// The server leg on TLS, the client in clear: sqlfw's own SSL request, the
// handshake, the response with CLIENT_SSL at seq 2; the client's ids run
// one behind until authentication ends.
func TestTLSServerLeg(t *testing.T) {
	h := newHarness(t)
	h.TCP = true
	pki := newPKI(t)
	upstreamTLS(h, pki, "verify-full", "db.test")
	hello := handshakeResponse(clientCaps, "app", "shop")
	more := pkt(3, wire.AuthMoreData, 3) // caching_sha2_password: fast authentication succeeded
	s := h.run(t, []step{send(greeting(serverCaps)), expect(sqlfwSSLRequest(hello)), startTLS(pki.ServerConfig(t, "db.test"), true),
		expect(withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)), send(more, ok(4, autocommit)),
		expect(query("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(checkGreeting), send(hello), expect(withSeq(more, 2)), expect(ok(3, autocommit)),
			send(query("delete from t")), expectErr(1, errBlocked, "42000", "no-delete"),
			send(query("select 1")), expect(resultSet(autocommit))})
	if info := s.Info(); info.ClientTLS != "" || !strings.HasPrefix(info.ServerTLS, "TLS 1.3 ") {
		t.Errorf("Info: client_tls %q, server_tls %q; want clear and TLS 1.3", info.ClientTLS, info.ServerTLS)
	}
	underIO(t, "server", s.(*session).Server)
	if n := h.count(relay.TLSServerOK); n != 1 {
		t.Errorf("TLSServerOK %d, want 1", n)
	}
}

// The server leg fails: a certificate for another name (verify-full), a
// server without CLIENT_SSL (require); prefer goes on in clear.
func TestTLSServerLegRefused(t *testing.T) {
	hello := handshakeResponse(clientCaps, "app", "shop")
	for _, tc := range []struct {
		name, mode string
		server     func(pki *testPKI) []step
		reason     relay.TLSFailure
	}{
		{"another name", "verify-full", func(pki *testPKI) []step {
			return []step{send(greeting(serverCaps)), expect(sqlfwSSLRequest(hello)), tlsRefused(pki.ServerConfig(t, "other.test"), true)}
		}, relay.TLSFailCertificate},
		{"no CLIENT_SSL", "require", func(*testPKI) []step {
			return []step{send(greeting(serverCaps &^ wire.CapSSL)), expectClosed()}
		}, relay.TLSFailRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.TCP = true
			pki := newPKI(t)
			upstreamTLS(h, pki, tc.mode, "db.test")
			h.run(t, tc.server(pki), []step{expectFunc(func([]byte) error { return nil }), send(hello),
				expectErr(2, errHandshake, "08S01", "over TLS (upstream_tls)"), expectClosed()})
			if n := h.count(relay.TLSServerFailBy + relay.Counter(tc.reason)); n != 1 {
				t.Errorf("server-leg failures by %s: %d, want 1", tc.reason, n)
			}
			if !strings.Contains(h.Logs.String(), "cannot reach the database server over TLS") {
				t.Errorf("no log line for the failure:\n%s", h.Logs.String())
			}
		})
	}
	t.Run("prefer", func(t *testing.T) {
		h := newHarness(t)
		h.TCP = true
		upstreamTLS(h, newPKI(t), "prefer", "db.test")
		h.run(t, []step{send(greeting(serverCaps &^ wire.CapSSL)), expect(hello), send(ok(2, autocommit))},
			[]step{expectFunc(func([]byte) error { return nil }), send(hello), expect(ok(2, autocommit))})
	})
}

// caching_sha2_password's full authentication with TLS on both legs: the
// server asks for it (AuthMoreData 4), the client sends its password in
// clear inside TLS (no RSA key exchange), zero-terminated; sqlfw passes it
// through and logs none of it.
func TestTLSCachingSHA2FullAuth(t *testing.T) {
	h, pki, cli := tlsHarness(t)
	upstreamTLS(h, pki, "verify-full", "db.test")
	response := withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)
	full := pkt(3, wire.AuthMoreData, 4)
	const password = "s3cret-over-tls"
	clear := pkt(4, append([]byte(password), 0)...)
	h.run(t, []step{send(greeting(serverCaps)), expect(sqlfwSSLRequest(response)), startTLS(pki.ServerConfig(t, "db.test"), true),
		expect(response), send(full), expect(clear), send(ok(5, autocommit)),
		expect(query("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false), send(response),
			expect(full), send(clear), expect(ok(5, autocommit)),
			send(query("select 1")), expect(resultSet(autocommit))})
	if strings.Contains(h.Logs.String(), password) {
		t.Errorf("the password is in the log:\n%s", h.Logs.String())
	}
	if h.count(relay.TLSClientOK) != 1 || h.count(relay.TLSServerOK) != 1 {
		t.Errorf("handshakes: client %d, server %d; want 1 and 1", h.count(relay.TLSClientOK), h.count(relay.TLSServerOK))
	}
}

// An SSL request where no certificate is configured is refused with an
// ERR; so is a response that claims CLIENT_SSL without TLS.
func TestTLSNotConfigured(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hello []byte
		want  string
	}{
		{"SSL request", sslRequest(clientCaps), "offers no TLS"},
		{"CLIENT_SSL in clear", handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), "without TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
				[]step{expectFunc(checkGreeting), send(tc.hello), expectErr(2, errHandshake, "08S01", tc.want), expectClosed()})
		})
	}
}

// A command sent with the handshake response waits for the end of
// authentication and is judged, whichever leg carried an SSL request (the
// legs' ids then differ: the command's id 0 is told by the id as
// received).
func TestTLSCommandsDuringAuthentication(t *testing.T) {
	t.Run("client leg on TLS", func(t *testing.T) {
		h, _, cli := tlsHarness(t)
		response := withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)
		h.run(t, []step{send(greeting(serverCaps)), expect(handshakeResponse(clientCaps, "app", "shop")), send(ok(2, autocommit)),
			expect(query("select 1")), send(resultSet(autocommit))},
			[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false),
				send(response, query("delete from t")), expect(ok(3, autocommit)),
				expectErr(1, errBlocked, "42000", "no-delete"),
				send(query("select 1")), expect(resultSet(autocommit))})
	})
	t.Run("server leg on TLS", func(t *testing.T) {
		h := newHarness(t)
		h.TCP = true
		pki := newPKI(t)
		upstreamTLS(h, pki, "verify-full", "db.test")
		hello := handshakeResponse(clientCaps, "app", "shop")
		h.run(t, []step{send(greeting(serverCaps)), expect(sqlfwSSLRequest(hello)), startTLS(pki.ServerConfig(t, "db.test"), true),
			expect(withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)), send(ok(3, autocommit)),
			expect(query("select 1")), send(resultSet(autocommit))},
			[]step{expectFunc(checkGreeting), send(hello, query("delete from t")), expect(ok(2, autocommit)),
				expectErr(1, errBlocked, "42000", "no-delete"),
				send(query("select 1")), expect(resultSet(autocommit))})
	})
}

// The handshake read one byte at a time: the greeting, the SSL request and
// the response through TLS, the server's answer.
func TestTLSHandshakeBytewise(t *testing.T) {
	h, pki, cli := tlsHarness(t)
	upstreamTLS(h, pki, "verify-full", "db.test")
	response := withSeq(handshakeResponse(clientCaps|wire.CapSSL, "app", "shop"), 2)
	h.run(t, []step{sendBytewise(greeting(serverCaps)), expect(sqlfwSSLRequest(response)), startTLS(pki.ServerConfig(t, "db.test"), true),
		expect(response), sendBytewise(ok(3, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(checkTLSGreeting), sendBytewise(sslRequest(clientCaps)), startTLS(cli, false), sendBytewise(response),
			expect(ok(3, autocommit)), send(query("select 1")), expect(resultSet(autocommit))})
}

// readHandshakePacket returns one whole packet or an error, and never
// reads past the packet: what follows it (TLS) stays unread.
func FuzzReadHandshakePacket(f *testing.F) {
	f.Add(sslRequest(clientCaps), true)
	f.Add(append(handshakeResponse(clientCaps, "app", "shop"), 0x16, 3, 1), true)
	f.Add(greeting(serverCaps), false)
	f.Add([]byte{0x16, 3, 1, 2, 0, 1, 0xfc, 3, 3}, true) // a ClientHello's first bytes
	f.Add([]byte{0xff, 0xff, 0xff, 0}, false)
	f.Add([]byte{0xff, 0xff, 0xff, 1, 0, 0}, true)
	f.Add([]byte{5, 0, 0}, true)
	f.Fuzz(func(t *testing.T, in []byte, fromClient bool) {
		r := bytes.NewReader(in)
		m, err := readHandshakePacket(iotest.OneByteReader(r), fromClient)
		if len(in) >= wire.HeaderLen && int(in[0])|int(in[1])<<8|int(in[2])<<16 > preAuthMaxPacket &&
			!(fromClient && in[0] == tlsRecordHandshake && in[1] == tlsMajor && in[2] >= 1 && in[2] <= 3) {
			// too large: said at the header (the server answers it with
			// ER_NET_PACKET_TOO_LARGE after this sequence id), nothing
			// past it read
			var big *packetTooLarge
			if !errors.As(err, &big) || big.seq != int(in[3]) || r.Len() != len(in)-wire.HeaderLen {
				t.Fatalf("%q: got %v with %d bytes left, want a packetTooLarge with sequence id %d after the header", in, err, r.Len(), in[3])
			}
			return
		}
		if err != nil {
			return
		}
		n := int(m[0]) | int(m[1])<<8 | int(m[2])<<16
		if len(m) != wire.HeaderLen+n || n > preAuthMaxPacket || !bytes.Equal(m, in[:len(m)]) {
			t.Fatalf("got %d bytes (header says %d) from %q", len(m), n, in)
		}
		if r.Len() != len(in)-len(m) {
			t.Fatalf("read %d bytes past the packet", len(in)-len(m)-r.Len())
		}
	})
}

// underIO checks that a TLS leg's crypto/tls reads and writes its socket
// through relay.IO's raw calls (relay/rawio.go).
func underIO(t *testing.T, leg string, c net.Conn) {
	t.Helper()
	tc, ok := c.(*tls.Conn)
	if !ok {
		t.Fatalf("%s leg: a %T, want a *tls.Conn", leg, c)
	}
	if _, ok := tc.NetConn().(*relay.IO); !ok {
		t.Errorf("%s leg: TLS over a %T, want over a *relay.IO", leg, tc.NetConn())
	}
}
