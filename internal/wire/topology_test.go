package wire

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func testTopologies() *TopologyState {
	topo := Topology{Version: "v1", LinkLayer: "ib",
		Switches: []TopoSwitch{{Name: "leaf-1", Tier: 1, Plane: -1, GUID: "0x1", LID: 7}},
		HCAs:     []TopoHCA{{Node: "a", Device: "mlx5_0", GUID: "0x2", LID: 9}},
		Cables:   []TopoCable{{A: TopoEnd{Switch: -1, HCA: 0, Port: 1}, B: TopoEnd{Switch: 0, HCA: -1, Port: 3}, Speed: "4x NDR"}}}
	return &TopologyState{Current: "v1", Topologies: []Topology{topo}, Sweeps: []SweepTopology{{SweepID: "s1", Version: "v1"}}}
}

func TestTopologyRecordsReject(t *testing.T) {
	rejects(t, TopologyMsg, testTopologies().Topologies[0])
}

// A snapshot keeps its topologies; one without any reads back without.
func TestSnapshotTopologies(t *testing.T) {
	for _, topo := range []*TopologyState{nil, testTopologies()} {
		want := testTrailer()
		want.Topologies = topo
		var b bytes.Buffer
		if err := WriteSnapshotWith(&b, testSnapshot(), want); err != nil {
			t.Fatal(err)
		}
		if _, got := readAll(t, b.Bytes()); !reflect.DeepEqual(got, want) {
			t.Fatalf("trailer does not round-trip:\n got %+v\nwant %+v", got, want)
		}
	}
}

func testPaths() []SweepPaths {
	return []SweepPaths{{SweepID: "s1", Flows: []FlowPath{
		{Src: "a", Dst: "b", Rail: 1, Flow: 49441, Hops: []string{"10.0.0.1", "", "10.0.1.2"}, Reached: true, Why: "hop 2 did not answer",
			Loss: []HopLoss{{Sent: 300, Answered: 300}, {Sent: 300, Answered: 0}, {Sent: 300, Answered: 284}}},
		{Src: "a", Dst: "b", Rail: 1, Back: true, Flow: 49441, Why: "no route"}}}}
}

func TestPathsRecordsReject(t *testing.T) {
	rejects(t, PathsMsg, testPaths()[0])
}

// A raft log written before hop loss (paths version 1) replays: its
// flows read as they were, without Loss.
func TestPathsReadsVersion1(t *testing.T) {
	v1 := &Codec[SweepPaths]{name: "paths", version: 1, put: func(w *writer, p *SweepPaths) {
		w.str(p.SweepID)
		putList(w, p.Flows, func(w *writer, f *FlowPath) {
			w.str(f.Src)
			w.str(f.Dst)
			w.int(f.Rail)
			w.flag(f.Back)
			w.int(f.Flow)
			w.strs(f.Hops)
			w.flag(f.Reached)
			w.str(f.Why)
		})
	}}
	want := testPaths()[0]
	for i := range want.Flows {
		want.Flows[i].Loss = nil
	}
	got, err := PathsMsg.Decode(v1.Append(nil, &want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("version 1 read as %+v, want %+v", got, want)
	}
	if _, err := PathsMsg.Decode([]byte{3}); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("a newer layout: %v", err)
	}
}

// A snapshot keeps the traced paths; version 5, the last without them,
// reads as it was.
func TestSnapshotPaths(t *testing.T) {
	want := testTrailer()
	want.Topologies, want.Paths = testTopologies(), testPaths()
	var b bytes.Buffer
	if err := WriteSnapshotWith(&b, testSnapshot(), want); err != nil {
		t.Fatal(err)
	}
	if _, got := readAll(t, b.Bytes()); !reflect.DeepEqual(got, want) {
		t.Fatalf("trailer does not round-trip:\n got %+v\nwant %+v", got, want)
	}
	b.Reset()
	if err := writeSnapshot(&b, testSnapshot(), want, snapshotV5); err != nil {
		t.Fatal(err)
	}
	want.Paths = nil
	if _, got := readAll(t, b.Bytes()); !reflect.DeepEqual(got, want) {
		t.Fatalf("version 5: trailer %+v, want %+v", got, want)
	}
}

// Version 4, the last without topologies, reads as it was.
func TestSnapshotReadsVersion4(t *testing.T) {
	var b bytes.Buffer
	if err := writeSnapshot(&b, testSnapshot(), testTrailer(), snapshotV4); err != nil {
		t.Fatal(err)
	}
	ids, tr := readAll(t, b.Bytes())
	if !reflect.DeepEqual(ids, []string{"s1", "s2"}) || !reflect.DeepEqual(tr, testTrailer()) {
		t.Fatalf("version 4: sweeps %v, trailer %+v", ids, tr)
	}
}
