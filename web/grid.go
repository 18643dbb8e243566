package web

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// gridInfo is GET /api/v1/sweeps/{id}/grid: everything the heatmap needs
// besides the layers, in display order; a value metric's scale comes with
// its layer. At 1,024 nodes it is tens of KB
// gzipped, against hundreds of MB for the full matrix JSON.
type gridInfo struct {
	Sweep      string           `json:"sweep"`
	Order      string           `json:"order"` // names the node order; each layer carries it too
	Rails      int              `json:"rails"`
	GroupLabel string           `json:"group_label,omitempty"`
	Nodes      []gridNode       `json:"nodes"` // display order: by group, then name
	Groups     []gridGroup      `json:"groups"`
	Cells      int              `json:"cells"`
	Cross      int              `json:"cross"` // cross-rail cells, in the pair endpoint only
	Counts     map[string]int   `json:"counts"`
	Healthy    bool             `json:"healthy"`
	Suspects   []matrix.Suspect `json:"suspects"`
	// LinkLoads are the fabric's loaded link directions (matrix.LinkLoads):
	// the Fabric view colours its cables from them.
	LinkLoads   []matrix.LinkLoad `json:"link_loads,omitempty"`
	RailRollups []matrix.Rollup   `json:"rail_rollups"`
	Thresholds  matrix.Thresholds `json:"thresholds"`
	Metrics     []metricInfo      `json:"metrics"`
	// Overview is which view shows this sweep's faults at a glance, and
	// why; the page opens on it.
	Overview overview `json:"overview"`
}

type gridNode struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
	State string `json:"state,omitempty"`
	// Per rail: the HCA's same-rail cells (as initiator or target), how
	// many were tested and how many were bad. The HCA rollup draws these.
	Bad    []int32 `json:"bad"`
	Tested []int32 `json:"tested"`
	Total  []int32 `json:"total"`
}

type metricInfo struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Unit   string `json:"unit,omitempty"`
	Better string `json:"better,omitempty"`
}

func (v *view) grid(sweep string) gridInfo {
	rails := max(v.m.Rails, 0)
	g := gridInfo{Sweep: sweep, Order: v.orderKey, Rails: rails, GroupLabel: v.groupLabel, Groups: v.groups,
		Cells: v.m.NumCells(), Cross: len(v.m.Cross), Counts: map[string]int{}, Healthy: v.m.Healthy,
		Suspects: v.m.Suspects, LinkLoads: v.m.LinkLoads, RailRollups: v.m.RailRollups, Thresholds: v.m.Thresholds,
		Metrics: []metricInfo{{Name: "status", Label: "status"}}, Overview: v.overview()}
	for k, n := range v.m.Counts {
		g.Counts[string(k)] = n
	}
	if g.Suspects == nil {
		g.Suspects = []matrix.Suspect{}
	}
	if g.RailRollups == nil {
		g.RailRollups = []matrix.Rollup{}
	}
	if g.Groups == nil {
		g.Groups = []gridGroup{}
	}
	for _, mt := range valueMetrics {
		g.Metrics = append(g.Metrics, metricInfo{Name: mt.name, Label: mt.label, Unit: mt.unit, Better: mt.better})
	}
	g.Nodes = make([]gridNode, v.n)
	for p, i := range v.order {
		nd := &v.m.Nodes[i]
		gn := gridNode{Name: nd.Name, Group: v.group[i], State: nd.State, Bad: make([]int32, rails),
			Tested: make([]int32, rails), Total: make([]int32, rails)}
		for r := range rails {
			t := v.hca[int(i)*rails+r]
			gn.Bad[r], gn.Tested[r], gn.Total[r] = t.bad, t.tested, t.total
		}
		g.Nodes[p] = gn
	}
	return g
}

// sweepMatrix resolves :id and its matrix, answering 404 itself when either
// is missing.
func (s *Server) sweepMatrix(c *gin.Context) (api.SweepInfo, *matrix.Matrix, bool) {
	if c.Param("id") == api.LiveID {
		return s.liveMatrix(c)
	}
	info, ok := s.resolveSweep(c)
	if !ok {
		return info, nil, false
	}
	m, ok := s.b.Matrix(info.ID)
	if !ok || m == nil {
		abortError(c, http.StatusNotFound, fmt.Sprintf("sweep %q has no matrix yet", info.ID), "")
		return info, nil, false
	}
	return info, m, true
}

func (s *Server) getGrid(c *gin.Context) {
	info, m, ok := s.sweepMatrix(c)
	if !ok {
		return
	}
	b, err := s.gridBlob(c.Request.Context(), info.ID, m)
	if err != nil {
		s.buildFailed(c, "grid encoding", err, "sweep", info.ID)
		return
	}
	b.send(c, "application/json; charset=utf-8")
}

// getLayer serves GET /api/v1/sweeps/{id}/layer?metric=M&rail=R; see
// layer.go for the body.
func (s *Server) getLayer(c *gin.Context) {
	metricName := cmp.Or(c.Query("metric"), "status")
	if _, ok := findMetric(metricName); !ok && metricName != "status" {
		abortError(c, http.StatusBadRequest, fmt.Sprintf("metric %q is not one of %s", metricName, metricNames()), "metric")
		return
	}
	railQ := cmp.Or(c.Query("rail"), "all")
	rail := allRails
	if railQ != "all" {
		r, err := strconv.Atoi(railQ)
		if err != nil || r < 0 {
			abortError(c, http.StatusBadRequest, fmt.Sprintf("rail %q is not \"all\" or a rail number", railQ), "rail")
			return
		}
		rail = r
	}
	info, m, ok := s.sweepMatrix(c)
	if !ok {
		return
	}
	if rail >= m.Rails {
		abortError(c, http.StatusBadRequest, fmt.Sprintf("rail %d: sweep %q has rails 0..%d", rail, info.ID, m.Rails-1), "rail")
		return
	}
	b, err := s.layerBlob(c.Request.Context(), info.ID, m, metricName, rail)
	if err != nil {
		s.buildFailed(c, "layer encoding", err, "sweep", info.ID, "metric", metricName, "rail", rail)
		return
	}
	b.send(c, "application/octet-stream")
}

// buildFailed answers a request whose grid, layer or view could not be
// built. A build given up because the client went away is no fault of the
// server's, and nobody reads its answer: no error is logged and the
// status is nginx's 499 (client closed request), for the request log.
func (s *Server) buildFailed(c *gin.Context, what string, err error, attrs ...any) {
	if givenUp(c.Request.Context(), err) {
		c.AbortWithStatus(statusClientClosed)
		return
	}
	s.log.Error(what+" failed", append(attrs, "err", err)...)
	abortError(c, http.StatusInternalServerError, what+" failed: "+err.Error(), "")
}

const statusClientClosed = 499

func metricNames() string {
	s := "status"
	for _, m := range valueMetrics {
		s += ", " + m.name
	}
	return s
}

// pairInfo is GET /api/v1/sweeps/{id}/pair?src=A&dst=B: every measurement
// between two nodes, both directions, every rail, with the nodes' ports.
type pairInfo struct {
	Sweep      string            `json:"sweep"`
	Src        matrix.Node       `json:"src"`
	Dst        matrix.Node       `json:"dst"`
	Forward    []matrix.Result   `json:"forward"` // src → dst, by rail
	Reverse    []matrix.Result   `json:"reverse"` // dst → src, by rail
	Cross      []matrix.Result   `json:"cross"`   // cross-rail cells between them, either direction
	Thresholds matrix.Thresholds `json:"thresholds"`
}

func (s *Server) getPair(c *gin.Context) {
	src, dst := c.Query("src"), c.Query("dst")
	switch {
	case src == "":
		abortError(c, http.StatusBadRequest, "src is required: ?src=NODE&dst=NODE", "src")
		return
	case dst == "":
		abortError(c, http.StatusBadRequest, "dst is required: ?src=NODE&dst=NODE", "dst")
		return
	case src == dst:
		abortError(c, http.StatusBadRequest, "src and dst are the same node: a node does not test itself", "dst")
		return
	}
	info, m, ok := s.sweepMatrix(c)
	if !ok {
		return
	}
	v, err := s.cache(info.ID).entry(info.ID, m).view(c.Request.Context())
	if err != nil {
		s.buildFailed(c, "view building", err, "sweep", info.ID)
		return
	}
	si, ok1 := v.byName[src]
	di, ok2 := v.byName[dst]
	if !ok1 || !ok2 {
		missing := src
		if ok1 {
			missing = dst
		}
		abortError(c, http.StatusNotFound, fmt.Sprintf("sweep %q has no node %q", info.ID, missing), "")
		return
	}
	p := pairInfo{Sweep: info.ID, Src: m.Nodes[si], Dst: m.Nodes[di], Forward: []matrix.Result{},
		Reverse: []matrix.Result{}, Cross: []matrix.Result{}, Thresholds: m.Thresholds}
	for r := range m.Rails {
		if k, ok := m.CellIndex(r, src, dst); ok {
			p.Forward = append(p.Forward, m.CellAt(k))
		}
		if k, ok := m.CellIndex(r, dst, src); ok {
			p.Reverse = append(p.Reverse, m.CellAt(k))
		}
	}
	for k := range m.Cross {
		x := &m.Cross[k]
		if (x.Src == src && x.Dst == dst) || (x.Src == dst && x.Dst == src) {
			p.Cross = append(p.Cross, *x)
		}
	}
	c.JSON(http.StatusOK, p)
}
