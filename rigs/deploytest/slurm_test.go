package deploytest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// slurmEnv is a fake cluster for the Slurm scripts: scontrol and rdmamesh
// are shell stubs that log their arguments; the gate stub exits with
// $FAKE_RC and writes $FAKE_JSON where --json asks.
type slurmEnv struct {
	dir, log string
}

const fakeScontrol = `#!/bin/bash
echo "scontrol $*" >> "$FAKE_LOG"
if [[ $1 == show && $2 == hostnames ]]; then
	# Stands in for hostlist expansion: "n[1-3]" -> n1 n2 n3; "n1" -> n1.
	case $3 in
	"n[1-3]") printf 'n1\nn2\nn3\n' ;;
	*) echo "$3" ;;
	esac
fi
`

// squeue lists no pending job.
const fakeSqueue = `#!/bin/bash
echo "squeue $*" >> "$FAKE_LOG"
`

const fakeRdmamesh = `#!/bin/bash
echo "rdmamesh $*" >> "$FAKE_LOG"
json=
while [[ $# -gt 0 ]]; do
	if [[ $1 == --json ]]; then json=$2; fi
	shift
done
if [[ -n $json && -n ${FAKE_JSON:-} ]]; then printf '%s' "$FAKE_JSON" > "$json"; fi
exit "${FAKE_RC:-0}"
`

func newSlurmEnv(t *testing.T, conf string) *slurmEnv {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	e := &slurmEnv{dir: dir, log: filepath.Join(dir, "calls.log")}
	for name, body := range map[string]string{"scontrol": fakeScontrol, "squeue": fakeSqueue, "rdmamesh": fakeRdmamesh} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The report dir exists, as the docs' install steps create it.
	if err := os.Mkdir(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf = "RDMAMESH=" + filepath.Join(dir, "rdmamesh") + "\nREPORT_DIR=" + filepath.Join(dir, "reports") +
		"\nLOG_FILE=" + filepath.Join(dir, "decisions.log") + "\nCOORDINATOR=http://coord:8080\n" + conf
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// run runs one script and returns its exit code and the logged calls.
func (e *slurmEnv) run(t *testing.T, script string, env ...string) (int, []string) {
	t.Helper()
	os.Remove(e.log)
	cmd := exec.Command("bash", repo(t, "deploy", "slurm", script))
	cmd.Env = append([]string{
		"PATH=" + e.dir + ":" + os.Getenv("PATH"),
		"FAKE_LOG=" + e.log,
		"RDMAMESH_SLURM_CONF=" + filepath.Join(e.dir, "slurm.conf"),
		"SLURM_JOB_ID=42",
		"SLURM_JOB_NODELIST=n[1-3]",
	}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: exit %d\n%s", script, code, out)
	b, _ := os.ReadFile(e.log)
	return code, strings.Split(strings.TrimSpace(string(b)), "\n")
}

func calls(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// A matrix JSON as rdmamesh gate --json writes it, reduced to suspects.
const unhealthyJSON = `{"healthy": false, "suspects": [
 {"kind": "hca", "node": "n2", "device": "mlx5_1", "rail": 1, "class": "port-down", "bad": 4},
 {"kind": "node", "node": "n3", "rail": -1, "bad": 8},
 {"kind": "pair", "node": "n1", "peer": "n3", "rail": 0, "bad": 2},
 {"kind": "rail", "rail": 3, "bad": 12}]}`

func TestSlurmProlog(t *testing.T) {
	e := newSlurmEnv(t, "")
	drains := func(log []string) []string { return calls(log, "scontrol update NodeName=") }
	comments := func(log []string) []string { return calls(log, "scontrol update JobId=42 AdminComment=") }

	code, log := e.run(t, "rdmamesh-prolog.sh", "FAKE_RC=0")
	gates := calls(log, "rdmamesh gate")
	if code != 0 || len(gates) != 1 || len(calls(log, "scontrol update")) != 0 {
		t.Fatalf("healthy: exit %d, calls %v", code, log)
	}
	// The gate really gets the job's nodes, as the CLI spells the flags.
	args := strings.Fields(gates[0])[1:]
	if err := cli(t).CheckArgs(args); err != nil {
		t.Fatalf("the prolog's gate command line: %v", err)
	}
	if v := argValues(args); v["hosts"] != "n[1-3]" || v["budget"] != "8m" || v["coordinator"] != "http://coord:8080" || v["mode"] != "full" {
		t.Errorf("gate args %v", v)
	}

	code, log = e.run(t, "rdmamesh-prolog.sh", "FAKE_RC=1", "FAKE_JSON="+unhealthyJSON)
	if code == 0 {
		t.Error("unhealthy fabric: the prolog must exit non-zero so Slurm requeues the job")
	}
	// hca and node suspects are drained, each with its HCA first in the
	// reason (sinfo -R shows 20 columns); pair and rail suspects blame no
	// single node.
	d := drains(log)
	if len(d) != 2 || !strings.Contains(d[0], "NodeName=n2 State=DRAIN Reason=mlx5_1 port-down; rdmamesh job 42") ||
		!strings.Contains(d[1], "NodeName=n3 State=DRAIN Reason=node bad; rdmamesh job 42") {
		t.Errorf("drain calls %v, want n2 (mlx5_1) and n3 (node) with the job id", d)
	}
	if c := comments(log); len(c) != 1 || !strings.Contains(c[0], "requeued: drained n2 mlx5_1 port-down; n3 node bad") {
		t.Errorf("the requeued job's comment: %v", c)
	}

	for _, rc := range []string{"2", "3"} {
		code, log = e.run(t, "rdmamesh-prolog.sh", "FAKE_RC="+rc)
		if code != 0 || len(drains(log)) != 0 || len(comments(log)) != 1 || !strings.Contains(comments(log)[0], "ran unchecked: gate exit "+rc) {
			t.Errorf("gate exit %s, ON_ERROR=pass: exit %d, calls %v; want 0, no drain, a comment", rc, code, log)
		}
	}

	code, log = e.run(t, "rdmamesh-prolog.sh", "SLURM_JOB_NODELIST=n1")
	if code != 0 || len(calls(log, "rdmamesh")) != 0 {
		t.Errorf("one-node job: exit %d, calls %v; want 0 without a sweep", code, log)
	}

	strict := newSlurmEnv(t, "ON_ERROR=fail\nON_ERROR_REQUEUES=2\nDRAIN=no\n")
	code, log = strict.run(t, "rdmamesh-prolog.sh", "FAKE_RC=3", "SLURM_JOB_RESTART_COUNT=1")
	if code == 0 || len(calls(log, "scontrol hold")) != 0 || !strings.Contains(strings.Join(comments(log), ""), "requeued 2/2") {
		t.Errorf("ON_ERROR=fail: rdmamesh down must requeue the job: exit %d, calls %v", code, log)
	}
	code, log = strict.run(t, "rdmamesh-prolog.sh", "FAKE_RC=3", "SLURM_JOB_RESTART_COUNT=2")
	if code == 0 || len(calls(log, "scontrol hold 42")) != 1 || !strings.Contains(strings.Join(comments(log), ""), "held after 2 requeues") {
		t.Errorf("ON_ERROR=fail past ON_ERROR_REQUEUES: exit %d, calls %v; want a hold", code, log)
	}
	code, log = strict.run(t, "rdmamesh-prolog.sh", "FAKE_RC=1", "FAKE_JSON="+unhealthyJSON)
	if code == 0 || len(drains(log)) != 0 {
		t.Errorf("DRAIN=no: exit %d, calls %v; want non-zero and no drain", code, log)
	}
}

// A local failure (the report dir, the token file, the binary, the config)
// is an infrastructure failure: ON_ERROR decides, nothing is drained, and
// the job's comment says what is wrong.
func TestSlurmPrologLocalFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		conf, want string
		env        []string
	}{
		"report dir": {conf: "REPORT_DIR=/nonexistent/reports\n", want: "report dir /nonexistent/reports is missing"},
		"token":      {conf: "TOKEN_FILE=/nonexistent/token\n", want: "TOKEN_FILE /nonexistent/token is not readable"},
		"binary":     {conf: "RDMAMESH=/nonexistent/rdmamesh\n", want: "rdmamesh binary /nonexistent/rdmamesh is missing"},
		"config":     {env: []string{"RDMAMESH_SLURM_CONF=/nonexistent/slurm.conf"}, want: "config /nonexistent/slurm.conf is missing"},
	} {
		e := newSlurmEnv(t, tc.conf)
		code, log := e.run(t, "rdmamesh-prolog.sh", append([]string{"FAKE_RC=1", "FAKE_JSON=" + unhealthyJSON}, tc.env...)...)
		c := calls(log, "scontrol update JobId=42 AdminComment=")
		if code != 0 || len(calls(log, "rdmamesh gate")) != 0 || len(calls(log, "scontrol update NodeName=")) != 0 ||
			len(c) != 1 || !strings.Contains(c[0], "ran unchecked: "+tc.want) {
			t.Errorf("%s: exit %d, calls %v; want 0, no gate, no drain, a comment with %q", name, code, log, tc.want)
		}
	}
}

func TestSlurmEpilog(t *testing.T) {
	e := newSlurmEnv(t, "")
	code, log := e.run(t, "rdmamesh-epilog.sh", "SLURM_JOB_EXIT_CODE2=0:0", "FAKE_RC=1", "FAKE_JSON="+unhealthyJSON)
	if code != 0 || len(calls(log, "rdmamesh")) != 0 {
		t.Errorf("successful job: exit %d, calls %v; want no re-check", code, log)
	}
	code, log = e.run(t, "rdmamesh-epilog.sh", "SLURM_JOB_EXIT_CODE2=1:0", "FAKE_RC=1", "FAKE_JSON="+unhealthyJSON)
	gates := calls(log, "rdmamesh gate")
	if code != 0 {
		t.Errorf("the epilog must always exit 0, got %d", code)
	}
	if len(gates) != 1 || argValues(strings.Fields(gates[0])[1:])["mode"] != "quick" {
		t.Errorf("failed job: gate calls %v, want one quick sweep", gates)
	}
	if d := calls(log, "scontrol update NodeName="); len(d) != 2 || !strings.Contains(d[0], "NodeName=n2") || !strings.Contains(d[1], "NodeName=n3") {
		t.Errorf("failed job on a bad fabric: drains %v", d)
	}
	always := newSlurmEnv(t, "EPILOG_CHECK=always\n")
	if _, log := always.run(t, "rdmamesh-epilog.sh", "SLURM_JOB_EXIT_CODE2=0:0"); len(calls(log, "rdmamesh gate")) != 1 {
		t.Errorf("EPILOG_CHECK=always: calls %v", log)
	}
}

// The scripts must at least parse, and pass shellcheck when it is there.
func TestSlurmScriptsLint(t *testing.T) {
	scripts, _ := filepath.Glob(repo(t, "deploy", "slurm", "*.sh"))
	if len(scripts) != 3 {
		t.Fatalf("scripts %v", scripts)
	}
	for _, s := range scripts {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
	}
	for _, s := range []string{"rdmamesh-prolog.sh", "rdmamesh-epilog.sh"} {
		st, err := os.Stat(repo(t, "deploy", "slurm", s))
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s must be executable (slurmctld runs it directly)", s)
		}
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck not installed")
	}
	cmd := exec.Command(sc, append([]string{"-x"}, scripts...)...)
	cmd.Dir = repo(t, "deploy", "slurm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
