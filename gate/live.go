package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// defaultLiveMaxAge is how many live windows old the newest may be before
// the gate calls the live view stale: one late collection is normal, three
// missed windows mean the workers or the coordinator stopped folding.
const defaultLiveMaxAge = 3

// checkLive refuses flag mixes that --live cannot honour.
func (o Options) checkLive() error {
	if !o.Live {
		return nil
	}
	switch {
	case o.Latest:
		return errors.New("--live and --latest both pick what to judge: give one")
	case !reflect.ValueOf(o.Request).IsZero():
		return errors.New("--live judges the live window and starts no sweep: drop the sweep flags " +
			"(--mode, --spec, --nodes, --hosts, --labels, --pattern, --batch-size, --root, --rail-mode, --rails, --budget, --retests, --profile, --connect)")
	case o.CablingCSV != "":
		return errors.New("--cabling-csv needs a sweep: the gate judges cabling after sweeps (or run rdmamesh cabling --csv)")
	case o.BaselineFile != "":
		return errors.New("--save-baseline needs a sweep: live probes measure no bandwidth, and their latency is a probe's round trip, not a sweep's")
	}
	return nil
}

// judgeLive judges the always-on mesh's newest window: it refuses (exit 3)
// when live probing is off or the window is stale, since a stale live view
// would pass a fabric nobody has looked at lately.
func judgeLive(ctx context.Context, c client, o Options, _ io.Writer) (*matrix.Matrix, string, []api.LiveLink, error) {
	var info api.LiveInfo
	if err := c.get(ctx, "/api/v1/live", &info); err != nil {
		return nil, "", nil, liveUnavailable(err)
	}
	if !info.Enabled {
		return nil, "", nil, infra(fmt.Errorf("the coordinator's live mesh is off%s: run a sweep instead (gate without --live)", because(info.Error)))
	}
	maxAge := o.LiveMaxAge
	if maxAge == 0 {
		if info.WindowSeconds <= 0 {
			return nil, "", nil, infra(errors.New("the coordinator reports no live window length: give --live-max-age"))
		}
		maxAge = seconds(defaultLiveMaxAge * info.WindowSeconds)
	}
	if age := seconds(info.AgeSeconds); age > maxAge {
		return nil, "", nil, infra(fmt.Errorf("the live view is stale: window %d ended %s ago, more than --live-max-age %s "+
			"(%d of %d nodes probing); check the workers' live probing, or run a sweep instead", info.Window,
			age.Round(time.Second), maxAge, info.Probing, info.Members))
	}
	m, err := getMatrix(ctx, c, o, api.LiveID)
	if err != nil {
		return nil, "", nil, liveUnavailable(err)
	}
	// Counts stay the whole matrix's when only the bad cells are sent.
	tested := 0
	for v, n := range m.Counts {
		if v != matrix.VerdictUntested {
			tested += n
		}
	}
	if tested == 0 {
		return nil, "", nil, infra(fmt.Errorf("live window %d judged no probed pair yet: nothing to gate on; wait a window or run a sweep", info.Window))
	}
	header := fmt.Sprintf("live window %d (plan %d, %d of %d nodes probing, ended %s ago, every pair probed within %s, at most %g probes/s per HCA)",
		info.Window, info.PlanID, info.Probing, info.Members, seconds(info.AgeSeconds).Round(time.Second),
		seconds(info.CoverageSeconds).Round(time.Second), info.RatePerHCA)
	header += liveLinksText(info)
	return m, header, info.Links, nil
}

// liveLinksText is the link flows' part of the header: how many there
// are, and each cable they found losing probes, one line per episode.
func liveLinksText(info api.LiveInfo) string {
	if info.LinkFlows == 0 {
		return "\nlive link flows: none (they need a RoCE topology: coordinator.topology)"
	}
	s := fmt.Sprintf("\nlive link flows: %d, every cable between switches probed", info.LinkFlows)
	if len(info.Links) == 0 {
		return s + "; no cable losing probes"
	}
	for _, l := range info.Links {
		s += fmt.Sprintf("\n  cable %s: %s, %.2f%% of %d probes lost (worst %.2f%%), %d flows between %d nodes, since window %d, last bad %d, %d flaps",
			l.Cable, l.State, 100*l.Loss, l.Probes, 100*l.Worst, l.Flows, l.Partners, l.Since, l.LastBad, l.Flaps)
	}
	return s
}

// withLiveLinks is the gate's exit with the live link episodes: a cable
// down now fails it as a fabric fault (1), one losing probes as a
// performance fault (4); a recovered one is only reported.
func withLiveLinks(code int, links []api.LiveLink) int {
	for _, l := range links {
		switch {
		case l.State == "down" && (code == ExitHealthy || code == ExitPerformance):
			code = ExitUnhealthy
		case l.State == "lossy" && code == ExitHealthy:
			code = ExitPerformance
		}
	}
	return code
}

// liveUnavailable turns "no live mesh here" (404) into exit 3: the job may
// pass once live probing runs, or with a sweep; the command was not wrong.
func liveUnavailable(err error) error {
	var ge *Error
	if errors.As(err, &ge) && ge.Status == http.StatusNotFound {
		return &Error{Code: ExitInfra, Status: ge.Status,
			Err: fmt.Errorf("%w; no live window to judge: run a sweep instead (gate without --live)", ge.Err)}
	}
	return err
}

func because(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
