package matrix

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestWriteCSV(t *testing.T) {
	f := newFixture(4, 2)
	f.touching("node-02", 1, fail(probe.ClassPortDown, "port, \"1\" down", "reseat"))
	f.drop(func(c *Cell) bool { return c.Src == "node-01" && c.Dst == "node-03" && c.Rail == 0 })
	m := f.build()
	var buf bytes.Buffer
	if err := m.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(m.Cells)+1 || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, row := range rows[1:] {
		c := m.Cells[i]
		if len(row) != len(CSVHeader) || row[col["src"]] != c.Src || row[col["dst"]] != c.Dst || row[col["verdict"]] != string(c.Verdict) {
			t.Fatalf("row %d %v for cell %+v", i, row, c)
		}
		switch c.Verdict {
		case VerdictFailed:
			if row[col["p50_ns"]] != "" || row[col["reason"]] != `port, "1" down` || row[col["fix"]] != "reseat" {
				t.Fatalf("failed row %v", row)
			}
		case VerdictUntested:
			if row[col["class"]] != "" || row[col["gbps"]] != "" || row[col["fix"]] == "" {
				t.Fatalf("untested row %v", row)
			}
		case VerdictOK:
			if row[col["p50_ns"]] == "" || row[col["gbps"]] == "" || row[col["reason"]] != "" {
				t.Fatalf("ok row %v", row)
			}
		}
	}
}

// excludeMix has one suspect of each kind an exclude policy treats on its
// own: a dead HCA, a slow node, a failed pair and a slow pair.
func excludeMix() *fixture {
	f := newFixture(8, 2)
	f.touching("node-02", 0, fail(probe.ClassPortDown, "down", ""))             // hca
	f.touching("node-05", AllRails, slow(4))                                    // slow node
	fail(probe.ClassRetryExceeded, "lost", "")(f.cell("node-07", "node-08", 1)) // failed pair, one way
	f.cell("node-01", "node-03", 1).Latency = &probe.Latency{P50Ns: 9000}       // slow pair
	return f
}

func TestExcludePolicy(t *testing.T) {
	m := excludeMix().build()
	cases := []struct {
		o    ExcludeOptions
		want string
	}{
		// The failed pair and the slow pair are weak (0.11): they exclude
		// nobody unless the floor is lowered.
		{ExcludeOptions{}, "node-02,node-05"},
		{ExcludeOptions{KeepPairs: true}, "node-02,node-05"},
		{ExcludeOptions{KeepSlow: true}, "node-02"},
		{ExcludeOptions{MinConfidence: 0.1}, "node-02,node-05,node-07,node-08"},
		{ExcludeOptions{MinConfidence: 0.1, KeepPairs: true}, "node-02,node-05"},
		{ExcludeOptions{MinConfidence: 0.1, KeepSlow: true}, "node-02,node-07,node-08"},
	}
	for _, c := range cases {
		if got := strings.Join(m.Excluded(c.o), ","); got != c.want {
			t.Errorf("%+v: excluded %s, want %s\n%s", c.o, got, c.want, m.Summary())
		}
	}
	var buf bytes.Buffer
	if err := m.WriteExclude(&buf, ExcludeOptions{}); err != nil || buf.String() != "node-[02,05]\n" {
		t.Fatalf("exclude file %q, %v", buf.String(), err)
	}
	buf.Reset()
	if err := m.WriteHostfile(&buf, HostfileOptions{}); err != nil || buf.String() != "node-01\nnode-03\nnode-04\nnode-06\nnode-07\nnode-08\n" {
		t.Fatalf("hostfile %q, %v", buf.String(), err)
	}
	buf.Reset()
	if err := m.WriteHostfile(&buf, HostfileOptions{Slots: 8, Exclude: ExcludeOptions{KeepPairs: true}}); err != nil ||
		buf.String() != "node-01 slots=8\nnode-03 slots=8\nnode-04 slots=8\nnode-06 slots=8\nnode-07 slots=8\nnode-08 slots=8\n" {
		t.Fatalf("hostfile with slots %q, %v", buf.String(), err)
	}
}

// A healthy fabric: an empty exclude file and every node in the hostfile.
func TestExcludeNothing(t *testing.T) {
	m := newFixture(3, 1).build()
	var buf bytes.Buffer
	if err := m.WriteExclude(&buf, ExcludeOptions{}); err != nil || buf.Len() != 0 {
		t.Fatalf("exclude %q, %v", buf.String(), err)
	}
	if got := m.Usable(ExcludeOptions{}); len(got) != 3 {
		t.Fatalf("usable %v", got)
	}
}

// A rail suspect excludes nobody: the whole rail goes out of NCCL_IB_HCA.
func TestRailSuspectExcludesNobody(t *testing.T) {
	f := newFixture(8, 3)
	f.onRail(1, fail(probe.ClassRetryExceeded, "lost", ""))
	m := f.build()
	if ex := m.Excluded(ExcludeOptions{}); len(ex) != 0 {
		t.Fatalf("excluded %v", ex)
	}
	env := m.NCCL(NCCLOptions{})
	if v := envVar(env, "NCCL_IB_HCA"); v != "=mlx5_0:1,mlx5_2:1" {
		t.Fatalf("NCCL_IB_HCA %q; comments %q", v, env.Comments)
	}
}

func envVar(env NCCLEnv, key string) string {
	for _, v := range env.Vars {
		if v[0] == key {
			return v[1]
		}
	}
	return ""
}

func roce(f *fixture, gid func(node, rail int) int) {
	for i := range f.nodes {
		for r := range f.nodes[i].Ports {
			p := &f.nodes[i].Ports[r]
			p.LinkLayer, p.GIDIndex = "Ethernet", gid(i, r)
			p.Netdev, p.IP = "ens"+string(rune('a'+r)), "10.0.0.1"
		}
	}
}

// ncclCase sets up a 6 x 2 fabric and names the settings and comments of
// its NCCL env file.
type ncclCase struct {
	name     string
	setup    func(f *fixture)
	o        NCCLOptions
	vars     string // KEY=value lines, in order
	comments []string
}

func ncclCases() []ncclCase {
	return []ncclCase{
		{
			name:     "InfiniBand: HCAs only",
			setup:    func(f *fixture) {},
			vars:     "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1",
			comments: []string{"for 6 usable node(s) of 6", "InfiniBand routes by LID"},
		},
		{
			name:     "RoCE, uniform GID index",
			setup:    func(f *fixture) { roce(f, func(int, int) int { return 3 }) },
			vars:     "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\nNCCL_IB_GID_INDEX=3",
			comments: []string{"NCCL_SOCKET_IFNAME==ensa  (suggestion"},
		},
		{
			name:     "RoCE, GID index differs per node",
			setup:    func(f *fixture) { roce(f, func(n, _ int) int { return 3 + n%2 }) },
			vars:     "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1",
			comments: []string{"GID indexes 3,4"},
		},
		{
			name:  "rail netdev as the socket interface",
			setup: func(f *fixture) { roce(f, func(int, int) int { return 3 }) },
			o:     NCCLOptions{UseRailNetdev: true},
			vars:  "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\nNCCL_IB_GID_INDEX=3\nNCCL_SOCKET_IFNAME==ensa",
		},
		{
			name:  "explicit socket interface",
			setup: func(f *fixture) {},
			o:     NCCLOptions{SocketIfname: "=eth0"},
			vars:  "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\nNCCL_SOCKET_IFNAME==eth0",
		},
		{
			name: "a dead HCA takes its node out, not its rail",
			setup: func(f *fixture) {
				f.touching("node-03", 1, fail(probe.ClassPortDown, "down", ""))
			},
			vars:     "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1",
			comments: []string{"for 5 usable node(s) of 6"},
		},
		{
			name: "a port marked unusable is not offered",
			setup: func(f *fixture) {
				for i := range f.nodes {
					f.nodes[i].Ports[1].UnusableWhy = "no RoCE v2 GID"
				}
				f.drop(func(c *Cell) bool { return c.Rail == 1 })
				for i := range f.nodes { // keep the matrix healthy: rail 1 no longer exists
					f.nodes[i].Ports = f.nodes[i].Ports[:1]
				}
			},
			vars: "NCCL_IB_HCA==mlx5_0:1",
		},
	}
}

func TestNCCLEnv(t *testing.T) {
	for _, c := range ncclCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(6, 2)
			c.setup(f)
			m := f.build()
			var buf, shell bytes.Buffer
			envFile := c.o
			envFile.EnvFile = true
			if err := m.WriteNCCLEnv(&buf, envFile); err != nil {
				t.Fatal(err)
			}
			// The default form is the same file with every assignment
			// exported, for a job script to source.
			if err := m.WriteNCCLEnv(&shell, c.o); err != nil {
				t.Fatal(err)
			}
			if want := exportLines(buf.String()); shell.String() != want {
				t.Fatalf("shell form:\n%s\nwant:\n%s", shell.String(), want)
			}
			var vars, comments []string
			for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
				if strings.HasPrefix(line, "# ") {
					comments = append(comments, line)
					continue
				}
				if strings.ContainsAny(line, " \"'") || !strings.Contains(line, "=") {
					t.Fatalf("line %q is not KEY=value", line)
				}
				vars = append(vars, line)
			}
			if strings.Join(vars, "\n") != c.vars {
				t.Fatalf("vars:\n%s\nwant:\n%s\nfile:\n%s", strings.Join(vars, "\n"), c.vars, buf.String())
			}
			for _, want := range c.comments {
				if !strings.Contains(strings.Join(comments, "\n"), want) {
					t.Fatalf("no comment with %q:\n%s", want, buf.String())
				}
			}
		})
	}
}

// A device name healthy on one node but on a blamed rail on another cannot
// be one job-wide value: it is left out and the file says why.
func conflictingNames() *fixture {
	f := newFixture(8, 2)
	f.nodes[0].Ports[0].Device, f.nodes[0].Ports[1].Device = "mlx5_1", "mlx5_0" // swapped on node-01
	f.onRail(1, fail(probe.ClassRetryExceeded, "lost", ""))
	return f
}

func TestNCCLConflictingNames(t *testing.T) {
	m := conflictingNames().build()
	env := m.NCCL(NCCLOptions{})
	if v := envVar(env, "NCCL_IB_HCA"); v != "" {
		t.Fatalf("NCCL_IB_HCA %q", v)
	}
	joined := strings.Join(env.Comments, "\n")
	if !strings.Contains(joined, "mlx5_0:1, mlx5_1:1 left out") || !strings.Contains(joined, "no healthy HCA port") {
		t.Fatalf("comments:\n%s", joined)
	}
}

func exportLines(envFile string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(envFile, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			b.WriteString("export ")
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestNCCLEnvReachesTheJob sources the file in a real bash, as a job script
// does, and reads the settings back from a child process: a bare KEY=value
// line would stay a shell variable that NCCL never sees.
func TestNCCLEnvReachesTheJob(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	m := newFixture(6, 2).build()
	path := filepath.Join(t.TempDir(), "nccl.env")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteNCCLEnv(f, NCCLOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(bash, "-c", `. "$1" && env`, "bash", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\nNCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n") {
		t.Fatalf("a child of the shell that sourced the file does not see NCCL_IB_HCA:\n%s", out)
	}
}
