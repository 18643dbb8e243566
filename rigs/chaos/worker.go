package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// workerKill is scenario (b): a seeded worker is killed -9 after the first
// round of a sweep. The sweep must complete; every cell without the victim
// must be ok; the victim's cells are ok (measured before the kill) or
// peer-lost, never lost or left untested. The worker is then restarted and
// must be in the next sweep with every cell ok.
// deadTimeout bounds memberlist's failure detection with LAN timers: a
// probe each second and a suspicion timeout of 4-24 s.
const deadTimeout = 30 * time.Second

func (s *scenarios) workerKill(ctx context.Context) error {
	const scn = "(b) worker kill"
	rng := s.rng(2, 0)
	l, err := s.c.waitReady(ctx, readyTimeout)
	if err != nil {
		return err
	}
	victim := s.c.workers[rng.IntN(len(s.c.workers))]
	info, err := s.startSweep(ctx, l, api.SweepRequest{Mode: "full"})
	if err != nil {
		return err
	}
	err = waitFor(ctx, sweepTimeout, "the first round of "+info.ID, func() (bool, string) {
		sw, err := s.c.api.sweep(ctx, l.api, info.ID)
		return err == nil && sw.RoundsDone >= 1, fmt.Sprint(err)
	})
	if err != nil {
		return err
	}
	if err := pause(ctx, time.Duration(rng.Float64()*0.8*float64(s.round))); err != nil {
		return err
	}
	killed := time.Now()
	if err := victim.p.kill(); err != nil {
		return err
	}
	// Gossip marks the victim dead on its own schedule; the sweep must not
	// wait for it, but the API must say so eventually (the figure shows
	// what failure detection costs).
	dead := make(chan time.Duration, 1)
	go func() {
		defer close(dead)
		err := waitFor(ctx, deadTimeout, victim.name+" dead in gossip", func() (bool, string) {
			return s.stateOf(ctx, l, victim.name) == "dead", ""
		})
		if err == nil {
			dead <- time.Since(killed)
		}
	}()
	final, t, err := s.finish(ctx, l, info.ID)
	if err != nil {
		return err
	}
	m, err := s.c.api.matrix(ctx, l.api, info.ID)
	if err != nil {
		return err
	}
	var victimOK, peerLost, otherBad, victimOther int
	for _, c := range m.Cells {
		switch {
		case !c.involves(victim.name) && c.Class != "ok":
			otherBad++
			s.say("  unexpected: %s->%s rail %d %s (%s)", c.Src, c.Dst, c.Rail, c.Class, c.Reason)
		case c.involves(victim.name) && c.Class == "ok":
			victimOK++
		case c.involves(victim.name) && c.Class == "peer-lost":
			peerLost++
		case c.involves(victim.name):
			victimOther++
			s.say("  unexpected: %s->%s rail %d %s (%s)", c.Src, c.Dst, c.Rail, c.Class, c.Reason)
		}
	}
	took := final.Finished.Sub(killed)
	s.say("killed %s after %d/%d rounds; sweep %s %s %s after the kill: %s; %s cells: %d ok before the kill, %d peer-lost",
		victim.name, 1, info.Rounds, info.ID, final.State, secs(took), t, victim.name, victimOK, peerLost)
	s.r.add(scn, "sweep complete", final.State, "done", final.State == api.SweepDone)
	s.r.add(scn, "lost / duplicated cells", fmt.Sprintf("%d / %d", t.lost, t.dup), "0 / 0", t.lost == 0 && t.dup == 0)
	s.r.add(scn, "victim's cells peer-lost", fmt.Sprintf("%d (plus %d ok before the kill)", peerLost, victimOK), "> 0", peerLost > 0)
	s.r.add(scn, "victim's cells in another class", fmt.Sprint(victimOther), "0", victimOther == 0)
	s.r.add(scn, "other cells not ok", fmt.Sprint(otherBad), "0", otherBad == 0)
	s.r.note(scn, "sweep end after the kill", secs(took))
	if d, ok := <-dead; ok {
		s.say("%s reported dead by GET /api/v1/nodes %s after the kill", victim.name, secs(d))
		s.r.add(scn, "killed worker reported dead", "after "+secs(d), "<= "+deadTimeout.String(), true)
	} else {
		st := s.stateOf(ctx, l, victim.name)
		s.say("%s still %q in GET /api/v1/nodes %s after the kill", victim.name, st, deadTimeout)
		s.r.add(scn, "killed worker reported dead", fmt.Sprintf("still %q after %s", st, deadTimeout), "<= "+deadTimeout.String(), false)
	}

	back := time.Now()
	if err := s.c.startWorker(ctx, victim); err != nil {
		return err
	}
	if err := s.c.waitWorkers(ctx, readyTimeout, []string{victim.name}); err != nil {
		return fmt.Errorf("restarted %s: %w", victim.name, err)
	}
	rejoined := time.Since(back)
	next, t2, err := s.fullSweep(ctx, l, l)
	if err != nil {
		return err
	}
	in := slices.Contains(next.Nodes, victim.name)
	s.say("restarted %s: alive on every coordinator after %s; next sweep %s has it: %v; %s", victim.name, secs(rejoined), next.ID, in, t2)
	s.r.note(scn, "restarted worker alive after", secs(rejoined))
	s.r.add(scn, "restarted worker in next sweep", fmt.Sprint(in), "true", in)
	s.r.add(scn, "next sweep cells ok", fmt.Sprintf("%d/%d", t2.classes["ok"], t2.expected), "all",
		t2.classes["ok"] == t2.expected && t2.lost == 0 && t2.dup == 0)
	return nil
}

// stateOf is a worker's gossip state as co sees it.
func (s *scenarios) stateOf(ctx context.Context, co *coord, name string) string {
	nodes, err := s.c.api.nodes(ctx, co.api)
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.State
		}
	}
	return ""
}
