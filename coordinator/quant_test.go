package coordinator

import (
	"math"
	"testing"
)

func TestQuant(t *testing.T) {
	for _, v := range []float64{0, 1, 900, 1000, 16383} {
		if got := quantize(v); got != v {
			t.Errorf("whole number %v came back as %v", v, got)
		}
	}
	for _, v := range []float64{1e-4, 0.5, 1.5, 999.37, 1043.2847, 16384, 123456.7, 3.9e9, 390.25, 7e5} {
		got := quantize(v)
		if rel := math.Abs(got-v) / v; rel > 0.00034 {
			t.Errorf("%v came back as %v: relative error %.5f%%", v, got, rel*100)
		}
		if quant(got) != quant(v) {
			t.Errorf("%v: code not stable under re-encoding", v)
		}
	}
	if quant(-1) != 0 || quant(math.NaN()) != 0 || quant(math.Inf(1)) != math.MaxUint16 || quant(1e-9) != qExact {
		t.Error("out-of-range figures must map to 0 or saturate")
	}
}

// Every stored figure must read back the same after another trip through
// the log (a retest merge, a snapshot), or replicas would drift.
func TestQuantStable(t *testing.T) {
	for c := 0; c <= math.MaxUint16; c++ {
		v := unquant(uint16(c))
		if quantize(v) != v {
			t.Fatalf("code %d: %v re-encodes to %v", c, v, quantize(v))
		}
	}
}
