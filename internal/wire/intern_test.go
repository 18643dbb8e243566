package wire

import (
	"testing"
	"unsafe"
)

func TestInternSharesAndStaysCorrect(t *testing.T) {
	a, b := intern([]byte("mlx5_3")), intern([]byte("mlx5_3"))
	if a != "mlx5_3" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatalf("intern: %q and %q not shared", a, b)
	}
	// A value that lands in an occupied slot replaces it; both still read
	// back as themselves.
	for i := range 10000 {
		s := string(rune('a'+i%26)) + string(rune('A'+i/26%26)) + string(rune('0'+i%10))
		if got := intern([]byte(s)); got != s {
			t.Fatalf("intern(%q) = %q", s, got)
		}
	}
	long := string(make([]byte, internMax+1))
	if intern([]byte(long)) != long || intern(nil) != "" {
		t.Fatal("long or empty strings")
	}
}

// The names and API addresses of a 4,096-node sweep (8,192 values) stay
// interned: a second pass over them finds nearly every one shared. (One
// slot per hash in 4,096 slots kept almost none of them.)
func TestInternHoldsA4096NodeSweep(t *testing.T) {
	clear(internTab[:])
	var vals []string
	for i := range 4096 {
		vals = append(vals, fmtNode(i), fmtNode(i)+".api:7471")
	}
	first := make([]string, len(vals))
	for i, v := range vals {
		first[i] = intern([]byte(v))
	}
	shared := 0
	for i, v := range vals {
		if got := intern([]byte(v)); unsafe.StringData(got) == unsafe.StringData(first[i]) {
			shared++
		}
	}
	t.Logf("%d of %d values shared on the second pass", shared, len(vals))
	if shared < len(vals)*95/100 {
		t.Fatalf("%d of %d values still shared on the second pass, want at least 95%%", shared, len(vals))
	}
}

func fmtNode(i int) string {
	return "gpu-node-" + string(rune('0'+i/1000%10)) + string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}
