package web

import (
	"io/fs"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

func TestIndexServed(t *testing.T) {
	h := New(newFake(), Options{Title: "lab <fabric> & co"}).Handler()
	for _, p := range []string{"/", "/index.html"} {
		rec := do(t, h, "GET", p, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", p, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
		body := rec.Body.String()
		if !regexp.MustCompile(`<canvas[^>]*id="heatmap"`).MatchString(body) {
			t.Errorf("%s: no heatmap canvas in %.300s", p, body)
		}
		// The title is injected once and escaped: it comes from config.
		if !strings.Contains(body, "<title>lab &lt;fabric&gt; &amp; co</title>") {
			t.Errorf("%s: title not injected and escaped", p)
		}
		if strings.Contains(body, "{{") {
			t.Errorf("%s: unrendered template action", p)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
	if rec := do(t, h, "HEAD", "/", ""); rec.Code != 200 {
		t.Errorf("HEAD /: status %d", rec.Code)
	}
}

func TestAssetsServedWithTypes(t *testing.T) {
	h := serve(t, newFake())
	for path, ctype := range map[string]string{"/app.js": "text/javascript", "/style.css": "text/css"} {
		rec := do(t, h, "GET", path, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", path, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, ctype) {
			t.Errorf("%s: Content-Type %q, want %s", path, ct, ctype)
		}
		if rec.Body.Len() < 500 {
			t.Errorf("%s: only %d bytes", path, rec.Body.Len())
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
		etag := rec.Header().Get("ETag")
		if again := do(t, h, "GET", path, "", "If-None-Match", etag); etag == "" || again.Code != http.StatusNotModified {
			t.Errorf("%s: ETag %q revalidation gave %d, want 304", path, etag, again.Code)
		}
	}
	js := do(t, h, "GET", "/app.js", "").Body.String()
	if !strings.Contains(js, "api/v1/sweeps") {
		t.Error("app.js does not talk to the sweeps API")
	}
}

// The UI must work on an air-gapped cluster: nothing may point off-site.
func TestUIFetchesNothingExternal(t *testing.T) {
	sub, _ := fs.Sub(uiFiles, "ui")
	offsite := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(\s*['"]?(https?:|//)`)
	n := 0
	if err := fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, _ := fs.ReadFile(sub, name)
		if m := offsite.FindString(string(b)); m != "" {
			t.Errorf("%s references %q", name, m)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d embedded UI files", n)
	}
}

// Browser tests select these ids, and app.js looks every $("id") up in the
// page; a renamed element would otherwise fail only in a browser.
func TestUIElementIDs(t *testing.T) {
	h := serve(t, newFake())
	index := do(t, h, "GET", "/", "").Body.String()
	var js strings.Builder
	sub, _ := fs.Sub(uiFiles, "ui")
	if err := fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(name, ".js") {
			js.WriteString(do(t, h, "GET", "/"+name, "").Body.String())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range []string{"heatmap", "tooltip", "rail", "metric", "mode", "sweep", "start", "start-form", "suspects",
		"summary", "nodes", "legend", "error", "progress-text", "drill", "drill-body", "history", "diff"} {
		want[id] = true
	}
	for _, m := range regexp.MustCompile(`\$\("([\w-]+)"\)`).FindAllStringSubmatch(js.String(), -1) {
		want[m[1]] = true
	}
	for id := range want {
		if !strings.Contains(index, `id="`+id+`"`) {
			t.Errorf("index.html has no element with id %q", id)
		}
	}
}

// Reading keys from the api struct tags is what keeps decoding strict
// without a hand-kept list; prove it sees every field.
func TestSweepRequestFieldsCoverStruct(t *testing.T) {
	var req api.SweepRequest
	fields := sweepRequestFields(&req)
	if n := reflect.TypeOf(req).NumField(); len(fields) != n {
		t.Fatalf("found %d JSON fields, struct has %d", len(fields), n)
	}
	for _, f := range fields {
		if f.name == "" || strings.ContainsAny(f.name, ", ") {
			t.Errorf("bad field name %q", f.name)
		}
	}
}

// The UI is ES modules with no bundler: every import and every
// modulepreload must name an embedded file, or the page dies in the
// browser with nothing in the Go tests to say so.
func TestUIModuleGraph(t *testing.T) {
	h := serve(t, newFake())
	sub, _ := fs.Sub(uiFiles, "ui")
	imports := regexp.MustCompile(`(?m)^import [^;]*? from "(\.[^"]+)";`)
	seen := 0
	if err := fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(name, ".js") {
			return err
		}
		b, _ := fs.ReadFile(sub, name)
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			seen++
			target := path.Join(path.Dir(name), m[1])
			if rec := do(t, h, "GET", "/"+target, ""); rec.Code != 200 {
				t.Errorf("%s imports %s: GET /%s is %d", name, m[1], target, rec.Code)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("found only %d imports; has the module layout changed?", seen)
	}
	index := do(t, h, "GET", "/", "").Body.String()
	for _, m := range regexp.MustCompile(`<(?:script|link)[^>]+(?:src|href)="([^"]+\.js)"`).FindAllStringSubmatch(index, -1) {
		if rec := do(t, h, "GET", "/"+m[1], ""); rec.Code != 200 {
			t.Errorf("index.html loads %s: status %d", m[1], rec.Code)
		}
	}
}
