package verbs

import (
	"strings"
	"syscall"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestClassifyCM(t *testing.T) {
	w := where{device: "rxe0", port: 1, gidIndex: 1, netdev: "eth1", peer: "10.78.0.12:40000"}
	cases := []struct {
		name  string
		f     failure
		class probe.Class
		cause string // a substring the operator must see
	}{
		{"unreachable", failure{op: opCMConnect, err: syscall.ETIMEDOUT, cmEvent: cmUnreachable, cmStatus: -110}, probe.ClassRetryExceeded, "no answer"},
		{"no listener", failure{op: opCMConnect, err: syscall.EPROTO, cmEvent: cmRejected, cmStatus: rejInvalidServiceID}, probe.ClassPeerLost, "nothing listens"},
		{"refused", failure{op: opCMConnect, err: syscall.EPROTO, cmEvent: cmRejected, cmStatus: rejConsumer}, probe.ClassInternal, "different test sizes"},
		{"arp", failure{op: opCMResolveAddr, err: syscall.EHOSTUNREACH, cmEvent: cmAddrError, cmStatus: -113}, probe.ClassTimeout, "ARP"},
		{"no device for ip", failure{op: opCMResolveAddr, err: syscall.ENODEV, cmEvent: cmAddrError, cmStatus: -19}, probe.ClassNoNetdev, "no RDMA device"},
		{"route", failure{op: opCMResolveRt, err: syscall.ETIMEDOUT, cmEvent: cmRouteError}, probe.ClassTimeout, "no route"},
		{"removed", failure{op: opCMAccept, err: syscall.EPROTO, cmEvent: cmDeviceRemoval}, probe.ClassPortDown, "removed"},
		{"peer gone", failure{op: opCMAccept, err: syscall.EPROTO, cmEvent: cmDisconnected}, probe.ClassPeerLost, "disconnected"},
		{"no rdma_cm", failure{op: opCMChannel, err: syscall.ENOENT, cmEvent: cmNone}, probe.ClassInternal, "rdma_cm is missing"},
		{"rdma_cm perms", failure{op: opCMChannel, err: syscall.EACCES, cmEvent: cmNone}, probe.ClassResource, "permission"},
		{"bind", failure{op: opCMBind, err: syscall.EADDRNOTAVAIL, cmEvent: cmNone}, probe.ClassNoNetdev, "no RDMA device owns"},
		{"other device", failure{op: opCMDevice, err: syscall.ENXIO, cmEvent: cmNone}, probe.ClassInvalidGID, "another device"},
		{"deadline", failure{op: opCMAccept, err: syscall.ETIMEDOUT, cmEvent: cmNone}, probe.ClassTimeout, "waiting for the initiator"},
		{"cancel", failure{op: opCMConnect, err: syscall.ECANCELED, cmEvent: cmNone}, probe.ClassTimeout, "cancelled"},
		{"not ours", failure{op: opCMConnect, err: syscall.EPROTO, cmEvent: cmNone}, probe.ClassInternal, "handshake"},
	}
	for _, c := range cases {
		e := classify(c.f, w)
		if e.Class != c.class || !strings.Contains(e.Cause, c.cause) || e.Fix == "" || e.Verb == "" {
			t.Errorf("%s: %s (verb %q, fix %q); want class %s, cause with %q", c.name, e, e.Verb, e.Fix, c.class, c.cause)
		}
	}
}
