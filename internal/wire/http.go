package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// ContentType is the Content-Type of every wire message over HTTP: the
// worker API's tasks and probe sessions, requests and answers alike.
const ContentType = "application/x-rdmamesh"

// IsMessage reports whether a request carries a wire message.
func IsMessage(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == ContentType
}

// ReadBody reads all of r, refusing more than max bytes.
func ReadBody(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	if len(b) > max {
		return nil, errors.New("request body too large")
	}
	return b, nil
}

// ReadBuf is ReadBody into a pooled Buf the caller puts back, for the
// half a million tasks and answers of a 1,024-node sweep. length is the
// body's declared length (-1: unknown); a known one within max is read
// exactly, without a limiting reader.
func ReadBuf(r io.Reader, length int64, max int) (*Buf, error) {
	b := GetBuf()
	var err error
	if length >= 0 && length <= int64(max) {
		b.B = slices.Grow(b.B, int(length))[:length]
		_, err = io.ReadFull(r, b.B)
	} else {
		buf := bytes.NewBuffer(b.B)
		_, err = buf.ReadFrom(io.LimitReader(r, int64(max)+1))
		b.B = buf.Bytes()
		if err == nil && len(b.B) > max {
			err = errors.New("body too large")
		}
	}
	if err != nil {
		b.Put()
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}

// Write answers code with the encoded message b.
func Write(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// WriteError answers code with e.
func WriteError(w http.ResponseWriter, code int, e *probe.Error) {
	Write(w, code, ErrorMsg.Append(nil, e))
}

// DecodeError reads the classified error of a non-2xx answer; false when
// the answer is not one (a proxy's page, a plain-text 404).
func DecodeError(ctype string, body []byte) (*probe.Error, bool) {
	if mt, _, _ := mime.ParseMediaType(ctype); mt != ContentType {
		return nil, false
	}
	e, err := ErrorMsg.Decode(body)
	if err != nil || e.Class == "" {
		return nil, false
	}
	return &e, true
}

// Refuse answers a failed request: with an ErrorMsg when the request was a
// wire message, else with JSON ({"error": {...}}), since whoever sent
// something else (a person with curl, a proxy's health check) reads text.
func Refuse(w http.ResponseWriter, r *http.Request, code int, e *probe.Error) {
	if IsMessage(r) {
		WriteError(w, code, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(struct {
		Error *probe.Error `json:"error"`
	}{e})
}
