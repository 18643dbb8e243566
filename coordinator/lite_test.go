package coordinator

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// mixedWorker answers every task in codes with a fixed mix, by a hash of
// the direction, rail and round: plain rails, ok with a note, failures,
// bandwidth, a rail left out, and now and then a tester fault.
type mixedWorker struct{}

func mixHash(parts ...any) uint32 {
	h := fnv.New32a()
	fmt.Fprint(h, parts...)
	return h.Sum32()
}

func mixedRails(src, dst string, round int, rails []probe.RailPair) []wire.RailResult {
	var out []wire.RailResult
	for _, rp := range rails {
		k := mixHash(src, dst, rp.Rail, rp.Dst.Rail, round)
		rr := wire.RailResult{Rail: rp.Rail, Class: probe.ClassOK, Latency: &probe.Latency{Samples: int(k % 5000), MinNs: float64(900 + k%50),
			P50Ns: float64(1000 + k%97), P90Ns: float64(1100 + k%13), P99Ns: float64(1300 + k%7), P999Ns: 1500, MaxNs: float64(2000 + k%1000)},
			Flow: mixFlow(src, dst, rp.Rail, rp.Dst.Rail, round), BackFlow: mixBackFlow(src, dst, rp.Rail, rp.Dst.Rail, round)}
		switch k % 10 {
		case 6:
			rr.Error = &probe.Error{Class: probe.ClassOK, Cause: "note from " + src}
		case 7:
			rr.Class, rr.Error, rr.Latency = probe.ClassRetryExceeded, &probe.Error{Class: probe.ClassRetryExceeded, Cause: "wc 12"}, nil
		case 8:
			rr.Bandwidth = &probe.Bandwidth{Gbps: float64(k % 400), Bytes: int64(k), Duration: 1}
		case 9:
			continue
		}
		out = append(out, rr)
	}
	return out
}

// mixFlow is the flow mixedWorker gives a rail: RoCE v2's range, or
// none on about one rail in eight.
func mixFlow(src, dst string, rail, dstRail, round int) uint16 {
	k := mixHash("flow", src, dst, rail, dstRail, round)
	if k%8 == 0 {
		return 0
	}
	return 0xc000 | uint16(k>>8)&0x3fff
}

// mixBackFlow is the back flow mixedWorker gives a rail, drawn apart from
// its flow: none on about one rail in six, not always where the flow has
// none.
func mixBackFlow(src, dst string, rail, dstRail, round int) uint16 {
	k := mixHash("back flow", src, dst, rail, dstRail, round)
	if k%6 == 0 {
		return 0
	}
	return 0xc000 | uint16(k>>8)&0x3fff
}

func (mixedWorker) RoundTrip(req *http.Request) (*http.Response, error) {
	raw, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	t, err := wire.TaskMsg.Decode(raw)
	if err != nil {
		return nil, err
	}
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst, Rails: mixedRails(t.Src, t.Dst, t.Round, t.Rails)}
	if mixHash("tester", t.Src, t.Dst, t.Round)%23 == 0 {
		res.Tester = &probe.Error{Class: probe.ClassTester, Cause: "EMFILE"}
	}
	if t.Reverse != nil {
		res.Reverse = &wire.ReverseResult{Rails: mixedRails(t.Dst, t.Src, t.Round, t.Reverse.Rails)}
	}
	out := wire.GetBuf()
	out.B = wire.ResultCodec(true).Append(out.B, &res)
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Request: req, ContentLength: int64(len(out.B)),
		Header: answerHeader, Body: wire.NewBody(out)}, nil
}

// cellsOnly is the coordinator's dispatch without the round's room: every
// answer becomes cells with figures of their own, as before lite cells.
type cellsOnly struct{ d sweep.Dispatcher }

func (c cellsOnly) Phase(ctx context.Context, out []matrix.Cell, t sweep.Task) []matrix.Cell {
	t.Lite, t.Figures, t.Codes = nil, nil, nil
	return c.d.Phase(ctx, out, t)
}

// entryCells is every cell of a round entry as text, sorted: names,
// devices, round, class, error and figures, whichever form it travelled in.
func entryCells(t *testing.T, nodes []matrix.Node, b []byte) []string {
	t.Helper()
	rr, err := wire.ReadRound(b[1:])
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var out []string
	for range rr.Cells {
		var g wire.GridCodes
		if err := rr.Next(&g); err != nil {
			t.Fatal(err)
		}
		s, d := &nodes[g.Src], &nodes[g.Dst]
		var e *probe.Error
		if g.Err > 0 {
			e = &rr.Errors[g.Err-1]
		}
		var lat *probe.Latency
		if g.Meta&wire.FlagLat != 0 {
			lat = new(g.Lat.Latency(g.Samples))
		}
		var bw *probe.Bandwidth
		if g.Meta&wire.FlagBW != 0 {
			bw = new(g.BW.Bandwidth())
		}
		out = append(out, cellText(s.Name, d.Name, int(g.Rail), nil, s.Ports[g.Rail].Device, d.Ports[g.Rail].Device, int(g.Round),
			rr.Classes[g.Meta&wire.ClassMask], e, lat, bw, g.Flow, g.BackFlow))
	}
	for _, c := range rr.Whole {
		var lat *probe.Latency
		if c.Latency != nil {
			lat = new(wire.LatCodes(c.Latency).Latency(uint32(c.Latency.Samples)))
		}
		var bw *probe.Bandwidth
		if c.Bandwidth != nil {
			bw = new(wire.BWCodes(c.Bandwidth).Bandwidth())
		}
		out = append(out, cellText(c.Src, c.Dst, c.Rail, c.DstRail, c.SrcDevice, c.DstDevice, c.Round, c.Class, c.Error, lat, bw, c.Flow,
			c.BackFlow))
	}
	slices.Sort(out)
	return out
}

func cellText(src, dst string, rail int, dstRail *int, srcDev, dstDev string, round int, class probe.Class, e *probe.Error,
	lat *probe.Latency, bw *probe.Bandwidth, flow, back uint16) string {
	dr := rail
	if dstRail != nil {
		dr = *dstRail
	}
	s := fmt.Sprintf("%s>%s %d>%d %s>%s r%d %s flow %#x back %#x", src, dst, rail, dr, srcDev, dstDev, round, class, flow, back)
	if e != nil {
		s += fmt.Sprintf(" %+v", *e)
	}
	if lat != nil {
		s += fmt.Sprintf(" %+v", *lat)
	}
	if bw != nil {
		s += fmt.Sprintf(" %+v", *bw)
	}
	return s
}

// mixedSweep is nine nodes answered by mixedWorker through a coordinator's
// dispatch, and their all-pairs rounds. The nodes have an unusable port,
// a node with fewer ports and devices that differ by node.
func mixedSweep(t *testing.T) ([]matrix.Node, []scheduler.Round, *Coordinator) {
	t.Helper()
	nodes := make([]matrix.Node, 9)
	var names []string
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("n%d", i)
		names = append(names, nodes[i].Name)
		ports := 4
		if i == 5 {
			ports = 2
		}
		for r := range ports {
			nodes[i].Ports = append(nodes[i].Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r+i%2), Port: 1, Rail: r,
				Usable: i != 6 || r != 2, State: "ACTIVE"})
		}
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		t.Fatal(err)
	}
	c := &Coordinator{log: slog.New(slog.DiscardHandler), reg: newRegistry(), inflight: newInflight(), client: &http.Client{Transport: mixedWorker{}}}
	for _, n := range nodes {
		c.reg.nodes[n.Name] = &regNode{NodeInfo: api.NodeInfo{Name: n.Name, State: "alive", APIAddr: n.Name + ":7471"}}
	}
	return nodes, rounds, c
}

// TestLiteRoundsMatchCells runs every round of a sweep (mixedSweep)
// through the pool and the coordinator's dispatch, with lite cells and
// without, and encodes each round after the next has run in the other
// slab, as the committer does: the entries hold the same cells, flows
// included, whether the index places the lite ones or there is none. The
// sweep runs same-rail and all-rail (cross-rail links are never lite).
func TestLiteRoundsMatchCells(t *testing.T) {
	nodes, rounds, c := mixedSweep(t)
	for _, mode := range []string{"same", "all"} {
		spec := sweep.Spec{PairTimeout: time.Minute, RailMode: mode}
		ns := sweep.NewNodes(nodes)
		want := map[int][]string{}
		p := sweep.NewPool(0)
		for _, rd := range rounds {
			cells, lite := p.Round(context.Background(), cellsOnly{workerDispatch{c}}, "s", &spec, ns, rd)
			b, err := store.EncodeRound(nil, sweep.RoundResult{SweepID: "s", Round: rd.Index, Cells: cells})
			if err != nil || len(lite) != 0 {
				t.Fatalf("%v, %d lite cells without room", err, len(lite))
			}
			want[rd.Index] = entryCells(t, nodes, b)
		}
		p.Stop()
		for _, placed := range []bool{true, false} {
			var x *store.NodeIndex
			if placed {
				x = new(store.NewNodeIndex(nodes))
			}
			p := sweep.NewPool(0)
			var pending *sweep.RoundResult
			lites := 0
			encode := func() {
				if pending == nil {
					return
				}
				b, err := store.EncodeRound(x, *pending)
				if err != nil {
					t.Fatal(err)
				}
				if got := entryCells(t, nodes, b); !slices.Equal(got, want[pending.Round]) {
					t.Errorf("%s, placed %v, round %d: %d cells differ from the %d without lite cells", mode, placed, pending.Round, len(got),
						len(want[pending.Round]))
				}
			}
			for _, rd := range rounds {
				cells, lite := p.Round(context.Background(), workerDispatch{c}, "s", &spec, ns, rd)
				lites += len(lite)
				encode()
				pending = &sweep.RoundResult{SweepID: "s", Round: rd.Index, Cells: cells, Lite: lite, Nodes: nodes}
			}
			encode()
			p.Stop()
			if lites == 0 {
				t.Errorf("%s: no lite cell in the sweep", mode)
			}
		}
	}
}
