package mysql

// A session whose client asks for CLIENT_COMPRESS (and whose server offers
// it) is compressed on both legs from the first command after the login's
// OK: each leg's connection is a compConn, which inflates what it reads
// (wire/mysql's Decompressor) and compresses what it writes (Compressor),
// so that the framers, the engine and the relay loops see the plain packet
// stream exactly as they do without compression, and nothing reaches the
// server that the relay did not frame and judge: the server inflates the
// bytes sqlfw compressed, not the client's. A session without compression
// has no compConn at all (the hot path is unchanged).
//
// The compressed packets' ids are kept per leg as the peers keep them: a
// reply's first compressed packet continues after the last one the peer
// sent, and on the server leg a write that begins a command starts at 0
// (the server resets its count before reading a command, net_new_transaction
// in sql/net_serv.cc); toServer says which (regionCmd). A malformed
// compressed packet is a read error: the loop reading it logs it, counts a
// protocol error and closes the session.

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

type compConn struct {
	net.Conn
	// on (reads): set before the packet after which the peer compresses
	// (the login's OK) is written or read; a read that returns after it
	// is taken as compressed bytes.
	on atomic.Bool
	d  *wire.Decompressor // the reading goroutine's
	// budget is charged for the Decompressor's buffers (the framers').
	budget wire.Budget
	// read counts compressed packets read and rseq is the id after the
	// last (the reading goroutine stores, writers load).
	read atomic.Uint64
	rseq atomic.Int32

	wmu sync.Mutex
	c   *wire.Compressor // nil until writes are compressed
	// seen is read's value at the last write; cmd: the next write begins
	// a command (server leg).
	seen uint64
	cmd  bool
}

func newCompConn(c net.Conn, b wire.Budget) *compConn { return &compConn{Conn: c, budget: b} }

// release gives back the Decompressor's budget; called once both loops
// have ended.
func (c *compConn) release() {
	if c.d != nil {
		c.d.Close()
	}
}

// NetConn is the connection under the compression (relay.Arrived).
func (c *compConn) NetConn() net.Conn { return c.Conn }

// startReads makes reads inflate from now on.
func (c *compConn) startReads() { c.on.Store(true) }

// startWrites makes writes compressed from now on.
func (c *compConn) startWrites() {
	c.wmu.Lock()
	c.c = wire.NewCompressor(c.Conn)
	c.seen = c.read.Load()
	c.c.SetSeq(int(c.rseq.Load()))
	c.wmu.Unlock()
}

func (c *compConn) Read(p []byte) (int, error) {
	if c.d == nil {
		n, err := c.Conn.Read(p)
		if !c.on.Load() {
			return n, err
		}
		// bytes that arrived after the switch are compressed
		c.d = wire.NewDecompressor(c.Conn, p[:n])
		if c.budget != nil {
			c.d.SetBudget(c.budget)
		}
	}
	n, err := c.d.Read(p)
	if k := c.d.Packets(); k != c.read.Load() {
		c.rseq.Store(int32(c.d.Seq()))
		c.read.Store(k)
	}
	return n, err
}

// beginCommand says whether the next write begins a command.
func (c *compConn) beginCommand(cmd bool) {
	c.wmu.Lock()
	c.cmd = cmd
	c.wmu.Unlock()
}

func (c *compConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.c == nil {
		return c.Conn.Write(b)
	}
	switch r := c.read.Load(); {
	case c.cmd:
		c.c.SetSeq(0)
		c.seen, c.cmd = r, false
	case r != c.seen:
		// the peer spoke since: the reply continues after its packet
		c.c.SetSeq(int(c.rseq.Load()))
		c.seen = r
	}
	return c.c.Write(b)
}

// compressed reports whether the client and the server agreed on
// compression: the relay then follows it on both legs.
func compressed(caps wire.Caps) bool { return caps.Has(wire.CapCompress) }

// startCompression switches both legs to compressed packets at the login's
// OK, which fr (the server leg's framer) has just read and which is not yet
// written to the client: from the next read on the server leg, from the
// first byte the client sends after it, and every write to the server; the
// client leg's writes once the OK is written (toClient). The server sends
// nothing after its OK before a command: bytes already read behind it are
// a protocol error.
func (s *session) startCompression(fr *wire.Framer) bool {
	if fr.Unscanned() > 0 {
		s.env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Error("closing connection: the server sent more after its OK to the login of a compressed session")
		return false
	}
	s.scomp.startReads()
	s.scomp.startWrites()
	s.ccomp.startReads()
	// the inner ids are the peers' own (wire/mysql compress.go); the
	// client's framer is toServer's, which reads no command before the
	// phase moves on (after this)
	fr.SetSeqChecks(false)
	s.cfr.SetSeqChecks(false)
	return true
}
