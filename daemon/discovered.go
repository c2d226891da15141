package daemon

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/sqlfw/sqlfw/discover"
)

// Zero-configuration start: without a configuration file sqlfwd protects
// the database servers it finds on the host (discover.Find over /proc), each
// with app-host interception of its TCP addresses and unix socket and the
// embedded default policy.

// DiscoveredDatabases turns the servers found under procRoot into databases
// to protect, and says in notes what it found and what it leaves alone.
func DiscoveredDatabases(procRoot string) (dbs []Database, notes []string, err error) {
	servers, err := discover.Find(procRoot)
	if err != nil {
		return nil, nil, err
	}
	local := localAddrs()
	for _, s := range servers {
		what := fmt.Sprintf("%s (pid %d, %s) on %v %v", s.Protocol, s.PID, s.Comm, s.TCP, s.Unix)
		if s.OtherNetns {
			notes = append(notes, "not protected: "+what+": another network namespace")
			continue
		}
		p, ok := protocolDiscovered(s.Protocol)
		switch {
		case !ok:
			notes = append(notes, "not protected: "+what+": sqlfwd has no "+string(s.Protocol)+" path yet")
			continue
		case len(s.TCP) == 0:
			notes = append(notes, "not protected: "+what+": no TCP listener to reach it through")
			continue
		}
		up, protect := upstreamAndProtect(s.TCP, local)
		db := Database{
			Name:      p.name + "-" + strconv.Itoa(int(s.TCP[0].Port())),
			Protocol:  p.name,
			Upstream:  up.String(),
			Intercept: InterceptAppHost,
		}
		for _, p := range protect {
			db.Protect = append(db.Protect, p.String())
		}
		if len(s.Unix) > 0 {
			db.UnixSocket = s.Unix[0]
		}
		dbs = append(dbs, db)
		notes = append(notes, fmt.Sprintf("protecting %s as database %s: upstream %s, addresses %v, unix socket %q", what, db.Name, db.Upstream, db.Protect, db.UnixSocket))
	}
	return dbs, notes, nil
}

// upstreamAndProtect picks the address sqlfwd reaches a server at (loopback
// where a listener covers it) and the destinations local clients may use:
// each specific listener address, and for a wildcard listener loopback and
// every local address of its family (a v6 wildcard also takes IPv4).
func upstreamAndProtect(listeners []netip.AddrPort, local []netip.Addr) (netip.AddrPort, []netip.AddrPort) {
	seen := map[netip.AddrPort]bool{}
	var protect []netip.AddrPort
	add := func(a netip.Addr, port uint16) {
		ap := netip.AddrPortFrom(a.Unmap(), port)
		if !seen[ap] {
			seen[ap] = true
			protect = append(protect, ap)
		}
	}
	var up netip.AddrPort
	for _, l := range listeners {
		a, port := l.Addr(), l.Port()
		switch {
		case a.IsUnspecified():
			v6 := a.Is6()
			add(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
			if v6 {
				add(netip.IPv6Loopback(), port)
			}
			for _, la := range local {
				if la.Is4() || v6 {
					add(la, port)
				}
			}
			if !up.IsValid() || !up.Addr().IsLoopback() {
				up = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
			}
		default:
			add(a, port)
			if !up.IsValid() || (a.IsLoopback() && !up.Addr().IsLoopback()) {
				up = netip.AddrPortFrom(a.Unmap(), port)
			}
		}
	}
	return up, protect
}

// localAddrs lists the host's interface addresses (none when they cannot be
// read: loopback is protected all the same).
func localAddrs() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ia := range ifs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && !p.Addr().IsLinkLocalUnicast() {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}
