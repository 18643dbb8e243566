package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// CablingBackend judges the fabric's cables; optional, as TraceBackend.
type CablingBackend interface {
	// Cabling is the report from the workers' LLDP neighbours and the
	// flows sweep traced ("": none), and what it was judged from; false
	// when sweep names no sweep.
	Cabling(sweep string) (*cabling.Report, api.CablingSource, bool)
}

// CablingAnswer is GET /api/v1/cabling's JSON: the report's fields and,
// beside them, "source".
type CablingAnswer struct {
	*cabling.Report
	Source api.CablingSource `json:"source"`
}

// getCabling is GET /api/v1/cabling: every planned HCA port and cable
// with its verdict (?format=json, the default), the technician's list of
// findings (?format=csv) or JUnit (?format=junit); ?download=1 names a
// file to save. ?sweep= picks the sweep whose traced paths count as
// evidence: latest (the default) or an id.
func (s *Server) getCabling(c *gin.Context) {
	cb, ok := s.b.(CablingBackend)
	if !ok {
		abortError(c, http.StatusNotFound, "this coordinator does not judge cabling", "")
		return
	}
	s.answerCabling(c, cb.Cabling)
}

// answerCabling reads ?format= and ?sweep=, judges with judge and sends
// the report: GET and POST /api/v1/cabling answer alike.
func (s *Server) answerCabling(c *gin.Context, judge func(sweep string) (*cabling.Report, api.CablingSource, bool)) {
	format := c.DefaultQuery("format", "json")
	export, known := exportFormats[format]
	if !known {
		abortError(c, http.StatusBadRequest, fmt.Sprintf("format %q is not one of csv, json, junit", format), "format")
		return
	}
	sweep := c.DefaultQuery("sweep", latestID)
	if sweep == latestID {
		sweep = ""
		if sweeps := s.b.Sweeps(); len(sweeps) > 0 {
			sweep = sweeps[0].ID
		}
	}
	rep, src, ok := judge(sweep)
	if !ok {
		abortError(c, http.StatusNotFound, "no sweep "+sweep+": GET /api/v1/sweeps lists them, or leave sweep out for the newest", "sweep")
		return
	}
	write := func(w io.Writer) error { return rep.WriteCSV(w) }
	switch format {
	case "junit":
		write = rep.WriteJUnit
	case "json":
		write = func(w io.Writer) error { return json.NewEncoder(w).Encode(CablingAnswer{Report: rep, Source: src}) }
	}
	if c.Query("download") != "" {
		c.Header("Content-Disposition", `attachment; filename="rdmamesh-cabling.`+export.ext+`"`)
	}
	if err := sendStream(c, export.ctype, write); err != nil {
		c.Writer.Header().Del("Content-Disposition")
		s.log.Error("cabling export failed", "format", format, "err", err)
		abortError(c, http.StatusInternalServerError, "cabling export failed: "+err.Error(), "")
	}
}
