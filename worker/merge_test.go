package worker

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestMergePorts(t *testing.T) {
	found := []probe.Port{
		{Device: "mlx5_0", Port: 1, GIDIndex: 3, GIDReason: "ipv4 v2", Usable: true},
		{Device: "mlx5_1", Port: 1, GIDIndex: 0, MTU: 2048, Usable: true},
		{Device: "mlx5_2", Port: 1, Usable: true}, // not visible to the fabric
	}
	fabric := []probe.Port{
		{Device: "mlx5_0", Port: 1, GIDIndex: 1, MTU: 4096, LID: 7, Usable: true},
		{Device: "mlx5_1", Port: 1, MTU: 1024, Usable: false, UnusableWhy: "port DOWN"},
	}
	got := mergePorts(found, fabric)
	if len(got) != 2 {
		t.Fatalf("got %d ports", len(got))
	}
	if got[0].GIDIndex != 3 || got[0].MTU != 4096 || got[0].LID != 7 || !got[0].Usable {
		t.Fatalf("port 0: %+v", got[0])
	}
	if got[1].MTU != 2048 || got[1].Usable || got[1].UnusableWhy != "port DOWN" {
		t.Fatalf("port 1: %+v", got[1])
	}
}

// A device that was removed is gone from sysfs; the fabric still lists it,
// unusable, so its rail shows as down instead of disappearing.
func TestMergeKeepsRemovedDevice(t *testing.T) {
	found := []probe.Port{{Device: "rxe0", Port: 1, Usable: true}}
	fabric := []probe.Port{
		{Device: "rxe0", Port: 1, Usable: true},
		{Device: "rxe1", Port: 1, State: "REMOVED", UnusableWhy: "device rxe1 was removed"},
		{Device: "rxe2", Port: 1, Usable: true}, // usable but unseen by discovery: still dropped
	}
	got := mergePorts(found, fabric)
	if len(got) != 2 || got[1].Device != "rxe1" || got[1].Usable || got[1].State != "REMOVED" {
		t.Fatalf("got %+v", got)
	}
}

// When discovery and the engine both refuse a port, both reasons stay.
func TestMergeKeepsBothReasons(t *testing.T) {
	found := []probe.Port{{Device: "rxe0", Port: 1, UnusableWhy: "gid:rxe0/1: RTR with an empty source GID index fails with EINVAL"}}
	fabric := []probe.Port{{Device: "rxe0", Port: 1, UnusableWhy: "invalid-gid: GID index 7 is empty on rxe0 port 1"}}
	got := mergePorts(found, fabric)
	if len(got) != 1 || got[0].UnusableWhy != found[0].UnusableWhy+"; engine: "+fabric[0].UnusableWhy {
		t.Fatalf("got %+v", got)
	}
	if again := mergePorts(got, fabric); again[0].UnusableWhy != got[0].UnusableWhy {
		t.Fatalf("the engine's reason added twice: %q", again[0].UnusableWhy)
	}
}

// A device the engine saw removed while sysfs still shows remnants of it:
// the removal leads, not discovery's finding about device nodes.
func TestMergeRemovedOverStaleDiscovery(t *testing.T) {
	found := []probe.Port{{Device: "rxe0", Port: 1, State: "ACTIVE",
		UnusableWhy:  "this container got device nodes for other HCAs only",
		FailedChecks: []probe.Check{{Name: "container", Status: "fail", Fix: "request the RDMA resource from the device plugin"}}}}
	fabric := []probe.Port{{Device: "rxe0", Port: 1, State: "REMOVED", UnusableWhy: "device rxe0 was removed (IBV_EVENT_DEVICE_FATAL)",
		FailedChecks: []probe.Check{{Name: "device", Status: "fail", Fix: "check `rdma link` and `ibv_devices`"}}}}
	got := mergePorts(found, fabric)
	if len(got) != 1 || got[0].Usable || got[0].State != "REMOVED" ||
		!strings.HasPrefix(got[0].UnusableWhy, "device rxe0 was removed") ||
		!strings.Contains(got[0].UnusableWhy, "discovery, before: this container") ||
		len(got[0].FailedChecks) != 1 || !strings.Contains(got[0].FailedChecks[0].Fix, "rdma link") {
		t.Fatalf("got %+v", got)
	}
	found[0].UnusableWhy = ""
	if got := mergePorts(found, fabric); got[0].UnusableWhy != fabric[0].UnusableWhy {
		t.Fatalf("without a finding: %q", got[0].UnusableWhy)
	}
}
