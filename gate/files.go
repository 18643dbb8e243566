package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rdmamesh/rdmamesh/matrix"
)

type output struct {
	flag, path string
	write      func(io.Writer) error
}

// needsAllCells reports whether an output lists every cell; the summary,
// the exit code, exclude lists, host files and NCCL settings read only the
// counts and the suspects (?cells=summary). A coordinator too old to know
// ?cells=bad sends every cell, which is still right.
func (o Options) needsAllCells() bool {
	return o.JSONFile != "" || o.JUnitFile != "" || o.CSVFile != "" || o.BaselineFile != "" || o.DiffAgainst != ""
}

// outputs lists the files a run writes; write is nil until there is a matrix.
func (o Options) outputs() []output {
	return o.outputsFor(nil, nil)
}

func (o Options) outputsFor(m *matrix.Matrix, d *matrix.DiffReport) []output {
	nccl := o.NCCL
	nccl.Exclude = o.Exclude
	all := []output{
		{"--json", o.JSONFile, func(w io.Writer) error { return m.WriteJSON(w) }},
		{"--junit", o.JUnitFile, func(w io.Writer) error { return m.WriteJUnit(w) }},
		{"--csv", o.CSVFile, func(w io.Writer) error { return m.WriteCSV(w) }},
		{"--exclude", o.ExcludeFile, func(w io.Writer) error { return m.WriteExclude(w, o.Exclude) }},
		{"--hostfile", o.HostFile, func(w io.Writer) error {
			return m.WriteHostfile(w, matrix.HostfileOptions{Exclude: o.Exclude, Slots: o.HostSlots})
		}},
		{"--nccl-env", o.NCCLEnvFile, func(w io.Writer) error { return m.WriteNCCLEnv(w, nccl) }},
		{"--cables", o.CablesFile, func(w io.Writer) error { return m.WriteCables(w) }},
		{"--save-baseline", o.BaselineFile, func(w io.Writer) error {
			return matrix.BaselineFrom(m, filepath.Base(o.BaselineFile)).WriteJSON(w)
		}},
		{"--diff-json", o.DiffJSONFile, func(w io.Writer) error {
			if d == nil {
				return errors.New("no diff: --diff-against was not given")
			}
			return d.WriteJSON(w)
		}},
	}
	var out []output
	for _, f := range all {
		if f.path != "" {
			out = append(out, f)
		}
	}
	return out
}

// writeFiles writes every requested output. The paths were checked before
// the sweep, so a failure here is the machine's (disk full, permissions
// changed): an infrastructure error.
func writeFiles(m *matrix.Matrix, d *matrix.DiffReport, o Options) error {
	for _, f := range o.outputsFor(m, d) {
		if err := writeFile(f.path, f.write); err != nil {
			return infra(fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	return nil
}

// checkDir fails when path's directory does not exist, so a typo in an
// output path is a usage error before the sweep, not a lost result after.
func checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	return nil
}

// writeFile writes through a temp file and renames it, so a CI job never
// reads half a report.
func writeFile(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readMatrix loads an earlier matrix JSON for --diff-against.
func readMatrix(path string) (*matrix.Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--diff-against: %w", err)
	}
	defer f.Close()
	var m matrix.Matrix
	if err := m.ReadJSON(f); err != nil {
		return nil, fmt.Errorf("--diff-against %s: not a matrix JSON: %w", path, err)
	}
	if m.Nodes == nil && m.Cells == nil {
		return nil, fmt.Errorf("--diff-against %s: not a matrix JSON (no nodes, no cells)", path)
	}
	return &m, nil
}
