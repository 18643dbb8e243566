package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// client speaks the coordinator's /api/v1 with the bearer token. Every call
// has its own short timeout: a paused or cut-off coordinator must not hang
// a scenario.
type client struct {
	token   string
	secrets [][]byte // must never come back in an answer
	http    *http.Client
	stream  *http.Client // matrixEach: no overall timeout, its context bounds it

	mu    sync.Mutex
	leaks []string // paths whose answer held a secret
}

func newClient(token string, secrets ...string) *client {
	c := &client{token: token, http: &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}},
		stream: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}}
	for _, s := range append(secrets, token) {
		c.secrets = append(c.secrets, []byte(s))
	}
	return c
}

// leaked lists the API paths whose answers contained a secret.
func (c *client) leaked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.leaks)
}

// httpError is a non-2xx answer; code lets scenarios tell a refusal (4xx,
// 503) from a transport failure.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.msg) }

func (c *client) do(ctx context.Context, method, addr, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	for _, s := range c.secrets {
		if bytes.Contains(raw, s) {
			c.mu.Lock()
			c.leaks = append(c.leaks, method+" "+path)
			c.mu.Unlock()
		}
	}
	if resp.StatusCode/100 != 2 {
		var e api.Error
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = string(bytes.TrimSpace(raw))
		}
		return &httpError{code: resp.StatusCode, msg: e.Error}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func (c *client) status(ctx context.Context, addr string) (api.Status, error) {
	var s api.Status
	return s, c.do(ctx, http.MethodGet, addr, "/api/v1/status", nil, &s)
}

func (c *client) nodes(ctx context.Context, addr string) ([]api.NodeInfo, error) {
	var n []api.NodeInfo
	return n, c.do(ctx, http.MethodGet, addr, "/api/v1/nodes", nil, &n)
}

func (c *client) sweeps(ctx context.Context, addr string) ([]api.SweepInfo, error) {
	var s []api.SweepInfo
	return s, c.do(ctx, http.MethodGet, addr, "/api/v1/sweeps", nil, &s)
}

func (c *client) sweep(ctx context.Context, addr, id string) (api.SweepInfo, error) {
	var s api.SweepInfo
	return s, c.do(ctx, http.MethodGet, addr, "/api/v1/sweeps/"+id, nil, &s)
}

func (c *client) start(ctx context.Context, addr string, req api.SweepRequest) (api.SweepInfo, error) {
	var s api.SweepInfo
	return s, c.do(ctx, http.MethodPost, addr, "/api/v1/sweeps", req, &s)
}

// matrixCell is the part of a matrix cell the checks read. A local shape
// keeps the driver independent of the analysis fields around it.
type matrixCell struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Rail    int    `json:"rail"`
	Round   int    `json:"round"`
	Class   string `json:"class"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Latency *struct {
		Samples int `json:"samples"`
	} `json:"latency"`
}

type matrixView struct {
	Cells []matrixCell `json:"cells"`
}

func (c *client) matrix(ctx context.Context, addr, id string) (matrixView, error) {
	var m matrixView
	return m, c.do(ctx, http.MethodGet, addr, "/api/v1/sweeps/"+id+"/matrix", nil, &m)
}

// matrixEach streams sweep id's matrix from addr and hands every cell to fn
// as it is decoded: a 256-node matrix is 270 MB of JSON, more than do
// reads, and holding it whole would be most of this process's memory.
func (c *client) matrixEach(ctx context.Context, addr, id string, timeout time.Duration, fn func(*matrixCell)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/sweeps/"+id+"/matrix", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.stream.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &httpError{code: resp.StatusCode, msg: string(bytes.TrimSpace(raw))}
	}
	dec := json.NewDecoder(resp.Body)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if key, _ := tok.(string); key != "cells" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			var cell matrixCell
			if err := dec.Decode(&cell); err != nil {
				return fmt.Errorf("matrix cell: %w", err)
			}
			fn(&cell)
		}
		if err := expectDelim(dec, ']'); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("matrix JSON: %w", err)
	}
	if tok != d {
		return fmt.Errorf("matrix JSON: got %v, want %v", tok, d)
	}
	return nil
}
