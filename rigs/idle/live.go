package idle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// pushPlan gives the measured worker the always-on mesh's plan a leader
// would give it in a pool of members nodes (groups of 32, the shipped
// rates), as the coordinator does: POST /v1/live/plan. The pool's peers
// are gossip members only, so they have no probe ports: every probe the
// worker sends goes unanswered and expires as lost, the most bookkeeping
// a probe can cost. It returns the probes per second the plan has the
// worker send.
func (w *worker) pushPlan(ctx context.Context, members int) (float64, error) {
	var inv probe.Inventory
	if err := w.getJSON(ctx, "/v1/inventory", &inv); err != nil {
		return 0, err
	}
	if len(inv.Live) == 0 {
		return 0, fmt.Errorf("the worker opened no probe port (is live.enabled off?): %s", w.tail())
	}
	var rails []int
	self := liveplan.Member{Name: workerName, Group: "leaf-00"}
	for _, a := range inv.Live {
		rails = append(rails, a.Rail)
		self.Addrs = append(self.Addrs, fabric.ProbeAddr{Node: workerName, Device: a.Device, GID: a.GID, LID: a.LID, QPN: a.QPN, QKey: a.QKey})
	}
	self.Rails = rails
	ms := []liveplan.Member{self}
	for i := range members - 1 {
		m := liveplan.Member{Name: peerName(i), Group: fmt.Sprintf("leaf-%02d", (i+1)/32), Rails: rails}
		for _, a := range inv.Live {
			h := fnv.New32a()
			fmt.Fprintf(h, "%s/%s", m.Name, a.Device)
			m.Addrs = append(m.Addrs, fabric.ProbeAddr{Node: m.Name, Device: a.Device, QPN: h.Sum32() & 0xffffff, QKey: a.QKey})
		}
		ms = append(ms, m)
	}
	pl, cov, err := liveplan.New(1, ms, liveplan.Params{}, time.Now())
	if err != nil {
		return 0, err
	}
	body := wire.LivePlanMsg.Append(nil, new(pl.Wire()))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+w.api+"/v1/live/plan", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", wire.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("POST /v1/live/plan: %s: %s", resp.Status, b)
	}
	return cov.MaxRate * float64(len(rails)), nil
}

func (w *worker) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.api+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
