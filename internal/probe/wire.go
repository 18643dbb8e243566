package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// BinaryType is the Content-Type (and Accept) of the compact binary form of
// the hot-path messages: Task, TaskResult, SessionBatchRequest and
// SessionBatchReply. JSON stays the default and what humans and older peers
// speak; the binary form exists for scale. A 1,024-node sweep sends a
// million tasks, and encoding/json spent about 100 µs of CPU per 8-rail
// task on reflection alone, more than the rest of the round trip.
//
// Layout: 'R', the wire version, a message kind, then the fields in
// declaration order: integers as zigzag varints, strings and slices with a
// uvarint length, floats as 8 little-endian bytes, times as UnixNano (0 =
// the zero time), optional structs behind a presence byte.
const BinaryType = "application/x-rdmamesh"

const wireVersion = 1

type wireKind byte

const (
	kindTask wireKind = iota + 1
	kindTaskResult
	kindSessionBatch
	kindSessionBatchReply
)

// maxWireList bounds decoded list lengths, so a corrupt length cannot make
// a decoder allocate gigabytes.
const maxWireList = 1 << 12

var errWire = errors.New("malformed binary message")

type wbuf []byte

func (w *wbuf) int(v int)     { *w = binary.AppendVarint(*w, int64(v)) }
func (w *wbuf) u64(v uint64)  { *w = binary.AppendUvarint(*w, v) }
func (w *wbuf) str(s string)  { w.u64(uint64(len(s))); *w = append(*w, s...) }
func (w *wbuf) f64(v float64) { *w = binary.LittleEndian.AppendUint64(*w, math.Float64bits(v)) }
func (w *wbuf) i64(v int64)   { *w = binary.AppendVarint(*w, v) }

func (w *wbuf) flag(b bool) {
	v := byte(0)
	if b {
		v = 1
	}
	*w = append(*w, v)
}
func (w *wbuf) dur(d time.Duration) { *w = binary.AppendVarint(*w, int64(d)) }

func (w *wbuf) time(t time.Time) {
	if t.IsZero() {
		w.int(0)
		return
	}
	*w = binary.AppendVarint(*w, t.UnixNano())
}

func (w *wbuf) header(k wireKind) { *w = append(*w, 'R', wireVersion, byte(k)) }

type rbuf struct {
	b   []byte
	err error
	// shared: str returns interned strings (intern.go), for decoders
	// whose strings repeat across messages.
	shared bool
}

func (r *rbuf) fail() {
	if r.err == nil {
		r.err = errWire
	}
}

func (r *rbuf) int() int {
	v, n := binary.Varint(r.b)
	if n <= 0 || v > math.MaxInt32 || v < math.MinInt32 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *rbuf) i64() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rbuf) u64() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rbuf) str() string {
	n := r.u64()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	var s string
	if r.shared {
		s = intern(r.b[:n])
	} else {
		s = string(r.b[:n])
	}
	r.b = r.b[n:]
	return s
}

func (r *rbuf) f64() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *rbuf) flag() bool {
	if len(r.b) < 1 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *rbuf) dur() time.Duration { return time.Duration(r.i64()) }

func (r *rbuf) time() time.Time {
	n := r.i64()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (r *rbuf) list() int {
	n := r.u64()
	if n > maxWireList {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *rbuf) header(k wireKind) {
	if len(r.b) < 3 || r.b[0] != 'R' || r.b[2] != byte(k) {
		r.fail()
		return
	}
	if r.b[1] != wireVersion {
		r.err = fmt.Errorf("binary message version %d: this build speaks %d", r.b[1], wireVersion)
		return
	}
	r.b = r.b[3:]
}

func (r *rbuf) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	return r.err
}

func (w *wbuf) params(p TestParams) {
	w.int(p.LatencySize)
	w.int(p.LatencyIters)
	w.int(p.Warmup)
	w.int(p.BWSize)
	w.int(p.BWIters)
	w.int(p.TxDepth)
	w.dur(p.Timeout)
	w.str(p.Connect)
	w.int(p.ReadIters)
}

func (r *rbuf) params() TestParams {
	return TestParams{LatencySize: r.int(), LatencyIters: r.int(), Warmup: r.int(), BWSize: r.int(), BWIters: r.int(),
		TxDepth: r.int(), Timeout: r.dur(), Connect: r.str(), ReadIters: r.int()}
}

func (w *wbuf) endpoint(e Endpoint) {
	w.str(e.Device)
	w.int(e.Port)
	w.int(e.GIDIndex)
	w.int(e.Rail)
}

func (r *rbuf) endpoint() Endpoint {
	return Endpoint{Device: r.str(), Port: r.int(), GIDIndex: r.int(), Rail: r.int()}
}

func (w *wbuf) error(e *Error) {
	w.flag(e != nil)
	if e == nil {
		return
	}
	w.str(string(e.Class))
	w.str(e.Verb)
	w.int(e.Errno)
	w.int(e.WCStatus)
	w.str(e.Cause)
	w.str(e.Fix)
}

func (r *rbuf) error() *Error {
	if !r.flag() {
		return nil
	}
	return &Error{Class: Class(r.str()), Verb: r.str(), Errno: r.int(), WCStatus: r.int(), Cause: r.str(), Fix: r.str()}
}

func (w *wbuf) qp(q QPInfo) {
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
}

func (r *rbuf) qp() QPInfo {
	q := QPInfo{Node: r.str(), Device: r.str(), Port: r.int(), LinkLayer: r.str()}
	qpn, psn, lid := r.u64(), r.u64(), r.u64()
	if qpn > math.MaxUint32 || psn > math.MaxUint32 || lid > math.MaxUint16 {
		r.fail()
	}
	q.QPN, q.PSN, q.LID = uint32(qpn), uint32(psn), uint16(lid)
	q.GID, q.GIDIndex, q.GIDType, q.MTU = r.str(), r.int(), r.str(), r.int()
	rkey := r.u64()
	if rkey > math.MaxUint32 {
		r.fail()
	}
	q.RKey, q.Addr, q.Size = uint32(rkey), r.u64(), r.int()
	q.Netdev, q.NetdevMTU, q.CMAddr = r.str(), r.int(), r.str()
	return q
}

// AppendTask appends t's binary form.
func AppendTask(b []byte, t Task) []byte {
	w := wbuf(b)
	w.header(kindTask)
	w.int(t.Version)
	w.str(t.SweepID)
	w.int(t.Round)
	w.str(t.Src)
	w.str(t.Dst)
	w.str(t.DstAPI)
	w.u64(uint64(len(t.Rails)))
	for _, rp := range t.Rails {
		w.int(rp.Rail)
		w.endpoint(rp.Src)
		w.endpoint(rp.Dst)
	}
	w.params(t.Params)
	w.time(t.Deadline)
	w.str(t.Ticket)
	return w
}

// DecodeTask reads what AppendTask wrote.
func DecodeTask(b []byte) (Task, error) {
	r := rbuf{b: b}
	r.header(kindTask)
	t := Task{Version: r.int(), SweepID: r.str(), Round: r.int(), Src: r.str(), Dst: r.str(), DstAPI: r.str()}
	if n := r.list(); n > 0 {
		t.Rails = make([]RailPair, n)
		for i := range t.Rails {
			t.Rails[i] = RailPair{Rail: r.int(), Src: r.endpoint(), Dst: r.endpoint()}
		}
	}
	t.Params, t.Deadline, t.Ticket = r.params(), r.time(), r.str()
	return t, r.done()
}

func (w *wbuf) latency(l *Latency) {
	w.flag(l != nil)
	if l != nil {
		w.int(l.Samples)
		for _, v := range [...]float64{l.MinNs, l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.MaxNs, l.StdevNs} {
			w.f64(v)
		}
	}
}

func (r *rbuf) latencyFigures() *Latency {
	l := &Latency{Samples: r.int()}
	l.MinNs, l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.MaxNs, l.StdevNs = r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
	return l
}

// AppendTaskResult appends res's binary form.
func AppendTaskResult(b []byte, res TaskResult) []byte {
	w := wbuf(b)
	w.header(kindTaskResult)
	w.int(res.Version)
	w.str(res.SweepID)
	w.int(res.Round)
	w.str(res.Src)
	w.str(res.Dst)
	w.u64(uint64(len(res.Rails)))
	for _, rr := range res.Rails {
		w.int(rr.Rail)
		w.str(rr.SrcDevice)
		w.str(rr.DstDevice)
		w.str(string(rr.Class))
		w.error(rr.Error)
		w.latency(rr.Latency)
		w.flag(rr.Bandwidth != nil)
		if bw := rr.Bandwidth; bw != nil {
			w.f64(bw.Gbps)
			w.f64(bw.MsgRate)
			w.i64(bw.Bytes)
			w.f64(bw.Duration)
		}
		w.int(rr.SrcGID)
		w.int(rr.DstGID)
		w.latency(rr.ReadLatency)
	}
	w.dur(res.Elapsed)
	w.error(res.Tester)
	return w
}

// DecodeTaskResult reads what AppendTaskResult wrote. The rails' latency
// and bandwidth figures share one allocation each; its strings are interned.
func DecodeTaskResult(b []byte) (TaskResult, error) {
	r := rbuf{b: b, shared: true}
	r.header(kindTaskResult)
	res := TaskResult{Version: r.int(), SweepID: r.str(), Round: r.int(), Src: r.str(), Dst: r.str()}
	if n := r.list(); n > 0 {
		res.Rails = make([]RailResult, n)
		lats := make([]Latency, n)
		var bws []Bandwidth // quick sweeps measure no bandwidth
		for i := range res.Rails {
			rr := &res.Rails[i]
			rr.Rail, rr.SrcDevice, rr.DstDevice, rr.Class = r.int(), r.str(), r.str(), Class(r.str())
			rr.Error = r.error()
			if r.flag() {
				l := &lats[i]
				l.Samples = r.int()
				l.MinNs, l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.MaxNs, l.StdevNs = r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
				rr.Latency = l
			}
			if r.flag() {
				if bws == nil {
					bws = make([]Bandwidth, n)
				}
				bw := &bws[i]
				bw.Gbps, bw.MsgRate, bw.Bytes, bw.Duration = r.f64(), r.f64(), r.i64(), r.f64()
				rr.Bandwidth = bw
			}
			rr.SrcGID, rr.DstGID = r.int(), r.int()
			if r.flag() {
				rr.ReadLatency = r.latencyFigures()
			}
		}
	}
	res.Elapsed = r.dur()
	res.Tester = r.error()
	return res, r.done()
}

// AppendSessionBatch appends req's binary form.
func AppendSessionBatch(b []byte, req SessionBatchRequest) []byte {
	w := wbuf(b)
	w.header(kindSessionBatch)
	w.int(req.Version)
	w.str(req.SweepID)
	w.str(req.Src)
	w.str(req.Dst)
	w.time(req.Deadline)
	w.str(req.Ticket)
	w.params(req.Params)
	w.u64(uint64(len(req.Rails)))
	for _, rl := range req.Rails {
		w.int(rl.Rail)
		w.endpoint(rl.Local)
		w.qp(rl.Initiator)
	}
	return w
}

// DecodeSessionBatch reads what AppendSessionBatch wrote.
func DecodeSessionBatch(b []byte) (SessionBatchRequest, error) {
	r := rbuf{b: b}
	r.header(kindSessionBatch)
	req := SessionBatchRequest{Version: r.int(), SweepID: r.str(), Src: r.str(), Dst: r.str(), Deadline: r.time(), Ticket: r.str(),
		Params: r.params()}
	if n := r.list(); n > 0 {
		req.Rails = make([]SessionRail, n)
		for i := range req.Rails {
			req.Rails[i] = SessionRail{Rail: r.int(), Local: r.endpoint(), Initiator: r.qp()}
		}
	}
	return req, r.done()
}

// AppendSessionBatchReply appends rep's binary form.
func AppendSessionBatchReply(b []byte, rep SessionBatchReply) []byte {
	w := wbuf(b)
	w.header(kindSessionBatchReply)
	w.int(rep.Version)
	w.u64(uint64(len(rep.Rails)))
	for _, o := range rep.Rails {
		w.int(o.Rail)
		w.str(o.SessionID)
		w.qp(o.Responder)
		w.error(o.Error)
	}
	return w
}

// DecodeSessionBatchReply reads what AppendSessionBatchReply wrote.
func DecodeSessionBatchReply(b []byte) (SessionBatchReply, error) {
	r := rbuf{b: b}
	r.header(kindSessionBatchReply)
	rep := SessionBatchReply{Version: r.int()}
	if n := r.list(); n > 0 {
		rep.Rails = make([]SessionRailOpen, n)
		for i := range rep.Rails {
			rep.Rails[i] = SessionRailOpen{Rail: r.int(), SessionID: r.str(), Responder: r.qp(), Error: r.error()}
		}
	}
	return rep, r.done()
}
