package chaos

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// bigRun is chaos at scale (-scale N, make chaos-scale): the same three
// coordinator processes, killed with -9 and cut off by the raft proxy as in
// the small run, but in front of N control-mode workers in this process
// (fleet). The coordinators are the real binary so a kill is a real kill
// and each one's memory is its own; the workers answer at once, so what is
// measured is the coordinators rebuilding and resuming a large sweep.
type bigRun struct {
	*scenarios
	fl      *fleet
	led     *ledger
	logFile *os.File

	baseRSS  uint64     // leader after the undisturbed sweep
	kills    []bigTrial // scenario (a)
	cut      *bigTrial  // scenario (c)
	wk       *workerFig // scenario (b)
	cellsPer int
}

// bigTrial is one failover's figures.
type bigTrial struct {
	election, dispatch, progress time.Duration
	res                          resume
	rounds                       int // the sweep's
	chk                          check
	take, rss, peak              uint64 // new leader's RSS at takeover, at the sweep's end, and its peak in between
	done                         bool
	mid                          bool
}

type workerFig struct {
	victims int
	dead    time.Duration // kill → every victim dead on the leader
	deadOK  bool
	chk     check
	back    time.Duration
	next    check
	done    bool
}

// Bounds of the large run's waits, per worker where they grow with N.
func bigReady(n int) time.Duration { return 2*time.Minute + time.Duration(n)*200*time.Millisecond }
func bigSweep(n int) time.Duration { return 5*time.Minute + time.Duration(n)*time.Second }

const bigRejoin = 3 * time.Minute

func newBigRun(s *scenarios) (*bigRun, error) {
	f, err := os.OpenFile(filepath.Join(s.o.Dir, "fleet.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(strings.ToUpper(s.o.LogLevel)))
	if lvl < slog.LevelWarn {
		lvl = slog.LevelWarn // 256 agents' info lines say nothing the coordinators' logs do not
	}
	log := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: lvl}))
	key, err := base64.StdEncoding.DecodeString(s.c.key)
	if err != nil {
		f.Close()
		return nil, err
	}
	var seeds []string
	for _, co := range s.c.coords {
		seeds = append(seeds, co.gossip)
	}
	b := &bigRun{scenarios: s, logFile: f}
	names := make([]string, s.o.Scale)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i+1)
	}
	b.led = newLedger(names, 8, s.o.PairTimeout)
	if b.fl, err = newFleet(s.o.Scale, s.c.token, key, seeds, b.led, log); err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

// stop ends the fleet; false when a task was not answered on a stream.
func (b *bigRun) stop() bool {
	b.fl.stop()
	b.logFile.Close()
	// Every coordinator here serves streams' clients and every fleet
	// worker serves streams, so a posted task means a stream that could
	// not be opened.
	if s, p := b.fl.streamed.Load(), b.fl.posted.Load(); s+p > 0 {
		b.r.add("transport", "tasks answered on task streams", fmt.Sprintf("%d of %d", s, s+p), "all", p == 0)
		return p == 0
	}
	return true
}

// leaks reports whether the fleet's log holds a secret.
func (b *bigRun) leaks() bool {
	raw, err := os.ReadFile(b.logFile.Name())
	return err == nil && (strings.Contains(string(raw), b.c.token) || strings.Contains(string(raw), b.c.key))
}

func (b *bigRun) setup(ctx context.Context) error {
	n := b.o.Scale
	b.say("starting 3 coordinators, then %d control-mode workers in this process (gossip on loopback with the cluster key) in %s", n, b.o.Dir)
	if err := b.c.Start(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	if err := b.fl.start(ctx); err != nil {
		return err
	}
	b.say("%d workers up in %s", n, secs(time.Since(t0)))
	l, err := b.ready(ctx)
	if err != nil {
		return err
	}
	b.say("cluster ready %s after the first worker started: leader %s, %d workers with inventory on every coordinator", secs(time.Since(t0)), l.name, n)
	info, err := b.startSweep(ctx, l, api.SweepRequest{Mode: "quick"})
	if err != nil {
		return err
	}
	final, err := b.c.waitSweep(ctx, l, info.ID, bigSweep(n))
	if err != nil {
		return err
	}
	if final.State != api.SweepDone {
		return fmt.Errorf("baseline sweep %s ended %s: %s", info.ID, final.State, final.Error)
	}
	b.baseRSS = procstat.RSS(l.p.pid())
	b.sweep = final.Finished.Sub(final.Started)
	b.round = b.sweep / time.Duration(max(1, final.Rounds))
	b.cellsPer = final.Cells
	chk, err := b.verify(ctx, l, final, nil)
	if err != nil {
		return err
	}
	b.say("baseline sweep %s: %d nodes, %d rounds, %d cells in %s (%s a round); leader %s holds %s; %s", final.ID, len(final.Nodes), final.Rounds,
		final.Cells, secs(b.sweep), b.round.Round(time.Millisecond), l.name, mb(b.baseRSS), chk)
	b.r.note("setup", "baseline sweep", fmt.Sprintf("%d workers, %d cells, %d rounds, %s", n, final.Cells, final.Rounds, secs(b.sweep)))
	b.r.note("setup", "leader RSS after it", mb(b.baseRSS))
	if !chk.clean() || chk.classes["ok"] != chk.expected {
		b.r.add("setup", "baseline cells ok, once each", chk.String(), "all", false)
	}
	return nil
}

// ready waits for a leader that every live coordinator follows and for
// every live fleet worker, alive and with its inventory, on every live
// coordinator (a new leader resumes from its own registry).
func (b *bigRun) ready(ctx context.Context) (*coord, error) {
	timeout := bigReady(b.o.Scale)
	if _, err := b.c.waitLeader(ctx, timeout); err != nil {
		return nil, err
	}
	want := 0
	for _, w := range b.fl.ws {
		if !w.dead.Load() {
			want++
		}
	}
	err := waitEvery(ctx, 250*time.Millisecond, timeout, fmt.Sprintf("%d workers with inventory on every coordinator", want), func() (bool, string) {
		for _, co := range b.c.live() {
			st, err := b.c.api.status(ctx, co.api)
			if err != nil || st.Workers < want {
				return false, fmt.Sprintf("%s sees %d alive workers (%v)", co.name, st.Workers, err)
			}
		}
		for _, co := range b.c.live() {
			nodes, err := b.c.api.nodes(ctx, co.api)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", co.name, err)
			}
			have := 0
			for _, nd := range nodes {
				if i, ok := b.fl.byName[nd.Name]; ok && !b.fl.ws[i].dead.Load() && nd.State == "alive" && nd.Inventory != nil {
					have++
				}
			}
			if have < want {
				return false, fmt.Sprintf("%s has %d/%d workers ready", co.name, have, want)
			}
		}
		return true, ""
	})
	if err != nil {
		return nil, err
	}
	return b.c.waitLeader(ctx, timeout)
}

// verify streams sweep info's matrix from co and checks it against the plan
// and the ledger, then forgets the sweep's ledger.
func (b *bigRun) verify(ctx context.Context, co *coord, info api.SweepInfo, killed map[int]bool) (check, error) {
	v := b.led.verifier(info.ID, killed)
	if err := b.c.api.matrixEach(ctx, co.api, info.ID, 10*time.Minute, v.add); err != nil {
		return check{}, fmt.Errorf("matrix of %s from %s: %w", info.ID, co.name, err)
	}
	chk := v.finish(info.Cells, info.CellsDone)
	b.led.drop(info.ID)
	return chk, nil
}

// follow polls id on co until it ends, noting when RoundsDone first passed
// after (the rounds committed before a failover); 0 if never seen.
func (b *bigRun) follow(ctx context.Context, co *coord, id string, from time.Time, after func() int) (api.SweepInfo, time.Duration, error) {
	type sample struct {
		at   time.Duration
		done int
	}
	var samples []sample
	var info api.SweepInfo
	err := waitFor(ctx, bigSweep(b.o.Scale), "sweep "+id+" on "+co.name, func() (bool, string) {
		s, err := b.c.api.sweep(ctx, co.api, id)
		if err != nil {
			return false, err.Error()
		}
		info = s
		samples = append(samples, sample{time.Since(from), s.RoundsDone})
		return s.State != api.SweepRunning, fmt.Sprintf("%d/%d rounds", s.RoundsDone, s.Rounds)
	})
	if err != nil {
		return info, 0, err
	}
	committed := after()
	for _, s := range samples {
		if s.done > committed {
			return info, s.at, nil
		}
	}
	return info, 0, nil
}

// leaderKill is scenario (a) at scale: as the small run's, with the resume
// point and the new leader's memory measured.
func (b *bigRun) leaderKill(ctx context.Context) error {
	const scn = "(a) leader kill"
	for trial := range b.o.Trials {
		rng := b.rng(1, uint64(trial))
		l, err := b.ready(ctx)
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		entry := b.c.coords[rng.IntN(len(b.c.coords))]
		info, err := b.startSweep(ctx, entry, api.SweepRequest{Mode: "quick"})
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		// Trial i kills in the i-th of Trials equal parts of the sweep, at a
		// seeded point within it: early, middle and late kills all happen.
		frac := (float64(trial) + rng.Float64()) / float64(b.o.Trials)
		// At most Rounds-8: the leader commits up to two rounds past the
		// count a poll saw (its committer encodes one round while the one
		// before is applied), and the kill waits up to most of a round more.
		killAt := 1 + int(frac*float64(max(1, info.Rounds-8)))
		delay := time.Duration(rng.Float64() * 0.8 * float64(b.round))
		var before api.SweepInfo
		err = waitFor(ctx, bigSweep(b.o.Scale), fmt.Sprintf("round %d of %s on %s", killAt, info.ID, l.name), func() (bool, string) {
			before, err = b.c.api.sweep(ctx, l.api, info.ID)
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
		next, election, err := b.awaitNewLeader(ctx, l)
		if err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		pid := next.p.pid()
		take := procstat.RSS(pid)
		_ = procstat.ResetPeak(pid)
		var res resume
		final, progress, err := b.follow(ctx, next, info.ID, killed, func() int {
			res = b.led.resume(info.ID, killed, afterKill(killed))
			return res.lastCommitted + 1
		})
		if err != nil {
			return fmt.Errorf("trial %d: sweep after failover: %w", trial+1, err)
		}
		t := bigTrial{election: election, dispatch: res.dispatchAfter, progress: progress, res: res, rounds: info.Rounds, take: take,
			rss: procstat.RSS(pid), peak: procstat.HWM(pid), done: final.State == api.SweepDone, mid: final.Finished.After(killed)}
		if t.chk, err = b.verify(ctx, next, final, nil); err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
		b.kills = append(b.kills, t)
		how := "leader"
		if entry != l {
			how = "follower, forwarded"
		}
		b.say("trial %2d: POST to %s (%s); killed leader %s at %d/%d rounds (aimed at %d) +%s; %s leads after %s, dispatches after %s, commits after %s; %s; %s; %s RSS %s at takeover, %s at the end (peak %s)",
			trial+1, entry.name, how, l.name, before.RoundsDone, info.Rounds, killAt, secs(delay), next.name, secs(election), secs(t.dispatch),
			secs(progress), res, t.chk, next.name, mb(t.take), mb(t.rss), mb(t.peak))
		if err := b.rejoinBig(ctx, l, info.ID); err != nil {
			return fmt.Errorf("trial %d: %w", trial+1, err)
		}
	}
	n := len(b.kills)
	var el, disp, prog durs
	complete, mid, lost, dup, other, resumedRight, doneRerun := 0, 0, 0, 0, 0, 0, 0
	for _, t := range b.kills {
		el, disp, prog = append(el, t.election), append(disp, t.dispatch), append(prog, t.progress)
		if t.done {
			complete++
		}
		if t.mid {
			mid++
		}
		lost += t.chk.lost + t.chk.unseen
		dup += t.chk.dup + t.chk.phantom
		other += t.chk.unique - t.chk.classes["ok"]
		if t.res.resumedRight(t.rounds) {
			resumedRight++
		}
		doneRerun += t.res.rerunDone
	}
	b.r.add(scn, "sweeps complete after a leader kill", fmt.Sprintf("%d/%d", complete, n), fmt.Sprintf("%d/%d", n, n), complete == n)
	b.r.add(scn, "kills that landed mid-sweep", fmt.Sprintf("%d/%d", mid, n), fmt.Sprintf("%d/%d", n, n), mid == n)
	b.r.add(scn, "new leader elected, median / max", secs(el.median())+" / "+secs(el.max()), "max <= 5s", el.max() <= 5*time.Second)
	b.r.note(scn, "first task from the new leader, median / max", secs(disp.median())+" / "+secs(disp.max()))
	b.r.note(scn, "first round committed by it, median / max", secs(prog.median())+" / "+secs(prog.max()))
	b.r.add(scn, "resumed at the first uncommitted round", fmt.Sprintf("%d/%d", resumedRight, n), fmt.Sprintf("%d/%d", n, n), resumedRight == n)
	b.r.add(scn, "committed rounds run again", fmt.Sprint(doneRerun), "0", doneRerun == 0)
	b.r.add(scn, "lost cells (incl. answered, not listed)", fmt.Sprint(lost), "0", lost == 0)
	b.r.add(scn, "duplicated cells (incl. not answered)", fmt.Sprint(dup), "0", dup == 0)
	b.r.add(scn, "cells not ok (no fault injected)", fmt.Sprint(other), "0", other == 0)
	return nil
}

// rejoinBig restarts a killed coordinator and waits until it follows the
// leader and has applied sweep id's end.
func (b *bigRun) rejoinBig(ctx context.Context, co *coord, id string) error {
	if err := b.c.startCoord(ctx, co); err != nil {
		return err
	}
	return waitFor(ctx, bigRejoin, co.name+" to rejoin and catch up", func() (bool, string) {
		if l, why := b.c.leaderOf(ctx, b.c.live()); l == nil {
			return false, why
		}
		sw, err := b.c.api.sweep(ctx, co.api, id)
		return err == nil && sw.State == api.SweepDone, fmt.Sprintf("sweep on %s: %v %v", co.name, sw.State, err)
	})
}

// workerKill is scenario (b) at scale: a thirty-second of the workers (at
// least one) killed at once mid-sweep.
func (b *bigRun) workerKill(ctx context.Context) error {
	const scn = "(b) worker kill"
	rng := b.rng(2, 0)
	l, err := b.ready(ctx)
	if err != nil {
		return err
	}
	k := max(1, b.o.Scale/32)
	victims := map[int]bool{}
	for _, i := range rng.Perm(b.o.Scale)[:k] {
		victims[i] = true
	}
	info, err := b.startSweep(ctx, l, api.SweepRequest{Mode: "quick"})
	if err != nil {
		return err
	}
	killAt := 1 + rng.IntN(max(1, info.Rounds/2))
	err = waitFor(ctx, bigSweep(b.o.Scale), fmt.Sprintf("round %d of %s", killAt, info.ID), func() (bool, string) {
		sw, err := b.c.api.sweep(ctx, l.api, info.ID)
		return err == nil && sw.RoundsDone >= killAt, fmt.Sprint(err)
	})
	if err != nil {
		return err
	}
	killed := time.Now()
	for i := range victims {
		b.fl.kill(i)
	}
	fig := &workerFig{victims: k}
	b.wk = fig
	dead := make(chan time.Duration, 1)
	go func() {
		defer close(dead)
		err := waitEvery(ctx, 500*time.Millisecond, 2*time.Minute, fmt.Sprintf("%d killed workers dead in gossip", k), func() (bool, string) {
			nodes, err := b.c.api.nodes(ctx, l.api)
			if err != nil {
				return false, err.Error()
			}
			n := 0
			for _, nd := range nodes {
				if i, ok := b.fl.byName[nd.Name]; ok && victims[i] && nd.State == "dead" {
					n++
				}
			}
			return n == k, fmt.Sprintf("%d/%d dead", n, k)
		})
		if err == nil {
			dead <- time.Since(killed)
		}
	}()
	final, err := b.c.waitSweep(ctx, l, info.ID, bigSweep(b.o.Scale))
	if err != nil {
		return err
	}
	fig.done = final.State == api.SweepDone
	if fig.chk, err = b.verify(ctx, l, final, victims); err != nil {
		return err
	}
	// Every cell is ok or, with a victim at an end, peer-lost: ok cells of
	// victims were measured before the kill.
	other := fig.chk.unique - fig.chk.classes["ok"] - fig.chk.peerLost
	fig.dead, fig.deadOK = <-dead
	b.say("killed %d workers after %d/%d rounds; sweep %s %s %s after the kill: %s; all %d reported dead after %s",
		k, killAt, info.Rounds, final.ID, final.State, secs(final.Finished.Sub(killed)), fig.chk, k, secs(fig.dead))
	b.r.add(scn, "sweep complete", final.State, "done", fig.done)
	b.r.add(scn, "lost / duplicated cells", fmt.Sprintf("%d / %d", fig.chk.lost+fig.chk.unseen, fig.chk.dup+fig.chk.phantom), "0 / 0", fig.chk.clean())
	b.r.add(scn, "killed workers' cells peer-lost", fmt.Sprint(fig.chk.peerLost), "> 0", fig.chk.peerLost > 0)
	b.r.add(scn, "cells neither ok nor a victim's peer-lost", fmt.Sprint(other+fig.chk.badLost), "0", other+fig.chk.badLost == 0)
	if fig.deadOK {
		b.r.add(scn, fmt.Sprintf("all %d killed workers reported dead", k), "after "+secs(fig.dead), "<= 2m", true)
	} else {
		b.r.add(scn, fmt.Sprintf("all %d killed workers reported dead", k), "not within 2m", "<= 2m", false)
	}

	back := time.Now()
	for i := range victims {
		if err := b.fl.startOne(ctx, i); err != nil {
			return fmt.Errorf("restart %s: %w", b.fl.ws[i].name, err)
		}
	}
	if l, err = b.ready(ctx); err != nil {
		return fmt.Errorf("restarted workers: %w", err)
	}
	fig.back = time.Since(back)
	next, err := b.startSweep(ctx, l, api.SweepRequest{Mode: "quick"})
	if err != nil {
		return err
	}
	nf, err := b.c.waitSweep(ctx, l, next.ID, bigSweep(b.o.Scale))
	if err != nil {
		return err
	}
	if fig.next, err = b.verify(ctx, l, nf, nil); err != nil {
		return err
	}
	b.say("restarted the %d workers: ready on every coordinator after %s; next sweep %s: %s", k, secs(fig.back), nf.ID, fig.next)
	b.r.note(scn, "restarted workers ready after", secs(fig.back))
	b.r.add(scn, "next sweep, restarted workers in, all ok", fmt.Sprintf("%d/%d ok", fig.next.classes["ok"], fig.next.expected), "all",
		nf.State == api.SweepDone && fig.next.clean() && fig.next.classes["ok"] == fig.next.expected)
	return nil
}

// partition is scenario (c) at scale, mid-sweep: the leader's raft links
// are cut while it runs a sweep. The majority must elect a leader that
// resumes the sweep; the cut-off one must commit nothing and refuse
// writes; after the heal it must hold exactly the majority's sweep.
func (b *bigRun) partition(ctx context.Context) error {
	const scn = "(c) partition"
	rng := b.rng(3, 0)
	l, err := b.ready(ctx)
	if err != nil {
		return err
	}
	var majority []*coord
	for _, co := range b.c.coords {
		if co != l {
			majority = append(majority, co)
		}
	}
	info, err := b.startSweep(ctx, l, api.SweepRequest{Mode: "quick"})
	if err != nil {
		return err
	}
	cutAt := 1 + rng.IntN(max(1, info.Rounds-2))
	err = waitFor(ctx, bigSweep(b.o.Scale), fmt.Sprintf("round %d of %s", cutAt, info.ID), func() (bool, string) {
		sw, err := b.c.api.sweep(ctx, l.api, info.ID)
		return err == nil && sw.RoundsDone >= cutAt, fmt.Sprint(err)
	})
	if err != nil {
		return err
	}
	severed := b.c.net.Cut(l.name)
	cut := time.Now()
	healed := false
	defer func() {
		if !healed {
			b.c.net.Heal()
		}
	}()
	_, werr := b.c.api.start(ctx, l.api, api.SweepRequest{Mode: "quick"})
	b.say("cut %s (the leader) off at round %d/%d of %s: %d raft links severed; a write to it at once: %s", l.name, cutAt, info.Rounds, info.ID,
		severed, describeRefusal(werr))
	b.r.add(scn, "write to the cut-off leader", describeRefusal(werr), "refused", werr != nil)

	var next *coord
	var elected, stepDown time.Duration
	var frozen int // the cut-off leader's committed rounds once it stepped down
	err = waitFor(ctx, leaderTimeout, "a majority leader and "+l.name+" stepping down", func() (bool, string) {
		if next == nil {
			if co, _ := b.c.leaderOf(ctx, majority); co != nil {
				next, elected = co, time.Since(cut)
			}
		}
		if stepDown == 0 {
			if st, err := b.c.api.status(ctx, l.api); err == nil && st.State != "Leader" {
				if sw, err := b.c.api.sweep(ctx, l.api, info.ID); err == nil {
					stepDown, frozen = time.Since(cut), sw.RoundsDone
				}
			}
		}
		return next != nil && stepDown != 0, ""
	})
	if err != nil {
		return err
	}
	pid := next.p.pid()
	take := procstat.RSS(pid)
	_ = procstat.ResetPeak(pid)
	// The majority resumes the sweep while the minority is asked for
	// writes and watched for commits it cannot make.
	tries, refused, moved := 0, 0, 0
	lastPoke := time.Time{}
	var res resume
	var samples []struct {
		at   time.Duration
		done int
	}
	var final api.SweepInfo
	err = waitFor(ctx, bigSweep(b.o.Scale), "the majority's resumed sweep", func() (bool, string) {
		if time.Since(lastPoke) >= 250*time.Millisecond {
			lastPoke = time.Now()
			tries++
			if _, err := b.c.api.start(ctx, l.api, api.SweepRequest{Mode: "quick"}); err != nil {
				refused++
			}
			if sw, err := b.c.api.sweep(ctx, l.api, info.ID); err == nil && sw.RoundsDone != frozen {
				moved++
			}
		}
		sw, err := b.c.api.sweep(ctx, next.api, info.ID)
		if err != nil {
			return false, err.Error()
		}
		final = sw
		samples = append(samples, struct {
			at   time.Duration
			done int
		}{time.Since(cut), sw.RoundsDone})
		return sw.State != api.SweepRunning, fmt.Sprintf("%d/%d rounds", sw.RoundsDone, sw.Rounds)
	})
	if err != nil {
		return err
	}
	// Both leaders are alive: tasks are told apart by the socket they
	// came from, while the coordinators still hold those connections.
	owners := socketOwners(map[string]int{l.name: l.p.pid(), next.name: next.p.pid()})
	res = b.led.resume(info.ID, cut, byConn(owners, next.name))
	t := bigTrial{election: elected, dispatch: res.dispatchAfter, res: res, rounds: info.Rounds, take: take, rss: procstat.RSS(pid), peak: procstat.HWM(pid),
		done: final.State == api.SweepDone, mid: true}
	for _, s := range samples {
		if s.done > res.lastCommitted+1 {
			t.progress = s.at
			break
		}
	}
	if t.chk, err = b.verify(ctx, next, final, nil); err != nil {
		return err
	}
	b.cut = &t
	b.say("majority elected %s %s after the cut (%s stepped down after %s, holding %d rounds); sweep %s %s on %s: first task after %s, first commit after %s; %s; %s",
		next.name, secs(elected), l.name, secs(stepDown), frozen, info.ID, final.State, next.name, secs(t.dispatch), secs(t.progress), res, t.chk)
	b.say("%d/%d writes to %s refused during the cut; its committed rounds moved %d times", refused, tries, l.name, moved)
	b.r.add(scn, "majority leader elected after", secs(elected), "<= 5s", elected <= 5*time.Second)
	b.r.add(scn, "sweep resumed and complete on the majority", final.State, "done", t.done)
	b.r.add(scn, "lost / duplicated cells", fmt.Sprintf("%d / %d", t.chk.lost+t.chk.unseen, t.chk.dup+t.chk.phantom), "0 / 0", t.chk.clean())
	b.r.add(scn, "cells not ok", fmt.Sprint(t.chk.unique-t.chk.classes["ok"]), "0", t.chk.unique == t.chk.classes["ok"])
	b.r.add(scn, "writes refused by the minority", fmt.Sprintf("%d/%d", refused, tries), "all", refused == tries)
	b.r.add(scn, "minority commits during the cut", fmt.Sprint(moved), "0", moved == 0)
	_, _, sniffErr := b.c.net.Stats()
	b.r.add(scn, "raft headers the proxy could not read", orNone(errStrings(sniffErr)), "none", sniffErr == nil)

	b.c.net.Heal()
	healed = true
	healAt := time.Now()
	err = waitFor(ctx, bigRejoin, l.name+" to catch up", func() (bool, string) {
		st, err := b.c.api.status(ctx, l.api)
		if err != nil || st.Leader != next.name {
			return false, fmt.Sprintf("follows %q (%v)", st.Leader, err)
		}
		sw, err := b.c.api.sweep(ctx, l.api, info.ID)
		same := err == nil && sw.State == final.State && sw.RoundsDone == final.RoundsDone && sw.CellsDone == final.CellsDone &&
			sw.Finished.Equal(final.Finished)
		return same, fmt.Sprintf("%s holds %d rounds, %d cells, %s", l.name, sw.RoundsDone, sw.CellsDone, sw.State)
	})
	if err != nil {
		b.r.add(scn, "minority holds the majority's sweep after the heal", err.Error(), "<= "+bigRejoin.String(), false)
		return nil
	}
	b.r.add(scn, "minority holds the majority's sweep after the heal", "after "+secs(time.Since(healAt)), "<= "+bigRejoin.String(), true)
	return nil
}

func errStrings(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

// summary writes the large run's figures as a Markdown table.
func (b *bigRun) summary(w io.Writer) {
	if b.cellsPer == 0 {
		return
	}
	fmt.Fprintf(w, "\nchaos at scale: 3 coordinator processes, %d control-mode workers, %d cells a quick sweep (8 rails), "+
		"undisturbed sweep %s, leader RSS after it %s\n\n", b.o.Scale, b.cellsPer, secs(b.sweep), mb(b.baseRSS))
	fmt.Fprintln(w, "| scenario | runs | sweeps complete | new leader elected p50 / max | first task p50 / max | first commit p50 / max | resume point | lost / duplicated cells | new leader RSS: at takeover → at sweep end, p50 (max; peak while resuming) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	row := func(name string, ts []bigTrial) {
		if len(ts) == 0 {
			return
		}
		var el, disp, prog durs
		var take, rss, peak []uint64
		complete, lost, dup, right, rerun, rerunMax, rerunDone := 0, 0, 0, 0, 0, 0, 0
		for _, t := range ts {
			el, disp, prog = append(el, t.election), append(disp, t.dispatch), append(prog, t.progress)
			take, rss, peak = append(take, t.take), append(rss, t.rss), append(peak, t.peak)
			if t.done {
				complete++
			}
			lost += t.chk.lost + t.chk.unseen
			dup += t.chk.dup + t.chk.phantom
			if t.res.resumedRight(t.rounds) && t.res.rerunDone == 0 {
				right++
			}
			rerun += t.res.rerun
			rerunMax = max(rerunMax, t.res.rerun)
			rerunDone += t.res.rerunDone
		}
		slices.Sort(take)
		slices.Sort(rss)
		fmt.Fprintf(w, "| %s | %d | %d/%d | %s / %s | %s / %s | %s / %s | first uncommitted round in %d/%d; %d uncommitted rounds re-run (max %d a failover), %d committed | %d / %d | %s → %s (%s; %s) |\n",
			name, len(ts), complete, len(ts), secs(el.median()), secs(el.max()), secs(disp.median()), secs(disp.max()),
			secs(prog.median()), secs(prog.max()), right, len(ts), rerun, rerunMax, rerunDone, lost, dup,
			mb(take[len(take)/2]), mb(rss[len(rss)/2]), mb(rss[len(rss)-1]), mb(slices.Max(peak)))
	}
	row("leader kill -9 mid-sweep", b.kills)
	if b.cut != nil {
		row("leader's raft links cut mid-sweep", []bigTrial{*b.cut})
	}
	if wk := b.wk; wk != nil {
		fmt.Fprintf(w, "\nworker kill: %d of %d workers killed at once mid-sweep: sweep %s, %d / %d lost / duplicated cells, %d cells peer-lost; all reported dead after %s; restarted, ready in %s, next sweep %d/%d ok\n",
			wk.victims, b.o.Scale, map[bool]string{true: "complete", false: "NOT complete"}[wk.done], wk.chk.lost+wk.chk.unseen,
			wk.chk.dup+wk.chk.phantom, wk.chk.peerLost, secs(wk.dead), secs(wk.back), wk.next.classes["ok"], wk.next.expected)
	}
}
