package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// restartAll is scenario (d): every coordinator is killed -9 at once and
// started again on its data dir. Each must serve the same sweep history
// (ids, states, cell counts) and the newest sweep's full matrix, and a new
// sweep must run on the same workers, which were never restarted.
func (s *scenarios) restartAll(ctx context.Context) error {
	const scn = "(d) restart all"
	l, err := s.c.waitReady(ctx, readyTimeout)
	if err != nil {
		return err
	}
	before, err := s.history(ctx, l)
	if err != nil {
		return err
	}
	if len(before) == 0 {
		return fmt.Errorf("no history to keep: run a sweep first")
	}
	newest := before[0]
	_, t0, err := s.finish(ctx, l, newest.ID)
	if err != nil {
		return err
	}
	for _, co := range s.c.coords {
		if err := co.p.kill(); err != nil {
			return err
		}
	}
	killed := time.Now()
	s.say("killed all 3 coordinators (-9) with %d sweeps in their history; restarting them on the same data dirs", len(before))
	for _, co := range s.c.coords {
		if err := s.c.startCoord(ctx, co); err != nil {
			return err
		}
	}
	nl, err := s.c.waitLeader(ctx, leaderTimeout)
	if err != nil {
		return err
	}
	leaderAfter := time.Since(killed)
	intact := 0
	for _, co := range s.c.coords {
		var got []api.SweepInfo
		err := waitFor(ctx, leaderTimeout, co.name+" to serve its history", func() (bool, string) {
			got, err = s.history(ctx, co)
			return err == nil && sameHistory(got, before), fmt.Sprintf("%d sweeps, err %v", len(got), err)
		})
		if err != nil {
			s.say("%s: history differs: %v", co.name, err)
			continue
		}
		m, err := s.c.api.matrix(ctx, co.api, newest.ID)
		if err != nil {
			return err
		}
		if t := count(newest, m); t.String() == t0.String() {
			intact++
		} else {
			s.say("%s: matrix of %s was %s, now %s", co.name, newest.ID, t0, t)
		}
	}
	s.say("leader %s %s after the kill; %d/3 coordinators serve all %d sweeps and the newest matrix unchanged",
		nl.name, secs(leaderAfter), intact, len(before))
	s.r.note(scn, "leader after restarting all", secs(leaderAfter))
	s.r.add(scn, "history intact", fmt.Sprintf("%d/3 coordinators, %d sweeps", intact, len(before)), "3/3", intact == 3)

	// The workers kept running; they must find the coordinators again.
	err = s.c.waitWorkers(ctx, rejoinTimeout, s.c.liveWorkers())
	back := time.Since(killed)
	if err != nil {
		s.r.add(scn, "workers back on the coordinators", err.Error(), "<= "+rejoinTimeout.String(), false)
		return nil
	}
	s.r.add(scn, "workers back on the coordinators", "after "+secs(back), "<= "+rejoinTimeout.String(), true)
	info, t, err := s.fullSweep(ctx, nl, nl)
	if err != nil {
		return err
	}
	s.say("workers back %s after the kill; new sweep %s: %s", secs(back), info.ID, t)
	s.r.add(scn, "new sweep after restart", fmt.Sprintf("%d/%d cells ok", t.classes["ok"], t.expected), "all",
		t.classes["ok"] == t.expected && t.lost == 0 && t.dup == 0)
	return nil
}

// rejoinTimeout bounds how long workers may take to find restarted
// coordinators: a few probe and reconcile periods, well under memberlist's
// 30 s push/pull that would otherwise be the only way back.
const rejoinTimeout = 20 * time.Second

func (s *scenarios) history(ctx context.Context, co *coord) ([]api.SweepInfo, error) {
	h, err := s.c.api.sweeps(ctx, co.api)
	if err != nil {
		return nil, fmt.Errorf("%s: GET /api/v1/sweeps: %w", co.name, err)
	}
	return h, nil
}

// sameHistory compares what a restart must keep: which sweeps, how they
// ended, and how many cells and rounds each recorded.
func sameHistory(a, b []api.SweepInfo) bool {
	key := func(s api.SweepInfo) string {
		return fmt.Sprintf("%s %s %d/%d %d/%d", s.ID, s.State, s.RoundsDone, s.Rounds, s.CellsDone, s.Cells)
	}
	return slices.EqualFunc(a, b, func(x, y api.SweepInfo) bool { return key(x) == key(y) })
}
