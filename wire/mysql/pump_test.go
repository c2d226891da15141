package mysql

// A test-only relay between go-sql-driver/mysql and a real MariaDB: it
// frames both directions with Framer and follows every response with
// Response, the way relay/mysql will, and records what it saw.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing/iotest"
)

// pumpEvent goes from the client leg to the server leg: the handshake
// response's capabilities, then each command sent.
type pumpEvent struct {
	caps    Caps
	cmd     byte
	lastSeq int
}

// pump relays one connection.
type pump struct {
	strip Caps

	mu sync.Mutex
	// sent counts commands forwarded to the server; done counts the
	// responses Response found complete (and commands without one).
	sent, done int
	errs       []error
	// c2s and s2c are the bytes as received; c2sEnds the end offsets of the
	// client's logical packets, s2cDone the offsets in s2c at which a
	// response (the authentication phase first) was complete.
	c2s, s2c         []byte
	c2sEnds, s2cDone []int
	cmds             []byte

	events  chan pumpEvent
	authed  atomic.Bool
	infile  atomic.Int32 // the sequence id after a LOCAL INFILE request, +1 (0: none)
	closing atomic.Bool
}

func newPump(strip Caps) *pump {
	return &pump{strip: strip, events: make(chan pumpEvent, 16)}
}

func (p *pump) fail(err error) {
	if p.closing.Load() && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
		return
	}
	p.mu.Lock()
	p.errs = append(p.errs, err)
	p.mu.Unlock()
}

func (p *pump) counts() (sent, done int, errs []error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent, p.done, append([]error(nil), p.errs...)
}

// recorder tees what a leg reads into the pump's record.
type recorder struct {
	r   io.Reader
	p   *pump
	dst *[]byte
}

func (r recorder) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.mu.Lock()
	*r.dst = append(*r.dst, b[:n]...)
	r.p.mu.Unlock()
	return n, err
}

// run relays client <-> server until either side closes.
func (p *pump) run(client, server net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := p.clientLeg(client, server); err != nil {
			p.fail(fmt.Errorf("client leg: %w", err))
		}
		p.closing.Store(true)
		server.Close()
		close(p.events)
	}()
	go func() {
		defer wg.Done()
		if err := p.serverLeg(server, client); err != nil {
			p.fail(fmt.Errorf("server leg: %w", err))
		}
		p.closing.Store(true)
		client.Close()
	}()
	wg.Wait()
}

// clientLeg frames what the client sends: the handshake response, the
// authentication rounds, then commands (and LOCAL INFILE data).
func (p *pump) clientLeg(client, server net.Conn) error {
	fr := NewFramer(recorder{client, p, &p.c2s}, 0, 0, 0)
	offset := 0
	first := true
	inData := false
	var errBuf []byte
	for {
		if err := fr.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for {
			if !inData {
				if s := p.infile.Load(); s != 0 {
					inData = true
					fr.Expect(int(s - 1))
					fr.SetTypes(nil)
				} else if p.authed.Load() {
					fr.ExpectCommands()
					fr.SetTypes(CommandTypes)
				} else {
					fr.Expect(SeqAny)
				}
			}
			m, err := fr.Next(WantAll)
			if err != nil {
				return err
			}
			if m == nil {
				break
			}
			if _, err := server.Write(fr.TakeBefore(m)); err != nil {
				return err
			}
			offset += len(m)
			p.mu.Lock()
			p.c2sEnds = append(p.c2sEnds, offset)
			p.mu.Unlock()
			switch {
			case first:
				first = false
				r, err := ParseHandshakeResponse(FirstFragment(m))
				if err != nil {
					return err
				}
				if r.SSLRequest {
					return errors.New("client asked for TLS, which was stripped")
				}
				p.events <- pumpEvent{caps: r.Caps}
			case inData:
				if len(m) == HeaderLen {
					// the empty packet ends the upload
					inData = false
					p.infile.Store(0)
				}
			case p.authed.Load():
				cmd := m[HeaderLen]
				p.mu.Lock()
				p.cmds = append(p.cmds, cmd)
				p.sent++
				if !NewResponse(0).Begin(cmd) {
					p.done++ // no response: complete when sent
				}
				p.mu.Unlock()
				if blocked(m) {
					// answered here, never sent: the ERR continues the
					// command's ids, and the next command starts at 0
					errBuf = AppendErr(errBuf[:0], LastSeq(m)+1, ErrBlockedTest, "42000", "blocked by sqlfw (test)")
					p.mu.Lock()
					p.done++
					p.mu.Unlock()
					if _, err := client.Write(errBuf); err != nil {
						return err
					}
					continue
				}
				p.events <- pumpEvent{cmd: cmd, lastSeq: LastSeq(m)}
			}
			if _, err := server.Write(m); err != nil {
				return err
			}
		}
		offset += len(fr.Take()) // nothing is passed over: WantAll
	}
}

// serverLeg frames what the server sends, rewriting the greeting's
// capabilities and following each response.
func (p *pump) serverLeg(server, client net.Conn) error {
	fr := NewFramer(recorder{server, p, &p.s2c}, 0, 0, 0)
	fr.SetWantLong(false)
	var r *Response
	greeted := false
	offset := 0
	for {
		if err := fr.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for {
			want := WantAll
			if r != nil {
				want = r.Want()
				if !p.authed.Load() || r.Infile() {
					// the client's packets move the ids on
					fr.Expect(SeqAny)
				}
			}
			m, err := fr.Next(want)
			if err != nil {
				return err
			}
			if m == nil {
				break
			}
			before := fr.TakeBefore(m)
			offset += len(before) + len(m)
			if !greeted {
				greeted = true
				h, err := ParseHandshake(FirstFragment(m))
				if err != nil {
					return err
				}
				h.Strip(p.strip)
				if _, err := client.Write(m); err != nil {
					return err
				}
				ev, ok := <-p.events
				if !ok {
					return nil
				}
				r = NewResponse(ev.caps)
				r.BeginAuth()
				continue
			}
			if r.Done() {
				return fmt.Errorf("packet %x after the response was complete", m[:min(len(m), 16)])
			}
			done, err := r.Feed(m)
			if err != nil {
				return err
			}
			if r.Infile() {
				p.infile.Store(int32(LastSeq(m)+1)&0xff + 1)
			}
			if done {
				p.mu.Lock()
				p.s2cDone = append(p.s2cDone, offset)
				if p.authed.Load() {
					p.done++
				}
				p.mu.Unlock()
				p.authed.Store(true)
			}
			if _, err := client.Write(before); err != nil {
				return err
			}
			if _, err := client.Write(m); err != nil {
				return err
			}
			if done {
				if err := p.next(r, fr); err != nil {
					return err
				}
			}
		}
		rest := fr.Take()
		offset += len(rest)
		if _, err := client.Write(rest); err != nil {
			return err
		}
	}
}

// next waits for the next command that has a response; commands without
// one are complete at once.
func (p *pump) next(r *Response, fr *Framer) error {
	for {
		ev, ok := <-p.events
		if !ok {
			return nil
		}
		if !r.Begin(ev.cmd) {
			continue // counted by the client leg
		}
		fr.Expect((ev.lastSeq + 1) & 0xff)
		return nil
	}
}

// replay frames recorded streams offline, one byte at a time, the way the
// pump did live, and returns the client's packet ends and the offsets at
// which each response was complete.
func replay(c2s, s2c []byte, size int) (c2sEnds, s2cDone []int, err error) {
	// The client's packets: the handshake response, authentication
	// rounds, then commands (sequence id 0) and LOCAL INFILE data.
	cf := NewFramer(oneByte(c2s), size, 0, 0)
	var caps Caps
	var cmds [][2]int // command, last sequence id
	off := 0
	for {
		cf.Expect(SeqAny)
		m, err := nextPacket(cf, WantAll)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		off += len(m)
		c2sEnds = append(c2sEnds, off)
		if len(c2sEnds) == 1 {
			r, err := ParseHandshakeResponse(FirstFragment(m))
			if err != nil {
				return nil, nil, err
			}
			caps = r.Caps
		} else if Seq(m) == 0 && len(m) > HeaderLen && !blocked(m) {
			cmds = append(cmds, [2]int{int(m[HeaderLen]), LastSeq(m)})
		}
	}
	sf := NewFramer(oneByte(s2c), size, 0, 0)
	sf.SetWantLong(false)
	if _, err := nextPacket(sf, WantAll); err != nil {
		return nil, nil, fmt.Errorf("greeting: %w", err)
	}
	r := NewResponse(caps)
	r.BeginAuth()
	off = 0
	for {
		if r.Done() {
			if len(cmds) == 0 {
				break
			}
			c := cmds[0]
			cmds = cmds[1:]
			if !r.Begin(byte(c[0])) {
				continue
			}
			sf.Expect((c[1] + 1) & 0xff)
		}
		if s2cDone == nil || r.Infile() {
			sf.Expect(SeqAny) // the client's packets came in between
		}
		m, err := nextPacket(sf, r.Want())
		if err != nil {
			return nil, nil, err
		}
		done, err := r.Feed(m)
		if err != nil {
			return nil, nil, err
		}
		if done {
			s2cDone = append(s2cDone, sf.consumed())
		}
	}
	if sf.consumed() != len(s2c) {
		return nil, nil, fmt.Errorf("%d bytes after the last response", len(s2c)-sf.consumed())
	}
	return c2sEnds, s2cDone, nil
}

// byteCounter counts what a Framer has read; with consumed it tells the
// offset of the end of the packet Next returned last.
type byteCounter struct {
	r io.Reader
	n int
}

func (c *byteCounter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}

func oneByte(b []byte) io.Reader {
	return &byteCounter{r: iotest.OneByteReader(bytes.NewReader(b))}
}

// consumed is how far into the stream the Framer has scanned.
func (f *Framer) consumed() int { return f.src.(*byteCounter).n - (f.w - f.r) }

// nextPacket returns the next wanted packet, filling as needed, and io.EOF
// at a clean end.
func nextPacket(f *Framer, want *[256]bool) ([]byte, error) {
	for {
		m, err := f.Next(want)
		if err != nil || m != nil {
			if m != nil {
				f.TakeBefore(m)
			}
			return m, err
		}
		f.Take()
		if err := f.Fill(); err != nil {
			if errors.Is(err, io.EOF) && f.Buffered() == 0 && !f.MidPacket() {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// blockMark in a COM_QUERY or COM_STMT_PREPARE makes the pump answer the
// command itself with an ERR, as relay/mysql answers a denied statement.
const blockMark = "/*sqlfw-block*/"

// ErrBlockedTest is the error number of the pump's ERR.
const ErrBlockedTest = 1142

func blocked(m []byte) bool {
	p := FirstFragment(m)
	return len(p) > 0 && (p[0] == ComQuery || p[0] == ComStmtPrepare) && bytes.Contains(p, []byte(blockMark))
}
