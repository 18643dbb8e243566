package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// leaderKill is scenario (a): per trial, a sweep is posted to a seeded
// coordinator (a follower forwards it), the leader is killed -9 after a
// seeded number of rounds plus a seeded fraction of the next, and the
// sweep must complete on the new leader with every cell exactly once. The
// killed coordinator is restarted before the next trial, so each starts
// with three.
func (s *scenarios) leaderKill(ctx context.Context) error {
	const scn = "(a) leader kill"
	var failovers durs
	complete, lost, dup, notOK, midSweep := 0, 0, 0, 0, 0
	for trial := range s.o.Trials {
		rng := s.rng(1, uint64(trial))
		l, err := s.c.waitReady(ctx, readyTimeout)
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		entry := s.c.coords[rng.IntN(len(s.c.coords))]
		info, err := s.startSweep(ctx, entry, api.SweepRequest{Mode: "full"})
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		// Kill once killAt rounds are committed, a seeded part of a round
		// later; never past the second-to-last round, so a round is always
		// left for the new leader.
		killAt := rng.IntN(max(1, info.Rounds-1))
		delay := time.Duration(rng.Float64() * 0.8 * float64(s.round))
		var before api.SweepInfo
		err = waitFor(ctx, sweepTimeout, fmt.Sprintf("round %d of %s on %s", killAt, info.ID, l.name), func() (bool, string) {
			before, err = s.c.api.sweep(ctx, l.api, info.ID)
			return err == nil && before.RoundsDone >= killAt, fmt.Sprint(err)
		})
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		if err := pause(ctx, delay); err != nil {
			return err
		}
		killed := time.Now()
		if err := l.p.kill(); err != nil {
			return err
		}
		next, failover, err := s.awaitNewLeader(ctx, l)
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		failovers = append(failovers, failover)
		atFailover, _ := s.c.api.sweep(ctx, next.api, info.ID)
		final, t, err := s.finish(ctx, next, info.ID)
		if err != nil {
			return fmt.Errorf("trial %d: sweep after failover: %w", trial+1, err)
		}
		if final.State == api.SweepDone {
			complete++
		}
		mid := final.Finished.After(killed)
		if mid {
			midSweep++
		}
		lost += t.lost
		dup += t.dup
		notOK += t.unique - t.classes["ok"]
		how := "leader"
		if entry != l {
			how = "follower, forwarded"
		}
		s.say("trial %2d: POST to %s (%s); killed leader %s at %d/%d rounds +%s; %s leads after %s (resumed at %d/%d); %s",
			trial+1, entry.name, how, l.name, before.RoundsDone, info.Rounds, secs(delay), next.name, secs(failover),
			atFailover.RoundsDone, info.Rounds, t)
		if !mid {
			s.say("          note: the sweep had finished before the kill landed")
		}
		if err := s.rejoin(ctx, l, info.ID); err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
	}
	n := s.o.Trials
	s.r.add(scn, "sweeps complete after a leader kill", fmt.Sprintf("%d/%d", complete, n), fmt.Sprintf("%d/%d", n, n), complete == n)
	s.r.add(scn, "kills that landed mid-sweep", fmt.Sprintf("%d/%d", midSweep, n), fmt.Sprintf("%d/%d", n, n), midSweep == n)
	s.r.add(scn, "failover median", secs(failovers.median()), "<= 5s", failovers.median() <= 5*time.Second)
	s.r.add(scn, "failover max", secs(failovers.max()), "<= 5s", failovers.max() <= 5*time.Second)
	s.r.add(scn, "lost cells", fmt.Sprint(lost), "0", lost == 0)
	s.r.add(scn, "duplicated cells", fmt.Sprint(dup), "0", dup == 0)
	s.r.add(scn, "cells not ok (no fault injected)", fmt.Sprint(notOK), "0", notOK == 0)
	s.say("%d/%d sweeps complete; failover median %s, max %s; %d lost, %d duplicated cells", complete, n,
		secs(failovers.median()), secs(failovers.max()), lost, dup)
	return nil
}

// awaitNewLeader measures failover: from the kill until a survivor's
// /api/v1/status says it is the leader.
func (s *scenarios) awaitNewLeader(ctx context.Context, dead *coord) (*coord, time.Duration, error) {
	start := time.Now()
	var next *coord
	err := waitFor(ctx, leaderTimeout, "a new leader among the survivors", func() (bool, string) {
		for _, co := range s.c.live() {
			st, err := s.c.api.status(ctx, co.api)
			if err == nil && st.State == "Leader" && co != dead {
				next = co
				return true, ""
			}
		}
		return false, ""
	})
	return next, time.Since(start), err
}

// rejoin restarts a killed coordinator on its data dir and waits until all
// three agree on a leader and it has applied sweep id's end.
func (s *scenarios) rejoin(ctx context.Context, co *coord, id string) error {
	if err := s.c.startCoord(ctx, co); err != nil {
		return err
	}
	return waitFor(ctx, leaderTimeout, co.name+" to rejoin and catch up", func() (bool, string) {
		if l, why := s.c.leaderOf(ctx, s.c.live()); l == nil {
			return false, why
		}
		sw, err := s.c.api.sweep(ctx, co.api, id)
		return err == nil && sw.State == api.SweepDone, fmt.Sprintf("sweep on %s: %v %v", co.name, sw.State, err)
	})
}
