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
	pb, info, ok := sweepCapability[PathsBackend](c, s, "this coordinator keeps no traced paths")
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

// CoverageBackend is a Backend that says how a sweep's tests covered the
// fabric's links.
type CoverageBackend interface {
	SweepCoverage(id string) (*api.Coverage, bool)
}

// getCoverage is GET /api/v1/sweeps/:id/coverage.
func (s *Server) getCoverage(c *gin.Context) {
	cb, info, ok := sweepCapability[CoverageBackend](c, s, "this coordinator does not report link coverage")
	if !ok {
		return
	}
	cov, ok := cb.SweepCoverage(info.ID)
	switch {
	case !ok:
		abortError(c, http.StatusNotFound, "no sweep "+info.ID, "GET /api/v1/sweeps lists them")
	case cov == nil:
		abortError(c, http.StatusNotFound, "sweep "+info.ID+" ran without a topology, so its links are not known",
			"give the coordinator one (coordinator.topology) and sweep again")
	default:
		c.JSON(http.StatusOK, cov)
	}
}

// sweepCapability is the backend as T, an optional capability of a sweep
// endpoint, and the sweep the request names; false once it has answered
// (404 saying lacks when the backend has no T).
func sweepCapability[T any](c *gin.Context, s *Server, lacks string) (T, api.SweepInfo, bool) {
	b, ok := s.b.(T)
	if !ok {
		abortError(c, http.StatusNotFound, lacks, "")
		return b, api.SweepInfo{}, false
	}
	info, ok := s.resolveSweep(c)
	return b, info, ok
}
