package member

import (
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"
)

func TestAdvertiseByName(t *testing.T) {
	c, err := Config(Options{Name: "n1", Bind: "127.0.0.1:0", Advertise: "localhost:7946"})
	if err != nil {
		t.Fatal(err)
	}
	if c.AdvertiseAddr != "127.0.0.1" || c.AdvertisePort != 7946 {
		t.Fatalf("advertise %s:%d; want localhost resolved to 127.0.0.1:7946", c.AdvertiseAddr, c.AdvertisePort)
	}
	if _, err := Config(Options{Name: "n1", Bind: "127.0.0.1:0", Advertise: "no-such-host.invalid:7946"}); err == nil || !strings.Contains(err.Error(), "gossip advertise") {
		t.Fatalf("an unresolvable name must name gossip advertise, got %v", err)
	}
}

func TestTimerProfiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lan, wan bool
		want     *memberlist.Config
	}{
		{"single host", false, false, memberlist.DefaultLocalConfig()},
		{"lan", true, false, memberlist.DefaultLANConfig()},
		{"wan", true, true, memberlist.DefaultWANConfig()},
	} {
		c, err := Config(Options{Name: "n", Bind: "127.0.0.1:0", LAN: tc.lan, WAN: tc.wan})
		if err != nil {
			t.Fatal(err)
		}
		if c.ProbeTimeout != tc.want.ProbeTimeout || c.SuspicionMult != tc.want.SuspicionMult {
			t.Errorf("%s: probe timeout %s, suspicion x%d; want %s, x%d", tc.name, c.ProbeTimeout, c.SuspicionMult, tc.want.ProbeTimeout, tc.want.SuspicionMult)
		}
	}
}
