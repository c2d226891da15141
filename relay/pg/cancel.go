package pg

import "sync"

// cancelKeys maps a backend's key (process id and secret, as sent in
// BackendKeyData) to the upstream that issued it. A CancelRequest arrives on
// a new connection carrying only that key, so this is the only way to route
// it to the right server.
type cancelKeys struct {
	mu sync.Mutex
	m  map[string]upstream
}

// upstream is where a session's server is: a network ("tcp" or "unix") and
// an address.
type upstream struct{ net, addr string }

func (c *cancelKeys) add(key string, up upstream) {
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string]upstream)
	}
	c.m[key] = up
	c.mu.Unlock()
}

func (c *cancelKeys) remove(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// lookup finds the upstream for a key given as bytes; the conversion in
// the map index does not allocate.
func (c *cancelKeys) lookup(key []byte) (upstream, bool) {
	c.mu.Lock()
	up, ok := c.m[string(key)]
	c.mu.Unlock()
	return up, ok
}
