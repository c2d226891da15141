package discover

// Attributing listening sockets to a server whose fd links sqlfwd cannot
// read. An unprivileged sqlfwd (the unit's own user, without
// CAP_SYS_PTRACE) cannot read another user's /proc/PID/fd or ns/net: it
// does not know which sockets the server holds, nor in which network
// namespace it runs. It can read every process's comm, status, cgroup and
// cmdline (world-readable unless /proc is mounted with hidepid), the
// listening sockets of its own network namespace through sock_diag (each
// with its owner's uid and, for TCP, the cgroup it was created in; each
// unix socket with its path and the inode it is bound to), and the servers'
// configuration files where they are readable.
//
// A listening socket of sqlfwd's own namespace is a server's only when it
// can be proven:
//
//   - the socket's owner is the server's uid, and, when the kernel gives
//     the socket's cgroup, it is the server's cgroup; and
//   - one of: every process of that uid is the one server of the protocol
//     it runs (the mysql or postgres user; never root); every process of
//     the server's cgroup is (a unit of its own, as systemd runs it) and
//     the socket was created in it; or the server's own configuration (its command line,
//     my.cnf, postgresql.conf, or their documented defaults when every
//     source was read) names the port or the socket path.
//
// Everything else is left alone and said: a port of root that the first
// root mariadbd's user also owns is no proof (that was issue 23's
// "mysql-2024"), and neither is the order of two servers of one user or
// one cgroup: with two MariaDB servers run by mysql, a port or socket
// neither's configuration names is said, not given to the lower pid. The sockets found this way are all in sqlfwd's own
// namespace by construction, so a server of another namespace is never
// taken for a local one: it has no socket here and is reported as such.
// A unix socket is taken only when its path, seen from sqlfwd's mount
// namespace, is the very socket (same inode): not one of a private /tmp.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// procInfo is what any user can read of a process.
type procInfo struct {
	proto  Protocol // "" for a process that is no server
	uids   []uint32
	ppid   int
	cgroup string // cgroup v2 path ("0::" line), "" when unknown
}

// census is, per uid and per cgroup, the one protocol all its processes
// serve; other marks a uid or cgroup with any other process. serversByUID
// and serversByCgroup count the servers (a server process whose parent is
// no server of its protocol: a postmaster, not its backends): a user or
// cgroup of servers only proves a socket its server's only when it runs
// one, since nothing sqlfwd can read says which of two MariaDB servers of
// the mysql user listens where.
type census struct {
	byUID           map[uint32]Protocol
	byCgroup        map[string]Protocol
	serversByUID    map[uint32]int
	serversByCgroup map[string]int
}

// soleByUser: every process of uid serves proto and it is one server.
func (c census) soleByUser(uid uint32, proto Protocol) bool {
	return uid != 0 && c.byUID[uid] == proto && c.serversByUID[uid] == 1
}

// soleByCgroup: every process of cg serves proto and it is one server.
func (c census) soleByCgroup(cg string, proto Protocol) bool {
	return cg != "" && c.byCgroup[cg] == proto && c.serversByCgroup[cg] == 1
}

const other Protocol = "-"

func takeCensus(procRoot string, comms map[int]string) census {
	c := census{byUID: map[uint32]Protocol{}, byCgroup: map[string]Protocol{},
		serversByUID: map[uint32]int{}, serversByCgroup: map[string]int{}}
	note := func(m map[string]Protocol, k string, p Protocol) {
		if old, ok := m[k]; ok && old != p {
			p = other
		}
		m[k] = p
	}
	for pid, comm := range comms {
		pi, ok := readProcInfo(procRoot, pid, comm)
		if !ok {
			continue
		}
		p := pi.proto
		if p == "" {
			p = other
		} else if servers[comms[pi.ppid]] != p {
			for _, u := range pi.uids {
				c.serversByUID[u]++
			}
			if pi.cgroup != "" {
				c.serversByCgroup[pi.cgroup]++
			}
		}
		for _, u := range pi.uids {
			if old, ok := c.byUID[u]; ok && old != p {
				c.byUID[u] = other
			} else {
				c.byUID[u] = p
			}
		}
		if pi.cgroup != "" {
			note(c.byCgroup, pi.cgroup, p)
		}
	}
	return c
}

func readProcInfo(procRoot string, pid int, comm string) (procInfo, bool) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return procInfo{}, false
	}
	pi := procInfo{proto: servers[comm]}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "PPid:"); ok {
			pi.ppid, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			for _, f := range strings.Fields(rest) {
				if u, err := strconv.ParseUint(f, 10, 32); err == nil && !slices.Contains(pi.uids, uint32(u)) {
					pi.uids = append(pi.uids, uint32(u))
				}
			}
		}
	}
	if len(pi.uids) == 0 {
		return procInfo{}, false
	}
	pi.cgroup = readCgroup(filepath.Join(dir, "cgroup"))
	return pi, true
}

// readCgroup reads the cgroup v2 path of a process ("0::/system.slice/x").
func readCgroup(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return rest
		}
	}
	return ""
}

// cgroupID is the id the kernel gives sockets for a cgroup v2 path: the
// inode of its directory under the cgroup2 mount (0 when unknown).
func cgroupID(mount, path string) uint64 {
	if mount == "" || path == "" {
		return 0
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(mount, path), &st); err != nil {
		return 0
	}
	return st.Ino
}

// cgroup2Mount finds where cgroup2 is mounted from a mountinfo file.
func cgroup2Mount(mountinfo string) string {
	b, err := os.ReadFile(mountinfo)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if f, g := strings.Fields(pre), strings.Fields(post); ok && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			return f[4]
		}
	}
	return ""
}

// ownerCtx is what attributing needs beyond the server itself.
type ownerCtx struct {
	procRoot string
	census   census
	// cgroupID maps a cgroup v2 path to the id sockets carry (0 unknown);
	// nil for a fixture tree
	cgroupID func(path string) uint64
	// live: socket paths are this host's (stat them); false for a fixture
	live bool
}

// proofs says why a socket is the server's, for the log.
const (
	byUser   = "every process of its user is a server"
	byCgroup = "created in its cgroup, where every process is a server"
	byConfig = "named by its configuration"
	byName   = "named the server's way for a port of its user"
)

// attribute picks, from the listening sockets of sqlfwd's own namespace,
// those proven to be the server's (see the file comment); taken are
// inodes another server already has, and those picked are added. It
// returns the sockets grouped one server per TCP port (the unix socket
// with its port), and the sockets that might be its but are not proven
// (by inode, for unsaid once every server has had its pick).
func attribute(x *ownerCtx, s Server, uid uint32, cg string, own *nsSockets, taken map[uint64]bool) ([]portListeners, map[uint64]string) {
	cfg := readServerConfig(x.procRoot, s.PID, s.Protocol)
	userOnly := x.census.soleByUser(uid, s.Protocol)
	cgOnly := x.census.soleByCgroup(cg, s.Protocol)
	cgid := uint64(0)
	if x.cgroupID != nil {
		cgid = x.cgroupID(cg)
	}
	var tcp []uint64
	maybe := map[uint64]string{}
	for ino, l := range own.tcp {
		if taken[ino] || l.uid != uid {
			continue
		}
		if l.cgroup != 0 && cgid != 0 && l.cgroup != cgid {
			continue // created elsewhere: not this server's
		}
		if userOnly || (cgOnly && l.cgroup != 0 && l.cgroup == cgid) || cfg.hasPort(l.addr.Port()) {
			tcp = append(tcp, ino)
			continue
		}
		if uid != 0 || (l.cgroup != 0 && l.cgroup == cgid) {
			// root's listeners elsewhere are not worth naming
			maybe[ino] = l.addr.String()
		}
	}
	ports := map[uint16]bool{}
	for _, ino := range tcp {
		ports[own.tcp[ino].addr.Port()] = true
	}
	var unix []uint64
	for ino, l := range own.unix {
		if taken[ino] {
			continue
		}
		named := s.Protocol == Postgres && ports[pgSocketPort(l.path)]
		var ok bool
		switch {
		case l.uidKnown:
			// its user's, and named by its configuration, or named for a
			// port proven its (a PostgreSQL socket of the same user), or
			// (MySQL) its user runs only servers; a PostgreSQL socket of
			// another port is another cluster's of the same user
			ok = l.uid == uid && (cfg.hasSocket(l.path) || named || (userOnly && s.Protocol != Postgres))
		default:
			// net/unix has no owner: only the name, for a user that runs
			// nothing but the server
			ok = userOnly && named
		}
		if !ok {
			if l.uidKnown && l.uid == uid && uid != 0 {
				maybe[ino] = l.path
			}
			continue
		}
		if x.live && l.vfsKnown {
			var st syscall.Stat_t
			if err := syscall.Stat(l.path, &st); err != nil || st.Ino != uint64(l.vfsIno) {
				maybe[ino] = l.path + " (not the same file from sqlfwd's mount namespace)"
				continue
			}
		}
		unix = append(unix, ino)
	}
	for _, ino := range tcp {
		taken[ino] = true
	}
	for _, ino := range unix {
		taken[ino] = true
	}
	groups := groupByPort(own, tcp, unix, s.Protocol, cfg)
	if x.live && len(groups) == 0 {
		// a socket its configuration names that sqlfwd's namespace does
		// not list, yet is a socket file of the server's user at that
		// path here, of a server none of whose sockets are listed here:
		// bound in the server's own network namespace, and reached
		// through the file by clients in this one (a server found here
		// with such a file beside is more likely to have left it behind)
		listed := map[string]bool{}
		for _, l := range own.unix {
			listed[filepath.Clean(l.path)] = true
		}
		for _, p := range cfg.sockets {
			var st syscall.Stat_t
			if listed[p] || syscall.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK || st.Uid != uid {
				continue
			}
			maybe[otherNetnsKey|st.Ino] = p + otherNetnsNote
		}
	}
	if len(groups) > 0 && uid == 0 {
		// root's other listeners are most likely not this server's:
		// only the unreachable socket paths are worth saying
		for ino, m := range maybe {
			if !strings.HasSuffix(m, "mount namespace)") {
				delete(maybe, ino)
			}
		}
	}
	return groups, maybe
}

// otherNetnsNote marks, in attribute's maybe, a configured socket path
// bound in another network namespace; its key is the file's inode with
// otherNetnsKey set, apart from sock_diag's socket inodes.
const (
	otherNetnsNote = " (bound in another network namespace)"
	otherNetnsKey  = uint64(1) << 63
)

// unproven says, one line per path, why sockets that might be a server's
// are not taken (found says whether it has some); nil when there is
// nothing to say.
func unproven(uid uint32, found bool, maybe map[uint64]string, taken map[uint64]bool) []string {
	var out []string
	here := 0 // lines about sockets of sqlfwd's own network namespace
	for ino, m := range maybe {
		if taken[ino] {
			continue
		}
		if path, ok := strings.CutSuffix(m, otherNetnsNote); ok {
			out = append(out, path+" because its configuration names it and it is a socket of the server's user here, but sqlfwd's network namespace does not list it: bound in another network namespace (the server's), it reaches the server from this one unjudged; configure it as a database (unix_socket) to protect it")
			continue
		}
		here++
		if path, ok := strings.CutSuffix(m, " (not the same file from sqlfwd's mount namespace)"); ok {
			out = append(out, path+" because that path is another file in sqlfwd's mount namespace (the server's private /tmp or a container's)")
			continue
		}
		out = append(out, fmt.Sprintf("%s because it is owned by uid %d but sqlfwd cannot read the server's sockets (no ptrace access) and nothing proves it is the server's (its configuration does not name it; its user and its cgroup run other processes too, or more than one server)", m, uid))
	}
	sort.Strings(out)
	if !found && here == 0 {
		out = append(out, "its listeners because none of sqlfwd's network namespace is proven its: sqlfwd cannot read its sockets or its network namespace (no ptrace access), and no socket there is named by its configuration, made in a cgroup of servers only or owned by a user that runs only servers; it may run in another network namespace")
	}
	return out
}

// groupByPort makes one group per TCP port; a PostgreSQL socket goes with
// the port in its name, a MySQL socket with the configured port (or the
// lowest). A unix socket without a port is a group of its own.
func groupByPort(own *nsSockets, tcp, unix []uint64, proto Protocol, cfg serverConfig) []portListeners {
	byPort := map[uint16]*portListeners{}
	var ports []uint16
	for _, ino := range tcp {
		a := own.tcp[ino].addr
		p := byPort[a.Port()]
		if p == nil {
			p = &portListeners{}
			byPort[a.Port()] = p
			ports = append(ports, a.Port())
		}
		p.tcp = append(p.tcp, a)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	var alone []string
	for _, ino := range unix {
		path := own.unix[ino].path
		port := uint16(0)
		switch {
		case proto == Postgres:
			port = pgSocketPort(path)
		case len(ports) > 0:
			port = ports[0]
			for _, p := range cfg.ports {
				if byPort[p] != nil {
					port = p
					break
				}
			}
		}
		if g := byPort[port]; g != nil {
			g.unix = append(g.unix, path)
		} else {
			alone = append(alone, path)
		}
	}
	out := make([]portListeners, 0, len(ports)+len(alone))
	for _, p := range ports {
		l := byPort[p]
		sort.Slice(l.tcp, func(i, j int) bool { return l.tcp[i].String() < l.tcp[j].String() })
		sort.Strings(l.unix)
		out = append(out, *l)
	}
	sort.Strings(alone)
	for _, a := range alone {
		out = append(out, portListeners{unix: []string{a}})
	}
	return out
}

// pgSocketPort is the port in a PostgreSQL socket's name (.s.PGSQL.5432),
// 0 for another name.
func pgSocketPort(path string) uint16 {
	port, ok := strings.CutPrefix(filepath.Base(path), ".s.PGSQL.")
	if n, err := strconv.ParseUint(port, 10, 16); ok && err == nil {
		return uint16(n)
	}
	return 0
}
