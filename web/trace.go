package web

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// TraceBackend traces a cell's flow on demand; optional, as TopologyBackend.
type TraceBackend interface {
	TraceCell(ctx context.Context, id string, req api.TraceRequest) (api.CellTrace, error)
}

// postTrace is POST /api/v1/sweeps/{id}/trace: the hops the cell's flow
// takes now, traced from its initiator's worker, and their links on the
// sweep's topology. A write, though it changes nothing: each call sends
// probes through the fabric.
func (s *Server) postTrace(c *gin.Context) {
	tb, ok := s.b.(TraceBackend)
	if !ok {
		abortError(c, http.StatusNotFound, "this coordinator cannot trace flows", "")
		return
	}
	info, ok := s.resolveSweep(c)
	if !ok {
		return
	}
	var req api.TraceRequest
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.reply(c, badField("", `the body is not {"src": NODE, "dst": NODE, "rail": N}: `+err.Error()))
		return
	}
	if req.Src == "" || req.Dst == "" {
		s.reply(c, badField("src", `name the cell: {"src": NODE, "dst": NODE, "rail": N}`))
		return
	}
	out, err := tb.TraceCell(c.Request.Context(), info.ID, req)
	if err != nil {
		s.reply(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// PathsBackend serves a sweep's traced paths; optional, as TraceBackend.
type PathsBackend interface {
	SweepPaths(id string) ([]api.SweepPath, bool)
}

// getPaths is GET /api/v1/sweeps/{id}/paths: the flows the sweep traced
// after its rounds, their hops and the links the analysis routed them
// over ({"paths": []} when none were traced).
func (s *Server) getPaths(c *gin.Context) {
	pb, ok := s.b.(PathsBackend)
	if !ok {
		abortError(c, http.StatusNotFound, "this coordinator keeps no traced paths", "")
		return
	}
	info, ok := s.resolveSweep(c)
	if !ok {
		return
	}
	paths, ok := pb.SweepPaths(info.ID)
	if !ok {
		abortError(c, http.StatusNotFound, "no sweep "+info.ID, "GET /api/v1/sweeps lists them")
		return
	}
	c.JSON(http.StatusOK, gin.H{"paths": paths})
}
