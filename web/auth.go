package web

import (
	"crypto/subtle"
	"net/http"

	"github.com/gin-gonic/gin"
)

// auth enforces the bearer token: writes always need it, reads only when
// they are not opened by config. The token never appears in any answer or log.
func (s *Server) auth(c *gin.Context) {
	if s.opts.Token == "" {
		c.Next()
		return
	}
	read := c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead
	if read && s.opts.OpenReads {
		c.Next()
		return
	}
	got := []byte(c.GetHeader("Authorization"))
	if subtle.ConstantTimeCompare(got, []byte("Bearer "+s.opts.Token)) == 1 {
		c.Next()
		return
	}
	c.Header("WWW-Authenticate", `Bearer realm="rdmamesh"`)
	abortError(c, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer <auth.token>", "")
}
