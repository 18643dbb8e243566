package store

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// A follower one release behind meets an entry type a newer leader added:
// marked ignorable it is skipped with a log line and the state stays as
// every replica has it; unmarked, Apply refuses it (TestFSMPanicsOnGarbage).
func TestFSMSkipsIgnorableUnknownEntries(t *testing.T) {
	var logged bytes.Buffer
	f := New(1, slog.New(slog.NewTextHandler(&logged, nil)))
	f.Apply(entry(t, EntrySweepStart, Start{Info: api.SweepInfo{ID: "s1", State: api.SweepRunning}}))
	before, _ := f.Version("s1")
	for _, typ := range []EntryType{Ignorable | 42, 0xff} {
		f.Apply(entry(t, typ, map[string]string{"from": "the future"}))
	}
	f.Apply(entry(t, EntryRound, sweep.RoundResult{SweepID: "s1", Round: 0, Cells: []matrix.Cell{okCell("a", "b", 0)}}))
	if after, _ := f.Version("s1"); after == before {
		t.Fatal("the entry after the skipped ones was not applied")
	}
	if info, _ := f.Info("s1"); info.CellsDone != 1 || info.RoundsDone != 1 {
		t.Fatalf("state after skipped entries: %+v", info)
	}
	if n := strings.Count(logged.String(), "ignorable"); n != 2 {
		t.Fatalf("%d log lines for 2 skipped entries:\n%s", n, logged.String())
	}
}

func TestFSMRefusesUnknownEntriesWithoutTheIgnorableBit(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "upgrade") {
			t.Fatalf("recovered %v; want a panic naming the upgrade", r)
		}
	}()
	New(1, nil).Apply(&raft.Log{Data: []byte{0x7f, '{', '}'}})
}
