package scale

import (
	"net/http"
	"net/http/httptest"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/web"
)

// firstPaint is what the UI downloads to draw a sweep's heatmap (web's
// compact API: the grid and the all-rails status layer), gzipped as web
// sends it, through web's real handler.
func firstPaint(co *coordinator.Coordinator, id string) (int64, error) {
	h := web.New(co, web.Options{}).Handler()
	var total int64
	for _, path := range []string{"/api/v1/sweeps/" + id + "/grid", "/api/v1/sweeps/" + id + "/layer?metric=status&rail=all"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return 0, &uiError{path, rec.Code}
		}
		total += int64(rec.Body.Len())
	}
	return total, nil
}

type uiError struct {
	path string
	code int
}

func (e *uiError) Error() string { return "GET " + e.path + ": " + http.StatusText(e.code) }
