package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/worker"
)

// noCM hides a fabric's RDMA CM support, like a provider without it.
type noCM struct{ fabric.Fabric }

type plainSession struct{ fabric.Session }

func (f noCM) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (fabric.Session, error) {
	s, err := f.Fabric.Open(ctx, ep, p)
	if err != nil {
		return nil, err
	}
	return plainSession{s}, nil
}

func simPair(t *testing.T, wrapDst func(fabric.Fabric) fabric.Fabric) (*worker.Agent, string) {
	t.Helper()
	fab, err := sim.New(sim.Config{Preset: "roce-2x100", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	dstFab := fabric.Adapt(fab.Node("node-02"))
	if wrapDst != nil {
		dstFab = wrapDst(dstFab)
	}
	dst, err := worker.Start(context.Background(), worker.Options{Name: "node-02", Fabric: dstFab,
		GossipBind: "127.0.0.1:0", APIListen: "127.0.0.1:0", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Stop)
	src, err := worker.Start(context.Background(), worker.Options{Name: "node-01", Fabric: fabric.Adapt(fab.Node("node-01")),
		GossipBind: "127.0.0.1:0", APIListen: "127.0.0.1:0", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Stop)
	return src, dst.APIAddr()
}

func cmTask(dstAPI string) wire.Task {
	p := probe.DefaultTestParams()
	p.Connect = probe.ConnectRDMACM
	ep := probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: -1}
	return wire.Task{SweepID: "s1", Src: "node-01", Dst: "node-02", DstAPI: dstAPI,
		Rails: []probe.RailPair{{Rail: 0, Src: ep, Dst: ep}}, Params: p, Deadline: time.Now().Add(time.Minute)}
}

// A sweep in RDMA CM mode runs through the worker API like the exchange:
// the responder listens before it answers and accepts afterwards.
func TestTaskOverRDMACM(t *testing.T) {
	src, dstAPI := simPair(t, nil)
	res := src.RunTask(context.Background(), cmTask(dstAPI))
	if len(res.Rails) != 1 || res.Rails[0].Class != probe.ClassOK || res.Rails[0].Latency == nil || res.Rails[0].Bandwidth == nil {
		t.Fatalf("rdmacm task: %+v (error %v)", res.Rails, res.Rails[0].Error)
	}
	var h worker.HealthReply
	getJSON(t, "http://"+dstAPI+"/v1/health", &h)
	if h.Served[probe.ConnectRDMACM] != 1 || h.Served[probe.ConnectExchange] != 0 {
		t.Fatalf("responder served %v, want one RDMA CM session", h.Served)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// A responder whose fabric has no RDMA CM says so, with the way out.
func TestTaskOverRDMACMUnsupported(t *testing.T) {
	src, dstAPI := simPair(t, func(f fabric.Fabric) fabric.Fabric { return noCM{f} })
	res := src.RunTask(context.Background(), cmTask(dstAPI))
	e := res.Rails[0].Error
	if res.Rails[0].Class != probe.ClassInternal || e == nil || !strings.Contains(e.Cause, "RDMA CM") || !strings.Contains(e.Fix, "connect=exchange") {
		t.Fatalf("got %+v", res.Rails[0])
	}
}

// READ latency is optional: a fabric without it leaves the field empty
// instead of failing the cell.
func TestTaskReadLatencyOptional(t *testing.T) {
	src, dstAPI := simPair(t, nil)
	task := cmTask(dstAPI)
	task.Params.Connect, task.Params.ReadIters = probe.ConnectExchange, 100
	res := src.RunTask(context.Background(), task)
	if r := res.Rails[0]; r.Class != probe.ClassOK || r.ReadLatency != nil || r.Latency == nil {
		t.Fatalf("got %+v", r)
	}
}
