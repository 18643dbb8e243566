package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// cablingOf is a report with one port of each verdict given.
func cablingOf(verdicts ...cabling.Verdict) cablingAnswer {
	a := cablingAnswer{Report: cabling.Report{Planned: true, Counts: map[cabling.Verdict]int{}},
		Source: api.CablingSource{Workers: 2, Neighbors: 3, Sweep: "s1", Paths: 4}}
	for i, v := range verdicts {
		f := cabling.Finding{Verdict: v, End: "node-0" + string(rune('1'+i)) + "/mlx5_0", Expected: "leaf-r0-01:1"}
		if v != cabling.NoEvidence {
			f.Found = "leaf-r1-01:1"
			f.Action = "move it"
		}
		a.Ports = append(a.Ports, f)
		a.Counts[v]++
	}
	return a
}

// withCablingAPI serves c's sweep and rep at /api/v1/cabling, recording
// the queries asked.
func withCablingAPI(t *testing.T, c *coordinator, rep cablingAnswer, asked *[]string) *httptest.Server {
	t.Helper()
	if c.rounds == 0 {
		c.rounds = 3
	}
	c.t = t
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/cabling" {
			c.ServeHTTP(w, r)
			return
		}
		*asked = append(*asked, r.URL.RawQuery)
		if err := json.NewEncoder(w).Encode(rep); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestGateCabling(t *testing.T) {
	cases := []struct {
		name     string
		broken   []string
		rep      cablingAnswer
		mode     string
		want     int
		out      string
		notAsked bool
	}{
		{"clean", nil, cablingOf(cabling.OK, cabling.OK), "", ExitHealthy, "0 findings", false},
		{"no evidence passes", nil, cablingOf(cabling.OK, cabling.NoEvidence), "", ExitHealthy, "1 ports without evidence do not fail the gate", false},
		{"swapped fails", nil, cablingOf(cabling.Swapped, cabling.Swapped), "", ExitCabling, "swapped node-01/mlx5_0: expected leaf-r0-01:1; found leaf-r1-01:1; move it", false},
		{"warn", nil, cablingOf(cabling.WrongLeaf), CablingWarn, ExitHealthy, "warning: 1 ports are not cabled as planned", false},
		{"off", nil, cablingOf(cabling.WrongLeaf), CablingOff, ExitHealthy, "", true},
		{"a fault outranks it", []string{"node-03"}, cablingOf(cabling.WrongRail), "", ExitUnhealthy, "wrong-rail", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			srv := withCablingAPI(t, &coordinator{m: fabric(tc.broken...)}, tc.rep, &asked)
			code, out, errOut := run(t, Options{Coordinator: srv.URL, Cabling: tc.mode})
			if code != tc.want || !strings.Contains(out, tc.out) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s%s", code, tc.want, tc.out, out, errOut)
			}
			if tc.notAsked != (len(asked) == 0) {
				t.Fatalf("cabling asked %v", asked)
			}
			if !tc.notAsked && asked[0] != "sweep=s1" {
				t.Errorf("asked %q: want the gate's own sweep's paths", asked[0])
			}
		})
	}
}

// Many findings: the gate prints the first five and says where the rest are.
func TestGateCablingShort(t *testing.T) {
	var asked []string
	rep := cablingOf(cabling.WrongLeaf, cabling.WrongLeaf, cabling.WrongLeaf, cabling.WrongLeaf, cabling.WrongLeaf, cabling.WrongLeaf, cabling.WrongLeaf)
	srv := withCablingAPI(t, &coordinator{m: fabric()}, rep, &asked)
	csv := filepath.Join(t.TempDir(), "cabling.csv")
	code, out, _ := run(t, Options{Coordinator: srv.URL, CablingCSV: csv})
	if code != ExitCabling || strings.Count(out, "wrong-leaf node-") != 5 || !strings.Contains(out, "... 2 more (--cabling-csv writes them all)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(csv)
	if err != nil || strings.Count(string(b), "\n") != 8 {
		t.Fatalf("--cabling-csv: %v\n%s", err, b)
	}
}

// A coordinator without the cabling API leaves the gate's verdict as it
// was, unless its CSV was asked for.
func TestGateCablingUnknown(t *testing.T) {
	srv := serve(t, &coordinator{m: fabric()})
	if code, out, _ := run(t, Options{Coordinator: srv.URL}); code != ExitHealthy || !strings.Contains(out, "cabling: not judged") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, _, errOut := run(t, Options{Coordinator: srv.URL, CablingCSV: filepath.Join(t.TempDir(), "c.csv")})
	if code != ExitUsage || !strings.Contains(errOut, "--cabling-csv") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestGateCablingFlags(t *testing.T) {
	for _, o := range []Options{
		{Coordinator: "http://c:8080", Cabling: "strict"},
		{Coordinator: "http://c:8080", Cabling: CablingOff, CablingCSV: "c.csv"},
		{Coordinator: "http://c:8080", CablingCSV: "/no/such/dir/c.csv"},
	} {
		code, _, errOut := run(t, o)
		if code != ExitUsage || !strings.Contains(errOut, "cabling") {
			t.Errorf("%+v: exit %d, %s", o, code, errOut)
		}
	}
}

func runCabling(t *testing.T, o CablingOptions) (int, string, string) {
	t.Helper()
	var ob, eb bytes.Buffer
	code := RunCabling(context.Background(), o, &ob, &eb)
	return code, ob.String(), eb.String()
}

func TestRunCabling(t *testing.T) {
	cases := []struct {
		name   string
		rep    cablingAnswer
		strict bool
		warn   bool
		want   int
	}{
		{"clean", cablingOf(cabling.OK), false, false, ExitHealthy},
		{"no evidence", cablingOf(cabling.OK, cabling.NoEvidence), false, false, ExitHealthy},
		{"no evidence, strict", cablingOf(cabling.OK, cabling.NoEvidence), true, false, ExitUnhealthy},
		{"unexpected", cablingOf(cabling.Unexpected), false, false, ExitUnhealthy},
		{"warn only", cablingOf(cabling.Swapped, cabling.Swapped), false, true, ExitHealthy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			srv := withCablingAPI(t, &coordinator{m: fabric()}, tc.rep, &asked)
			dir := t.TempDir()
			o := CablingOptions{Coordinator: srv.URL, Sweep: "s9", Strict: tc.strict, WarnOnly: tc.warn,
				JSONFile: filepath.Join(dir, "c.json"), CSVFile: filepath.Join(dir, "c.csv"), JUnitFile: filepath.Join(dir, "c.xml")}
			code, out, errOut := runCabling(t, o)
			if code != tc.want || !strings.Contains(out, "cabling against the plan") {
				t.Fatalf("exit %d, want %d:\n%s%s", code, tc.want, out, errOut)
			}
			if tc.warn != strings.Contains(out, "warning:") {
				t.Errorf("warning line: %s", out)
			}
			if len(asked) != 1 || asked[0] != "sweep=s9" {
				t.Errorf("asked %v", asked)
			}
			var back cablingAnswer
			b, _ := os.ReadFile(o.JSONFile)
			if err := json.Unmarshal(b, &back); err != nil || back.Source.Paths != 4 || len(back.Ports) != len(tc.rep.Ports) {
				t.Errorf("--json: %v %s", err, b)
			}
			for _, f := range []string{o.CSVFile, o.JUnitFile} {
				if st, err := os.Stat(f); err != nil || st.Size() == 0 {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

func TestRunCablingRefuses(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cases := []struct {
		o    CablingOptions
		want int
		says string
	}{
		{CablingOptions{}, ExitUsage, "--coordinator URL is required"},
		{CablingOptions{Coordinator: "http://c", Strict: true, WarnOnly: true}, ExitUsage, "give one"},
		{CablingOptions{Coordinator: "http://c", CSVFile: "/no/such/dir/c.csv"}, ExitUsage, "--csv"},
		{CablingOptions{Coordinator: closed.URL}, ExitInfra, "unreachable"},
	}
	for _, tc := range cases {
		code, _, errOut := runCabling(t, tc.o)
		if code != tc.want || !strings.Contains(errOut, tc.says) {
			t.Errorf("%+v: exit %d (%s), want %d saying %q", tc.o, code, errOut, tc.want, tc.says)
		}
	}
}
