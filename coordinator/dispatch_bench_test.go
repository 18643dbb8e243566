package coordinator

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// answerAll is a worker API that answers every task at once with the same
// rails and figures, so that a benchmark measures the leader's side alone
// (the answer names its task: the leader checks that it does).
type answerAll struct{ rails wire.EncodedRails }

var answerDecoders = sync.Pool{New: func() any { return new(wire.TaskDecoder) }}

func (a answerAll) RoundTrip(req *http.Request) (*http.Response, error) {
	in, err := wire.ReadBuf(req.Body, req.ContentLength, maxAnswer)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	defer in.Put()
	d := answerDecoders.Get().(*wire.TaskDecoder)
	defer answerDecoders.Put(d)
	t, err := d.Decode(in.B)
	if err != nil {
		return nil, err
	}
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst, Reverse: &wire.ReverseResult{}}
	out := wire.GetBuf()
	out.B = wire.AppendTaskResult(out.B, &res, a.rails, a.rails) // the same figures back
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Request: req, ContentLength: int64(len(out.B)),
		Header: answerHeader, Body: wire.NewBody(out)}, nil
}

var answerHeader = http.Header{"Content-Type": {wire.ContentType}}

func dispatchCoordinator(nodes []matrix.Node) *Coordinator {
	var rails []wire.RailResult
	for r := range nodes[0].Ports {
		rails = append(rails, wire.RailResult{Rail: r, SrcDevice: nodes[0].Ports[r].Device, DstDevice: nodes[0].Ports[r].Device,
			Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000, MinNs: 990, P50Ns: 1010, P90Ns: 1030, P99Ns: 1100, P999Ns: 1300, MaxNs: 2000, StdevNs: 12}})
	}
	c := &Coordinator{log: slog.New(slog.DiscardHandler), reg: newRegistry(), inflight: newInflight(),
		client: &http.Client{Transport: answerAll{wire.EncodeRailResults(rails, false)}}}
	for _, n := range nodes {
		c.reg.nodes[n.Name] = &regNode{NodeInfo: api.NodeInfo{Name: n.Name, State: "alive", APIAddr: n.Name + ":7471"}}
	}
	return c
}

// BenchmarkDispatchRound runs one 256-node round (128 pairs, 128 pair
// tasks of 8 rails each way) against workers that answer at once: the
// leader's cost of planning, encoding, the request and decoding the answer
// into cells. ns/task is per direction (half a pair task).
func BenchmarkDispatchRound(b *testing.B) {
	nodes, rounds := benchSweep(b, 256)
	ns := sweep.NewNodes(nodes)
	c := dispatchCoordinator(nodes)
	spec := sweep.Spec{PairTimeout: time.Minute}
	pool := sweep.NewPool(0)
	defer pool.Stop()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cells, lite := pool.Round(context.Background(), workerDispatch{c}, "s", &spec, ns, rounds[i%len(rounds)])
		if len(cells)+len(lite) != 256*8 {
			b.Fatalf("%d cells, %d lite", len(cells), len(lite))
		}
		if i == 0 {
			for _, cl := range cells {
				if cl.Class != probe.ClassOK {
					b.Fatalf("cell %s>%s/%d: %s %v", cl.Src, cl.Dst, cl.Rail, cl.Class, cl.Error)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/task")
}
