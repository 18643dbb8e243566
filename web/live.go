package web

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// LiveBackend is what web needs for the always-on mesh. A Backend may also
// implement it; web finds out with a type assertion, so a coordinator
// without live probing (or a test fake) needs nothing new.
type LiveBackend interface {
	// LiveInfo reports the live mesh as it stands; Enabled false when it
	// is off. It must be cheap: every open live event stream calls it
	// several times a second.
	LiveInfo() api.LiveInfo
	// LiveMatrix is the live matrix as judged now, and the LiveInfo it was
	// judged at; ok is false while there is no window to judge (or live
	// probing is off). As with Backend.Matrix, the matrix is never mutated
	// once handed out, and the same pointer should be handed out until the
	// live state changes: web derives its grid and layers once per
	// pointer, so a fresh analysis per call costs a full derivation per
	// request (correct, only slow).
	LiveMatrix() (m *matrix.Matrix, info api.LiveInfo, ok bool)
}

// maxLiveViews is how many live matrices keep their derived views: the
// newest and the one before it, which a browser may still be reading.
// Live views have their own cache so a window every few seconds cannot
// push the sweeps' views out.
const maxLiveViews = 2

// live answers 404 itself unless the backend has a live mesh that is on.
func (s *Server) live(c *gin.Context) (LiveBackend, api.LiveInfo, bool) {
	lb, ok := s.b.(LiveBackend)
	if !ok {
		abortError(c, http.StatusNotFound, "this coordinator has no live mesh (always-on probing): judge a sweep instead", "")
		return nil, api.LiveInfo{}, false
	}
	info := lb.LiveInfo()
	if !info.Enabled {
		msg := "live probing is off: set live.enabled in the coordinator's config, and give the workers a fabric with probe ports"
		if info.Error != "" {
			msg = "live probing is off: " + info.Error
		}
		abortError(c, http.StatusNotFound, msg, "")
		return nil, info, false
	}
	return lb, info, true
}

// getLive serves GET /api/v1/live.
func (s *Server) getLive(c *gin.Context) {
	if _, info, ok := s.live(c); ok {
		c.JSON(http.StatusOK, info)
	}
}

// liveMatrix is sweepMatrix for the pseudo sweep id api.LiveID.
func (s *Server) liveMatrix(c *gin.Context) (api.SweepInfo, *matrix.Matrix, bool) {
	info := api.SweepInfo{ID: api.LiveID}
	lb, _, ok := s.live(c)
	if !ok {
		return info, nil, false
	}
	m, _, ok := lb.LiveMatrix()
	if !ok || m == nil {
		abortError(c, http.StatusNotFound, "the live mesh has no window to judge yet: the workers report one per window", "")
		return info, nil, false
	}
	return info, m, true
}

// cache is the view cache for sweep id's matrices.
func (s *Server) cache(id string) *viewCache {
	if id == api.LiveID {
		return &s.liveViews
	}
	return &s.views
}

// liveKey is what makes a live event: the plan and window, and whether the
// mesh is on at all. Age, members and the verdict change with them.
type liveKey struct {
	enabled bool
	plan    uint64
	window  int64
}

// liveEvents serves GET /api/v1/live/events:
//
//	event: window   data: api.LiveInfo   (at once, then whenever the window, the plan or Enabled changes)
//
// and a comment line every eventHeartbeat while nothing changes. It ends
// only when the client goes away or the server shuts down.
func (s *Server) liveEvents(c *gin.Context) {
	lb, _, ok := s.live(c)
	if !ok {
		return
	}
	sse := s.openSSE(c)
	defer sse.close()
	var last *liveKey
	for {
		info := lb.LiveInfo()
		k := liveKey{enabled: info.Enabled, plan: info.PlanID, window: info.Window}
		if last == nil || k != *last {
			data, err := json.Marshal(info)
			if err != nil || !sse.send("window", data) {
				return
			}
			last = &k
		} else if !sse.heartbeat() {
			return
		}
		if !sse.wait() {
			return
		}
	}
}
