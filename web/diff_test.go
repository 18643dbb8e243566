package web

import (
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

func TestDiffTwoSweeps(t *testing.T) {
	f := newFake()
	// s1 as recorded, s2 with n3's rail 1 repaired.
	fixed := testMatrix()
	for i := range fixed.Cells {
		c := &fixed.Cells[i]
		if c.Verdict == matrix.VerdictFailed {
			c.Verdict, c.Error, c.Reason = matrix.VerdictOK, nil, ""
		}
	}
	fixed.Suspects = nil
	f.matrices["s2"] = fixed
	h := serve(t, f)
	rec := do(t, h, "GET", "/api/v1/diff?old=s1&new=latest", "")
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	d := decode[diffAnswer](t, rec)
	if d.Old != "s1" || d.New != "s2" || d.BetterTotal != 4 || d.WorseTotal != 0 || d.Truncated {
		t.Fatalf("diff %+v", d)
	}
	if len(d.Report.Better) != 4 || len(d.Report.ClearedSuspects) != 1 {
		t.Fatalf("report: %d better, %d cleared suspects", len(d.Report.Better), len(d.Report.ClearedSuspects))
	}
	rec = do(t, h, "GET", "/api/v1/diff?old=s2&new=s1&limit=1", "")
	d = decode[diffAnswer](t, rec)
	if d.WorseTotal != 4 || len(d.Report.Worse) != 1 || !d.Truncated {
		t.Fatalf("limited diff: %d total, %d listed, truncated %v", d.WorseTotal, len(d.Report.Worse), d.Truncated)
	}
}

func TestDiffBadInput(t *testing.T) {
	h := serve(t, newFake())
	wantError(t, do(t, h, "GET", "/api/v1/diff?new=s1", ""), 400, "old")
	wantError(t, do(t, h, "GET", "/api/v1/diff?old=s1", ""), 400, "new")
	wantError(t, do(t, h, "GET", "/api/v1/diff?old=s1&new=s2&limit=-1", ""), 400, "limit")
	wantError(t, do(t, h, "GET", "/api/v1/diff?old=s1&new=s2&limit=many", ""), 400, "limit")
	e := wantError(t, do(t, h, "GET", "/api/v1/diff?old=s1&new=ghost", ""), 404, "new")
	if !strings.Contains(e.Error, "ghost") {
		t.Errorf("404 does not name the sweep: %q", e.Error)
	}
	wantError(t, do(t, serve(t, &fakeBackend{}), "GET", "/api/v1/diff?old=latest&new=latest", ""), 404, "")
}

// Views are cached per matrix pointer and evicted beyond maxViews; a new
// matrix for the same sweep (a round committed) must not be served stale.
func TestViewCacheFollowsTheMatrix(t *testing.T) {
	f := synthBackend(synth.Matrix(8, 1))
	h := serve(t, f)
	before := getGridInfo(t, h)
	f.mu.Lock()
	f.matrices["big"] = synth.Matrix(10, 1)
	f.mu.Unlock()
	after := getGridInfo(t, h)
	if len(before.Nodes) != 8 || len(after.Nodes) != 10 {
		t.Fatalf("grid nodes %d then %d, want 8 then 10", len(before.Nodes), len(after.Nodes))
	}
	var vc viewCache
	ms := make([]*matrix.Matrix, maxViews+2)
	for i := range ms {
		ms[i] = &matrix.Matrix{}
		vc.entry("s", ms[i])
	}
	if len(vc.entries) != maxViews || vc.entries[0].m != ms[2] {
		t.Fatalf("cache holds %d entries", len(vc.entries))
	}
	vc.entry("s", ms[2]) // touched: now the most recent
	if vc.entries[len(vc.entries)-1].m != ms[2] {
		t.Fatal("a hit did not move the entry to the back")
	}
}
