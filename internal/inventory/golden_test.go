package inventory

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the doctor golden files")

// doctorFixture runs what `rdmamesh doctor --sysfs-root testdata/<name>`
// runs, with the fixture's own options so nothing of this machine leaks in.
func doctorFixture(t *testing.T, name string, pol GIDPolicy) *Report {
	t.Helper()
	h := scanFixture(t, name)
	lookup, err := FixtureNeighbors(os.DirFS(filepath.Join("testdata", name)))
	if err != nil {
		t.Fatal(err)
	}
	h.LookupNeighbors("", lookup)
	r, err := Diagnose(h, pol, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func scanFixture(t *testing.T, name string) *Host {
	t.Helper()
	fsys := os.DirFS(filepath.Join("testdata", name))
	opts, err := FixtureOptions(fsys)
	if err != nil {
		t.Fatal(err)
	}
	opts.Counters = true // as the doctor scans
	h, err := Scan(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestDoctorGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			r := doctorFixture(t, f.name, GIDPolicy{Mode: ModeAuto})
			var text, js bytes.Buffer
			if err := r.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", f.name, "doctor.golden"), text.Bytes())
			compareGolden(t, filepath.Join("testdata", f.name, "doctor.golden.json"), js.Bytes())
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDoctorGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; run go test -run TestDoctorGolden -update and review the diff\n--- got ---\n%s", path, got)
	}
}
