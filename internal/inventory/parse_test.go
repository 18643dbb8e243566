package inventory

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseState(t *testing.T) {
	cases := []struct {
		in      string
		phys    bool
		code    int
		name    string
		wantErr bool
	}{
		{"4: ACTIVE\n", false, 4, "ACTIVE", false},
		{"1: DOWN", false, 1, "DOWN", false},
		{"  2:INIT  ", false, 2, "INIT", false},
		{"ACTIVE", false, 4, "ACTIVE", false},
		{"active", false, 4, "ACTIVE", false},
		{"4", false, 4, "ACTIVE", false},
		{"9: VENDOR_SPECIAL", false, 9, "VENDOR_SPECIAL", false},
		{"9", false, 9, "", false},
		{"5: LinkUp\n", true, 5, "LinkUp", false},
		{"2: Polling", true, 2, "Polling", false},
		{"7: Phy Test", true, 7, "Phy Test", false},
		{"", false, 0, "", true},
		{"x: ACTIVE", false, 0, "", true},
		{"12345: ACTIVE", false, 0, "", true},
		{"BOGUS", false, 0, "", true},
		{"4: AC\x1bTIVE", false, 0, "", true},
	}
	for _, c := range cases {
		parse := ParseState
		if c.phys {
			parse = ParsePhysState
		}
		got, err := parse(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("%q: err = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && (got.Code != c.code || got.Name != c.name) {
			t.Errorf("%q: got %+v, want %d %q", c.in, got, c.code, c.name)
		}
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in      string
		want    Rate
		wantErr bool
	}{
		{"400 Gb/sec (4X NDR)\n", Rate{400, 4, "NDR"}, false},
		{"2.5 Gb/sec (1X SDR)", Rate{2.5, 1, "SDR"}, false},
		{"100 Gb/sec (2X HDR)", Rate{100, 2, "HDR"}, false},
		{"56 Gb/sec (4X FDR)", Rate{56, 4, "FDR"}, false},
		{"300 Gb/sec (12X EDR)", Rate{300, 12, "EDR"}, false},
		{"25 Gb/sec", Rate{Gbps: 25}, false},
		{"10 gbps (1x qdr)", Rate{10, 1, "qdr"}, false},
		{"40 Gb/sec (4X)", Rate{40, 4, ""}, false},
		{"", Rate{}, true},
		{"fast", Rate{}, true},
		{"NaN Gb/sec", Rate{}, true},
		{"-1 Gb/sec", Rate{}, true},
		{"1e400 Gb/sec", Rate{}, true},
		{"100 MB/s", Rate{}, true},
		{"100 Gb/sec (4X NDR", Rate{}, true},
		{"100 Gb/sec (0X NDR)", Rate{}, true},
		{"100 Gb/sec (XX NDR)", Rate{}, true},
		{"100 Gb/sec ()", Rate{}, true},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("%q: err = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.in, got, c.want)
		}
	}
	if s := (Rate{400, 4, "NDR"}).String(); s != "400 Gb/s (4X NDR)" {
		t.Errorf("String = %q", s)
	}
}

func TestParseGID(t *testing.T) {
	cases := []struct {
		in      string
		want    string
		unused  bool
		wantErr bool
	}{
		{"fe80:0000:0000:0000:ee0d:9aff:fe2f:c21a\n", "fe80::ee0d:9aff:fe2f:c21a", false, false},
		{"0000:0000:0000:0000:0000:ffff:c0a8:6364", "::ffff:192.168.99.100", false, false},
		{"2001:0db8:0010:0000:0000:0000:0000:0005", "2001:db8:10::5", false, false},
		{"0000:0000:0000:0000:0000:0000:0000:0000", "::", true, false},
		{"fe80:0000:0000:0000:0000:0000:0000:0000", "fe80::", true, false},
		{"192.168.1.1", "", false, true},
		{"fe80::1%eth0", "", false, true},
		{"", "", false, true},
		{"fe80:zzzz::1", "", false, true},
	}
	for _, c := range cases {
		got, err := ParseGID(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("%q: err = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if c.wantErr {
			continue
		}
		if got.String() != c.want || IsUnusedGID(got) != c.unused {
			t.Errorf("%q: got %s unused=%v, want %s unused=%v", c.in, got, IsUnusedGID(got), c.want, c.unused)
		}
		if sysfsGID(got) != trimNL(c.in) {
			t.Errorf("%q: sysfs form %q does not round-trip", c.in, sysfsGID(got))
		}
	}
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

func TestParseSmallValues(t *testing.T) {
	types := map[string]string{"RoCE v2\n": TypeRoCEv2, "IB/RoCE v1": TypeRoCEv1, "roce  v2": TypeRoCEv2, "v1": TypeRoCEv1}
	for in, want := range types {
		if got, err := ParseGIDType(in); err != nil || got != want {
			t.Errorf("ParseGIDType(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseGIDType("RoCE v3"); err == nil {
		t.Error("RoCE v3 accepted")
	}
	lids := map[string]uint16{"0x1a\n": 0x1a, "0x0": 0, "26": 26, "0XFFFF": 0xffff}
	for in, want := range lids {
		if got, err := ParseLID(in); err != nil || got != want {
			t.Errorf("ParseLID(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"0x10000", "-1", "", "0x"} {
		if _, err := ParseLID(bad); err == nil {
			t.Errorf("ParseLID(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"InfiniBand\n": LayerIB, "ethernet": LayerEth} {
		if got, err := ParseLinkLayer(in); err != nil || got != want {
			t.Errorf("ParseLinkLayer(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{"Y\n": "shared", "N": "exclusive", "shared": "shared"} {
		if got, err := ParseNetnsMode(in); err != nil || got != want {
			t.Errorf("ParseNetnsMode(%q) = %q, %v", in, got, err)
		}
	}
}

func TestParseProcFiles(t *testing.T) {
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max locked memory         65536                unlimited            bytes     \n"
	ml, err := ParseProcLimits(limits)
	if err != nil || ml.Soft != 65536 || ml.Hard != Unlimited {
		t.Errorf("ParseProcLimits = %+v, %v", ml, err)
	}
	if _, err := ParseProcLimits("Max locked memory  lots  lots bytes\n"); err == nil {
		t.Error("bad limit accepted")
	}
	if _, err := ParseProcLimits("Max open files 1 1 files\n"); err == nil {
		t.Error("missing memlock line accepted")
	}
	caps, err := ParseCapEff("Name:\tx\nCapPrm:\t0\nCapEff:\t00000000a80465fb\n")
	if err != nil || caps&(1<<capIPCLock) == 0 {
		t.Errorf("ParseCapEff = %x, %v; want IPC_LOCK set", caps, err)
	}
	if _, err := ParseCapEff("CapEff:\tzz\n"); err == nil {
		t.Error("bad CapEff accepted")
	}
}

func TestParseAddrs(t *testing.T) {
	got, err := ParseAddrs("# comment\nnet1 192.168.1.201/24 fe80::1/64\n\nnet1 10.0.0.1/8 # more\nlo\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("192.168.1.201/24"), netip.MustParsePrefix("fe80::1/64"),
		netip.MustParsePrefix("10.0.0.1/8")}
	if len(got["net1"]) != 3 || got["net1"][0] != want[0] || got["net1"][2] != want[2] {
		t.Errorf("net1 = %v", got["net1"])
	}
	if _, ok := got["lo"]; !ok {
		t.Error("lo without addresses dropped")
	}
	if _, err := ParseAddrs("eth0 10.0.0.1\n"); err == nil {
		t.Error("address without prefix length accepted")
	}
}

func TestRoCEMTU(t *testing.T) {
	for netdev, want := range map[int]int{1500: 1024, 4200: 4096, 4192: 4096, 4191: 2048, 9000: 4096, 2200: 2048, 1120: 1024, 1100: 512, 600: 256, 300: 0} {
		if got := RoCEMTU(netdev); got != want {
			t.Errorf("RoCEMTU(%d) = %d, want %d", netdev, got, want)
		}
	}
}

func TestDefaultRoute(t *testing.T) {
	table := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth1\t004E0A0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"eth0\t00000000\t01004D0A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
	for _, c := range []struct{ in, want string }{
		{table, "eth0"},
		{strings.SplitAfterN(table, "\n", 3)[0] + strings.SplitAfterN(table, "\n", 3)[1], ""}, // no default route
		{"", ""},
		{"not a table\nat all", ""},
	} {
		if got := DefaultRoute(c.in); got != c.want {
			t.Errorf("DefaultRoute(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
