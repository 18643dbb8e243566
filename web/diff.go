package web

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// A dead node on an 8-rail, 1,024-node fabric changes ~16 K cells; the UI
// lists the first few hundred and says how many there are.
const (
	defaultDiffLimit = 500
	maxDiffLimit     = 100000
)

// diffAnswer is GET /api/v1/diff?old=A&new=B[&limit=N]: matrix.Diff with
// its cell lists cut to limit and their full lengths alongside.
type diffAnswer struct {
	Old         string            `json:"old"`
	New         string            `json:"new"`
	WorseTotal  int               `json:"worse_total"`
	BetterTotal int               `json:"better_total"`
	Truncated   bool              `json:"truncated"`
	Report      matrix.DiffReport `json:"report"`
}

func (s *Server) getDiff(c *gin.Context) {
	limit := defaultDiffLimit
	if q := c.Query("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 || n > maxDiffLimit {
			abortError(c, http.StatusBadRequest, fmt.Sprintf("limit %q is not a number from 0 to %d", q, maxDiffLimit), "limit")
			return
		}
		limit = n
	}
	var ms [2]*matrix.Matrix
	var ids [2]string
	for k, name := range []string{"old", "new"} {
		id := c.Query(name)
		if id == "" {
			abortError(c, http.StatusBadRequest, name+" is required: ?old=SWEEP&new=SWEEP", name)
			return
		}
		if id == latestID {
			sweeps := s.b.Sweeps()
			if len(sweeps) == 0 {
				abortError(c, http.StatusNotFound, "no sweeps yet", "")
				return
			}
			id = sweeps[0].ID
		}
		m, ok := s.b.Matrix(id)
		if !ok || m == nil {
			abortError(c, http.StatusNotFound, fmt.Sprintf("no matrix for sweep %q", id), name)
			return
		}
		ms[k], ids[k] = m, id
	}
	d := matrix.Diff(ms[0], ms[1])
	a := diffAnswer{Old: ids[0], New: ids[1], WorseTotal: len(d.Worse), BetterTotal: len(d.Better)}
	if len(d.Worse) > limit || len(d.Better) > limit {
		a.Truncated = true
		d.Worse, d.Better = d.Worse[:min(limit, len(d.Worse))], d.Better[:min(limit, len(d.Better))]
	}
	a.Report = d
	c.JSON(http.StatusOK, a)
}

// exportFormats are the ?format= values of the matrix endpoint, with their
// content type and file extension for downloads.
var exportFormats = map[string]struct{ ctype, ext string }{
	"json":  {"application/json; charset=utf-8", "json"},
	"junit": {"application/xml; charset=utf-8", "xml"},
	"csv":   {"text/csv; charset=utf-8", "csv"},
}

// downloadName is the file name offered by ?download=1.
func downloadName(id, format string) string {
	return fmt.Sprintf("rdmamesh-%s.%s", cmp.Or(safeFileName(id), "sweep"), exportFormats[format].ext)
}

// safeFileName keeps only characters that need no quoting in a
// Content-Disposition header; sweep ids are timestamps and hex anyway.
func safeFileName(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' {
			out = append(out, ch)
		}
	}
	return string(out)
}
