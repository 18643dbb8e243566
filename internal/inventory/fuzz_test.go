package inventory

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseSysfsValue feeds one string to every sysfs/procfs parser. They
// must never panic, and what they accept must be sane: the scanner runs on
// whatever a vendor driver prints.
func FuzzParseSysfsValue(f *testing.F) {
	for _, s := range []string{
		"4: ACTIVE\n", "5: LinkUp\n", "2: Polling", "400 Gb/sec (4X NDR)\n", "2.5 Gb/sec (1X SDR)",
		"fe80:0000:0000:0000:ee0d:9aff:fe2f:c21a\n", "0000:0000:0000:0000:0000:ffff:c0a8:6364",
		"RoCE v2\n", "IB/RoCE v1\n", "InfiniBand\n", "Ethernet", "0x1a\n", "Y\n", "1500\n",
		"Max locked memory 65536 unlimited bytes\n", "CapEff:\t000001ffffffffff\n",
		"net1 192.168.1.201/24 fe80::1/64\n", "100 Gb/sec (", ":", "0x", "\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (Enum, error){ParseState, ParsePhysState} {
			if e, err := parse(s); err == nil {
				if e.Code < 0 || e.Code > 999 || strings.ContainsAny(e.Name, "\n\x1b") {
					t.Fatalf("%q parsed to %+v", s, e)
				}
				_ = e.String()
			}
		}
		if r, err := ParseRate(s); err == nil {
			if math.IsNaN(r.Gbps) || math.IsInf(r.Gbps, 0) || r.Gbps < 0 || r.Width < 0 || r.Width > 99 {
				t.Fatalf("%q parsed to %+v", s, r)
			}
			_ = r.String()
		}
		if a, err := ParseGID(s); err == nil {
			if !a.Is6() || len(sysfsGID(a)) != 39 {
				t.Fatalf("%q parsed to %v", s, a)
			}
			_ = IsUnusedGID(a)
		}
		if typ, err := ParseGIDType(s); err == nil && typ != TypeRoCEv1 && typ != TypeRoCEv2 {
			t.Fatalf("%q parsed to type %q", s, typ)
		}
		if l, err := ParseLinkLayer(s); err == nil && l != LayerIB && l != LayerEth {
			t.Fatalf("%q parsed to layer %q", s, l)
		}
		_, _ = ParseLID(s)
		_, _ = parseSmallInt(s)
		_, _ = ParseProcLimits(s)
		_, _ = ParseCapEff(s)
		_, _ = ParseNetnsMode(s)
		_, _ = ParseAddrs(s)
	})
}

// FuzzParseGIDPolicy holds the --gid parser to round-tripping what it
// accepts.
func FuzzParseGIDPolicy(f *testing.F) {
	for _, s := range []string{"auto", "index=3", "3", "netdev=eth1", "subnet=10.0.0.0/8", "version=v2", "version=RoCE v2", "=", "subnet=::/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseGIDPolicy(s)
		if err != nil {
			return
		}
		again, err := ParseGIDPolicy(p.String())
		if err != nil || again != p {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, p, p.String(), again, err)
		}
	})
}
