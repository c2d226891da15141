package discover

// The listening TCP sockets of the caller's own network namespace, from the
// kernel's sock_diag netlink interface (what `ss -tln` uses) instead of
// net/tcp and net/tcp6. Those files are built by walking every socket of the
// namespace, established and TIME_WAIT ones included, so reading them costs
// milliseconds on a host with thousands of connections, at every rescan; a
// dump filtered to the LISTEN state walks only the listening sockets.
//
// The request is an nlmsghdr and an inet_diag_req_v2
// (include/uapi/linux/inet_diag.h); each answer an nlmsghdr and an
// inet_diag_msg:
//
//	inet_diag_req_v2: family u8, protocol u8, ext u8, pad u8, states u32, sockid (48 bytes)
//	inet_diag_msg:    family u8, state u8, timer u8, retrans u8, sockid (48 bytes),
//	                  expires u32, rqueue u32, wqueue u32, uid u32, inode u32
//	sockid:           sport be16, dport be16, src [4]be32, dst [4]be32, if u32, cookie [2]u32
//
// Ports and addresses are in network byte order, the other fields in the
// host's.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

const (
	nlmsgHdrLen      = 16
	inetDiagReqLen   = 56
	inetDiagMsgLen   = 72
	tcpStateListen   = 10 // TCP_LISTEN
	sockDiagByFamily = unix.SOCK_DIAG_BY_FAMILY
	inetDiagCgroupID = 21 // INET_DIAG_CGROUP_ID
)

// eachAttr calls f for each netlink attribute (rtattr: len u16, type u16,
// value, padded to 4 bytes) in b.
func eachAttr(b []byte, f func(typ uint16, v []byte)) {
	ne := binary.NativeEndian
	for len(b) >= 4 {
		l := int(ne.Uint16(b[0:]))
		if l < 4 || l > len(b) {
			return
		}
		f(ne.Uint16(b[2:])&^(1<<15|1<<14), b[4:l])
		b = b[min(len(b), (l+3)&^3):]
	}
}

// netlinkTCPListeners adds the listening TCP sockets (IPv4 and IPv6) of the
// caller's network namespace to into.
func netlinkTCPListeners(into map[uint64]tcpListener) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_INET_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 32<<10)
	for seq, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := unix.Sendto(fd, diagRequest(uint32(seq+1), family), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return fmt.Errorf("sock_diag request: %w", err)
		}
		if err := readDiag(fd, buf, uint32(seq+1), into); err != nil {
			return err
		}
	}
	return nil
}

// diagRequest is a dump request for the listening TCP sockets of family.
func diagRequest(seq uint32, family uint8) []byte {
	b := make([]byte, nlmsgHdrLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], sockDiagByFamily)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(b[8:], seq)
	r := b[nlmsgHdrLen:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<tcpStateListen)
	return b
}

// readDiag reads the answers to request seq until its NLMSG_DONE.
func readDiag(fd int, buf []byte, seq uint32, into map[uint64]tcpListener) error {
	return readAnswers(fd, buf, func(b []byte) (bool, error) { return parseDiag(b, seq, into) })
}

// readAnswers reads datagrams until parse says done.
func readAnswers(fd int, buf []byte, parse func([]byte) (bool, error)) error {
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("sock_diag answer: %w", err)
		}
		done, err := parse(buf[:n])
		if err != nil || done {
			return err
		}
	}
}

// eachDiag walks one datagram of sock_diag answers to request seq, calling
// f with each SOCK_DIAG_BY_FAMILY message's body; done when it holds
// NLMSG_DONE (or a NLMSG_ERROR of 0), an error for a malformed message or
// the kernel's errno.
func eachDiag(b []byte, seq uint32, f func(body []byte)) (done bool, err error) {
	ne := binary.NativeEndian
	for len(b) >= nlmsgHdrLen {
		l := int(ne.Uint32(b[0:]))
		if l < nlmsgHdrLen || l > len(b) {
			return false, fmt.Errorf("sock_diag: message of %d bytes in %d", l, len(b))
		}
		typ, mseq, body := ne.Uint16(b[4:]), ne.Uint32(b[8:]), b[nlmsgHdrLen:l]
		b = b[min(len(b), (l+3)&^3):]
		if mseq != seq {
			continue
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(body) >= 4 {
				if errno := int32(ne.Uint32(body)); errno != 0 {
					return false, fmt.Errorf("sock_diag: %w", unix.Errno(-errno))
				}
			}
			return true, nil
		case sockDiagByFamily:
			f(body)
		}
	}
	return false, nil
}

// parseDiag reads one datagram of TCP answers; done when it holds
// NLMSG_DONE.
func parseDiag(b []byte, seq uint32, into map[uint64]tcpListener) (done bool, err error) {
	ne := binary.NativeEndian
	return eachDiag(b, seq, func(body []byte) {
		if len(body) < inetDiagMsgLen || body[1] != tcpStateListen {
			return
		}
		port := binary.BigEndian.Uint16(body[4:])
		var a netip.Addr
		switch body[0] {
		case unix.AF_INET:
			a = netip.AddrFrom4([4]byte(body[8:12]))
		case unix.AF_INET6:
			a = netip.AddrFrom16([16]byte(body[8:24])).Unmap()
		default:
			return
		}
		ino := uint64(ne.Uint32(body[68:]))
		if ino == 0 {
			return
		}
		l := tcpListener{addr: netip.AddrPortFrom(a, port), uid: ne.Uint32(body[64:])}
		// INET_DIAG_CGROUP_ID (u64): the cgroup v2 the socket was
		// created in, which the kernel always adds (CONFIG_SOCK_CGROUP_DATA)
		eachAttr(body[inetDiagMsgLen:], func(typ uint16, v []byte) {
			if typ == inetDiagCgroupID && len(v) >= 8 {
				l.cgroup = ne.Uint64(v)
			}
		})
		into[ino] = l
	})
}

// The listening unix sockets of the caller's network namespace, from
// sock_diag too (what `ss -xl` uses): unlike net/unix it gives each
// socket's owner (UNIX_DIAG_UID, Linux 5.3) and the inode its path is bound
// to (UNIX_DIAG_VFS), which tells whether the path sqlfwd sees is that
// socket. include/uapi/linux/unix_diag.h:
//
//	unix_diag_req: family u8, protocol u8, pad u16, states u32, ino u32, show u32, cookie [2]u32
//	unix_diag_msg: family u8, type u8, state u8, pad u8, ino u32, cookie [2]u32
//	attributes:    UNIX_DIAG_NAME (0) path bytes, UNIX_DIAG_VFS (1) {ino u32, dev u32}, UNIX_DIAG_UID (7) u32

const (
	unixDiagReqLen = 24
	unixDiagMsgLen = 16
	udiagShowName  = 0x01
	udiagShowVFS   = 0x02
	udiagShowUID   = 0x40
	unixDiagName   = 0
	unixDiagVFS    = 1
	unixDiagUID    = 7
)

// netlinkUnixListeners adds the listening unix sockets of the caller's
// network namespace that have a path (abstract ones with "@") to into.
func netlinkUnixListeners(into map[uint64]unixListener) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	b := make([]byte, nlmsgHdrLen+unixDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], sockDiagByFamily)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(b[8:], 1)
	r := b[nlmsgHdrLen:]
	r[0] = unix.AF_UNIX
	ne.PutUint32(r[4:], 1<<tcpStateListen)
	ne.PutUint32(r[12:], udiagShowName|udiagShowVFS|udiagShowUID)
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sock_diag request: %w", err)
	}
	return readAnswers(fd, make([]byte, 32<<10), func(d []byte) (bool, error) { return parseUnixDiag(d, 1, into) })
}

// parseUnixDiag reads one datagram of unix answers; done when it holds
// NLMSG_DONE.
func parseUnixDiag(b []byte, seq uint32, into map[uint64]unixListener) (done bool, err error) {
	ne := binary.NativeEndian
	return eachDiag(b, seq, func(body []byte) {
		if len(body) < unixDiagMsgLen || body[2] != tcpStateListen {
			return
		}
		ino := uint64(ne.Uint32(body[4:]))
		var u unixListener
		eachAttr(body[unixDiagMsgLen:], func(t uint16, v []byte) {
			switch {
			case t == unixDiagName && len(v) > 0:
				if v[0] == 0 {
					u.path = "@" + string(v[1:])
				} else {
					u.path = string(bytes.TrimRight(v, "\x00"))
				}
			case t == unixDiagVFS && len(v) >= 8:
				u.vfsIno, u.vfsKnown = ne.Uint32(v[0:]), true
			case t == unixDiagUID && len(v) >= 4:
				u.uid, u.uidKnown = ne.Uint32(v), true
			}
		})
		if ino != 0 && u.path != "" {
			into[ino] = u
		}
	})
}

// TCPListeners returns the listening TCP sockets (IPv4 and IPv6) of the
// caller's network namespace by inode, through sock_diag: what holds a
// port, for an error that names it.
func TCPListeners() (map[uint64]netip.AddrPort, error) {
	m := map[uint64]tcpListener{}
	if err := netlinkTCPListeners(m); err != nil {
		return nil, err
	}
	out := make(map[uint64]netip.AddrPort, len(m))
	for ino, l := range m {
		out[ino] = l.addr
	}
	return out, nil
}
