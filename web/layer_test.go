package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// synthBackend serves one synthetic sweep "big".
func synthBackend(m *matrix.Matrix) *fakeBackend {
	f := newFake()
	f.sweeps = append(f.sweeps, f.sweeps[1])
	f.sweeps[1].ID = "big"
	f.matrices["big"] = m
	return f
}

func getLayer(t *testing.T, h http.Handler, q string) (layerHeader, []byte) {
	t.Helper()
	rec := do(t, h, "GET", "/api/v1/sweeps/big/layer?"+q, "")
	if rec.Code != 200 {
		t.Fatalf("layer %s: status %d %s", q, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" {
		t.Fatalf("layer %s: Content-Type %q", q, ct)
	}
	hd, body, err := decodeLayer(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("layer %s: %v", q, err)
	}
	return hd, body
}

func getGridInfo(t *testing.T, h http.Handler) gridInfo {
	t.Helper()
	rec := do(t, h, "GET", "/api/v1/sweeps/big/grid", "")
	if rec.Code != 200 {
		t.Fatalf("grid: status %d %s", rec.Code, rec.Body)
	}
	return decode[gridInfo](t, rec)
}

// Every cell of the matrix must come back from its layer: the status code
// exactly, a figure within one bucket of the scale.
func TestLayerRoundTrip(t *testing.T) {
	const n, rails = 48, 2
	m := synth.Matrix(n, rails)
	h := serve(t, synthBackend(m))
	g := getGridInfo(t, h)
	pos := map[string]int{}
	for i, nd := range g.Nodes {
		pos[nd.Name] = i
	}
	if len(pos) != n {
		t.Fatalf("grid has %d nodes, want %d", len(pos), n)
	}
	metrics := map[string]metric{}
	for _, mt := range valueMetrics {
		metrics[mt.name] = mt
	}
	v := mustView(t, m)
	cells := m.Materialize().Cells // the expectation, from Build's form
	for _, name := range []string{"status", "p50", "p99", "bw", "line"} {
		for _, rail := range []string{"all", "0", "1"} {
			hd, body := getLayer(t, h, "metric="+name+"&rail="+rail)
			if hd.N != n || hd.Metric != name {
				t.Fatalf("%s/%s: header %+v", name, rail, hd)
			}
			// Fold the cells the way the layer claims to, then compare.
			want := make([]byte, n*n)
			for k := range cells {
				c := &cells[k]
				if rail != "all" && fmt.Sprint(c.Rail) != rail {
					continue
				}
				at := pos[c.Src]*n + pos[c.Dst]
				if name == "status" {
					want[at] = max(want[at], statusOf(c.Verdict))
					continue
				}
				mt := metrics[name]
				code := valueCode(v, mt, mustScale(t, v, name), c, v.byName[c.Src], v.byName[c.Dst])
				want[at] = mergeValue(want[at], code, mt.better == "lower")
				if code < firstBucket || rail == "all" {
					continue
				}
				x, _ := mt.value(v, c, v.byName[c.Src], v.byName[c.Dst])
				got := hd.Scale.value(body[at])
				if !withinBucket(*hd.Scale, x, got) {
					t.Fatalf("%s rail %s %s→%s: value %g came back as %g (scale %+v)", name, rail, c.Src, c.Dst, x, got, *hd.Scale)
				}
			}
			if !bytes.Equal(body, want) {
				t.Fatalf("%s/%s: layer differs from the cells", name, rail)
			}
			if name != "status" && (hd.Scale == nil || hd.Unit == "" || hd.Better == "") {
				t.Fatalf("%s: value layer without scale/unit/better: %+v", name, hd)
			}
			total := 0
			for _, c := range hd.Counts {
				total += c
			}
			if total != n*n {
				t.Fatalf("%s/%s: counts add up to %d, want %d", name, rail, total, n*n)
			}
		}
	}
}

func withinBucket(s scale, x, got float64) bool {
	if s.Kind == "log" {
		step := math.Pow(s.Hi/s.Lo, 1.0/buckets)
		x = min(max(x, s.Lo), s.Hi)
		return got/x <= step && x/got <= step
	}
	x = min(max(x, s.Lo), s.Hi)
	return math.Abs(got-x) <= (s.Hi-s.Lo)/buckets
}

func TestScaleBucketsClampAndOrder(t *testing.T) {
	for _, s := range []scale{{Kind: "log", Lo: 1000, Hi: 8000}, {Kind: "linear", Lo: 0, Hi: 400}} {
		if b := s.bucket(s.Lo / 2); b != firstBucket {
			t.Errorf("%+v: below lo gives %d", s, b)
		}
		if b := s.bucket(s.Hi * 3); b != 255 {
			t.Errorf("%+v: above hi gives %d", s, b)
		}
		if b := s.bucket(math.NaN()); b != firstBucket {
			t.Errorf("%+v: NaN gives %d", s, b)
		}
		prev := byte(0)
		for x := s.Lo; x <= s.Hi; x += (s.Hi - s.Lo) / 1000 {
			b := s.bucket(x)
			if b < prev {
				t.Fatalf("%+v: bucket of %g is %d, below %d", s, x, b, prev)
			}
			prev = b
		}
	}
	if b := (scale{Kind: "log", Lo: 5, Hi: 5}).bucket(5); b != firstBucket {
		t.Errorf("empty scale gives %d", b)
	}
}

// Switch groups must be contiguous in display order, in label order, and
// the grid must say where each starts.
func TestGridOrdersByGroup(t *testing.T) {
	nodes, cells := synth.Fabric(20, 1)
	// Relabel so name order and group order disagree; two nodes unlabelled.
	for i := range nodes {
		nodes[i].Labels = map[string]string{"leaf": []string{"zz", "aa", "mm"}[i%3]}
	}
	nodes[4].Labels, nodes[7].Labels = nil, nil
	m := matrix.Build(nodes, cells, matrix.DefaultThresholds())
	g := getGridInfo(t, serve(t, synthBackend(m)))
	if g.GroupLabel != "leaf" {
		t.Fatalf("group label %q", g.GroupLabel)
	}
	var names []string
	for _, gr := range g.Groups {
		names = append(names, gr.Name)
		for k := gr.Start; k < gr.Start+gr.Count; k++ {
			if g.Nodes[k].Group != gr.Name {
				t.Fatalf("node %s at %d is in %q, inside group %q", g.Nodes[k].Name, k, g.Nodes[k].Group, gr.Name)
			}
			if k > gr.Start && g.Nodes[k-1].Name >= g.Nodes[k].Name {
				t.Fatalf("group %q not in name order at %d", gr.Name, k)
			}
		}
	}
	if got := strings.Join(names, ","); got != "aa,mm,zz," {
		t.Fatalf("groups %q, want aa,mm,zz then the unlabelled", got)
	}
}

// The HCA tallies are what the node × rail rollup draws; the dead HCA must
// be all bad there and its neighbours clean.
func TestGridHCATallies(t *testing.T) {
	const n, rails = 16, 2
	g := getGridInfo(t, serve(t, synthBackend(synth.Matrix(n, rails))))
	for _, nd := range g.Nodes {
		for r := range rails {
			if nd.Total[r] != 2*(n-1) {
				t.Fatalf("%s rail %d: %d cells, want %d", nd.Name, r, nd.Total[r], 2*(n-1))
			}
		}
		if nd.Name == synth.Name(synth.DeadHCANode) && nd.Bad[synth.DeadHCARail] != nd.Total[synth.DeadHCARail] {
			t.Fatalf("dead HCA %s: %d/%d bad", nd.Name, nd.Bad[synth.DeadHCARail], nd.Total[synth.DeadHCARail])
		}
	}
	if len(g.Metrics) != 1+len(valueMetrics) || g.Metrics[0].Name != "status" {
		t.Fatalf("metrics %+v", g.Metrics)
	}
	if len(g.Suspects) == 0 || g.Healthy {
		t.Fatalf("synthetic faults not found: %d suspects, healthy %v", len(g.Suspects), g.Healthy)
	}
}

func TestLayerBadInput(t *testing.T) {
	h := serve(t, synthBackend(synth.Matrix(4, 2)))
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/layer?metric=jitter", ""), 400, "metric")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/layer?rail=x", ""), 400, "rail")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/layer?rail=-1", ""), 400, "rail")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/layer?rail=2", ""), 400, "rail")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/nope/layer", ""), 404, "")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/nope/grid", ""), 404, "")
	f := newFake()
	delete(f.matrices, "s2")
	wantError(t, do(t, serve(t, f), "GET", "/api/v1/sweeps/s2/layer", ""), 404, "")
	wantError(t, do(t, serve(t, f), "GET", "/api/v1/sweeps/s2/grid", ""), 404, "")
}

func TestDecodeLayerRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("RML1"), []byte("XXXX\x02\x00\x00\x00{}"), []byte("RML1\xff\x00\x00\x00{}"),
		[]byte("RML1\x02\x00\x00\x00{]"), []byte("RML1\x08\x00\x00\x00{\"n\":2}\x00")} {
		if _, _, err := decodeLayer(b); err == nil {
			t.Errorf("decodeLayer(%q) accepted", b)
		}
	}
}

// The layer cache must answer revalidations with 304 and gzip on request,
// like the matrix endpoint.
func TestLayerETagAndGzip(t *testing.T) {
	h := serve(t, synthBackend(synth.Matrix(64, 1)))
	first := do(t, h, "GET", "/api/v1/sweeps/big/layer?metric=p50", "")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if again := do(t, h, "GET", "/api/v1/sweeps/big/layer?metric=p50", "", "If-None-Match", etag); again.Code != http.StatusNotModified {
		t.Fatalf("revalidation: %d", again.Code)
	}
	zipped := do(t, h, "GET", "/api/v1/sweeps/big/layer?metric=p50", "", "Accept-Encoding", "gzip")
	if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= first.Body.Len() {
		t.Fatalf("gzip: encoding %q, %d bytes against %d", zipped.Header().Get("Content-Encoding"), zipped.Body.Len(), first.Body.Len())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, first.Body.Bytes()) {
		t.Fatal("gzip body differs")
	}
}

// Size bound at unit-test scale: a layer is one byte per pair plus a small
// header before compression, and compresses to well under that. The
// 1,024 x 8 figure is BenchmarkCompactPayload's.
func TestLayerSizeBound(t *testing.T) {
	const n = 128
	m := synth.Matrix(n, 2)
	v := mustView(t, m)
	for _, name := range []string{"status", "p50", "bw"} {
		raw, err := v.encodeLayer(context.Background(), name, allRails)
		if err != nil {
			t.Fatal(err)
		}
		b := newBlob(raw)
		if len(raw) > n*n+2048 {
			t.Errorf("%s: %d raw bytes for %d pairs", name, len(raw), n*n)
		}
		// Noisy figures take ~4 bits a pair; status far less.
		if bound := map[string]int{"status": n * n / 8}[name]; bound == 0 && len(b.gz) > n*n*6/10 || bound > 0 && len(b.gz) > bound {
			t.Errorf("%s: %d gzip bytes for %d pairs", name, len(b.gz), n*n)
		}
		t.Logf("%s layer, %d nodes: %d raw, %d gzip", name, n, len(raw), len(b.gz))
	}
}

func TestPairDetail(t *testing.T) {
	const n, rails = 40, 2
	h := serve(t, synthBackend(synth.Matrix(n, rails)))
	src, dst := synth.Name(synth.FlakySrc), synth.Name(synth.FlakyDst)
	rec := do(t, h, "GET", "/api/v1/sweeps/big/pair?src="+src+"&dst="+dst, "")
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	p := decode[pairInfo](t, rec)
	if len(p.Forward) != rails || len(p.Reverse) != rails || p.Src.Name != src || p.Dst.Name != dst {
		t.Fatalf("pair: %d forward, %d reverse, %s→%s", len(p.Forward), len(p.Reverse), p.Src.Name, p.Dst.Name)
	}
	for r, c := range p.Forward {
		if c.Rail != r || c.Src != src || c.Dst != dst {
			t.Fatalf("forward[%d] is %s→%s rail %d", r, c.Src, c.Dst, c.Rail)
		}
	}
	flaky := p.Forward[0]
	if len(flaky.Retests) != 1 || flaky.Class != probe.ClassRetryExceeded || flaky.Error == nil || flaky.Error.Fix == "" {
		t.Fatalf("flaky cell lost its history or cause: %+v", flaky)
	}
	if len(p.Src.Ports) != rails {
		t.Fatalf("src ports: %d", len(p.Src.Ports))
	}
}

func TestPairBadInput(t *testing.T) {
	h := serve(t, synthBackend(synth.Matrix(4, 1)))
	a, b := synth.Name(0), synth.Name(1)
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/pair?dst="+b, ""), 400, "src")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/pair?src="+a, ""), 400, "dst")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/pair?src="+a+"&dst="+a, ""), 400, "dst")
	e := wantError(t, do(t, h, "GET", "/api/v1/sweeps/big/pair?src="+a+"&dst=ghost", ""), 404, "")
	if !strings.Contains(e.Error, "ghost") {
		t.Errorf("404 does not name the node: %q", e.Error)
	}
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/nope/pair?src="+a+"&dst="+b, ""), 404, "")
}

func TestFindCellMissing(t *testing.T) {
	compact := synth.Matrix(3, 1)
	for _, m := range []*matrix.Matrix{compact, compact.Materialize()} {
		_, self := m.CellIndex(0, synth.Name(0), synth.Name(0))
		_, far := m.CellIndex(5, synth.Name(0), synth.Name(1))
		if self || far {
			t.Fatal("found a cell that does not exist")
		}
		if k, ok := m.CellIndex(0, synth.Name(2), synth.Name(1)); !ok || m.CellAt(k).Src != synth.Name(2) {
			t.Fatal("missed the last row")
		}
	}
}

func TestGridJSONIsCompact(t *testing.T) {
	m := synth.Matrix(64, 2)
	raw, _ := json.Marshal(mustView(t, m).grid("big"))
	if per := len(raw) / 64; per > 400 {
		t.Errorf("grid JSON is %d bytes per node", per)
	}
}

func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"rack2", "rack10", -1}, {"rack10", "rack2", 1}, {"L009", "L10", -1}, {"a", "a", 0}, {"a", "ab", -1},
		{"leaf-01", "leaf-1", 0}, {"x9y", "x10a", -1}, {"", "a", -1}, {"b", "a1", 1},
	} {
		if got := naturalCompare(c.a, c.b); got != c.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
