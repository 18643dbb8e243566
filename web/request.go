package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// maxRequestBody bounds a POST body; a sweep request is a few hundred bytes
// even with a thousand node names listed.
const maxRequestBody = 1 << 20

type requestField struct {
	name string // JSON key
	ptr  any    // pointer into the request
}

// sweepRequestFields lists the request's JSON keys in struct order, read from
// the api struct tags so a field added there is accepted here without edits.
func sweepRequestFields(req *api.SweepRequest) []requestField {
	v := reflect.ValueOf(req).Elem()
	t := v.Type()
	var out []requestField
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, requestField{name: name, ptr: v.Field(i).Addr().Interface()})
	}
	return out
}

// decodeSweepRequest reads a POST /api/v1/sweeps body strictly. Keys must
// match exactly: encoding/json alone would ignore unknown keys and match
// "MODE" to mode, and a typo silently becoming a default is how a "quick"
// check turns into an hour-long sweep. Decoding key by key lets every type
// error name its field. An empty body means all defaults.
func decodeSweepRequest(r io.Reader) (api.SweepRequest, error) {
	var req api.SweepRequest
	dec := json.NewDecoder(r)
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return req, nil
		}
		return req, bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return req, err
		}
		return req, badField("", "malformed JSON: unexpected data after the request object")
	}

	fields := sweepRequestFields(&req)
	byName := make(map[string]any, len(fields))
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		byName[f.name] = f.ptr
		names = append(names, f.name)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same field first every time
	for _, k := range keys {
		ptr, ok := byName[k]
		if !ok {
			return req, badField(k, fmt.Sprintf("unknown field %q; known fields: %s", k, strings.Join(names, ", ")))
		}
		if err := json.Unmarshal(raw[k], ptr); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return req, badField(k, fmt.Sprintf("%s: want %s, got %s", k, te.Type, te.Value))
			}
			return req, badField(k, fmt.Sprintf("%s: %v", k, err))
		}
	}
	return req, validateSweepRequest(&req)
}

func bodyError(err error) error {
	var (
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &se):
		return badField("", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err))
	case errors.As(err, &te):
		return badField("", fmt.Sprintf("the body must be a JSON object, got %s", te.Value))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badField("", "malformed JSON: the body ends early")
	}
	return badField("", "malformed JSON: "+err.Error())
}

// validateSweepRequest checks only what web can judge without the
// coordinator's defaults and membership; range limits and unknown node names
// are the backend's to reject (with a Field error).
func validateSweepRequest(req *api.SweepRequest) error {
	switch req.Mode {
	case "", "quick", "full":
	default:
		return badField("mode", fmt.Sprintf("mode %q is not one of quick, full (or empty for the default)", req.Mode))
	}
	seen := map[string]bool{}
	for i, n := range req.Nodes {
		switch {
		case strings.TrimSpace(n) == "":
			return badField("nodes", fmt.Sprintf("nodes[%d] is empty", i))
		case seen[n]:
			return badField("nodes", fmt.Sprintf("nodes: %q is listed twice", n))
		}
		seen[n] = true
	}
	seenRail := map[int]bool{}
	for i, r := range req.Rails {
		switch {
		case r < 0:
			return badField("rails", fmt.Sprintf("rails[%d] must not be negative, got %d", i, r))
		case seenRail[r]:
			return badField("rails", fmt.Sprintf("rails: %d is listed twice", r))
		}
		seenRail[r] = true
	}
	for _, f := range sweepRequestFields(req) {
		if p, ok := f.ptr.(*int); ok && *p < 0 {
			return badField(f.name, fmt.Sprintf("%s must not be negative, got %d", f.name, *p))
		}
	}
	if req.PairTimeout != "" {
		d, err := time.ParseDuration(req.PairTimeout)
		switch {
		case err != nil:
			return badField("pair_timeout", fmt.Sprintf("pair_timeout %q is not a Go duration such as \"10s\"", req.PairTimeout))
		case d <= 0:
			return badField("pair_timeout", fmt.Sprintf("pair_timeout must be positive, got %s", req.PairTimeout))
		}
	}
	return nil
}
