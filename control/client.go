package control

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// DefaultSocket is where sqlfwd listens unless control_socket says
// otherwise.
const DefaultSocket = "/run/sqlfw/control.sock"

// EnvSocket names the control socket when no --control-socket is given,
// for sqlfwd and fwctl alike.
const EnvSocket = "SQLFW_CONTROL_SOCKET"

// ResolveSocket is the control socket sqlfwd listens on and fwctl calls:
// flag (--control-socket) if given, else $SQLFW_CONTROL_SOCKET, else what
// the configuration file says (configured, read only when needed), else
// DefaultSocket.
func ResolveSocket(flag string, configured func() string) string {
	if flag != "" {
		return flag
	}
	if s := os.Getenv(EnvSocket); s != "" {
		return s
	}
	if configured != nil {
		if s := configured(); s != "" {
			return s
		}
	}
	return DefaultSocket
}

// Client calls sqlfwd's control socket: HTTP/1.1 over a unix socket
// (daemon/control.go lists the routes).
type Client struct {
	// Socket is the control socket's path.
	Socket string
	// Timeout bounds one call (default 10s).
	Timeout time.Duration
}

// Call makes one request and returns the body of a 200 answer; any other
// answer is an error carrying its status and body, which is where the
// daemon says what was wrong.
func (c *Client) Call(method, path string, query url.Values) ([]byte, error) {
	return c.CallBody(method, path, query, nil)
}

// CallBody is Call with a request body (nil: none).
func (c *Client) CallBody(method, path string, query url.Values, body []byte) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	hc := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", c.Socket)
		}},
	}
	u := "http://sqlfwd" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rb)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach sqlfwd at %s: %w", c.Socket, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, out)
	}
	return out, nil
}
