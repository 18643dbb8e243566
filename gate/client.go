package gate

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

type client struct {
	base  string
	http  *http.Client
	token string
}

func (c client) get(ctx context.Context, path string, v any) error {
	return c.do(ctx, http.MethodGet, path, nil, v)
}

func (c client) post(ctx context.Context, path string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return usage(err)
	}
	return c.do(ctx, http.MethodPost, path, b, v)
}

// do calls the API and classifies every failure for the exit code:
// transport errors, timeouts and 5xx/408/409/429 are infrastructure (the
// same job may pass later), other 4xx are usage (the request or the URL is
// wrong and retrying will not help).
func (c client) do(ctx context.Context, method, path string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return usage(fmt.Errorf("--coordinator %q: %w", c.base, err))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return infra(fmt.Errorf("time budget exceeded waiting for %s %s: %w", method, path, err))
		}
		if tlsRefused(err) {
			return usage(fmt.Errorf("TLS with coordinator %s failed: %w (check --ca-file, --cert-file and --key-file against its tls.* settings)", c.base, err))
		}
		return infra(fmt.Errorf("coordinator %s unreachable: %w", c.base, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		err := statusError(method, path, resp.Status, resp.StatusCode, raw)
		var ge *Error
		if errors.As(err, &ge) {
			ge.Status = resp.StatusCode
		}
		return err
	}
	// A 1,024-node, 8-rail matrix is about 4.6 GB of JSON. json.Decoder
	// holds a value's whole text before decoding it, so a matrix decodes
	// itself cell by cell (matrix.ReadJSON) and only the decoded form is
	// held.
	answer := io.LimitReader(resp.Body, maxAnswer)
	if jr, ok := v.(interface{ ReadJSON(io.Reader) error }); ok {
		err = jr.ReadJSON(answer)
	} else {
		err = json.NewDecoder(answer).Decode(v)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return infra(fmt.Errorf("time budget exceeded reading %s %s: %w", method, path, err))
		}
		return infra(fmt.Errorf("%s %s: bad answer: %w", method, path, err))
	}
	return nil
}

// tlsRefused tells a TLS failure that retrying cannot fix (a certificate
// this side does not trust, or the coordinator refusing ours) from an
// unreachable coordinator.
func tlsRefused(err error) bool {
	var verify *tls.CertificateVerificationError
	var op *net.OpError
	return errors.As(err, &verify) || (errors.As(err, &op) && op.Op == "remote error")
}

// maxAnswer bounds what one answer may hold: twice the largest matrix we
// plan for (1,024 nodes x 8 rails), so a runaway server cannot fill memory.
const maxAnswer = 10 << 30

// defaultClient waits at most 30 s for a coordinator to start answering,
// but sets no limit on the whole exchange: reading a large matrix takes as
// long as it takes, within the gate's own time budget (Options.Timeout).
func defaultClient(tc *tls.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	t.TLSClientConfig = tc
	return &http.Client{Transport: t}
}

func statusError(method, path, status string, code int, raw []byte) error {
	msg := fmt.Sprintf("%s %s: %s", method, path, status)
	var ae api.Error
	if json.Unmarshal(raw, &ae) == nil && ae.Error != "" {
		msg += ": " + ae.Error
		if ae.Field != "" {
			msg += " (field " + ae.Field + ")"
		}
	}
	switch {
	case code == http.StatusServiceUnavailable:
		return infra(fmt.Errorf("%s (the coordinator cannot run a sweep now: too few workers, or not the leader)", msg))
	case code >= 500, code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooManyRequests:
		return infra(errors.New(msg))
	default:
		return usage(errors.New(msg))
	}
}
