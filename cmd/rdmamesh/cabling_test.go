package main

import (
	"bytes"
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

// cablingServer answers GET /api/v1/cabling with a report whose ports
// have the given verdicts, wanting the bearer token when one is given.
func cablingServer(t *testing.T, token string, verdicts ...cabling.Verdict) *httptest.Server {
	t.Helper()
	rep := struct {
		cabling.Report
		Source api.CablingSource `json:"source"`
	}{Report: cabling.Report{Planned: true, Counts: map[cabling.Verdict]int{}}}
	for _, v := range verdicts {
		rep.Ports = append(rep.Ports, cabling.Finding{Verdict: v, End: "node-01/mlx5_0", Node: "node-01", HCA: "mlx5_0",
			Expected: "leaf-r0-01:1", Found: "leaf-r1-01:1", Action: "move it"})
		rep.Counts[v]++
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/cabling" {
			http.NotFound(w, r)
			return
		}
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(api.Error{Error: "give the token"})
			return
		}
		if err := json.NewEncoder(w).Encode(rep); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func cablingCLI(args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(append([]string{"cabling"}, args...), &out, &errOut)
	return code, out.String() + errOut.String()
}

func TestCablingCommandExitCodes(t *testing.T) {
	ok := cablingServer(t, "", cabling.OK, cabling.NoEvidence)
	bad := cablingServer(t, "", cabling.OK, cabling.WrongLeaf)
	dir := t.TempDir()
	csv := filepath.Join(dir, "c.csv")
	cases := []struct {
		name string
		args []string
		want int
		says string
	}{
		{"clean", []string{"--coordinator", ok.URL}, 0, "cabling against the plan: 2 ports, 1 findings"},
		{"no evidence, strict", []string{"--coordinator", ok.URL, "--strict"}, 1, "no-evidence"},
		{"mismatch", []string{"--coordinator", bad.URL, "--csv", csv}, 1, "wrong-leaf"},
		{"warn only", []string{"--coordinator", bad.URL, "--warn-only"}, 0, "warning: 1 ports are not as planned"},
		{"no coordinator", nil, 2, "--coordinator URL is required"},
		{"unknown flag", []string{"--coordinator", ok.URL, "--cables", "x"}, 2, "unknown flag: --cables (rdmamesh cabling --help lists the flags)"},
		{"bad timeout", []string{"--coordinator", ok.URL, "--timeout", "soon"}, 2, `"--timeout"`},
		{"both", []string{"--coordinator", ok.URL, "--strict", "--warn-only"}, 2, "give one"},
		{"no such dir", []string{"--coordinator", ok.URL, "--junit", filepath.Join(dir, "no", "c.xml")}, 2, "--junit"},
		{"missing token file", []string{"--coordinator", ok.URL, "--token-file", filepath.Join(dir, "nope")}, 2, "--token-file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := cablingCLI(tc.args...)
			if code != tc.want || !strings.Contains(out, tc.says) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s", code, tc.want, tc.says, out)
			}
		})
	}
	if b, err := os.ReadFile(csv); err != nil || !strings.Contains(string(b), "wrong-leaf") {
		t.Errorf("--csv: %v %s", err, b)
	}
}

func TestCablingCommandToken(t *testing.T) {
	srv := cablingServer(t, "s3cret", cabling.OK)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := cablingCLI("--coordinator", srv.URL); code != 2 || !strings.Contains(out, "401") {
		t.Fatalf("without the token: exit %d: %s", code, out)
	}
	if code, out := cablingCLI("--coordinator", srv.URL, "--token-file", tok); code != 0 {
		t.Fatalf("with --token-file: exit %d: %s", code, out)
	}
}
