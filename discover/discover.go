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
// service user lacks the ptrace access they need, for ns/net too), its
// listeners are those of sqlfwd's own namespace it can prove are the
// server's (owner.go); the rest is said in Server.Unproven. A server whose
// network namespace cannot be read is never taken for one of sqlfwd's own:
// only sockets sqlfwd's own namespace lists are its.

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
	// Unproven says, one line per path, why listeners of this server are
	// not listed: sockets that may be its but that sqlfwd cannot prove are
	// (owner.go), or none found. Such an entry has no TCP or Unix of its
	// own.
	Unproven []string
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
	// Listening sockets by network namespace, read once per namespace;
	// own is sqlfwd's own namespace's.
	byNS := map[string]*nsSockets{}
	var own *nsSockets
	ownTables := func() *nsSockets {
		if own == nil {
			own = readOwn(procRoot, o)
		}
		return own
	}
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
	comms := map[int]string{}
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
		comms[pid] = name
		if proto, ok := servers[name]; ok {
			cands = append(cands, candidate{pid, name, proto})
			protoOf[pid] = proto
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].pid < cands[j].pid })
	var owner *ownerCtx        // for servers whose fd links cannot be read
	taken := map[uint64]bool{} // sockets such a server took
	userDone := map[uint32]bool{}
	type pending struct {
		s     Server
		uid   uint32
		found bool
		maybe map[uint64]string
	}
	var unsaid []pending
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
		s := Server{Protocol: proto, PID: pid, Comm: name, OtherNetns: fdsOK && ns != "" && selfNS != "" && ns != selfNS}
		if !fdsOK {
			// No ptrace access (an unprivileged sqlfwd): only what can be
			// proven, from our own namespace's sockets (owner.go).
			if owner == nil {
				owner = &ownerCtx{procRoot: procRoot, census: takeCensus(procRoot, comms), live: o.Netlink}
				if o.Netlink {
					mount := cgroup2Mount(filepath.Join(procRoot, "self", "mountinfo"))
					owner.cgroupID = func(path string) uint64 { return cgroupID(mount, path) }
				}
			}
			groups, maybe := attribute(owner, s, uid, readCgroup(filepath.Join(dir, "cgroup")), ownTables(), taken)
			for _, g := range groups {
				srv := s
				srv.TCP, srv.Unix = g.tcp, g.unix
				out = append(out, srv)
			}
			// a server of a user that runs only servers with nothing
			// left to it, after another of that user took its sockets,
			// is one of theirs (or a backend)
			userOnly := uid != 0 && owner.census.byUID[uid] == proto
			if len(groups) == 0 && len(maybe) == 0 && userOnly && userDone[uid] {
				continue
			}
			userDone[uid] = userDone[uid] || len(groups) > 0
			unsaid = append(unsaid, pending{s, uid, len(groups) > 0, maybe})
			continue
		}
		var socks *nsSockets
		switch {
		case ns == "" || ns == selfNS:
			// our own namespace, or one we cannot name: then only the
			// sockets our own namespace has are taken, never the
			// process's own net/ tables as if they were ours
			socks = ownTables()
		default:
			socks = byNS[ns]
			if socks == nil {
				// A namespace's tables, read through a process that stays.
				// One that exits while it is read (a backend) leaves them
				// unread, and they are read again through the next process.
				socks = readTables(filepath.Join(dir, "net"))
				if socks != nil {
					byNS[ns] = socks
				}
			}
		}
		if socks == nil {
			continue
		}
		for ino := range inodes {
			if l, ok := socks.tcp[ino]; ok {
				s.TCP = append(s.TCP, l.addr)
			}
			if l, ok := socks.unix[ino]; ok {
				s.Unix = append(s.Unix, l.path)
			}
		}
		if len(s.TCP)+len(s.Unix) == 0 {
			if ns == "" {
				// cannot tell a backend from a server of another namespace
				s.Unproven = []string{"its network namespace cannot be read and none of its sockets listens in sqlfwd's"}
				out = append(out, s)
			}
			continue // a backend or helper process: its sockets are not listeners
		}
		sort.Slice(s.TCP, func(i, j int) bool { return s.TCP[i].String() < s.TCP[j].String() })
		sort.Strings(s.Unix)
		out = append(out, s)
	}
	// what might be a server's and is no other's, once all have picked
	for _, p := range unsaid {
		if why := unproven(p.uid, p.found, p.maybe, taken); len(why) > 0 {
			p.s.Unproven = why
			out = append(out, p.s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
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

// nsSockets are one network namespace's listening sockets by inode.
type nsSockets struct {
	tcp  map[uint64]tcpListener
	unix map[uint64]unixListener
}

// readOwn reads sqlfwd's own namespace's listeners: through sock_diag
// when asked (owners, cgroups and bound inodes included), else, or where
// it fails, from procRoot/self/net.
func readOwn(procRoot string, o Options) *nsSockets {
	net := filepath.Join(procRoot, "self", "net")
	if o.Netlink {
		s := &nsSockets{tcp: map[uint64]tcpListener{}, unix: map[uint64]unixListener{}}
		if netlinkTCPListeners(s.tcp) != nil {
			s.tcp = map[uint64]tcpListener{}
			readTCPListeners(filepath.Join(net, "tcp"), s.tcp)
			readTCPListeners(filepath.Join(net, "tcp6"), s.tcp)
		}
		if netlinkUnixListeners(s.unix) != nil {
			s.unix = map[uint64]unixListener{}
			readUnixListeners(filepath.Join(net, "unix"), s.unix)
		}
		return s
	}
	if s := readTables(net); s != nil {
		return s
	}
	return &nsSockets{tcp: map[uint64]tcpListener{}, unix: map[uint64]unixListener{}}
}

// readTables reads a net/ directory's tcp, tcp6 and unix; nil when one of
// them cannot be read.
func readTables(netDir string) *nsSockets {
	s := &nsSockets{tcp: map[uint64]tcpListener{}, unix: map[uint64]unixListener{}}
	ok := readTCPListeners(filepath.Join(netDir, "tcp"), s.tcp)
	ok = readTCPListeners(filepath.Join(netDir, "tcp6"), s.tcp) && ok
	ok = readUnixListeners(filepath.Join(netDir, "unix"), s.unix) && ok
	if !ok {
		return nil
	}
	return s
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

// tcpListener is one listening TCP socket.
type tcpListener struct {
	addr netip.AddrPort
	uid  uint32
	// cgroup is the id of the cgroup v2 the socket was created in (from
	// sock_diag; 0 when unknown)
	cgroup uint64
}

// unixListener is one listening unix socket with a path.
type unixListener struct {
	path string
	// uid, the socket's owner, and vfsIno, the inode of the file it is
	// bound to, come from sock_diag; net/unix has neither
	uid      uint32
	uidKnown bool
	vfsIno   uint32
	vfsKnown bool
}

func readTCPListeners(path string, into map[uint64]tcpListener) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return parseTCP(f, into) == nil
}

func readUnixListeners(path string, into map[uint64]unixListener) bool {
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
func parseUnix(r io.Reader, into map[uint64]unixListener) error {
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
		into[ino] = unixListener{path: f[7]}
	}
	return sc.Err()
}
