// Package gate runs or fetches a sweep through the coordinator's API, or
// reads the always-on mesh's live window (--live, live.go), and turns
// the verdict into an exit code and files for CI and job launchers: JSON,
// JUnit, CSV, a Slurm exclude list, a hostfile, an NCCL env file and a diff
// against an earlier sweep.
package gate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Exit codes, documented in the README. A Slurm prolog or a Kubernetes Job
// tells "the fabric is broken" (1: drain or exclude nodes) from "it is
// slower than it should be" (4: a confident performance suspect, nothing
// failed), "we could not tell" (3: retry later, page the operator) and "we
// were called wrong" (2: fix the job script).
const (
	ExitHealthy     = 0
	ExitUnhealthy   = 1 // a fabric fault: cells failed outright
	ExitUsage       = 2 // bad flags or config, a request the coordinator refused (400)
	ExitInfra       = 3 // coordinator unreachable, not enough workers (503), budget exceeded, sweep failed, cells left untested
	ExitPerformance = 4 // no cell failed, but a confident suspect is slow or narrow beyond its rail's noise
	ExitCabling     = 5 // no cell failed, but a port is not cabled as planned (--cabling=warn: 0)
)

// ExitFor is the exit code of a judged matrix (matrix.Outcome).
func ExitFor(m *matrix.Matrix) int {
	switch m.Outcome() {
	case matrix.OutcomeFault:
		return ExitUnhealthy
	case matrix.OutcomePerformance:
		return ExitPerformance
	case matrix.OutcomeUntested:
		return ExitInfra
	}
	return ExitHealthy
}

// Options of one gate run. cmd/rdmamesh maps flags onto it.
type Options struct {
	Coordinator string // base URL, e.g. http://coordinator:8080
	Latest      bool   // judge the newest sweep instead of starting one
	// Live judges the always-on mesh's live window instead of a sweep
	// (live.go); LiveMaxAge is how old that window may be, 0 meaning three
	// of its windows.
	Live       bool
	LiveMaxAge time.Duration
	Request    api.SweepRequest
	Poll       time.Duration
	Timeout    time.Duration // whole run: the gate's time budget
	Client     *http.Client
	Token      string // bearer token for the coordinator API (auth.token)
	// TLS verifies an https coordinator (and presents a client certificate
	// to one that requires it); nil = the system roots. Ignored with Client.
	TLS *tls.Config

	// Output files; "" skips one. Each is written whole or not at all.
	JSONFile    string
	JUnitFile   string
	CSVFile     string
	ExcludeFile string // Slurm hostlist of nodes to exclude; empty file when none
	HostFile    string // usable nodes, one per line
	HostSlots   int    // > 0: "node slots=N" lines in HostFile
	NCCLEnvFile string // KEY=value lines for the usable nodes
	// CablesFile is the cable, link and switch suspects as CSV for a
	// technician (matrix.WriteCables); header only without a topology.
	CablesFile string
	// BaselineFile receives the sweep's ok cells as a baseline that later
	// sweeps can be compared with (coordinator.baseline_file).
	BaselineFile string
	// Exclude decides which suspects take nodes out (ExcludeFile, HostFile,
	// NCCLEnvFile); the zero value is the recommended policy.
	Exclude matrix.ExcludeOptions
	// NCCL tunes NCCLEnvFile (socket interface); its Exclude is ignored in
	// favour of Exclude above, so all files agree on the usable nodes.
	NCCL matrix.NCCLOptions

	// Cabling is what a cabling mismatch does after the sweep:
	// CablingFail ("" too) exits ExitCabling, CablingWarn prints a
	// warning, CablingOff skips the check. Ports without evidence never
	// fail it. CablingCSV receives the technician's list of findings.
	Cabling    string
	CablingCSV string

	// DiffAgainst is an earlier matrix JSON (e.g. a previous --json file):
	// the summary then says what got worse or better. DiffJSONFile, if set,
	// receives the full diff report.
	DiffAgainst  string
	DiffJSONFile string

	// TTY: progress as one updating bar (the caller checks the terminal);
	// otherwise plain lines every ProgressEvery (default 5s).
	TTY           bool
	ProgressEvery time.Duration
	Now           func() time.Time // progress clock; nil = time.Now
}

// Run does the gate's work and returns its exit code; it writes progress and
// the human summary to out and problems to errOut.
func Run(ctx context.Context, o Options, out, errOut io.Writer) int {
	if err := o.check(); err != nil {
		return report(errOut, err)
	}
	var old *matrix.Matrix
	if o.DiffAgainst != "" {
		// Read before the sweep: a typo must not cost a ten-minute sweep.
		var err error
		if old, err = readMatrix(o.DiffAgainst); err != nil {
			return report(errOut, usage(err))
		}
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	ctx, c, cancel := connect(ctx, o.Coordinator, o.Token, o.Client, o.TLS, o.Timeout)
	defer cancel()
	var (
		m             *matrix.Matrix
		header, sweep string
		links         []api.LiveLink
		err           error
	)
	if o.Live {
		m, header, links, err = judgeLive(ctx, c, o, out)
	} else {
		m, header, sweep, err = judge(ctx, c, o, out)
	}
	if err != nil {
		return report(errOut, err)
	}
	var diff *matrix.DiffReport
	if old != nil {
		d := matrix.Diff(old, m)
		diff = &d
	}
	if err := writeFiles(m, diff, o); err != nil {
		return report(errOut, err)
	}
	fmt.Fprintln(out, header)
	fmt.Fprint(out, m.Summary())
	if diff != nil {
		fmt.Fprintf(out, "compared with %s:\n%s", o.DiffAgainst, diff.Text())
	}
	if o.Live {
		return withLiveLinks(ExitFor(m), links) // cabling is judged after sweeps: the live mesh traces no path
	}
	cab, err := cablingCheck(ctx, c, o, sweep, out)
	if err != nil {
		return report(errOut, err)
	}
	return withCabling(ExitFor(m), cab)
}

// check refuses options no coordinator could fix, before any network use.
func (o Options) check() error {
	if err := checkCoordinator(o.Coordinator, o.TLS); err != nil {
		return err
	}
	if err := checkCablingMode(o.Cabling, o.CablingCSV); err != nil {
		return usage(err)
	}
	switch {
	case o.HostSlots < 0:
		return usage(fmt.Errorf("host slots %d: want 0 (names only) or more", o.HostSlots))
	case o.DiffJSONFile != "" && o.DiffAgainst == "":
		return usage(errors.New("a diff JSON file needs --diff-against (the earlier matrix to compare with)"))
	case o.LiveMaxAge < 0:
		return usage(fmt.Errorf("--live-max-age %s: want a positive duration, or 0 for three live windows", o.LiveMaxAge))
	case o.LiveMaxAge > 0 && !o.Live:
		return usage(errors.New("--live-max-age needs --live"))
	}
	if err := o.checkLive(); err != nil {
		return usage(err)
	}
	for _, f := range append(o.outputs(), output{flag: "--cabling-csv", path: o.CablingCSV}) {
		if f.path == "" {
			continue
		}
		if err := checkDir(f.path); err != nil {
			return usage(fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	return nil
}

// connect is the API client of a run and its context, bounded by
// timeout when it is positive.
func connect(ctx context.Context, base, token string, hc *http.Client, tc *tls.Config, timeout time.Duration) (context.Context, client, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	if hc == nil {
		hc = defaultClient(tc)
	}
	return ctx, client{base: strings.TrimRight(base, "/"), http: hc, token: token}, cancel
}

// checkCoordinator refuses a coordinator URL no request could reach.
func checkCoordinator(base string, tc *tls.Config) error {
	switch {
	case base == "":
		return usage(errors.New("--coordinator URL is required (e.g. http://coordinator:8080)"))
	case !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://"):
		return usage(fmt.Errorf("--coordinator %q must start with http:// or https://", base))
	case tc != nil && strings.HasPrefix(base, "http://"):
		return usage(fmt.Errorf("--coordinator %q: TLS files are given, so use https://", base))
	}
	return nil
}

// Error carries the exit code an error maps to.
type Error struct {
	Code int
	Err  error
	// Status is the HTTP status of the answer that caused it; 0 when
	// there was none.
	Status int
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usage(err error) error { return &Error{Code: ExitUsage, Err: err} }
func infra(err error) error { return &Error{Code: ExitInfra, Err: err} }

// report prints err and returns its exit code; an unclassified error is an
// infrastructure problem, since usage errors are all caught by name.
func report(errOut io.Writer, err error) int {
	fmt.Fprintf(errOut, "gate: %v\n", err)
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return ExitInfra
}

// judge runs or finds the sweep and returns its matrix, the summary's
// first line and the sweep's id.
func judge(ctx context.Context, c client, o Options, out io.Writer) (*matrix.Matrix, string, string, error) {
	m, info, err := judgeSweep(ctx, c, o, out)
	if err == nil && info.Spec != nil && (info.Spec.Pattern == "links" || info.Spec.Pattern == "fabric") {
		printCoverage(ctx, c, info.ID, out)
	}
	return m, fmt.Sprintf("sweep %s (%s, %d nodes, %d rounds)", info.ID, info.Mode, len(info.Nodes), info.Rounds), info.ID, err
}

// printCoverage says how a link sweep's tests covered the fabric's switch
// links, rail by rail, and names the link directions left short. It
// judges nothing: a coordinator that cannot say is only noted.
func printCoverage(ctx context.Context, c client, id string, out io.Writer) {
	var cov api.Coverage
	if err := c.get(ctx, "/api/v1/sweeps/"+id+"/coverage", &cov); err != nil {
		fmt.Fprintf(out, "link coverage: not known (%v)\n", err)
		return
	}
	fmt.Fprintf(out, "link coverage (paths: %d traced, %d modelled, %d unknown):\n", cov.Traced, cov.Modelled, cov.Unknown)
	for _, p := range cov.Planes {
		fmt.Fprintf(out, "  rail %d: %d of %d link directions crossed by 2 tests with other partners; %d tests, %d-%d a direction\n",
			p.Rail, p.Covered, p.Links, p.Tests, p.MinTests, p.MaxTests)
		for _, u := range p.Uncovered {
			fmt.Fprintf(out, "    short: %s (%d tests): %s\n", u.Link, u.Tests, u.Why)
		}
	}
}

func judgeSweep(ctx context.Context, c client, o Options, out io.Writer) (*matrix.Matrix, api.SweepInfo, error) {
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
	prog := newProgress(out, o)
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	for info.State == api.SweepRunning {
		prog.update(info)
		select {
		case <-ctx.Done():
			prog.finish()
			why := "time budget exceeded"
			if errors.Is(ctx.Err(), context.Canceled) {
				why = "interrupted"
			}
			return nil, info, infra(fmt.Errorf("%s: sweep %s still running (round %d/%d)", why, info.ID, info.RoundsDone, info.Rounds))
		case <-tick.C:
		}
		if err := c.get(ctx, "/api/v1/sweeps/"+info.ID, &info); err != nil {
			prog.finish()
			return nil, info, err
		}
	}
	prog.update(info)
	prog.finish()
	if info.State != api.SweepDone {
		return nil, info, infra(fmt.Errorf("sweep %s ended %s: %s", info.ID, info.State, info.Error))
	}
	m, err := getMatrix(ctx, c, o, info.ID)
	return m, info, err
}

func getMatrix(ctx context.Context, c client, o Options, id string) (*matrix.Matrix, error) {
	path := "/api/v1/sweeps/" + id + "/matrix"
	var m matrix.Matrix
	if !o.needsAllCells() {
		// The whole matrix is 4.3 GB of JSON at 1,024 x 8, its bad cells
		// alone 8 GB at 4,096 x 8 with a rail down on every node; the
		// outputs asked for read neither.
		err := c.get(ctx, path+"?cells=summary", &m)
		if err == nil {
			return &m, nil
		}
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusBadRequest {
			return nil, err
		}
		// A coordinator older than cells=summary refuses it: its bad
		// cells are still right.
		m = matrix.Matrix{}
		path += "?cells=bad"
	}
	if err := c.get(ctx, path, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
