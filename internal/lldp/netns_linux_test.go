//go:build linux

package lldp

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

// advertised is what the leaf's lldpd says it announces on iface (its own
// view: lldpcli show interfaces has the neighbours' shape) once its
// configuration has taken effect down to the port description, the last
// line lldpd applies: until then it announces the defaults.
func advertised(t *testing.T, sock, iface, portDescription string) Neighbor {
	t.Helper()
	var n Neighbor
	wait.Until(t, 10*time.Second, "the leaf's lldpd to configure "+iface, func() error {
		out, err := exec.Command("lldpcli", "-u", sock, "-f", "json0", "show", "interfaces").Output()
		if err != nil {
			return err
		}
		ifs, err := ParseLLDPCLI(out, time.Now())
		if err != nil {
			return err
		}
		if len(ifs[iface]) != 1 || ifs[iface][0].SystemName != "leaf-1" || ifs[iface][0].PortDescription != portDescription {
			return errors.New("not configured yet: " + string(out))
		}
		n = ifs[iface][0]
		return nil
	})
	return n
}

func sameIdentity(t *testing.T, what string, got, want Neighbor) {
	t.Helper()
	if got.ChassisID != want.ChassisID || got.ChassisIDType != want.ChassisIDType || got.SystemName != want.SystemName ||
		got.PortID != want.PortID || got.PortIDType != want.PortIDType || got.PortDescription != want.PortDescription {
		t.Errorf("%s: got %+v\nthe leaf advertises %+v", what, got, want)
	}
}

func TestNeighbourFromLLDPDOverVeth(t *testing.T) {
	lab := newVethLab(t)
	leafSock := lab.lldpd(t, lab.leaf, "leaf", "swp3",
		"configure system hostname leaf-1",
		"configure lldp tx-interval 1",
		"configure lldp portidsubtype ifname",
		`configure ports swp3 lldp portdescription "gpu01 eth1"`)
	// The host runs lldpd too, sending its own LLDP out of eth1: the
	// listener must not take those for the switch's.
	hostSock := lab.lldpd(t, lab.host, "host", "eth1",
		"configure system hostname gpu01",
		"configure lldp tx-interval 1")
	want := advertised(t, leafSock, "swp3", "gpu01 eth1")
	if want.ChassisIDType != TypeMAC || want.PortID != "swp3" || want.PortIDType != TypeInterfaceName || want.PortDescription != "gpu01 eth1" {
		t.Fatalf("the leaf advertises %+v, not what it was configured with", want)
	}
	t.Logf("the leaf advertises chassis %s %s, system %q, port %s %q", want.ChassisIDType, want.ChassisID, want.SystemName, want.PortID, want.PortDescription)
	openInHost := func(ifname string) (Reader, error) {
		var c *Conn
		err := onThread(lab.host, func() (err error) {
			c, err = Open(ifname)
			return err
		})
		if err != nil {
			return nil, err
		}
		return c, nil
	}

	t.Run("frames", func(t *testing.T) {
		r, err := openInHost("eth1")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// Three announcements a second apart: the host's own, sent in
		// between, must all be skipped.
		for i := range 3 {
			n, err := r.Read(ctx)
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			sameIdentity(t, "frame", n, want)
			if n.Source != SourceFrame || n.Interface != "eth1" || n.TTL != 4*time.Second {
				t.Errorf("frame %d: source %q on %q, TTL %s; want lldp-frame on eth1, TTL 4s (tx-interval 1 x hold 4)", i, n.Source, n.Interface, n.TTL)
			}
			t.Logf("frame %d on eth1 from %s: %s, chassis %s, TTL %s", i, n.From, n.Label(), n.ChassisID, n.TTL)
		}
	})

	t.Run("watcher", func(t *testing.T) {
		w := NewWatcher(WatchOptions{Open: openInHost})
		defer w.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		w.Wait(ctx, "eth1")
		n, err := w.Neighbor("eth1")
		if err != nil {
			t.Fatal(err)
		}
		sameIdentity(t, "watcher", n, want)
		silent, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel2()
		w.Wait(silent, "eth2")
		_, err = w.Neighbor("eth2")
		var nh *NotHeardError
		if !errors.As(err, &nh) {
			t.Fatalf("eth2, which nothing announces on: %v, want NotHeardError", err)
		}
		t.Logf("eth2: %v", err)
	})

	t.Run("lldpd", func(t *testing.T) {
		var n Neighbor
		wait.Until(t, 20*time.Second, "the host's lldpd to hear the leaf on eth1", func() error {
			ns, err := LLDPD{Socket: hostSock}.Neighbors(context.Background())
			if err != nil {
				return err
			}
			if _, ok := ns["eth2"]; ok {
				t.Fatalf("lldpd lists a neighbour on silent eth2: %+v", ns["eth2"])
			}
			n, err = One("eth1", ns["eth1"])
			return err
		})
		sameIdentity(t, "lldpd", n, want)
		if n.Source != SourceLLDPD || n.TTL != 4*time.Second {
			t.Errorf("source %q, TTL %s; want lldpd, 4s", n.Source, n.TTL)
		}
		t.Logf("lldpd on eth1: %s, chassis %s %s, port %s %q, TTL %s", n.Label(), n.ChassisIDType, n.ChassisID, n.PortIDType, n.PortDescription, n.TTL)
	})

	t.Run("frames this package builds, malformed and whole", func(t *testing.T) {
		r, err := openInHost("eth2")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		bad := ethernet([]byte{0x02, 0, 0, 0, 0, 0x42}, leafDU()[:11]) // cut inside the port ID TLV
		good := ethernet([]byte{0x02, 0, 0, 0, 0, 0x42}, leafDU())
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// The listener is open before the frames are sent: both wait on
		// its socket, in order.
		for _, f := range [][]byte{bad, good} {
			if err := lab.send(lab.leaf, "swp4", f); err != nil {
				t.Fatal(err)
			}
		}
		_, err = r.Read(ctx)
		var bad2 *MalformedError
		if !errors.As(err, &bad2) || bad2.From != "02:00:00:00:00:42" || !strings.Contains(err.Error(), "truncated port ID TLV") {
			t.Fatalf("the cut frame: %v, want a MalformedError naming the sender and the truncated TLV", err)
		}
		n, err := r.Read(ctx)
		if err != nil || n.Label() != "leaf-1 port swp3" || n.From.String() != "02:00:00:00:00:42" {
			t.Fatalf("the whole frame after it: %+v, %v", n, err)
		}
		short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel2()
		if _, err := r.Read(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a read on a silent link past its context: %v", err)
		}
	})

	t.Run("no such interface", func(t *testing.T) {
		_, err := openInHost("swp3") // the leaf's end: not in the host's namespace
		if err == nil || err.Error() != "listen for LLDP on swp3: no such interface in this network namespace" {
			t.Errorf("got %v", err)
		}
	})

	t.Run("lldpd not running", func(t *testing.T) {
		_, err := LLDPD{Socket: filepath.Join(lab.dir, "nobody.socket")}.Neighbors(context.Background())
		if !errors.Is(err, ErrNotRunning) {
			t.Fatalf("got %v, want ErrNotRunning", err)
		}
		t.Logf("%v", err)
	})
}
