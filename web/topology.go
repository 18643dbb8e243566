package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/topology"
)

// TopologyBackend is a Backend that knows the fabric's topology. It is
// optional: a backend without it answers /api/v1/topology with 404.
type TopologyBackend interface {
	Topology() *topology.Topology
}

// getTopology serves the switches, HCAs and cables the analyses route
// cells over, as topology.Topology's JSON.
func (s *Server) getTopology(c *gin.Context) {
	var t *topology.Topology
	if tb, ok := s.b.(TopologyBackend); ok {
		t = tb.Topology()
	}
	if t == nil {
		c.JSON(http.StatusNotFound, gin.H{"error": "this coordinator has no topology: give coordinator.topology " +
			"(a cabling plan or ibnetdiscover output) or run the demo with --fat-tree; without one, suspects name nodes and HCAs only"})
		return
	}
	c.JSON(http.StatusOK, t)
}
