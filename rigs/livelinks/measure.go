package livelinks

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// OnsetResult is how the watch met faults that begin mid-window.
type OnsetResult struct {
	Faults int
	Named  int // the faulted cable named, first and alone, within MaxWindows
	// Delays are, per named fault, the seconds from its onset to the
	// judgement that named it: the end of the window that showed it,
	// plus the leader's collection, which runs twice a window (at worst
	// half a window after the window ends).
	Delays []float64
	Wrong  []string // cables named that were not faulted
	Missed []string // faults not named within MaxWindows
}

// MaxWindows is how long Onset waits for a fault to be named.
const MaxWindows = 6

// Onset injects, one at a time, effect (e.g. "loss=2%") on runs random
// cables between switches (one way only with oneWay), each at a random moment of a window after
// three clean ones, and records when the watch names it. Each run starts
// from a clean leader state.
func Onset(f *Fleet, runs int, effect string, oneWay bool, seed uint64) (OnsetResult, error) {
	rng := rand.New(rand.NewPCG(seed, 11))
	cables := f.SwitchCables()
	var res OnsetResult
	win := f.cfg.Params.Window.Seconds()
	for range runs {
		c := cables[rng.IntN(len(cables))]
		spec, name := f.CableSpec(c, effect, oneWay)
		f.Reset()
		if err := f.SetFaults(nil); err != nil {
			return res, err
		}
		for range 3 {
			op, _ := f.Window(0)
			res.Wrong = append(res.Wrong, names(op)...)
		}
		if err := f.SetFaults([]string{spec}); err != nil {
			return res, err
		}
		res.Faults++
		onset := rng.Float64()
		named := false
		for w := range MaxWindows {
			at := 0.0
			if w == 0 {
				at = onset
			}
			op, _ := f.Window(at)
			for _, l := range op {
				if l.Cable == name && !named {
					named = true
					res.Named++
					res.Delays = append(res.Delays, (float64(w+1)-onset)*win+win/2)
				} else if l.Cable != name {
					res.Wrong = append(res.Wrong, l.Cable)
				}
			}
			if named {
				break
			}
		}
		if !named {
			res.Missed = append(res.Missed, spec)
		}
	}
	return res, f.SetFaults(nil)
}

func names(ls []api.LiveLink) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Cable
	}
	return out
}

// SoakResult is a long run's resource use and episode book.
type SoakResult struct {
	Windows                 int
	Start, End              Usage // after the warm-up, and at the end
	Spells                  int   // flapping spells injected
	Opened                  int   // episodes opened for the flapping cable
	Closed                  int   // ... and closed, each once
	FlapsPerEpisode         []int
	Wrong                   []string
	WindowMean, WindowWorst time.Duration
}

// Usage is the process's footprint at a moment.
type Usage struct {
	RSS, Heap  uint64
	Goroutines int
	FDs        int
}

func usage() Usage {
	runtime.GC()
	fds, _ := os.ReadDir("/proc/self/fd")
	return Usage{RSS: procstat.RSS(procstat.Self), Heap: procstat.HeapObjects(), Goroutines: runtime.NumGoroutine(), FDs: len(fds)}
}

// Soak runs windows windows with one cable flapping in spells: every
// `every` windows it goes down for a window and up for one, downs times
// over, then stays up. Each spell should be one episode with its flap
// count, closed once the cable has been up for the watch's quiet period.
func Soak(f *Fleet, windows, every, downs int, seed uint64) (SoakResult, error) {
	rng := rand.New(rand.NewPCG(seed, 13))
	cables := f.SwitchCables()
	spec, name := f.CableSpec(cables[rng.IntN(len(cables))], "down", false)
	res := SoakResult{Windows: windows}
	f.Reset()
	if err := f.SetFaults(nil); err != nil {
		return res, err
	}
	const warm = 50
	var total time.Duration
	down := false
	for w := range windows {
		if w == warm {
			res.Start = usage()
		}
		phase := w % every
		want := phase >= 5 && phase < 5+2*downs && (phase-5)%2 == 0
		if phase == 5 {
			res.Spells++
		}
		if want != down {
			faults := []string(nil)
			if want {
				faults = []string{spec}
			}
			if err := f.SetFaults(faults); err != nil {
				return res, err
			}
			down = want
		}
		t0 := time.Now()
		op, cl := f.Window(0)
		d := time.Since(t0)
		total += d
		res.WindowWorst = max(res.WindowWorst, d)
		for _, l := range op {
			if l.Cable == name {
				res.Opened++
			} else {
				res.Wrong = append(res.Wrong, l.Cable)
			}
		}
		for _, l := range cl {
			if l.Cable == name {
				res.Closed++
				res.FlapsPerEpisode = append(res.FlapsPerEpisode, l.Flaps)
			}
		}
	}
	res.End = usage()
	res.WindowMean = total / time.Duration(windows)
	return res, f.SetFaults(nil)
}

// String is the soak's line for the note and docs/scale.md.
func (r SoakResult) String() string {
	fl := slices.Clone(r.FlapsPerEpisode)
	slices.Sort(fl)
	return fmt.Sprintf("%d windows, %d flapping spells: %d episodes opened, %d closed, flaps per episode %v; %d other cables named; "+
		"RSS %s -> %s, heap %s -> %s, goroutines %d -> %d, descriptors %d -> %d; a window's fold and judgement %v mean, %v worst",
		r.Windows, r.Spells, r.Opened, r.Closed, compact(fl), len(r.Wrong), procstat.MB(r.Start.RSS), procstat.MB(r.End.RSS),
		procstat.MB(r.Start.Heap), procstat.MB(r.End.Heap), r.Start.Goroutines, r.End.Goroutines, r.Start.FDs, r.End.FDs,
		r.WindowMean.Round(time.Millisecond), r.WindowWorst.Round(time.Millisecond))
}

// compact shows sorted counts as value x times.
func compact(v []int) string {
	if len(v) == 0 {
		return "none"
	}
	out := ""
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && v[j] == v[i] {
			j++
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%d x%d", v[i], j-i)
		i = j
	}
	return out
}
