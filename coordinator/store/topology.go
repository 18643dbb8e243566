package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/topology"
)

// The fabric's topology is replicated: the leader commits the one it was
// configured with (EntryTopology), every sweep records the version that
// was current when it started, and its analysis routes its cells over that
// version even after a newer one is committed. A follower without a
// topology of its own therefore judges a sweep exactly as its leader did.

// EntryTopology is a fabric topology (wire.TopologyMsg). It is ignorable:
// a replica that skips it analyses without a topology, as every release
// before topologies did.
const EntryTopology = Ignorable | 7

// topologies is the FSM's part for topologies; the FSM's lock guards it.
type topologies struct {
	current string
	// byVersion holds the current version and every version a kept sweep
	// ran on: the log's form for snapshots, the model for analyses.
	byVersion map[string]topoVersion
}

type topoVersion struct {
	rec  wire.Topology
	topo *topology.Topology
}

// EncodeTopology is the entry committing t, and t's version: a digest of
// its content, so a leader re-elected with the same file commits nothing.
func EncodeTopology(t *topology.Topology) ([]byte, string) {
	rec := topologyIn(t)
	rec.Version = versionOf(&rec)
	return wire.TopologyMsg.Append([]byte{byte(EntryTopology)}, &rec), rec.Version
}

// TopologyVersion is t's content digest, 16 hex digits.
func TopologyVersion(t *topology.Topology) string {
	rec := topologyIn(t)
	return versionOf(&rec)
}

// versionOf digests rec's encoding without its version.
func versionOf(rec *wire.Topology) string {
	sum := sha256.Sum256(wire.TopologyMsg.Append(nil, rec))
	return hex.EncodeToString(sum[:8])
}

func (f *FSM) applyTopology(b []byte) error {
	rec, err := wire.TopologyMsg.Decode(b)
	if err != nil {
		return err
	}
	topo, err := topologyOut(&rec)
	if err != nil {
		// Every replica builds the same entry the same way, so skipping it
		// cannot make them diverge; the leader checked it before proposing.
		f.log.Error("skipping a topology entry that does not build; sweeps go on without it", "version", rec.Version, "err", err)
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.topos.byVersion == nil {
		f.topos.byVersion = map[string]topoVersion{}
	}
	f.topos.byVersion[rec.Version] = topoVersion{rec: rec, topo: topo}
	f.topos.current = rec.Version
	f.pruneTopologies()
	return nil
}

// pruneTopologies drops the versions neither current nor run on by a kept
// sweep; the caller holds the lock.
func (f *FSM) pruneTopologies() {
	for v := range f.topos.byVersion {
		if v == f.topos.current {
			continue
		}
		used := false
		for _, rec := range f.sweeps {
			if rec.Info.Topology == v {
				used = true
				break
			}
		}
		if !used {
			delete(f.topos.byVersion, v)
		}
	}
}

// CurrentTopology is the newest committed topology and its version; nil
// and "" when none was committed.
func (f *FSM) CurrentTopology() (*topology.Topology, string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.topos.byVersion[f.topos.current].topo, f.topos.current
}

// Topology is the topology of version v; nil for "" or a version this
// replica no longer keeps.
func (f *FSM) Topology(v string) *topology.Topology {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.topos.byVersion[v].topo
}

// topologyState is the snapshot's section; the caller holds the lock.
func (f *FSM) topologyState() *wire.TopologyState {
	if len(f.topos.byVersion) == 0 {
		return nil
	}
	s := &wire.TopologyState{Current: f.topos.current}
	for _, v := range f.topos.byVersion {
		s.Topologies = append(s.Topologies, v.rec)
	}
	for _, id := range f.order {
		if v := f.sweeps[id].Info.Topology; v != "" {
			s.Sweeps = append(s.Sweeps, wire.SweepTopology{SweepID: id, Version: v})
		}
	}
	return s
}

// restoreTopologies rebuilds the section from a snapshot; sweeps are the
// restored ones, not yet published.
func restoreTopologies(s *wire.TopologyState, sweeps map[string]*sweepRecord) (topologies, error) {
	var t topologies
	if s == nil {
		return t, nil
	}
	t.current, t.byVersion = s.Current, make(map[string]topoVersion, len(s.Topologies))
	for i := range s.Topologies {
		rec := s.Topologies[i]
		topo, err := topologyOut(&rec)
		if err != nil {
			return t, fmt.Errorf("topology %s: %w", rec.Version, err)
		}
		t.byVersion[rec.Version] = topoVersion{rec: rec, topo: topo}
	}
	for _, st := range s.Sweeps {
		if rec, ok := sweeps[st.SweepID]; ok {
			rec.Info.Topology = st.Version
		}
	}
	return t, nil
}

func topologyIn(t *topology.Topology) wire.Topology {
	rec := wire.Topology{LinkLayer: string(t.LinkLayer),
		Switches: make([]wire.TopoSwitch, len(t.Switches)), HCAs: make([]wire.TopoHCA, len(t.HCAs)), Cables: make([]wire.TopoCable, len(t.Cables))}
	for i, s := range t.Switches {
		rec.Switches[i] = wire.TopoSwitch{Name: s.Name, Tier: int(s.Tier), Plane: s.Plane, Pod: s.Pod, GUID: s.GUID, LID: s.LID, Addrs: s.Addrs}
	}
	for i, h := range t.HCAs {
		rec.HCAs[i] = wire.TopoHCA{Node: h.Node, Device: h.Device, Rail: h.Rail, GUID: h.GUID, LID: h.LID}
	}
	for i, c := range t.Cables {
		rec.Cables[i] = wire.TopoCable{A: wire.TopoEnd(c.A), B: wire.TopoEnd(c.B), Speed: c.Speed}
	}
	return rec
}

// topologyOut builds the model from its own slices: topology.New keeps
// and completes what it is given, and the log's copy must stay as read.
func topologyOut(rec *wire.Topology) (*topology.Topology, error) {
	switches := make([]topology.Switch, len(rec.Switches))
	for i, s := range rec.Switches {
		if s.Tier < 0 || s.Tier > 255 {
			return nil, fmt.Errorf("switch %s: tier %d", s.Name, s.Tier)
		}
		switches[i] = topology.Switch{Name: s.Name, Tier: topology.Tier(s.Tier), Plane: s.Plane, Pod: s.Pod, GUID: s.GUID, LID: s.LID, Addrs: s.Addrs}
	}
	hcas := make([]topology.HCA, len(rec.HCAs))
	for i, h := range rec.HCAs {
		hcas[i] = topology.HCA{Node: h.Node, Device: h.Device, Rail: h.Rail, GUID: h.GUID, LID: h.LID}
	}
	cables := make([]topology.Cable, len(rec.Cables))
	for i, c := range rec.Cables {
		cables[i] = topology.Cable{A: topology.End(c.A), B: topology.End(c.B), Speed: c.Speed}
	}
	return topology.New(topology.LinkLayer(rec.LinkLayer), switches, hcas, cables)
}
