package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// fill sets every field reachable from v to a random value; with dense
// every field is non-zero (pointers set, lists and maps non-empty), so a
// field a codec forgets cannot round-trip. Integers stay within 32 bits
// (the codecs' int range), floats finite, times in UTC.
func fill(v reflect.Value, rng *rand.Rand, dense bool) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(0, 1+rng.Int64N(1<<62)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d-ü", rng.IntN(1000)))
	case reflect.Bool:
		v.SetBool(dense || rng.IntN(2) == 0)
	case reflect.Int, reflect.Int32:
		v.SetInt(int64(rng.Int32N(1<<30)) + 1 - int64(rng.IntN(2))*(1<<30))
	case reflect.Int64:
		v.SetInt(rng.Int64() - 1<<62)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1 + rng.Uint64()%(1<<(8*v.Type().Size())-1))
	case reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e6)
	case reflect.Pointer:
		if !dense && rng.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), rng, dense)
		v.Set(p)
	case reflect.Slice:
		n := 1 + rng.IntN(3)
		if !dense {
			n = rng.IntN(4) - 1
		}
		if n < 0 {
			return // nil
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), rng, dense)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), rng, dense)
		}
	case reflect.Map:
		if !dense && rng.IntN(3) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range 1 + rng.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, rng, dense)
			fill(e, rng, dense)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), rng, dense)
			}
		}
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

// roundTrips encodes filled values of T and checks they decode equal.
func roundTrips[T any](t *testing.T, c *Codec[T]) {
	t.Helper()
	roundTripsAs(t, c, nil)
}

// roundTripsAs is roundTrips for a codec that does not keep every value
// as it is: a filled value, once encoded, must decode as as makes it.
func roundTripsAs[T any](t *testing.T, c *Codec[T], as func(*T)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 100 {
		var v T
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := c.Append(nil, &v)
		if as != nil {
			as(&v)
		}
		got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("%s does not round-trip:\n got %+v\nwant %+v", c.Name(), got, v)
		}
	}
}

func TestEveryFieldRoundTrips(t *testing.T) {
	roundTrips(t, TaskMsg)
	roundTripsAs(t, TaskResultMsg, func(v *TaskResult) { asSent(v, false) })
	roundTripsAs(t, TaskResultQ, func(v *TaskResult) { asSent(v, true) })
	roundTrips(t, SessionOpenMsg)
	roundTrips(t, SessionOpenedMsg)
	roundTrips(t, SessionCloseMsg)
	roundTrips(t, ErrorMsg)
}

// rejects checks the decoder's refusals of a good message cut or altered.
func rejects[T any](t *testing.T, c *Codec[T], v T) {
	t.Helper()
	good := c.Append(nil, &v)
	if _, err := c.Decode(good); err != nil {
		t.Fatalf("%s: the good message: %v", c.Name(), err)
	}
	_, err := c.Decode(append([]byte{c.Version() + 1}, good[1:]...))
	var ve *VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.Name()) || !strings.Contains(err.Error(), "same rdmamesh version") {
		t.Errorf("%s: another version gave %v; want an error naming the message and the fix", c.Name(), err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"json":      []byte(`{"sweep_id":"s"}`),
		"truncated": good[:len(good)-1],
		"trailing":  append(bytes.Clone(good), 0),
	} {
		if _, err := c.Decode(b); err == nil {
			t.Errorf("%s %s: decoded without error", c.Name(), name)
		}
	}
}

func TestDecodersReject(t *testing.T) {
	rejects(t, TaskMsg, Task{SweepID: "s", Rails: []probe.RailPair{{Rail: 1}}, Params: probe.DefaultTestParams()})
	rejects(t, TaskResultMsg, TaskResult{SweepID: "s", Rails: []RailResult{{Latency: &probe.Latency{}}}})
	rejects(t, TaskResultQ, TaskResult{SweepID: "s", Rails: []RailResult{{Latency: &probe.Latency{}}}})
	rejects(t, SessionOpenMsg, SessionOpen{SweepID: "s", Rails: []SessionRail{{Rail: 2}}})
	rejects(t, SessionOpenedMsg, SessionOpened{Rails: []SessionRailOpen{{SessionID: "x"}}})
	rejects(t, SessionCloseMsg, SessionClose{IDs: []string{"a", "b"}})
	rejects(t, ErrorMsg, probe.Error{Class: probe.ClassInternal, Cause: "c"})
}

// A nil list and an empty one stay apart: JSON shows them as null and [].
func TestNilAndEmptyListsStayApart(t *testing.T) {
	for _, ids := range [][]string{nil, {}} {
		got, err := SessionCloseMsg.Decode(SessionCloseMsg.Append(nil, &SessionClose{IDs: ids}))
		if err != nil || (got.IDs == nil) != (ids == nil) {
			t.Fatalf("%#v came back %#v (%v)", ids, got.IDs, err)
		}
	}
}

// fuzzCodec: no input may panic c's decoder, and whatever it accepts must
// encode to a message that decodes and encodes to the same bytes.
func fuzzCodec[T any](f *testing.F, c *Codec[T]) {
	f.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 4 {
		var v T
		fill(reflect.ValueOf(&v).Elem(), rng, i%2 == 0)
		b := c.Append(nil, &v)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{c.Version()})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := c.Decode(b)
		if err != nil {
			return
		}
		e1 := c.Append(nil, &v)
		v2, err := c.Decode(e1)
		if err != nil {
			t.Fatalf("%s: re-encoded accepted message does not decode: %v", c.Name(), err)
		}
		if e2 := c.Append(nil, &v2); !bytes.Equal(e1, e2) {
			t.Fatalf("%s: accepted message does not re-encode stably", c.Name())
		}
	})
}

func FuzzTask(f *testing.F)          { fuzzCodec(f, TaskMsg) }
func FuzzTaskResult(f *testing.F)    { fuzzCodec(f, TaskResultMsg) }
func FuzzTaskResultQ(f *testing.F)   { fuzzCodec(f, TaskResultQ) }
func FuzzSessionOpen(f *testing.F)   { fuzzCodec(f, SessionOpenMsg) }
func FuzzSessionOpened(f *testing.F) { fuzzCodec(f, SessionOpenedMsg) }
func FuzzSessionClose(f *testing.F)  { fuzzCodec(f, SessionCloseMsg) }
func FuzzError(f *testing.F)         { fuzzCodec(f, ErrorMsg) }

func TestRecordsRoundTrip(t *testing.T) {
	// The FSM, not the entry, says which topology a sweep ran on; the store
	// leaves the ports' LLDP neighbours out before encoding.
	roundTripsAs(t, StartRecord, func(s *SweepStart) {
		s.Info.Topology = ""
		for i := range s.Nodes {
			for j := range s.Nodes[i].Ports {
				s.Nodes[i].Ports[j].Neighbor = nil
			}
		}
	})
	roundTrips(t, EndRecord)
	roundTrips(t, RetestPlanRecord)
	roundTrips(t, LivePlanMsg)
	roundTrips(t, LiveSummariesMsg)
	roundTrips(t, RoundCountersMsg)
	roundTrips(t, sweepCountersMsg)
	roundTrips(t, TopologyMsg)
	roundTrips(t, topologyStateMsg)
	roundTrips(t, PathsMsg)
	roundTrips(t, pathsStateMsg)
}

func TestRecordsReject(t *testing.T) {
	rejects(t, StartRecord, SweepStart{Nodes: []Node{{Name: "a", Ports: []probe.Port{{Device: "mlx5_0"}}}}})
	rejects(t, EndRecord, SweepEnd{SweepID: "s", State: "done"})
	rejects(t, RetestPlanRecord, RetestPlan{SweepID: "s", Pass: 1, Rounds: []PlannedRound{{Index: 3, Pairs: []Pair{{"a", "b"}}}}})
	rejects(t, LivePlanMsg, LivePlan{ID: 2, Window: 10 * time.Second, Members: []LiveMember{{Name: "a", Rails: []int{0},
		Addrs: []LiveAddr{{Node: "a", Device: "mlx5_0", QPN: 9}}}}})
	rejects(t, LiveSummariesMsg, LiveSummaries{Latest: 3, Summaries: []LiveSummary{{Node: "b", Window: 3, Sent: 5, Held: true}}})
	rejects(t, RoundCountersMsg, RoundCounters{SweepID: "s", Round: 2, Ports: []PortCounts{{Node: "a", Rail: 1,
		Counts: []counters.Count{{Index: 3, N: 120}}}}})
}

func FuzzStartRecord(f *testing.F)      { fuzzCodec(f, StartRecord) }
func FuzzEndRecord(f *testing.F)        { fuzzCodec(f, EndRecord) }
func FuzzRetestPlanRecord(f *testing.F) { fuzzCodec(f, RetestPlanRecord) }
func FuzzLivePlan(f *testing.F)         { fuzzCodec(f, LivePlanMsg) }
func FuzzLiveSummaries(f *testing.F)    { fuzzCodec(f, LiveSummariesMsg) }
func FuzzRoundCounters(f *testing.F)    { fuzzCodec(f, RoundCountersMsg) }
func FuzzTopology(f *testing.F)         { fuzzCodec(f, TopologyMsg) }
func FuzzPaths(f *testing.F)            { fuzzCodec(f, PathsMsg) }
