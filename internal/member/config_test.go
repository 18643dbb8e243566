package member

import (
	"strings"
	"testing"
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
