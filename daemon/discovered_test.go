package daemon

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestUpstreamAndProtect(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::1"), netip.MustParseAddr("fd00::5")}
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		name      string
		listeners []netip.AddrPort
		up        string
		protect   string
	}{
		{"loopback only", []netip.AddrPort{ap("127.0.0.1:5432")}, "127.0.0.1:5432", "[127.0.0.1:5432]"},
		{"v4 wildcard", []netip.AddrPort{ap("0.0.0.0:5432")}, "127.0.0.1:5432", "[127.0.0.1:5432 10.1.2.3:5432]"},
		{"v6 wildcard takes v4 too", []netip.AddrPort{ap("[::]:5433")}, "127.0.0.1:5433", "[127.0.0.1:5433 [::1]:5433 10.1.2.3:5433 [fd00::5]:5433]"},
		{"specific address then loopback", []netip.AddrPort{ap("10.1.2.3:5432"), ap("127.0.0.1:5432")}, "127.0.0.1:5432", "[10.1.2.3:5432 127.0.0.1:5432]"},
		{"v6 loopback only", []netip.AddrPort{ap("[::1]:5432")}, "[::1]:5432", "[[::1]:5432]"},
	} {
		up, protect := upstreamAndProtect(tc.listeners, local)
		if up.String() != tc.up || fmt.Sprint(protect) != tc.protect {
			t.Errorf("%s: got upstream %v, protect %v; want %s, %s", tc.name, up, protect, tc.up, tc.protect)
		}
	}
}
