package web

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// The behaviours a backend error may have; see the package doc. They are
// unexported because nobody implements them by name: any type with the
// method matches.
type (
	fieldError       interface{ Field() string }
	conflictError    interface{ Conflict() bool }
	unavailableError interface{ Unavailable() bool }
)

// errorStatus maps a StartSweep error to an HTTP status and, for 400, the
// request field it blames.
func errorStatus(err error) (status int, field string) {
	var fe fieldError
	if errors.As(err, &fe) {
		return http.StatusBadRequest, fe.Field()
	}
	var ce conflictError
	if errors.As(err, &ce) && ce.Conflict() {
		return http.StatusConflict, ""
	}
	var ue unavailableError
	if errors.As(err, &ue) && ue.Unavailable() {
		return http.StatusServiceUnavailable, ""
	}
	return http.StatusInternalServerError, ""
}

// requestError is a bad request found by web itself, before the backend. It
// has the same Field behaviour a backend error would, so both take one path.
type requestError struct {
	field string // "" when the body as a whole is wrong
	msg   string
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Field() string { return e.field }

func badField(field, msg string) *requestError { return &requestError{field: field, msg: msg} }

func abortError(c *gin.Context, status int, msg, field string) {
	c.AbortWithStatusJSON(status, api.Error{Error: msg, Field: field})
}
