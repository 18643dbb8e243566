package wire

import "testing"

// benchIntern looks up n values a sweep repeats (node names and API
// addresses), all interned before, in a scattered order.
func benchIntern(b *testing.B, n int) {
	b.Helper()
	var vals [][]byte
	for i := range n / 2 {
		vals = append(vals, []byte(fmtNode(i)), []byte(fmtNode(i)+".api:7471"))
	}
	for _, v := range vals {
		intern(v)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		intern(vals[(i*7919)%len(vals)])
		i++
	}
}

// The values a 1,024-node and a 4,096-node sweep repeat.
func BenchmarkIntern1024(b *testing.B) { benchIntern(b, 2100) }
func BenchmarkIntern4096(b *testing.B) { benchIntern(b, 8200) }
