package daemon

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Idle connections do not lock fwctl out (issue 23): 500 connections that
// never send anything, and keep-alive ones between requests, are closed
// oldest first when more arrive; a request in progress is not cut, and a
// real request is served (TestControlConnsKeepActive: a request in
// progress is not cut).
func TestControlIdleConnectionsYield(t *testing.T) {
	d, sock := startControlled(t)
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// a keep-alive connection after one request
	keep := dial()
	if _, err := keep.Write([]byte("GET /v1/status HTTP/1.1\r\nHost: sqlfwd\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(keep), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	resp.Body.Close()
	for i := 0; i < 500; i++ {
		dial()
	}
	// the server sees all 500 (each hook ran) before the real request
	for i := 0; d.control.conns.count() < maxControlConns; i++ {
		if i > 200 {
			t.Fatalf("open connections: %d", d.control.conns.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		if b := controlGet(t, sock, "/v1/status"); !strings.Contains(string(b), `"databases"`) {
			t.Fatalf("status behind 500 idle connections: %s", b)
		}
	}
	if n := d.control.conns.count(); n > maxControlConns {
		t.Errorf("open control connections: %d, want at most %d", n, maxControlConns)
	}
	// the keep-alive one was idle longest: closed
	keep.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := keep.Read(make([]byte, 1)); err == nil {
		t.Error("the idle keep-alive connection is still open")
	}
}

// Connections stopped in the middle of a request's header, or after a
// header whose body never comes, do not lock fwctl out either: a real
// request behind 500 of them is served at once, not after the 5 s header
// timeout (Go's server counts a connection active only once its header
// is read, so the first kind are evicted as silent ones are; the second
// is answered without its body and kept alive).
func TestControlPartialHeadersYield(t *testing.T) {
	d, sock := startControlled(t)
	for i := 0; i < 500; i++ {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := "GET /v1/status HTTP/1.1\r\nHost: sqlfwd\r\n"
		if i%2 == 1 { // a whole header whose body never comes
			req = "POST /v1/reload HTTP/1.1\r\nHost: sqlfwd\r\nContent-Length: 100000\r\n\r\n"
		}
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; d.control.conns.count() < maxControlConns; i++ {
		if i > 200 {
			t.Fatalf("open connections: %d", d.control.conns.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // each has sent its bytes: active
	for i := 0; i < 3; i++ {
		c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
		resp, err := c.Get("http://sqlfwd/v1/status")
		if err != nil {
			t.Fatalf("status behind 500 half-sent requests: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"databases"`) {
			t.Fatalf("status behind 500 half-sent requests: %s %s", resp.Status, b)
		}
	}
}

// closeConn is a net.Conn that records its Close.
type closeConn struct {
	net.Conn
	closed bool
}

func (c *closeConn) Close() error { c.closed = true; return nil }

// The eviction order: the longest idle goes first, a connection serving a
// request never; when all others are serving, the newcomer is closed.
func TestControlConnsKeepActive(t *testing.T) {
	cc := newControlConns(3)
	a, b, c := &closeConn{}, &closeConn{}, &closeConn{}
	for _, x := range []*closeConn{a, b, c} {
		cc.state(x, http.StateNew)
		cc.state(x, http.StateActive)
	}
	cc.state(b, http.StateIdle) // b idle, a and c serving
	n := &closeConn{}
	cc.state(n, http.StateNew)
	if !b.closed || a.closed || c.closed || n.closed {
		t.Fatalf("closed a %v b %v c %v new %v; want only the idle b", a.closed, b.closed, c.closed, n.closed)
	}
	cc.state(b, http.StateClosed)
	cc.state(n, http.StateActive) // now a, c, n serving
	m := &closeConn{}
	cc.state(m, http.StateNew)
	if !m.closed || a.closed || c.closed || n.closed {
		t.Fatalf("with every connection serving: closed a %v c %v n %v new %v; want only the new one", a.closed, c.closed, n.closed, m.closed)
	}
	cc.state(m, http.StateClosed)
	// two silent newcomers: the older goes first
	cc.state(a, http.StateIdle)
	time.Sleep(time.Millisecond)
	cc.state(c, http.StateIdle)
	o := &closeConn{}
	cc.state(o, http.StateNew)
	if !a.closed || c.closed || o.closed {
		t.Fatalf("closed a %v c %v new %v; want the longest idle a", a.closed, c.closed, o.closed)
	}
	if got := cc.count(); got != 3 {
		t.Errorf("open: %d, want 3", got)
	}
}

// A connection answered but held Active by net/http while it waits for a
// body it was promised (Content-Length) and never gets goes like an idle
// one: 64 such requests, refused or not, must not lock fwctl out.
func TestControlAnsweredConnYields(t *testing.T) {
	cc := newControlConns(2)
	a, b := &closeConn{}, &closeConn{}
	for _, x := range []*closeConn{a, b} {
		cc.state(x, http.StateNew)
		cc.state(x, http.StateActive)
	}
	r := httptest.NewRequest("POST", "/v1/reload", nil)
	r = r.WithContext(context.WithValue(r.Context(), connKey{}, net.Conn(a)))
	cc.track(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), r)
	n := &closeConn{}
	cc.state(n, http.StateNew)
	if !a.closed || b.closed || n.closed {
		t.Fatalf("closed answered a %v, serving b %v, new %v; want only a", a.closed, b.closed, n.closed)
	}
}
