package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/topology"
)

type topoBackend struct {
	*fakeBackend
	t *topology.Topology
}

func (b topoBackend) Topology() *topology.Topology { return b.t }

func TestTopologyEndpoint(t *testing.T) {
	rec := httptest.NewRecorder()
	New(newFake(), Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/topology", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "coordinator.topology") {
		t.Fatalf("without a topology: %d %s", rec.Code, rec.Body)
	}
	ft, err := topology.ParseFatTree("nodes=8,rails=2,leaf=4,spines=2")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	New(topoBackend{newFake(), topo}, Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/topology", nil))
	var got topology.Topology
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("with a topology: %d %v", rec.Code, err)
	}
	if len(got.Switches) != len(topo.Switches) || len(got.Cables) != len(topo.Cables) || got.LinkLayer != topology.RoCE {
		t.Fatalf("served %d switches, %d cables, %s; want %d, %d, roce", len(got.Switches), len(got.Cables), got.LinkLayer,
			len(topo.Switches), len(topo.Cables))
	}
}
