package counters

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func port(dev string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, v := range files {
		fsys["sys/class/infiniband/"+dev+"/ports/1/"+name] = &fstest.MapFile{Data: []byte(v + "\n")}
	}
	return fsys
}

func mustRead(t *testing.T, fsys fstest.MapFS, dev string) Snapshot {
	t.Helper()
	s, err := Read(fsys, dev, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReadKnownOnly(t *testing.T) {
	fsys := port("mlx5_0", map[string]string{
		"counters/symbol_error":             "12",
		"counters/port_xmit_data":           "999999", // a traffic counter: not evidence, not read
		"hw_counters/out_of_sequence":       "0",
		"hw_counters/np_cnp_sent":           "7",
		"hw_counters/lifespan":              "12", // unknown to us
		"hw_counters/local_ack_timeout_err": "3",
	})
	s := mustRead(t, fsys, "mlx5_0")
	got := map[string]uint64{}
	for _, v := range s.Values {
		got[v.Name] = v.N
	}
	want := map[string]uint64{"symbol_error": 12, "out_of_sequence": 0, "np_cnp_sent": 7, "local_ack_timeout_err": 3}
	if len(got) != len(want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	if nz := s.NonZero(); len(nz) != 3 {
		t.Errorf("NonZero = %v, want the three non-zero counters", nz)
	}
}

func TestReadErrors(t *testing.T) {
	_, err := Read(port("rxe0", map[string]string{"hw_counters/sent_pkts": "5"}), "rxe0", 1)
	if !errors.Is(err, ErrNoCounters) {
		t.Errorf("no known counters: err = %v, want ErrNoCounters", err)
	}
	_, err = Read(port("rxe0", map[string]string{"hw_counters/out_of_seq_request": "N/A"}), "rxe0", 1)
	if err == nil || !strings.Contains(err.Error(), "hw_counters/out_of_seq_request") {
		t.Errorf("bad value: err = %v, want it to name the counter", err)
	}
}

func TestDiffAndEvidence(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		kind          Kind
		side          Side
		words         []string
		reset         bool
		empty         bool
	}{
		{name: "rxe loss seen by the receiver",
			before: map[string]string{"hw_counters/out_of_seq_request": "10", "hw_counters/completer_retry_err": "0"},
			after:  map[string]string{"hw_counters/out_of_seq_request": "310", "hw_counters/completer_retry_err": "0"},
			kind:   Loss, side: Ingress, words: []string{"rxe0 port 1", "300", "out_of_seq_request +300", "ingress"}},
		{name: "sender timeouts",
			before: map[string]string{"hw_counters/local_ack_timeout_err": "0", "hw_counters/out_of_sequence": "0"},
			after:  map[string]string{"hw_counters/local_ack_timeout_err": "40", "hw_counters/out_of_sequence": "2"},
			kind:   Timeout, side: Egress, words: []string{"40", "waited for an ACK", "egress"}},
		{name: "a bad cable outranks the loss it causes",
			before: map[string]string{"counters/symbol_error": "0", "hw_counters/out_of_sequence": "0"},
			after:  map[string]string{"counters/symbol_error": "5", "hw_counters/out_of_sequence": "900"},
			kind:   Physical, side: Ingress, words: []string{"corrupt frames", "symbol_error +5"}},
		{name: "a reset counter is a lower bound",
			before: map[string]string{"counters/link_downed": "9"},
			after:  map[string]string{"counters/link_downed": "1"},
			kind:   LinkDown, side: Either, reset: true, words: []string{"went down", "lower bounds"}},
		{name: "nothing moved",
			before: map[string]string{"hw_counters/np_cnp_sent": "4"},
			after:  map[string]string{"hw_counters/np_cnp_sent": "4"},
			empty:  true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := "rxe0"
			d, err := Diff(mustRead(t, port(dev, tc.before), dev), mustRead(t, port(dev, tc.after), dev))
			if err != nil {
				t.Fatal(err)
			}
			e := d.Evidence()
			if e.Empty() != tc.empty {
				t.Fatalf("Empty = %v, want %v (%v)", e.Empty(), tc.empty, d.Values)
			}
			if tc.empty {
				if d.Explain() != "" || e.Fix() != "" {
					t.Errorf("nothing moved but Explain = %q, Fix = %q", d.Explain(), e.Fix())
				}
				return
			}
			k, side, _ := e.Dominant()
			if k != tc.kind || side != tc.side {
				t.Errorf("Dominant = %v/%v, want %v/%v", k, side, tc.kind, tc.side)
			}
			if d.Reset != tc.reset {
				t.Errorf("Reset = %v, want %v", d.Reset, tc.reset)
			}
			text := d.Explain()
			for _, w := range tc.words {
				if !strings.Contains(text, w) {
					t.Errorf("Explain = %q, want %q in it", text, w)
				}
			}
			if e.Fix() == "" {
				t.Error("no Fix for a moving counter")
			}
		})
	}
}

func TestDiffOtherPort(t *testing.T) {
	a := Snapshot{Device: "mlx5_0", Port: 1}
	b := Snapshot{Device: "mlx5_1", Port: 1}
	if _, err := Diff(a, b); err == nil {
		t.Error("diff across two ports gave no error")
	}
}

func TestEvidenceSaturates(t *testing.T) {
	var e Evidence
	e[Loss][Ingress] = 1<<32 - 2
	var o Evidence
	o[Loss][Ingress] = 5
	e.Add(o)
	if e[Loss][Ingress] != 1<<32-1 {
		t.Errorf("Add wrapped: %d", e[Loss][Ingress])
	}
}
