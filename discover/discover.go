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
//
// Where a server's fd/ links cannot be read (sqlfwd as an unprivileged
// service user lacks the ptrace access they need), its TCP listeners are
// the listening sockets owned by the server's user (the uid column of
// net/tcp; the process's uid from status), and its unix sockets those named
// the server's way (PostgreSQL's .s.PGSQL.<port> for one of its ports).

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

// Options change how Find reads.
type Options struct {
	// Netlink reads the listening TCP sockets of the caller's own network
	// namespace through sock_diag (netlink.go) instead of net/tcp and
	// net/tcp6, whose cost grows with every connection of the host. Only
	// for the live /proc: procRoot/self must be the caller. Where netlink
	// fails, the files are read.
	Netlink bool
}

// Find returns the servers under procRoot, sorted by protocol and PID. A
// process that disappears while it is read is skipped; only an unreadable
// procRoot is an error.
func Find(procRoot string) ([]Server, error) { return FindWith(procRoot, Options{}) }

// FindWith is Find with options.
func FindWith(procRoot string, o Options) ([]Server, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	selfNS, _ := os.Readlink(filepath.Join(procRoot, "self", "ns", "net"))
	var out []Server
	// Listening sockets by network namespace, read once per namespace.
	type nsSockets struct {
		tcp  map[uint64]tcpListener
		unix map[uint64]string
	}
	byNS := map[string]*nsSockets{}
	claimed := map[uint32]bool{} // users whose sockets a server took by owner
	// The server processes first: a child of a server process of the same
	// protocol (a PostgreSQL backend, which closes the listening sockets
	// after fork) is skipped unread, so that a scan costs per server, not
	// per connection.
	type candidate struct {
		pid   int
		name  string
		proto Protocol
	}
	var cands []candidate
	protoOf := map[int]Protocol{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		if proto, ok := servers[name]; ok {
			cands = append(cands, candidate{pid, name, proto})
			protoOf[pid] = proto
		}
	}
	for _, c := range cands {
		pid, name, proto := c.pid, c.name, c.proto
		dir := filepath.Join(procRoot, strconv.Itoa(pid))
		uid, ppid, uidOK := processIDs(filepath.Join(dir, "status"))
		if uidOK && ppid != pid && protoOf[ppid] == proto {
			continue
		}
		inodes, fdsOK := socketInodes(filepath.Join(dir, "fd"))
		if !fdsOK && !uidOK {
			continue
		}
		ns, _ := os.Readlink(filepath.Join(dir, "ns", "net"))
		socks := byNS[ns]
		if socks == nil {
			// A namespace's tables, read through a process that stays:
			// ourselves for our own namespace. A process that exits while
			// it is read (a backend) leaves them unread, and they are read
			// again through the next process.
			dirs := []string{filepath.Join(dir, "net")}
			if ns != "" && ns == selfNS {
				dirs = append([]string{filepath.Join(procRoot, "self", "net")}, dirs...)
				if o.Netlink {
					own := &nsSockets{tcp: map[uint64]tcpListener{}, unix: map[uint64]string{}}
					if netlinkTCPListeners(own.tcp) == nil && readUnixListeners(filepath.Join(procRoot, "self", "net", "unix"), own.unix) {
						socks, dirs = own, nil
						byNS[ns] = socks
					}
				}
			}
			for _, netDir := range dirs {
				socks = &nsSockets{tcp: map[uint64]tcpListener{}, unix: map[uint64]string{}}
				ok := readTCPListeners(filepath.Join(netDir, "tcp"), socks.tcp)
				ok = readTCPListeners(filepath.Join(netDir, "tcp6"), socks.tcp) && ok
				ok = readUnixListeners(filepath.Join(netDir, "unix"), socks.unix) && ok
				if ok {
					byNS[ns] = socks
					break
				}
			}
		}
		s := Server{Protocol: proto, PID: pid, Comm: name, OtherNetns: ns != "" && selfNS != "" && ns != selfNS}
		if fdsOK {
			for ino := range inodes {
				if l, ok := socks.tcp[ino]; ok {
					s.TCP = append(s.TCP, l.addr)
				}
				if p, ok := socks.unix[ino]; ok {
					s.Unix = append(s.Unix, p)
				}
			}
		} else if !claimed[uid] {
			// The first process of the user stands for its servers (its
			// backends share the uid): one server per port.
			claimed[uid] = true
			for _, byPort := range byOwner(socks.tcp, socks.unix, uid, proto) {
				srv := s
				srv.TCP, srv.Unix = byPort.tcp, byPort.unix
				out = append(out, srv)
			}
			continue
		}
		if len(s.TCP)+len(s.Unix) == 0 {
			continue // a backend or helper process: its sockets are not listeners
		}
		sort.Slice(s.TCP, func(i, j int) bool { return s.TCP[i].String() < s.TCP[j].String() })
		sort.Strings(s.Unix)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Protocol != b.Protocol {
			return a.Protocol < b.Protocol
		}
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		return len(a.TCP) > 0 && len(b.TCP) > 0 && a.TCP[0].Port() < b.TCP[0].Port()
	})
	return out, nil
}

// byOwner is the fallback without fd links: the TCP listeners the server's
// user owns, grouped by port, each with the unix socket named the server's
// way for that port.
func byOwner(tcp map[uint64]tcpListener, unix map[uint64]string, uid uint32, proto Protocol) []portListeners {
	byPort := map[uint16]*portListeners{}
	var ports []uint16
	for _, l := range tcp {
		if l.uid != uid {
			continue
		}
		p := byPort[l.addr.Port()]
		if p == nil {
			p = &portListeners{}
			byPort[l.addr.Port()] = p
			ports = append(ports, l.addr.Port())
		}
		p.tcp = append(p.tcp, l.addr)
	}
	if proto == Postgres {
		for _, path := range unix {
			port, ok := strings.CutPrefix(filepath.Base(path), ".s.PGSQL.")
			if n, err := strconv.ParseUint(port, 10, 16); ok && err == nil && byPort[uint16(n)] != nil {
				byPort[uint16(n)].unix = append(byPort[uint16(n)].unix, path)
			}
		}
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	out := make([]portListeners, 0, len(ports))
	for _, p := range ports {
		l := byPort[p]
		sort.Slice(l.tcp, func(i, j int) bool { return l.tcp[i].String() < l.tcp[j].String() })
		sort.Strings(l.unix)
		out = append(out, *l)
	}
	return out
}

type portListeners struct {
	tcp  []netip.AddrPort
	unix []string
}

// processIDs reads the real uid and the parent's pid (0 when the file has
// none) from a status file; ok says whether the uid was read.
func processIDs(path string) (uid uint32, ppid int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, found := strings.CutPrefix(line, "PPid:"); found {
			ppid, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
		if rest, found := strings.CutPrefix(line, "Uid:"); found {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, ppid, false
			}
			u, err := strconv.ParseUint(f[0], 10, 32)
			uid, ok = uint32(u), err == nil
		}
	}
	return uid, ppid, ok
}

// socketInodes reads the socket inodes a process holds open; ok is false
// when its fd directory cannot be read.
func socketInodes(fdDir string) (map[uint64]struct{}, bool) {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, false
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
	return out, true
}

// tcpListener is one listening socket of net/tcp.
type tcpListener struct {
	addr netip.AddrPort
	uid  uint32
}

func readTCPListeners(path string, into map[uint64]tcpListener) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return parseTCP(f, into) == nil
}

func readUnixListeners(path string, into map[uint64]string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return parseUnix(f, into) == nil
}

// tcpListen is the LISTEN state in net/tcp (TCP_LISTEN).
const tcpListen = "0A"

// parseTCP reads net/tcp or net/tcp6 and adds every listening socket's
// inode, local address and owner. Malformed lines are skipped.
func parseTCP(r io.Reader, into map[uint64]tcpListener) error {
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
		uid, err := strconv.ParseUint(f[7], 10, 32)
		if err != nil {
			continue
		}
		into[ino] = tcpListener{addr: ap, uid: uint32(uid)}
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
