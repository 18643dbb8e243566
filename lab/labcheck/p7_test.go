package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCellStats(t *testing.T) {
	f := filepath.Join(t.TempDir(), "m.json")
	// Two cells: one measured (1000 round trips at p50 250 us = 0.5 s of
	// ping-pong, 0.25 s of stream), one failed with nothing measured.
	m := `{"cells":[{"class":"ok","latency":{"samples":1000,"p50_ns":250000},"bandwidth":{"duration_s":0.25}},
		{"class":"timeout"}]}`
	if err := os.WriteFile(f, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := cellStats(f)
	w.Close()
	os.Stdout = stdout
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "2 1 0.2500 0.1250"; got != want {
		t.Errorf("cellstats printed %q, want %q", got, want)
	}
	if err := cellStats(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file gave no error")
	}
}
