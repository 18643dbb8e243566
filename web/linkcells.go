package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// A link's answer lists this many of its cells unless ?limit= says
// otherwise, and never more than maxLinkCells: a spine link of a large
// fabric carries hundreds of thousands, and the counts cover them all.
const (
	defaultLinkCells = 200
	maxLinkCells     = 2000
)

// linkCellsInfo is GET /api/v1/sweeps/{id}/links/{link}/cells.
type linkCellsInfo struct {
	Sweep string `json:"sweep"`
	Limit int    `json:"limit"`
	matrix.LinkCells
}

// getLinkCells serves the tests whose paths crossed one cable: {link} is
// the cable's index in GET /api/v1/topology's cables, both of its
// directions. The matrix walks only the cells that can route over it, on
// each request: the Fabric view asks for the one cable clicked, and a
// per-link index of 134 M cells would cost more than the few walks.
func (s *Server) getLinkCells(c *gin.Context) {
	limit := defaultLinkCells
	if q := c.Query("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > maxLinkCells {
			abortError(c, http.StatusBadRequest, fmt.Sprintf("limit %q is not a number from 1 to %d", q, maxLinkCells), "limit")
			return
		}
		limit = n
	}
	topo := s.topology()
	if topo == nil {
		abortError(c, http.StatusNotFound, "no link to list cells for: "+noTopology, "")
		return
	}
	link := c.Param("link")
	n, err := strconv.Atoi(link)
	if err != nil || n < 0 || n >= len(topo.Cables) {
		abortError(c, http.StatusNotFound, fmt.Sprintf("no link %q: a link is named by its cable's index in "+
			"GET /api/v1/topology's cables, 0 to %d", link, len(topo.Cables)-1), "link")
		return
	}
	info, m, ok := s.sweepMatrix(c)
	if !ok {
		return
	}
	ran := s.sweepTopology(info.ID)
	if ran == nil {
		abortError(c, http.StatusNotFound, fmt.Sprintf("sweep %q ran without a topology: its cells were never routed over "+
			"the cables; sweeps started since the coordinator was given one list the tests through a link", info.ID), "")
		return
	}
	cable, ok := sameCable(topo, ran, n)
	if !ok {
		abortError(c, http.StatusNotFound, fmt.Sprintf("link %d, %s, is not in the topology sweep %q ran on (version %s): "+
			"the fabric's cabling changed since", n, topo.CableName(n), info.ID, info.Topology), "link")
		return
	}
	lc, err := m.LinkCells(c.Request.Context(), ran, cable, limit)
	if err != nil {
		s.buildFailed(c, "listing a link's cells", err, "sweep", info.ID, "link", n)
		return
	}
	lc.Cable = n // as the client named it, whichever version was walked
	s.sendJSON(c, linkCellsInfo{Sweep: info.ID, Limit: limit, LinkCells: lc})
}

// sameCable is cable c of from in to, found by its ends' names: a sweep
// may have run on an older version of the topology than the one the
// Fabric view draws, its cables numbered otherwise.
func sameCable(from, to *topology.Topology, c int) (int, bool) {
	if from == to {
		return c, true
	}
	a, b := from.EndName(from.Cables[c].A), from.EndName(from.Cables[c].B)
	for i, cb := range to.Cables {
		if x, y := to.EndName(cb.A), to.EndName(cb.B); x == a && y == b || x == b && y == a {
			return i, true
		}
	}
	return 0, false
}
