package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// scenarios holds what the scenarios share: the cluster, the figures, and
// the round time measured by the baseline sweep (to place faults inside a
// sweep rather than before or after it).
type scenarios struct {
	c     *Cluster
	o     Options
	r     *report
	say   func(string, ...any)
	round time.Duration // one round of a full sweep, measured
	sweep time.Duration // a whole full sweep, measured
}

// Bounds on every wait. A sweep takes a few seconds at the default time
// scale; the bounds are generous for a loaded 2-core machine.
const (
	readyTimeout  = 60 * time.Second
	sweepTimeout  = 120 * time.Second
	leaderTimeout = 30 * time.Second
)

func (s *scenarios) rng(scenario, trial uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(s.o.Seed), scenario<<32|trial))
}

// setup starts the cluster and runs one undisturbed sweep: it proves the
// cluster works before anything is broken, and times a round.
func (s *scenarios) setup(ctx context.Context) error {
	s.say("starting 3 coordinators and %d workers (sim fabric, time scale %g) in %s", s.o.Workers, s.o.TimeScale, s.o.Dir)
	if err := s.c.Start(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	l, err := s.c.waitReady(ctx, readyTimeout)
	if err != nil {
		return err
	}
	s.say("cluster ready in %s: leader %s, %d workers registered on every coordinator", secs(time.Since(t0)), l.name, s.o.Workers)
	info, t, err := s.fullSweep(ctx, l, l)
	if err != nil {
		return fmt.Errorf("baseline sweep: %w", err)
	}
	s.sweep = time.Duration(0)
	if !info.Finished.IsZero() {
		s.sweep = info.Finished.Sub(info.Started)
	}
	s.round = s.sweep / time.Duration(max(1, info.Rounds))
	s.say("baseline sweep %s: %d nodes, %d rounds in %s (%s a round); %s", info.ID, len(info.Nodes), info.Rounds, secs(s.sweep), secs(s.round), t)
	s.r.note("setup", "baseline sweep", fmt.Sprintf("%s, %d rounds, %s", secs(s.sweep), info.Rounds, t))
	if t.lost != 0 || t.dup != 0 || t.classes["ok"] != t.expected {
		s.r.add("setup", "baseline cells ok", fmt.Sprintf("%d/%d", t.classes["ok"], t.expected), "all", false)
	}
	return nil
}

// startSweep posts a sweep to co, retrying while the cluster is between
// leaders (503) or finishing a previous sweep (409).
func (s *scenarios) startSweep(ctx context.Context, co *coord, req api.SweepRequest) (api.SweepInfo, error) {
	var info api.SweepInfo
	err := waitFor(ctx, leaderTimeout, "a coordinator to accept a sweep", func() (bool, string) {
		var err error
		info, err = s.c.api.start(ctx, co.api, req)
		var he *httpError
		if errors.As(err, &he) && he.code != http.StatusServiceUnavailable && he.code != http.StatusConflict {
			return true, "" // a real refusal: stop and report it
		}
		return err == nil, fmt.Sprint(err)
	})
	if err != nil {
		return info, err
	}
	if info.ID == "" {
		_, err = s.c.api.start(ctx, co.api, req)
		return info, fmt.Errorf("POST /api/v1/sweeps to %s: %w", co.name, err)
	}
	return info, nil
}

// fullSweep starts a sweep through entry, waits for it on watch and counts
// its cells there.
func (s *scenarios) fullSweep(ctx context.Context, entry, watch *coord) (api.SweepInfo, tally, error) {
	info, err := s.startSweep(ctx, entry, api.SweepRequest{Mode: "full"})
	if err != nil {
		return info, tally{}, err
	}
	return s.finish(ctx, watch, info.ID)
}

// finish waits for sweep id on co and counts its matrix.
func (s *scenarios) finish(ctx context.Context, co *coord, id string) (api.SweepInfo, tally, error) {
	info, err := s.c.waitSweep(ctx, co, id, sweepTimeout)
	if err != nil {
		return info, tally{}, err
	}
	if info.State != api.SweepDone {
		return info, tally{}, fmt.Errorf("sweep %s ended %s: %s", id, info.State, info.Error)
	}
	m, err := s.c.api.matrix(ctx, co.api, id)
	if err != nil {
		return info, tally{}, fmt.Errorf("matrix of %s: %w", id, err)
	}
	return info, count(info, m), nil
}
