package scale

import (
	"bytes"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// nullTask answers a task at once with plausible per-rail figures, without
// running the simulated test: the "control" mode measures the coordinator
// and its raft log alone, as if 1,024 real hosts ran the tests elsewhere.
// Only task calls are answered here; gossip and inventory are the workers'.
func nullTask(req *http.Request) (*http.Response, bool) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/tasks" || req.Header.Get("Content-Type") != probe.BinaryType {
		return nil, false
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, false
	}
	t, err := probe.DecodeTask(body)
	if err != nil {
		return nil, false
	}
	res := probe.TaskResult{Version: probe.Version, SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst,
		Rails: make([]probe.RailResult, len(t.Rails))}
	for i, rp := range t.Rails {
		h := fnv.New64a()
		h.Write([]byte(t.Src))
		h.Write([]byte(t.Dst))
		j := float64(h.Sum64()%97+uint64(rp.Rail)) / 10 // a few ns of spread
		res.Rails[i] = probe.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device, Class: probe.ClassOK,
			SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex,
			Latency: &probe.Latency{Samples: t.Params.LatencyIters, MinNs: 990 + j, P50Ns: 1010 + j, P90Ns: 1030 + j, P99Ns: 1100 + j,
				P999Ns: 1300 + j, MaxNs: 2000 + j, StdevNs: 12 + j/10}}
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", probe.BinaryType)
	rec.WriteHeader(http.StatusOK)
	rec.Body = bytes.NewBuffer(probe.AppendTaskResult(nil, res))
	return rec.Result(), true
}
