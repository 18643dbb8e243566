package session

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// A peer whose API refuses the dial is unreachable while gossip sees it
// alive, and a lost peer when gossip does not (or cannot tell).
func TestOpenUnreachablePeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		alive func(string) bool
		want  probe.Class
	}{
		{func(n string) bool { return n == "node-02" }, probe.ClassUnreachable},
		{func(string) bool { return false }, probe.ClassPeerLost},
		{nil, probe.ClassPeerLost},
	} {
		cl := Client{HTTP: &http.Client{}, Self: "worker node-01", Alive: c.alive}
		_, err := cl.Open(context.Background(), addr, &wire.SessionOpen{Src: "node-01", Dst: "node-02"})
		if pe := probe.Classify(err); pe == nil || pe.Class != c.want {
			t.Errorf("alive %v: %v, want class %s", c.alive != nil, err, c.want)
		}
	}
}
