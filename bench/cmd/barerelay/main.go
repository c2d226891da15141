// Command barerelay is the floor a Go relay sets: a TCP relay that copies
// both directions through a 32 KiB user-space buffer, one goroutine per
// direction, with explicit Read/Write loops (io.Copy between TCP conns would
// splice(2) in the kernel, which a parsing relay cannot do). It frames
// nothing, judges nothing, times and counts nothing. scripts/profile-relay.sh
// profiles it next to sqlfwd and HAProxy (docs/performance.md, "Where one
// statement's CPU goes (issue 15)").
//
//	barerelay --listen 127.0.0.1:6433 --upstream 127.0.0.1:5432 [--io net|raw]
//
// --io raw reads and writes with raw read(2) and write(2) inside the
// poller's syscall.RawConn callbacks (syscall.RawSyscall: no entersyscall,
// so an idle process's sysmon is not woken by every read and write), still
// parking on the netpoller when a socket is not ready. It measures what that
// I/O model would save, without touching sqlfwd's relay.
//
// Like every bench package it never imports daemon, relay or engine
// (layers_test.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// bufSize is the user-space buffer per direction, as large as a relay's
// read buffer.
const bufSize = 32 << 10

func main() {
	listen := flag.String("listen", "127.0.0.1:6433", "`host:port` where clients connect")
	upstream := flag.String("upstream", "", "`host:port` of the server")
	io := flag.String("io", "net", "net (net.Conn Read and Write) or raw (raw syscalls in RawConn callbacks)")
	flag.Parse()
	switch *io {
	case "net":
	case "raw":
		copyFn = rawPump
	default:
		fmt.Fprintln(os.Stderr, "barerelay: --io is net or raw")
		os.Exit(2)
	}
	if *upstream == "" {
		fmt.Fprintln(os.Stderr, "barerelay: --upstream is required")
		os.Exit(2)
	}
	// Plain TCP, as sqlfwd's listener (Go ≥ 1.24 would listen MPTCP here).
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "barerelay:", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "barerelay: accept:", err)
			continue
		}
		go relay(c, *upstream)
	}
}

// relay dials the server for client c and copies until either side closes.
func relay(c net.Conn, upstream string) {
	defer c.Close()
	var d net.Dialer
	d.SetMultipathTCP(false)
	s, err := d.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go copyFn(s, c, done)
	go copyFn(c, s, done)
	<-done
}

// copyFn is the copy loop --io chose.
var copyFn = pump

// pump copies src to dst through its own buffer, then signals done.
func pump(dst, src net.Conn, done chan<- struct{}) {
	buf := make([]byte, bufSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	done <- struct{}{}
}

// rawPump is pump with raw system calls in the RawConn callbacks: a read
// that would block returns false, so the goroutine parks on the netpoller
// and the callback runs again once the socket is readable.
func rawPump(dst, src net.Conn, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	rs, err1 := src.(*net.TCPConn).SyscallConn()
	rd, err2 := dst.(*net.TCPConn).SyscallConn()
	if err1 != nil || err2 != nil {
		return
	}
	buf := make([]byte, bufSize)
	for {
		var n int
		var rerr error
		err := rs.Read(func(fd uintptr) bool {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafePointer(buf)), uintptr(len(buf)))
			if e == syscall.EAGAIN {
				return false
			}
			n = int(r)
			if e != 0 {
				n, rerr = 0, e
			}
			return true
		})
		if err != nil || rerr != nil || n == 0 {
			return
		}
		off := 0
		var werr error
		err = rd.Write(func(fd uintptr) bool {
			for off < n {
				r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafePointer(buf[off:n])), uintptr(n-off))
				if e == syscall.EAGAIN {
					return false
				}
				if e != 0 {
					werr = e
					return true
				}
				off += int(r)
			}
			return true
		})
		if err != nil || werr != nil {
			return
		}
	}
}

// unsafePointer is the address of b's first byte, for a raw system call.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
