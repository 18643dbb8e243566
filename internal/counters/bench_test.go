package counters

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadPort is the cost a worker pays per rail test for counter
// evidence: one snapshot of an mlx5 port (the PMA set and mlx5's
// hw_counters present, rxe's absent) from files on disk. Real sysfs
// attributes are generated on read, so this is the path's own cost, not
// the driver's.
//
//	go test -run '^$' -bench ReadPort ./internal/counters
func BenchmarkReadPort(b *testing.B) {
	root := b.TempDir()
	base := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1")
	for _, d := range Known {
		if d.Name == "out_of_seq_request" { // rxe's set starts here
			break
		}
		dir := filepath.Join(base, d.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d.Name), []byte("12345\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fsys := os.DirFS(root)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Read(fsys, "mlx5_0", 1)
		if err != nil || len(s.Values) < 20 {
			b.Fatalf("read %d values: %v", len(s.Values), err)
		}
	}
}
