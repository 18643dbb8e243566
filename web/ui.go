package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/gin-gonic/gin"
)

//go:embed ui
var uiFiles embed.FS

// The UI is served under a policy that forbids every origin but our own, so
// the promise "no external fetches" is enforced by the browser, not just kept
// by the code. No inline script or style either: app.js builds the DOM.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Go's mime table can be overridden by /etc/mime.types; pin the types the
// browser's strict MIME checking cares about.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".ico":  "image/x-icon",
}

type asset struct {
	body  []byte
	ctype string
	etag  string
}

// ui holds the embedded files, read once: they never change for the life of
// the binary, so ETags are computed here and a reload after an upgrade still
// fetches the new files.
type ui struct {
	assets map[string]asset
}

func newUI(title string) *ui {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic("web: embedded ui: " + err.Error())
	}
	u := &ui{assets: map[string]asset{}}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		if name == "index.html" {
			// Runtime settings go into the page once, here, rather than
			// through an extra config request the page must wait for.
			if body, err = renderIndex(body, title); err != nil {
				return err
			}
		}
		ext := path.Ext(name)
		ctype, ok := contentTypes[ext]
		if !ok {
			if ctype = mime.TypeByExtension(ext); ctype == "" {
				ctype = "application/octet-stream"
			}
		}
		sum := sha256.Sum256(body)
		u.assets[name] = asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("web: embedded ui: " + err.Error())
	}
	if _, ok := u.assets["index.html"]; !ok {
		panic("web: embedded ui has no index.html")
	}
	return u
}

func renderIndex(src []byte, title string) ([]byte, error) {
	t, err := template.New("index.html").Parse(string(src))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ Title string }{title}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// serve writes the named asset and reports whether it exists; it writes
// nothing when it does not, so the caller can answer 404 its own way.
func (u *ui) serve(c *gin.Context, name string) bool {
	if name == "" {
		name = "index.html"
	}
	a, ok := u.assets[name]
	if !ok {
		return false
	}
	h := c.Writer.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// ServeContent answers HEAD, Range and If-None-Match against our ETag.
	http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(a.body))
	return true
}
