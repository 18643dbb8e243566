package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// FlowTracer traces a flow's path from this node: a pathtrace.Tracer, the
// simulated fabric, or the tests' fake.
type FlowTracer interface {
	Trace(ctx context.Context, f pathtrace.Flow) (pathtrace.Path, error)
}

// LossMeasurer counts a flow's hops' answers to repeated probes
// (pathtrace.MeasureLoss); a FlowTracer that is one answers loss_probes.
type LossMeasurer interface {
	Loss(ctx context.Context, f pathtrace.Flow, ttls int, o pathtrace.LossOptions) ([]pathtrace.HopCount, error)
}

// TraceRequest is POST /v1/trace's body: flows to trace from this worker,
// as the coordinator picks them (a suspect cell's, a link sweep's).
type TraceRequest struct {
	Flows []TraceFlow `json:"flows"`
}

// TraceFlow is a RoCE v2 flow's 5-tuple: its GIDs' IPs and its source port.
type TraceFlow struct {
	SrcIP   string `json:"src_ip"`
	DstIP   string `json:"dst_ip"`
	SrcPort int    `json:"src_port"`
	DstPort int    `json:"dst_port,omitempty"` // 0: 4791
	// LossProbes, when set, probes each hop the trace found this many
	// times more and counts the answers (the path's Loss): what a lossy
	// link on the way drops.
	LossProbes int `json:"loss_probes,omitempty"`
}

// TraceReply answers it: a path per flow, in the request's order.
type TraceReply struct {
	Paths []TracedPath `json:"paths"`
}

// TracedPath is a flow's path, or (Error) why it could not be traced here.
type TracedPath struct {
	pathtrace.Path
	Error string `json:"error,omitempty"`
}

// A request's bounds: every probe waits its turn on the process's pacer,
// so flows beyond these would only queue.
const (
	maxTraceFlows = 64
	traceBound    = time.Minute // the whole request's
	traceParallel = 4           // traces in flight: a silent hop costs a timeout, not pacing
	maxTraceBody  = 64 << 10
)

const traceFix = `send {"flows": [{"src_ip": "10.0.1.2", "dst_ip": "10.0.2.2", "src_port": 49152, "loss_probes": 300}]}, at most 64 flows (loss_probes optional)`

type traceHandler struct {
	tracer FlowTracer
	bound  time.Duration
	log    *slog.Logger
}

// traceHandler serves POST /v1/trace with a Tracer of its own, so each
// Agent (whose routes are built once, at Start) keeps its own cache. The
// Tracer runs no goroutine between requests: stopping the Agent's server
// ends every trace through its request's context, and nothing else is
// left to stop.
// Options.Tracer, when set, answers instead of the host.
func (a *Agent) traceHandler() http.Handler {
	var tr FlowTracer = pathtrace.NewTracer(pathtrace.Config{})
	if a.opts.Tracer != nil {
		tr = a.opts.Tracer
	}
	return &traceHandler{tracer: tr, bound: traceBound, log: a.log}
}

func (h *traceHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	flows, err := readTraceRequest(w, r)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, &probe.Error{Class: probe.ClassInternal, Cause: err.Error(), Fix: traceFix})
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(r.Context(), h.bound, fmt.Errorf("the trace request's %v bound ran out", h.bound))
	defer cancel()
	paths := h.traceAll(ctx, flows)
	h.log.Debug("traced flows", "flows", len(flows), "took", time.Since(start))
	writeJSON(w, http.StatusOK, TraceReply{Paths: paths})
}

// traceAll traces the flows, traceParallel at a time; every trace has
// ended when it returns.
func (h *traceHandler) traceAll(ctx context.Context, flows []traceAsk) []TracedPath {
	out := make([]TracedPath, len(flows))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(traceParallel, len(flows)) {
		wg.Go(func() {
			for i := range next {
				out[i] = h.traceOne(ctx, flows[i])
			}
		})
	}
	for i := range flows {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// traceAsk is one flow of a request and how many loss probes it wants.
type traceAsk struct {
	flow       pathtrace.Flow
	lossProbes int
}

func (h *traceHandler) traceOne(ctx context.Context, a traceAsk) TracedPath {
	f := a.flow
	if ctx.Err() != nil {
		return TracedPath{Path: pathtrace.Path{Flow: f}, Error: fmt.Sprintf("not traced: %v; ask for fewer flows at a time", context.Cause(ctx))}
	}
	p, err := h.tracer.Trace(ctx, f)
	if err != nil {
		return TracedPath{Path: pathtrace.Path{Flow: f}, Error: err.Error()}
	}
	if lm, ok := h.tracer.(LossMeasurer); ok && a.lossProbes > 0 && len(p.Hops) > 0 {
		// Counts cut short by the request's bound are still counts: Sent
		// says how many went.
		loss, err := lm.Loss(ctx, p.Flow, len(p.Hops), pathtrace.LossOptions{Probes: a.lossProbes})
		if err != nil {
			h.log.Debug("hop loss", "flow", p.Flow, "err", err)
		}
		p.Loss = loss
	}
	return TracedPath{Path: p}
}

func readTraceRequest(w http.ResponseWriter, r *http.Request) ([]traceAsk, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxTraceBody))
	dec.DisallowUnknownFields()
	var req TraceRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("trace request: read the JSON body: %w", err)
	}
	switch n := len(req.Flows); {
	case n == 0:
		return nil, errors.New("trace request: flows is empty")
	case n > maxTraceFlows:
		return nil, fmt.Errorf("trace request: %d flows, at most %d a request", n, maxTraceFlows)
	}
	flows := make([]traceAsk, len(req.Flows))
	for i, tf := range req.Flows {
		f, err := tf.flow()
		if err != nil {
			return nil, fmt.Errorf("trace request: flows[%d]: %w", i, err)
		}
		if tf.LossProbes < 0 || tf.LossProbes > pathtrace.MaxLossProbes {
			return nil, fmt.Errorf("trace request: flows[%d]: loss_probes %d: want 0..%d probes a hop (0: no hop loss)", i, tf.LossProbes, pathtrace.MaxLossProbes)
		}
		flows[i] = traceAsk{flow: f, lossProbes: tf.LossProbes}
	}
	return flows, nil
}

func (tf TraceFlow) flow() (pathtrace.Flow, error) {
	src, err := netip.ParseAddr(tf.SrcIP)
	if err != nil {
		return pathtrace.Flow{}, fmt.Errorf("src_ip %q is not an IP address: give the IP of the flow's source GID", tf.SrcIP)
	}
	dst, err := netip.ParseAddr(tf.DstIP)
	if err != nil {
		return pathtrace.Flow{}, fmt.Errorf("dst_ip %q is not an IP address: give the IP of the flow's destination GID", tf.DstIP)
	}
	if tf.SrcPort < 1 || tf.SrcPort > 65535 {
		return pathtrace.Flow{}, fmt.Errorf("src_port %d: want the flow's UDP source port, 1..65535", tf.SrcPort)
	}
	if tf.DstPort < 0 || tf.DstPort > 65535 {
		return pathtrace.Flow{}, fmt.Errorf("dst_port %d: want 1..65535, or 0 for RoCE v2's 4791", tf.DstPort)
	}
	f := pathtrace.Flow{Src: src, Dst: dst, SrcPort: uint16(tf.SrcPort), DstPort: uint16(tf.DstPort)}
	if f.DstPort == 0 {
		f.DstPort = pathtrace.RoCEPort
	}
	return f, f.Validate()
}
