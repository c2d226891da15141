package daemon

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// fakeAddrMap is the kernel's set of protected addresses; Protect fails
// for failAt, Unprotect for stuck.
type fakeAddrMap struct {
	set           map[netip.AddrPort]bool
	failAt, stuck netip.AddrPort
}

func (m *fakeAddrMap) Protect(a netip.AddrPort) error {
	if a == m.failAt {
		return errors.New("map full")
	}
	m.set[a] = true
	return nil
}

func (m *fakeAddrMap) Unprotect(a netip.AddrPort) error {
	if a == m.stuck {
		return errors.New("map busy")
	}
	delete(m.set, a)
	return nil
}

// protectAddrs after a partial failure: some addresses written to the
// kernel's map, then one that cannot be. Nothing of the attempt stays: the
// map, the active addresses and the routes are as before, and what the
// database held before it still holds (the re-protect of a database that
// gained an address). An address that cannot be taken out again stays
// active with its route, and the error names it.
func TestProtectAddrsRollback(t *testing.T) {
	ap := netip.MustParseAddrPort
	a1, a2, a3, a4 := ap("10.0.0.1:5432"), ap("10.0.0.2:5432"), ap("10.0.0.3:5432"), ap("10.0.0.4:5432")
	db := &database{cfg: Database{Name: "found"}}
	other := &database{cfg: Database{Name: "other"}}
	for _, tc := range []struct {
		name string
		// held: what db (and other) had before
		held      map[netip.AddrPort]*database
		addrs     []netip.AddrPort
		failAt    netip.AddrPort
		stuck     netip.AddrPort
		wantKept  []netip.AddrPort // in the map and active for db after the failure
		wantInErr string
	}{
		{"a fresh database", map[netip.AddrPort]*database{a4: other}, []netip.AddrPort{a1, a2, a3}, a3, netip.AddrPort{}, nil, "map full"},
		{"the first address fails", nil, []netip.AddrPort{a1, a2}, a1, netip.AddrPort{}, nil, "map full"},
		{"a database that held one already", map[netip.AddrPort]*database{a1: db, a4: other}, []netip.AddrPort{a1, a2, a3}, a3, netip.AddrPort{}, []netip.AddrPort{a1}, "map full"},
		{"an address that cannot be taken out", nil, []netip.AddrPort{a1, a2, a3}, a3, a2, []netip.AddrPort{a2}, "10.0.0.2:5432 stays protected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeAddrMap{set: map[netip.AddrPort]bool{}, failAt: tc.failAt, stuck: tc.stuck}
			it := &interceptor{active: map[netip.AddrPort]*database{}}
			routes := map[netip.AddrPort]*database{}
			for a, owner := range tc.held {
				m.set[a], it.active[a], routes[a] = true, owner, owner
			}
			it.routes.Store(&routes)
			err := it.protectAddrs(m, db, tc.addrs)
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Fatalf("err %v, want one saying %q", err, tc.wantInErr)
			}
			wantActive := maps.Clone(tc.held)
			if wantActive == nil {
				wantActive = map[netip.AddrPort]*database{}
			}
			for _, a := range tc.wantKept {
				wantActive[a] = db
			}
			var wantSet []netip.AddrPort
			for a := range wantActive {
				wantSet = append(wantSet, a)
			}
			if got, want := sorted(slices.Collect(maps.Keys(m.set))), sorted(wantSet); !slices.Equal(got, want) {
				t.Errorf("kernel map holds %v, want %v", got, want)
			}
			if !maps.Equal(it.active, wantActive) {
				t.Errorf("active %v, want %v", names(it.active), names(wantActive))
			}
			if got := *it.routes.Load(); !maps.Equal(got, wantActive) {
				t.Errorf("routes %v, want %v", names(got), names(wantActive))
			}
		})
	}
}

// A protect that succeeds writes every address once, a duplicate
// included, and routes each to the database.
func TestProtectAddrs(t *testing.T) {
	a1, a2 := netip.MustParseAddrPort("10.0.0.1:3306"), netip.MustParseAddrPort("[2001:db8::1]:3306")
	db := &database{cfg: Database{Name: "found"}}
	m := &fakeAddrMap{set: map[netip.AddrPort]bool{}}
	it := &interceptor{active: map[netip.AddrPort]*database{}}
	it.routes.Store(&map[netip.AddrPort]*database{})
	if err := it.protectAddrs(m, db, []netip.AddrPort{a1, a2, a1}); err != nil {
		t.Fatal(err)
	}
	want := map[netip.AddrPort]*database{a1: db, a2: db}
	if len(m.set) != 2 || !maps.Equal(it.active, want) || !maps.Equal(*it.routes.Load(), want) {
		t.Errorf("map %v active %v routes %v, want both addresses for %s", m.set, names(it.active), names(*it.routes.Load()), db.cfg.Name)
	}
}

func sorted(a []netip.AddrPort) []netip.AddrPort {
	slices.SortFunc(a, func(x, y netip.AddrPort) int { return x.Compare(y) })
	return a
}

func names(m map[netip.AddrPort]*database) string {
	var s []string
	for a, db := range m {
		s = append(s, fmt.Sprintf("%s=%s", a, db.cfg.Name))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
