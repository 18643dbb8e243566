package verbs

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestHealthBookTransitions(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHealthBook(func() time.Time { return now })
	if e := h.check("rxe0", 1); e != nil {
		t.Fatalf("unknown device is unhealthy: %v", e)
	}
	if !h.present("rxe0", 2, nil) {
		t.Fatal("a new device is a change")
	}
	if h.present("rxe0", 2, nil) {
		t.Fatal("the same state again is no change")
	}

	down := &probe.Error{Class: probe.ClassPortDown, Cause: "rxe0 port 1 went down", Fix: "bring eth1 up"}
	now = now.Add(time.Second)
	h.portDown("rxe0", 1, down, "IBV_EVENT_PORT_ERR")
	if e := h.check("rxe0", 1); e != down {
		t.Fatalf("port 1 after PORT_ERR: %v", e)
	}
	if e := h.check("rxe0", 2); e != nil {
		t.Fatalf("port 2 is not down: %v", e)
	}
	l := h.list()
	if len(l) != 1 || l[0].State != probe.HealthPortDown || len(l[0].DownPorts) != 1 || l[0].DownPorts[0] != 1 ||
		l[0].Cause != down.Cause || l[0].Fix != down.Fix || l[0].Events != 1 || l[0].LastEvent != "IBV_EVENT_PORT_ERR" || !l[0].Since.Equal(now) {
		t.Fatalf("list after port down: %+v", l)
	}

	h.portUp("rxe0", 1, "IBV_EVENT_PORT_ACTIVE")
	if e := h.check("rxe0", 1); e != nil || h.list()[0].State != probe.HealthOK {
		t.Fatalf("port 1 after PORT_ACTIVE: %v %+v", e, h.list())
	}

	gone := &probe.Error{Class: probe.ClassPortDown, Cause: "device rxe0 was removed"}
	h.removed("rxe0", gone, "removal")
	if e := h.check("rxe0", 2); e != gone {
		t.Fatalf("any port of a removed device fails with the removal: %v", e)
	}
	if g := h.gone(); g["rxe0"].err != gone || g["rxe0"].ports != 2 {
		t.Fatalf("gone = %+v", g)
	}
	if !h.present("rxe0", 2, []portDownInfo{{port: 2, err: down}}) {
		t.Fatal("a device coming back is a change")
	}
	l = h.list()
	if l[0].State != probe.HealthPortDown || l[0].Reopened != 1 || len(h.gone()) != 0 {
		t.Fatalf("back with port 2 down: %+v", l)
	}
	if e := h.check("rxe0", 2); e != down {
		t.Fatalf("port 2 reported down at reopen: %v", e)
	}
}

func TestRoceNetdev(t *testing.T) {
	ib := fixture(map[string]string{
		"rxe0/ports/1/gid_attrs/ndevs/1": "eth1",
		"rxe1/parent":                    "eth2",
	})
	net := fixture(map[string]string{
		"eth1/operstate": "down",
		"eth1/mtu":       "1500",
		"eth2/operstate": "up",
		"eth2/mtu":       "9000",
	})
	// GID 0 (link-local) is gone while the netdev is down: the lookup
	// must go on to the next slot.
	if got := net.roceNetdev(ib, "rxe0", 1); got != (netdevInfo{name: "eth1", oper: "down", mtu: 1500}) {
		t.Fatalf("rxe0: %+v", got)
	}
	if s := net.roceNetdev(ib, "rxe0", 1).String(); s != "its netdev eth1 is down (MTU 1500)" {
		t.Fatalf("String = %q", s)
	}
	if got := net.roceNetdev(ib, "rxe1", 1); got.name != "eth2" || got.mtu != 9000 {
		t.Fatalf("rxe1 through parent: %+v", got)
	}
	if got := net.roceNetdev(ib, "mlx5_0", 1); got != (netdevInfo{}) || got.String() != "" {
		t.Fatalf("unknown device: %+v", got)
	}
}

func fixture(files map[string]string) sysfs {
	m := fstest.MapFS{}
	for p, v := range files {
		m[p] = &fstest.MapFile{Data: []byte(v + "\n")}
	}
	return sysfs{root: m}
}
