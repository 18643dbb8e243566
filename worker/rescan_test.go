package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// portsFabric lists ports a test can change, as a netdev whose MTU an
// operator changes underneath a running worker.
type portsFabric struct {
	mu    sync.Mutex
	ports []probe.Port
}

func (f *portsFabric) Name() string { return "test" }
func (f *portsFabric) Ports(context.Context) ([]probe.Port, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]probe.Port(nil), f.ports...), nil
}
func (f *portsFabric) Open(context.Context, probe.Endpoint, probe.TestParams) (fabric.Session, error) {
	return nil, errors.New("no sessions here")
}

// A rescan that finds nothing new keeps the generation (the coordinator
// fetches an inventory once per generation); one that finds a changed MTU
// takes a new generation with the new figure.
func TestRescanPublishesOnlyChanges(t *testing.T) {
	f := &portsFabric{ports: []probe.Port{{Device: "rxe0", Port: 1, MTU: 1024, Usable: true}}}
	a := &Agent{opts: Options{Name: "vm3", Fabric: f}, log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	if changed, err := a.refreshInventory(ctx); err != nil || !changed {
		t.Fatalf("first scan: changed %v, %v", changed, err)
	}
	gen := a.Inventory().Generation
	if changed, err := a.refreshInventory(ctx); err != nil || changed || a.Inventory().Generation != gen {
		t.Fatalf("an unchanged rescan: changed %v, generation %d -> %d, %v", changed, gen, a.Inventory().Generation, err)
	}
	f.mu.Lock()
	f.ports[0].MTU = 4096
	f.mu.Unlock()
	if changed, err := a.refreshInventory(ctx); err != nil || !changed || a.Inventory().Generation == gen || a.Inventory().Ports[0].MTU != 4096 {
		t.Fatalf("a changed MTU: changed %v, generation %d -> %d, ports %+v, %v", changed, gen, a.Inventory().Generation, a.Inventory().Ports, err)
	}
}
