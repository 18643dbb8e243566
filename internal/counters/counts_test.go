package counters

import (
	"reflect"
	"testing"
)

func TestCountsRoundTrip(t *testing.T) {
	d := Delta{Device: "mlx5_0", Port: 1, Values: []Value{
		{Def: Known[knownIndex(Def{Name: "symbol_error", Dir: "counters"})], N: 3},
		{Def: Known[knownIndex(Def{Name: "local_ack_timeout_err", Dir: "hw_counters"})], N: 40},
		{Def: Def{Name: "not_a_known_counter", Dir: "hw_counters"}, N: 9}, // dropped: no meaning, no index
	}}
	cs := d.Counts()
	if len(cs) != 2 {
		t.Fatalf("counts %+v", cs)
	}
	got, err := DeltaOf("mlx5_0", 1, AddCounts(cs, []Count{{Index: cs[1].Index, N: 2}}))
	if err != nil {
		t.Fatal(err)
	}
	want := Delta{Device: "mlx5_0", Port: 1, Values: []Value{{Def: d.Values[0].Def, N: 3}, {Def: d.Values[1].Def, N: 42}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got.Explain() == "" {
		t.Error("a restored delta explains nothing")
	}
	if _, err := DeltaOf("mlx5_0", 1, []Count{{Index: 250, N: 1}}); err == nil {
		t.Error("an unknown index was accepted")
	}
	if (Delta{}).Counts() != nil {
		t.Error("an empty delta has counts")
	}
}
