package web

import (
	"compress/gzip"
	"crypto/sha256"
	"hash"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
)

// sendStream is sendBody for an answer too big to hold: the matrix export
// of a 1,024-node, 8-rail sweep is 4.3 GB of JSON, which a buffer, its
// gzipped copy and the encoder's own buffers had multiplied several times.
// write runs twice and must give the same bytes both times: the first pass
// only hashes them, for the ETag, and meets any encoding error before a
// byte is sent, so a failing exporter still gets a JSON error rather than a
// truncated 200; the second streams them, gzipped when the client takes it.
// It returns the first pass's error. A failure in the second can only be
// the client going away; it is dropped, and the client sees a cut body
// (short of Content-Length, or a gzip stream without its end).
func sendStream(c *gin.Context, ctype string, write func(io.Writer) error) error {
	sum := &countingHash{h: sha256.New()}
	if err := write(sum); err != nil {
		return err
	}
	if notModified(c, sum.h.Sum(nil)) {
		return nil
	}
	h := c.Writer.Header()
	h.Set("Content-Type", ctype)
	if sum.n < minGzip || !acceptsGzip(c.GetHeader("Accept-Encoding")) {
		h.Set("Content-Length", strconv.FormatInt(sum.n, 10))
		c.Status(http.StatusOK)
		_ = write(c.Writer)
		return nil
	}
	h.Set("Content-Encoding", "gzip")
	c.Status(http.StatusOK)
	zw, _ := gzip.NewWriterLevel(c.Writer, gzip.BestSpeed) // level is valid
	if write(zw) == nil {
		_ = zw.Close()
	}
	return nil
}

// countingHash hashes what is written and counts it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (w *countingHash) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}
