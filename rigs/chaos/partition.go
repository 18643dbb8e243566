package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// partition is scenario (c). The leader's raft links are cut (Net.Cut):
// gossip and HTTP still reach it, so it is a real minority, not a dead
// process. Then:
//
//   - writes posted to it at once (it may still believe it leads) and all
//     through the partition must fail, and its sweep history must not gain
//     an entry: what a minority "accepts" it cannot commit;
//   - the two others elect a leader and run a full sweep;
//   - after the heal it follows the new leader, holds exactly the
//     majority's history, and forwards a write to the leader.
func (s *scenarios) partition(ctx context.Context) error {
	const scn = "(c) partition"
	l, err := s.c.waitReady(ctx, readyTimeout)
	if err != nil {
		return err
	}
	var majority []*coord
	for _, co := range s.c.coords {
		if co != l {
			majority = append(majority, co)
		}
	}
	before, err := s.ids(ctx, l)
	if err != nil {
		return err
	}
	severed := s.c.net.Cut(l.name)
	cut := time.Now()
	healed := false
	defer func() {
		if !healed {
			s.c.net.Heal()
		}
	}()
	s.say("cut %s (the leader) off: %d raft links severed; gossip and HTTP still reach it", l.name, severed)

	// A write while it may still think it leads: raft must not commit it.
	_, err = s.c.api.start(ctx, l.api, api.SweepRequest{Mode: "quick"})
	first := describeRefusal(err)
	s.say("POST /api/v1/sweeps to %s right after the cut: %s after %s", l.name, first, secs(time.Since(cut)))
	s.r.add(scn, "write to the cut-off leader", first, "refused", err != nil)

	// Election and step-down are watched together: each has its own time.
	var next *coord
	var elected, stepDown time.Duration
	err = waitFor(ctx, leaderTimeout, "a majority leader and "+l.name+" stepping down", func() (bool, string) {
		if next == nil {
			if co, _ := s.c.leaderOf(ctx, majority); co != nil {
				next, elected = co, time.Since(cut)
			}
		}
		if stepDown == 0 {
			if st, err := s.c.api.status(ctx, l.api); err == nil && st.State != "Leader" {
				stepDown = time.Since(cut)
			}
		}
		return next != nil && stepDown != 0, ""
	})
	if err != nil {
		return err
	}
	s.say("majority elected %s %s after the cut; %s stepped down after %s", next.name, secs(elected), l.name, secs(stepDown))
	s.r.add(scn, "majority leader elected after", secs(elected), "<= 5s", elected <= 5*time.Second)
	s.r.note(scn, "cut-off leader stepped down after", secs(stepDown))

	// The majority works while the minority is hammered with writes.
	info, err := s.startSweep(ctx, next, api.SweepRequest{Mode: "full"})
	if err != nil {
		return fmt.Errorf("majority sweep: %w", err)
	}
	tries, refused, gained := 0, 0, 0
	err = waitFor(ctx, sweepTimeout, "the majority's sweep", func() (bool, string) {
		tries++
		if _, err := s.c.api.start(ctx, l.api, api.SweepRequest{Mode: "quick"}); err != nil {
			refused++
		}
		ids, err := s.ids(ctx, l)
		if err == nil && len(ids) != len(before) {
			gained++
		}
		sw, err := s.c.api.sweep(ctx, next.api, info.ID)
		return err == nil && sw.State != api.SweepRunning, fmt.Sprint(err)
	})
	if err != nil {
		return err
	}
	_, t, err := s.finish(ctx, next, info.ID)
	if err != nil {
		return err
	}
	after, err := s.ids(ctx, l)
	if err != nil {
		return err
	}
	unchanged := slices.Equal(after, before) && gained == 0
	refusedCut, _, sniffErr := s.c.net.Stats()
	s.say("majority sweep %s during the partition: %s", info.ID, t)
	s.say("%d/%d writes to %s refused during the partition; its history %d sweeps before, %d after (unchanged: %v); %d raft connections refused at the cut",
		refused, tries, l.name, len(before), len(after), unchanged, refusedCut)
	s.r.add(scn, "majority sweep during partition", fmt.Sprintf("%d/%d cells ok", t.classes["ok"], t.expected), "all",
		t.classes["ok"] == t.expected && t.lost == 0 && t.dup == 0)
	s.r.add(scn, "writes refused by the minority", fmt.Sprintf("%d/%d", refused, tries), "all", refused == tries)
	s.r.add(scn, "minority history unchanged", fmt.Sprint(unchanged), "true", unchanged)
	unread := "none"
	if sniffErr != nil {
		unread = sniffErr.Error()
	}
	s.r.add(scn, "raft headers the proxy could not read", unread, "none", sniffErr == nil)

	s.c.net.Heal()
	healed = true
	healAt := time.Now()
	want, err := s.ids(ctx, next)
	if err != nil {
		return err
	}
	err = waitFor(ctx, leaderTimeout, l.name+" to catch up", func() (bool, string) {
		st, err := s.c.api.status(ctx, l.api)
		if err != nil || st.Leader != next.name {
			return false, fmt.Sprintf("follows %q (%v)", st.Leader, err)
		}
		got, err := s.ids(ctx, l)
		return err == nil && slices.Equal(got, want), fmt.Sprintf("history %v, want %v", got, want)
	})
	caughtUp := time.Since(healAt)
	if err != nil {
		s.r.add(scn, "minority caught up after heal", err.Error(), "<= "+leaderTimeout.String(), false)
		return nil
	}
	s.r.add(scn, "minority caught up after heal", secs(caughtUp), "<= "+leaderTimeout.String(), true)
	fwd, err := s.startSweep(ctx, l, api.SweepRequest{Mode: "quick"})
	if err != nil {
		return fmt.Errorf("write through the healed %s: %w", l.name, err)
	}
	_, t2, err := s.finish(ctx, l, fwd.ID)
	if err != nil {
		return err
	}
	s.say("healed: %s follows %s and holds its %d sweeps after %s; a write posted to it ran as %s: %s",
		l.name, next.name, len(want), secs(caughtUp), fwd.ID, t2)
	s.r.add(scn, "write via healed minority", fmt.Sprintf("forwarded, %d/%d cells ok", t2.classes["ok"], t2.expected), "all ok",
		t2.classes["ok"] == t2.expected && t2.lost == 0 && t2.dup == 0)
	return nil
}

// ids lists a coordinator's sweep history, newest first.
func (s *scenarios) ids(ctx context.Context, co *coord) ([]string, error) {
	sw, err := s.c.api.sweeps(ctx, co.api)
	if err != nil {
		return nil, fmt.Errorf("%s: GET /api/v1/sweeps: %w", co.name, err)
	}
	out := make([]string, len(sw))
	for i, x := range sw {
		out[i] = x.ID
	}
	return out, nil
}

func describeRefusal(err error) string {
	var he *httpError
	switch {
	case err == nil:
		return "ACCEPTED"
	case errors.As(err, &he):
		return fmt.Sprintf("refused (HTTP %d)", he.code)
	default:
		return "refused (" + err.Error() + ")"
	}
}
