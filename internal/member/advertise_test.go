package member

import (
	"net"
	"testing"
)

func TestAdvertise(t *testing.T) {
	if got := Advertise("10.0.0.5:7947", &net.TCPAddr{Port: 1}); got != "10.0.0.5:7947" {
		t.Fatalf("explicit ignored: %s", got)
	}
	if got := Advertise("", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 42}); got != "127.0.0.1:42" {
		t.Fatalf("bound host ignored: %s", got)
	}
	got := Advertise("", &net.TCPAddr{IP: net.IPv4zero, Port: 42})
	host, port, err := net.SplitHostPort(got)
	if err != nil || port != "42" || net.ParseIP(host).IsUnspecified() {
		t.Fatalf("unspecified host advertised: %s", got)
	}
}
