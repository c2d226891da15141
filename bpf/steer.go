package bpf

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// SteerConfig says which inbound connections the DB-host program hands to the
// daemon.
type SteerConfig struct {
	// Netns is a network namespace file, e.g. /proc/self/ns/net or
	// /var/run/netns/NAME. Inbound TCP in that namespace is steered.
	Netns string
	// Ports are the protected local ports (the database's). Connections to
	// them on loopback addresses are not steered: that is how the daemon
	// reaches the database.
	Ports []uint16
	// Listener receives IPv4 connections, and IPv6 ones too unless Listener6
	// is set (a dual-stack [::] listener serves both). Both must live in
	// Netns and must not be MPTCP: create them with a net.ListenConfig on
	// which SetMultipathTCP(false) was called.
	Listener  *net.TCPListener
	Listener6 *net.TCPListener
}

// Steer is the attached sk_lookup program. The original destination of a
// steered connection is the local address of the accepted socket.
type Steer struct {
	objs steerObjects
	link link.Link
}

// SteerCounters are totals since load, summed over CPUs.
type SteerCounters struct {
	Steered      uint64 // connections handed to the listener
	NoListener   uint64 // protected port, but no listener in the map
	AssignFailed uint64 // bpf_sk_assign refused (e.g. family mismatch)
}

// LoadSteer loads the sk_lookup program, fills its maps and attaches it to
// cfg.Netns. On error nothing stays attached.
func LoadSteer(cfg SteerConfig) (*Steer, error) {
	if cfg.Listener == nil {
		return nil, errors.New("steer: no listener given")
	}
	if len(cfg.Ports) == 0 {
		return nil, errors.New("steer: no ports given")
	}
	ns, err := os.Open(cfg.Netns)
	if err != nil {
		return nil, fmt.Errorf("steer: opening netns: %w", err)
	}
	defer ns.Close()

	s := &Steer{}
	if err := loadSteerObjects(&s.objs, nil); err != nil {
		return nil, classify(fmt.Errorf("loading steer objects: %w", err))
	}
	for _, p := range cfg.Ports {
		if err := s.objs.SteerPorts.Put(p, uint8(1)); err != nil {
			s.Close()
			return nil, fmt.Errorf("steer: adding port %d: %w", p, err)
		}
	}
	for slot, ln := range []*net.TCPListener{cfg.Listener, cfg.Listener6} {
		if ln == nil {
			continue
		}
		if err := s.putListener(uint32(slot), ln); err != nil {
			s.Close()
			return nil, err
		}
	}
	l, err := link.AttachNetNs(int(ns.Fd()), s.objs.SteerLookup)
	if err != nil {
		s.Close()
		return nil, classify(fmt.Errorf("attaching sk_lookup to %s: %w", cfg.Netns, err))
	}
	s.link = l
	return s, nil
}

// errMPTCP explains the only failure of a SOCKMAP update seen in practice:
// since Go 1.24 listeners are MPTCP by default where the kernel allows it.
var errMPTCP = errors.New("listener is MPTCP, which a SOCKMAP cannot hold; create it with net.ListenConfig.SetMultipathTCP(false)")

func (s *Steer) putListener(slot uint32, ln *net.TCPListener) error {
	return control(ln, func(fd int) error {
		proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
		if err == nil && proto == unix.IPPROTO_MPTCP {
			return fmt.Errorf("steer: %s: %w", ln.Addr(), errMPTCP)
		}
		if err := s.objs.SteerListeners.Put(slot, uint64(fd)); err != nil {
			return fmt.Errorf("steer: adding listener %s: %w", ln.Addr(), err)
		}
		return nil
	})
}

// Counters sums the per-CPU counters.
func (s *Steer) Counters() (SteerCounters, error) {
	var v [3]uint64
	if err := sumPerCPU(s.objs.SteerCounters, v[:]); err != nil {
		return SteerCounters{}, fmt.Errorf("reading steer counters: %w", err)
	}
	return SteerCounters{Steered: v[0], NoListener: v[1], AssignFailed: v[2]}, nil
}

// Close detaches and unloads; safe after a partial load and more than once.
// Connections already accepted are not affected.
func (s *Steer) Close() error {
	var errs []error
	if s.link != nil {
		errs = append(errs, s.link.Close())
		s.link = nil
	}
	errs = append(errs, s.objs.Close())
	return errors.Join(errs...)
}
