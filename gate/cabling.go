package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// Cabling modes of the gate (--cabling): a mismatch fails the gate with
// ExitCabling, is printed as a warning, or the check is skipped.
const (
	CablingFail = "fail"
	CablingWarn = "warn"
	CablingOff  = "off"
)

// cablingAnswer is GET /api/v1/cabling's JSON (web.CablingAnswer).
type cablingAnswer struct {
	cabling.Report
	Source api.CablingSource `json:"source"`
}

// getCabling fetches the cabling report with sweep's traced paths as
// evidence ("" the newest sweep's).
func getCabling(ctx context.Context, c client, sweep string) (*cablingAnswer, error) {
	var a cablingAnswer
	if err := c.get(ctx, cablingPath(sweep), &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// cablingPath is the report's path, with sweep's traced paths ("" the
// newest sweep's).
func cablingPath(sweep string) string {
	if sweep == "" {
		return "/api/v1/cabling"
	}
	return "/api/v1/cabling?sweep=" + url.QueryEscape(sweep)
}

// askCabling is getCabling, or with switches' tables given, POST
// /api/v1/cabling's report judged with them.
func askCabling(ctx context.Context, c client, sweep string, switches []cabling.SwitchPort) (*cablingAnswer, error) {
	if len(switches) == 0 {
		return getCabling(ctx, c, sweep)
	}
	var a cablingAnswer
	body := struct {
		Switches []cabling.SwitchPort `json:"switches"`
	}{switches}
	if err := c.post(ctx, cablingPath(sweep), body, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// mismatches counts the ports whose verdict is neither ok nor, unless
// strict, no-evidence: a port nobody could see is not known to be wrong.
func (a *cablingAnswer) mismatches(strict bool) int {
	n := 0
	for v, k := range a.Counts {
		if v != cabling.OK && (strict || v != cabling.NoEvidence) {
			n += k
		}
	}
	return n
}

// writeSection prints the summary, where the evidence came from and the
// first few findings that are not mere lack of evidence.
func (a *cablingAnswer) writeSection(out io.Writer, most int) {
	fmt.Fprintln(out, a.Summary())
	s := a.Source
	from := fmt.Sprintf("  evidence: %d workers, %d ports with an LLDP neighbour", s.Workers, s.Neighbors)
	if s.Sweep != "" {
		from += fmt.Sprintf(", %d paths traced by sweep %s", s.Paths, s.Sweep)
	}
	fmt.Fprintln(out, from)
	shown := 0
	for _, f := range a.Findings() {
		if f.Verdict == cabling.NoEvidence {
			continue
		}
		if shown == most {
			fmt.Fprintf(out, "  ... %d more (--cabling-csv writes them all)\n", a.mismatches(false)-most)
			break
		}
		fmt.Fprintf(out, "  %s %s: %s\n", f.Verdict, f.End, describe(f))
		shown++
	}
	if n := a.Counts[cabling.NoEvidence]; n > 0 {
		fmt.Fprintf(out, "  %d ports without evidence do not fail the gate (no LLDP neighbour and no traced path through them)\n", n)
	}
}

// describe is a finding in one line: what was expected and found, and
// what to do.
func describe(f cabling.Finding) string {
	var parts []string
	if f.Expected != "" {
		parts = append(parts, "expected "+f.Expected)
	}
	if f.Found != "" {
		found := "found " + f.Found
		if f.With != "" {
			found += " (with " + f.With + ")"
		}
		parts = append(parts, found)
	}
	if f.Action != "" {
		parts = append(parts, f.Action)
	}
	return strings.Join(parts, "; ")
}

// cablingCheck runs the gate's cabling section after sweep (ok: the
// sweep's verdict stands) and returns the exit code it calls for.
func cablingCheck(ctx context.Context, c client, o Options, sweep string, out io.Writer) (int, error) {
	if o.Cabling == CablingOff {
		return ExitHealthy, nil
	}
	a, err := getCabling(ctx, c, sweep)
	if err != nil {
		if o.CablingCSV != "" {
			return 0, fmt.Errorf("--cabling-csv: %w", err)
		}
		fmt.Fprintf(out, "cabling: not judged (%v)\n", err)
		return ExitHealthy, nil
	}
	if o.CablingCSV != "" {
		if err := writeFile(o.CablingCSV, a.WriteCSV); err != nil {
			return 0, infra(fmt.Errorf("--cabling-csv: %w", err))
		}
	}
	a.writeSection(out, 5)
	if n := a.mismatches(false); n > 0 {
		if o.Cabling == CablingWarn {
			fmt.Fprintf(out, "warning: %d ports are not cabled as planned (--cabling=warn: the gate does not fail on them)\n", n)
			return ExitHealthy, nil
		}
		return ExitCabling, nil
	}
	return ExitHealthy, nil
}

// withCabling is the gate's exit code from the sweep's and the cabling
// check's: a fault, a usage error or a fabric that could not be judged
// stands; a miscabled port outranks a slow one, which it may explain.
func withCabling(sweep, cab int) int {
	if cab == ExitCabling && (sweep == ExitHealthy || sweep == ExitPerformance) {
		return ExitCabling
	}
	return sweep
}

// checkCablingMode refuses a --cabling other than fail, warn or off.
func checkCablingMode(mode, csv string) error {
	switch mode {
	case "", CablingFail, CablingWarn:
	case CablingOff:
		if csv != "" {
			return fmt.Errorf("--cabling-csv %s needs the cabling check: drop --cabling=off", csv)
		}
	default:
		return fmt.Errorf("--cabling %q: want fail (a mismatch fails the gate, exit %d), warn or off", mode, ExitCabling)
	}
	return nil
}

// writeAnswerJSON writes the answer as the API gave it.
func (a *cablingAnswer) writeAnswerJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}
