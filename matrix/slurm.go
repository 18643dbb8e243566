package matrix

import (
	"fmt"
	"io"
	"sort"

	"github.com/rdmamesh/rdmamesh/internal/hostlist"
)

// ExcludeOptions decide which suspects take nodes out of a job. The zero
// value is the recommended policy for a prolog:
//
//   - node, hca and switch-group suspects exclude their node(s): one bad
//     HCA stalls every collective the node joins, slow or failed alike;
//   - failed pair suspects exclude both ends: the two cannot talk, so a
//     job using both would hang, and the matrix cannot say which end to
//     keep. Slow or narrow pairs exclude nobody: a slow route costs less
//     than two nodes;
//   - rail suspects exclude nobody: every node has the rail. The NCCL env
//     leaves that rail's HCA out instead.
type ExcludeOptions struct {
	KeepPairs bool // failed pairs exclude nobody
	KeepSlow  bool // slow-latency / low-bandwidth suspects exclude nobody
	// MinConfidence: suspects below it exclude nobody; 0 takes the
	// sweep's Thresholds.ExcludeConfidence (0.5 by default).
	MinConfidence float64
}

// floor is the confidence a suspect of m needs to exclude a node.
func (o ExcludeOptions) floor(m *Matrix) float64 {
	switch {
	case o.MinConfidence > 0:
		return o.MinConfidence
	case m.Thresholds.ExcludeConfidence > 0:
		return m.Thresholds.ExcludeConfidence
	}
	return defaultExcludeConfidence // a matrix written before the field existed
}

// Excluded lists the nodes the suspects take out of a job, sorted by name:
// only suspects confident enough (ExcludeOptions.floor); a weaker one is
// one the matrix cannot tell from a neighbour, and taking a healthy node
// out of a job is a failure of its own.
func (m *Matrix) Excluded(o ExcludeOptions) []string {
	set := map[string]bool{}
	floor := o.floor(m)
	for _, s := range m.Suspects {
		if s.Confidence < floor {
			continue
		}
		perf := s.Verdict == VerdictSlowLatency || s.Verdict == VerdictLowBandwidth
		switch {
		case s.Verdict == VerdictUntested:
			// Not measured is not broken: the gate says untested (exit
			// 3) and a retry may test it; a job may still run there.
		case o.KeepSlow && perf:
		case s.Kind == KindNode || s.Kind == KindHCA || s.Kind == KindCable:
			set[s.Node] = true
		case s.Kind == KindSwitchGroup:
			for _, n := range s.Members {
				set[n] = true
			}
		case s.Kind == KindPair && s.Verdict == VerdictFailed && !o.KeepPairs:
			set[s.Node], set[s.Peer] = true, true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		if n != "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Usable lists the nodes Excluded leaves, in Matrix.Nodes order.
func (m *Matrix) Usable(o ExcludeOptions) []string {
	ex := map[string]bool{}
	for _, n := range m.Excluded(o) {
		ex[n] = true
	}
	var out []string
	for _, n := range m.Nodes {
		if !ex[n.Name] {
			out = append(out, n.Name)
		}
	}
	return out
}

// WriteExclude writes the excluded nodes as one Slurm hostlist expression
// and a newline (`sbatch --exclude=$(cat FILE)`), or nothing at all when no
// node is excluded, so `[ -s FILE ]` tells the two apart.
func (m *Matrix) WriteExclude(w io.Writer, o ExcludeOptions) error {
	ex := m.Excluded(o)
	if len(ex) == 0 {
		return nil
	}
	expr, err := hostlist.Compress(ex)
	if err != nil {
		return fmt.Errorf("exclude list: %w", err)
	}
	_, err = io.WriteString(w, expr+"\n")
	return err
}

// HostfileOptions shape WriteHostfile's lines.
type HostfileOptions struct {
	Exclude ExcludeOptions
	// Slots > 0 writes "node slots=N" (Open MPI, DeepSpeed); 0 writes bare
	// names, one per line (MPICH, Slurm --nodelist files).
	Slots int
}

// WriteHostfile writes the usable nodes, one per line, in name order.
func (m *Matrix) WriteHostfile(w io.Writer, o HostfileOptions) error {
	for _, n := range m.Usable(o.Exclude) {
		line := n + "\n"
		if o.Slots > 0 {
			line = fmt.Sprintf("%s slots=%d\n", n, o.Slots)
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
