package coordinator

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestCannotDecode(t *testing.T) {
	reply := func(cause string) []byte {
		b, _ := json.Marshal(probe.ErrorReply{Error: &probe.Error{Class: probe.ClassInternal, Cause: cause}})
		return b
	}
	for _, c := range []struct {
		status int
		body   []byte
		want   bool
	}{
		{http.StatusBadRequest, reply("decode request: invalid character 'R' looking for beginning of value"), true},
		{http.StatusUnsupportedMediaType, nil, true},
		{http.StatusBadRequest, reply("task has no rails"), false},
		{http.StatusBadRequest, []byte("garbage"), false},
		{http.StatusOK, reply("decode request"), false},
	} {
		if got := cannotDecode(c.status, c.body); got != c.want {
			t.Errorf("%d %s: %v, want %v", c.status, c.body, got, c.want)
		}
	}
	var w wireForms
	if !w.binary("a:1") {
		t.Fatal("binary is the default")
	}
	w.jsonOnly("a:1")
	if w.binary("a:1") || !w.binary("b:1") {
		t.Fatal("JSON fallback must stick to that worker only")
	}
}
