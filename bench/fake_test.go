package bench

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// fakeServer answers every byte with one byte on 127.0.0.1, optionally
// after a delay, and can be paused like a SIGSTOPped database: while paused
// it reads but answers nothing.
type fakeServer struct {
	ln    net.Listener
	delay time.Duration
	gate  sync.RWMutex
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newFakeServer(t *testing.T, delay time.Duration) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, delay: delay}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				buf := make([]byte, 1)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if s.delay > 0 {
						time.Sleep(s.delay)
					}
					s.gate.RLock()
					s.gate.RUnlock()
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) Pause() error  { s.gate.Lock(); return nil }
func (s *fakeServer) Resume() error { s.gate.Unlock(); return nil }

type fakeOp struct{ c net.Conn }

func (o fakeOp) Do(ctx context.Context, _ int64) error {
	dl := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	o.c.SetDeadline(dl)
	if _, err := o.c.Write([]byte{'x'}); err != nil {
		return err
	}
	var b [1]byte
	_, err := o.c.Read(b[:])
	return err
}
func (o fakeOp) Close() error { return o.c.Close() }

func (s *fakeServer) open(ctx context.Context) (Op, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	return fakeOp{c}, nil
}
