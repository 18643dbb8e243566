package coordinator

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// wireForms remembers the workers that answered a binary task with 400
// (built before probe.BinaryType): they get JSON from then on. Everyone
// else gets the binary form, which at a million tasks per 1,024-node sweep
// saves the leader most of its CPU.
type wireForms struct{ json sync.Map } // API address → struct{}

func (w *wireForms) binary(apiAddr string) bool {
	_, old := w.json.Load(apiAddr)
	return !old
}

func (w *wireForms) jsonOnly(apiAddr string) { w.json.Store(apiAddr, struct{}{}) }

func decodeTaskResult(ctype string, raw []byte) (probe.TaskResult, error) {
	if ctype == probe.BinaryType {
		return probe.DecodeTaskResult(raw)
	}
	var res probe.TaskResult
	err := json.Unmarshal(raw, &res)
	return res, err
}

// cannotDecode recognises a worker's refusal to parse the body at all, as
// opposed to a task it parsed and rejected.
func cannotDecode(status int, raw []byte) bool {
	if status == http.StatusUnsupportedMediaType {
		return true
	}
	var er probe.ErrorReply
	return status == http.StatusBadRequest && json.Unmarshal(raw, &er) == nil && er.Error != nil &&
		strings.HasPrefix(er.Error.Cause, "decode request")
}

// railResult finds a rail's answer; a task has a handful of rails, so a
// scan beats building a map per task.
func railResult(rs []probe.RailResult, rail int) (probe.RailResult, bool) {
	for i := range rs {
		if rs[i].Rail == rail {
			return rs[i], true
		}
	}
	return probe.RailResult{}, false
}

// roundTrip sends a task straight through the transport: a task never
// redirects and carries its own deadline, and http.Client's per-request
// header copying and bookkeeping were a visible share of the leader's CPU
// at a million tasks per sweep.
func (c *Coordinator) roundTrip(req *http.Request) (*http.Response, error) {
	return c.client.Transport.RoundTrip(req)
}
