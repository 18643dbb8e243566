package probe

import "testing"

func TestSummarize(t *testing.T) {
	cases := []struct {
		name    string
		in      []float64
		min     float64
		p50     float64
		p99     float64
		max     float64
		samples int
	}{
		{"empty", nil, 0, 0, 0, 0, 0},
		{"one", []float64{7}, 7, 7, 7, 7, 1},
		{"unsorted", []float64{5, 1, 4, 2, 3}, 1, 3, 5, 5, 5},
		{"hundred", seq(100), 1, 50, 99, 100, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.in)
			if got.Samples != c.samples || got.MinNs != c.min || got.P50Ns != c.p50 ||
				got.P99Ns != c.p99 || got.MaxNs != c.max {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[n-1-i] = float64(i + 1)
	}
	return out
}

func TestParamsValidate(t *testing.T) {
	good := DefaultTestParams()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.LatencyIters = 0
	if err := bad.Validate(); err == nil {
		t.Fatal("zero iterations accepted")
	}
	bad = good
	bad.BWSize = 0
	bad.TxDepth = 0
	if err := bad.Validate(); err != nil {
		t.Fatalf("bandwidth skipped should not need tx_depth: %v", err)
	}
}
