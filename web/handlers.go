package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// latestID names the newest sweep wherever a sweep id is expected, so scripts
// and the gate can ask for "the result" without listing sweeps first.
const latestID = "latest"

// The matrix exporters are written alongside this package; asserting them
// keeps web compiling against any stage of that work.
type (
	jsonWriter  interface{ WriteJSON(io.Writer) error }
	junitWriter interface{ WriteJUnit(io.Writer) error }
)

// csrf refuses state-changing requests a browser sends from another origin:
// without it any web page an operator visits could start full sweeps.
// Non-browser clients (curl, the gate) send no Sec-Fetch-Site or Origin and
// pass.
var csrf = http.NewCrossOriginProtection()

func (s *Server) listNodes(c *gin.Context) {
	nodes := s.b.Nodes()
	if nodes == nil {
		nodes = []api.NodeInfo{} // [] not null: clients iterate without a check
	}
	s.sendJSON(c, nodes)
}

func (s *Server) listSweeps(c *gin.Context) {
	sweeps := s.b.Sweeps()
	if sweeps == nil {
		sweeps = []api.SweepInfo{}
	}
	s.sendJSON(c, sweeps)
}

// sendJSON answers with ETag and gzip: the UI polls both lists, and at
// 1,024 nodes with 8 HCAs each the node list is megabytes of JSON.
func (s *Server) sendJSON(c *gin.Context, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding answer", "path", c.Request.URL.Path, "err", err)
		abortError(c, http.StatusInternalServerError, "encoding failed: "+err.Error(), "")
		return
	}
	sendBody(c, "application/json; charset=utf-8", body)
}

func (s *Server) getSweep(c *gin.Context) {
	if info, ok := s.resolveSweep(c); ok {
		c.JSON(http.StatusOK, info)
	}
}

// resolveSweep finds the sweep named by the :id parameter or answers 404.
func (s *Server) resolveSweep(c *gin.Context) (api.SweepInfo, bool) {
	id := c.Param("id")
	if id == api.LiveID {
		abortError(c, http.StatusNotFound, "\"live\" is the always-on mesh, not a sweep: GET /api/v1/live for its window, "+
			"/api/v1/live/events for its events, /api/v1/sweeps/live/{matrix,grid,layer,pair} for its matrix", "")
		return api.SweepInfo{}, false
	}
	if id == latestID {
		if sweeps := s.b.Sweeps(); len(sweeps) > 0 {
			return sweeps[0], true
		}
		abortError(c, http.StatusNotFound, "no sweeps yet: start one with POST /api/v1/sweeps", "")
		return api.SweepInfo{}, false
	}
	info, ok := s.b.Sweep(id)
	if !ok {
		abortError(c, http.StatusNotFound, fmt.Sprintf("no sweep %q", id), "")
	}
	return info, ok
}

func (s *Server) getMatrix(c *gin.Context) {
	format := c.DefaultQuery("format", "json")
	export, known := exportFormats[format]
	if !known {
		abortError(c, http.StatusBadRequest, fmt.Sprintf("format %q is not one of csv, json, junit", format), "format")
		return
	}
	cells := c.DefaultQuery("cells", "all")
	if cells != "all" && cells != "bad" && cells != "summary" {
		abortError(c, http.StatusBadRequest, fmt.Sprintf("cells %q is not one of all, bad (only the cells whose verdict is not ok), "+
			"summary (no cell: the counts, rollups and suspects)", cells), "cells")
		return
	}
	info, m, ok := s.sweepMatrix(c)
	if !ok {
		return
	}
	switch cells {
	case "bad":
		m = m.BadOnly()
	case "summary":
		m = m.SummaryOnly()
	}

	var write func(io.Writer) error
	switch format {
	case "junit":
		w, ok := any(m).(junitWriter)
		if !ok {
			abortError(c, http.StatusNotImplemented, "this build has no JUnit export", "format")
			return
		}
		write = w.WriteJUnit
	case "csv":
		write = m.WriteCSV
	default:
		write = func(w io.Writer) error { return writeMatrixJSON(w, m) }
	}
	// ?download=1 asks the browser to save the answer; the UI fetches with
	// the bearer token and saves the blob itself, so this is for links and
	// curl -OJ.
	if c.Query("download") != "" {
		c.Header("Content-Disposition", `attachment; filename="`+downloadName(info.ID, format)+`"`)
	}
	if err := sendStream(c, export.ctype, write); err != nil {
		c.Writer.Header().Del("Content-Disposition") // the error is no file to save
		s.log.Error("matrix export failed", "sweep", info.ID, "format", format, "err", err)
		abortError(c, http.StatusInternalServerError, "matrix export failed: "+err.Error(), "")
	}
}

func writeMatrixJSON(w io.Writer, m *matrix.Matrix) error {
	if jw, ok := any(m).(jsonWriter); ok {
		return jw.WriteJSON(w)
	}
	return json.NewEncoder(w).Encode(m)
}

func (s *Server) startSweep(c *gin.Context) {
	if err := csrf.Check(c.Request); err != nil {
		abortError(c, http.StatusForbidden, "cross-origin request refused: "+err.Error(), "")
		return
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, maxRequestBody)
	req, err := decodeSweepRequest(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			abortError(c, http.StatusRequestEntityTooLarge,
				fmt.Sprintf("request body is larger than %d bytes", mbe.Limit), "")
			return
		}
		s.reply(c, err)
		return
	}
	info, err := s.b.StartSweep(c.Request.Context(), req)
	if err != nil {
		s.reply(c, err)
		return
	}
	c.Header("Location", "/api/v1/sweeps/"+url.PathEscape(info.ID))
	c.JSON(http.StatusAccepted, info)
}

// reply answers with the status err's behaviour asks for.
func (s *Server) reply(c *gin.Context, err error) {
	status, field := errorStatus(err)
	if status >= http.StatusInternalServerError && status != http.StatusServiceUnavailable {
		s.log.Error("start sweep failed", "err", err)
	} else {
		s.log.Debug("start sweep refused", "status", status, "field", field, "err", err)
	}
	abortError(c, status, err.Error(), field)
}
