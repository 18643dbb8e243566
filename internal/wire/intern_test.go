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
