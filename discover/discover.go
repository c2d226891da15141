package discover

// The servers are read from a /proc tree passed in (the live "/proc", or a
// fixture in tests); nothing connects anywhere.
//
// A server is a process whose command name is a known server's (postgres,
// postmaster; mysqld, mariadbd) holding listening sockets. Its TCP listeners
// come from its network namespace's net/tcp and net/tcp6 (state 0A,
// LISTEN), matched to the process through the socket inodes of its
// fd/ links; its unix sockets from net/unix (flag __SO_ACCEPTCON). Example
// lines:
//
//	net/tcp:  1: 0100007F:5F53 00000000:0000 0A ... 101 0 45803 1 ...   127.0.0.1:24403, inode 45803
//	net/unix: 00000000f57af682: 00000002 00000000 00010000 0001 01 45804 /run/postgresql/.s.PGSQL.5432
//	fd/7 -> socket:[45803]

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Protocol names what a server speaks.
type Protocol string

// Protocols discovery knows.
const (
	Postgres Protocol = "postgres"
	MySQL    Protocol = "mysql"
)

// servers maps command names (/proc/<pid>/comm) to their protocol.
var servers = map[string]Protocol{
	"postgres":   Postgres,
	"postmaster": Postgres,
	"mysqld":     MySQL,
	"mariadbd":   MySQL,
}

// Server is one server process and what it listens on.
type Server struct {
	Protocol Protocol
	PID      int
	Comm     string
	// TCP lists the listening addresses; an unspecified address (0.0.0.0,
	// ::) means every address of the namespace.
	TCP []netip.AddrPort
	// Unix lists the listening unix socket paths (abstract ones, which
	// start with "@", included).
	Unix []string
	// OtherNetns: the server runs in another network namespace than the
	// process that reads procRoot/self (a container); its addresses are
	// that namespace's.
	OtherNetns bool
}

// Find returns the servers under procRoot, sorted by protocol and PID. A
// process that disappears while it is read is skipped; only an unreadable
// procRoot is an error.
func Find(procRoot string) ([]Server, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	selfNS, _ := os.Readlink(filepath.Join(procRoot, "self", "ns", "net"))
	var out []Server
	// Listening sockets by network namespace, read once per namespace.
	type nsSockets struct {
		tcp  map[uint64]netip.AddrPort
		unix map[uint64]string
	}
	byNS := map[string]*nsSockets{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		proto, ok := servers[name]
		if !ok {
			continue
		}
		inodes := socketInodes(filepath.Join(dir, "fd"))
		if len(inodes) == 0 {
			continue
		}
		ns, _ := os.Readlink(filepath.Join(dir, "ns", "net"))
		socks := byNS[ns]
		if socks == nil {
			socks = &nsSockets{tcp: map[uint64]netip.AddrPort{}, unix: map[uint64]string{}}
			for _, f := range []string{"tcp", "tcp6"} {
				readTCPListeners(filepath.Join(dir, "net", f), socks.tcp)
			}
			readUnixListeners(filepath.Join(dir, "net", "unix"), socks.unix)
			byNS[ns] = socks
		}
		s := Server{Protocol: proto, PID: pid, Comm: name, OtherNetns: ns != "" && selfNS != "" && ns != selfNS}
		for ino := range inodes {
			if a, ok := socks.tcp[ino]; ok {
				s.TCP = append(s.TCP, a)
			}
			if p, ok := socks.unix[ino]; ok {
				s.Unix = append(s.Unix, p)
			}
		}
		if len(s.TCP)+len(s.Unix) == 0 {
			continue // a backend or helper process: its sockets are not listeners
		}
		sort.Slice(s.TCP, func(i, j int) bool { return s.TCP[i].String() < s.TCP[j].String() })
		sort.Strings(s.Unix)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Protocol != out[j].Protocol {
			return out[i].Protocol < out[j].Protocol
		}
		return out[i].PID < out[j].PID
	})
	return out, nil
}

// socketInodes reads the socket inodes a process holds open.
func socketInodes(fdDir string) map[uint64]struct{} {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return nil
	}
	out := map[uint64]struct{}{}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			continue
		}
		if rest, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil {
				out[ino] = struct{}{}
			}
		}
	}
	return out
}

func readTCPListeners(path string, into map[uint64]netip.AddrPort) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = parseTCP(f, into)
}

func readUnixListeners(path string, into map[uint64]string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = parseUnix(f, into)
}

// tcpListen is the LISTEN state in net/tcp (TCP_LISTEN).
const tcpListen = "0A"

// parseTCP reads net/tcp or net/tcp6 and adds every listening socket's
// inode and local address. Malformed lines are skipped.
func parseTCP(r io.Reader, into map[uint64]netip.AddrPort) error {
	sc := bufio.NewScanner(r)
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		ap, err := parseHexAddr(f[1])
		if err != nil {
			continue
		}
		ino, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		into[ino] = ap
	}
	return sc.Err()
}

// parseHexAddr reads "0100007F:5F53" (IPv4) or a 32-digit IPv6 address,
// both in the kernel's host byte order per 32-bit word.
func parseHexAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return netip.AddrPort{}, err
	}
	switch len(b) {
	case 4:
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], binary.LittleEndian.Uint32(b))
		return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(port)), nil
	case 16:
		var a [16]byte
		for i := 0; i < 4; i++ {
			binary.BigEndian.PutUint32(a[4*i:], binary.LittleEndian.Uint32(b[4*i:]))
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a).Unmap(), uint16(port)), nil
	}
	return netip.AddrPort{}, fmt.Errorf("address of %d bytes", len(b))
}

// soAcceptCon is __SO_ACCEPTCON in net/unix's Flags: a listening socket.
const soAcceptCon = 1 << 16

// parseUnix reads net/unix and adds every listening socket's inode and path.
func parseUnix(r io.Reader, into map[uint64]string) error {
	sc := bufio.NewScanner(r)
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue // no path: an unnamed socket
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || flags&soAcceptCon == 0 {
			continue
		}
		ino, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		into[ino] = f[7]
	}
	return sc.Err()
}
