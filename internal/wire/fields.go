package wire

import (
	"math"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The probe vocabulary as fields of messages and records. Each pair writes
// and reads every field of its type; TestEveryFieldRoundTrips fills every
// field of every message by reflection, so a field added to a probe type
// and forgotten here fails a test rather than vanishing from the log.

// putOpt writes an optional value behind a presence byte.
func putOpt[T any](w *writer, v *T, put func(*writer, *T)) {
	w.flag(v != nil)
	if v != nil {
		put(w, v)
	}
}

func getOpt[T any](r *reader, get func(*reader, *T)) *T {
	if !r.flag() {
		return nil
	}
	v := new(T)
	get(r, v)
	return v
}

func (w *writer) params(p *probe.TestParams) {
	w.int(p.LatencySize)
	w.int(p.LatencyIters)
	w.int(p.Warmup)
	w.int(p.BWSize)
	w.int(p.BWIters)
	w.int(p.TxDepth)
	w.dur(p.Timeout)
	w.int(p.ReadIters)
	w.str(p.Connect)
}

func (r *reader) params() probe.TestParams {
	return probe.TestParams{LatencySize: r.int(), LatencyIters: r.int(), Warmup: r.int(), BWSize: r.int(), BWIters: r.int(),
		TxDepth: r.int(), Timeout: r.dur(), ReadIters: r.int(), Connect: r.str()}
}

func (w *writer) endpoint(e *probe.Endpoint) {
	w.str(e.Device)
	w.int(e.Port)
	w.int(e.GIDIndex)
	w.int(e.Rail)
	w.u64(uint64(e.FlowLabel))
}

func (r *reader) endpoint() probe.Endpoint {
	return probe.Endpoint{Device: r.str(), Port: r.int(), GIDIndex: r.int(), Rail: r.int(), FlowLabel: uint32(r.u64())}
}

func (w *writer) railPair(p *probe.RailPair) {
	w.int(p.Rail)
	w.endpoint(&p.Src)
	w.endpoint(&p.Dst)
}

func (r *reader) railPair(p *probe.RailPair) {
	*p = probe.RailPair{Rail: r.int(), Src: r.endpoint(), Dst: r.endpoint()}
}

func (w *writer) errorFields(e *probe.Error) {
	w.str(string(e.Class))
	w.str(e.Verb)
	w.int(e.Errno)
	w.int(e.WCStatus)
	w.str(e.Cause)
	w.str(e.Fix)
}

func (r *reader) errorFields(e *probe.Error) {
	*e = probe.Error{Class: probe.Class(r.str()), Verb: r.str(), Errno: r.int(), WCStatus: r.int(), Cause: r.str(), Fix: r.str()}
}

// error is an optional error.
func (w *writer) error(v *probe.Error) { putOpt(w, v, (*writer).errorFields) }

// error, latency and bandwidth read an optional value directly, not
// through getOpt: a reader passed to a function value escapes to the heap,
// and the leader decodes half a million answers a sweep.
func (r *reader) error() *probe.Error {
	if !r.flag() {
		return nil
	}
	e := new(probe.Error)
	r.errorFields(e)
	return e
}

func (w *writer) qp(q *probe.QPInfo) {
	w.str(q.Node)
	w.str(q.Device)
	w.int(q.Port)
	w.str(q.LinkLayer)
	w.u64(uint64(q.QPN))
	w.u64(uint64(q.PSN))
	w.u64(uint64(q.LID))
	w.str(q.GID)
	w.int(q.GIDIndex)
	w.str(q.GIDType)
	w.int(q.MTU)
	w.u64(uint64(q.RKey))
	w.u64(q.Addr)
	w.int(q.Size)
	w.str(q.Netdev)
	w.int(q.NetdevMTU)
	w.str(q.CMAddr)
	w.u64(uint64(q.UDPSport))
}

func (r *reader) qp() probe.QPInfo {
	q := probe.QPInfo{Node: r.str(), Device: r.str(), Port: r.int(), LinkLayer: r.str()}
	q.QPN, q.PSN = r.u32(), r.u32()
	lid := r.u64()
	if lid > math.MaxUint16 {
		r.fail()
	}
	q.LID = uint16(lid)
	q.GID, q.GIDIndex, q.GIDType, q.MTU = r.str(), r.int(), r.str(), r.int()
	q.RKey, q.Addr, q.Size = r.u32(), r.u64(), r.int()
	q.Netdev, q.NetdevMTU, q.CMAddr, q.UDPSport = r.str(), r.int(), r.str(), r.u16()
	return q
}

func (w *writer) latencyFields(l *probe.Latency) {
	w.int(l.Samples)
	for _, v := range [...]float64{l.MinNs, l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.MaxNs, l.StdevNs} {
		w.f64(v)
	}
}

func (r *reader) latencyFields(l *probe.Latency) {
	l.Samples = r.int()
	l.MinNs, l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.MaxNs, l.StdevNs = r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
}

// latency is an optional latency.
func (w *writer) latency(v *probe.Latency) { putOpt(w, v, (*writer).latencyFields) }

func (r *reader) latency() *probe.Latency {
	if !r.flag() {
		return nil
	}
	l := new(probe.Latency)
	r.latencyFields(l)
	return l
}

func (w *writer) bandwidthFields(b *probe.Bandwidth) {
	w.f64(b.Gbps)
	w.f64(b.MsgRate)
	w.i64(b.Bytes)
	w.f64(b.Duration)
}

func (r *reader) bandwidthFields(b *probe.Bandwidth) {
	b.Gbps, b.MsgRate, b.Bytes, b.Duration = r.f64(), r.f64(), r.i64(), r.f64()
}

// bandwidth is an optional bandwidth.
func (w *writer) bandwidth(v *probe.Bandwidth) { putOpt(w, v, (*writer).bandwidthFields) }

func (r *reader) bandwidth() *probe.Bandwidth {
	if !r.flag() {
		return nil
	}
	b := new(probe.Bandwidth)
	r.bandwidthFields(b)
	return b
}

func (w *writer) check(c *probe.Check) {
	w.str(c.Name)
	w.str(c.Status)
	w.str(c.Evidence)
	w.str(c.Cause)
	w.str(c.Fix)
}

func (r *reader) check(c *probe.Check) {
	*c = probe.Check{Name: r.str(), Status: r.str(), Evidence: r.str(), Cause: r.str(), Fix: r.str()}
}

func (w *writer) port(p *probe.Port) {
	w.str(p.Device)
	w.int(p.Port)
	w.int(p.Rail)
	w.str(p.LinkLayer)
	w.str(p.State)
	w.f64(p.RateGbps)
	w.int(p.MTU)
	w.u64(uint64(p.LID))
	w.int(p.GIDIndex)
	w.str(p.GID)
	w.str(p.GIDType)
	w.str(p.GIDReason)
	w.str(p.Netdev)
	w.str(p.IP)
	w.flag(p.Usable)
	w.str(p.UnusableWhy)
	putList(w, p.FailedChecks, (*writer).check)
}

func (r *reader) port(p *probe.Port) {
	*p = probe.Port{Device: r.str(), Port: r.int(), Rail: r.int(), LinkLayer: r.str(), State: r.str(), RateGbps: r.f64(), MTU: r.int()}
	lid := r.u64()
	if lid > math.MaxUint16 {
		r.fail()
	}
	p.LID = uint16(lid)
	p.GIDIndex, p.GID, p.GIDType, p.GIDReason, p.Netdev, p.IP = r.int(), r.str(), r.str(), r.str(), r.str(), r.str()
	p.Usable, p.UnusableWhy = r.flag(), r.str()
	p.FailedChecks = getList(r, (*reader).check)
}

// labels is a string map, sorted by key so equal maps encode equally.
func (w *writer) labels(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.count(len(keys), m == nil)
	for _, k := range keys {
		w.str(k)
		w.str(m[k])
	}
}

func (r *reader) labels() map[string]string {
	n, ok := r.count()
	if !ok {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str()
		m[k] = r.str()
	}
	return m
}
