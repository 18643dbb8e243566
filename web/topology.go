package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/topology"
)

// TopologyBackend is a Backend that knows the fabric's topology. It is
// optional: a backend without it answers /api/v1/topology and the link
// routes with 404, and its heatmap orders nodes by their labels.
type TopologyBackend interface {
	// Topology is the fabric as it is now (nil: none), what the Fabric
	// view draws.
	Topology() *topology.Topology
}

// SweepTopologyBackend is a TopologyBackend that keeps the topology each
// sweep ran on: a sweep's link list and heatmap order use that version,
// as its analysis did, though a newer one was given since. Without it a
// sweep is taken to have run on the current topology.
type SweepTopologyBackend interface {
	// SweepTopology is the topology sweep id ran on; nil when it ran
	// without one.
	SweepTopology(id string) *topology.Topology
}

// noTopology says why there is no fabric to show, and how to give one.
const noTopology = "this coordinator has no topology: give coordinator.topology " +
	"(a cabling plan or ibnetdiscover output) or run the demo with --fat-tree; without one, suspects name nodes and HCAs only"

// topology is the backend's topology, nil without one.
func (s *Server) topology() *topology.Topology {
	if tb, ok := s.b.(TopologyBackend); ok {
		return tb.Topology()
	}
	return nil
}

// sweepTopology is the topology sweep id (resolved, not "latest") ran on:
// the live mesh runs on the current one.
func (s *Server) sweepTopology(id string) *topology.Topology {
	if sb, ok := s.b.(SweepTopologyBackend); ok && id != api.LiveID {
		return sb.SweepTopology(id)
	}
	return s.topology()
}

// getTopology serves the switches, HCAs and cables the analyses route
// cells over, as topology.Topology's JSON.
func (s *Server) getTopology(c *gin.Context) {
	t := s.topology()
	if t == nil {
		c.JSON(http.StatusNotFound, gin.H{"error": noTopology})
		return
	}
	c.JSON(http.StatusOK, t)
}
