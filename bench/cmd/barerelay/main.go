// Command barerelay is the floor a Go relay sets: a TCP relay that copies
// both directions through a 32 KiB user-space buffer, one goroutine per
// direction, with explicit Read/Write loops (io.Copy between TCP conns would
// splice(2) in the kernel, which a parsing relay cannot do). It frames
// nothing, judges nothing, times and counts nothing. scripts/profile-relay.sh
// profiles it next to sqlfwd and HAProxy (docs/performance.md, "Where one
// statement's CPU goes (issue 15)").
//
//	barerelay --listen 127.0.0.1:6433 --upstream 127.0.0.1:5432
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
)

// bufSize is the user-space buffer per direction, as large as a relay's
// read buffer.
const bufSize = 32 << 10

func main() {
	listen := flag.String("listen", "127.0.0.1:6433", "`host:port` where clients connect")
	upstream := flag.String("upstream", "", "`host:port` of the server")
	flag.Parse()
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
	go pump(s, c, done)
	go pump(c, s, done)
	<-done
}

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
