package wire

// Topology is a fabric's topology as the coordinator commits it to raft
// (package topology's Topology, converted by coordinator/store): the log
// keeps its own copy of the fields so the model can change without
// changing the log. Version names this content; every sweep records the
// version it ran on.
type Topology struct {
	Version   string
	LinkLayer string
	Switches  []TopoSwitch
	HCAs      []TopoHCA
	Cables    []TopoCable
}

// TopoSwitch is one switch (topology.Switch).
type TopoSwitch struct {
	Name       string
	Tier       int
	Plane, Pod int
	GUID       string
	LID        uint16
	Addrs      []string
}

// TopoHCA is one host port (topology.HCA).
type TopoHCA struct {
	Node, Device string
	Rail         int
	GUID         string
	LID          uint16
}

// TopoEnd is a cable's end (topology.End): Switch -1 for an HCA's port.
type TopoEnd struct{ Switch, HCA, Port int }

// TopoCable is one cable (topology.Cable).
type TopoCable struct {
	A, B  TopoEnd
	Speed string
}

// TopologyState is what a snapshot keeps of the topologies: the current
// one's version, every version a kept sweep ran on, and which sweep ran
// on which.
type TopologyState struct {
	Current    string
	Topologies []Topology
	Sweeps     []SweepTopology
}

// SweepTopology is the topology version sweep SweepID ran on.
type SweepTopology struct{ SweepID, Version string }

// TopologyMsg is the topology entry's codec.
var TopologyMsg = &Codec[Topology]{name: "topology", version: 1,
	put: (*writer).topology,
	get: (*reader).topology}

// topologyStateMsg is the snapshot trailer's topology section.
var topologyStateMsg = &Codec[TopologyState]{name: "snapshot topologies", version: 1,
	put: func(w *writer, s *TopologyState) {
		w.str(s.Current)
		putList(w, s.Topologies, (*writer).topology)
		putList(w, s.Sweeps, func(w *writer, t *SweepTopology) {
			w.str(t.SweepID)
			w.str(t.Version)
		})
	},
	get: func(r *reader, s *TopologyState) {
		s.Current = r.str()
		s.Topologies = getList(r, (*reader).topology)
		s.Sweeps = getList(r, func(r *reader, t *SweepTopology) { *t = SweepTopology{SweepID: r.str(), Version: r.str()} })
	}}

func (w *writer) topology(t *Topology) {
	w.str(t.Version)
	w.str(t.LinkLayer)
	putList(w, t.Switches, func(w *writer, s *TopoSwitch) {
		w.str(s.Name)
		w.int(s.Tier)
		w.int(s.Plane)
		w.int(s.Pod)
		w.str(s.GUID)
		w.u64(uint64(s.LID))
		w.strs(s.Addrs)
	})
	putList(w, t.HCAs, func(w *writer, h *TopoHCA) {
		w.str(h.Node)
		w.str(h.Device)
		w.int(h.Rail)
		w.str(h.GUID)
		w.u64(uint64(h.LID))
	})
	putList(w, t.Cables, func(w *writer, c *TopoCable) {
		for _, e := range [...]*TopoEnd{&c.A, &c.B} {
			w.int(e.Switch)
			w.int(e.HCA)
			w.int(e.Port)
		}
		w.str(c.Speed)
	})
}

func (r *reader) topology(t *Topology) {
	*t = Topology{Version: r.str(), LinkLayer: r.str()}
	t.Switches = getList(r, func(r *reader, s *TopoSwitch) {
		*s = TopoSwitch{Name: r.str(), Tier: r.int(), Plane: r.int(), Pod: r.int(), GUID: r.str(), LID: r.u16(), Addrs: r.strs()}
	})
	t.HCAs = getList(r, func(r *reader, h *TopoHCA) {
		*h = TopoHCA{Node: r.str(), Device: r.str(), Rail: r.int(), GUID: r.str(), LID: r.u16()}
	})
	t.Cables = getList(r, func(r *reader, c *TopoCable) {
		for _, e := range [...]*TopoEnd{&c.A, &c.B} {
			*e = TopoEnd{Switch: r.int(), HCA: r.int(), Port: r.int()}
		}
		c.Speed = r.str()
	})
}
