//go:build verbs && cgo

package verbs

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// On a build host (no HCA, maybe no libibverbs) the engine must fail
// cleanly and classified; with RDMA devices present the lab covers it.
func TestEngineWithoutDevices(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband"); err == nil {
		t.Skip("this host has RDMA devices; the Soft-RoCE lab exercises the engine")
	}
	f, err := New(Options{})
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no libibverbs here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ports, err := f.Ports(context.Background())
	var pe *probe.Error
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("Ports error %T is not classified: %v", err, err)
	}
	if len(ports) != 0 {
		t.Fatalf("ports on a host without devices: %+v", ports)
	}
	_, err = f.Open(context.Background(), probe.Endpoint{GIDIndex: -1}, probe.DefaultTestParams())
	if !errors.As(err, &pe) || pe.Class != probe.ClassPortDown {
		t.Fatalf("Open without devices = %v, want a port-down *probe.Error", err)
	}
}
