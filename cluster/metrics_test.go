package cluster

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The demo's /metrics carries what docs/operations.md promises of every
// coordinator, rdmamesh_build_info included.
func TestDemoMetricsHaveBuildInfo(t *testing.T) {
	cl := start(t, 2)
	resp, err := http.Get(cl.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `rdmamesh_build_info{`) ||
		!strings.Contains(string(body), `role="coordinator"`) {
		t.Fatalf("GET /metrics: %s\n%.2000s", resp.Status, body)
	}
}
