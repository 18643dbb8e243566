package chaos

import (
	"fmt"
	"net"
	"strconv"
	"sync"
)

// ports hands out loopback ports that were free a moment ago. A port can be
// taken by someone else between the check and the child's bind; callers
// retry with fresh ports when a child fails to bind (see startRetry).
type ports struct {
	mu    sync.Mutex
	given map[int]bool // never hand the same port out twice in one run
}

func newPorts() *ports { return &ports{given: map[int]bool{}} }

// addr returns 127.0.0.1:port free for TCP and, when udp is set, for UDP
// too: memberlist binds both on the gossip port.
func (p *ports) addr(udp bool) (string, error) {
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("pick a free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ok := true
		if udp {
			pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				ok = false
			} else {
				pc.Close()
			}
		}
		ln.Close()
		p.mu.Lock()
		if p.given[port] {
			ok = false
		}
		if ok {
			p.given[port] = true
		}
		p.mu.Unlock()
		if ok {
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
		}
	}
	return "", fmt.Errorf("no free loopback port after 50 tries")
}
