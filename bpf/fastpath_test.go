package bpf

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand"
	"net"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// pgMsg is one backend message.
func pgMsg(typ byte, body []byte) []byte {
	m := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(m[1:], uint32(4+len(body)))
	return append(m, body...)
}

// TestFastOrder: a server stream of messages the kernel relays (DataRow,
// CommandComplete, ReadyForQuery), then one it must hand to user space
// (ErrorResponse), then more, written in chunks that split messages across
// segments. User space resumes the leg once, then forwards whatever it
// reads after a Halt. The client must read exactly the server's bytes, in
// order: the kernel's part, then user space's, with nothing lost or
// duplicated; the kernel reports what it relayed.
func TestFastOrder(t *testing.T) {
	requireKernel(t, ebpf.SkSKB)
	f, err := LoadFast(nil)
	if err != nil {
		t.Fatalf("LoadFast: %v", err)
	}
	defer f.Close()

	srvLn := listenTCP(t, "127.0.0.1:0")
	cliLn := listenTCP(t, "127.0.0.1:0")
	srvc := make(chan net.Conn, 1)
	go func() { c, _ := srvLn.Accept(); srvc <- c }()
	up, err := net.Dial("tcp", srvLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	srv := <-srvc
	defer srv.Close()
	clc := make(chan net.Conn, 1)
	go func() { c, _ := cliLn.Accept(); clc <- c }()
	app, err := net.Dial("tcp", cliLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	leg := <-clc
	defer leg.Close()

	l, err := f.Attach(up, leg)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer l.Close()
	l.Resume(0, 'I', func() bool { return true })

	var stream []byte
	readys := 0
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		stream = append(stream, pgMsg('D', bytes.Repeat([]byte{byte('a' + i%26)}, rng.Intn(3000)))...)
		if i%10 == 9 {
			stream = append(stream, pgMsg('C', []byte("SELECT 10\x00"))...)
			stream = append(stream, pgMsg('Z', []byte{'I'})...)
			readys++
		}
	}
	kernelPart := len(stream)
	stream = append(stream, pgMsg('E', []byte("SERROR\x00C42601\x00Mboom\x00\x00"))...)
	for i := 0; i < 50; i++ {
		stream = append(stream, pgMsg('D', bytes.Repeat([]byte{'z'}, rng.Intn(5000)))...)
	}
	stream = append(stream, pgMsg('Z', []byte{'I'})...)

	// the server: chunks of random sizes, some apart in time
	go func() {
		for off := 0; off < len(stream); {
			n := min(1+rng.Intn(9000), len(stream)-off)
			if _, err := srv.Write(stream[off : off+n]); err != nil {
				return
			}
			off += n
			if rng.Intn(4) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	// user space: forwards whatever reaches it, after a Halt
	var rep FastReport
	halts := 0
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				if err := l.Halt(func(r FastReport) { rep = r; halts++ }); err != nil {
					t.Errorf("Halt: %v", err)
					return
				}
				w, _ := leg.Write(buf[:n])
				l.Wrote(w)
			}
			if err != nil {
				return
			}
		}
	}()

	got := make([]byte, len(stream))
	_ = app.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(app, got); err != nil {
		t.Fatalf("client read %v", err)
	}
	if !bytes.Equal(got, stream) {
		i := 0
		for i < len(got) && got[i] == stream[i] {
			i++
		}
		t.Fatalf("client stream differs from the server's at byte %d of %d", i, len(stream))
	}
	if halts != 1 || rep.Redirected == 0 || rep.Redirected > uint64(kernelPart) || rep.Ready == 0 || rep.Ready > uint64(readys) || rep.Status != 'I' {
		t.Errorf("halts %d, report %+v: want one halt, the kernel relaying part of the first %d bytes and ≤ %d ReadyForQuery", halts, rep, kernelPart, readys)
	}
	t.Logf("kernel relayed %d of %d bytes (%d ReadyForQuery) before the ErrorResponse", rep.Redirected, len(stream), rep.Ready)
}
