// Package gate runs or fetches a sweep through the coordinator's API and turns
// the verdict into an exit code and files for CI (JSON, JUnit).
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Exit codes, documented in the README.
const (
	ExitHealthy   = 0
	ExitUnhealthy = 1
	ExitUsage     = 2 // usage, config or infrastructure error
)

// Options of one gate run.
type Options struct {
	Coordinator string // base URL, e.g. http://coordinator:8080
	Latest      bool   // judge the newest sweep instead of starting one
	Request     api.SweepRequest
	JSONFile    string
	JUnitFile   string
	Poll        time.Duration
	Timeout     time.Duration // whole run
	Client      *http.Client
}

// Run does the gate's work and returns its exit code; it writes the human
// summary to out and problems to errOut.
func Run(ctx context.Context, o Options, out, errOut io.Writer) int {
	if o.Coordinator == "" {
		fmt.Fprintln(errOut, "gate: --coordinator URL is required (e.g. http://coordinator:8080)")
		return ExitUsage
	}
	if !strings.HasPrefix(o.Coordinator, "http://") && !strings.HasPrefix(o.Coordinator, "https://") {
		fmt.Fprintf(errOut, "gate: --coordinator %q must start with http:// or https://\n", o.Coordinator)
		return ExitUsage
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 30 * time.Second}
	}
	c := client{base: strings.TrimRight(o.Coordinator, "/"), http: o.Client}
	m, info, err := judge(ctx, c, o, out)
	if err != nil {
		fmt.Fprintf(errOut, "gate: %v\n", err)
		return ExitUsage
	}
	if err := writeFiles(m, o); err != nil {
		fmt.Fprintf(errOut, "gate: %v\n", err)
		return ExitUsage
	}
	fmt.Fprintf(out, "sweep %s (%s, %d nodes, %d rounds)\n", info.ID, info.Mode, len(info.Nodes), info.Rounds)
	fmt.Fprint(out, m.Summary())
	if !m.Healthy {
		return ExitUnhealthy
	}
	return ExitHealthy
}

func judge(ctx context.Context, c client, o Options, out io.Writer) (*matrix.Matrix, api.SweepInfo, error) {
	var info api.SweepInfo
	if o.Latest {
		if err := c.get(ctx, "/api/v1/sweeps/latest", &info); err != nil {
			return nil, info, err
		}
	} else {
		if err := c.post(ctx, "/api/v1/sweeps", o.Request, &info); err != nil {
			return nil, info, err
		}
		fmt.Fprintf(out, "started sweep %s: %d nodes, %d rounds\n", info.ID, len(info.Nodes), info.Rounds)
	}
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	for info.State == api.SweepRunning {
		select {
		case <-ctx.Done():
			return nil, info, fmt.Errorf("sweep %s still running (round %d/%d) when the gate's time ran out", info.ID, info.RoundsDone, info.Rounds)
		case <-tick.C:
		}
		if err := c.get(ctx, "/api/v1/sweeps/"+info.ID, &info); err != nil {
			return nil, info, err
		}
	}
	if info.State != api.SweepDone {
		return nil, info, fmt.Errorf("sweep %s ended %s: %s", info.ID, info.State, info.Error)
	}
	var m matrix.Matrix
	if err := c.get(ctx, "/api/v1/sweeps/"+info.ID+"/matrix", &m); err != nil {
		return nil, info, err
	}
	return &m, info, nil
}

func writeFiles(m *matrix.Matrix, o Options) error {
	if o.JSONFile != "" {
		if err := writeFile(o.JSONFile, m.WriteJSON); err != nil {
			return err
		}
	}
	if o.JUnitFile != "" {
		if err := writeFile(o.JUnitFile, m.WriteJUnit); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes through a temp file and renames it, so a CI job never
// reads half a report.
func writeFile(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

type client struct {
	base string
	http *http.Client
}

func (c client) get(ctx context.Context, path string, v any) error {
	return c.do(ctx, http.MethodGet, path, nil, v)
}

func (c client) post(ctx context.Context, path string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, b, v)
}

func (c client) do(ctx context.Context, method, path string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("coordinator %s unreachable: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var ae api.Error
		if json.Unmarshal(raw, &ae) == nil && ae.Error != "" {
			if ae.Field != "" {
				return fmt.Errorf("%s %s: %s (field %s)", method, path, ae.Error, ae.Field)
			}
			return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, ae.Error)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s %s: bad answer: %w", method, path, err)
	}
	return nil
}
