package sim

import (
	"context"
	"net"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Listen is the responder's first half of an RDMA CM connection
// (TestParams.Connect = "rdmacm"). The simulator has no CM to ask, so the
// address only has to be well formed and unique per session; the link
// model is the same in both connection modes, as it is on real RoCE.
func (s *Session) Listen(ctx context.Context) (probe.QPInfo, error) {
	if s.closed {
		return s.info, misuse("rdma_listen", "Listen on a closed session")
	}
	if err := ctx.Err(); err != nil {
		return s.info, cancelled("rdma_listen", err)
	}
	s.info.CMAddr = net.JoinHostPort("sim."+s.node.name, strconv.FormatUint(uint64(s.info.QPN), 10))
	return s.info, nil
}

// Accept completes the connection with the initiator's QP info: what a
// real CM handshake carries in its private data.
func (s *Session) Accept(ctx context.Context, remote probe.QPInfo) error {
	return s.Connect(ctx, remote)
}
