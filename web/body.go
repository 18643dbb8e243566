package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// minGzip is below one Ethernet frame's payload: smaller answers gain nothing
// from compression.
const minGzip = 1400

// sendBody answers 200 with body, or 304 when the client already holds it.
// The UI polls the node and sweep lists every second, megabytes of JSON at
// 1,024 nodes; the ETag makes an unchanged poll cost one hash, and gzip
// shrinks a changed one several times over. Matrix exports, too big to
// hold, go through sendStream.
func sendBody(c *gin.Context, ctype string, body []byte) {
	sum := sha256.Sum256(body)
	if notModified(c, sum[:]) {
		return
	}
	h := c.Writer.Header()
	if len(body) >= minGzip && acceptsGzip(c.GetHeader("Accept-Encoding")) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // level is valid
		_, err := zw.Write(body)
		if err == nil {
			err = zw.Close()
		}
		if err == nil { // bytes.Buffer cannot fail; stay correct if it ever does
			h.Set("Content-Encoding", "gzip")
			body = buf.Bytes()
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, ctype, body)
}

// notModified sets the ETag (from the body's SHA-256) and Vary headers, and
// answers 304 when the client already holds that body.
func notModified(c *gin.Context, sha []byte) bool {
	etag := `"` + hex.EncodeToString(sha[:12]) + `"`
	h := c.Writer.Header()
	h.Set("ETag", etag)
	h.Add("Vary", "Accept-Encoding")
	if etagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return true
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reads Accept-Encoding enough to honour an explicit "gzip;q=0".
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}
