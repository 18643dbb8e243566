//go:build verbs && cgo

package verbs

/*
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

var (
	cmOnce sync.Once
	cmErr  *probe.Error
)

// cmABI is the kernel RDMA CM ABI cm.c speaks (rdma_user_cm.h).
const cmABI = 4

// loadCM checks once that the kernel's RDMA CM speaks our ABI; a missing
// version file (very old or unusual kernels) is left to the first command.
func loadCM() *probe.Error {
	cmOnce.Do(func() {
		if v := int(C.rm_cm_abi()); v >= 0 && v != cmABI {
			cmErr = &probe.Error{Class: probe.ClassInternal, Verb: opVerb[opCMLoad],
				Cause: fmt.Sprintf("the kernel's RDMA CM speaks ABI %d, rdmamesh speaks %d", v, cmABI),
				Fix:   "run the sweep with connect=exchange, or use a kernel whose rdma_ucm has ABI 4 (Linux 2.6.29 and later)"}
		}
	})
	return cmErr
}

// cmIP is the address the CM resolves and binds for this session: the IPv4
// address of the GID chosen for the port (the CM works by IP, not index).
func (s *Session) cmIP() (string, *probe.Error) {
	if ip := s.gid.ipv4(); ip != "" {
		return ip, nil
	}
	return "", &probe.Error{Class: probe.ClassInvalidGID, Verb: "rdma_resolve_addr",
		Cause: fmt.Sprintf("RDMA CM mode resolves peers by IPv4 address, but GID index %d on %s port %d (%s) is not IPv4-mapped",
			s.gid.Index, s.info.Device, s.port, s.gid),
		Fix: "use --gid auto (the IPv4 RoCE v2 entry), or run this sweep with connect=exchange"}
}

func (s *Session) priv() C.rm_cm_priv {
	return C.rm_cm_priv{addr: C.uint64_t(s.info.Addr), len: C.uint64_t(s.info.Size), rkey: C.uint32_t(s.info.RKey),
		lat_size: C.uint32_t(s.params.LatencySize), bw_size: C.uint32_t(s.params.BWSize), mtu: C.int(mtuEnum(s.info.MTU))}
}

// checkPeer compares what the peer's handshake says with our layout; the
// same check Connect does on exchanged QP info.
func (s *Session) checkPeer(peer C.rm_cm_priv) *probe.Error {
	if int(peer.lat_size) != s.params.LatencySize || int(peer.bw_size) != s.params.BWSize || uint64(peer.len) < uint64(s.info.Size) {
		return &probe.Error{Class: probe.ClassInternal, Verb: "rdma_accept",
			Cause: fmt.Sprintf("the peer's buffer was laid out for other sizes (latency %d, bandwidth %d, %d bytes; ours %d, %d, %d)",
				peer.lat_size, peer.bw_size, peer.len, s.params.LatencySize, s.params.BWSize, s.info.Size),
			Fix: "run the same rdmamesh version and test parameters on both sides"}
	}
	return nil
}

// mtuCap is the path MTU both ends carry, as enum ibv_mtu.
func (s *Session) mtuCap(peer C.rm_cm_priv) C.int {
	return C.int(mtuEnum(pathMTU(s.info.MTU, mtuBytes(int(peer.mtu)))))
}

// Listen is the responder's first half in RDMA CM mode: bind a CM id to
// the port's IP on a port the kernel picks and listen; the returned info
// carries that address (CMAddr) for the initiator.
func (s *Session) Listen(ctx context.Context) (probe.QPInfo, error) {
	if s.params.Connect != probe.ConnectRDMACM {
		return s.info, &probe.Error{Class: probe.ClassInternal, Cause: "Listen on a session not opened for RDMA CM",
			Fix: "report this as a bug with the worker log"}
	}
	if e := s.aborted.Load(); e != nil {
		return s.info, e
	}
	ip, e := s.cmIP()
	if e != nil {
		return s.info, e
	}
	if e := loadCM(); e != nil {
		return s.info, e
	}
	cip := C.CString(ip)
	defer C.free(unsafe.Pointer(cip))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return s.info, closedErr()
	}
	var port C.int
	var st C.rm_status
	if C.rm_cm_listen(s.c, cip, &port, &st) != 0 {
		w := s.where("listen", 0)
		w.peer = ip
		return s.info, s.fail(statusFailure(&st), w)
	}
	s.info.CMAddr = net.JoinHostPort(ip, strconv.Itoa(int(port)))
	return s.info, nil
}

// Accept is the responder's second half: wait for the initiator's connect
// request, check its handshake, move the QP to RTS and accept.
func (s *Session) Accept(ctx context.Context, remote probe.QPInfo) error {
	var peer C.rm_cm_priv
	w := s.where("accept", 0)
	w.peer = s.info.CMAddr
	f, ok := s.run(ctx, s.params.Timeout, "accept", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_cm_wait_request(s.c, &peer, ns, gen, st)
	})
	if !ok {
		return s.fail(f, w)
	}
	if e := s.checkPeer(peer); e != nil {
		// Tell the initiator why instead of letting its request time out.
		mine := s.priv()
		mine.reason = C.RM_CM_REJECT_SIZES
		s.mu.Lock()
		if s.c != nil {
			C.rm_cm_reject(s.c, &mine)
		}
		s.mu.Unlock()
		return e
	}
	mine := s.priv()
	f, ok = s.run(ctx, s.params.Timeout, "accept", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_cm_accept(s.c, &mine, &peer, s.mtuCap(peer), ns, gen, st)
	})
	if !ok {
		return s.fail(f, w)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connectedCM()
	return nil
}

// connectCM is Connect in RDMA CM mode: resolve the responder's CMAddr,
// connect with our handshake, check its answer, RTR/RTS, establish.
func (s *Session) connectCM(ctx context.Context, remote probe.QPInfo) error {
	if s.connected {
		return &probe.Error{Class: probe.ClassInternal, Cause: "session already connected", Fix: "open a new session for another peer"}
	}
	host, port, err := net.SplitHostPort(remote.CMAddr)
	pn, perr := strconv.Atoi(port)
	if err != nil || perr != nil || net.ParseIP(host).To4() == nil {
		return &probe.Error{Class: probe.ClassInternal, Verb: "rdma_resolve_addr",
			Cause: fmt.Sprintf("the responder gave no usable RDMA CM address (%q)", remote.CMAddr),
			Fix:   "run the same rdmamesh version on both sides"}
	}
	src, e := s.cmIP()
	if e != nil {
		return e
	}
	if e := loadCM(); e != nil {
		return e
	}
	csrc, cdst := C.CString(src), C.CString(host)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cdst))
	w := s.where("connect", 0)
	w.peer = remote.CMAddr
	mine := s.priv()
	var peer C.rm_cm_priv
	f, ok := s.run(ctx, s.params.Timeout, "connect", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_cm_connect(s.c, csrc, cdst, C.int(pn), &mine, &peer, ns, gen, st)
	})
	if !ok {
		return s.fail(f, w)
	}
	if e := s.checkPeer(peer); e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return closedErr()
	}
	var st C.rm_status
	if C.rm_cm_establish(s.c, &peer, s.mtuCap(peer), &st) != 0 {
		return s.fail(statusFailure(&st), w)
	}
	s.connectedCM()
	return nil
}

// connectedCM records the connection; called with s.mu held.
func (s *Session) connectedCM() {
	s.connected = true
	if s.c != nil {
		s.mtu = mtuBytes(int(C.rm_sess_path_mtu(s.c)))
	}
}
