package coordinator

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// tlsStream is raft's stream layer over TLS: raft's TCP transport has no
// TLS option, but its network transport takes any listener and dialer.
type tlsStream struct {
	net.Listener
	adv    net.Addr
	client *tls.Config
}

var _ raft.StreamLayer = (*tlsStream)(nil)

func (s *tlsStream) Addr() net.Addr { return s.adv }

// Dial bounds the handshake by the same timeout as the connect, so an
// unresponsive peer cannot hold a heartbeat past raft's deadline.
func (s *tlsStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: s.client}
	return d.Dial("tcp", string(addr))
}

// newTLSTransport is raft.NewTCPTransport's counterpart: the same pool size
// and I/O timeout, with the listener and dialer speaking TLS.
func newTLSTransport(n raftNet, logger hclog.Logger) (*raft.NetworkTransport, error) {
	adv, err := resolveAdvertise(n.Bind, n.Advertise)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", n.Bind)
	if err != nil {
		return nil, fmt.Errorf("coordinator.raft_bind %s: %w", n.Bind, err)
	}
	if a, ok := adv.(*net.TCPAddr); ok && a.Port == 0 {
		adv = ln.Addr() // port 0 (tests): peers dial the port we got
	}
	s := &tlsStream{Listener: tls.NewListener(ln, n.TLS), adv: adv, client: n.ClientTLS}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: s, MaxPool: 5,
		Timeout: 10 * time.Second, Logger: logger}), nil
}
