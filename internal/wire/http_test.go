package wire

import (
	"strings"
	"testing"
	"testing/iotest"
)

// ReadBuf reads a body of known length exactly and one of unknown length
// to its end, and refuses one past max, or shorter than it declared.
func TestReadBuf(t *testing.T) {
	body := strings.Repeat("x", 5000) // past a pooled buffer's first 4 KB
	for _, tc := range []struct {
		name   string
		body   string
		length int64
		max    int
		ok     bool
	}{
		{"known length", body, int64(len(body)), 1 << 20, true},
		{"unknown length", body, -1, 1 << 20, true},
		{"empty", "", 0, 1 << 20, true},
		{"declared past max", body, int64(len(body)), 100, false},
		{"unknown length past max", body, -1, 100, false},
		{"shorter than declared", body, int64(len(body)) + 1, 1 << 20, false},
	} {
		b, err := ReadBuf(iotest.HalfReader(strings.NewReader(tc.body)), tc.length, tc.max)
		if tc.ok != (err == nil) {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		if err == nil {
			if string(b.B) != tc.body {
				t.Fatalf("%s: read %d bytes, want %d", tc.name, len(b.B), len(tc.body))
			}
			b.Put()
		}
	}
}
