package pathtrace

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var loopOpts = Options{MaxTTL: 4, MaxSilent: 1, ProbesPerTTL: 1, Timeout: time.Second, Pacing: time.Millisecond}

// doctor's check passes wherever the kernel hands ICMP errors to UDP
// sockets: here, on loopback, without privileges.
func TestCheck(t *testing.T) {
	for _, src := range []string{"127.0.0.1", "::1"} {
		if err := Check(context.Background(), netip.MustParseAddr(src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	if err := Check(context.Background(), netip.MustParseAddr("192.0.2.1")); err == nil || !strings.Contains(err.Error(), "not an address of this network namespace") {
		t.Errorf("a foreign source: %v", err)
	}
}

// A destination that answers the probe is reached at TTL 1, and a flow
// without a source port is traced from the one the kernel picked.
func TestTraceUDPReply(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() {
		srv.Close()
		<-done
	}()
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			n, from, err := srv.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	lo := netip.MustParseAddr("127.0.0.1")
	f := Flow{Src: lo, Dst: lo, DstPort: srv.LocalAddr().(*net.UDPAddr).AddrPort().Port()}
	p, err := Trace(context.Background(), f, loopOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Reached || !p.Complete || len(p.Hops) != 1 || p.Hops[0].Answer != "udp reply" || p.Hops[0].Addr != lo || p.Flow.SrcPort == 0 {
		t.Fatalf("path %+v", p)
	}
}

// The flow's source port is its identity: taken by another socket, the
// trace says which port and how to find its owner.
func TestTraceSourcePortInUse(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	lo := netip.MustParseAddr("127.0.0.1")
	_, err = Trace(context.Background(), Flow{Src: lo, Dst: lo, SrcPort: port}, loopOpts)
	want := fmt.Sprintf("source port %d on 127.0.0.1 is in use by another socket", port)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// Hop loss on loopback: the kernel answers every probe to a closed port
// (loopback is exempt from ICMP rate limits), so nothing is lost.
func TestMeasureLossLoopback(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	closed := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	c.Close()
	lo := netip.MustParseAddr("127.0.0.1")
	got, err := MeasureLoss(context.Background(), Flow{Src: lo, Dst: lo, DstPort: closed}, 1,
		LossOptions{Probes: 50, Pacing: 100 * time.Microsecond, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (HopCount{TTL: 1, Sent: 50, Answered: 50}) {
		t.Fatalf("counts %+v, want 50 of 50 answered at TTL 1", got)
	}
}
