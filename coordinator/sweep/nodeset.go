package sweep

import (
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Nodes is a sweep's nodes as the pool reads them pair after pair: by name
// once a pair, and each node's ports as the few fields a task names. A
// probe.Port is about 230 bytes, and planning a pair's rails read three of
// its cache lines on each of 8 ports of both nodes, both ways: at 4,096
// nodes, cold lines on every pair (12 of the leader's 310 CPU-s).
type Nodes struct {
	byName map[string]*nodeRec
	cache  atomic.Pointer[phaseCache] // the rail phases of the run's spec
}

// nodeRec is one node with its ports' endpoints and usability by rail.
type nodeRec struct {
	matrix.Node
	eps    []probe.Endpoint
	usable []bool
	layout int // its eps' number among the sweep's (numberLayouts); -1: none
	index  int // its position in the sweep's nodes; -1: none
}

// NewNodes indexes a sweep's nodes; a later one of the same name wins.
func NewNodes(nodes []matrix.Node) *Nodes {
	ns := &Nodes{byName: make(map[string]*nodeRec, len(nodes))}
	recs := make([]*nodeRec, len(nodes))
	for i, n := range nodes {
		recs[i] = newNodeRec(n)
		recs[i].index = i
		ns.byName[n.Name] = recs[i]
	}
	numberLayouts(recs)
	return ns
}

func newNodeRec(n matrix.Node) *nodeRec {
	r := &nodeRec{Node: n, eps: make([]probe.Endpoint, len(n.Ports)), usable: make([]bool, len(n.Ports)), layout: -1, index: -1}
	for i := range n.Ports {
		p := &n.Ports[i]
		r.eps[i] = probe.Endpoint{Device: p.Device, Port: p.Port, GIDIndex: p.GIDIndex, Rail: i}
		r.usable[i] = p.Usable
	}
	return r
}

// noNode stands for a name the sweep does not have: no ports, no cells.
var noNode = &nodeRec{layout: -1, index: -1}

func (ns *Nodes) get(name string) *nodeRec {
	if r := ns.byName[name]; r != nil {
		return r
	}
	return noNode
}
