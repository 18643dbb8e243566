package worker

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The hot-path messages (tasks, session batches) also come in the compact
// binary form of probe.BinaryType; JSON stays what every endpoint takes.

func isBinary(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == probe.BinaryType
}

func acceptsBinary(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), probe.BinaryType)
}

func readBinary(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	if len(b) > maxBody {
		return nil, errors.New("request body too large")
	}
	return b, nil
}

func decodeTask(r *http.Request) (probe.Task, error) {
	if !isBinary(r) {
		var t probe.Task
		return t, decode(r, &t)
	}
	b, err := readBinary(r)
	if err != nil {
		return probe.Task{}, err
	}
	t, err := probe.DecodeTask(b)
	if err != nil {
		return t, fmt.Errorf("decode request: %w", err)
	}
	return t, nil
}

func decodeSessionBatch(r *http.Request) (probe.SessionBatchRequest, error) {
	if !isBinary(r) {
		var req probe.SessionBatchRequest
		return req, decode(r, &req)
	}
	b, err := readBinary(r)
	if err != nil {
		return probe.SessionBatchRequest{}, err
	}
	req, err := probe.DecodeSessionBatch(b)
	if err != nil {
		return req, fmt.Errorf("decode request: %w", err)
	}
	return req, nil
}

// reply answers 200 in binary when the caller asked for it, else in JSON.
func reply(w http.ResponseWriter, r *http.Request, v any, binary func([]byte) []byte) {
	if !acceptsBinary(r) {
		writeJSON(w, http.StatusOK, v)
		return
	}
	w.Header().Set("Content-Type", probe.BinaryType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(binary(nil))
}
